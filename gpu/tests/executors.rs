//! The GPU is an executor of the driver's plan: through `ndjit::driver::execute`, the emulated GPU
//! (the very kernel the device would run) and the CPU engines reject the same arguments with the
//! same errors, and agree bit for bit on what they accept, including what only the driver knows
//! (axes, negative axes, the overlap policy, 0-d inputs).

use ndjit::driver::{
    self, DriverError, Dtype, Engine, Executor, Footprint, Mode, Options, RawArray, RawArrayMut,
};
use ndjit_gpu::emulate::Emulator;
use ndjit_gpu::{GpuError, GpuFilter};

const SOURCE: &str = "np.max(x) - x[0] * 0.5 + len(x)";

/// A deterministic image of `shape`.
fn image(shape: &[usize]) -> Vec<f64> {
    let n: usize = shape.iter().product();
    (0..n)
        .map(|i| ((i * 7919) % 251) as f64 * 0.75 - 40.0)
        .collect()
}

/// `execute` on `input` into a fresh output of `dtype`, through `exec`.
fn run<E: Executor, T: driver::Element>(
    exec: &E,
    filter: &ndjit::Filter,
    input: &[T],
    shape: &[usize],
    out_dtype: Dtype,
    opts: &Options,
) -> Result<Vec<u8>, E::Error> {
    let n: usize = shape.iter().product();
    let mut out = vec![0u8; n.max(1) * out_dtype.itemsize()];
    let input = RawArray::from_slice(input, shape).expect("input");
    let output = RawArrayMut {
        ptr: out.as_mut_ptr(),
        dtype: out_dtype,
        shape: shape.to_vec(),
        strides: driver::c_strides(shape, out_dtype),
    };
    // SAFETY: both arrays are ours, described by their own shapes and strides.
    unsafe { driver::execute(exec, &input, &output, filter, opts) }?;
    Ok(out)
}

/// `source` run on `image(shape)` through the CPU's row kernel and through the emulated GPU.
fn both(
    source: &str,
    shape: &[usize],
    out_dtype: Dtype,
    opts: &Options,
) -> (Result<Vec<u8>, DriverError>, Result<Vec<u8>, GpuError>) {
    let gpu = GpuFilter::compile(source, &ndjit::Bindings::new()).expect("compiles");
    both_on(&gpu, &image(shape), shape, out_dtype, opts)
}

/// `gpu`'s filter run on `input` through the CPU's row kernel and through the emulated GPU.
fn both_on<T: driver::Element>(
    gpu: &GpuFilter,
    input: &[T],
    shape: &[usize],
    out_dtype: Dtype,
    opts: &Options,
) -> (Result<Vec<u8>, DriverError>, Result<Vec<u8>, GpuError>) {
    let cpu = run(&Engine::Auto, gpu.filter(), input, shape, out_dtype, opts);
    let emulated = run(
        &Emulator::new(gpu),
        gpu.filter(),
        input,
        shape,
        out_dtype,
        opts,
    );
    (cpu, emulated)
}

fn cpu_and_emulated(
    shape: &[usize],
    out_dtype: Dtype,
    opts: &Options,
) -> (Result<Vec<u8>, DriverError>, Result<Vec<u8>, GpuError>) {
    both(SOURCE, shape, out_dtype, opts)
}

