//! Box minima and maxima as one pass per axis (`codegen::separable`), run by the emulator (the
//! very kernels the device would load) against the CPU's general engine, bit for bit: every
//! dtype in and out, every mode, origins, 1 to 3 axes, `axes=`, cval cases, and float data with
//! NaN and `-0.0`, whose windows the general kernel patches.

mod common;

use common::{forced, run, Inputs, Launch, ALL, MODES};
use ndjit::driver::{Dtype, Footprint, Mode, Options};
use ndjit_gpu::codegen::separable::{Joint, Strip};
use ndjit_gpu::emulate::Emulator;
use ndjit_gpu::{GpuFilter, Target, Tuning};

/// Outputs per thread along each pass's axis, how the column and row passes join, the grid's
/// rows of blocks and the multiprocessors the launch fills, that the checks run with: one
/// output, a few (leaving remainders at the ends of the axes) and the automatic choice, each
/// with a kernel per pass; tiles of one row per thread, of a few (remainders at the ends of the
/// columns) and the automatic tile; strips of 1, 2, 3 (taken as 2) and 4 lanes whose runs of
/// rows end inside the image (remainders of steps, segments and runs); with the grid's rows of
/// blocks as the launch gives them, or capped at 2 so that each block loops over several rows
/// of the image. Launched as on an H100, whose multiprocessors shorten the runs of a strip on
/// these small images to the fewest rows ([`Strip::run`]), or on a device of unknown size (0),
/// where the automatic strip and the strip of 64 rows keep their own runs.
const TUNINGS: [(u32, Joint, u32, u32); 15] = [
    (1, Joint::Kernels, 65535, H100),
    (3, Joint::Kernels, 2, H100),
    (0, Joint::Kernels, 65535, H100),
    (1, Joint::Tile(1), 65535, H100),
    (3, Joint::Tile(5), 65535, H100),
    (0, Joint::Auto, 65535, H100),
    (0, Joint::Auto, 2, H100),
    (0, Joint::Auto, 65535, 0),
    (0, strip(1, 3, 1), 65535, H100),
    (0, strip(2, 7, 2), 2, H100),
    (0, strip(3, 5, 3), 65535, H100),
    (0, strip(4, 64, 4), 65535, H100),
    (0, strip(4, 64, 4), 2, 0),
    // Groups of row extremes wider than the lanes: a row taken by fewer threads than 32.
    (0, strip(1, 5, 8), 65535, H100),
    (0, strip(2, 6, 64), 2, H100),
];

const H100: u32 = ndjit_gpu::emulate::H100_MULTIPROCESSORS;

const fn strip(lanes: u32, rows: u32, group: u32) -> Joint {
    Joint::Strip(Strip { lanes, rows, group })
}

/// Whether the passes serve these arguments (the module `inspect_ptx` would show).
fn planned(gpu: &GpuFilter, opts: &Options, rank: usize, dts: (Dtype, Dtype)) -> bool {
    let ptx = gpu
        .ptx_tuned(opts, rank, dts, Target::SM90, forced(true))
        .expect("generates");
    ptx.contains("ndjit_pass0")
}

/// The emulated passes under every tuning of [`TUNINGS`] against the CPU's general engine
/// ([`common::agree_with_cpu`]); returns whether both refused a choice between zeros.
fn agree(source: &str, data: &[u8], shape: &[usize], dts: (Dtype, Dtype), opts: &Options) -> bool {
    let gpu = GpuFilter::compile(source, &ndjit::Bindings::new()).expect("compiles");
    assert!(
        planned(&gpu, opts, shape.len(), dts),
        "{source} {dts:?} {opts:?}: not planned as passes"
    );
    let runs: Vec<Launch> = TUNINGS
        .iter()
        .map(|&(outputs, joint, grid_rows, multiprocessors)| Launch {
            tuning: Tuning {
                pass_outputs: outputs,
                joint,
                ..forced(true)
            },
            grid_rows,
            multiprocessors,
        })
        .collect();
    common::agree_with_cpu(&gpu, (data, shape), dts, opts, &runs)
}

