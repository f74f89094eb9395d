//! Checks on a CUDA device (prints `SKIPPED` and passes without one).
//!
//! 1. The device and the PTX target it gets.
//! 2. PTX `min.f64`/`max.f64` on signed zeros and NaN (what the native min/max lowering assumes).
//! 3. Every math routine against the CPU's `libm` over `NDJIT_MATH_SAMPLES` (default 10^6) inputs
//!    per function plus special values: exact count and largest ulp difference.
//! 4. Every corpus program × every mode × 1-d/2-d/3-d footprints with origins × dtypes (and a
//!    strided input): the GPU result against scipy's loop around the CPU JIT, bit for bit for
//!    programs without transcendental calls, within 2 ulp otherwise; failures must report the
//!    CPU's first failing pixel and message.
//! 5. The API on host arrays, device arrays, in place, and all output types.
//! 6. Box minima and maxima as separable passes: against the CPU's general engine bit for bit
//!    (floats with NaN and `-0.0`, whose windows the general kernel patches), and timed against
//!    the general kernel (4096², k = 3…31).
//!
//! Set `NDJIT_OUT` to a folder to get the full logs there.

mod common;

use common::{geometries, with, Inputs};
use ndjit::math::MathFn;
use ndjit_gpu::codegen::separable::{Joint, Strip};
use ndjit_gpu::codegen::{Dtype, KernelSpec, Mode};
use ndjit_gpu::math::{sample_args, sample_inputs, test_module, ulp_diff};
use ndjit_gpu::pir::{emu::Emu, Addr, Bin, Cls, Func, Ins, Module, Param, Space, Special, Src, T};
use ndjit_gpu::plan::{ArrayDesc, Geometry};
use ndjit_gpu::{reference, Footprint, Gpu, GpuError, GpuFilter, OnDevice, Options, Tuning};
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Instant;

fn log_file(name: &str) -> Option<std::fs::File> {
    let dir = std::env::var("NDJIT_OUT").ok()?;
    std::fs::File::create(std::path::Path::new(&dir).join(name)).ok()
}

fn main() {
    let gpu = match Gpu::get(0) {
        Ok(g) => g,
        Err(e) => {
            println!("SKIPPED: the device checks need a CUDA GPU ({e})");
            return;
        }
    };
    let only = std::env::var("NDJIT_DEVICE_ONLY").unwrap_or_default();
    let want = |s: &str| only.is_empty() || only.split(',').any(|o| o == s);
    println!(
        "device: {} (sm_{}{}), driver {}, target .version {}.{} sm_{}",
        gpu.name(),
        gpu.compute_capability().0,
        gpu.compute_capability().1,
        gpu.driver_version(),
        gpu.target().version.0,
        gpu.target().version.1,
        gpu.target().sm
    );
    let mut failed = Vec::new();
    let mut summary = Vec::new();
    let mut section = |name: &str, f: &mut dyn FnMut() -> Result<String, String>| {
        let t = Instant::now();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|p| {
            Err(format!(
                "panic: {:?}",
                p.downcast_ref::<String>()
                    .cloned()
                    .or(p.downcast_ref::<&str>().map(|s| s.to_string()))
            ))
        });
        let secs = t.elapsed().as_secs_f64();
        match r {
            Ok(s) => summary.push(format!("{name:<10} ok    {secs:6.1}s  {s}")),
            Err(e) => {
                summary.push(format!(
                    "{name:<10} FAIL  {secs:6.1}s  {}",
                    e.lines().next().unwrap_or("")
                ));
                failed.push(format!("{name}: {e}"));
            }
        }
    };
    if want("minmax") {
        section("minmax", &mut || minmax_probe(&gpu));
    }
    if want("math") {
        section("math", &mut || math_accuracy(&gpu));
    }
    if want("corpus") {
        section("corpus", &mut || corpus(&gpu));
    }
    if want("api") {
        section("api", &mut || api(&gpu));
    }
    if want("passes") {
        section("passes", &mut || passes(&gpu));
    }
    println!("\n== device summary ==");
    for s in &summary {
        println!("{s}");
    }
    if !failed.is_empty() {
        for f in &failed {
            eprintln!("\n{f}");
        }
        std::process::exit(1);
    }
}