#[test]
fn the_gpu_and_the_cpu_reject_bad_options_with_the_same_errors() {
    let size = |s: &[usize]| Options::size(s);
    let cross = || Options::new(Footprint::cross(2, 1));
    let cases: Vec<(&[usize], Options)> = vec![
        (&[4, 5], size(&[3]).axes(&[2])),
        (&[4, 5], size(&[3]).axes(&[-3])),
        (&[4, 5], size(&[3, 3]).axes(&[1, -1])),
        (&[4, 5], size(&[3, 3, 3])),
        (&[4, 5], Options::new(Footprint::cross(3, 1))),
        (&[4, 5], cross().origin(&[0, 0, 0])),
        (&[4, 5], cross().origin(&[2, 0])),
        (&[4, 5], cross().origin(&[0, -2])),
        (&[4, 5], size(&[0, 3])),
    ];
    for (shape, opts) in cases {
        let (cpu, emulated) = cpu_and_emulated(shape, Dtype::F64, &opts);
        let want = cpu.expect_err("the CPU rejects it");
        match emulated {
            Err(GpuError::Arguments(got)) => assert_eq!(got, want, "{opts:?}"),
            other => panic!("{opts:?}: the GPU gave {:?}, the CPU {want}", other.err()),
        }
        // The same scipy exception and message, whichever face raises it.
        assert!(!want.to_string().is_empty() && !want.python_type().is_empty());
    }
}

#[test]
fn the_gpu_follows_the_drivers_axes_including_negative_ones() {
    let opts = [
        Options::new(Footprint::cross(2, 1))
            .axes(&[-1, 0])
            .origin(&[1, 0])
            .mode(Mode::GridWrap),
        Options::size(&[3]).axes(&[-2]).mode(Mode::Mirror),
        Options::size(&[2, 3, 1]).mode(Mode::Constant).cval(-2.5),
    ];
    for opts in &opts {
        for out_dtype in [Dtype::F64, Dtype::U8, Dtype::I32] {
            let (cpu, emulated) = cpu_and_emulated(&[3, 4, 5], out_dtype, opts);
            let (cpu, emulated) = (cpu.expect("cpu"), emulated.expect("emulated"));
            assert_eq!(cpu, emulated, "{opts:?} -> {out_dtype:?}");
        }
    }
    // Negative axes are the positive ones counted from the end.
    let (a, _) = cpu_and_emulated(&[3, 4, 5], Dtype::F64, &Options::size(&[3]).axes(&[-2]));
    let (b, _) = cpu_and_emulated(&[3, 4, 5], Dtype::F64, &Options::size(&[3]).axes(&[1]));
    assert_eq!(a.unwrap(), b.unwrap());
}

#[test]
fn reflect_far_past_the_edge_follows_the_period_on_both() {
    // Offsets of -8 on an axis of length 2 (= -4 * len): scipy's own loop reads outside the line
    // there; the driver, and so every executor, continues the period.
    let opts = Options::size(&[17]).mode(Mode::Reflect);
    let (cpu, emulated) = cpu_and_emulated(&[2], Dtype::F64, &opts);
    assert_eq!(cpu.unwrap(), emulated.unwrap());
}

#[test]
fn zero_d_inputs_and_errors_report_the_callers_rank() {
    let (cpu, emulated) = cpu_and_emulated(&[], Dtype::F64, &Options::size(&[]));
    assert_eq!(cpu.unwrap(), emulated.unwrap());
    // `x[3]` on four values never fails: the same results.
    let (cpu, emulated) = both("x[3]", &[2, 3], Dtype::F64, &Options::size(&[2, 2]));
    assert_eq!(cpu.unwrap(), emulated.unwrap());
    // On three it fails at the first pixel, with the same error and position.
    let (cpu, emulated) = both("x[3]", &[2, 3], Dtype::F64, &Options::size(&[1, 3]));
    same_failure(cpu, emulated);
}