/// Values of `dt` without NaN or `-0.0` (floats: small integers and halves, with ties).
fn clean(n: usize, dt: Dtype, seed: u64) -> Vec<u8> {
    let mut inputs = Inputs::new(seed);
    match dt {
        Dtype::F64 => (0..n)
            .flat_map(|_| ((inputs.next() % 41) as f64 * 0.5 - 10.0).to_le_bytes())
            .collect(),
        Dtype::F32 => (0..n)
            .flat_map(|_| ((inputs.next() % 41) as f32 * 0.5 - 10.0).to_le_bytes())
            .collect(),
        _ => inputs.bytes(n, dt),
    }
}

fn boxed(size: &[usize]) -> Options {
    Options::new(Footprint::from_size(size))
}

#[test]
fn every_dtype_in_and_out() {
    let shape = [6, 7];
    for (i, &dt) in ALL.iter().enumerate() {
        let data = clean(42, dt, i as u64 + 1);
        for out in [dt, Dtype::F64, Dtype::U8, Dtype::I16] {
            for source in ["np.min(x)", "max(x)", "max(x) - min(x)"] {
                agree(source, &data, &shape, (dt, out), &boxed(&[3, 3]));
            }
        }
    }
}

#[test]
fn every_mode_with_origins_and_even_sizes() {
    let shape = [5, 9];
    for (i, &dt) in [Dtype::F64, Dtype::I16, Dtype::U8].iter().enumerate() {
        let data = clean(45, dt, 10 + i as u64);
        for mode in MODES {
            for (size, origin) in [
                (vec![3, 3], vec![0, 0]),
                (vec![2, 4], vec![0, -1]),
                (vec![4, 5], vec![1, 2]),
                (vec![1, 6], vec![0, -3]),
                (vec![7, 2], vec![-3, 0]),
            ] {
                let opts = Options {
                    mode,
                    cval: 3.0,
                    origin,
                    ..boxed(&size)
                };
                agree("np.max(x)", &data, &shape, (dt, dt), &opts);
                agree(
                    "np.max(x) - np.min(x)",
                    &data,
                    &shape,
                    (dt, Dtype::F64),
                    &opts,
                );
            }
        }
    }
}

#[test]
fn one_and_three_axes_and_axes_argument() {
    let data = clean(60, Dtype::F32, 7);
    agree(
        "np.min(x)",
        &data,
        &[60],
        (Dtype::F32, Dtype::F32),
        &boxed(&[5]),
    );
    agree(
        "np.min(x)",
        &data,
        &[3, 4, 5],
        (Dtype::F32, Dtype::F64),
        &boxed(&[3, 2, 3]),
    );
    let opts = Options {
        axes: Some(vec![0, -1]),
        mode: Mode::Wrap,
        ..boxed(&[3, 2])
    };
    agree("max(x)", &data, &[3, 4, 5], (Dtype::F32, Dtype::F32), &opts);
    // Windows longer than a thread unrolls (a loop per output), with a NaN and a -0.0.
    // Distinct values, so that every value read can decide an extreme.
    let mut long: Vec<u8> = (0..300u64)
        .flat_map(|i| (((i * 7919) % 1009) as f64).to_le_bytes())
        .collect();
    long[100 * 8..101 * 8].copy_from_slice(&f64::NAN.to_le_bytes());
    long[200 * 8..201 * 8].copy_from_slice(&(-0.0f64).to_le_bytes());
    for source in ["np.min(x)", "max(x)", "max(x) - min(x)"] {
        agree(
            source,
            &long,
            &[300],
            (Dtype::F64, Dtype::F64),
            &boxed(&[61]),
        );
        agree(
            source,
            &long,
            &[5, 60],
            (Dtype::F64, Dtype::F32),
            &boxed(&[2, 59]),
        );
    }
    // A window wider than the image.
    agree(
        "np.max(x)",
        &data[..4 * 5 * 4],
        &[4, 5],
        (Dtype::F32, Dtype::F32),
        &boxed(&[9, 11]),
    );
}

#[test]
fn rows_read_in_vector_chunks_where_aligned_and_elementwise_where_not() {
    // 16-byte loads along rows whose start is aligned (40 float32: every row; 37: some rows),
    // with NaN and -0.0 among the values, for 4-byte and 8-byte types.
    for (i, dt) in [Dtype::F32, Dtype::F64, Dtype::I32, Dtype::U32]
        .into_iter()
        .enumerate()
    {
        for w in [40, 37] {
            let n = 6 * w;
            let mut data = clean(n, dt, 50 + i as u64);
            if dt == Dtype::F32 {
                data[4 * 50..4 * 51].copy_from_slice(&f32::NAN.to_le_bytes());
                data[4 * 90..4 * 91].copy_from_slice(&(-0.0f32).to_le_bytes());
            }
            for size in [[3, 3], [1, 5], [2, 9]] {
                agree("np.min(x)", &data, &[6, w], (dt, dt), &boxed(&size));
                agree("max(x)", &data, &[6, w], (dt, Dtype::F64), &boxed(&size));
                agree("max(x) - min(x)", &data, &[6, w], (dt, dt), &boxed(&size));
            }
        }
    }
}

