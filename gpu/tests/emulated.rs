//! The generated kernels, run in the PTX emulator, agree with the CPU (scipy's loop around the CPU
//! JIT) bit for bit, except within `common::CALL_ULPS` for bodies that call transcendental math
//! functions (the CPU calls the C library, the device its transcriptions): every corpus program,
//! every boundary mode, 1-d to 3-d footprints with origins, f64 and f32 images; and failures
//! report the first failing pixel with the CPU's error.

mod common;

use common::{geometries, selected, with, Inputs};
use ndjit_gpu::codegen::{generate, Dtype, Mode, Target};
use ndjit_gpu::plan::ArrayDesc;
use ndjit_gpu::{emulate, reference, GpuError};

/// One program on one geometry: `Err(description)` on a disagreement.
fn check(
    p: &common::Program,
    shape: &[usize],
    spec: &ndjit_gpu::codegen::KernelSpec,
    seed: u64,
) -> Result<usize, String> {
    let n: usize = shape.iter().product();
    check_on(p, shape, spec, &Inputs::new(seed).bytes(n, spec.input))
}

/// [`check`] on the given input bytes.
fn check_on(
    p: &common::Program,
    shape: &[usize],
    spec: &ndjit_gpu::codegen::KernelSpec,
    input: &[u8],
) -> Result<usize, String> {
    let b = common::bindings(p);
    let n = spec.filter_size();
    let f = ndjit::Filter::compile(&p.source, &b).map_err(|e| format!("compile: {e}"))?;
    // What `GpuFilter` compiles: the lowered IR specialised with the bound values folded in.
    let ir = f.baked_ir(n, spec.buffer_values());
    let has_call = ndjit::ir::block_has_call(&ir.body);
    let k =
        generate(&ir, f.layout(), f.bound_values(), spec).map_err(|e| format!("codegen: {e}"))?;
    let in_desc = ArrayDesc::contiguous(spec.input, shape);
    let out_desc = ArrayDesc::contiguous(spec.output, shape);
    let run = emulate::run(&k, &f, input, &in_desc, &out_desc, 0xA5)
        .map_err(|e| format!("emulate: {e}"))?;
    let values = reference::to_f64(input, spec.input);
    let want = reference::generic_filter(&f, &values, shape, spec);
    let os = spec.output.itemsize();
    let mut first_err: Option<(usize, &ndjit::RuntimeError)> = None;
    for (i, w) in want.iter().enumerate() {
        match w {
            Ok(v) => {
                let wb = reference::cast(*v, spec.output);
                let gb = &run.output[i * os..(i + 1) * os];
                if let Err(distance) = common::agrees(&wb, gb, spec.output, has_call) {
                    let nb = reference::gather(
                        &values,
                        shape,
                        spec,
                        &ndjit_gpu::plan::Geometry::new(&in_desc, &out_desc)
                            .unwrap()
                            .unravel(i as u64, shape.len()),
                    );
                    return Err(format!(
                        "pixel {i}: cpu {wb:?} gpu {gb:?} (cpu value {v:?}, {distance} apart); \
                         neighbourhood {nb:?}"
                    ));
                }
            }
            Err(e) => {
                if first_err.is_none() {
                    first_err = Some((i, e));
                }
            }
        }
    }
    match (first_err, &run.error) {
        (None, None) => {}
        (Some((i, e)), Some(GpuError::Filter { pixel, error })) => {
            let g = ndjit_gpu::plan::Geometry::new(&in_desc, &out_desc).unwrap();
            let want_px = g.unravel(i as u64, shape.len());
            if *pixel != want_px || error.message != e.message {
                return Err(format!(
                    "cpu fails at {want_px:?} with {:?}, gpu at {pixel:?} with {:?}",
                    e.message, error.message
                ));
            }
        }
        (w, g) => {
            return Err(format!(
                "cpu error {:?}, gpu error {:?}",
                w.map(|(i, e)| (i, &e.message)),
                g.as_ref().map(|e| e.to_string())
            ))
        }
    }
    Ok(want.len())
}