#[test]
fn any_and_all_past_the_window_s_taps_run_as_loops_equal_on_both() {
    // Past 8×8 an `any`/`all` is a loop (`Body::reduce`); NumPy's `np.min` holds two `any` in its
    // zero-sign guard, which fails where a window holds both zeros and its minimum is a zero.
    let shape = [13, 12];
    let mut input = image(&shape);
    for opts in [Options::size(&[9, 9]), Options::size(&[11, 12])] {
        for source in [
            "np.any(x > 140.0) + 2.0 * np.all(x > -39.5)",
            "min(x) + np.any(x == 0.5)",
            "np.min(x) * 2.0",
        ] {
            let gpu = GpuFilter::compile(source, &ndjit::Bindings::new()).expect("compiles");
            let (cpu, emulated) = both_on(&gpu, &input, &shape, Dtype::F64, &opts);
            let cpu = cpu.expect("cpu");
            assert_eq!(cpu, emulated.expect("emulated"), "{source}");
            assert!(
                cpu.chunks(8).any(|v| v != &cpu[..8]),
                "{source}: a constant image"
            );
        }
    }
    // Zeros of both signs, and no value below them: those windows' minimum is a zero.
    input.iter_mut().for_each(|v| *v = v.abs() + 1.0);
    input[20] = 0.0;
    input[22] = -0.0;
    let gpu = GpuFilter::compile("np.min(x) * 2.0", &ndjit::Bindings::new()).expect("compiles");
    let (cpu, emulated) = both_on(&gpu, &input, &shape, Dtype::F64, &Options::size(&[9, 9]));
    assert_eq!(same_failure(cpu, emulated), ndjit::Exception::ValueError);
}

#[test]
fn zero_sign_guards_read_the_image_in_their_cold_branches_equal_on_both() {
    // NumPy's min, max and nanmin over a disk or a cross of a float32 or uint8 image run the general
    // kernel on a register window; their zero-sign guard (`ir::zero_signs`), a branch taken where
    // the result is a zero, reads each output's taps from the image instead (`Body::if_`). Zeros
    // lie where some windows hold one sign only (the branch runs and passes), others both.
    let shape = [17, 26];
    let zeros = |negative: bool| {
        let mut input: Vec<f32> = image(&shape).iter().map(|v| v.abs() as f32 + 1.0).collect();
        input[4 * 26 + 3] = 0.0;
        input[8 * 26 + 20] = 0.0;
        input[12 * 26 + 11] = if negative { -0.0 } else { 0.0 };
        input[12 * 26 + 14] = 0.0;
        input
    };
    let footprints = [
        Footprint::disk(2),
        Footprint::cross(2, 3),
        Footprint::disk(3),
    ];
    for source in ["np.min(x) * 2.0", "np.max(-x) + 1.0", "np.nanmin(x)"] {
        let gpu = GpuFilter::compile(source, &ndjit::Bindings::new()).expect("compiles");
        for fp in &footprints {
            let opts = Options::new(fp.clone());
            let (cpu, emulated) = both_on(&gpu, &zeros(false), &shape, Dtype::F32, &opts);
            let cpu = cpu.expect("cpu");
            assert_eq!(cpu, emulated.expect("emulated"), "{source}");
            let (cpu, emulated) = both_on(&gpu, &zeros(true), &shape, Dtype::F32, &opts);
            let failed = same_failure(cpu, emulated);
            assert_eq!(failed, ndjit::Exception::ValueError, "{source}");
            let bytes: Vec<u8> = zeros(false).iter().map(|&v| v as u8).collect();
            let (cpu, emulated) = both_on(&gpu, &bytes, &shape, Dtype::F64, &opts);
            assert_eq!(cpu.expect("cpu"), emulated.expect("emulated"), "{source}");
        }
    }
}

/// Both runs failed in the filter, with the same error at the same pixel; the error's class.
fn same_failure(
    cpu: Result<Vec<u8>, DriverError>,
    emulated: Result<Vec<u8>, GpuError>,
) -> ndjit::Exception {
    match (cpu.expect_err("the CPU run fails"), emulated) {
        (DriverError::Filter { error, position }, Err(GpuError::Filter { pixel, error: got })) => {
            assert_eq!((position, error.to_string()), (pixel, got.to_string()));
            error.exception
        }
        (want, got) => panic!("CPU {want:?}, GPU {:?}", got.err()),
    }
}

