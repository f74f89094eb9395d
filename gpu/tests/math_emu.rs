//! The device math routines, run in the PTX emulator:
//! agree bit for bit (a zero's sign included, NaN payloads aside) with the routine each one
//! transcribes: glibc's own, which the CPU and CPython's `math` call, or CPython's own
//! `math.hypot` and the exact operations, on special values and random inputs. Where this CPU does
//! not run the glibc builds transcribed, they are checked against CUDA's documented bounds instead.

use ndjit::math::MathFn;
use ndjit_gpu::math::{
    cpu_runs_glibc_fma_builds, emit, sample_args, sample_inputs, transcribes_glibc,
    ulp_diff as ulps,
};
use ndjit_gpu::pir::{emu::Emu, Module};

fn count() -> usize {
    std::env::var("NDJIT_MATH_SAMPLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if cfg!(debug_assertions) {
            3_000
        } else {
            40_000
        })
}

/// The routine the device transcribes, run on the CPU: the C library's own for glibc's
/// routines, `None` where this CPU cannot run the builds transcribed (off glibc, or without FMA:
/// the bound against the CPU still holds); CPython's hypot and the exact operations otherwise.
fn transcribed(f: MathFn, args: &[f64]) -> Option<f64> {
    if transcribes_glibc(f) && !cpu_runs_glibc_fma_builds() {
        return None;
    }
    Some(f.eval(args))
}

/// Bit-identical where the CPU runs the glibc builds the device transcribes. Elsewhere (another
/// libm, or glibc's builds without FMA) the CPU's own results differ from glibc's FMA builds in
/// the last bit, so the device is held to CUDA's documented bounds of them, and 3 ulp for tanh and
/// cbrt.
fn bound(f: MathFn) -> u64 {
    if transcribes_glibc(f) && cpu_runs_glibc_fma_builds() {
        return 0;
    }
    match f {
        MathFn::Tanh | MathFn::Cbrt | MathFn::NpTanh | MathFn::NpCbrt => 3,
        MathFn::Sin | MathFn::Cos | MathFn::Tan | MathFn::Pow | MathFn::Atan2 => 2,
        MathFn::Asin | MathFn::Acos | MathFn::Atan | MathFn::Sinh | MathFn::Cosh => 2,
        MathFn::Asinh | MathFn::Acosh | MathFn::Atanh => 2,
        MathFn::NpSinh | MathFn::NpAcosh | MathFn::NpLog10 => 2,
        _ => 1,
    }
}

#[test]
fn every_math_function_matches_its_algorithm_bit_for_bit_and_the_cpu_within_bounds() {
    let mut failures = Vec::new();
    let n = count();
    if !cpu_runs_glibc_fma_builds() {
        println!("this CPU's C library runs no glibc FMA builds: glibc's transcribed routines are checked against the bounds only");
    }
    // NDJIT_MATH_ONLY=exp,pow: a long run of a few functions.
    let only = std::env::var("NDJIT_MATH_ONLY").ok();
    let wanted = |f: MathFn| {
        only.as_ref()
            .is_none_or(|o| o.split(',').any(|n| n == f.name()))
    };
    // ndjit's own np.tanh & co. whatever this CPU (glibc's are checked as math.tanh & co.); the
    // only test of this binary, so no other test sees the setting.
    for f in ndjit::math::numpy_kernels::CHOICES {
        ndjit::math::numpy_kernels::set_accurate(f, true);
    }
    for &f in MathFn::ALL.iter().filter(|&&f| wanted(f)) {
        let mut m = Module::new((7, 8), 90);
        let name = emit(&mut m, f);
        let mut emu = Emu::new(&m);
        emu.step_limit = u64::MAX;
        let (mut bad, mut worst, mut worst_args) = (0, 0, vec![]);
        for sample in sample_inputs(f, n, 7 + f as u64) {
            let args = sample_args(f, sample);
            let got = emu
                .call(name, &args.iter().map(|v| v.to_bits()).collect::<Vec<_>>())
                .unwrap_or_else(|e| panic!("{name}({args:?}): {e}"));
            let got = f64::from_bits(got[0]);
            let want = transcribed(f, &args).unwrap_or(got);
            // Bit for bit: a zero's sign counts (0 ulp apart), a NaN's payload does not.
            if got.to_bits() != want.to_bits() && !(got.is_nan() && want.is_nan()) {
                bad += 1;
                if bad <= 3 {
                    failures.push(format!(
                        "{}({args:?}) = {got:e} ({:#x}), transcribed {want:e} ({:#x})",
                        f.name(),
                        got.to_bits(),
                        want.to_bits()
                    ));
                }
            }
            let d = ulps(got, f.eval(&args));
            if d > worst {
                (worst, worst_args) = (d, args.clone());
            }
        }
        println!(
            "{:<10} {n} inputs: {bad} differ from the transcribed algorithm; {worst} ulp from the CPU at most",
            f.name()
        );
        if bad > 0 {
            failures.push(format!("{}: {bad} of {n} differ", f.name()));
        }
        if worst > bound(f) {
            failures.push(format!(
                "{}: {worst} ulp from the CPU's at {worst_args:?}, above the bound of {}",
                f.name(),
                bound(f)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