/// `min.f64`/`max.f64` on the cases where IEEE variants differ, against the emulator's
/// assumption (NaN ignored, -0 below +0).
fn minmax_probe(gpu: &Arc<Gpu>) -> Result<String, String> {
    let pairs = [
        (-0.0, 0.0),
        (0.0, -0.0),
        (f64::NAN, 1.0),
        (1.0, f64::NAN),
        (1.0, 2.0),
        (-1.0, -0.0),
    ];
    let mut m = Module::new(gpu.target().version, gpu.target().sm);
    let mut k = Func::new_entry(
        "probe",
        vec![
            Param {
                name: "x".into(),
                t: T::U64,
            },
            Param {
                name: "y".into(),
                t: T::U64,
            },
        ],
    );
    let x = k.ld(Space::Param, T::U64, Addr::sym("x", 0));
    let y = k.ld(Space::Param, T::U64, Addr::sym("y", 0));
    for i in 0..pairs.len() as i64 {
        let a = k.ld(Space::Global, T::F64, Addr::reg(x, 16 * i));
        let b = k.ld(Space::Global, T::F64, Addr::reg(x, 16 * i + 8));
        let lo = k.bin(Bin::Min, T::F64, a, b);
        let hi = k.bin(Bin::Max, T::F64, a, b);
        k.st(Space::Global, T::F64, Addr::reg(y, 16 * i), lo);
        k.st(Space::Global, T::F64, Addr::reg(y, 16 * i + 8), hi);
    }
    k.push(Ins::Exit);
    m.funcs.push(k);
    let input: Vec<u8> = pairs
        .iter()
        .flat_map(|(a, b)| [a.to_le_bytes(), b.to_le_bytes()].concat())
        .collect();
    let got = run_simple(gpu, &m, "probe", &input, input.len()).map_err(|e| e.to_string())?;
    let mut emu = Emu::new(&m);
    let xa = emu.alloc(input.len() as u64);
    emu.write(xa, &input);
    let ya = emu.alloc(input.len() as u64);
    emu.launch("probe", (1, 1), (1, 1), &[xa, ya])?;
    let want = emu.read(ya, input.len()).to_vec();
    let show = |b: &[u8]| {
        b.chunks(8)
            .map(|c| format!("{:?}", f64::from_le_bytes(c.try_into().unwrap())))
            .collect::<Vec<_>>()
            .join(" ")
    };
    println!(
        "min/max probe: gpu  {}\n               emu  {}",
        show(&got),
        show(&want)
    );
    let same = got.chunks(8).zip(want.chunks(8)).all(|(g, w)| {
        g == w
            || (f64::from_le_bytes(g.try_into().unwrap()).is_nan()
                && f64::from_le_bytes(w.try_into().unwrap()).is_nan())
    });
    if same {
        Ok("PTX min/max: NaN ignored, -0 < +0 (as the emulator assumes)".into())
    } else {
        Err(format!(
            "PTX min/max differ from the emulator: gpu {} emu {}",
            show(&got),
            show(&want)
        ))
    }
}

/// Runs kernel `entry(x, y)` once over one thread block of one thread with `input` at x;
/// returns `out_len` bytes at y.
fn run_simple(
    gpu: &Arc<Gpu>,
    m: &Module,
    entry: &str,
    input: &[u8],
    out_len: usize,
) -> ndjit_gpu::Result<Vec<u8>> {
    let module = gpu.load_entries(&m.to_ptx(), &[entry])?;
    let x = gpu.alloc(input.len())?;
    let y = gpu.alloc(out_len)?;
    let s = gpu.cu_stream();
    let mut out = vec![0u8; out_len];
    unsafe {
        gpu.upload(x.ptr(), input, s)?;
        gpu.launch(
            module.function(entry),
            ((1, 1), (1, 1), 0),
            &[
                ndjit_gpu::plan::PVal::U64(x.ptr()),
                ndjit_gpu::plan::PVal::U64(y.ptr()),
            ],
            s,
        )?;
        gpu.download(&mut out, y.ptr(), s)?;
    }
    Ok(out)
}

