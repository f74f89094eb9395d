//! The rank executor (`src/driver/rank`) against the general engine, bit for bit: random
//! footprints (box, cross, disk, random masks), modes, origins, `cval`s, dtypes, NaN/±inf/-0.0
//! data and shapes smaller than the footprint, in 1-3 dimensions; and which runs take it.

use ndjit::driver::{
    c_strides, generic_filter_raw, last_nan_pixels, last_patched, last_run, rank_form, rank_stat,
    Dtype, Engine, Footprint, Geometry, Mode, NanRule, Options, RankStat, RawArray, RawArrayMut,
};
use ndjit::{Bindings, Filter};

mod common;
use common::Inputs as Rng;

/// The rank statistics in the forms users write them, with what each is.
const FILTERS: &[(&str, RankStat)] = &[
    ("np.min(x)", RankStat::Min),
    ("max(x)", RankStat::Max),
    ("x.max() - x.min()", RankStat::Range),
    ("np.median(x)", RankStat::Median),
    ("np.percentile(x, 90)", RankStat::Quantile(0.9)),
    ("np.quantile(x, 0.25)", RankStat::Quantile(0.25)),
    ("np.sort(x)[0]", RankStat::KthSorted(0)),
    (
        "def f(x):\n    m = x[0]\n    for v in x:\n        if v < m:\n            m = v\n    return m",
        RankStat::Min,
    ),
    (
        "def f(x):\n    m = x[0]\n    for v in x:\n        if m < v:\n            m = v\n    return m",
        RankStat::Max,
    ),
];

/// A random value of `dtype`, as a double; floats include NaN, ±inf and ±0.0 when `special`.
fn value(rng: &mut Rng, dtype: Dtype, special: bool) -> f64 {
    if special && rng.chance(10) {
        return [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.0][rng.below(5)];
    }
    let small = rng.below(7) as f64 - 3.0;
    match dtype {
        Dtype::Bool => rng.below(2) as f64,
        Dtype::U8 | Dtype::U16 | Dtype::U32 | Dtype::U64 if rng.chance(50) => small.abs(),
        Dtype::U8 => rng.below(256) as f64,
        Dtype::I8 => rng.below(256) as f64 - 128.0,
        Dtype::U16 => rng.below(65536) as f64,
        Dtype::I64 => (rng.value().to_bits() as i64 >> rng.below(64)) as f64,
        Dtype::U64 => (rng.value().to_bits() >> rng.below(64)) as f64,
        Dtype::F32 | Dtype::F64 if rng.chance(50) => small,
        Dtype::F32 | Dtype::F64 => (rng.value().to_bits() as i32) as f64 / 256.0,
        _ => small,
    }
}

/// An array of `dtype` in C order, as bytes (aligned for every dtype).
fn array(dtype: Dtype, values: &[f64]) -> Vec<u64> {
    let mut data = vec![0u64; values.len() + 1];
    let p = data.as_mut_ptr() as *mut u8;
    for (i, &v) in values.iter().enumerate() {
        unsafe { dtype.write(p.add(i * dtype.itemsize()), v) };
    }
    data
}

/// `data` as a C-ordered input of `shape`.
fn c_array(data: &[u64], dtype: Dtype, shape: &[usize]) -> RawArray {
    RawArray {
        ptr: data.as_ptr() as *const u8,
        dtype,
        shape: shape.to_vec(),
        strides: c_strides(shape, dtype),
    }
}

fn footprint(rng: &mut Rng, ndim: usize) -> Footprint {
    let r = rng.below(3);
    match rng.below(4) {
        0 => Footprint::from_size(&(0..ndim).map(|_| 1 + rng.below(5)).collect::<Vec<_>>()),
        1 => Footprint::cross(ndim, r),
        2 if ndim == 2 => Footprint::disk(1 + r),
        _ => {
            let shape: Vec<usize> = (0..ndim).map(|_| 1 + rng.below(4)).collect();
            let mut seed = rng.value().to_bits() | 1;
            let fp = Footprint::from_fn(&shape, |_| {
                seed = seed.rotate_left(7) ^ 0x9e37;
                !seed.is_multiple_of(3)
            });
            match fp.count() {
                Some(0) => Footprint::from_size(&shape),
                _ => fp,
            }
        }
    }
}

/// [`run`] through the callback engine: the general engine's result, to compare with.
fn run_callback(filter: &Filter, input: &RawArray, out_dtype: Dtype, opts: &Options) -> Vec<u8> {
    run(
        filter,
        input,
        out_dtype,
        &opts.clone().engine(Engine::Callback),
    )
}

/// An origin that keeps the footprint's centre inside it on every axis.
fn random_origin(rng: &mut Rng, fp: &Footprint) -> Vec<isize> {
    fp.shape()
        .iter()
        .map(|&n| rng.below(n) as isize - (n / 2) as isize)
        .collect()
}

/// [`FILTERS`], compiled.
fn compiled_filters() -> Vec<(Filter, RankStat)> {
    FILTERS.iter().map(|(s, st)| (compile(s), *st)).collect()
}

/// What [`run`]'s result starts with for a refusal.
const REFUSED: &[u8] = b"refused: ";