#[test]
fn constant_values_of_the_type_run_as_passes_and_others_do_not() {
    let data = clean(30, Dtype::I8, 3);
    for cval in [-128.0, 127.0, 0.0, 5.0] {
        let opts = Options {
            mode: Mode::Constant,
            cval,
            ..boxed(&[3, 3])
        };
        agree("np.min(x)", &data, &[5, 6], (Dtype::I8, Dtype::F64), &opts);
    }
    // Past the top of the 64-bit integers: the largest integer, whose double cval is.
    for (dt, cval) in [
        (Dtype::I64, 9.223_372_036_854_776e18),
        (Dtype::U64, 1.8446744073709552e19),
    ] {
        let data = clean(30, dt, 4);
        for source in ["np.min(x)", "np.max(x)"] {
            let opts = Options {
                mode: Mode::Constant,
                cval,
                ..boxed(&[3, 3])
            };
            agree(source, &data, &[5, 6], (dt, Dtype::F64), &opts);
            agree(source, &data, &[5, 6], (dt, dt), &opts);
        }
    }
    let gpu = GpuFilter::compile("np.min(x)", &ndjit::Bindings::new()).unwrap();
    for (dt, cval) in [
        (Dtype::I8, 200.0),
        (Dtype::I8, 0.5),
        (Dtype::I8, -0.0),
        (Dtype::F64, f64::NAN),
        (Dtype::F64, -0.0),
        (Dtype::F32, 0.1),
    ] {
        let opts = Options {
            mode: Mode::Constant,
            cval,
            ..boxed(&[3, 3])
        };
        assert!(!planned(&gpu, &opts, 2, (dt, dt)), "{dt:?} cval {cval}");
    }
}

#[test]
fn nan_and_negative_zero_windows_are_patched_by_the_filters_own_code() {
    // Python's `min` keeps a NaN only when it comes first, NumPy's propagates it, and which of
    // two zeros a minimum returns depends on their places: each form is the general kernel's.
    let shape = [7, 8];
    for (i, dt) in [Dtype::F64, Dtype::F32].into_iter().enumerate() {
        // Sparse specials: most windows clean, some with one NaN or -0.0 (or both).
        let mut data = clean(56, dt, 20 + i as u64);
        let size = dt.itemsize();
        for (at, v) in [
            (9, f64::NAN),
            (30, -0.0),
            (31, 0.0),
            (45, -0.0),
            (46, f64::NAN),
        ] {
            let b = match dt {
                Dtype::F64 => v.to_le_bytes().to_vec(),
                _ => (v as f32).to_le_bytes().to_vec(),
            };
            data[at * size..(at + 1) * size].copy_from_slice(&b);
        }
        for source in [
            "np.min(x)",
            "min(x)",
            "np.max(x)",
            "max(x)",
            "def f(x):\n    m = x[0]\n    for v in x:\n        if v < m:\n            m = v\n    return m",
            "max(x) - min(x)",
            "np.max(x) - np.min(x)",
        ] {
            agree(source, &data, &shape, (dt, dt), &boxed(&[3, 3]));
            agree(source, &data, &shape, (dt, Dtype::I32), &boxed(&[2, 3]));
        }
        // Every value awkward: NaN, infinities, zeros of both signs, subnormals.
        let wild = Inputs::new(40 + i as u64).bytes(56, dt);
        agree("min(x)", &wild, &shape, (dt, dt), &boxed(&[3, 3]));
        agree("np.max(x)", &wild, &shape, (dt, dt), &boxed(&[3, 3]));
    }
}