fn math_accuracy(gpu: &Arc<Gpu>) -> Result<String, String> {
    let n: usize = std::env::var("NDJIT_MATH_SAMPLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let mut log = log_file("math.txt");
    println!(
        "\n== math routines on the GPU vs libm on the CPU ({n} inputs each + special values) =="
    );
    println!(
        "{:<14} {:>9} {:>9} {:>8} {:>8}",
        "function", "inputs", "exact", "max ulp", "ms"
    );
    let mut worst = 0u64;
    let mut inexact = Vec::new();
    let mut glibc_inexact = Vec::new();
    // ndjit's own np.tanh & co. whatever this host's CPU (glibc's are checked as math.tanh & co.).
    for f in ndjit::math::numpy_kernels::CHOICES {
        ndjit::math::numpy_kernels::set_accurate(f, true);
    }
    for &f in MathFn::ALL {
        let m = test_module(f, gpu.target().version, gpu.target().sm);
        let module = gpu
            .load_entries(&m.to_ptx(), &["ndjit_math_test"])
            .map_err(|e| e.to_string())?;
        let inputs = sample_inputs(f, n, 1234 + f as u64);
        let xs: Vec<u8> = inputs.iter().flat_map(|p| p.0.to_le_bytes()).collect();
        let ys: Vec<u8> = inputs.iter().flat_map(|p| p.1.to_le_bytes()).collect();
        let len = inputs.len();
        let (dx, dy, dout) = (
            gpu.alloc(len * 8).map_err(|e| e.to_string())?,
            gpu.alloc(len * 8).map_err(|e| e.to_string())?,
            gpu.alloc(len * 8).map_err(|e| e.to_string())?,
        );
        let mut out = vec![0u8; len * 8];
        let s = gpu.cu_stream();
        let t = Instant::now();
        unsafe {
            gpu.upload(dx.ptr(), &xs, s).map_err(|e| e.to_string())?;
            gpu.upload(dy.ptr(), &ys, s).map_err(|e| e.to_string())?;
            use ndjit_gpu::plan::PVal::U64;
            let grid = (len.div_ceil(256) as u32, 1);
            gpu.launch(
                module.function("ndjit_math_test"),
                (grid, (256, 1), 0),
                &[
                    U64(dx.ptr()),
                    U64(dy.ptr()),
                    U64(dout.ptr()),
                    U64(len as u64),
                ],
                s,
            )
            .map_err(|e| e.to_string())?;
            gpu.download(&mut out, dout.ptr(), s)
                .map_err(|e| e.to_string())?;
        }
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let mut exact = 0usize;
        let mut max_ulp = 0u64;
        let mut example = None;
        for (i, &sample) in inputs.iter().enumerate() {
            let args = sample_args(f, sample);
            let want = f.eval(&args);
            let got = f64::from_le_bytes(out[i * 8..i * 8 + 8].try_into().unwrap());
            if got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()) {
                exact += 1;
            } else {
                let u = ulp_diff(got, want);
                // The first difference, then the largest (a zero's sign is 0 ulp apart).
                if u > max_ulp || example.is_none() {
                    max_ulp = max_ulp.max(u);
                    example = Some(format!("{}({args:?}) gpu {got:e} cpu {want:e}", f.name()));
                }
            }
        }
        worst = worst.max(max_ulp);
        let line = format!(
            "{:<14} {:>9} {:>9} {:>8} {:>8.1}",
            f.name(),
            len,
            exact,
            max_ulp,
            ms
        );
        println!("{line}");
        if let Some(l) = log.as_mut() {
            let _ = writeln!(l, "{line} {}", example.clone().unwrap_or_default());
        }
        if exact != len && ndjit_gpu::math::transcribes_glibc(f) {
            glibc_inexact.push(format!(
                "{} (glibc's, transcribed): not bit-identical",
                f.name()
            ));
        }
        if exact != len {
            inexact.push(format!(
                "{}: {} of {len} differ, max {max_ulp} ulp, e.g. {}",
                f.name(),
                len - exact,
                example.unwrap_or_default()
            ));
        }
    }
    // glibc's own routines, transcribed, and ndjit's own np.* routines on them, must be
    // bit-identical. The exact ones (fmod, copysign, ...) are too; were they not, CUDA's bounds
    // and 3 ulp at most (tests/math_emu.rs checks each function's own bound off glibc).
    if worst > 3 || !glibc_inexact.is_empty() {
        return Err(glibc_inexact
            .into_iter()
            .chain(inexact)
            .collect::<Vec<_>>()
            .join("\n"));
    }
    if inexact.is_empty() {
        Ok(format!(
            "{} functions bit-identical to the CPU's on {} inputs each",
            MathFn::ALL.len(),
            n
        ))
    } else {
        Ok(format!(
            "within {worst} ulp; not bit-identical: {}",
            inexact.join("; ")
        ))
    }
}

struct Tally {
    kernels: usize,
    pixels: usize,
    exact_kernels: usize,
    call_kernels: usize,
    max_ulp: u64,
    failures: Vec<String>,
    refused: Vec<String>,
}

fn value_of(b: &[u8], dt: Dtype) -> f64 {
    reference::to_f64(b, dt)[0]
}