/// Runs `filter` with `engine`, returning the output's bytes (every NaN made the same: the
/// engines may differ in NaN payloads, which no dtype conversion shows), or, where it refuses
/// NumPy's choice between `0.0` and `-0.0` (`ndjit::ir::zero_signs`), [`REFUSED`] and the error:
/// every engine must refuse alike, at the same first pixel.
fn run(filter: &Filter, input: &RawArray, out_dtype: Dtype, opts: &Options) -> Vec<u8> {
    let n: usize = input.shape.iter().product();
    let mut data = vec![0u64; n + 1];
    let output = RawArrayMut {
        ptr: data.as_mut_ptr() as *mut u8,
        dtype: out_dtype,
        shape: input.shape.clone(),
        strides: c_strides(&input.shape, out_dtype),
    };
    if let Err(e) = unsafe { generic_filter_raw(input, &output, filter, opts) } {
        let message = format!("{e:?}");
        assert!(
            message.contains("both 0.0 and -0.0"),
            "the run fails: {message}"
        );
        return [REFUSED, message.as_bytes()].concat();
    }
    let size = out_dtype.itemsize();
    let bytes = unsafe { std::slice::from_raw_parts(data.as_ptr() as *const u8, n * size) };
    bytes
        .chunks(size)
        .flat_map(|b| {
            let v = unsafe { out_dtype.read(b.as_ptr()) };
            match v.is_nan() {
                true => vec![0xAA; size],
                false => b.to_vec(),
            }
        })
        .collect()
}

#[test]
fn rank_executor_equals_the_interpreter_bit_for_bit() {
    let filters = compiled_filters();
    let mut rng = Rng::new(0x5eed_1234_abcd);
    let (mut ranked, mut cases, mut refused) = (0, 0, 0);
    for _ in 0..1500 {
        let ndim = 1 + rng.below(3);
        let shape: Vec<usize> = (0..ndim).map(|_| 1 + rng.below(9)).collect();
        let dtype = Dtype::ALL[rng.below(Dtype::ALL.len())];
        let out_dtype = match rng.chance(70) {
            true => dtype,
            false => Dtype::ALL[rng.below(Dtype::ALL.len())],
        };
        let special = rng.chance(30);
        let values: Vec<f64> = (0..shape.iter().product::<usize>())
            .map(|_| value(&mut rng, dtype, special))
            .collect();
        let data = array(dtype, &values);
        let input = c_array(&data, dtype, &shape);
        let fp = footprint(&mut rng, ndim);
        let origin = random_origin(&mut rng, &fp);
        let cval = match rng.below(4) {
            0 => 0.5,
            1 => -0.0,
            _ => value(&mut rng, dtype, special),
        };
        let mode = Mode::ALL[rng.below(Mode::ALL.len())];
        let (filter, stat) = &filters[rng.below(filters.len())];
        let opts = Options::new(fp)
            .mode(mode)
            .cval(cval)
            .origin(&origin)
            .threads(1 + rng.below(3));
        let fast = run(filter, &input, out_dtype, &opts);
        let took = last_run();
        let slow = run(
            filter,
            &input,
            out_dtype,
            &opts.clone().engine(Engine::Interpreter),
        );
        assert_eq!(
            last_run(),
            None,
            "only Engine::Auto takes the rank executor"
        );
        assert_eq!(
            fast, slow,
            "{:?} {dtype}->{out_dtype} shape {shape:?} mode {mode} cval {cval} origin {origin:?} values {values:?}",
            filter.source()
        );
        refused += fast.starts_with(REFUSED) as usize;
        if let Some(s) = took {
            // One value is its own minimum and maximum, and the IR says so.
            if opts.footprint.count() != Some(1) {
                assert_eq!(s, *stat);
            }
            ranked += 1;
        }
        cases += 1;
    }
    // The data facts and cvals send some runs to the general engine, most not.
    assert!(
        ranked * 2 > cases,
        "only {ranked} of {cases} took the rank executor"
    );
    // Data with zeros of both signs, where NumPy's forms choose between them, is refused by
    // every engine alike.
    assert!(refused > 0, "no run refused a choice between zeros");
}

/// The NaN rule the recognizer states for each form, checked on the filter's own code: a form
/// said to propagate returns NaN for every buffer holding one (the GPU's passes then compute
/// those windows instead of running the filter there), and each form said to have its own rule
/// does not, for some buffer.
#[test]
fn nan_rules_of_the_recognised_forms_hold_on_the_filters_own_code() {
    use NanRule::{OwnCode, Propagates};
    let forms = [
        ("np.min(x)", 9, Propagates),
        ("np.max(x)", 9, Propagates),
        ("x.max() - x.min()", 9, Propagates),
        ("np.ptp(x)", 9, Propagates),
        ("x[0]", 1, Propagates),
        ("max(x)", 9, OwnCode),
        ("max(x) - min(x)", 9, OwnCode),
        ("np.max(x) - min(x)", 9, Propagates),
        ("np.median(x)", 9, Propagates),
        ("np.median(x)", 200, Propagates),
        ("np.percentile(x, 90)", 9, Propagates),
        ("np.sort(x)[0]", 9, OwnCode),
        (FILTERS[7].0, 9, OwnCode),
        (FILTERS[8].0, 9, OwnCode),
    ];
    let mut rng = Rng::new(7);
    for (src, n, rule) in forms {
        let filter = compile(src);
        let form = rank_form(&filter, n).unwrap_or_else(|| panic!("{src}: not recognised"));
        assert_eq!(form.nan, rule, "{src}");
        let mut kept_a_number = false;
        for _ in 0..400 {
            let mut buf: Vec<f64> = (0..n).map(|_| value(&mut rng, Dtype::F64, true)).collect();
            buf[rng.below(n)] = f64::NAN;
            // The zero-sign guards of NumPy's forms may refuse a buffer; only results count.
            if let Ok(r) = filter.interpret(&buf) {
                assert!(rule == OwnCode || r.is_nan(), "{src} of {buf:?} gave {r}");
                kept_a_number |= !r.is_nan();
            }
        }
        assert_eq!(kept_a_number, rule == OwnCode, "{src}");
    }
}

fn compile(src: &str) -> Filter {
    Filter::compile(src, &Bindings::new()).unwrap()
}

