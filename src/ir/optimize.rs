//! The optimisation pipeline, run on lowered IR by every backend's caller.
//!
//! Lowering produces correct but naive IR; [`optimize`] runs the passes named. Each pass is exact
//! (it evaluates through [`super::eval`], the interpreter's definitions), so which passes ran never
//! changes a result, only the code. Specialising to a footprint size or baking bound values in
//! ([`super::substitute`]) happens on the *lowered* IR, before optimising: folding then sees the
//! constants, and runs before the median networks exist (refolding expanded networks is
//! exponential).

use super::Func;

/// One optimisation pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// Constant folding, propagation, unrolling and the exact rewrites of [`super::fold`].
    Fold,
    /// Medians of a known length become sorting networks ([`super::network`]).
    MedianNetworks,
    /// Sorts of arrays that hold the taps in order are marked so ([`mod@super::sorts_of_taps`]).
    SortsOfTaps,
}

/// Every pass, in the order the compilers run them.
pub const ALL: &[Pass] = &[Pass::Fold, Pass::MedianNetworks, Pass::SortsOfTaps];

/// `func` with `passes` applied in order.
pub fn optimize(mut func: Func, passes: &[Pass]) -> Func {
    for pass in passes {
        match pass {
            Pass::Fold => super::fold::fold(&mut func),
            Pass::MedianNetworks => super::network::expand_medians(&mut func),
            Pass::SortsOfTaps => super::sorts_of_taps::mark(&mut func),
        }
    }
    func
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Expr, Stmt};
    use crate::{Bindings, Filter};

    const LOOP: &str = "def f(x):\n    s = 0.0\n    for i in range(len(x)):\n        if x[i] > 0.5:\n            s += x[i] * 2.0\n    return s";

    fn buffer(n: usize, seed: u64) -> Vec<f64> {
        let mut state = seed | 1;
        (0..n)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state % 1000) as f64 / 999.0
            })
            .collect()
    }

    fn interpret(func: &Func, f: &Filter, values: &[f64]) -> f64 {
        let args = crate::interp::Args {
            values,
            coords: &[],
            output: &mut [],
        };
        crate::interp::run_args(func, &f.fresh_raw(), args)
            .unwrap()
            .unwrap()
    }

    use crate::ir::any_stmt;

    #[test]
    fn lowering_leaves_the_optimisations_to_the_pipeline() {
        let program = crate::syntax::parse("np.median(x)").unwrap();
        let lowered = crate::lower::lower(&program, &Bindings::new(), crate::Sig::Filter).unwrap();
        let network = |s: &Stmt| matches!(s, Stmt::MedianNetwork { .. });
        assert!(!any_stmt(&lowered.func.body, &network));
        let known = crate::ir::Known {
            filter_size: Some(9),
            bound: None,
            ..Default::default()
        };
        let sized = crate::ir::substitute(lowered.func, known);
        assert!(!any_stmt(
            &optimize(sized.clone(), &[Pass::Fold]).body,
            &network
        ));
        assert!(any_stmt(&optimize(sized, ALL).body, &network));
    }

    /// `specialize` starts from the kept lowered IR: the same IR as compiling for the size from
    /// source, the same results, and aliases given at compile time still resolve.
    #[test]
    fn specializing_reuses_the_lowered_ir() {
        for src in ["np.median(x)", "np.var(x)", LOOP, "np.percentile(x, 30)"] {
            let general = Filter::compile(src, &Bindings::new()).unwrap();
            for n in [1, 9, 25] {
                let sized = general.specialize(n).unwrap();
                let fresh = Filter::builder(src).filter_size(n).compile().unwrap();
                // Compared as text: the IR's NaN constants are not `==` to themselves.
                let text = |f: &Filter| format!("{:?}", f.specialized_ir());
                assert_eq!(text(&sized), text(&fresh), "{src}, {n}");
                let v = buffer(n, n as u64);
                let want = general.interpret(&v).unwrap();
                assert_eq!(sized.call(&v).unwrap().to_bits(), want.to_bits(), "{src}");
            }
        }
        let aliased = Filter::builder("xp.median(x)")
            .import("numpy", "xp")
            .compile()
            .unwrap();
        let sized = aliased.specialize(5).unwrap();
        assert_eq!(sized.call(&[5.0, 1.0, 4.0, 2.0, 3.0]).unwrap(), 3.0);
    }

    /// The GPU's IR: bound values substituted and folded, then the networks built (folding never
    /// sees an expanded network, which made refolding exponential), results unchanged.
    #[test]
    fn baked_ir_folds_the_bound_values_before_expanding_medians() {
        let mut b = Bindings::new();
        b.set_array("w", (0..49).map(|k| 0.5 + k as f64 / 64.0).collect());
        b.set_float("t", 0.25).set_int("k", 3);
        let src = "def f(x):\n    return np.median(x * w[:len(x)]) + (t if k > 2 else -t)";
        let f = Filter::compile(src, &b).unwrap();
        for n in [9, 49] {
            let baked = f.baked_ir(n, crate::ir::BufferValues::Any);
            let mut reads_bound = false;
            for s in &baked.body {
                crate::ir::stmt_exprs(s, |e| {
                    e.visit(&mut |x| {
                        reads_bound |= matches!(x, Expr::Param(_) | Expr::IntParam(_))
                            || matches!(x, Expr::Load(a, _) if *a != crate::ir::BUFFER)
                    })
                });
            }
            assert!(!reads_bound, "{baked}");
            let network = |s: &Stmt| matches!(s, Stmt::MedianNetwork { .. });
            assert!(any_stmt(&baked.body, &network), "{baked}");
            for seed in 1..20 {
                let v = buffer(n, seed);
                let want = f.interpret(&v).unwrap();
                assert_eq!(interpret(&baked, &f, &v).to_bits(), want.to_bits());
            }
        }
    }
}