/// One program, geometry, mode and dtype pair on the GPU against the CPU.
fn corpus_case(
    gpu: &Arc<Gpu>,
    stream: cudarc::driver::sys::CUstream,
    p: &common::Program,
    shape: &[usize],
    spec: &KernelSpec,
    strided: bool,
    seed: u64,
) -> Result<Outcome, String> {
    let b = common::bindings(p);
    let f = ndjit::Filter::compile(&p.source, &b).map_err(|e| format!("compile: {e}"))?;
    let has_call = f
        .specialize(spec.filter_size())
        .ok()
        .and_then(|s| {
            s.specialized_ir()
                .map(|ir| ndjit::ir::block_has_call(&ir.body))
        })
        .unwrap_or(true);
    let gf = GpuFilter::new(&f);
    let footprint =
        Footprint::new(spec.shape.clone(), spec.mask.clone()).map_err(|e| e.to_string())?;
    let opts = Options::new(footprint)
        .mode(spec.mode)
        .cval(spec.cval)
        .origin(&spec.origin);
    let tuning = Tuning {
        network: spec.network,
        ..Tuning::default()
    };
    let n: usize = shape.iter().product();
    let input = Inputs::new(seed).bytes(n, spec.input);
    let es = spec.input.itemsize();
    // A strided input: the image stored transposed (last two axes swapped in memory).
    let (in_desc, dev_in_bytes) = if strided && shape.len() == 2 {
        let (h, w) = (shape[0], shape[1]);
        let mut t = vec![0u8; n * es];
        for i in 0..h {
            for j in 0..w {
                t[(j * h + i) * es..(j * h + i + 1) * es]
                    .copy_from_slice(&input[(i * w + j) * es..(i * w + j + 1) * es]);
            }
        }
        (
            ArrayDesc {
                dtype: spec.input,
                shape: shape.to_vec(),
                strides: vec![es as isize, (h * es) as isize],
            },
            t,
        )
    } else {
        (ArrayDesc::contiguous(spec.input, shape), input.clone())
    };
    let out_desc = ArrayDesc::contiguous(spec.output, shape);
    let d_in = gpu.alloc(dev_in_bytes.len()).map_err(|e| e.to_string())?;
    let d_out = gpu
        .alloc(n * spec.output.itemsize())
        .map_err(|e| e.to_string())?;
    let mut out = vec![0u8; n * spec.output.itemsize()];
    let err = unsafe {
        gpu.upload(d_in.ptr(), &dev_in_bytes, stream)
            .map_err(|e| e.to_string())?;
        gpu.memset(d_out.ptr(), 0xA5, out.len(), stream)
            .map_err(|e| e.to_string())?;
        let exec = OnDevice::new(&gf, gpu, Some(stream)).tuning(tuning);
        let r = gf
            .launch_on(
                &exec,
                (d_in.ptr(), &in_desc),
                (d_out.ptr(), &out_desc),
                &opts,
            )
            .map_err(|e| format!("launch: {e}"))?
            .finish();
        gpu.download(&mut out, d_out.ptr(), stream)
            .map_err(|e| e.to_string())?;
        r.err()
    };
    let values = reference::to_f64(&input, spec.input);
    let sized = f
        .specialize(spec.filter_size())
        .map_err(|e| e.to_string())?;
    let want = reference::generic_filter(&sized, &values, shape, spec);
    // A scratch array longer than a GPU thread's local memory holds (np.bincount of 16-bit
    // values, say) is refused with an error where the CPU computes: a refusal, not a wrong value.
    if let Some(GpuError::FilterGpuOnly { message, .. }) = &err {
        if message.starts_with("out of memory for") {
            return Ok(Outcome::Refused(message.clone()));
        }
    }
    let os = spec.output.itemsize();
    let mut first_err = None;
    let mut max_ulp = 0;
    for (i, w) in want.iter().enumerate() {
        match w {
            Ok(v) => {
                let wb = reference::cast(*v, spec.output);
                let gb = &out[i * os..(i + 1) * os];
                if let Err(u) = common::agrees(&wb, gb, spec.output, has_call) {
                    return Err(format!(
                        "pixel {i}: cpu {v:?} gpu {:?} ({u} apart)",
                        value_of(gb, spec.output)
                    ));
                }
                if !common::same_bits(&wb, gb, spec.output) {
                    let u = ulp_diff(value_of(gb, spec.output), value_of(&wb, spec.output));
                    max_ulp = max_ulp.max(u);
                }
            }
            Err(e) => {
                if first_err.is_none() {
                    first_err = Some((i, e));
                }
            }
        }
    }
    let g = Geometry::new(&ArrayDesc::contiguous(spec.input, shape), &out_desc).unwrap();
    match (first_err, err) {
        (None, None) => {}
        (Some((i, e)), Some(GpuError::Filter { pixel, error })) => {
            if pixel != g.unravel(i as u64, shape.len()) || error.message != e.message {
                return Err(format!(
                    "cpu fails at {:?} with {:?}, gpu at {pixel:?} with {:?}",
                    g.unravel(i as u64, shape.len()),
                    e.message,
                    error.message
                ));
            }
        }
        (w, gerr) => {
            return Err(format!(
                "cpu error {:?}, gpu error {:?}",
                w.map(|(i, e)| (i, e.message.clone())),
                gerr.map(|e| e.to_string())
            ))
        }
    }
    Ok(Outcome::Ran {
        pixels: n,
        has_call,
        max_ulp,
    })
}

/// How one corpus kernel went on the GPU, when it agreed with the CPU.
enum Outcome {
    Ran {
        pixels: usize,
        has_call: bool,
        max_ulp: u64,
    },
    /// The GPU refused with a clear error (its per-thread scratch space is too small).
    Refused(String),
}