#[test]
fn recognised_forms_and_forms_that_are_not_rank_statistics() {
    for (src, stat) in FILTERS {
        assert_eq!(rank_stat(&compile(src), 9), Some(*stat), "{src}");
    }
    let mut b = Bindings::new();
    b.set_float("q", 30.0);
    let bound = Filter::compile("np.percentile(x, q)", &b).unwrap();
    assert_eq!(rank_stat(&bound, 9), Some(RankStat::Quantile(0.3)));
    assert_eq!(
        rank_stat(&compile("np.sort(x)[-1]"), 9),
        Some(RankStat::KthSorted(8))
    );
    assert_eq!(
        rank_stat(&compile("np.median(x)"), 200),
        Some(RankStat::Median)
    );
    for src in [
        "np.mean(x)",
        "np.min(x) + 1",
        "np.max(x[1:])",
        "np.min(x) - np.max(x)",
        "np.sort(x)[9]",
        "np.nanmedian(x)",
        "np.nanmin(x)",
        // `<=` keeps the last of equal values: another statistic when zeros have signs.
        "def f(x):\n    m = x[0]\n    for v in x:\n        if v <= m:\n            m = v\n    return m",
        "def f(x):\n    m = x[0]\n    for v in x:\n        if v < m:\n            m = v\n    return m + 0",
    ] {
        assert_eq!(rank_stat(&compile(src), 9), None, "{src}");
    }
}

/// A 2-d input of `dtype` and its run through `Engine::Auto`: what [`last_run`] then says.
fn chosen(src: &str, dtype: Dtype, values: &[f64], opts: &Options) -> Option<RankStat> {
    let data = array(dtype, values);
    let input = c_array(&data, dtype, &[1, values.len()]);
    run(&compile(src), &input, dtype, opts);
    last_run()
}

/// Data facts that fail the proof on more values than the executor patches (here one of four
/// values, with three taps), and cvals it cannot use, run the general engine.
#[test]
fn data_facts_that_fail_the_proof_run_the_general_engine() {
    let opts = Options::size(&[1, 3]);
    let plain = [3.0, 1.0, 2.0, 5.0];
    assert_eq!(
        chosen("np.min(x)", Dtype::F64, &plain, &opts),
        Some(RankStat::Min)
    );
    let nan = [3.0, f64::NAN, 2.0, 5.0];
    assert_eq!(chosen("np.min(x)", Dtype::F32, &nan, &opts), None);
    assert_eq!(chosen("np.median(x)", Dtype::F64, &nan, &opts), None);
    // `-0.0` only matters where the sign of a zero can show: not in a median.
    let zero = [3.0, -0.0, 0.0, 5.0];
    assert_eq!(chosen("np.max(x)", Dtype::F64, &zero, &opts), None);
    assert_eq!(
        chosen("np.median(x)", Dtype::F64, &zero, &opts),
        Some(RankStat::Median)
    );
    // A cval that the input's type cannot hold, or NaN/-0.0 as cval, in the constant mode.
    let constant = |cval| opts.clone().mode(Mode::Constant).cval(cval);
    assert_eq!(chosen("np.min(x)", Dtype::U8, &plain, &constant(0.5)), None);
    assert_eq!(
        chosen("np.min(x)", Dtype::U8, &plain, &constant(-0.0)),
        None
    );
    assert_eq!(
        chosen("np.min(x)", Dtype::F64, &plain, &constant(f64::NAN)),
        None
    );
    assert_eq!(
        chosen("np.min(x)", Dtype::U8, &plain, &constant(7.0)),
        Some(RankStat::Min)
    );
    // Other modes never read cval.
    let reflect = opts.clone().cval(0.5);
    assert_eq!(
        chosen("np.min(x)", Dtype::U8, &plain, &reflect),
        Some(RankStat::Min)
    );
    // Only Engine::Auto.
    let callback = opts.clone().engine(Engine::Callback);
    assert_eq!(chosen("np.min(x)", Dtype::F64, &plain, &callback), None);
}

/// Each order algorithm against the interpreter: the 3×3 box median's shared column sorts, the
/// selection network, and beyond it the sliding histogram (8/16-bit) and selection per pixel
/// (wider types).
#[test]
fn every_order_algorithm_equals_the_interpreter() {
    let mut rng = Rng::new(77);
    for dtype in [
        Dtype::U8,
        Dtype::I16,
        Dtype::U16,
        Dtype::I32,
        Dtype::F32,
        Dtype::F64,
    ] {
        let shape = vec![13, 21];
        let values: Vec<f64> = (0..13 * 21)
            .map(|_| value(&mut rng, dtype, false))
            .collect();
        let data = array(dtype, &values);
        let input = c_array(&data, dtype, &shape);
        // Min, max and range over up to 13 rows of chords per pixel: every grouping of the
        // chords' merge (four lines, then three at a time) is reached.
        for src in [
            "np.median(x)",
            "np.percentile(x, 37)",
            "np.sort(x)[5]",
            "min(x)",
            "np.max(x)",
            "x.max() - x.min()",
        ] {
            let footprints = [
                Footprint::from_size(&[3, 3]),
                Footprint::from_size(&[5, 5]),
                Footprint::from_size(&[13, 11]),
                Footprint::disk(6),
            ];
            for (fp, origin) in footprints
                .into_iter()
                .zip([[0, 1], [-1, 0], [0, 0], [2, -3]])
            {
                let opts = Options::new(fp)
                    .mode(Mode::Mirror)
                    .origin(&origin)
                    .threads(2);
                let f = compile(src);
                let fast = run(&f, &input, Dtype::F64, &opts);
                assert!(last_run().is_some(), "{src} {dtype}");
                let slow = run(
                    &f,
                    &input,
                    Dtype::F64,
                    &opts.clone().engine(Engine::Interpreter),
                );
                assert_eq!(fast, slow, "{src} {dtype}");
            }
        }
    }
}

