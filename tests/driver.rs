//! The n-d driver against a reference written the simple way: for each pixel, gather the
//! neighbourhood with the boundary modes as literal reflections, call the filter, cast the result.
//! Every engine, dtype, mode, origin, footprint, shape and stride layout is compared byte for byte;
//! every error path is exercised.

use ndarray::{ArrayD, Dimension, IxDyn, SliceInfoElem};
use ndjit::driver::{
    self, generic_filter, generic_filter_into, generic_filter_raw, DriverError, Dtype, Engine,
    Footprint, Mode, Options, RawArray, RawArrayMut,
};
use ndjit::{Bindings, Filter};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

// -------------------------------------------------------------------------------------------------
// The reference

/// Index `i` on an axis of length `n` under `mode`, by repeated reflection (`None`: cval).
fn reference_index(mode: Mode, mut i: i64, n: i64) -> Option<i64> {
    let name = mode.name();
    if (0..n).contains(&i) {
        return Some(i);
    }
    match name {
        "constant" | "grid-constant" => None,
        "nearest" => Some(i.clamp(0, n - 1)),
        _ if n == 1 => Some(0),
        "wrap" | "grid-wrap" => Some(i.rem_euclid(n)),
        "mirror" => {
            while !(0..n).contains(&i) {
                i = if i < 0 { -i } else { 2 * n - 2 - i };
            }
            Some(i)
        }
        _ => {
            // reflect, grid-mirror
            while !(0..n).contains(&i) {
                i = if i < 0 { -i - 1 } else { 2 * n - 1 - i };
            }
            Some(i)
        }
    }
}

/// An array as bytes plus its description, owning its memory (with room for strided views).
struct Buf {
    data: Vec<u64>,
    dtype: Dtype,
    shape: Vec<usize>,
    /// Byte strides and the byte offset of element 0 in `data`.
    strides: Vec<isize>,
    offset: isize,
}

impl Buf {
    fn base(&self) -> *const u8 {
        unsafe { (self.data.as_ptr() as *const u8).offset(self.offset) }
    }
    fn raw(&self) -> RawArray {
        RawArray {
            ptr: self.base(),
            dtype: self.dtype,
            shape: self.shape.clone(),
            strides: self.strides.clone(),
        }
    }
    fn raw_mut(&mut self) -> RawArrayMut {
        let ptr = unsafe { (self.data.as_mut_ptr() as *mut u8).offset(self.offset) };
        RawArrayMut {
            ptr,
            dtype: self.dtype,
            shape: self.shape.clone(),
            strides: self.strides.clone(),
        }
    }
    fn addr(&self, idx: &[usize]) -> isize {
        self.offset
            + idx
                .iter()
                .zip(&self.strides)
                .map(|(&i, &s)| i as isize * s)
                .sum::<isize>()
    }
    fn get(&self, idx: &[usize]) -> f64 {
        unsafe {
            self.dtype
                .read((self.data.as_ptr() as *const u8).offset(self.addr(idx)))
        }
    }
    fn set(&mut self, idx: &[usize], v: f64) {
        let a = self.addr(idx);
        unsafe {
            self.dtype
                .write((self.data.as_mut_ptr() as *mut u8).offset(a), v)
        }
    }
    /// The element bytes in C order (what a comparison looks at), every NaN made the same
    /// (the interpreter and the JIT may differ in NaN payloads).
    fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for idx in indices(&self.shape) {
            let a = self.addr(&idx);
            let p = unsafe { (self.data.as_ptr() as *const u8).offset(a) };
            let is_float = matches!(self.dtype, Dtype::F32 | Dtype::F64);
            if is_float && self.get(&idx).is_nan() {
                out.extend(std::iter::repeat_n(0xAA, self.dtype.itemsize()));
            } else {
                out.extend_from_slice(unsafe {
                    std::slice::from_raw_parts(p, self.dtype.itemsize())
                });
            }
        }
        out
    }
}

/// Every multi-index of `shape` in C order (one empty index for a 0-d shape).
fn indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let n: usize = shape.iter().product();
    let mut out = Vec::with_capacity(n);
    let mut idx = vec![0; shape.len()];
    for _ in 0..n {
        out.push(idx.clone());
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    out
}

/// The footprint over all axes, the taps' offsets, as scipy builds them; `None` for an invalid
/// origin.
fn reference_taps(ndim: usize, opts: &Options) -> Option<Vec<Vec<i64>>> {
    // Negative axes count from the end, as in scipy's `_check_axes`.
    let axes: Vec<usize> = match &opts.axes {
        Some(axes) => axes
            .iter()
            .map(|&a| a.rem_euclid(ndim as isize) as usize)
            .collect(),
        None => (0..ndim).collect(),
    };
    let mut sorted = axes.clone();
    sorted.sort();
    let fp = &opts.footprint;
    let mut fshape = vec![1usize; ndim];
    let mut origin = vec![0i64; ndim];
    for (k, &ax) in sorted.iter().enumerate() {
        fshape[ax] = fp.shape()[k];
    }
    // Origins go to `axes` in the order given, except that with every axis filtered scipy
    // ignores the order of `axes`.
    for (k, &ax) in axes.iter().enumerate() {
        let ax = if axes.len() == ndim { k } else { ax };
        origin[ax] = opts.origin.get(k).copied().unwrap_or(0) as i64;
    }
    if (0..ndim).any(|d| {
        fshape[d] as i64 / 2 + origin[d] < 0 || fshape[d] as i64 / 2 + origin[d] >= fshape[d] as i64
    }) {
        return None;
    }
    let mut taps = Vec::new();
    // The footprint's own dims, in its own row-major order, spread onto the sorted axes.
    for (flat, fidx) in indices(fp.shape()).into_iter().enumerate() {
        if !fp.entry(flat) {
            continue;
        }
        let mut t = vec![0i64; ndim];
        for (k, &ax) in sorted.iter().enumerate() {
            t[ax] = fidx[k] as i64;
        }
        taps.push(
            (0..ndim)
                .map(|d| t[d] - (fshape[d] / 2) as i64 - origin[d])
                .collect(),
        );
    }
    Some(taps)
}

/// scipy's loop: Ok(output bytes) or Err(position of the first failing pixel, or None for an
/// invalid origin).
fn reference(
    input: &Buf,
    out_dtype: Dtype,
    filter: &Filter,
    opts: &Options,
) -> Result<Vec<u8>, Option<Vec<usize>>> {
    let ndim = input.shape.len();
    let taps = reference_taps(ndim, opts).ok_or(None)?;
    let mut out = c_buf(out_dtype, &input.shape);
    for idx in indices(&input.shape) {
        let mut buf = Vec::new();
        'taps: for t in &taps {
            let mut at = vec![0usize; ndim];
            for d in 0..ndim {
                match reference_index(opts.mode, idx[d] as i64 + t[d], input.shape[d] as i64) {
                    Some(i) => at[d] = i as usize,
                    None => {
                        buf.push(opts.cval);
                        continue 'taps;
                    }
                }
            }
            buf.push(input.get(&at));
        }
        match filter.call(&buf) {
            Ok(v) => out.set(&idx, v),
            Err(_) => return Err(Some(idx)),
        }
    }
    Ok(out.bytes())
}

fn c_buf(dtype: Dtype, shape: &[usize]) -> Buf {
    let n: usize = shape.iter().product();
    let words = (n * dtype.itemsize()).div_ceil(8) + 1;
    Buf {
        data: vec![0; words],
        dtype,
        shape: shape.to_vec(),
        strides: driver::c_strides(shape, dtype),
        offset: 0,
    }
}

// -------------------------------------------------------------------------------------------------
// Random cases

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, p: f64) -> bool {
        (self.next() % 10_000) as f64 / 10_000.0 < p
    }
}