fn corpus(gpu: &Arc<Gpu>) -> Result<String, String> {
    let corpus = common::corpus();
    let programs = common::selected(&corpus);
    // Larger images than the emulator's, so that interior and boundary paths both run a lot.
    let sizes: Vec<Vec<usize>> = vec![
        vec![37, 70],
        vec![41, 53],
        vec![301],
        vec![29, 31],
        vec![7, 9, 11],
    ];
    // Phase 1: every program in every mode (2-d 3x3, float64); then other dtypes (every pair of
    // them over the corpus) and a strided input; then the 1-d, cross, 5x5-with-origin and 3-d
    // footprints. Jobs run in that order until the time budget (NDJIT_CORPUS_BUDGET seconds,
    // default 300) is spent.
    let geos = geometries();
    type Job<'a> = (&'a common::Program, &'a str, Vec<usize>, KernelSpec, bool);
    let mut phases: Vec<Vec<Job>> = vec![vec![], vec![], vec![]];
    for (pi, p) in programs.iter().enumerate() {
        let (g0, _, b0) = &geos[0];
        for mode in Mode::APPLIED {
            phases[0].push((
                *p,
                g0,
                sizes[0].clone(),
                with(b0, mode, Dtype::F64, Dtype::F64, gpu.target()),
                false,
            ));
        }
        for (mode, di, dout) in [
            (Mode::Reflect, Dtype::F32, Dtype::F32),
            (Mode::Constant, Dtype::F32, Dtype::F32),
            (Mode::Nearest, Dtype::U8, Dtype::U8),
            (Mode::Wrap, Dtype::U16, Dtype::F64),
            (Mode::Mirror, Dtype::I32, Dtype::I32),
        ] {
            phases[1].push((
                *p,
                g0,
                sizes[0].clone(),
                with(b0, mode, di, dout, gpu.target()),
                false,
            ));
        }
        // Three of the 121 input × output dtype pairs per program, in turn: the corpus covers
        // every pair (each with a mode of its own) once it has 41 programs.
        for j in 0..3 {
            let q = (pi * 3 + j) % (Dtype::ALL.len() * Dtype::ALL.len());
            let (di, dout) = (
                Dtype::ALL[q / Dtype::ALL.len()],
                Dtype::ALL[q % Dtype::ALL.len()],
            );
            let mode = Mode::APPLIED[q % Mode::APPLIED.len()];
            phases[1].push((
                *p,
                g0,
                sizes[0].clone(),
                with(b0, mode, di, dout, gpu.target()),
                false,
            ));
        }
        phases[1].push((
            *p,
            "2d 3x3 strided",
            sizes[0].clone(),
            with(b0, Mode::Reflect, Dtype::F64, Dtype::F64, gpu.target()),
            true,
        ));
        for (gi, (gname, _, base)) in geos.iter().enumerate().skip(1) {
            for mode in Mode::APPLIED {
                phases[2].push((
                    *p,
                    gname,
                    sizes[gi].clone(),
                    with(base, mode, Dtype::F64, Dtype::F64, gpu.target()),
                    false,
                ));
            }
        }
    }
    // Jobs are popped from the end.
    let mut jobs: Vec<_> = phases.into_iter().rev().flatten().collect();
    let budget = std::time::Duration::from_secs(
        std::env::var("NDJIT_CORPUS_BUDGET")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(300),
    );
    let _ = &mut jobs;
    let total = jobs.len();
    let t0 = Instant::now();
    let jobs = Mutex::new(jobs);
    let tally = Mutex::new(Tally {
        kernels: 0,
        pixels: 0,
        exact_kernels: 0,
        call_kernels: 0,
        max_ulp: 0,
        failures: vec![],
        refused: vec![],
    });
    let threads = std::thread::available_parallelism()
        .map_or(4, |n| n.get())
        .min(16);
    std::thread::scope(|s| {
        for _ in 0..threads {
            let (jobs, tally, gpu) = (&jobs, &tally, gpu.clone());
            s.spawn(move || {
                let stream = gpu.new_stream().expect("a stream");
                loop {
                    if t0.elapsed() > budget {
                        break;
                    }
                    let Some((p, gname, shape, spec, strided)) = jobs.lock().unwrap().pop() else {
                        break;
                    };
                    let seed = p.name.len() as u64 * 131 + spec.mode as u64 * 7;
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        corpus_case(&gpu, stream.cu_stream(), p, &shape, &spec, strided, seed)
                    }))
                    .unwrap_or_else(|_| Err("panic".into()));
                    let mut tl = tally.lock().unwrap();
                    tl.kernels += 1;
                    match r {
                        Ok(Outcome::Ran {
                            pixels,
                            has_call,
                            max_ulp,
                        }) => {
                            tl.pixels += pixels;
                            if has_call {
                                tl.call_kernels += 1;
                                tl.max_ulp = tl.max_ulp.max(max_ulp);
                            }
                            if max_ulp == 0 {
                                tl.exact_kernels += 1;
                            }
                        }
                        Ok(Outcome::Refused(why)) => tl.refused.push(format!(
                            "{} [{gname}, {}, {} -> {}]: {why}",
                            p.name,
                            spec.mode.name(),
                            spec.input.name(),
                            spec.output.name()
                        )),
                        Err(e) => tl.failures.push(format!(
                            "{} [{gname}, {}, {} -> {}]: {e}",
                            p.name,
                            spec.mode.name(),
                            spec.input.name(),
                            spec.output.name()
                        )),
                    }
                }
            });
        }
    });
    let tl = tally.into_inner().unwrap();
    println!(
        "\n== corpus on the GPU vs the CPU: {} programs, {} kernels ({} with math calls), {} pixels, {:.1}s ==",
        programs.len(),
        tl.kernels,
        tl.call_kernels,
        tl.pixels,
        t0.elapsed().as_secs_f64()
    );
    println!("bit-identical kernels: {} of {} run ({} planned); largest ulp difference with math calls: {}", tl.exact_kernels, tl.kernels, total, tl.max_ulp);
    println!(
        "refused with an error (scratch space past a thread's local memory): {}",
        tl.refused.len()
    );
    for r in &tl.refused {
        println!("  refused: {r}");
    }
    if let Some(mut l) = log_file("corpus_failures.txt") {
        for f in &tl.failures {
            let _ = writeln!(l, "{f}");
        }
    }
    if tl.failures.is_empty() {
        Ok(format!("{} of {total} planned kernels run, {} pixels: {} bit-identical, max {} ulp ({} with math calls)", tl.kernels, tl.pixels, tl.exact_kernels, tl.max_ulp, tl.call_kernels))
    } else {
        Err(format!(
            "{} of {} kernels disagree; first 15:\n{}",
            tl.failures.len(),
            tl.kernels,
            tl.failures
                .iter()
                .take(15)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n")
        ))
    }
}