/// Box footprints take the separable passes (`src/driver/rank/boxed.rs`), and tall boxes van
/// Herk's blocks down the second-to-last axis; their order statistics the sorted columns
/// (`columns.rs`) or, for 8-bit types, the column histograms kept from line to line
/// (`perreault.rs`); min and max over stacked boxes run whole lines in blocks
/// (`boxed::extremes_block`): against the compiled callback, with boxes up to 31 rows, every
/// mode, origins, 3-d arrays (a block must restart at each plane), lines longer than a chunk
/// (segments are not whole lines), and several threads (each image here is one chunk; chunks
/// taken out of turn are `blocks_over_chunks_taken_out_of_turn_equal_the_callback_engine`'s).
#[test]
fn boxes_and_tall_boxes_equal_the_callback_engine() {
    let mut rng = Rng::new(0xb0c5);
    // Lines of 1 and 2 values: every column of a 3-wide window lies past an end.
    let shapes: [&[usize]; 8] = [
        &[41, 37],
        &[3, 29, 23],
        &[2, 5000],
        &[60, 7],
        &[50],
        &[4, 1, 9],
        &[17, 1],
        &[9, 2],
    ];
    let sizes: [&[usize]; 10] = [
        &[9, 3],
        &[13, 1],
        &[20, 7],
        &[3, 3],
        &[31, 5],
        &[1, 9],
        &[10, 10],
        &[5, 4],
        &[2, 6],
        &[6, 2],
    ];
    let filters = [
        "min(x)",
        "np.max(x)",
        "x.max() - x.min()",
        "np.median(x)",
        "np.percentile(x, 30)",
    ]
    .map(compile);
    for case in 0..600 {
        let shape = shapes[case % shapes.len()];
        let ndim = shape.len();
        let size = sizes[rng.below(sizes.len())];
        // The box on the last two axes (1 on any leading one); a 1-d input takes its width.
        let fp_shape: Vec<usize> = (0..ndim)
            .map(|d| match ndim - d {
                1 => size[1],
                2 => size[0],
                _ => 1 + rng.below(2),
            })
            .collect();
        let dtype = [
            Dtype::U8,
            Dtype::I8,
            Dtype::I16,
            Dtype::U64,
            Dtype::F32,
            Dtype::F64,
        ][rng.below(6)];
        let values: Vec<f64> = (0..shape.iter().product::<usize>())
            .map(|_| value(&mut rng, dtype, false))
            .collect();
        let data = array(dtype, &values);
        let input = c_array(&data, dtype, shape);
        let origin: Vec<isize> = fp_shape
            .iter()
            .map(|&n| rng.below(n) as isize - (n / 2) as isize)
            .collect();
        let mode = Mode::ALL[rng.below(Mode::ALL.len())];
        // A value of the dtype (as stored), so the constant modes take the rank executor too.
        let cval = unsafe { dtype.read(data.as_ptr() as *const u8) };
        let filter = &filters[rng.below(filters.len())];
        let opts = Options::new(Footprint::from_size(&fp_shape))
            .mode(mode)
            .cval(cval)
            .origin(&origin)
            .threads(1 + rng.below(3));
        let fast = run(filter, &input, dtype, &opts);
        assert!(
            last_run().is_some(),
            "{} took the general engine: {dtype} {fp_shape:?} {mode} cval {cval}",
            filter.source()
        );
        let slow = run_callback(filter, &input, dtype, &opts);
        assert_eq!(
            fast,
            slow,
            "{:?} {dtype} shape {shape:?} footprint {fp_shape:?} mode {mode} cval {cval} origin {origin:?}",
            filter.source()
        );
    }
}

/// Order statistics over footprints too large for a network (more than 40 values, 64 for a
/// box, 100 for 16-bit types, 25 for 64-bit integers; 8-bit types aside) rank a band of rows
/// once and slide each line's windows over the ranks (`src/driver/rank/ranked.rs`): against the
/// compiled callback, with boxes, disks, random masks and 3-d footprints; lines shorter than the
/// footprint; lines long enough to be ranked in pieces; every mode (a reflection reads one line
/// for several slots, each its own rows); NaN, ±inf and ±0.0 data; bands over several threads'
/// chunks.
#[test]
fn large_footprints_ranked_in_bands_equal_the_callback_engine() {
    let mut rng = Rng::new(0x4a4b);
    let mut patched = 0;
    let filters = [
        "np.median(x)",
        "np.percentile(x, 30)",
        "np.sort(x)[7]",
        "np.quantile(x, 0.9)",
    ]
    .map(compile);
    // (input shape, footprint): 11x11 (121 values), 31x5, disks of 149 and 113, a 5x5x5 cube,
    // a random mask, a 1-d window of 201; the 12x6100 lines exceed a piece for 11 slots (two
    // pieces, each a band; with several threads, chunks of 4096 columns).
    let cases: Vec<(Vec<usize>, Footprint)> = vec![
        (vec![37, 45], Footprint::from_size(&[11, 11])),
        (vec![9, 6], Footprint::from_size(&[11, 11])),
        (vec![40, 33], Footprint::from_size(&[31, 5])),
        (vec![30, 41], Footprint::disk(7)),
        (vec![25, 26], Footprint::disk(6)),
        (vec![7, 9, 11], Footprint::from_size(&[5, 5, 5])),
        (vec![3000], Footprint::from_size(&[201])),
        (vec![12, 6100], Footprint::from_size(&[11, 11])),
        // Nine pieces a line: more than a worker keeps bands for.
        (vec![2, 50000], Footprint::from_size(&[11, 11])),
        (vec![20, 24], {
            let mut seed = 0x9e37_79b9u64;
            Footprint::from_fn(&[13, 15], |_| {
                seed = seed.rotate_left(9) ^ 0x5bd1;
                !seed.is_multiple_of(5)
            })
        }),
    ];
    for case in 0..100 {
        let (shape, fp) = &cases[case % cases.len()];
        let dtype = [
            Dtype::F32,
            Dtype::F64,
            Dtype::I32,
            Dtype::U32,
            Dtype::I64,
            Dtype::U64,
            Dtype::U16,
            Dtype::I16,
        ][rng.below(8)];
        let mut values: Vec<f64> = (0..shape.iter().product::<usize>())
            .map(|_| value(&mut rng, dtype, false))
            .collect();
        // One NaN, -0.0 or ±inf (past the first value, `cval`), whose windows the general
        // engine recomputes, unless they are too many for the image: then it runs alone.
        let special = case % 3 == 0 && (dtype == Dtype::F32 || dtype == Dtype::F64);
        if special {
            let v = [f64::NAN, -0.0, f64::INFINITY, f64::NEG_INFINITY][case / 3 % 4];
            let at = 1 + rng.below(values.len() - 1);
            values[at] = v;
        }
        let data = array(dtype, &values);
        let input = c_array(&data, dtype, shape);
        let mode = Mode::ALL[rng.below(Mode::ALL.len())];
        let cval = unsafe { dtype.read(data.as_ptr() as *const u8) };
        let filter = &filters[rng.below(filters.len())];
        let opts = Options::new(fp.clone())
            .mode(mode)
            .cval(cval)
            .origin(&random_origin(&mut rng, fp))
            .threads(1 + rng.below(3));
        let fast = run(filter, &input, Dtype::F64, &opts);
        let what = format!(
            "{:?} {dtype} shape {shape:?} footprint {:?} mode {mode}",
            filter.source(),
            fp.shape()
        );
        match special {
            true => patched += last_run().is_some() as usize,
            false => assert!(last_run().is_some(), "took the general engine: {what}"),
        }
        assert_eq!(
            fast,
            run_callback(filter, &input, Dtype::F64, &opts),
            "{what}"
        );
    }
    assert!(
        patched > 0,
        "no run with a special value took the rank executor"
    );
}