#[test]
fn corpus_programs_match_the_cpu_in_the_emulator() {
    let corpus = common::corpus();
    let mut failures = Vec::new();
    let mut pixels = 0;
    let mut kernels = 0;
    for p in selected(&corpus) {
        for (gi, (gname, shape, base)) in geometries().into_iter().enumerate() {
            for mode in Mode::APPLIED {
                let dtypes: &[(Dtype, Dtype)] = if gi == 0 {
                    &[
                        (Dtype::F64, Dtype::F64),
                        (Dtype::F32, Dtype::F32),
                        (Dtype::U8, Dtype::U8),
                        (Dtype::I32, Dtype::F64),
                    ]
                } else {
                    &[(Dtype::F64, Dtype::F64)]
                };
                for &(di, dout) in dtypes {
                    let spec = with(&base, mode, di, dout, Target::SM90);
                    let seed = p.name.len() as u64 * 31 + gi as u64 * 7 + mode as u64;
                    kernels += 1;
                    match check(p, &shape, &spec, seed) {
                        Ok(n) => pixels += n,
                        Err(e) => failures.push(format!(
                            "{} [{gname}, {}, {} -> {}]: {e}",
                            p.name,
                            mode.name(),
                            di.name(),
                            dout.name()
                        )),
                    }
                }
            }
        }
    }
    println!("{kernels} kernels, {pixels} pixels compared");
    assert!(
        failures.is_empty(),
        "{} failures, first 25:\n{}",
        failures.len(),
        failures
            .iter()
            .take(25)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Integer and bool images: the baked IR folds the tests of taps that their values decide (never
/// NaN, infinite or `-0.0`: [`ndjit::ir::BufferValues::Ordinary`]), NumPy's zero-sign guard of
/// `np.min` with them, unless the mode reads a `cval` that is one of those. Either way the kernels
/// agree with the CPU, on images full of zeros (the guard tests its taps wherever the minimum is
/// 0) and with the `cval`s that must keep the tests.
#[test]
fn integer_images_fold_the_tests_their_values_decide() {
    let sources = [
        "np.min(x)",
        "np.max(x) - np.min(x)",
        "np.ptp(x)",
        "np.nanmax(x)",
        "np.nanmean(x)",
        "np.sum(np.isnan(x))",
        "float(np.isfinite(x).all())",
    ];
    let image = [9, 13];
    let n: usize = image.iter().product();
    let mut failures = Vec::new();
    let mut checked = 0;
    for dt in [Dtype::U8, Dtype::I16, Dtype::Bool, Dtype::I64] {
        // Mostly zeros, some small values, negative ones where the type has them.
        let mut gen = Inputs::new(dt.itemsize() as u64);
        let input: Vec<u8> = (0..n)
            .flat_map(|_| {
                let v = [0i64, 0, 0, 1, 2, -3][gen.next() as usize % 6];
                let v = match dt {
                    Dtype::Bool => v.clamp(0, 1),
                    Dtype::U8 => v.abs(),
                    _ => v,
                };
                v.to_le_bytes()[..dt.itemsize()].to_vec()
            })
            .collect();
        for (mode, cval) in [
            (Mode::Reflect, f64::NAN),
            (Mode::Constant, -1.5),
            (Mode::Constant, 0.0),
            (Mode::Constant, f64::NAN),
            (Mode::Constant, -0.0),
            (Mode::Constant, f64::NEG_INFINITY),
        ] {
            let mut spec = with(
                &ndjit_gpu::codegen::KernelSpec::boxed(2, 3),
                mode,
                dt,
                Dtype::F64,
                Target::SM90,
            );
            spec.cval = cval;
            let decided = mode != Mode::Constant
                || (cval.is_finite() && cval.to_bits() != (-0.0f64).to_bits());
            let expect = match decided {
                true => ndjit::ir::BufferValues::Ordinary,
                false => ndjit::ir::BufferValues::Any,
            };
            assert_eq!(spec.buffer_values(), expect, "{dt} {mode:?} cval {cval}");
            // The guard of `np.min` goes exactly where the values decide it.
            let min = ndjit::Filter::compile("np.min(x)", &ndjit::Bindings::new()).unwrap();
            let guarded = min.baked_ir(9, spec.buffer_values()).can_fail();
            assert_eq!(
                guarded, !decided,
                "np.min's guard, {dt} {mode:?} cval {cval}"
            );
            for src in sources {
                let p = common::Program {
                    name: src.into(),
                    source: src.into(),
                    bindings: Default::default(),
                };
                match check_on(&p, &image, &spec, &input) {
                    Ok(k) => checked += k,
                    Err(e) => failures.push(format!("{src} {dt} {mode:?} cval {cval}: {e}")),
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(checked, 4 * 6 * sources.len() * n);
}

#[test]
fn lowering_variants_agree() {
    let corpus = common::corpus();
    let (gname, shape, base) = geometries().remove(0);
    let mut failures = Vec::new();
    for p in selected(&corpus) {
        let mut spec = with(&base, Mode::Reflect, Dtype::F64, Dtype::F64, Target::SM90);
        spec.native_minmax = false;
        if let Err(e) = check(p, &shape, &spec, 99) {
            failures.push(format!("{} [{gname}, exact min/max]: {e}", p.name));
        }
        let mut spec = with(&base, Mode::Nearest, Dtype::F64, Dtype::F64, Target::SM90);
        spec.network = ndjit_gpu::codegen::body::NetworkStyle::IntKey;
        for seed in [3, 4] {
            if let Err(e) = check(p, &shape, &spec, seed) {
                failures.push(format!("{} [{gname}, integer-key networks]: {e}", p.name));
            }
        }
        // Medians of 25: networks with their exact fallback, both comparator styles.
        let (_, _, base5) = geometries().remove(3);
        let shape5 = vec![9, 14];
        for style in [
            ndjit_gpu::codegen::body::NetworkStyle::Select,
            ndjit_gpu::codegen::body::NetworkStyle::IntKey,
        ] {
            let mut spec = with(&base5, Mode::Mirror, Dtype::F64, Dtype::F64, Target::SM90);
            spec.network = style;
            if let Err(e) = check(p, &shape5, &spec, 11) {
                failures.push(format!("{} [5x5, {style:?}]: {e}", p.name));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn outputs_and_rows_per_thread_do_not_change_results() {
    let corpus = common::corpus();
    let (_, _, base) = geometries().remove(0);
    let mut failures = Vec::new();
    // (outputs, rows) per thread; images whose row counts leave partial row groups, including
    // a 3-d image whose groups cross planes.
    for p in selected(&corpus).into_iter().take(40) {
        for (v, r) in [(1, 1), (2, 1), (3, 1), (8, 1), (4, 2), (2, 3), (1, 4)] {
            let mut spec = with(&base, Mode::Wrap, Dtype::F64, Dtype::F64, Target::SM90);
            spec.outputs_per_thread = v;
            spec.rows_per_thread = r;
            if let Err(e) = check(p, &[7, 19], &spec, 5) {
                failures.push(format!("{} [V={v}, R={r}]: {e}", p.name));
            }
        }
    }
    // Min/max of a 5x5 box (the kind of body that gets several rows automatically), every mode.
    let min = common::Program {
        name: "min".into(),
        source: "np.min(x)".into(),
        bindings: Default::default(),
    };
    let (_, shape5, base5) = geometries().remove(3);
    for p in [&min] {
        for mode in Mode::APPLIED {
            for (v, r) in [(4, 0), (4, 2), (2, 4), (4, 3)] {
                let mut spec = with(&base5, mode, Dtype::F64, Dtype::F64, Target::SM90);
                spec.outputs_per_thread = v;
                spec.rows_per_thread = r;
                for shape in [shape5.clone(), vec![13, 23], vec![3, 11, 17]] {
                    let mut spec = spec.clone();
                    if shape.len() == 3 {
                        spec.shape.insert(0, 1); // one plane deep: groups cross planes
                        spec.origin.insert(0, 0);
                    }
                    if let Err(e) = check(p, &shape, &spec, 9) {
                        failures.push(format!("{} {mode:?} {shape:?} [V={v}, R={r}]: {e}", p.name));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Footprints past what a register window holds read their taps from memory (the image in the
/// interior, a local array filled by a loop at the edges): every mode, constant and run-time
/// indices (the unrolled reductions and the loops of larger windows), box, masked, 1-d and 3-d
/// footprints with origins, float and integer images.
#[test]
fn large_windows_read_taps_from_memory() {
    let programs = [
        "np.min(x)",
        "np.median(x)",
        "np.nanmean(x)",
        "x[len(x) // 2] - x[int(x[0] > 0.5)]",
    ];
    let mut spec9 = ndjit_gpu::codegen::KernelSpec::boxed(2, 9);
    spec9.origin = vec![1, -2];
    let mut ring = ndjit_gpu::codegen::KernelSpec::boxed(2, 11);
    ring.mask = (0..121).map(|i| (i / 11 + i % 11) % 3 != 0).collect();
    let mut line = ndjit_gpu::codegen::KernelSpec::boxed(1, 71);
    line.origin = vec![3];
    let cube = ndjit_gpu::codegen::KernelSpec::boxed(3, 5);
    let mut deep = ndjit_gpu::codegen::KernelSpec::boxed(2, 17);
    deep.shape = vec![17, 17];
    let cases = [
        (spec9.clone(), vec![13, 17]),
        (ring, vec![15, 14]),
        (line, vec![90]),
        (cube, vec![6, 7, 8]),
        (deep, vec![18, 19]),
        // Smaller than the window: every coordinate maps, far past the edges.
        (spec9, vec![3, 4]),
    ];
    let mut failures = Vec::new();
    for source in programs {
        let p = common::Program {
            name: source.into(),
            source: source.into(),
            bindings: Default::default(),
        };
        for (ci, (base, shape)) in cases.iter().enumerate() {
            // A median of many values sorts them in the emulator: one footprint.
            if ci > 0 && source.contains("median") {
                continue;
            }
            for (mi, mode) in Mode::APPLIED.into_iter().enumerate() {
                let dt = [Dtype::F64, Dtype::F32, Dtype::U8, Dtype::I64, Dtype::F64][mi];
                let spec = with(base, mode, dt, Dtype::F64, Target::SM90);
                if let Err(e) = check(&p, shape, &spec, 17 + ci as u64) {
                    failures.push(format!(
                        "{source} {:?} {} {dt}: {e}",
                        base.shape,
                        mode.name()
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The general kernel sorts a float32 image's taps as float32 exactly where the IR marks the
/// sort as one of the taps (`ArrayOp::Sort { of_taps }`, the core's last pass): a quantile and
/// `np.sort(x)[k]` of the taps do; of anything else (scaled values, a slice past the first tap)
/// they compare doubles.
#[test]
fn float32_sorts_follow_the_irs_mark() {
    use ndjit::driver::{Footprint, Options};
    let opts = Options::new(Footprint::from_size(&[3, 3]));
    for (source, of_taps) in [
        ("np.percentile(x, 30)", true),
        ("np.sort(x)[3]", true),
        ("np.percentile(x * 2.0, 30)", false),
        ("np.sort(x[1:])[3]", false),
    ] {
        let f = ndjit_gpu::GpuFilter::compile(source, &ndjit::Bindings::new()).unwrap();
        let ptx = f
            .ptx(&opts, 2, Dtype::F32, Dtype::F64, Target::SM90)
            .unwrap();
        assert_eq!(ptx.contains("min.f32"), of_taps, "{source}");
        // A double image's taps are sorted as doubles either way.
        let ptx = f
            .ptx(&opts, 2, Dtype::F64, Dtype::F64, Target::SM90)
            .unwrap();
        assert!(!ptx.contains("min.f32"), "{source}");
    }
}

/// Medians, quantiles and `np.sort(x)[k]` of images whose values float32 holds exactly
/// (float32, 8- and 16-bit integers, bool) run their networks on float32 values (the median's
/// pair-median shortcut of two outputs per thread, the plain network otherwise, taps from
/// registers or from the image; the sorts of arrays filled with the taps): bit for bit the
/// CPU's results, odd and even counts. The float32 images hold ties, zeros of both signs,
/// infinities and the float32 extremes, with a NaN now and then (the fallbacks); the integer
/// images hold ties and their types' extremes.
#[test]
fn sorted_statistics_of_float32_exact_images_sort_float32_values() {
    let programs = [
        "np.median(x)",
        "np.percentile(x, 30)",
        "np.sort(x)[1]",
        "np.sort(x[1:])[1]",
    ]
    .map(|src| common::Program {
        name: src.into(),
        source: src.into(),
        bindings: Default::default(),
    });
    let palette = [
        -0.0f32,
        0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1.0,
        -1.0,
        2.5,
        1e-45,
        f32::MAX,
        -f32::MAX,
    ];
    let float32 = |seed: u64, n: usize| -> Vec<u8> {
        let mut gen = Inputs::new(seed);
        (0..n)
            .flat_map(|_| {
                let r = gen.next();
                let v = match r % 300 {
                    0 => f32::NAN,
                    k if k < 100 => palette[(r >> 20) as usize % palette.len()],
                    _ => ((r >> 30) % 1000) as f32 / 7.0 - 60.0,
                };
                v.to_le_bytes()
            })
            .collect()
    };
    let shapes = [
        (vec![3, 3], vec![9, 21]),
        (vec![5, 5], vec![11, 14]),
        (vec![4, 4], vec![9, 13]),
        (vec![2, 3], vec![6, 10]),
        (vec![9], vec![40]),
        (vec![3, 3, 3], vec![5, 6, 7]),
        // Past the register window: the interior loads its taps as float32 from the image.
        (vec![9, 9], vec![19, 23]),
        (vec![10, 10], vec![22, 25]),
    ];
    let dtypes = [
        Dtype::F32,
        Dtype::U8,
        Dtype::I8,
        Dtype::U16,
        Dtype::I16,
        Dtype::Bool,
    ];
    let mut failures = Vec::new();
    let mut checked = 0;
    for (si, (fshape, image)) in shapes.iter().enumerate() {
        let n: usize = image.iter().product();
        for (di, &dt) in dtypes.iter().enumerate() {
            let seed = (si * dtypes.len() + di) as u64 + 5;
            let input = match dt {
                Dtype::F32 => float32(seed, n),
                _ => Inputs::new(seed).bytes(n, dt),
            };
            for (mi, mode) in Mode::APPLIED.into_iter().enumerate() {
                let mut base = ndjit_gpu::codegen::KernelSpec::boxed(fshape.len(), 1);
                base.shape = fshape.clone();
                base.mask = vec![true; fshape.iter().product()];
                base.origin = vec![0; fshape.len()];
                let out = [Dtype::F64, dt][(mi + di) % 2];
                // sm_90 under PTX ISA 8.0 runs box medians of 16-bit values in two lanes.
                let target = [Target::SM90, common::SM90_PTX80, Target::PORTABLE][(mi + di) % 3];
                let mut spec = with(&base, mode, dt, out, target);
                spec.outputs_per_thread = [0, 1, 2, 4][(mi + si) % 4];
                // The sorts stay in registers up to 32 values (quantiles past them select).
                for p in programs
                    .iter()
                    .filter(|p| p.name.contains("median") || n_taps(fshape) <= 32)
                {
                    match check_on(p, image, &spec, &input) {
                        Ok(px) => checked += px,
                        Err(e) => failures.push(format!(
                            "{} {fshape:?} {dt} -> {out} {} (outputs {}): {e}",
                            p.name,
                            mode.name(),
                            spec.outputs_per_thread
                        )),
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked > 10000, "{checked} pixels");
}

/// A float32 image holding one NaN, medians of boxes around it: each window reading the NaN sees
/// it at another of its positions, so every tap's path to the median is tested, through the
/// networks that carry a NaN to their result (sm_90) and the test of every value before them
/// (sm_75), at 1 to 4 outputs a thread (the pair-median shortcut shares sorted columns).
#[test]
fn a_nan_at_any_position_of_a_median_window_makes_it_nan() {
    let p = common::Program {
        name: "median".into(),
        source: "np.median(x)".into(),
        bindings: Default::default(),
    };
    let mut failures = Vec::new();
    for k in [3usize, 4, 5, 7, 9, 11] {
        let image = [2 * k + 5, 2 * k + 7];
        let mut gen = Inputs::new(k as u64);
        let mut values: Vec<f32> = (0..image[0] * image[1])
            .map(|_| ((gen.next() >> 30) % 1000) as f32 / 7.0 - 60.0)
            .collect();
        values[(image[0] / 2) * image[1] + image[1] / 2] = f32::NAN;
        let input: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        for target in [Target::SM90, Target::PORTABLE] {
            for outputs in [1, 2, 4] {
                let mut spec = ndjit_gpu::codegen::KernelSpec::boxed(2, k);
                spec = with(&spec, Mode::Reflect, Dtype::F32, Dtype::F32, target);
                spec.outputs_per_thread = outputs;
                if let Err(e) = check_on(&p, &image, &spec, &input) {
                    failures.push(format!("{k}x{k} sm_{} outputs {outputs}: {e}", target.sm));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn n_taps(fshape: &[usize]) -> usize {
    fshape.iter().product()
}

/// Box medians of doubles by 32-bit keys of their high words (`NetworkStyle::HighKey`), bit for
/// bit the CPU's: values spread over many magnitudes (keys that decide alone), runs of values
/// that differ only in their low words (keys that tie, where the exact network decides), exact
/// duplicates (ties the low words settle), zeros of both signs, infinities, subnormals and the
/// extremes, with a NaN now and then (the NaN branch), at every count of outputs a thread (the
/// keyed pairs at 2 and 4), in every mode.
#[test]
fn medians_of_doubles_by_high_word_keys_are_exact() {
    let p = common::Program {
        name: "median".into(),
        source: "np.median(x)".into(),
        bindings: Default::default(),
    };
    let palette = [
        -0.0f64,
        0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MAX,
        -f64::MAX,
        5e-324,
        -5e-324,
        1.0,
        -1.0,
    ];
    let doubles = |seed: u64, n: usize| -> Vec<u8> {
        let mut gen = Inputs::new(seed);
        (0..n)
            .flat_map(|_| {
                let r = gen.next();
                let v = match r % 400 {
                    0 => f64::NAN,
                    k if k < 80 => palette[(r >> 20) as usize % palette.len()],
                    // Equal high words: 1 + j / 2^40 and its negation.
                    k if k < 240 => {
                        let v = 1.0 + ((r >> 24) % 6) as f64 / (1u64 << 40) as f64;
                        if k % 2 == 0 {
                            v
                        } else {
                            -v
                        }
                    }
                    // Duplicates and distinct keys.
                    k if k < 320 => ((r >> 30) % 7) as f64 - 3.0,
                    _ => f64::from_bits(r >> 2) * if r & 1 == 0 { 1.0 } else { -1.0 },
                };
                v.to_le_bytes()
            })
            .collect()
    };
    let mut failures = Vec::new();
    let mut checked = 0;
    for (si, (k, image)) in [(3usize, [9usize, 21]), (5, [11, 14]), (7, [15, 17])]
        .into_iter()
        .enumerate()
    {
        // (3×3 keeps the selects: keys start at 25 values.)
        for (mi, mode) in Mode::APPLIED.into_iter().enumerate() {
            let input = match mi % 3 {
                2 => sparse_low_words((si * 10 + mi) as u64, image[0] * image[1]),
                _ => doubles((si * 10 + mi) as u64, image[0] * image[1]),
            };
            let base = ndjit_gpu::codegen::KernelSpec::boxed(2, k);
            let out = [Dtype::F64, Dtype::F32][mi % 2];
            let target = [Target::SM90, Target::PORTABLE][(mi + si) % 2];
            let mut spec = with(&base, mode, Dtype::F64, out, target);
            spec.network = ndjit_gpu::codegen::body::NetworkStyle::HighKey;
            for outputs in [1, 2, 4] {
                spec.outputs_per_thread = outputs;
                match check_on(&p, &image, &spec, &input) {
                    Ok(px) => checked += px,
                    Err(e) => {
                        failures.push(format!("{k}x{k} {} outputs {outputs}: {e}", mode.name()))
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked > 8000, "{checked} pixels");
}

/// Small integers (low words all 0) with, now and then, `2 + j / 2^40`: a window whose median is
/// such a value holds it alone under its key, and only its own low word may decide the median's
/// (the values of other keys agree in theirs, so reading them instead would pass the ties'
/// test with the wrong low word).
fn sparse_low_words(seed: u64, n: usize) -> Vec<u8> {
    let mut gen = Inputs::new(seed);
    (0..n)
        .flat_map(|_| {
            let r = gen.next();
            let v = match r % 16 {
                0 => 2.0 + (1 + (r >> 8) % 5) as f64 / (1u64 << 40) as f64,
                _ => ((r >> 12) % 7) as f64 - 1.0,
            };
            v.to_le_bytes()
        })
        .collect()
}