fn api(gpu: &Arc<Gpu>) -> Result<String, String> {
    use ndarray::{Array2, ArrayD, IxDyn};
    let e = |e: GpuError| e.to_string();
    let f = GpuFilter::compile("max(x) - min(x)", &ndjit::Bindings::new()).map_err(e)?;
    let img = Array2::<f64>::from_shape_fn((300, 257), |(i, j)| {
        ((i * 31 + j * 17) % 101) as f64 * 0.25 - 3.0
    });
    let opts = Options::new(Footprint::from_size(&[3, 5]))
        .mode(Mode::Mirror)
        .origin(&[1, -1]);
    let spec = KernelSpec {
        shape: vec![3, 5],
        mask: vec![true; 15],
        mode: Mode::Mirror,
        origin: vec![1, -1],
        target: gpu.target(),
        ..KernelSpec::boxed(2, 3)
    };
    let sized = f.filter().specialize(15).map_err(|x| x.to_string())?;
    let want: Vec<f64> =
        reference::generic_filter(&sized, img.as_slice().unwrap(), &[300, 257], &spec)
            .into_iter()
            .map(|r| r.unwrap())
            .collect();
    // Host arrays.
    let got: ArrayD<f64> = f.run(gpu, img.view().into_dyn(), &opts).map_err(e)?;
    if got
        .as_slice()
        .unwrap()
        .iter()
        .zip(&want)
        .any(|(a, b)| a.to_bits() != b.to_bits())
    {
        return Err("host run differs from the CPU".into());
    }
    // A transposed (non-contiguous) host view.
    let t = img.t().to_owned();
    let got_t: ArrayD<f64> = f.run(gpu, t.t().into_dyn(), &opts).map_err(e)?;
    if got_t != got {
        return Err("strided host run differs".into());
    }
    // Device arrays, reused, and in place.
    let d_in = ndjit_gpu::DeviceArray::from_host(gpu, img.view().into_dyn()).map_err(e)?;
    let mut d_out = ndjit_gpu::DeviceArray::new(gpu, Dtype::F64, &[300, 257]).map_err(e)?;
    f.run_device(gpu, &d_in, &mut d_out, &opts).map_err(e)?;
    if d_out.to_host::<f64>(gpu).map_err(e)? != got {
        return Err("device run differs".into());
    }
    // In place: refused (scipy's loop reads pixels it has already written), nothing written.
    let inplace = ndjit_gpu::DeviceArray::from_host(gpu, img.view().into_dyn()).map_err(e)?;
    let refused = unsafe {
        f.run_raw(
            gpu,
            inplace.ptr(),
            &inplace.desc().clone(),
            inplace.ptr(),
            &inplace.desc().clone(),
            &opts,
            None,
        )
    };
    match refused {
        Err(GpuError::Invalid(m)) if m.contains("overlaps the input") => {}
        other => return Err(format!("in-place run not refused: {other:?}")),
    }
    if inplace.to_host::<f64>(gpu).map_err(e)? != img.clone().into_dyn() {
        return Err("a refused in-place run wrote to its array".into());
    }
    // Output casts: uint8 wraps like C (300 -> 44), NaN -> 0.
    let c = GpuFilter::compile("x[0] * 100.0", &ndjit::Bindings::new()).map_err(e)?;
    let a = ArrayD::from_shape_vec(IxDyn(&[4]), vec![3.0, -1.5, f64::NAN, 1e10]).unwrap();
    let u: ArrayD<u8> = c
        .run(gpu, a.view(), &Options::new(Footprint::from_size(&[1])))
        .map_err(e)?;
    if u.as_slice().unwrap() != [44, 106, 0, 0] {
        return Err(format!("uint8 casts: {:?}", u.as_slice().unwrap()));
    }
    // A failure reports the CPU's error and the first failing pixel.
    let bad = GpuFilter::compile("x[5]", &ndjit::Bindings::new()).map_err(e)?;
    match bad.run::<f64, f64>(
        gpu,
        img.view().into_dyn(),
        &Options::new(Footprint::from_size(&[1, 3])),
    ) {
        Err(GpuError::Filter { pixel, error })
            if pixel == vec![0, 0] && error.message.contains("out of bounds") => {}
        other => {
            return Err(format!(
                "expected an index error at [0, 0], got {:?}",
                other.map(|_| ())
            ))
        }
    }
    // The kernel's resources, as ptxas allocated them.
    let prepared = f
        .prepare(
            gpu,
            &ArrayDesc::contiguous(Dtype::F64, &[300, 257]),
            &ArrayDesc::contiguous(Dtype::F64, &[300, 257]),
            &opts,
            &Tuning::default(),
        )
        .map_err(e)?;
    Ok(format!("host, strided, device, casts and errors agree, in place refused; max-min 3x5: {} registers, {} B local", prepared.module.registers, prepared.module.local_bytes))
}