#[test]
fn a_constant_index_past_the_taps_fails_as_on_the_cpu() {
    // Sliced first, the load survives folding behind its failing index check: the kernel
    // generator indexed its taps with it and panicked (found by the differential fuzzer).
    let source = "def f(x):\n    v = x[:3][1:][len(x)]\n    return v\n";
    let (cpu, emulated) = both(source, &[3, 4], Dtype::F64, &Options::size(&[3, 3]));
    assert_eq!(same_failure(cpu, emulated), ndjit::Exception::IndexError);
}

#[test]
fn a_speculative_int_division_by_zero_is_harmless_on_both() {
    // If-conversion evaluates `i % i` (0 % 0 at first) though the branch is never taken.
    let source = "def f(x):\n    v = 0\n    for i, e in enumerate(x):\n        v = (i ** 0) if e > -1000.0 else (i % i)\n    return v\n";
    let (cpu, emulated) = both(source, &[3, 4], Dtype::F64, &Options::size(&[1, 2]));
    let cpu = cpu.expect("the branch with the division is never taken");
    assert_eq!(cpu, emulated.expect("the same on the GPU"));
    assert!(cpu.chunks(8).all(|v| v == 1.0f64.to_ne_bytes()));
}

#[test]
fn a_self_overlapping_host_output_is_written_in_scipys_order() {
    let gpu = GpuFilter::compile(SOURCE, &ndjit::Bindings::new()).expect("compiles");
    let input = image(&[3, 4]);
    let input = RawArray::from_slice(&input, &[3, 4]).unwrap();
    let opts = Options::size(&[3, 3]);
    // Every row of the output is the same memory: the last row's values remain, as in scipy.
    let shared = |out: &mut [f64; 4]| RawArrayMut {
        ptr: out.as_mut_ptr().cast(),
        dtype: Dtype::F64,
        shape: vec![3, 4],
        strides: vec![0, 8],
    };
    let (mut cpu, mut emulated) = ([0.0f64; 4], [0.0f64; 4]);
    // SAFETY: every element the descriptions reach is inside `input` or the output rows.
    unsafe {
        driver::execute(
            &Engine::Auto,
            &input,
            &shared(&mut cpu),
            gpu.filter(),
            &opts,
        )
    }
    .expect("cpu");
    let exec = Emulator::new(&gpu);
    unsafe { driver::execute(&exec, &input, &shared(&mut emulated), gpu.filter(), &opts) }
        .expect("emulated");
    assert_eq!(cpu.map(f64::to_bits), emulated.map(f64::to_bits));
}

#[test]
fn an_output_overlapping_the_input_is_refused_not_computed_out_of_place() {
    // scipy's loop reads the pixels it has already written; the CPU reproduces that order, the
    // GPU cannot, and reading a copy would silently give another result.
    let gpu = GpuFilter::compile(SOURCE, &ndjit::Bindings::new()).expect("compiles");
    let mut data = image(&[3, 4]);
    let before = data.clone();
    let opts = Options::size(&[3, 3]);
    let (input, output) = (
        RawArray::from_slice(&data, &[3, 4]).unwrap(),
        RawArrayMut {
            ptr: data.as_mut_ptr().cast(),
            dtype: Dtype::F64,
            shape: vec![3, 4],
            strides: vec![32, 8],
        },
    );
    let exec = Emulator::new(&gpu);
    // SAFETY: both descriptions cover `data` exactly.
    let refused = unsafe { driver::execute(&exec, &input, &output, gpu.filter(), &opts) }
        .expect_err("in place on the GPU");
    assert!(
        matches!(&refused, GpuError::Invalid(m) if m.contains("overlaps the input") && m.contains("separate output")),
        "{refused}"
    );
    assert_eq!(data, before, "nothing is written");
}

