//! Every kernel the corpus generates assembles with NVIDIA's ptxas, for sm_90 and for the portable
//! target (sm_75, PTX 7.0), and so does the kernel of every input × output dtype pair. ptxas comes
//! from the PyPI wheel `nvidia-cuda-nvcc-cu12` (or `$NDJIT_PTXAS`); without it each test prints
//! `SKIPPED` and passes, except under CI (`$CI` set, as `.ci/run` does), where a missing ptxas
//! fails them: there a pass must mean the kernels were assembled.

mod common;

use common::{assemble, find_ptxas, selected, with};
use ndjit::math::MathFn;
use ndjit_gpu::codegen::{generate, Dtype, Kernel, KernelSpec, Mode, Target};
use std::sync::Mutex;

fn ptxas_or_skip() -> Option<std::path::PathBuf> {
    let p = find_ptxas();
    if p.is_none() {
        let why = "ptxas not found (pip install nvidia-cuda-nvcc-cu12, or set NDJIT_PTXAS)";
        assert!(std::env::var_os("CI").is_none(), "CI is set and {why}");
        println!("SKIPPED: {why}");
    }
    p
}

/// One module per program and target with all its kernels (stencil and replay, every mode, f64
/// and f32) renamed apart: the shared math routines are assembled once per module.
#[test]
fn corpus_kernels_assemble_for_sm90_and_portable() {
    let Some(ptxas) = ptxas_or_skip() else { return };
    let corpus = common::corpus();
    let mut jobs = Vec::new();
    for p in selected(&corpus) {
        for target in [Target::SM90, Target::PORTABLE] {
            jobs.push((p, target));
        }
    }
    let total = jobs.len();
    let kernels = std::sync::atomic::AtomicUsize::new(0);
    let jobs = Mutex::new(jobs);
    let failures = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(8);
    std::thread::scope(|s| {
        for t in 0..threads {
            let (jobs, failures, ptxas, kernels) = (&jobs, &failures, &ptxas, &kernels);
            s.spawn(move || loop {
                let Some((p, target)) = jobs.lock().unwrap().pop() else {
                    break;
                };
                let b = common::bindings(p);
                let mut module = ndjit_gpu::pir::Module::new(target.version, target.sm);
                let mut err = None;
                for mode in Mode::APPLIED {
                    for dt in [Dtype::F64, Dtype::F32] {
                        let spec = with(&common::geometries()[0].2, mode, dt, dt, target);
                        let f = ndjit::Filter::builder(&p.source)
                            .bindings(&b)
                            .filter_size(spec.filter_size())
                            .compile()
                            .unwrap();
                        match generate(
                            f.specialized_ir().unwrap(),
                            f.layout(),
                            f.bound_values(),
                            &spec,
                        ) {
                            Ok(k) => {
                                let tag = format!("_{}_{}", mode.name(), dt.name());
                                module.merge(&k.module, |n| format!("{n}{tag}"));
                                module.merge(&k.replay, |n| format!("{n}{tag}"));
                                kernels.fetch_add(2, std::sync::atomic::Ordering::Relaxed);
                            }
                            Err(e) => {
                                err = Some(format!(
                                    "{} [{}, {}]: codegen: {e}",
                                    p.name,
                                    mode.name(),
                                    dt.name()
                                ))
                            }
                        }
                    }
                }
                let r = assemble(ptxas, &module.to_ptx(), target.sm, &format!("t{t}"));
                let mut fl = failures.lock().unwrap();
                if let Some(e) = err {
                    fl.push(e);
                }
                if let Err(e) = r {
                    fl.push(format!(
                        "{} [sm_{}]: {}",
                        p.name,
                        target.sm,
                        e.lines().take(6).collect::<Vec<_>>().join(" | ")
                    ));
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    println!(
        "{} kernels in {total} modules assembled",
        kernels.into_inner()
    );
    assert!(
        failures.is_empty(),
        "{} of {total} modules rejected, first 10:\n{}",
        failures.len(),
        failures
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn every_math_routine_assembles() {
    let Some(ptxas) = ptxas_or_skip() else { return };
    for target in [Target::SM90, Target::PORTABLE] {
        let mut failures = Vec::new();
        for &f in MathFn::ALL {
            let m = ndjit_gpu::math::test_module(f, target.version, target.sm);
            if let Err(e) = assemble(&ptxas, &m.to_ptx(), target.sm, "math") {
                failures.push(format!(
                    "{} sm_{}: {}",
                    f.name(),
                    target.sm,
                    e.lines().take(8).collect::<Vec<_>>().join(" | ")
                ));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}

/// The kernels of every input dtype into float64 and float32 outputs and of float64 and float32
/// into every output dtype: each type's loads, conversions and cast, and every vector load and
/// store shape (the element sizes decide them), one module per target.
#[test]
fn every_dtype_pair_assembles() {
    let Some(ptxas) = ptxas_or_skip() else { return };
    for target in [Target::SM90, Target::PORTABLE] {
        let mut module = ndjit_gpu::pir::Module::new(target.version, target.sm);
        let floats = [Dtype::F64, Dtype::F32];
        let pairs = Dtype::ALL
            .iter()
            .flat_map(|&d| floats.map(|f| [(d, f), (f, d)]));
        for (i, o) in pairs.flatten() {
            let k = box_kernel("np.min(x) + x[4] * 0.5", 3, Mode::Reflect, (i, o), target);
            let tag = format!("_{i}_{o}");
            module.merge(&k.module, |n| format!("{n}{tag}"));
            module.merge(&k.replay, |n| format!("{n}{tag}"));
        }
        assembled(&ptxas, &module, "dtypes");
    }
}

/// The separable passes of box minima, maxima and ranges (with the patch kernel for floats)
/// assemble for every input dtype, every mode and both targets, as a kernel per pass and as the
/// tile and strip kernels that join the column and row passes; at 31×31 they spill nothing.
#[test]
fn separable_passes_assemble_for_every_dtype_and_mode() {
    use ndjit_gpu::{GpuFilter, Options, Tuning};
    let Some(ptxas) = ptxas_or_skip() else { return };
    use ndjit_gpu::codegen::separable::{Joint, Strip};
    let forced = |joint| Tuning {
        separable: Some(true),
        joint,
        ..Tuning::default()
    };
    // A kernel per pass, a tile or a strip kernel: how each module is recognised.
    let strip = Joint::Strip(Strip {
        lanes: 4,
        rows: 64,
        group: 16,
    });
    let kinds = [
        (Joint::Kernels, "ndjit_pass1"),
        (Joint::Tile(4), "ndjit_rows0"),
        (strip, "ndjit_ring0"),
    ];
    let min = GpuFilter::compile("np.min(x)", &ndjit::Bindings::new()).unwrap();
    let max = GpuFilter::compile("max(x)", &ndjit::Bindings::new()).unwrap();
    let range = GpuFilter::compile("max(x) - min(x)", &ndjit::Bindings::new()).unwrap();
    let boxed = |k: usize, mode: Mode| Options {
        mode,
        cval: 1.0,
        ..Options::new(ndjit_gpu::Footprint::from_size(&[k, k]))
    };
    let mut n = 0;
    for target in [Target::SM90, Target::PORTABLE] {
        for (i, &dt) in Dtype::ALL.iter().enumerate() {
            let (f, mode) = match i % 3 {
                0 => (&min, Mode::Constant),
                1 => (&max, Mode::Reflect),
                _ => (&range, Mode::Mirror),
            };
            for (tile, mark) in kinds {
                let ptx = f
                    .ptx_tuned(&boxed(3, mode), 2, (dt, Dtype::F64), target, forced(tile))
                    .unwrap();
                assert!(ptx.contains(mark), "{dt} {tile:?}: not planned so");
                let name = format!("passes_{dt}_{}_{mark}", target.sm);
                assemble(&ptxas, &ptx, target.sm, &name).unwrap_or_else(|e| panic!("{name}: {e}"));
                n += 1;
            }
        }
    }
    for mode in [Mode::Mirror, Mode::Nearest, Mode::Wrap] {
        for (tile, mark) in kinds {
            let ptx = min
                .ptx_tuned(
                    &boxed(5, mode),
                    2,
                    (Dtype::F32, Dtype::F32),
                    Target::SM90,
                    forced(tile),
                )
                .unwrap();
            let name = format!("passes_{}_{mark}", mode.name());
            assemble(&ptxas, &ptx, 90, &name).unwrap();
            n += 1;
        }
    }
    // Two kernels, and a tile or a strip asked for (the automatic choice takes two kernels
    // at 31×31).
    for (tile, entries) in [
        (Joint::Kernels, &["ndjit_pass0", "ndjit_pass1"][..]),
        (Joint::Tile(8), &["ndjit_pass0"][..]),
        (strip, &["ndjit_pass0"][..]),
    ] {
        for dt in [Dtype::F64, Dtype::F32, Dtype::U8] {
            let ptx = min
                .ptx_tuned(
                    &boxed(31, Mode::Reflect),
                    2,
                    (dt, dt),
                    Target::SM90,
                    Tuning {
                        joint: tile,
                        ..Tuning::default()
                    },
                )
                .unwrap();
            assert_eq!(
                ptx.contains(".shared"),
                tile != Joint::Kernels,
                "{dt} {tile:?}"
            );
            // The float64 strip's rings (63 KiB) are the launch's dynamic shared memory.
            assert_eq!(
                ptx.contains(".extern .shared"),
                tile == strip && dt == Dtype::F64,
                "{dt} {tile:?}"
            );
            let log = assemble(&ptxas, &ptx, 90, "passes_31").unwrap();
            for e in entries {
                let (regs, stores, loads) = resources(&log, e);
                println!("{e} {dt} {tile:?} 31x31: {regs} registers, spills {stores} B stored, {loads} B loaded");
                assert!(regs > 0, "{e} not in ptxas's report");
                assert_eq!((stores, loads), (0, 0), "{e} {dt} spills");
            }
        }
    }
    assert_eq!(n, 3 * (2 * Dtype::ALL.len() + 3));
}

/// Past a register window's worth of taps, general callbacks read their taps from memory: ptxas
/// allocates them a bounded number of registers and spills nothing, however wide the window (the
/// register window spilled from 7×7 on, up to 110 kB of spill loads per thread at 31×31).
#[test]
fn large_windows_neither_spill_nor_grow_in_registers() {
    let Some(ptxas) = ptxas_or_skip() else { return };
    let mut module = ndjit_gpu::pir::Module::new(Target::SM90.version, Target::SM90.sm);
    let mut entries = Vec::new();
    // A second reduction over the taps after a minimum: unrolled, an `any` took 255 registers
    // and spilled from 11×11 (NumPy's `np.min` carries two in its zero-sign guard,
    // `ndjit::ir::zero_signs`); past the window's taps it runs as a loop, which ptxas must not
    // unroll (at 9×9 it did, and kept an edge output's copy of the taps in 195 registers).
    let cases = [
        ("min", "min(x)"),
        ("max", "max(x)"),
        ("mean", "np.mean(x)"),
        ("nanmean", "np.nanmean(x)"),
        ("min_any", "min(x) + np.any(x == 0.0)"),
        ("numpy_min", "np.min(x) * 2.0"),
    ];
    for (name, src) in cases {
        for (dt, sizes) in [
            (Dtype::F64, &[9, 11, 15, 31][..]),
            (Dtype::F32, &[9, 31][..]),
        ] {
            for &k in sizes {
                let kern = box_kernel(src, k, Mode::Reflect, (dt, dt), Target::SM90);
                let tag = format!("_{name}_{dt}_{k}");
                module.merge(&kern.module, |n| format!("{n}{tag}"));
                entries.push(format!("ndjit_stencil{tag}"));
            }
        }
    }
    // The portable target too, with a body that indexes the taps at run time (a sort).
    let mut portable = ndjit_gpu::pir::Module::new(Target::PORTABLE.version, Target::PORTABLE.sm);
    for (src, k) in [("np.nanmean(x)", 31), ("np.median(x)", 15)] {
        let dts = (Dtype::U16, Dtype::F32);
        let kern = box_kernel(src, k, Mode::Mirror, dts, Target::PORTABLE);
        portable.merge(&kern.module, |n| format!("{n}_{k}"));
    }
    assembled(&ptxas, &portable, "windows75");
    let log = assembled(&ptxas, &module, "windows");
    for e in &entries {
        let (regs, spill_stores, spill_loads) = resources(&log, e);
        println!("{e}: {regs} registers, spills {spill_stores} B stored, {spill_loads} B loaded");
        assert!(regs > 0 && regs <= 96, "{e}: {regs} registers");
        assert_eq!((spill_stores, spill_loads), (0, 0), "{e} spills");
    }
}

/// The median kernel (`separable::select`) assembles for every input dtype, every mode and both
/// targets, odd and even boxes, and with the patch kernel for quantiles and `np.sort(x)[k]`; at
/// 31×31 and 64×64 (dynamic shared memory past 48 KiB), and over disks of 15×15 and 31×31 (also
/// for their minima and ranges), it spills nothing.
#[test]
fn median_kernels_assemble_for_every_dtype_and_mode() {
    use ndjit_gpu::{GpuFilter, Options, Tuning};
    let Some(ptxas) = ptxas_or_skip() else { return };
    let median = GpuFilter::compile("np.median(x)", &ndjit::Bindings::new()).unwrap();
    let boxed = |k: [usize; 2], mode: Mode| Options {
        mode,
        cval: 1.0,
        ..Options::new(ndjit_gpu::Footprint::from_size(&k))
    };
    let modes = [Mode::Constant, Mode::Reflect, Mode::Wrap];
    let mut n = 0;
    for target in [Target::SM90, Target::PORTABLE] {
        for (i, &dt) in Dtype::ALL.iter().enumerate() {
            let size = if i % 2 == 0 { [3, 3] } else { [4, 6] };
            let ptx = median
                .ptx_tuned(
                    &boxed(size, modes[i % 3]),
                    2,
                    (dt, Dtype::F64),
                    target,
                    Tuning::default(),
                )
                .unwrap();
            assert!(!ptx.contains("ndjit_keys"), "{dt}: the networks' size");
            let forced = Tuning {
                separable: Some(true),
                ..Tuning::default()
            };
            let ptx = median
                .ptx_tuned(
                    &boxed(size, modes[i % 3]),
                    2,
                    (dt, Dtype::F64),
                    target,
                    forced,
                )
                .unwrap();
            assert!(ptx.contains("ndjit_keys"), "{dt}: not the median kernel");
            let name = format!("median_{dt}_{}", target.sm);
            assemble(&ptxas, &ptx, target.sm, &name).unwrap_or_else(|e| panic!("{name}: {e}"));
            n += 1;
        }
    }
    assert_eq!(n, 2 * Dtype::ALL.len());
    // Quantiles and `np.sort(x)[k]` of floats, with their patch kernels and its flags.
    for source in ["np.percentile(x, 30)", "np.sort(x)[3]"] {
        let f = GpuFilter::compile(source, &ndjit::Bindings::new()).unwrap();
        for dt in [Dtype::F32, Dtype::F64] {
            let ptx = f
                .ptx_tuned(
                    &boxed([13, 13], Mode::Reflect),
                    2,
                    (dt, dt),
                    Target::SM90,
                    Tuning::default(),
                )
                .unwrap();
            assert!(
                ptx.contains("ndjit_keys") && ptx.contains("ndjit_patch"),
                "{source} {dt}"
            );
            assemble(&ptxas, &ptx, 90, "sorted_patched")
                .unwrap_or_else(|e| panic!("{source}: {e}"));
        }
    }
    for (k, dynamic) in [(31, false), (64, true)] {
        for dt in [Dtype::F64, Dtype::F32, Dtype::U8] {
            let ptx = median
                .ptx_tuned(
                    &boxed([k, k], Mode::Reflect),
                    2,
                    (dt, dt),
                    Target::SM90,
                    Tuning::default(),
                )
                .unwrap();
            assert_eq!(
                ptx.contains(".extern .shared"),
                dynamic && dt == Dtype::F64,
                "{dt} {k}"
            );
            let log = assemble(&ptxas, &ptx, 90, "median_large").unwrap();
            let (regs, stores, loads) = resources(&log, "ndjit_pass0");
            println!(
                "median {dt} {k}x{k}: {regs} registers, spills {stores} B stored, {loads} B loaded"
            );
            assert!(regs > 0, "not in ptxas's report");
            assert_eq!((stores, loads), (0, 0), "{dt} {k}x{k} spills");
        }
    }
    // Disks past the sorting networks, and their extremes past the register window: every cell
    // unrolled (`select::MASKED_CELLS`), and still nothing spills.
    let min = GpuFilter::compile("np.min(x)", &ndjit::Bindings::new()).unwrap();
    let range = GpuFilter::compile("np.max(x) - np.min(x)", &ndjit::Bindings::new()).unwrap();
    let select = Tuning {
        separable: Some(true),
        ..Tuning::default()
    };
    for (name, f) in [("median", &median), ("min", &min), ("range", &range)] {
        for r in [7, 15] {
            let disk = Options {
                mode: Mode::Reflect,
                ..Options::new(ndjit_gpu::Footprint::disk(r))
            };
            for dt in [Dtype::F64, Dtype::F32, Dtype::U8] {
                let ptx = f
                    .ptx_tuned(&disk, 2, (dt, dt), Target::SM90, select)
                    .unwrap();
                assert!(
                    ptx.contains("ndjit_keys"),
                    "{name} {dt} disk {r}: not selected"
                );
                let log = assemble(&ptxas, &ptx, 90, "select_disk").unwrap();
                let (regs, stores, loads) = resources(&log, "ndjit_pass0");
                println!("{name} {dt} disk of radius {r}: {regs} registers, spills {stores} B stored, {loads} B loaded");
                assert!(regs > 0, "not in ptxas's report");
                assert_eq!((stores, loads), (0, 0), "{name} {dt} disk {r} spills");
            }
        }
    }
}

/// Box medians of 16-bit values under PTX ISA 8.0 run two pairs of outputs in 16-bit lanes
/// (`stencil::median_hints`): ptxas takes `min.u16x2`/`min.s16x2`, and up to 9×9 nothing spills.
#[test]
fn medians_in_16_bit_lanes_assemble_without_spills() {
    let Some(ptxas) = ptxas_or_skip() else { return };
    for (dt, lanes) in [
        (Dtype::U8, "u16x2"),
        (Dtype::I16, "s16x2"),
        (Dtype::Bool, "u16x2"),
    ] {
        for k in [5, 9] {
            let kern = box_kernel(
                "np.median(x)",
                k,
                Mode::Reflect,
                (dt, dt),
                common::SM90_PTX80,
            );
            let ptx = kern.module.to_ptx();
            assert!(
                ptx.contains(&format!("min.{lanes}")),
                "{dt} {k}x{k}: no lanes"
            );
            let log = assemble(&ptxas, &ptx, 90, "median_lanes").unwrap();
            let (regs, stores, loads) = resources(&log, ndjit_gpu::codegen::ENTRY);
            println!("median {dt} {k}x{k} in lanes: {regs} registers");
            assert!(regs > 0, "not in ptxas's report");
            assert_eq!((stores, loads), (0, 0), "{dt} {k}x{k} spills");
        }
    }
}

/// Box medians of doubles from 5×5 run their networks on 32-bit keys of the high words
/// (`NetworkStyle::HighKey`, the default): ptxas takes the keys' `min.s32` and the low words'
/// `min.u32`, and nothing spills up to 7×7 at the two outputs a thread the kernel chooses.
#[test]
fn medians_of_doubles_by_keys_assemble_without_spills() {
    let Some(ptxas) = ptxas_or_skip() else { return };
    for target in [Target::SM90, Target::PORTABLE] {
        for k in [5, 7] {
            let kern = box_kernel(
                "np.median(x)",
                k,
                Mode::Reflect,
                (Dtype::F64, Dtype::F64),
                target,
            );
            let ptx = kern.module.to_ptx();
            // The networks' comparators (a mode's coordinates take a few `min.s32` too), and
            // the low words' scan.
            let keyed = ptx.matches("min.s32").count() + ptx.matches("max.s32").count();
            assert!(
                keyed >= 100 && ptx.contains("min.u32"),
                "{k}x{k}: {keyed} key steps"
            );
            let log = assemble(&ptxas, &ptx, target.sm, "median_keys").unwrap();
            let (regs, stores, loads) = resources(&log, ndjit_gpu::codegen::ENTRY);
            println!(
                "median f64 {k}x{k} sm_{} by keys: {regs} registers",
                target.sm
            );
            assert!(regs > 0, "not in ptxas's report");
            assert_eq!((stores, loads), (0, 0), "{k}x{k} spills");
        }
    }
}

/// NumPy's min and max over a disk or a cross of a float32, uint8 or float64 image (the general
/// kernel on a register window). float32's zero-sign guard's branch reads its taps from the
/// image, so the window need not outlive the hot code: with the branch reading the window, a 7×7
/// disk's range spilled 2064 bytes (float32) and 1568 (uint8), now 28 and 0; a 5×5 disk's 72 and
/// 84 and a 7×7 cross's 84 and 204, now nothing. uint8 has no guard (its values are never `-0.0`:
/// `ir::BufferValues`). Doubles and 9×9 disks take the narrower uncapped tile where the capped
/// 4×3's window does not fit.
#[test]
fn guarded_minima_over_disks_and_crosses_assemble_without_spills() {
    let Some(ptxas) = ptxas_or_skip() else { return };
    let disk = |r: i64| -> Vec<bool> {
        let n = 2 * r + 1;
        (0..n * n)
            .map(|i| (i / n - r).pow(2) + (i % n - r).pow(2) <= r * r)
            .collect()
    };
    let cross = |r: i64| -> Vec<bool> {
        let n = 2 * r + 1;
        (0..n * n).map(|i| i / n == r || i % n == r).collect()
    };
    for (name, mask, most) in [
        ("disk", disk(4), 0),
        ("disk", disk(3), 32),
        ("disk", disk(2), 0),
        ("cross", cross(3), 0),
    ] {
        let n = (mask.len() as f64).sqrt() as usize;
        // Doubles: a 7×7 disk's `np.min` spilled 828 bytes and a 9×9 disk's range 4504 in the
        // capped 4×3 tile, whose window did not fit (`stencil::tile_fits`).
        for dt in [Dtype::F32, Dtype::U8, Dtype::F64] {
            for src in ["np.max(x) - np.min(x)", "np.min(x)"] {
                let f = ndjit::Filter::builder(src)
                    .filter_size(mask.iter().filter(|&&m| m).count())
                    .compile()
                    .unwrap();
                let mut spec = with(
                    &KernelSpec::boxed(2, n),
                    Mode::Reflect,
                    dt,
                    dt,
                    Target::SM90,
                );
                spec.mask = mask.clone();
                let kern = generate(
                    f.specialized_ir().unwrap(),
                    f.layout(),
                    f.bound_values(),
                    &spec,
                )
                .unwrap_or_else(|e| panic!("{src} {name} {dt}: {e}"));
                let log = assemble(&ptxas, &kern.module.to_ptx(), 90, "guarded").unwrap();
                let (regs, stores, loads) = resources(&log, ndjit_gpu::codegen::ENTRY);
                let what = format!("{src} over a {n}x{n} {name}, {dt}");
                println!("{what}: {regs} registers, spills {stores} B stored, {loads} B loaded");
                assert!(regs > 0, "not in ptxas's report");
                assert!(stores <= most && loads <= most, "{what}: spills");
            }
        }
    }
}

/// ptxas's log for `module` (for its own target); panics with ptxas's first lines if rejected.
fn assembled(ptxas: &std::path::Path, module: &ndjit_gpu::pir::Module, tag: &str) -> String {
    assemble(ptxas, &module.to_ptx(), module.target, tag).unwrap_or_else(|e| {
        let head: Vec<&str> = e.lines().take(12).collect();
        panic!("{tag} for sm_{}: {}", module.target, head.join("\n"))
    })
}

/// The kernel of `src` over a k×k box.
fn box_kernel(src: &str, k: usize, mode: Mode, (i, o): (Dtype, Dtype), target: Target) -> Kernel {
    let f = ndjit::Filter::builder(src)
        .filter_size(k * k)
        .compile()
        .unwrap();
    let spec = with(&KernelSpec::boxed(2, k), mode, i, o, target);
    generate(
        f.specialized_ir().unwrap(),
        f.layout(),
        f.bound_values(),
        &spec,
    )
    .unwrap_or_else(|e| panic!("{src} {k}x{k} {i} -> {o}: {e}"))
}

/// ptxas's report for kernel `entry`: registers, spill stores and spill loads (bytes).
fn resources(log: &str, entry: &str) -> (u32, u32, u32) {
    let lines: Vec<&str> = log
        .lines()
        .skip_while(|l| !l.contains(&format!("'{entry}'")))
        .take(5)
        .collect();
    // The number just before `key` on the line that has it.
    let num = |key: &str| -> u32 {
        let line = lines.iter().find(|l| l.contains(key)).unwrap_or(&"");
        let before = line[..line.find(key).unwrap_or(0)].trim_end();
        let digits = before.rsplit(|c: char| !c.is_ascii_digit()).next();
        digits.and_then(|n| n.parse().ok()).unwrap_or(0)
    };
    (
        num("registers"),
        num("bytes spill stores"),
        num("bytes spill loads"),
    )
}