#[allow(dead_code)]
fn unused(_: Cls, _: Src, _: Special) {}

/// `source` over a `k`-wide box on the device, the passes forced on or off: the output bytes and
/// the median milliseconds of `reps` runs after a warm-up (host clock around each run and its
/// synchronisation).
fn on_device(
    gpu: &Arc<Gpu>,
    gf: &GpuFilter,
    (input, dt): (&[u8], Dtype),
    (shape, k, mode): (&[usize], usize, Mode),
    tuning: Tuning,
    reps: usize,
) -> Result<(Vec<u8>, f64), String> {
    let stream = gpu.cu_stream();
    let e = |e: GpuError| e.to_string();
    let desc = ArrayDesc::contiguous(dt, shape);
    let d_in = gpu.alloc(input.len()).map_err(e)?;
    let d_out = gpu.alloc(input.len()).map_err(e)?;
    let opts = Options::new(Footprint::from_size(&vec![k; shape.len()])).mode(mode);
    let exec = OnDevice::new(gf, gpu, Some(stream)).tuning(tuning);
    let mut times = Vec::new();
    let mut out = vec![0u8; input.len()];
    // SAFETY: our own buffers, described by `desc`; every run is waited for.
    unsafe {
        gpu.upload(d_in.ptr(), input, stream).map_err(e)?;
        for i in 0..=reps {
            let t = Instant::now();
            gf.launch_on(&exec, (d_in.ptr(), &desc), (d_out.ptr(), &desc), &opts)
                .and_then(|p| p.finish())
                .map_err(e)?;
            gpu.synchronize(stream).map_err(e)?;
            if i > 0 {
                times.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        gpu.download(&mut out, d_out.ptr(), stream).map_err(e)?;
    }
    times.sort_by(f64::total_cmp);
    Ok((out, times.get(times.len() / 2).copied().unwrap_or(0.0)))
}

/// The passes forced on (`Some(outputs per thread)`, 0 automatic) or off (`None`), their
/// column and row passes joined as `joint` says.
fn passes_tuning(outputs: Option<u32>, joint: Joint) -> Tuning {
    Tuning {
        separable: Some(outputs.is_some()),
        pass_outputs: outputs.unwrap_or(0),
        joint,
        ..Tuning::default()
    }
}

/// Section 6: see the module's documentation.
fn passes(gpu: &Arc<Gpu>) -> Result<String, String> {
    use ndjit::driver::{self, Engine, RawArray, RawArrayMut};
    let mut log = log_file("passes.log");
    let mut say = |s: String| {
        println!("{s}");
        if let Some(f) = log.as_mut() {
            let _ = writeln!(f, "{s}");
        }
    };
    let compile =
        |s: &str| GpuFilter::compile(s, &ndjit::Bindings::new()).map_err(|e| e.to_string());
    // Correctness: the device against the CPU's general engine.
    let mut checked = 0;
    for (source, dt, shape, k, mode) in [
        ("np.min(x)", Dtype::F32, vec![517, 631], 9, Mode::Reflect),
        ("min(x)", Dtype::F64, vec![300, 401], 15, Mode::Mirror),
        ("np.max(x)", Dtype::U8, vec![613, 509], 31, Mode::Wrap),
        ("max(x)", Dtype::I16, vec![23, 40, 37], 5, Mode::Nearest),
        (
            "max(x) - min(x)",
            Dtype::F32,
            vec![411, 389],
            13,
            Mode::Reflect,
        ),
        (
            "np.max(x) - np.min(x)",
            Dtype::I64,
            vec![301, 77],
            9,
            Mode::Wrap,
        ),
        ("np.min(x)", Dtype::U64, vec![2001], 11, Mode::Constant),
    ] {
        let gf = compile(source)?;
        let n: usize = shape.iter().product();
        let mut inputs = Inputs::new(n as u64);
        let mut input = inputs.bytes(n, dt);
        if matches!(dt, Dtype::F32 | Dtype::F64) {
            // Mostly ordinary values: the awkward ones (NaN, -0.0, ...) one pixel in 50.
            let es = dt.itemsize();
            for i in 0..n {
                if !inputs.next().is_multiple_of(50) {
                    let v = (inputs.next() % 1000) as f64 * 0.25 - 100.0;
                    let b = match dt {
                        Dtype::F64 => v.to_le_bytes().to_vec(),
                        _ => (v as f32).to_le_bytes().to_vec(),
                    };
                    input[i * es..(i + 1) * es].copy_from_slice(&b);
                }
            }
        }
        let mut got = Vec::new();
        for (outputs, joint) in [
            (1, Joint::Kernels),
            (3, Joint::Kernels),
            (3, Joint::Tile(5)),
            (0, Joint::Auto),
            (
                0,
                Joint::Strip(Strip {
                    lanes: 4,
                    rows: 37,
                    group: 4,
                }),
            ),
            (
                0,
                Joint::Strip(Strip {
                    lanes: 8,
                    rows: 256,
                    group: 16,
                }),
            ),
        ] {
            let t = passes_tuning(Some(outputs), joint);
            let (g, _) = on_device(gpu, &gf, (&input, dt), (&shape, k, mode), t, 0)?;
            if !got.is_empty() && g != got {
                return Err(format!(
                    "{source} {dt}: {outputs} outputs per thread, {joint:?} differ"
                ));
            }
            got = g;
        }
        let mut want = vec![0u8; got.len()];
        let opts = Options {
            engine: Engine::Callback,
            ..Options::new(Footprint::from_size(&vec![k; shape.len()])).mode(mode)
        };
        // SAFETY: our own buffers, described by their shapes and strides.
        unsafe {
            let i = RawArray {
                ptr: input.as_ptr(),
                dtype: dt,
                shape: shape.clone(),
                strides: driver::c_strides(&shape, dt),
            };
            let o = RawArrayMut {
                ptr: want.as_mut_ptr(),
                dtype: dt,
                shape: shape.clone(),
                strides: driver::c_strides(&shape, dt),
            };
            driver::execute(&Engine::Callback, &i, &o, gf.filter(), &opts)
                .map_err(|e| e.to_string())?;
        }
        if !common::same_bits(&want, &got, dt) {
            return Err(format!(
                "{source} {dt} {shape:?} k={k} {mode:?}: differs from the CPU"
            ));
        }
        say(format!("same bits: {source} {dt} {shape:?} k={k} {mode:?}"));
        checked += 1;
    }
    // Time: the passes against the general kernel.
    let side = 4096;
    for (source, dt) in [
        ("np.min(x)", Dtype::F32),
        // Python's min has no zero-sign guard (`ir::zero_signs`): the general kernel without one.
        ("min(x)", Dtype::F32),
        ("np.max(x)", Dtype::U8),
        ("np.min(x)", Dtype::F64),
    ] {
        let gf = compile(source)?;
        let input = Inputs::new(7).bytes(side * side, dt);
        let input = match dt {
            // No NaN or -0.0: the time of the passes alone.
            Dtype::F32 => (0..side * side)
                .flat_map(|i| ((i % 1013) as f32).to_le_bytes())
                .collect(),
            Dtype::F64 => (0..side * side)
                .flat_map(|i| ((i % 1013) as f64).to_le_bytes())
                .collect(),
            _ => input,
        };
        for k in [3, 5, 7, 9, 11, 15, 21, 31] {
            let shape = [side, side];
            let geo = (&shape[..], k, Mode::Reflect);
            let time = |t| on_device(gpu, &gf, (&input, dt), geo, t, 5).map(|r| r.1);
            let general = time(passes_tuning(None, Joint::Auto))?;
            let mut line =
                format!("time {source:10} {dt:4} {side}² k={k:2}: general {general:7.3} ms");
            // A kernel per pass against a tile of 2 outputs by 4 rows per thread, the automatic
            // choice, and strips of L lanes by R rows a run, threads taking G row extremes at once.
            let strip = |lanes, rows, group| Joint::Strip(Strip { lanes, rows, group });
            for (v, joint) in [
                (4, Joint::Kernels),
                (2, Joint::Tile(4)),
                (0, Joint::Auto),
                (0, strip(4, 62, 4)),
                (0, strip(4, 124, 4)),
                (0, strip(8, 124, 8)),
                (0, strip(4, 124, 16)),
                (0, strip(8, 124, 16)),
            ] {
                let t = time(passes_tuning(Some(v), joint))?;
                let name = match joint {
                    Joint::Kernels => "kernels".to_string(),
                    Joint::Tile(r) => format!("tile V={v}/R={r}"),
                    Joint::Strip(s) => format!("strip L={}/R={}/G={}", s.lanes, s.rows, s.group),
                    Joint::Auto => "auto".to_string(),
                };
                line += &format!("  {name} {t:7.3} ({:5.2})", general / t);
            }
            say(line);
        }
    }
    Ok(format!(
        "{checked} cases same bits as the CPU; times in passes.log"
    ))
}
