//! GPU stencil benchmarks (prints `SKIPPED` without a CUDA device): 8192² images, CUDA events
//! around each launch, medians of 20 runs after warm-up; the copy floor measured in the same run;
//! and the first-call latency (compile + codegen + module load + run on 1024²).
//!
//! `cargo bench -p ndjit-gpu --bench gpu_stencil` (set `CUDA_CACHE_DISABLE=1` so that the driver
//! compiles the PTX on the first call instead of reading its disk cache). `NDJIT_BENCH_ONLY=host`
//! runs only the host time per call (issue 13): what Rust spends queueing one call, split into
//! the pointer checks, the bare launch and the driver's resolution around it.

use ndjit_gpu::codegen::body::NetworkStyle;
use ndjit_gpu::codegen::separable::Joint;
use ndjit_gpu::{ArrayDesc, Dtype, Footprint, Gpu, GpuFilter, KernelSpec, Mode, Options, Tuning};
use std::sync::Arc;
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// Median ms of `reps` timed runs of `f` (after 3 warm-ups), each between two events.
fn time(gpu: &Gpu, reps: usize, mut f: impl FnMut()) -> f64 {
    for _ in 0..3 {
        f();
    }
    gpu.synchronize_own().unwrap();
    let (a, b) = (gpu.event().unwrap(), gpu.event().unwrap());
    let mut ts = Vec::with_capacity(reps);
    for _ in 0..reps {
        a.record(gpu.stream()).unwrap();
        f();
        b.record(gpu.stream()).unwrap();
        ts.push(a.elapsed_ms(&b).unwrap() as f64);
    }
    median(ts)
}

struct Bufs {
    input: ndjit_gpu::runtime::DeviceBuffer,
    output: ndjit_gpu::runtime::DeviceBuffer,
    err: ndjit_gpu::runtime::DeviceBuffer,
}

fn bufs(gpu: &Arc<Gpu>, n: usize, dt: Dtype, seed: u64) -> Bufs {
    let bytes = n * n * dt.itemsize();
    let input = gpu.alloc(bytes).unwrap();
    let mut s = seed | 1;
    let mut host = Vec::with_capacity(bytes);
    for _ in 0..n * n {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let u = (s >> 11) as f64 / (1u64 << 53) as f64;
        match dt {
            Dtype::F64 => host.extend(u.to_le_bytes()),
            Dtype::F32 => host.extend((u as f32).to_le_bytes()),
            _ => unreachable!(),
        }
    }
    unsafe {
        gpu.upload(input.ptr(), &host, gpu.cu_stream()).unwrap();
    }
    gpu.synchronize_own().unwrap();
    Bufs {
        input,
        output: gpu.alloc(bytes).unwrap(),
        err: gpu.alloc(1 << 12).unwrap(),
    }
}

