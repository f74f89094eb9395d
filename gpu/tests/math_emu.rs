//! The device math routines, run in the PTX emulator, agree with the CPU's `libm` bit for bit
//! (NaN payloads aside) on special values and random inputs.

use ndjit::math::MathFn;
use ndjit_gpu::math::{emit, sample_inputs};
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

#[test]
fn every_math_function_matches_libm_bit_for_bit() {
    let mut failures = Vec::new();
    let n = count();
    for &f in MathFn::ALL {
        let mut m = Module::new((7, 8), 90);
        let name = emit(&mut m, f);
        let mut emu = Emu::new(&m);
        emu.step_limit = u64::MAX;
        let mut bad = 0;
        for (a, b) in sample_inputs(f, n, 7 + f as u64) {
            let args: Vec<f64> = if f.arity() == 2 { vec![a, b] } else { vec![a] };
            let want = f.eval(&args);
            let got = emu
                .call(name, &args.iter().map(|v| v.to_bits()).collect::<Vec<_>>())
                .unwrap_or_else(|e| panic!("{name}({args:?}): {e}"));
            let got = f64::from_bits(got[0]);
            if !(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan())) {
                bad += 1;
                if bad <= 3 {
                    failures.push(format!(
                        "{}({args:?}) = {got:e} ({:#x}), libm {want:e} ({:#x})",
                        f.name(),
                        got.to_bits(),
                        want.to_bits()
                    ));
                }
            }
        }
        if bad > 0 {
            failures.push(format!("{}: {bad} of {n} differ", f.name()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