/// Min, max and range over stacked boxes, min and max over footprints of one chord a row (disks,
/// crosses, a triangle), and 3×3 medians, run whole lines in blocks (`boxed::extremes_block`,
/// `groups::extremes_block`, the ranges' runs of lines, `order::median3x3_block`, the medians with
/// every origin): van Herk's blocks past 8 rows, which a worker taking a chunk that does not
/// follow its last one must start afresh, and two lines at a time up to 8 rows for 4- and 8-byte
/// types. Reports that sleep a varying while make the workers take the many chunks out of turn.
/// Also: an input read upside down (a negative stride), and boxes that leave out a column of
/// their footprint (their vertical pass misses a column at one end, which the mode then reads
/// from the input: `End::Column`), in every mode, against the compiled callback.
#[test]
fn blocks_over_chunks_taken_out_of_turn_equal_the_callback_engine() {
    let mut rng = Rng::new(0x7a11);
    let shape = [4096usize, 24];
    let reports = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let two_columns = |left: bool| {
        Footprint::new(vec![3, 2], (0..6).map(|i| (i % 2 == 0) == left).collect()).unwrap()
    };
    // Rows of one chord each, of three widths from the same column (three groups).
    let triangle = Footprint::new(vec![3, 3], (0..9).map(|i| i % 3 <= i / 3).collect()).unwrap();
    let cases = [
        ("min(x)", Dtype::U8, Footprint::from_size(&[9, 3])),
        ("np.max(x)", Dtype::U8, Footprint::from_size(&[13, 2])),
        ("min(x)", Dtype::F32, Footprint::from_size(&[2, 3])),
        ("np.max(x)", Dtype::F32, Footprint::from_size(&[7, 5])),
        ("min(x)", Dtype::F64, Footprint::from_size(&[4, 1])),
        ("np.max(x)", Dtype::F64, Footprint::from_size(&[8, 4])),
        ("min(x)", Dtype::I32, Footprint::from_size(&[5, 3])),
        ("np.max(x)", Dtype::F32, two_columns(true)),
        ("min(x)", Dtype::F64, two_columns(false)),
        ("min(x)", Dtype::U8, Footprint::disk(3)),
        ("np.max(x)", Dtype::F32, Footprint::cross(2, 2)),
        ("min(x)", Dtype::U16, Footprint::disk(4)),
        ("np.max(x)", Dtype::F64, triangle),
        ("np.median(x)", Dtype::U8, Footprint::from_size(&[3, 3])),
        ("np.median(x)", Dtype::F32, Footprint::from_size(&[3, 3])),
        ("np.median(x)", Dtype::I16, Footprint::from_size(&[3, 3])),
        // Ranges run their blocks in runs of lines, each extreme's van Herk going on from one
        // run to the next (13 and 11 rows) or pairs of lines (5 rows; 4 leaves an odd line).
        (
            "x.max() - x.min()",
            Dtype::U8,
            Footprint::from_size(&[13, 3]),
        ),
        (
            "x.max() - x.min()",
            Dtype::F32,
            Footprint::from_size(&[5, 5]),
        ),
        (
            "x.max() - x.min()",
            Dtype::F64,
            Footprint::from_size(&[11, 2]),
        ),
        (
            "x.max() - x.min()",
            Dtype::I16,
            Footprint::from_size(&[4, 3]),
        ),
    ];
    for (case, (src, dtype, fp)) in cases.into_iter().enumerate() {
        let filter = compile(src);
        let values: Vec<f64> = (0..shape.iter().product::<usize>())
            .map(|_| value(&mut rng, dtype, false))
            .collect();
        let data = array(dtype, &values);
        let mut input = c_array(&data, dtype, &shape);
        if case % 2 == 1 {
            // The same array read from its last row up.
            let row = input.strides[0];
            input.ptr = input.ptr.wrapping_offset(row * (shape[0] as isize - 1));
            input.strides[0] = -row;
        }
        for mode in Mode::ALL {
            let counter = reports.clone();
            // The 3×3 medians with every origin in turn (their ends differ).
            let origin = match fp.shape() {
                [3, 3] => vec![case as isize % 3 - 1, (mode as usize % 3) as isize - 1],
                _ => vec![0, 0],
            };
            let opts = Options::new(fp.clone())
                .origin(&origin)
                .mode(mode)
                // A value of the dtype (as stored), so the constant modes take the rank executor.
                .cval(unsafe { dtype.read(data.as_ptr() as *const u8) })
                .threads(2 + case % 2)
                .progress(move |_, _| {
                    let i = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    std::thread::sleep(std::time::Duration::from_micros((i as u64 * 37) % 200));
                });
            let fast = run(&filter, &input, dtype, &opts);
            assert!(
                last_run().is_some(),
                "{src} {dtype} took the general engine"
            );
            let slow = run_callback(&filter, &input, dtype, &opts);
            assert_eq!(
                fast,
                slow,
                "{src} {dtype} {:?} {mode} origin {origin:?}",
                fp.shape()
            );
        }
    }
    assert!(
        reports.load(std::sync::atomic::Ordering::Relaxed) > 20 * 16 * Mode::ALL.len(),
        "too few chunks to take out of turn"
    );
}