/// Median µs of `calls` calls of `f`, the device idle before each (so a call never waits for a
/// full launch queue): the host's time to queue it.
fn host_us(gpu: &Gpu, calls: usize, mut f: impl FnMut()) -> f64 {
    let mut ts = Vec::with_capacity(calls);
    for _ in 0..calls + 10 {
        gpu.synchronize_own().unwrap();
        let t0 = Instant::now();
        f();
        ts.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    median(ts.split_off(10))
}

/// The host time of one queued call of Python's `min` over the 3×3 cross and the 5×5 median
/// (float64, `n`², on the device's own stream given as the caller's, so that a call that cannot
/// fail returns once queued), beside its parts: the two pointer checks the Python entry makes,
/// and the bare launch of the prepared kernel. NumPy's `np.min` would measure the kernel too:
/// its zero-sign guard can fail on doubles, and a call that can fail waits to report it (stop
/// 69's "resolution" of 404 µs for it was the kernel's time).
fn host_times(gpu: &Arc<Gpu>, n: usize, b: &Bufs) {
    let calls = 500;
    let desc = ArrayDesc::contiguous(Dtype::F64, &[n, n]);
    let (input, output) = (b.input.ptr(), b.output.ptr());
    let checks = host_us(gpu, calls, || {
        let a = Gpu::pointer_device(input).unwrap();
        let b = Gpu::pointer_device(output).unwrap();
        assert_eq!(a, b);
    });
    println!("host µs per call (medians of {calls}): pointer checks (2) {checks:.1}");
    for (name, src, fp) in [
        ("min, cross f64", "min(x)", Footprint::cross(2, 1)),
        (
            "median, 5x5 f64",
            "np.median(x)",
            Footprint::from_size(&[5, 5]),
        ),
    ] {
        let f = GpuFilter::compile(src, &ndjit::Bindings::new()).unwrap();
        let opts = Options::new(fp).mode(Mode::Reflect);
        let p = f
            .prepare(gpu, &desc, &desc, &opts, &Tuning::default())
            .unwrap();
        assert!(!p.kernel.can_fail, "{name}: a kernel that can fail waits");
        let stream = gpu.cu_stream();
        // SAFETY (both): our buffers, described by `desc`; the kernel cannot fail, so the error
        // pointer is never written.
        let bare = host_us(gpu, calls, || unsafe {
            p.launch(gpu, input, output, 0, stream).unwrap()
        });
        let full = host_us(gpu, calls, || unsafe {
            f.launch(gpu, input, &desc, output, &desc, &opts, Some(stream))
                .unwrap()
                .finish()
                .unwrap()
        });
        println!(
            "  {name}: bare launch {bare:.1}, whole call (resolve + launch) {full:.1}, resolution {:.1}",
            full - bare
        );
    }
}

/// A measured filter: its source, footprint and dtype, with the goal and CuPy's time (ms) that
/// the summary table quotes beside it.
struct Case {
    name: &'static str,
    src: &'static str,
    fp: Footprint,
    dt: Dtype,
    goal: f64,
    cupy: &'static str,
}

/// A row of the summary table: the case's name, the automatic choice's ms, the best request
/// ((V, R, other block?), "V×R" used, ms), the copy floor, the goal and CuPy's time.
type Row = (&'static str, f64, Best, f64, f64, &'static str);

/// The fastest of a case's requests: `((V, R, other block?), "V×R" used, ms)`.
type Best = ((u32, u32, bool), String, f64);

/// What the tuning loops try (from the environment): outputs (V) and rows (R) per thread, 0
/// being the automatic choice, and block shapes besides the planned one (`None`).
struct Requests {
    variants: Vec<u32>,
    row_variants: Vec<u32>,
    blocks: Vec<Option<(u32, u32)>>,
}

fn main() {
    // `cargo test --benches` passes `--bench`-less flags; a bare run or `--bench` runs everything.
    let gpu = match Gpu::get(0) {
        Ok(g) => g,
        Err(e) => {
            println!("SKIPPED: the GPU benchmarks need a CUDA GPU ({e})");
            return;
        }
    };
    let n: usize = std::env::var("NDJIT_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8192);
    let reps = 20;
    println!(
        "device: {}, {n}x{n}, medians of {reps} event-timed runs",
        gpu.name()
    );
    let f64b = bufs(&gpu, n, Dtype::F64, 7);
    host_times(&gpu, n, &f64b);
    if std::env::var("NDJIT_BENCH_ONLY").is_ok_and(|v| v == "host") {
        return;
    }
    let f32b = bufs(&gpu, n, Dtype::F32, 9);
    let (copy64, copy32) = copy_floors(&gpu, n, reps, (&f64b, &f32b));
    let requests = requests();
    let mut rows = Vec::new();
    // `NDJIT_BENCH_CASES=median,cross`: only the cases whose names hold one of these.
    let only = std::env::var("NDJIT_BENCH_CASES").unwrap_or_default();
    let wanted = |name: &str| only.is_empty() || only.split(',').any(|w| name.contains(w));
    for c in cases().iter().filter(|c| wanted(c.name)) {
        let b = if c.dt == Dtype::F64 { &f64b } else { &f32b };
        let (auto, best) = measure(&gpu, c, (b, n), reps, &requests);
        let floor = if c.dt == Dtype::F64 { copy64 } else { copy32 };
        rows.push((c.name, auto, best, floor, c.goal, c.cupy));
    }
    let firsts = first_calls(&gpu);
    print_summary(&gpu, n, rows, &firsts);
}

/// The copy floor (ms) of an `n`² image of float64 and of float32, printed with its bandwidth.
fn copy_floors(gpu: &Arc<Gpu>, n: usize, reps: usize, (f64b, f32b): (&Bufs, &Bufs)) -> (f64, f64) {
    let copy = |b: &Bufs, dt: Dtype| {
        let bytes = n * n * dt.itemsize();
        time(gpu, reps, || unsafe {
            gpu.copy(b.output.ptr(), b.input.ptr(), bytes, gpu.cu_stream())
                .unwrap()
        })
    };
    let copy64 = copy(f64b, Dtype::F64);
    let copy32 = copy(f32b, Dtype::F32);
    let gbs = |dt: Dtype, ms: f64| 2.0 * (n * n * dt.itemsize()) as f64 / ms / 1e6;
    println!(
        "copy floor: f64 {copy64:.3} ms ({:.0} GB/s), f32 {copy32:.3} ms ({:.0} GB/s)",
        gbs(Dtype::F64, copy64),
        gbs(Dtype::F32, copy32)
    );
    (copy64, copy32)
}

/// The filters measured, with their goals and CuPy's times where the guide gives them.
fn cases() -> [Case; 12] {
    [
        Case {
            name: "min, cross f64",
            src: "np.min(x)",
            fp: Footprint::cross(2, 1),
            dt: Dtype::F64,
            goal: 0.33,
            cupy: "1.14 (minimum_filter 1.06)",
        },
        Case {
            name: "min, 5x5 f64",
            src: "np.min(x)",
            fp: Footprint::from_size(&[5, 5]),
            dt: Dtype::F64,
            goal: 0.50,
            cupy: "3.96",
        },
        Case {
            name: "median, 5x5 f64",
            src: "np.median(x)",
            fp: Footprint::from_size(&[5, 5]),
            dt: Dtype::F64,
            goal: 2.0,
            cupy: "median_filter 13.7",
        },
        Case {
            name: "min, cross f32",
            src: "np.min(x)",
            fp: Footprint::cross(2, 1),
            dt: Dtype::F32,
            goal: 0.20,
            cupy: "0.97",
        },
        Case {
            name: "builtin min, cross f64",
            src: "min(x)",
            fp: Footprint::cross(2, 1),
            dt: Dtype::F64,
            goal: f64::NAN,
            cupy: "",
        },
        Case {
            name: "sum, 3x3 f64",
            src: "np.sum(x)",
            fp: Footprint::from_size(&[3, 3]),
            dt: Dtype::F64,
            goal: f64::NAN,
            cupy: "",
        },
        Case {
            name: "identity x[0] f64",
            src: "x[0]",
            fp: Footprint::from_size(&[1, 1]),
            dt: Dtype::F64,
            goal: f64::NAN,
            cupy: "",
        },
        Case {
            name: "identity x[0] f32",
            src: "x[0]",
            fp: Footprint::from_size(&[1, 1]),
            dt: Dtype::F32,
            goal: f64::NAN,
            cupy: "",
        },
        Case {
            name: "min, 5x5 f32",
            src: "np.min(x)",
            fp: Footprint::from_size(&[5, 5]),
            dt: Dtype::F32,
            goal: f64::NAN,
            cupy: "",
        },
        Case {
            name: "median, 3x3 f64",
            src: "np.median(x)",
            fp: Footprint::from_size(&[3, 3]),
            dt: Dtype::F64,
            goal: f64::NAN,
            cupy: "",
        },
        // Disks have no separable passes: the general kernel is their only path, and NumPy's
        // zero-sign guard over a register window of doubles spills there (ptxas).
        Case {
            name: "min, 7x7 disk f64",
            src: "np.min(x)",
            fp: Footprint::disk(3),
            dt: Dtype::F64,
            goal: f64::NAN,
            cupy: "",
        },
        Case {
            name: "range, 9x9 disk f64",
            src: "np.max(x) - np.min(x)",
            fp: Footprint::disk(4),
            dt: Dtype::F64,
            goal: f64::NAN,
            cupy: "",
        },
    ]
}

/// The requests to try: `NDJIT_BENCH_V` and `NDJIT_BENCH_R` (comma-separated counts), and
/// `NDJIT_BENCH_BLOCKS` ("64x4,16x16"; a tuning experiment).
fn requests() -> Requests {
    let list = |var: &str, default: Vec<u32>| -> Vec<u32> {
        std::env::var(var)
            .ok()
            .map(|v| v.split(',').filter_map(|x| x.parse().ok()).collect())
            .unwrap_or(default)
    };
    let mut blocks: Vec<Option<(u32, u32)>> = vec![None];
    for b in std::env::var("NDJIT_BENCH_BLOCKS")
        .unwrap_or_default()
        .split(',')
    {
        if let Some((x, y)) = b.split_once('x') {
            if let (Ok(x), Ok(y)) = (x.parse(), y.parse()) {
                blocks.push(Some((x, y)));
            }
        }
    }
    Requests {
        variants: list("NDJIT_BENCH_V", vec![0, 1, 2, 4]),
        row_variants: list("NDJIT_BENCH_R", vec![0]),
        blocks,
    }
}

/// Times the general kernel of case `c` on the `n`² buffers `b` under every request (each
/// network style for medians), printing each; returns the automatic choice's ms and the best.
fn measure(
    gpu: &Arc<Gpu>,
    c: &Case,
    (b, n): (&Bufs, usize),
    reps: usize,
    req: &Requests,
) -> (f64, Best) {
    let f = GpuFilter::compile(c.src, &ndjit::Bindings::new()).unwrap();
    let desc = ArrayDesc::contiguous(c.dt, &[n, n]);
    let styles: &[NetworkStyle] = if c.src.contains("median") {
        &[
            NetworkStyle::Select,
            NetworkStyle::IntKey,
            NetworkStyle::HighKey,
        ]
    } else {
        &[NetworkStyle::Select]
    };
    // (automatic?, "V×R" used, ms): the fastest network style per (V, R) request.
    let mut results: Vec<Best> = Vec::new();
    for (&v, &r, &style) in req.variants.iter().flat_map(|v| {
        req.row_variants
            .iter()
            .flat_map(move |r| styles.iter().map(move |s| (v, r, s)))
    }) {
        let opts = Options::new(c.fp.clone()).mode(Mode::Reflect);
        let tuning = Tuning {
            outputs_per_thread: v,
            rows_per_thread: r,
            network: style,
            // `prepare` times the general kernel (one launch).
            separable: Some(false),
            pass_outputs: 0,
            joint: Joint::Auto,
        };
        let mut p = match f.prepare(gpu, &desc, &desc, &opts, &tuning) {
            Ok(p) => p,
            Err(e) => {
                println!("{} V={v} R={r}: {e}", c.name);
                continue;
            }
        };
        for &block in &req.blocks {
            if let Some(b) = block {
                p.block = b;
                p.grid = ndjit_gpu::plan::grid(&p.geometry, &p.kernel, b);
            }
            unsafe {
                gpu.memset(b.err.ptr(), 0xff, p.err_bytes(), gpu.cu_stream())
                    .unwrap()
            };
            let ms = time(gpu, reps, || unsafe {
                p.launch(
                    gpu,
                    b.input.ptr(),
                    b.output.ptr(),
                    b.err.ptr(),
                    gpu.cu_stream(),
                )
                .unwrap()
            });
            let used = format!(
                "{}×{}",
                p.kernel.outputs_per_thread, p.kernel.rows_per_thread
            );
            println!(
                "  {:<24} {style:?} V={v} R={r} block {:?} ({used} used): {ms:.3} ms, {} regs, {} B local",
                c.name, p.block, p.module.registers, p.module.local_bytes
            );
            let key = (v, r, block.is_some());
            match results.iter_mut().find(|x| x.0 == key) {
                Some(x) if x.2 <= ms => {}
                Some(x) => *x = (key, used, ms),
                None => results.push((key, used, ms)),
            }
        }
    }
    let auto = results
        .iter()
        .find(|x| x.0 == (0, 0, false))
        .map(|x| x.2)
        .unwrap_or(f64::NAN);
    let best =
        results
            .iter()
            .cloned()
            .fold(((0, 0, false), String::new(), f64::INFINITY), |a, x| {
                if x.2 < a.2 {
                    x
                } else {
                    a
                }
            });
    (auto, best)
}

/// First calls: a filter never seen before, compiled, generated, loaded and run on 1024², three
/// times, each printed by phase; returns their total ms.
fn first_calls(gpu: &Arc<Gpu>) -> Vec<f64> {
    let m = 1024;
    let small = bufs(gpu, m, Dtype::F64, 3);
    let desc = ArrayDesc::contiguous(Dtype::F64, &[m, m]);
    let mut firsts = Vec::new();
    for k in 0..3 {
        let src = format!("np.min(x) + {}.{k}5", 17 + k);
        let t0 = Instant::now();
        let f = GpuFilter::compile(&src, &ndjit::Bindings::new()).unwrap();
        let t_compile = t0.elapsed();
        let opts = Options::new(Footprint::cross(2, 1));
        let spec = KernelSpec {
            shape: vec![3, 3],
            mask: vec![false, true, false, true, true, true, false, true, false],
            target: gpu.target(),
            ..KernelSpec::boxed(2, 3)
        };
        let kernel = f.kernel(&spec).unwrap();
        let ptx = kernel.module.to_ptx();
        let t_codegen = t0.elapsed();
        let _module = gpu.load(&ptx, &[ndjit_gpu::codegen::ENTRY]).unwrap();
        let t_load = t0.elapsed();
        unsafe {
            f.run_raw(
                gpu,
                small.input.ptr(),
                &desc,
                small.output.ptr(),
                &desc,
                &opts,
                None,
            )
            .unwrap()
        };
        let t_run = t0.elapsed();
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        println!(
            "  first call {k}: compile {:.1} ms, + specialise & codegen {:.1} ms, + module load {:.1} ms, + run & sync {:.1} ms = {:.1} ms ({} PTX lines)",
            ms(t_compile),
            ms(t_codegen - t_compile),
            ms(t_load - t_codegen),
            ms(t_run - t_load),
            ms(t_run),
            ptx.lines().count()
        );
        firsts.push(ms(t_run));
    }
    firsts
}

/// The summary table in Markdown.
fn print_summary(gpu: &Gpu, n: usize, rows: Vec<Row>, firsts: &[f64]) {
    println!("\n== ndjit-gpu on {} ({n}x{n}; ms, medians) ==", gpu.name());
    println!("| filter | ndjit auto | ndjit best (V×R) | goal | copy floor | % of copy bw (best) | CuPy (GUIDE) |");
    println!("|---|---|---|---|---|---|---|");
    for (name, auto, best, floor, goal, cupy) in rows {
        let goal = if goal.is_nan() {
            "".to_string()
        } else {
            format!("≤ {goal:.2}")
        };
        println!(
            "| {name} | {auto:.3} | {:.3} ({}) | {goal} | {floor:.3} | {:.0}% | {cupy} |",
            best.2,
            best.1,
            100.0 * floor / best.2
        );
    }
    println!("| first call 1024² (compile+codegen+load+run) | {:.1} ms median of {:?} | | ≤ 50 ms | | | 1100-1600 ms |", median(firsts.to_vec()), firsts.iter().map(|v| (v * 10.0).round() / 10.0).collect::<Vec<_>>());
}