/// How many thread positions of the patch kernel the emulated passes flag for `source` on
/// `data` (f64 or f32, shape `shape`, a 3-wide box on every axis), the result checked against
/// the CPU as [`agree`] does.
fn flagged(source: &str, data: &[f64], shape: &[usize], dt: Dtype) -> usize {
    let bytes: Vec<u8> = match dt {
        Dtype::F64 => data.iter().flat_map(|v| v.to_le_bytes()).collect(),
        _ => data
            .iter()
            .flat_map(|&v| (v as f32).to_le_bytes())
            .collect(),
    };
    let opts = boxed(&vec![3; shape.len()]);
    agree(source, &bytes, shape, (dt, dt), &opts);
    let gpu = GpuFilter::compile(source, &ndjit::Bindings::new()).expect("compiles");
    let emu = Emulator {
        tuning: forced(true),
        ..Emulator::new(&gpu)
    };
    run(&emu, gpu.filter(), (&bytes, dt), shape, dt, &opts).expect("runs");
    emu.flagged.load(std::sync::atomic::Ordering::Relaxed)
}

#[test]
fn nan_windows_of_numpys_forms_are_the_passes_own() {
    // NumPy's extremes are NaN wherever a window holds one: the passes carry that NaN to the
    // output, and only `-0.0` (whose place decides the result) sends windows to the patch.
    // Python's `min` keeps a NaN only when it comes first: its NaN windows are patched. On 3
    // axes the middle pass reads both kinds of NaN back from scratch.
    for (dt, shape) in [(Dtype::F64, vec![9, 10]), (Dtype::F32, vec![4, 5, 6])] {
        let n: usize = shape.iter().product();
        let base: Vec<f64> = (0..n).map(|i| (i * 7 % 13) as f64 - 6.0).collect();
        let mut nans = base.clone();
        nans[n / 3] = f64::NAN;
        nans[2 * n / 3] = f64::NAN;
        let mut zero = base.clone();
        zero[n / 2] = -0.0;
        // A -0.0 beside each NaN and one far from both.
        let mut zeros = base.clone();
        for at in [2, n / 3 + 1, 2 * n / 3 - 1] {
            zeros[at] = -0.0;
        }
        let mut both = zeros.clone();
        both[n / 3] = f64::NAN;
        both[2 * n / 3] = f64::NAN;
        for numpy in ["np.min(x)", "np.max(x)", "np.ptp(x)", "np.max(x) - min(x)"] {
            assert_eq!(flagged(numpy, &nans, &shape, dt), 0, "{numpy} {dt:?}");
            assert!(flagged(numpy, &zero, &shape, dt) > 0, "{numpy} {dt:?}");
            // A window holding a NaN is NaN, a -0.0 in it or not: only the -0.0 windows
            // without a NaN are patched.
            let mixed = flagged(numpy, &both, &shape, dt);
            assert!(mixed > 0, "{numpy} {dt:?}");
            assert!(mixed < flagged(numpy, &zeros, &shape, dt), "{numpy} {dt:?}");
        }
        for python in ["min(x)", "max(x)", "max(x) - min(x)"] {
            assert!(flagged(python, &nans, &shape, dt) > 0, "{python} {dt:?}");
        }
    }
}

#[test]
fn zeros_of_both_signs_keep_the_sign_the_filter_gives() {
    // Python's `min` keeps the first of equal values; NumPy's picks by its SIMD lanes, which
    // the CPU and the GPU (the passes' patch kernel) both refuse to guess.
    for (source, fill, zeros) in [
        ("min(x)", 1.0, [0.0, -0.0]),
        ("max(x)", -1.0, [-0.0, 0.0]),
        ("np.min(x)", 1.0, [-0.0, 0.0]),
        ("np.max(x) - np.min(x)", 0.0, [-0.0, 0.0]),
    ] {
        let mut v = vec![fill; 6 * 6];
        v[14] = zeros[0];
        v[15] = zeros[1];
        let numpy = source.starts_with("np.");
        let data: Vec<u8> = v.iter().flat_map(|x: &f64| x.to_le_bytes()).collect();
        let refused = agree(
            source,
            &data,
            &[6, 6],
            (Dtype::F64, Dtype::F64),
            &boxed(&[3, 3]),
        );
        assert_eq!(refused, numpy, "{source} f64");
        let data: Vec<u8> = v.iter().flat_map(|&x| (x as f32).to_le_bytes()).collect();
        let refused = agree(
            source,
            &data,
            &[6, 6],
            (Dtype::F32, Dtype::F32),
            &boxed(&[3, 3]),
        );
        assert_eq!(refused, numpy, "{source} f32");
    }
}