#[test]
fn sums_of_more_than_128_values_follow_numpys_pairwise_order_on_both() {
    // Magnitudes far apart, so that every order of additions rounds differently; a 15x15
    // footprint sums 225 taps (unrolled), a mask sums a run-time number of them (a loop).
    let shape = [14, 17];
    let input: Vec<f64> = (0..shape[0] * shape[1])
        .map(|i| [1e16, 1.0, 3.3e-3, -7e15][i % 4] * (1.0 + (i % 17) as f64 * 1e-3))
        .collect();
    let opts = Options::size(&[15, 15]);
    for source in ["np.sum(x)", "np.sum(x[x > -1e15])", "np.mean(x[x != 1.0])"] {
        let gpu = GpuFilter::compile(source, &ndjit::Bindings::new()).expect("compiles");
        let (cpu, emulated) = both_on(&gpu, &input, &shape, Dtype::F64, &opts);
        let (cpu, emulated) = (cpu.expect("cpu"), emulated.expect("emulated"));
        let interp = run(
            &Engine::Interpreter,
            gpu.filter(),
            &input,
            &shape,
            Dtype::F64,
            &opts,
        )
        .expect("interpreter");
        assert_eq!(cpu, interp, "{source}: row kernel against the interpreter");
        assert_eq!(cpu, emulated, "{source}: the emulated GPU against the CPU");
    }
}

#[test]
fn scratch_past_a_threads_local_memory_is_refused_with_the_reason() {
    // np.bincount of 16-bit values needs up to 65,536 counters per pixel: the CPU grows its
    // scratch array, a GPU thread cannot, so the GPU must say so instead of writing anything.
    let source = "np.bincount(x.astype(int)).argmax()";
    let shape = [4, 5];
    let input: Vec<f64> = (0..20).map(|i| (3000 + 37 * i) as f64).collect();
    let gpu = GpuFilter::compile(source, &ndjit::Bindings::new()).expect("compiles");
    let opts = Options::size(&[3, 3]);
    let (cpu, refused) = both_on(&gpu, &input, &shape, Dtype::F64, &opts);
    let cpu = cpu.expect("cpu");
    assert!(cpu.iter().any(|&b| b != 0), "the CPU computed something");
    let refused = refused.expect_err("the GPU's scratch is too small");
    match &refused {
        GpuError::FilterGpuOnly { pixel, message } => {
            assert_eq!(pixel, &vec![0, 0], "the first pixel in C order");
            assert!(
                message.starts_with("out of memory for")
                    && message.contains("on the GPU")
                    && message.contains("run this filter on the CPU"),
                "{message}"
            );
        }
        other => panic!("expected a GPU-only failure, got {other:?}"),
    }
    // Small values fit: the same filter runs on the GPU and agrees bit for bit.
    let small: Vec<f64> = (0..20).map(|i| (i % 5) as f64).collect();
    let (cpu, emulated) = both_on(&gpu, &small, &shape, Dtype::F64, &opts);
    let (cpu, emulated) = (cpu.expect("cpu"), emulated.expect("emulated"));
    assert_eq!(cpu, emulated);
}

#[test]
fn a_region_is_refused_not_computed_whole() {
    // The GPU computes whole arrays: running the filter on pixels outside a region a caller
    // asked for (a halo's, whose windows the whole array does not have) could raise.
    let gpu = GpuFilter::compile(SOURCE, &ndjit::Bindings::new()).expect("compiles");
    let data = image(&[3, 4]);
    let mut out = vec![-1.0; 12];
    let input = RawArray::from_slice(&data, &[3, 4]).unwrap();
    let opts = Options::size(&[3, 3]).region(&[1..2, 1..3]);
    let exec = Emulator::new(&gpu);
    // SAFETY: both descriptions cover their vectors exactly.
    let output = RawArrayMut {
        ptr: out.as_mut_ptr().cast(),
        dtype: Dtype::F64,
        shape: vec![3, 4],
        strides: vec![32, 8],
    };
    let refused = unsafe { driver::execute(&exec, &input, &output, gpu.filter(), &opts) }
        .expect_err("a region on the GPU");
    assert!(refused.to_string().contains("not a region"), "{refused}");
    assert!(out.iter().all(|&v| v == -1.0), "nothing is written");
}