/// A value of the dtype, awkward ones included.
fn value(rng: &mut Rng, dtype: Dtype) -> f64 {
    match dtype {
        Dtype::Bool => (rng.below(2)) as f64,
        Dtype::U8 => rng.below(256) as f64,
        Dtype::I8 => rng.below(256) as f64 - 128.0,
        Dtype::U16 | Dtype::U32 | Dtype::U64 => rng.below(70_000) as f64,
        Dtype::I16 | Dtype::I32 | Dtype::I64 => rng.below(70_000) as f64 - 35_000.0,
        Dtype::F32 | Dtype::F64 => match rng.below(12) {
            0 => f64::NAN,
            1 => -0.0,
            2 => 0.0,
            3 => 1e10,
            4 => -3e9,
            5 => f64::INFINITY,
            _ => (rng.below(2000) as f64 - 1000.0) / 8.0,
        },
    }
}

/// A random array of `shape` laid out randomly: C order, or a view with steps and reversed axes
/// into a larger buffer, or transposed.
fn random_array(rng: &mut Rng, dtype: Dtype, shape: &[usize]) -> Buf {
    let ndim = shape.len();
    let size = dtype.itemsize() as isize;
    let steps: Vec<isize> = (0..ndim)
        .map(|_| if rng.chance(0.3) { 2 } else { 1 })
        .collect();
    let reversed: Vec<bool> = (0..ndim).map(|_| rng.chance(0.3)).collect();
    let mut order: Vec<usize> = (0..ndim).collect();
    if rng.chance(0.3) {
        order.reverse();
    }
    // Strides of the parent buffer, in the permuted order.
    let mut strides = vec![0isize; ndim];
    let mut s = size;
    for &d in order.iter().rev() {
        strides[d] = s * steps[d];
        s *= (shape[d].max(1) as isize) * steps[d];
    }
    let bytes = s.max(size) as usize + 8;
    let mut offset = if rng.chance(0.3) && dtype.itemsize() < 8 {
        dtype.itemsize() as isize
    } else {
        0
    };
    for d in 0..ndim {
        if reversed[d] && shape[d] > 0 {
            offset += (shape[d] as isize - 1) * strides[d];
            strides[d] = -strides[d];
        }
    }
    let mut b = Buf {
        data: vec![0; bytes.div_ceil(8) + 2],
        dtype,
        shape: shape.to_vec(),
        strides,
        offset,
    };
    for idx in indices(shape) {
        let v = value(rng, dtype);
        b.set(&idx, v);
    }
    b
}

const SOURCES: &[&str] = &[
    // Order-dependent, defined on any size (the empty buffer gives 0).
    "def f(v):\n    s = 0.0\n    for a in v:\n        s = s * 1.5 + a\n    return s",
    "np.median(x)",
    "max(x) - min(x)",
    "x[len(x) // 2] * 2.0 - x[0]",
    "np.sum(x) / 3.0",
    "np.nanmax(x) + np.count_nonzero(x > 10)",
];

fn random_options(rng: &mut Rng, ndim: usize) -> Options {
    let axes: Option<Vec<isize>> = if ndim > 1 && rng.chance(0.25) {
        let mut a: Vec<usize> = (0..ndim).filter(|_| rng.chance(0.6)).collect();
        if a.is_empty() {
            a.push(rng.below(ndim));
        }
        if rng.chance(0.5) {
            a.reverse();
        }
        // Some counted from the end: the driver normalises them.
        let signed = a.into_iter().map(|x| match rng.chance(0.3) {
            true => x as isize - ndim as isize,
            false => x as isize,
        });
        Some(signed.collect())
    } else {
        None
    };
    let nax = axes.as_ref().map_or(ndim, |a| a.len());
    let fshape: Vec<usize> = (0..nax)
        .map(|_| 1 + rng.below(if ndim > 2 { 3 } else { 5 }))
        .collect();
    let footprint = match rng.below(4) {
        0 => Footprint::from_size(&fshape),
        1 => Footprint::from_fn(&fshape, |_| false),
        _ => {
            let n: usize = fshape.iter().product();
            let one = rng.below(n);
            let dense = rng.chance(0.5);
            let mut k = 0;
            Footprint::from_fn(&fshape, |_| {
                k += 1;
                k - 1 == one || (dense && !(k * 7919 + one).is_multiple_of(3))
            })
        }
    };
    let origin: Vec<isize> = if rng.chance(0.5) {
        fshape
            .iter()
            .map(|&n| rng.below(n) as isize - (n / 2) as isize)
            .collect()
    } else {
        Vec::new()
    };
    let mode = Mode::ALL[rng.below(8)];
    let engine = [
        Engine::Auto,
        Engine::Auto,
        Engine::Callback,
        Engine::Interpreter,
        Engine::Sequential,
    ][rng.below(5)];
    Options {
        function: driver::Function::GenericFilter,
        footprint,
        mode,
        cval: [0.0, -1.5, f64::NAN, 300.0][rng.below(4)],
        origin,
        axes,
        threads: Some(1 + rng.below(2)),
        progress: None,
        cancel: None,
        engine,
        region: None,
    }
}