#[test]
fn random_cases_agree() {
    // Random shapes (1 to 3 axes), boxes, origins, modes, dtypes in and out, sources, data with
    // awkward values one in eight, and outputs per thread: a property check over what the
    // fixed cases above pick by hand.
    let mut r = Inputs::new(20261125);
    let sources = ["np.min(x)", "max(x)", "max(x) - min(x)"];
    for case in 0..300 {
        let rank = 1 + (r.next() % 3) as usize;
        let shape: Vec<usize> = (0..rank)
            .map(|_| 1 + (r.next() % [40, 12, 6][rank - 1]) as usize)
            .collect();
        let size: Vec<usize> = (0..rank).map(|_| 1 + (r.next() % 6) as usize).collect();
        let origin: Vec<isize> = size
            .iter()
            .map(|&k| {
                let lo = -((k / 2) as isize);
                lo + (r.next() % k as u64) as isize
            })
            .collect();
        let dt = ALL[(r.next() % ALL.len() as u64) as usize];
        let out = ALL[(r.next() % ALL.len() as u64) as usize];
        let n: usize = shape.iter().product();
        let mut data = clean(n, dt, case);
        let wild = r.bytes(n, dt);
        let es = dt.itemsize();
        for i in 0..n {
            if r.next().is_multiple_of(8) {
                data[i * es..(i + 1) * es].copy_from_slice(&wild[i * es..(i + 1) * es]);
            }
        }
        let opts = Options {
            mode: MODES[(r.next() % MODES.len() as u64) as usize],
            cval: (r.next() % 2) as f64,
            origin,
            ..boxed(&size)
        };
        if size.iter().all(|&k| k == 1) {
            continue;
        }
        let source = sources[(r.next() % 3) as usize];
        agree(source, &data, &shape, (dt, out), &opts);
    }
}

#[test]
fn only_box_extremes_and_sorted_statistics_are_planned() {
    let f = |s: &str| GpuFilter::compile(s, &ndjit::Bindings::new()).unwrap();
    let dts = (Dtype::F64, Dtype::F64);
    // Sorted statistics are planned too (`gpu/tests/select.rs`); other forms are not.
    assert!(planned(&f("np.median(x)"), &boxed(&[3, 3]), 2, dts));
    assert!(planned(
        &f("np.max(x) - np.min(x)"),
        &boxed(&[3, 3]),
        2,
        dts
    ));
    assert!(!planned(
        &f("np.max(x) - np.min(x) * 2"),
        &boxed(&[3, 3]),
        2,
        dts
    ));
    assert!(!planned(&f("np.mean(x)"), &boxed(&[3, 3]), 2, dts));
    // Other footprints' extremes are the select kernel's (`tests/select.rs`), not passes.
    let cross = Options::new(Footprint::cross(2, 1));
    let ptx = f("np.min(x)")
        .ptx_tuned(&cross, 2, dts, Target::SM90, forced(true))
        .unwrap();
    assert!(ptx.contains("ndjit_keys") && !ptx.contains("ndjit_rows0"));
    // Without the tuning's say (the measured choice, `separable::chosen`): from 7×7 on; from 5×5
    // for one-byte types and where the general kernel holds NumPy's zero-sign guard; from 3×3
    // for both. Integer images hold no zero of either sign: their guard folds away
    // (`ir::BufferValues::Ordinary`), and `np.min` is chosen as `min` is.
    let (numpy_form, python_form) = (f("np.min(x)"), f("min(x)"));
    let passes = |gpu: &GpuFilter, size: usize, dt: Dtype| {
        let ptx = gpu
            .ptx(&boxed(&[size, size]), 2, dt, dt, Target::SM90)
            .unwrap();
        ptx.contains("ndjit_pass0")
    };
    for (size, dt, numpy, python) in [
        (3, Dtype::F32, false, false),
        (3, Dtype::F64, false, false),
        (3, Dtype::U16, false, false),
        (3, Dtype::U8, false, false),
        (3, Dtype::I8, false, false),
        (5, Dtype::F32, true, false),
        (5, Dtype::F64, true, false),
        (5, Dtype::U16, false, false),
        (5, Dtype::U8, true, true),
        (7, Dtype::F32, true, true),
        (7, Dtype::U16, true, true),
        (9, Dtype::F64, true, true),
    ] {
        assert_eq!(passes(&numpy_form, size, dt), numpy, "np.min {size} {dt}");
        assert_eq!(passes(&python_form, size, dt), python, "min {size} {dt}");
    }
}