/// The data facts are checked line by line as a run goes (or by a scan first, where progress is
/// reported). A NaN or a `-0.0` on any line, whichever worker's chunk holds it, leaves the rank
/// executor's output everywhere but in the windows that read it: the general engine recomputes
/// those that read a `-0.0`, and those that read a NaN are written NaN (`np.min` and
/// `np.median` propagate it); with progress reported, the whole run goes to the general engine.
#[test]
fn a_nan_or_negative_zero_on_any_line_is_patched_by_the_general_engine() {
    let shape = [3usize, 11, 6000];
    let n: usize = shape.iter().product();
    let plain: Vec<f64> = (0..n).map(|i| ((i * 7919) % 1000) as f64 - 500.5).collect();
    let lines = n / shape[2];
    let min = compile("np.min(x)");
    let median = compile("np.median(x)");
    for dtype in [Dtype::F32, Dtype::F64] {
        for (k, line) in [0, 1, lines / 2, lines - 1].into_iter().enumerate() {
            for (value, zero_only) in [(f64::NAN, false), (-0.0, true)] {
                let mut values = plain.clone();
                // Columns spread over the line, so a line split into segments sees each.
                let col = [0, 4097, 5999, 3000][k];
                values[line * shape[2] + col] = value;
                let data = array(dtype, &values);
                let input = c_array(&data, dtype, &shape);
                for threads in [1, 3] {
                    for progress in [false, true] {
                        let mut opts = Options::size(&[1, 3, 5]).threads(threads);
                        if progress {
                            opts = opts.progress(|_, _| {});
                        }
                        let what = format!("{value} at {line}:{col}, {dtype}, {threads} threads");
                        let got = run(&min, &input, dtype, &opts);
                        let (took, patched) = (last_run(), last_patched());
                        assert_eq!(took.is_some(), !progress, "{what}");
                        // The windows reading it, counted the slow way.
                        if !progress {
                            let windows = windows_reading(&values, &shape, &opts, excluded(true));
                            let (recomputed, nan) = match zero_only {
                                true => (windows, 0),
                                false => (0, windows),
                            };
                            assert_eq!((patched, last_nan_pixels()), (recomputed, nan), "{what}");
                        }
                        let want = run_callback(&min, &input, dtype, &opts);
                        assert_eq!(got, want, "{what}");
                        // A median does not show the sign of a zero: nothing to patch, and
                        // its NaN windows are NaN.
                        let got = run(&median, &input, dtype, &opts);
                        let (took, patched) = (last_run(), last_patched());
                        assert_eq!(took.is_some(), zero_only || !progress, "median, {what}");
                        assert_eq!(patched, 0, "median, {what}");
                        assert_eq!(
                            last_nan_pixels() > 0,
                            !zero_only && !progress,
                            "median, {what}"
                        );
                        let want = run_callback(&median, &input, dtype, &opts);
                        assert_eq!(got, want, "median, {what}");
                    }
                }
            }
        }
    }
}

/// A no-data region of NaN (a block, and a strip at the lines' ends, which the wrap mode maps
/// into the windows at their starts) with a `-0.0` beside it: the rank executor keeps the run, writing NaN in every window
/// reading the region (found from its runs of columns, not column by column) and recomputing
/// the `-0.0` windows; the output is the callback engine's.
#[test]
fn a_nan_region_is_written_nan_by_runs_of_columns() {
    let shape = [2usize, 40, 300];
    let n: usize = shape.iter().product();
    let mut values: Vec<f64> = (0..n).map(|i| ((i * 7919) % 1000) as f64 - 500.5).collect();
    for z in 0..2 {
        for y in 5..30 {
            let row = (z * 40 + y) * 300;
            for x in (100..220).chain(295..300) {
                values[row + x] = f64::NAN;
            }
        }
    }
    values[33 * 300 + 150] = -0.0;
    for dtype in [Dtype::F32, Dtype::F64] {
        let data = array(dtype, &values);
        let input = c_array(&data, dtype, &shape);
        for (src, zero) in [
            ("np.min(x)", true),
            ("np.max(x)", true),
            ("np.median(x)", false),
        ] {
            let filter = compile(src);
            for mode in [Mode::Reflect, Mode::Wrap, Mode::Mirror, Mode::Nearest] {
                for fp in [
                    Footprint::from_size(&[1, 5, 7]),
                    Footprint::from_size(&[2, 3, 9]),
                ] {
                    let opts = Options::new(fp).mode(mode).threads(2);
                    let what = format!("{src} {dtype} {mode}");
                    let got = run(&filter, &input, dtype, &opts);
                    let (took, patched, nans) = (last_run(), last_patched(), last_nan_pixels());
                    assert!(took.is_some(), "{what}: left to the general engine");
                    let negative_zero = |v: f64| zero && v.to_bits() == (-0.0f64).to_bits();
                    let want_nan = windows_reading(&values, &shape, &opts, f64::is_nan);
                    assert_eq!(nans, want_nan, "{what}");
                    let want_zero = windows_reading(&values, &shape, &opts, negative_zero);
                    assert_eq!(patched, want_zero, "{what}");
                    assert!(nans > 1000 && (patched > 0) == zero, "{what}");
                    assert_eq!(got, run_callback(&filter, &input, dtype, &opts), "{what}");
                }
            }
        }
    }
}