/// Compares the driver with the reference on `cases` random cases.
fn sweep(seed: u64, cases: usize, max_ndim: usize, max_len: usize) {
    let mut rng = Rng(seed);
    let filters: Vec<Filter> = SOURCES
        .iter()
        .map(|s| Filter::compile(s, &Bindings::new()).unwrap())
        .collect();
    let mut failures = Vec::new();
    let (mut ok, mut errs) = (0, 0);
    for case in 0..cases {
        let ndim = rng.below(max_ndim + 1);
        let shape: Vec<usize> = (0..ndim)
            .map(|_| {
                if rng.chance(0.08) {
                    0
                } else if rng.chance(0.2) {
                    1
                } else {
                    1 + rng.below(max_len)
                }
            })
            .collect();
        let din = Dtype::ALL[rng.below(11)];
        let dout = if rng.chance(0.5) {
            din
        } else {
            Dtype::ALL[rng.below(11)]
        };
        let input = random_array(&mut rng, din, &shape);
        let mut output = random_array(&mut rng, dout, &shape);
        let opts = random_options(&mut rng, ndim);
        let f = rng.below(filters.len());
        let expect = reference(&input, dout, &filters[f], &opts);
        let got =
            unsafe { generic_filter_raw(&input.raw(), &output.raw_mut(), &filters[f], &opts) };
        let what = format!(
            "case {case}: {:?} {din}->{dout} shape {shape:?} strides {:?} {opts:?}",
            SOURCES[f], input.strides
        );
        match (expect, got) {
            (Ok(e), Ok(())) => {
                ok += 1;
                if e != output.bytes() {
                    failures.push(format!("{what}: output differs"));
                }
            }
            (Err(None), Err(DriverError::InvalidOrigin { .. })) => {}
            (Err(Some(pos)), Err(DriverError::Filter { position, .. })) => {
                errs += 1;
                if pos != position {
                    failures.push(format!("{what}: failed at {position:?}, expected {pos:?}"));
                }
            }
            (e, g) => failures.push(format!("{what}: expected {:?}, got {g:?}", e.map(|_| ()))),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {cases} cases differ, first 10:\n{}",
        failures.len(),
        failures
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(ok > cases / 2 && errs > 0, "{ok} successes, {errs} errors");
}

#[test]
fn random_small_arrays_match_the_reference_byte_for_byte() {
    sweep(0x9E3779B97F4A7C15, 1500, 4, 6);
}

#[test]
fn random_long_lines_match_the_reference_byte_for_byte() {
    // Lines long enough for an interior (read in place) and several chunks per line.
    sweep(0xD1B54A32D192ED03, 150, 2, 40);
}

#[test]
fn the_ends_of_f64_lines_read_in_place_match_the_reference_in_every_mode() {
    // Contiguous f64 in and out: the row kernel reads the interior in place and each end of a
    // line through that end's column sources (`exec::Edge`), made once per run. Every mode and
    // cval, boxes as wide as the line and wider, every origin, lines of a few pixels (no
    // interior) and lines split between threads (pieces holding one end or neither).
    let filter = Filter::compile(SOURCES[0], &Bindings::new()).unwrap();
    let mut rng = Rng(0x5851F42D4C957F2D);
    let mut cases = 0;
    for mode in Mode::ALL {
        for len in [1, 2, 3, 5, 8, 13, 9000] {
            for width in [1, 2, 3, 4, 6, 15] {
                let origins: Vec<isize> = (0..width).map(|o| o - width / 2).collect();
                for (i, &origin) in origins.iter().enumerate() {
                    // The long lines (split between two threads) at a few widths and origins.
                    if len == 9000 && (width > 6 || i % 2 == 1) {
                        continue;
                    }
                    let shape = [3, len];
                    let mut input = c_buf(Dtype::F64, &shape);
                    for idx in indices(&shape) {
                        let v = value(&mut rng, Dtype::F64);
                        input.set(&idx, v);
                    }
                    let opts = Options::size(&[2, width as usize])
                        .mode(mode)
                        .cval([-1.5, 300.0][cases % 2])
                        .origin(&[-(cases as isize % 2), origin])
                        .threads(1 + cases % 2);
                    let expect = reference(&input, Dtype::F64, &filter, &opts);
                    let mut output = c_buf(Dtype::F64, &shape);
                    let got = unsafe {
                        generic_filter_raw(&input.raw(), &output.raw_mut(), &filter, &opts)
                    };
                    let what = format!("{mode:?}, line {len}, width {width}, origin {origin}");
                    got.unwrap_or_else(|e| panic!("{what}: {e}"));
                    assert!(expect.unwrap() == output.bytes(), "{what}: output differs");
                    cases += 1;
                }
            }
        }
    }
    assert!(cases > 500, "{cases} cases");
}

// -------------------------------------------------------------------------------------------------
// Larger arrays: threads, chunks, the in-place kernel

fn image(h: usize, w: usize) -> ArrayD<f64> {
    ArrayD::from_shape_fn(IxDyn(&[h, w]), |i| {
        (((i[0] * 131 + i[1] * 71) % 257) as f64 - 128.0) * 0.25
    })
}

fn assert_same(a: &ArrayD<f64>, b: &ArrayD<f64>) {
    assert_eq!(a.shape(), b.shape());
    let diff = a
        .iter()
        .zip(b.iter())
        .position(|(x, y)| x.to_bits() != y.to_bits());
    assert!(diff.is_none(), "first difference at flat index {diff:?}");
}

#[test]
fn engines_and_thread_counts_agree_on_a_large_image() {
    let a = image(301, 517);
    for (src, fp) in [
        ("min(x)", Footprint::cross(2, 1)),
        ("np.median(x)", Footprint::from_size(&[5, 5])),
        ("np.median(x)", Footprint::from_size(&[4, 2])),
        ("np.mean(x)", Footprint::disk(3)),
        ("np.percentile(x, 25)", Footprint::from_size(&[3, 7])),
    ] {
        let f = Filter::compile(src, &Bindings::new()).unwrap();
        for mode in [Mode::Reflect, Mode::Constant, Mode::Wrap] {
            let base = Options::new(fp.clone()).mode(mode).cval(-7.0);
            let expected = generic_filter(
                a.view(),
                &f,
                &base.clone().engine(Engine::Callback).threads(1),
            )
            .unwrap();
            for (engine, threads) in [
                (Engine::Auto, 1),
                (Engine::Auto, 2),
                (Engine::Auto, 3),
                (Engine::Callback, 2),
            ] {
                let r = generic_filter(a.view(), &f, &base.clone().engine(engine).threads(threads))
                    .unwrap();
                assert_same(&r, &expected);
            }
            // The reference implementation, on a corner.
            let corner = a.slice(ndarray::s![..20, ..23]).to_owned().into_dyn();
            let got = generic_filter(corner.view(), &f, &base).unwrap();
            let mut buf = Buf {
                data: vec![0; 20 * 23 + 1],
                dtype: Dtype::F64,
                shape: vec![20, 23],
                strides: vec![23 * 8, 8],
                offset: 0,
            };
            for idx in indices(&[20, 23]) {
                buf.set(&idx, corner[&idx[..]]);
            }
            let want = reference(&buf, Dtype::F64, &f, &base).unwrap();
            let got_bytes: Vec<u8> = got.iter().flat_map(|v| v.to_le_bytes()).collect();
            assert_eq!(got_bytes, want, "{src} {mode}");
        }
    }
}

#[test]
fn footprints_too_large_to_unroll_read_their_taps_through_the_table() {
    // 289 taps: reductions become loops, whose loads use run-time tap indices.
    let a = image(40, 70);
    for src in ["min(x)", "np.sum(x * 0.5) - x[len(x) // 3]", "def f(v):\n    s = 0.0\n    for i in range(len(v)):\n        s = s * 0.5 + v[i]\n    return s"] {
        let f = Filter::compile(src, &Bindings::new()).unwrap();
        let o = Options::size(&[17, 17]).mode(Mode::Wrap);
        let fast = generic_filter(a.view(), &f, &o).unwrap();
        assert_same(&fast, &generic_filter(a.view(), &f, &o.clone().engine(Engine::Callback)).unwrap());
    }
}

#[test]
fn footprints_too_large_to_compile_run_through_the_callback() {
    // 70 001 taps: above the size the driver specialises and fuses into a row kernel (10^7 taps
    // once took 10 GB in Cranelift and aborted). Every engine agrees with the reference.
    let a = image(2, 7);
    let f = Filter::compile("x[0] - 2 * x[len(x) // 2] + x[-1] * 0.5", &Bindings::new()).unwrap();
    let o = Options::size(&[1, 70_001]).mode(Mode::Mirror);
    let got = generic_filter(a.view(), &f, &o).unwrap();
    assert_same(
        &got,
        &generic_filter(a.view(), &f, &o.clone().engine(Engine::Interpreter)).unwrap(),
    );
    let mut buf = Buf {
        data: vec![0; 14],
        dtype: Dtype::F64,
        shape: vec![2, 7],
        strides: vec![56, 8],
        offset: 0,
    };
    for idx in indices(&[2, 7]) {
        buf.set(&idx, a[&idx[..]]);
    }
    let want = reference(&buf, Dtype::F64, &f, &o).unwrap();
    let got_bytes: Vec<u8> = got.iter().flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(got_bytes, want);
}

#[test]
fn sizes_whose_products_overflow_are_errors_not_wrapped() {
    // 2^32 × 2^32 wrapped to an empty footprint (the filter saw no values); 3 × 2^62 panicked.
    let f = Filter::compile("x[0]", &Bindings::new()).unwrap();
    let a = image(3, 4);
    for size in [[1 << 32, 1 << 32], [3, 1 << 62]] {
        let e = err_of(generic_filter(a.view(), &f, &Options::size(&size)));
        assert_eq!(
            e,
            format!(
                "ValueError: a footprint of shape {size:?} has more entries than fit in memory"
            )
        );
    }
    // 2^40 taps fit in a usize but not in memory: MemoryError, as scipy.
    let e = err_of(generic_filter(
        a.view(),
        &f,
        &Options::size(&[1 << 20, 1 << 20]),
    ));
    assert!(e.starts_with("MemoryError: unable to allocate"), "{e}");
}

#[test]
fn non_contiguous_and_reversed_f64_views_match_contiguous_copies() {
    let big = image(64, 90);
    let f = Filter::compile("x[0] - 2 * x[len(x) - 1] + np.median(x)", &Bindings::new()).unwrap();
    let opts = Options::size(&[3, 5]).mode(Mode::Mirror);
    let slices: [&[SliceInfoElem]; 4] = [
        &[
            (..).into(),
            SliceInfoElem::Slice {
                start: 0,
                end: None,
                step: 2,
            },
        ],
        &[
            SliceInfoElem::Slice {
                start: 0,
                end: None,
                step: -1,
            },
            (..).into(),
        ],
        &[
            SliceInfoElem::Slice {
                start: 1,
                end: Some(-1),
                step: 3,
            },
            SliceInfoElem::Slice {
                start: 0,
                end: None,
                step: -2,
            },
        ],
        &[(..).into(), (..).into()],
    ];
    for s in slices {
        let view = big.slice(s);
        let copy = view.to_owned();
        assert_same(
            &generic_filter(view.view(), &f, &opts).unwrap(),
            &generic_filter(copy.view(), &f, &opts).unwrap(),
        );
        let t = view.t();
        assert_same(
            &generic_filter(t.view(), &f, &opts).unwrap(),
            &generic_filter(t.to_owned().view(), &f, &opts).unwrap(),
        );
    }
}

// -------------------------------------------------------------------------------------------------
// GUIDE §1 facts

#[test]
fn the_buffer_is_row_major_over_the_true_entries() {
    // A filter that encodes its buffer: sum of x[k] * 10^k.
    let f = Filter::compile("def f(v):\n    s = 0.0\n    for i, a in enumerate(v):\n        s += a * 10.0 ** i\n    return s", &Bindings::new()).unwrap();
    let a = ArrayD::from_shape_fn(IxDyn(&[3, 3]), |i| (i[0] * 3 + i[1]) as f64);
    // Footprint [[1, 0, 1], [0, 1, 0]] at the centre pixel (1, 1): origin row offset -1 (3//2 rows... 2 rows: centre row 1).
    let fp = Footprint::new(vec![2, 3], vec![true, false, true, false, true, false]).unwrap();
    let r = generic_filter(
        a.view(),
        &f,
        &Options::new(fp).mode(Mode::Constant).cval(0.0),
    )
    .unwrap();
    // Centre (1, 1) with a 2x3 footprint centred at (1, 1) of the footprint: rows 0..2 -> image rows 0..2,
    // entries (0,0) (0,2) (1,1) -> a[0,0]=0, a[0,2]=2, a[1,1]=4.
    assert_eq!(r[[1, 1]], 0.0 + 2.0 * 10.0 + 4.0 * 100.0);
    assert_eq!(
        Footprint::new(vec![2, 3], vec![true, false, true, false, true, false])
            .unwrap()
            .count(),
        Some(3)
    );
}

#[test]
fn length_one_axes_read_index_zero_in_reflect_mirror_and_wrap() {
    let f = Filter::compile("np.sum(x)", &Bindings::new()).unwrap();
    let a = ArrayD::from_shape_vec(IxDyn(&[1, 3]), vec![1.0, 2.0, 3.0]).unwrap();
    for mode in [
        Mode::Reflect,
        Mode::Mirror,
        Mode::Wrap,
        Mode::GridMirror,
        Mode::GridWrap,
        Mode::Nearest,
    ] {
        let r = generic_filter(a.view(), &f, &Options::size(&[3, 1]).mode(mode)).unwrap();
        assert_eq!(r.as_slice().unwrap(), &[3.0, 6.0, 9.0], "{mode}");
    }
    let r = generic_filter(
        a.view(),
        &f,
        &Options::size(&[3, 1]).mode(Mode::Constant).cval(1.0),
    )
    .unwrap();
    assert_eq!(r.as_slice().unwrap(), &[3.0, 4.0, 5.0]);
}

#[test]
fn grid_modes_are_their_filter_aliases() {
    let f = Filter::compile("x[0] * 100 + x[len(x) - 1]", &Bindings::new()).unwrap();
    let a = ArrayD::from_shape_fn(IxDyn(&[7]), |i| i[0] as f64);
    for (grid, plain) in [
        (Mode::GridMirror, Mode::Reflect),
        (Mode::GridWrap, Mode::Wrap),
        (Mode::GridConstant, Mode::Constant),
    ] {
        let o = Options::size(&[5]).cval(-1.0);
        assert_same(
            &generic_filter(a.view(), &f, &o.clone().mode(grid)).unwrap(),
            &generic_filter(a.view(), &f, &o.mode(plain)).unwrap(),
        );
    }
    // scipy 1.17: generic_filter(arange(7.), lambda x: x[0]*100 + x[-1], size=5, mode=...).
    let r = |m: Mode| {
        generic_filter(a.view(), &f, &Options::size(&[5]).mode(m).cval(-1.0))
            .unwrap()
            .into_raw_vec_and_offset()
            .0
    };
    assert_eq!(r(Mode::Reflect), vec![102., 3., 4., 105., 206., 306., 405.]);
    assert_eq!(
        r(Mode::Mirror),
        vec![202., 103., 4., 105., 206., 305., 404.]
    );
    assert_eq!(r(Mode::Wrap), vec![502., 603., 4., 105., 206., 300., 401.]);
    assert_eq!(r(Mode::Nearest), vec![2., 3., 4., 105., 206., 306., 406.]);
    assert_eq!(
        r(Mode::Constant),
        vec![-98., -97., 4., 105., 206., 299., 399.]
    );
}

#[test]
fn outputs_use_scipys_c_cast() {
    let f = Filter::compile("x[0]", &Bindings::new()).unwrap();
    let a = ArrayD::from_shape_vec(IxDyn(&[4]), vec![300.0, -1.0, f64::NAN, 2.5]).unwrap();
    let o = Options::size(&[1]);
    let mut u8s = ArrayD::<u8>::zeros(IxDyn(&[4]));
    generic_filter_into(a.view(), u8s.view_mut(), &f, &o).unwrap();
    assert_eq!(u8s.as_slice().unwrap(), &[44, 255, 0, 2]);
    let mut i32s = ArrayD::<i32>::zeros(IxDyn(&[4]));
    generic_filter_into(a.view(), i32s.view_mut(), &f, &o).unwrap();
    assert_eq!(i32s.as_slice().unwrap(), &[300, -1, i32::MIN, 2]);
    // A bool output through the raw API holds scipy's bytes; through ndarray, valid bools.
    let mut bytes = vec![9u8; 4];
    let out = RawArrayMut {
        ptr: bytes.as_mut_ptr(),
        dtype: Dtype::Bool,
        shape: vec![4],
        strides: vec![1],
    };
    unsafe {
        generic_filter_raw(
            &RawArray::from_slice(a.as_slice().unwrap(), &[4]).unwrap(),
            &out,
            &f,
            &o,
        )
        .unwrap()
    };
    assert_eq!(bytes, [44, 255, 0, 2]);
    let mut bools = ArrayD::<bool>::from_elem(IxDyn(&[4]), false);
    generic_filter_into(a.view(), bools.view_mut(), &f, &o).unwrap();
    assert_eq!(bools.as_slice().unwrap(), &[true, true, false, true]);
    // Inputs of every type convert to double; the output keeps the input's type.
    let b = ArrayD::from_shape_vec(IxDyn(&[3]), vec![true, false, true]).unwrap();
    let s = Filter::compile("np.sum(x)", &Bindings::new()).unwrap();
    assert_eq!(
        generic_filter(b.view(), &s, &Options::size(&[3]))
            .unwrap()
            .as_slice()
            .unwrap(),
        &[true, true, true]
    );
    let u = ArrayD::from_shape_vec(IxDyn(&[3]), vec![200u8, 100, 50]).unwrap();
    assert_eq!(
        generic_filter(u.view(), &s, &Options::size(&[3]))
            .unwrap()
            .as_slice()
            .unwrap(),
        &[(500 % 256) as u8, 94, 200]
    );
}

#[test]
fn zero_d_and_empty_inputs() {
    let f = Filter::compile("x[0] * 2", &Bindings::new()).unwrap();
    let a = ArrayD::from_elem(IxDyn(&[]), 5.0);
    assert_eq!(
        generic_filter(a.view(), &f, &Options::size(&[])).unwrap()[[]],
        10.0
    );
    let fp = Footprint::new(vec![], vec![true]).unwrap();
    assert_eq!(
        generic_filter(a.view(), &f, &Options::new(fp)).unwrap()[[]],
        10.0
    );
    // An empty footprint on a 0-d input: the filter sees no values.
    let n = Filter::compile("len(x) + 1.0", &Bindings::new()).unwrap();
    let fp = Footprint::new(vec![], vec![false]).unwrap();
    assert_eq!(
        generic_filter(a.view(), &n, &Options::new(fp)).unwrap()[[]],
        1.0
    );
    // Empty arrays call nothing, even a filter that always fails.
    let fails = Filter::compile("x[100]", &Bindings::new()).unwrap();
    let e = ArrayD::<f64>::zeros(IxDyn(&[0, 3]));
    assert_eq!(
        generic_filter(e.view(), &fails, &Options::size(&[5, 5]).origin(&[2, 2]))
            .unwrap()
            .shape(),
        &[0, 3]
    );
    // ... but a 0-d failure reports an empty position.
    match generic_filter(a.view(), &fails, &Options::size(&[])) {
        Err(DriverError::Filter { position, error }) => {
            assert!(position.is_empty());
            assert_eq!(error.exception, ndjit::Exception::IndexError);
        }
        r => panic!("{r:?}"),
    }
}

// -------------------------------------------------------------------------------------------------
// Errors

fn err_of(r: Result<ArrayD<f64>, DriverError>) -> String {
    let e = r.unwrap_err();
    format!("{}: {e}", e.python_type())
}

#[test]
fn every_validation_error_has_scipys_type_and_message() {
    let f = Filter::compile("np.sum(x)", &Bindings::new()).unwrap();
    let a = image(3, 4);
    let run = |o: Options| err_of(generic_filter(a.view(), &f, &o));
    assert_eq!(
        run(Options::size(&[3]).axes(&[2])),
        "ValueError: specified axis: 2 is out of range"
    );
    assert_eq!(
        run(Options::size(&[3, 3]).axes(&[0, 0])),
        "ValueError: axes must be unique"
    );
    assert_eq!(
        run(Options::size(&[3, 3, 3])),
        "RuntimeError: sequence argument must have length equal to input rank"
    );
    assert_eq!(
        run(Options::size(&[3, 3]).origin(&[1])),
        "RuntimeError: sequence argument must have length equal to input rank"
    );
    assert_eq!(
        run(Options::new(Footprint::from_fn(&[3], |_| true))),
        "RuntimeError: footprint.ndim (1) must match len(axes) (2)"
    );
    assert_eq!(
        run(Options::size(&[3, 0])),
        "RuntimeError: footprint.ndim (2) must match len(axes) (2)"
    );
    assert_eq!(
        run(Options::size(&[3, 3]).origin(&[0, 2])),
        "ValueError: invalid origin"
    );
    assert_eq!(
        run(Options::size(&[2, 3]).origin(&[-2, 0])),
        "ValueError: invalid origin"
    );
    assert_eq!(
        "wrap ".parse::<Mode>().unwrap_err().python_type(),
        "RuntimeError"
    );
    assert_eq!(
        Footprint::new(vec![3, 3], vec![true; 8])
            .unwrap_err()
            .python_type(),
        "ValueError"
    );
    assert_eq!(
        Dtype::from_kind('c', 16).unwrap_err().to_string(),
        "Complex type not supported"
    );
    assert_eq!(
        Dtype::from_kind('c', 16).unwrap_err().python_type(),
        "TypeError"
    );
    assert_eq!(
        Dtype::from_kind('f', 2).unwrap_err().python_type(),
        "RuntimeError"
    );
    // Output shape.
    let mut out = ArrayD::<f64>::zeros(IxDyn(&[4, 3]));
    let e = generic_filter_into(a.view(), out.view_mut(), &f, &Options::size(&[3, 3])).unwrap_err();
    assert_eq!(
        (e.python_type(), e.to_string().as_str()),
        ("RuntimeError", "output shape not correct")
    );
    let mut bools = ArrayD::<bool>::from_elem(IxDyn(&[4, 3]), false);
    assert!(matches!(
        generic_filter_into(a.view(), bools.view_mut(), &f, &Options::size(&[3, 3])),
        Err(DriverError::OutputShape { .. })
    ));
    // Malformed raw arrays.
    let data = [1.0f64; 4];
    let good = RawArray::from_slice(&data, &[4]).unwrap();
    let mut o = [0.0f64; 4];
    let out = RawArrayMut::from_slice(&mut o, &[4]).unwrap();
    let bad_strides = RawArray {
        strides: vec![],
        ..good.clone()
    };
    assert_eq!(
        unsafe { generic_filter_raw(&bad_strides, &out, &f, &Options::size(&[1])) }
            .unwrap_err()
            .python_type(),
        "ValueError"
    );
    let null = RawArray {
        ptr: std::ptr::null(),
        ..good.clone()
    };
    assert!(matches!(
        unsafe { generic_filter_raw(&null, &out, &f, &Options::size(&[1])) },
        Err(DriverError::BadArray(_))
    ));
    assert!(RawArray::from_slice(&data, &[3]).is_err());
}

#[test]
fn the_reported_failure_is_the_first_in_c_order_whatever_the_threads() {
    // Fails (IndexError) where the centre is at least 50, which happens in many places.
    let f = Filter::compile(
        "x[len(x) // 2] if x[len(x) // 2] < 50 else x[100]",
        &Bindings::new(),
    )
    .unwrap();
    let a = ArrayD::from_shape_fn(IxDyn(&[200, 300]), |i| {
        if (i[0] * 7 + i[1] * 13) % 1009 == 0 && i[0] > 60 {
            99.0
        } else {
            1.0
        }
    });
    let first = a.indexed_iter().find(|(_, &v)| v >= 50.0).unwrap().0;
    for threads in [1, 2, 4] {
        for engine in [
            Engine::Auto,
            Engine::Callback,
            Engine::Interpreter,
            Engine::Sequential,
        ] {
            match generic_filter(
                a.view(),
                &f,
                &Options::size(&[3, 3]).threads(threads).engine(engine),
            ) {
                Err(DriverError::Filter { error, position }) => {
                    assert_eq!(position, first.slice().to_vec(), "{engine:?} x{threads}");
                    assert_eq!(error.exception, ndjit::Exception::IndexError);
                    assert!(error.message.contains("out of bounds"), "{}", error.message);
                }
                r => panic!("{engine:?}: {:?}", r.map(|_| ())),
            }
        }
    }
    // A reduction of an empty footprint fails with NumPy's ValueError.
    let m = Filter::compile("max(x)", &Bindings::new()).unwrap();
    let e = generic_filter(
        a.view(),
        &m,
        &Options::new(Footprint::from_fn(&[3, 3], |_| false)),
    )
    .unwrap_err();
    assert_eq!(e.python_type(), "ValueError");
    assert_eq!(
        e.runtime_error().map(|r| r.exception),
        Some(ndjit::Exception::ValueError)
    );
}

// -------------------------------------------------------------------------------------------------
// In place, progress, cancellation

#[test]
fn an_output_overlapping_the_input_sees_earlier_results_as_in_scipy() {
    // scipy 1.17: b = arange(10.); generic_filter(b, lambda x: x.sum(), size=3, output=b)
    // leaves b = [1, 4, 9, 16, 25, 36, 49, 64, 81, 99].
    let f = Filter::compile("x.sum()", &Bindings::new()).unwrap();
    let mut b: Vec<f64> = (0..10).map(f64::from).collect();
    let out = RawArrayMut::from_slice(&mut b, &[10]).unwrap();
    let inp = RawArray {
        ptr: out.ptr,
        dtype: out.dtype,
        shape: out.shape.clone(),
        strides: out.strides.clone(),
    };
    unsafe { generic_filter_raw(&inp, &out, &f, &Options::size(&[3])).unwrap() };
    assert_eq!(b, vec![1., 4., 9., 16., 25., 36., 49., 64., 81., 99.]);
}

/// `a[:-1]` and `a[1:]` of `a` as a 4×5 array of doubles: each output row overlaps the next
/// input row.
fn first_rows_and_rows_below(a: &mut [f64]) -> (RawArray, RawArrayMut) {
    let whole = RawArrayMut::from_slice(a, &[4, 5]).unwrap();
    let input = RawArray {
        ptr: whole.ptr,
        dtype: whole.dtype,
        shape: vec![3, 5],
        strides: whole.strides.clone(),
    };
    let output = RawArrayMut {
        ptr: whole.ptr.wrapping_add(40),
        shape: vec![3, 5],
        ..whole
    };
    (input, output)
}

#[test]
fn a_1d_output_overlapping_the_input_runs_scipys_batches_with_progress_and_cancel() {
    use ndjit::Sig;
    // scipy 1.17: a = arange(20.).reshape(4, 5); generic_filter1d(a[:-1], f, 3, axis=1,
    // output=a[1:]) with f writing iline[:-2] + iline[2:]: its three rows are one batch, read
    // before any is written (a row at a time, each reading the row written before it, gives
    // other values).
    let f = Filter::builder("def f(i, o):\n    o[...] = i[:-2] + i[2:]\n")
        .signature(Sig::Filter1d)
        .compile()
        .unwrap();
    let mut a: Vec<f64> = (0..20).map(f64::from).collect();
    let (input, output) = first_rows_and_rows_below(&mut a);
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    let mut o = Options::filter1d(3, -1);
    o.progress = Some(Arc::new(move |done, total| {
        assert_eq!((done, total), (15, 15));
        c.fetch_add(1, Ordering::Relaxed);
    }));
    unsafe { generic_filter_raw(&input, &output, &f, &o) }.unwrap();
    let want: Vec<f64> = vec![
        0., 1., 2., 3., 4., 1., 2., 4., 6., 7., 11., 12., 14., 16., 17., 21., 22., 24., 26., 27.,
    ];
    assert_eq!(a, want);
    assert_eq!(calls.load(Ordering::Relaxed), 1);
    o.progress = None;
    o.cancel = Some(Arc::new(AtomicBool::new(true)));
    let e = unsafe { generic_filter_raw(&input, &output, &f, &o) }.unwrap_err();
    assert!(matches!(e, DriverError::Cancelled));
}

#[test]
fn progress_is_reported_and_runs_can_be_cancelled() {
    let f = Filter::compile("np.median(x)", &Bindings::new()).unwrap();
    let a = image(400, 400);
    let calls = Arc::new(AtomicUsize::new(0));
    let last = Arc::new(AtomicUsize::new(0));
    let (c, l) = (calls.clone(), last.clone());
    let opts = Options::size(&[3, 3])
        .threads(2)
        .progress(move |done, total| {
            assert_eq!(total, 160_000);
            c.fetch_add(1, Ordering::Relaxed);
            l.fetch_max(done, Ordering::Relaxed);
        });
    generic_filter(a.view(), &f, &opts).unwrap();
    assert!(calls.load(Ordering::Relaxed) >= 10);
    assert_eq!(last.load(Ordering::Relaxed), 160_000);
    let cancel = Arc::new(AtomicBool::new(true));
    let mut o = Options::size(&[3, 3]);
    o.cancel = Some(cancel);
    let e = generic_filter(a.view(), &f, &o).unwrap_err();
    assert!(matches!(e, DriverError::Cancelled));
    assert_eq!(e.python_type(), "KeyboardInterrupt");
}

#[test]
fn bound_values_reach_the_row_kernel() {
    let mut b = Bindings::new();
    b.set_array("w", vec![1.0, 2.0, 1.0, 2.0, 4.0, 2.0, 1.0, 2.0, 1.0]);
    b.set_float("scale", 0.0625);
    let f = Filter::compile("np.sum(x * w) * scale", &b).unwrap();
    let a = image(50, 60);
    let o = Options::size(&[3, 3]);
    let fast = generic_filter(a.view(), &f, &o).unwrap();
    let slow = generic_filter(a.view(), &f, &o.clone().engine(Engine::Interpreter)).unwrap();
    assert_same(&fast, &slow);
    // A weight array of the wrong length fails at run time, as the callback would.
    let mut short = Bindings::new();
    short.set_array("w", vec![1.0, 2.0]);
    short.set_float("scale", 1.0);
    let g = Filter::compile("np.sum(x * w) * scale", &short).unwrap();
    assert_eq!(
        generic_filter(a.view(), &g, &o).unwrap_err().python_type(),
        "ValueError"
    );
    // The compiled code the driver keeps between runs is keyed by the values too: the same source
    // with other values (compiled anew, or rebound) gives their results.
    let k = |v: f64| {
        let mut b = Bindings::new();
        b.set_float("k", v);
        b
    };
    let two = Filter::compile("np.median(x) * k", &k(2.0)).unwrap();
    let three = Filter::compile("np.median(x) * k", &k(3.0)).unwrap();
    let rebound = two.with_bindings(&k(5.0)).unwrap();
    let m = generic_filter(
        a.view(),
        &Filter::compile("np.median(x)", &Bindings::new()).unwrap(),
        &o,
    )
    .unwrap();
    for (f, scale) in [(&two, 2.0), (&three, 3.0), (&rebound, 5.0), (&two, 2.0)] {
        assert_same(
            &generic_filter(a.view(), f, &o).unwrap(),
            &m.mapv(|v| v * scale),
        );
    }
}

// -------------------------------------------------------------------------------------------------
// generic_filter1d

mod filter1d {
    use super::*;
    use ndjit::interp::Args;
    use ndjit::Sig;

    /// The arguments of `generic_filter1d`, for the reference and for the driver's options.
    #[derive(Clone, Copy)]
    struct Line {
        size: usize,
        axis: isize,
        origin: isize,
        mode: Mode,
        cval: f64,
    }

    impl Line {
        fn new(size: usize, origin: isize) -> Line {
            Line {
                size,
                axis: -1,
                origin,
                mode: Mode::Reflect,
                cval: 0.0,
            }
        }

        fn options(&self) -> Options {
            Options::filter1d(self.size, self.axis)
                .origin(&[self.origin])
                .mode(self.mode)
                .cval(self.cval)
        }
    }

    /// `generic_filter1d` through the driver.
    fn run1d(
        input: &RawArray,
        output: &RawArrayMut,
        f: &Filter,
        opts: &Options,
    ) -> Result<(), DriverError> {
        // SAFETY: the tests' arrays are valid for their shapes and strides.
        unsafe { generic_filter_raw(input, output, f, opts) }
    }

    fn compile1d(src: &str) -> Filter {
        Filter::builder(src)
            .signature(Sig::Filter1d)
            .compile()
            .unwrap()
    }

    /// scipy's loop: each line extended by literal reflections, the callback, the cast.
    fn reference(
        input: &Buf,
        out_dtype: Dtype,
        f: &Filter,
        o: &Line,
    ) -> Result<Vec<u8>, Vec<usize>> {
        let ndim = input.shape.len();
        let axis = if o.axis < 0 {
            (o.axis + ndim as isize) as usize
        } else {
            o.axis as usize
        };
        let n = input.shape[axis];
        let before = (o.size / 2) as i64 + o.origin as i64;
        let mut out = c_buf(out_dtype, &input.shape);
        for idx in indices(&input.shape) {
            if idx[axis] != 0 {
                continue;
            }
            let ext: Vec<f64> = (0..(n + o.size - 1) as i64)
                .map(|t| match reference_index(o.mode, t - before, n as i64) {
                    Some(i) => {
                        let mut at = idx.clone();
                        at[axis] = i as usize;
                        input.get(&at)
                    }
                    None => o.cval,
                })
                .collect();
            let mut line = vec![0.0; n];
            if f.call_args(Args {
                values: &ext,
                coords: &[],
                output: &mut line,
            })
            .is_err()
            {
                return Err(idx);
            }
            for (i, v) in line.into_iter().enumerate() {
                let mut at = idx.clone();
                at[axis] = i;
                out.set(&at, v);
            }
        }
        Ok(out.bytes())
    }

    #[test]
    fn random_lines_match_the_reference() {
        let f = compile1d("def f(a, o):\n    for i in range(len(o)):\n        o[i] = a[i] * 10 + a[i + len(a) - len(o)] - a[len(a) // 2]");
        let mut rng = Rng(0xA076_1D64_78BD_642F);
        for case in 0..400 {
            let ndim = 1 + rng.below(3);
            let shape: Vec<usize> = (0..ndim)
                .map(|_| if rng.chance(0.1) { 1 } else { 1 + rng.below(9) })
                .collect();
            let din = Dtype::ALL[rng.below(11)];
            let dout = if rng.chance(0.5) {
                din
            } else {
                Dtype::ALL[rng.below(11)]
            };
            let input = random_array(&mut rng, din, &shape);
            let mut output = random_array(&mut rng, dout, &shape);
            let size = 1 + rng.below(6);
            let o = Line {
                axis: rng.below(ndim) as isize - if rng.chance(0.5) { ndim as isize } else { 0 },
                mode: Mode::ALL[rng.below(8)],
                cval: [0.0, -2.5, 300.0][rng.below(3)],
                ..Line::new(size, rng.below(size) as isize - (size / 2) as isize)
            };
            // Every CPU engine: the interpreter's lines and scipy's batches are the native
            // lines' results too.
            let engine = [
                Engine::Auto,
                Engine::Callback,
                Engine::Interpreter,
                Engine::Sequential,
            ][case % 4];
            let opts = o.options().threads(1 + rng.below(2)).engine(engine);
            let want = reference(&input, dout, &f, &o).unwrap();
            run1d(&input.raw(), &output.raw_mut(), &f, &opts).unwrap();
            assert_eq!(
                output.bytes(),
                want,
                "case {case}: {din}->{dout} {shape:?} size {size} axis {} origin {} {} {engine:?}",
                o.axis,
                o.origin,
                o.mode
            );
        }
    }

    #[test]
    fn filter_sizes_too_large_for_memory_are_memory_errors() {
        // The extended line of 2^62 + 4 values once aborted the process.
        let copy = compile1d("def f(a, o):\n    o[...] = a[:len(o)]");
        let data: Vec<f64> = (0..5).map(f64::from).collect();
        let input = RawArray::from_slice(&data, &[5]).unwrap();
        let mut out = vec![0.0; 5];
        let output = RawArrayMut::from_slice(&mut out, &[5]).unwrap();
        let run = |size: usize| {
            let e = run1d(&input, &output, &copy, &Options::filter1d(size, -1)).unwrap_err();
            format!("{}: {e}", e.python_type())
        };
        assert_eq!(
            run(1 << 62),
            "MemoryError: unable to allocate the extended input line (more than 2^64 bytes)"
        );
        // The extended length itself overflows.
        assert_eq!(
            run(usize::MAX),
            format!(
                "ValueError: a line of 5 values extended by a filter of size {} is too long",
                usize::MAX
            )
        );
    }

    /// An executor that computes nothing and counts its runs; it takes the defaults of the
    /// trait (no regions, no generic_filter1d).
    struct Counting(AtomicUsize);

    impl driver::Executor for Counting {
        type Error = DriverError;

        unsafe fn execute(&self, _: &driver::Resolved<'_>) -> Result<(), DriverError> {
            self.0.fetch_add(1, Ordering::Relaxed);
            Ok(())
        }
    }

    #[test]
    fn the_driver_validates_a_1d_run_before_any_executor_sees_it() {
        let copy = compile1d("def f(a, o):\n    o[...] = a[:len(o)]");
        let data: Vec<f64> = (0..6).map(f64::from).collect();
        let input = RawArray::from_slice(&data, &[2, 3]).unwrap();
        let mut out = vec![0.0; 6];
        let output = RawArrayMut::from_slice(&mut out, &[2, 3]).unwrap();
        let err = |opts: &Options| {
            let e = run1d(&input, &output, &copy, opts).unwrap_err();
            format!("{}: {e}", e.python_type())
        };
        // Options that are not generic_filter1d's arguments.
        let two_axes = Options {
            axes: Some(vec![0, 1]),
            ..Options::filter1d(3, 0)
        };
        let footprint = Options {
            footprint: Footprint::new(vec![3], vec![true, false, true]).unwrap(),
            ..Options::filter1d(3, 0)
        };
        assert_eq!(
            err(&two_axes),
            "ValueError: generic_filter1d takes one axis (Options::filter1d)"
        );
        assert_eq!(
            err(&footprint),
            "ValueError: generic_filter1d takes a filter_size, not a footprint (Options::filter1d)"
        );
        assert_eq!(
            err(&Options::filter1d(3, 0).origin(&[0, 0])),
            "RuntimeError: sequence argument must have length equal to input rank"
        );
        assert_eq!(
            err(&Options::filter1d(3, 0).region(&[0..1, 0..3])),
            "ValueError: generic_filter1d computes whole lines, not a region"
        );
        // An executor that runs only generic_filter is refused a 1-D run, and never called.
        let counting = Counting(AtomicUsize::new(0));
        let opts = Options::filter1d(3, 0);
        let e = unsafe { driver::execute(&counting, &input, &output, &copy, &opts) }.unwrap_err();
        assert_eq!(
            e.to_string(),
            "this executor runs generic_filter, not generic_filter1d"
        );
        let nd = Filter::compile("np.mean(x)", &Bindings::new()).unwrap();
        unsafe { driver::execute(&counting, &input, &output, &nd, &Options::size(&[3, 3])) }
            .unwrap();
        assert_eq!(counting.0.load(Ordering::Relaxed), 1);
        // As scipy: an empty input takes any filter_size (no line is extended), and calls nothing.
        let none: [f64; 0] = [];
        let empty = RawArray::from_slice(&none, &[0, 5]).unwrap();
        let mut none_out: [f64; 0] = [];
        let empty_out = RawArrayMut::from_slice(&mut none_out, &[0, 5]).unwrap();
        for size in [1 << 40, usize::MAX] {
            run1d(&empty, &empty_out, &copy, &Options::filter1d(size, -1)).unwrap();
        }
    }

    #[test]
    fn every_engine_runs_scipys_batches_on_an_overlapping_output() {
        // As `a_1d_output_overlapping_the_input_runs_scipys_batches_with_progress_and_cancel`,
        // through each engine: the interpreter's lines too are read a batch before any is
        // written.
        let f = compile1d("def f(i, o):\n    o[...] = i[:-2] + i[2:]\n");
        for engine in [
            Engine::Auto,
            Engine::Callback,
            Engine::Interpreter,
            Engine::Sequential,
        ] {
            let mut a: Vec<f64> = (0..20).map(f64::from).collect();
            let (input, output) = first_rows_and_rows_below(&mut a);
            run1d(
                &input,
                &output,
                &f,
                &Options::filter1d(3, -1).engine(engine),
            )
            .unwrap();
            let want: Vec<f64> = vec![
                0., 1., 2., 3., 4., 1., 2., 4., 6., 7., 11., 12., 14., 16., 17., 21., 22., 24.,
                26., 27.,
            ];
            assert_eq!(a, want, "{engine:?}");
        }
        // The interpreter engine runs no native code: a filter built without it stays so.
        let lazy = Filter::builder("def f(i, o):\n    o[...] = i[:-2] * 2.0\n")
            .signature(Sig::Filter1d)
            .native_code(false)
            .compile()
            .unwrap();
        let data: Vec<f64> = (0..10).map(f64::from).collect();
        let mut out = vec![0.0; 10];
        let (input, output) = (
            RawArray::from_slice(&data, &[2, 5]).unwrap(),
            RawArrayMut::from_slice(&mut out, &[2, 5]).unwrap(),
        );
        let interpret = Options::filter1d(3, -1).engine(Engine::Interpreter);
        run1d(&input, &output, &lazy, &interpret).unwrap();
        assert!(!lazy.has_native_code());
        assert_eq!(out, [0., 0., 2., 4., 6., 10., 10., 12., 14., 16.]);
        run1d(&input, &output, &lazy, &Options::filter1d(3, -1)).unwrap();
        assert!(lazy.has_native_code());
    }

    #[test]
    fn scipy_examples_and_errors() {
        // scipy 1.17: generic_filter1d(arange(5.), copy-the-start, 4, origin=-1) == [0, 0, 1, 2, 3];
        // with origin=-2 the callback sees [0, 1, 2, 3, 4, 4, 3, 2].
        let copy = compile1d("def f(a, o):\n    o[...] = a[:len(o)]");
        let data: Vec<f64> = (0..5).map(f64::from).collect();
        let input = RawArray::from_slice(&data, &[5]).unwrap();
        let mut out = vec![0.0; 5];
        let o = |size: usize, origin: isize| Line::new(size, origin).options();
        run1d(
            &input,
            &RawArrayMut::from_slice(&mut out, &[5]).unwrap(),
            &copy,
            &o(4, -1),
        )
        .unwrap();
        assert_eq!(out, vec![0.0, 0.0, 1.0, 2.0, 3.0]);
        let tail = compile1d("def f(a, o):\n    o[...] = a[len(a) - len(o):]");
        run1d(
            &input,
            &RawArrayMut::from_slice(&mut out, &[5]).unwrap(),
            &tail,
            &o(4, -2),
        )
        .unwrap();
        assert_eq!(out, vec![3.0, 4.0, 4.0, 3.0, 2.0]);
        let run = |f: &Filter, opts: &Options, shape: &[usize]| {
            let mut out = [0.0; 5];
            let e = run1d(
                &input,
                &RawArrayMut::from_slice(&mut out[..shape.iter().product()], shape).unwrap(),
                f,
                opts,
            )
            .unwrap_err();
            format!("{}: {e}", e.python_type())
        };
        assert_eq!(
            run(&copy, &o(0, 0), &[5]),
            "RuntimeError: invalid filter size"
        );
        assert_eq!(
            run(&copy, &Options::filter1d(3, 1), &[5]),
            "AxisError: axis 1 is out of bounds for array of dimension 1"
        );
        assert_eq!(run(&copy, &o(3, 2), &[5]), "ValueError: invalid origin");
        assert_eq!(
            run(&copy, &o(3, 0), &[4]),
            "RuntimeError: output shape not correct"
        );
        let nd = Filter::compile("np.mean(x)", &Bindings::new()).unwrap();
        assert!(run(&nd, &o(3, 0), &[5])
            .starts_with("ValueError: the filter was compiled for the signature"));
        // ... and a 1-D callback given to generic_filter.
        let e = generic_filter(
            ArrayD::from_elem(IxDyn(&[3]), 1.0).view(),
            &copy,
            &Options::size(&[3]),
        )
        .unwrap_err();
        assert!(matches!(e, DriverError::WrongSignature { .. }));
        // The first failing line in C order, whatever the threads.
        let picky = compile1d("def f(a, o):\n    o[...] = a[1:len(o) + 1]\n    if a[1] > 40:\n        o[len(o)] = 0.0");
        let big: Vec<f64> = (0..60 * 50)
            .map(|i| {
                if i / 50 >= 17 && (i / 50) % 5 == 2 {
                    41.0
                } else {
                    1.0
                }
            })
            .collect();
        let mut out = vec![0.0; 60 * 50];
        for threads in [1, 2, 3] {
            let opts = o(3, 0).threads(threads);
            match run1d(
                &RawArray::from_slice(&big, &[60, 50]).unwrap(),
                &RawArrayMut::from_slice(&mut out, &[60, 50]).unwrap(),
                &picky,
                &opts,
            ) {
                Err(DriverError::Filter { error, position }) => {
                    assert_eq!(position, vec![17, 0]);
                    assert_eq!(error.exception, ndjit::Exception::IndexError);
                }
                r => panic!("{r:?}"),
            }
        }
    }
}

#[test]
fn a_region_runs_the_filter_on_its_box_only() {
    // The Dask face filters a block holding a halo it gathered itself: the halo's windows, which
    // the whole array does not have, must never reach the filter (here they raise IndexError).
    let a = ArrayD::from_shape_fn(IxDyn(&[7, 9]), |i| match (i[0], i[1]) {
        (0, 0) | (6, 8) | (1, 2) => 99.0,
        (r, c) => ((r * 31 + c * 17) % 11) as f64,
    });
    let raising =
        Filter::compile("x[4] * 2.0 if x[4] != 99.0 else x[100]", &Bindings::new()).unwrap();
    let plain = Filter::compile("x[4] * 2.0 if x[4] != 99.0 else -5.0", &Bindings::new()).unwrap();
    let region = [2..5, 3..8];
    let whole = generic_filter(a.view(), &plain, &Options::size(&[3, 3])).unwrap();
    assert!(generic_filter(a.view(), &raising, &Options::size(&[3, 3])).is_err());
    for engine in [
        Engine::Auto,
        Engine::Callback,
        Engine::Interpreter,
        Engine::Sequential,
    ] {
        let mut out = ArrayD::from_elem(IxDyn(&[7, 9]), -1.0);
        let opts = Options::size(&[3, 3]).engine(engine).region(&region);
        generic_filter_into(a.view(), out.view_mut(), &raising, &opts)
            .unwrap_or_else(|e| panic!("{engine:?}: {e}"));
        for ((r, c), (&got, &want)) in (0..7)
            .flat_map(|r| (0..9).map(move |c| (r, c)))
            .zip(out.iter().zip(whole.iter()))
        {
            let inside = region[0].contains(&r) && region[1].contains(&c);
            assert_eq!(
                got,
                if inside { want } else { -1.0 },
                "{engine:?} at ({r}, {c})"
            );
        }
    }
    // A rank statistic with NaN to patch: the region's pixels as the whole run's.
    let mut nan = a.clone();
    nan[[3, 4]] = f64::NAN;
    let median = Filter::compile("np.median(x)", &Bindings::new()).unwrap();
    let whole = generic_filter(nan.view(), &median, &Options::size(&[3, 3])).unwrap();
    let mut out = ArrayD::<f64>::from_elem(IxDyn(&[7, 9]), -1.0);
    let opts = Options::size(&[3, 3]).region(&region);
    generic_filter_into(nan.view(), out.view_mut(), &median, &opts).unwrap();
    for r in region[0].clone() {
        for c in region[1].clone() {
            assert_eq!(out[[r, c]].to_bits(), whole[[r, c]].to_bits(), "({r}, {c})");
        }
    }
    // A box outside the input is the caller's error.
    // Past the first axis's end; one axis of two; a start past its end (built so that it
    // does not read as a literal empty range).
    let (four, two) = (4, 2);
    let one_axis: Vec<std::ops::Range<usize>> = std::iter::once(2..5).collect();
    for bad in [vec![2..8, 3..8], one_axis, vec![four..two, 0..1]] {
        let mut out = ArrayD::from_elem(IxDyn(&[7, 9]), -1.0);
        let opts = Options::size(&[3, 3]).region(&bad);
        let e = generic_filter_into(a.view(), out.view_mut(), &plain, &opts).unwrap_err();
        assert!(
            matches!(e, DriverError::BadArray(ref m) if m.contains("not a box inside")),
            "{e}"
        );
    }
}