/// A NaN region in lines long enough to be shared out in pieces (two threads, 9000 columns: the
/// workers check segments of a line, and a run crossing a segment's end is one run again), read
/// through footprints whose slots have chords of their own (a disk, a cross) as well as a box,
/// and NaN at the lines' ends: the NaN windows are exactly those reading one, the output the
/// callback engine's.
#[test]
fn a_nan_region_across_pieces_of_long_lines_is_written_nan_for_any_footprint() {
    let shape = [8usize, 9000];
    let n: usize = shape.iter().product();
    let mut values: Vec<f64> = (0..n).map(|i| ((i * 7919) % 1000) as f64 - 500.5).collect();
    for y in 1..4 {
        values[y * 9000 + 3990..y * 9000 + 4200].fill(f64::NAN);
    }
    values[4 * 9000 + 8100..4 * 9000 + 8200].fill(f64::NAN);
    // At the ends of lines holding nothing else (read by windows at both ends through the mode):
    // equal runs read through each slot's own chord.
    for y in 5..8 {
        values[y * 9000 + 8998..(y + 1) * 9000].fill(f64::NAN);
    }
    let filter = compile("np.max(x)");
    for dtype in [Dtype::F32, Dtype::F64] {
        let data = array(dtype, &values);
        let input = c_array(&data, dtype, &shape);
        for fp in [
            Footprint::disk(2),
            Footprint::cross(2, 2),
            Footprint::from_size(&[3, 3]),
        ] {
            for mode in [Mode::Reflect, Mode::Wrap] {
                let opts = Options::new(fp.clone()).mode(mode).threads(2);
                let what = format!("{dtype} {mode} {:?}", opts.footprint.shape());
                let got = run(&filter, &input, dtype, &opts);
                assert!(last_run().is_some(), "{what}: left to the general engine");
                let want_nan = windows_reading(&values, &shape, &opts, f64::is_nan);
                assert_eq!(last_nan_pixels(), want_nan, "{what}");
                assert_eq!(got, run_callback(&filter, &input, dtype, &opts), "{what}");
            }
        }
    }
}

/// A NaN or a `-0.0` where `zero_matters`.
fn excluded(zero_matters: bool) -> impl Fn(f64) -> bool {
    move |v: f64| v.is_nan() || (zero_matters && v.to_bits() == (-0.0f64).to_bits())
}

/// The output pixels whose windows read a value `excluded` holds, counted the slow way: every
/// tap of every pixel mapped through the mode.
fn windows_reading(
    values: &[f64],
    shape: &[usize],
    opts: &Options,
    excluded: impl Fn(f64) -> bool,
) -> usize {
    let geometry = Geometry::resolve(shape, opts).unwrap();
    let n: usize = shape.iter().product();
    (0..n)
        .filter(|&p| {
            let mut idx = vec![0i64; shape.len()];
            let mut rest = p;
            for d in (0..shape.len()).rev() {
                idx[d] = (rest % shape[d]) as i64;
                rest /= shape[d];
            }
            geometry.taps().any(|tap| {
                let mut flat = 0usize;
                for d in 0..shape.len() {
                    match opts.mode.map(idx[d] + tap[d], shape[d] as i64) {
                        Some(i) => flat = flat * shape[d] + i as usize,
                        None => return false, // cval, never excluded here
                    }
                }
                excluded(values[flat])
            })
        })
        .count()
}

/// Sparse NaN, `-0.0` and infinities in random shapes, footprints, modes and origins: the rank
/// executor keeps the run, the general engine recomputes exactly the windows that read an
/// excluded value (no fewer: the count is checked against every tap mapped through the mode),
/// and the output is the callback engine's bit for bit.
#[test]
fn patched_windows_are_exactly_those_reading_an_excluded_value() {
    let filters = compiled_filters();
    let mut rng = Rng::new(0x0009_a7c4);
    let (mut patched_runs, mut nan_runs) = (0, 0);
    for case in 0..400 {
        let ndim = 1 + rng.below(3);
        let shape: Vec<usize> = (0..ndim)
            .map(|d| match d + 1 == ndim {
                true => 8 + rng.below(60),
                false => 1 + rng.below(12),
            })
            .collect();
        let total: usize = shape.iter().product();
        let dtype = [Dtype::F32, Dtype::F64][rng.below(2)];
        let mut values: Vec<f64> = (0..total).map(|_| value(&mut rng, dtype, false)).collect();
        for _ in 0..1 + rng.below(3) {
            let at = rng.below(total);
            values[at] = [f64::NAN, -f64::NAN, -0.0, 0.0, f64::INFINITY][rng.below(5)];
        }
        let data = array(dtype, &values);
        let input = c_array(&data, dtype, &shape);
        let fp = footprint(&mut rng, ndim);
        let origin = random_origin(&mut rng, &fp);
        let mode = Mode::ALL[rng.below(Mode::ALL.len())];
        let (filter, _) = &filters[rng.below(filters.len())];
        let opts = Options::new(fp)
            .mode(mode)
            .cval(1.5)
            .origin(&origin)
            .threads(1 + rng.below(3));
        let what = format!(
            "case {case}: {:?} {dtype} {shape:?} {mode} {origin:?}",
            filter.source()
        );
        let got = run(filter, &input, dtype, &opts);
        let (took, patched, nans) = (last_run(), last_patched(), last_nan_pixels());
        let want = run_callback(filter, &input, dtype, &opts);
        assert_eq!(got, want, "{what}");
        let Some(stat) = took else { continue };
        if got.starts_with(REFUSED) {
            // The patch stopped at the refused window.
            continue;
        }
        let taps = opts.footprint.count().unwrap();
        // NaN windows are NaN where the filter's NaN propagates, the general engine's otherwise.
        let zero = stat.sign_of_zero_matters();
        let propagates = rank_form(filter, taps).unwrap().nan == NanRule::Propagates;
        let negative_zero = |v: f64| zero && v.to_bits() == (-0.0f64).to_bits();
        let recomputed = |v: f64| negative_zero(v) || (!propagates && v.is_nan());
        let nan = |v: f64| propagates && v.is_nan();
        assert_eq!(
            (patched, nans),
            (
                windows_reading(&values, &shape, &opts, recomputed),
                windows_reading(&values, &shape, &opts, nan)
            ),
            "{what}"
        );
        patched_runs += (patched > 0) as usize;
        nan_runs += (nans > 0) as usize;
    }
    assert!(
        patched_runs > 40 && nan_runs > 40,
        "only {patched_runs} runs patched windows, {nan_runs} wrote NaN windows"
    );
}

/// `max - min` of each integer type's extremes: the general path casts the doubles' difference
/// to the output type (past `i32::MAX` an `int32` output gets the indefinite value, not a
/// wrapped one); the rank executor's native difference must give the same bits.
#[test]
fn range_of_extreme_integers_is_the_cast_of_the_doubles() {
    let range = compile("x.max() - x.min()");
    let types = [
        (Dtype::I8, -128.0, 127.0),
        (Dtype::U8, 0.0, 255.0),
        (Dtype::I16, -32768.0, 32767.0),
        (Dtype::U16, 0.0, 65535.0),
        (Dtype::I32, -2147483648.0, 2147483647.0),
        (Dtype::U32, 0.0, 4294967295.0),
        (Dtype::I64, -9.223372036854776e18, 9.223372036854775e18),
        (Dtype::U64, 0.0, 1.8e19),
        (Dtype::F32, -3.0e38, 3.0e38),
    ];
    for (dtype, lo, hi) in types {
        let values: Vec<f64> = (0..40)
            .map(|i| [lo, hi, 0.0, lo / 2.0, 1.0][(i * 7 + i / 5) % 5])
            .collect();
        let data = array(dtype, &values);
        let input = c_array(&data, dtype, &[8, 5]);
        for out_dtype in [dtype, Dtype::F64, Dtype::I32] {
            let opts = Options::size(&[2, 3]);
            let got = run(&range, &input, out_dtype, &opts);
            assert_eq!(last_run(), Some(RankStat::Range), "{dtype}");
            let want = run_callback(&range, &input, out_dtype, &opts);
            assert_eq!(got, want, "{dtype} -> {out_dtype}");
        }
    }
}

/// Medians of data made mostly of zeros of both signs, for the box sizes with paths of their own
/// (3×3 sorted columns, 5×5 in registers, 7×7 sorted columns merged): the median adds `0.0`,
/// so every zero it gives is `+0.0`, whichever zero the comparators kept.
#[test]
fn medians_of_signed_zeros_are_positive_zeros() {
    let median = compile("np.median(x)");
    let shape = [23usize, 70];
    let n = shape[0] * shape[1];
    for dtype in [Dtype::F32, Dtype::F64] {
        let values: Vec<f64> = (0..n)
            .map(|i| match (i * 7919) % 5 {
                0 | 1 => -0.0,
                2 => 0.0,
                3 => 1.5,
                _ => -2.0,
            })
            .collect();
        let data = array(dtype, &values);
        let input = c_array(&data, dtype, &shape);
        for k in [3, 5, 7] {
            let opts = Options::size(&[k, k]).threads(2);
            let got = run(&median, &input, dtype, &opts);
            assert_eq!(last_run(), Some(RankStat::Median), "{dtype} {k}x{k}");
            let want = run_callback(&median, &input, dtype, &opts);
            assert_eq!(got, want, "{dtype} {k}x{k}");
        }
    }
}

/// The largest boxes the driver unrolls (65,536 values) over 8-bit images all of one value:
/// every window's statistic is that value. The column-histogram median counts in 16 bits, and a
/// box of 65,536 equal values overflowed them (an index past the last bin: a panic).
#[test]
fn the_largest_boxes_of_one_value_give_that_value() {
    let shape = [3usize, 300];
    let n = shape[0] * shape[1];
    let filters = [
        ("np.median(x)", RankStat::Median),
        ("np.sort(x)[40000]", RankStat::KthSorted(40000)),
        ("np.percentile(x, 30)", RankStat::Quantile(0.3)),
        ("np.min(x)", RankStat::Min),
    ];
    for (dtype, v) in [(Dtype::U8, 7.0), (Dtype::I8, -7.0), (Dtype::Bool, 1.0)] {
        let data = array(dtype, &vec![v; n]);
        let input = c_array(&data, dtype, &shape);
        for size in [[256, 256], [255, 257], [1, 65536]] {
            for (src, stat) in filters {
                let filter = compile(src);
                let opts = Options::size(&size).threads(2);
                let got = run(&filter, &input, Dtype::F64, &opts);
                assert_eq!(last_run(), Some(stat), "{dtype} {size:?} {src}");
                let want = array(Dtype::F64, &vec![v; n]);
                let want: Vec<u8> = want[..n].iter().flat_map(|w| w.to_ne_bytes()).collect();
                assert_eq!(got, want, "{dtype} {size:?} {src}");
            }
        }
    }
}
