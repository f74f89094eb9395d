//! The JIT against the interpreter, bit for bit, on hand-built IR and random inputs.

use super::{compile, JitCode, JitOptions};
use crate::interp;
use crate::ir::{
    Arr, ArrKind, ArrayOp, BinOp, CmpOp, ErrorId, Expr, Func, ReduceOp, SortedStat, Stmt, Ty, UnOp,
    Var, BUFFER,
};
use crate::math::MathFn;
use crate::runtime::{ArrayRef, Failure, RawContext};
use std::ffi::c_void;

// -------------------------------------------------------------------------------------------------
// Building IR

const E_CHECK: ErrorId = ErrorId(2);
const E_EMPTY: ErrorId = ErrorId(3);

use crate::ir::test_func as func;

/// The same Func lowered for a known size: the interpreter and the JIT both read `Len(BUFFER)`
/// as `n` then.
fn specialise(f: &Func, n: usize) -> Func {
    Func {
        filter_size: Some(n),
        ..f.clone()
    }
}

fn v(i: u32) -> Expr {
    Expr::Var(Var(i))
}
fn f(x: f64) -> Expr {
    Expr::F64(x)
}
fn int(x: i64) -> Expr {
    Expr::I64(x)
}
fn len(a: Arr) -> Expr {
    Expr::Len(a)
}
fn load(a: Arr, i: Expr) -> Expr {
    Expr::Load(a, i.boxed())
}
fn x(i: Expr) -> Expr {
    load(BUFFER, i)
}
fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    Expr::Binary(op, a.boxed(), b.boxed())
}
fn cmp(op: CmpOp, a: Expr, b: Expr) -> Expr {
    Expr::Cmp(op, a.boxed(), b.boxed())
}
fn un(op: UnOp, a: Expr) -> Expr {
    Expr::Unary(op, a.boxed())
}
fn cast(ty: Ty, a: Expr) -> Expr {
    Expr::Cast(ty, a.boxed())
}
fn assign(i: u32, e: Expr) -> Stmt {
    Stmt::Assign(Var(i), e)
}
fn ret(e: Expr) -> Stmt {
    Stmt::Return(e)
}
/// `check len(x) > k` so that `x[0..=k]` may be read.
fn need(k: i64) -> Stmt {
    Stmt::Check {
        cond: cmp(CmpOp::Gt, len(BUFFER), int(k)),
        err: E_CHECK,
        a: len(BUFFER),
        b: int(k),
    }
}
fn reduce(dst: u32, op: ReduceOp, n: Expr, index: u32, elem: Expr) -> Stmt {
    let on_empty = op.needs_nonempty().then_some(E_EMPTY);
    Stmt::Reduce {
        dst: Var(dst),
        op,
        len: n,
        index: Var(index),
        elem,
        on_empty,
    }
}

// -------------------------------------------------------------------------------------------------
// Inputs

/// xorshift64*: deterministic and dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// Mostly ordinary numbers, often the values that break code: NaN, ±inf, ±0, subnormals,
    /// huge values, small integers (ties and duplicates).
    fn value(&mut self) -> f64 {
        let sign = if self.next() & 1 == 0 { 1.0 } else { -1.0 };
        match self.below(16) {
            0 => f64::NAN,
            1 => sign * f64::INFINITY,
            2 => sign * 0.0,
            3 => sign * f64::from_bits(self.next() & ((1 << 52) - 1)),
            4 => sign * f64::MIN_POSITIVE,
            5 => sign * 1e300,
            6 | 7 => (self.below(9) as f64 - 4.0) * 0.5,
            _ => (self.next() as f64 / u64::MAX as f64 - 0.5) * 200.0,
        }
    }
    /// Finite, non-NaN values only (for sums that should not be swamped by NaN/inf).
    fn finite(&mut self) -> f64 {
        match self.below(8) {
            0 => f64::from_bits(self.next() & ((1 << 52) - 1)),
            1 => -0.0,
            _ => (self.next() as f64 / u64::MAX as f64 - 0.5) * 1e3,
        }
    }
    fn buffer(&mut self, n: usize, special: bool) -> Vec<f64> {
        (0..n)
            .map(|_| if special { self.value() } else { self.finite() })
            .collect()
    }
}

// -------------------------------------------------------------------------------------------------
// Running both engines

/// Owns the bound values a context points into.
struct Bound {
    scalars: Vec<f64>,
    ints: Vec<i64>,
    arrays: Vec<Vec<f64>>,
    refs: Vec<ArrayRef>,
}

impl Bound {
    fn new(scalars: Vec<f64>, ints: Vec<i64>, arrays: Vec<Vec<f64>>) -> Bound {
        let refs = arrays
            .iter()
            .map(|a| ArrayRef {
                ptr: a.as_ptr(),
                len: a.len() as i64,
            })
            .collect();
        Bound {
            scalars,
            ints,
            arrays,
            refs,
        }
    }
    fn none() -> Bound {
        Bound::new(vec![], vec![], vec![])
    }
    fn context(&self) -> RawContext {
        let _ = &self.arrays;
        RawContext::new(
            self.scalars.as_ptr(),
            self.ints.as_ptr(),
            self.refs.as_ptr(),
        )
    }
}

fn call(code: &JitCode, buf: &[f64], ctx: &RawContext) -> (i32, f64) {
    let mut out = 0.0;
    let rc = unsafe {
        (code.entry())(
            buf.as_ptr() as *mut f64,
            buf.len() as isize,
            &mut out,
            ctx as *const RawContext as *mut c_void,
        )
    };
    (rc, out)
}

fn same(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

/// Runs `buf` through the interpreter (the specialised Func when the size matches) and the JIT,
/// and asserts the same outcome: the same bits, or the same recorded failure.
fn agree(
    code: &JitCode,
    general: &Func,
    spec: Option<&Func>,
    bound: &Bound,
    buf: &[f64],
    what: &str,
) {
    let ctx = bound.context();
    let func = match spec {
        Some(s) if s.filter_size == Some(buf.len()) => s,
        _ => general,
    };
    let expected = interp::run(func, &ctx, buf);
    let expected_failure = ctx.failure();
    ctx.reset();
    let (rc, out) = call(code, buf, &ctx);
    let failure = ctx.failure();
    match expected {
        Ok(e) => {
            assert_eq!(
                rc, 1,
                "{what}: JIT failed ({failure:?}) where the interpreter gave {e} on {buf:?}"
            );
            assert!(
                same(e, out),
                "{what}: interpreter {e:?} ({:#x}) vs JIT {out:?} ({:#x}) on {buf:?}",
                e.to_bits(),
                out.to_bits()
            );
        }
        Err(interp::Failed) => {
            assert_eq!(rc, 0, "{what}: JIT returned {out} where the interpreter failed with {expected_failure:?} on {buf:?}");
            assert_eq!(
                failure, expected_failure,
                "{what}: failures differ on {buf:?}"
            );
        }
    }
}

fn jit(general: &Func, spec: Option<&Func>) -> JitCode {
    match compile(general, spec, &JitOptions::default()) {
        Ok(code) => code,
        Err(e) => panic!("compile failed: {e}"),
    }
}

/// Compiles `general` alone and specialised for each size in `sizes`, and checks every buffer
/// length in `lens` with `rounds` random buffers each.
fn check_sizes(
    general: &Func,
    bound: &Bound,
    sizes: &[usize],
    lens: &[usize],
    rounds: usize,
    special: bool,
    what: &str,
) {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ what.len() as u64);
    let plain = jit(general, None);
    let specs: Vec<(Func, JitCode)> = sizes
        .iter()
        .map(|&n| {
            let s = specialise(general, n);
            let code = jit(general, Some(&s));
            (s, code)
        })
        .collect();
    for &n in lens {
        for _ in 0..rounds {
            let buf = rng.buffer(n, special);
            agree(&plain, general, None, bound, &buf, what);
            for (s, code) in &specs {
                agree(code, general, Some(s), bound, &buf, what);
            }
        }
    }
}

const SUM_LENS: &[usize] = &[
    0, 1, 7, 8, 9, 15, 16, 17, 25, 127, 128, 129, 255, 256, 257, 300,
];

// -------------------------------------------------------------------------------------------------
// Tests

#[test]
fn every_reduction_dynamic_and_unrolled() {
    let ops = [
        ReduceOp::Sum,
        ReduceOp::SumInt,
        ReduceOp::Prod,
        ReduceOp::Min,
        ReduceOp::Max,
        ReduceOp::PyMin,
        ReduceOp::PyMax,
        ReduceOp::ArgMin,
        ReduceOp::ArgMax,
        ReduceOp::Any,
        ReduceOp::All,
        ReduceOp::Count,
    ];
    for op in ops {
        let (elem_ty, result_ty) = op.types();
        let elem = match elem_ty {
            Ty::F64 => x(v(1)),
            Ty::I64 => cast(Ty::I64, bin(BinOp::Mul, x(v(1)), f(1e17))),
            Ty::Bool => cmp(CmpOp::Gt, x(v(1)), f(0.0)),
        };
        let g = func(
            &[result_ty, Ty::I64],
            &[],
            vec![
                reduce(0, op, len(BUFFER), 1, elem),
                ret(cast(Ty::F64, v(0))),
            ],
        );
        let what = format!("{op:?}");
        check_sizes(
            &g,
            &Bound::none(),
            &[1, 9, 25, 300],
            SUM_LENS,
            6,
            true,
            &what,
        );
        if op == ReduceOp::Sum {
            // Finite values, where every rounding shows.
            check_sizes(
                &g,
                &Bound::none(),
                &[8, 9, 16, 17, 128, 129, 256],
                SUM_LENS,
                10,
                false,
                "finite sum",
            );
            // An element that is not a plain load is materialised before summing.
            let scaled = bin(BinOp::Mul, x(v(1)), f(0.3));
            let g = func(
                &[Ty::F64, Ty::I64],
                &[],
                vec![reduce(0, op, len(BUFFER), 1, scaled), ret(v(0))],
            );
            check_sizes(
                &g,
                &Bound::none(),
                &[9, 200, 300],
                SUM_LENS,
                10,
                false,
                "scaled sum",
            );
        }
    }
}

#[test]
fn sum_matches_runtime_pairwise_sum() {
    let g = func(
        &[Ty::F64, Ty::I64],
        &[],
        vec![reduce(0, ReduceOp::Sum, len(BUFFER), 1, x(v(1))), ret(v(0))],
    );
    let plain = jit(&g, None);
    let mut rng = Rng(7);
    for n in 0..600 {
        let buf = rng.buffer(n, false);
        let (rc, out) = call(&plain, &buf, &Bound::none().context());
        assert_eq!(rc, 1);
        assert_eq!(
            out.to_bits(),
            crate::runtime::pairwise_sum(&buf).to_bits(),
            "n = {n}"
        );
    }
}

#[test]
fn reduction_over_an_expression_and_a_constant_length() {
    // sum(x[i] * x[i] for i in range(5)) after checking len(x) > 4, and a negative length.
    let sq = bin(BinOp::Mul, x(v(1)), x(v(1)));
    let g = func(
        &[Ty::F64, Ty::I64, Ty::I64],
        &[],
        vec![
            need(4),
            reduce(0, ReduceOp::Sum, int(5), 1, sq),
            reduce(2, ReduceOp::Count, int(-3), 1, Expr::Bool(true)),
            ret(bin(BinOp::Add, v(0), cast(Ty::F64, v(2)))),
        ],
    );
    check_sizes(
        &g,
        &Bound::none(),
        &[9],
        &[0, 3, 5, 9, 10],
        10,
        true,
        "sum of squares",
    );
}

#[test]
fn empty_min_fails_with_on_empty() {
    let g = func(
        &[Ty::F64, Ty::I64],
        &[],
        vec![reduce(0, ReduceOp::Min, len(BUFFER), 1, x(v(1))), ret(v(0))],
    );
    let code = jit(&g, None);
    let bound = Bound::none();
    let ctx = bound.context();
    assert_eq!(call(&code, &[], &ctx).0, 0);
    assert_eq!(
        ctx.failure(),
        Some(Failure {
            site: E_EMPTY.0,
            a: 0,
            b: 0
        })
    );
    check_sizes(&g, &bound, &[0, 3], &[0, 3], 3, true, "empty min");
}

#[test]
fn fill_keep_sort_median_quantile() {
    // a1 = x[~isnan(x)]; sort; med = median(a1)
    // a2 = x * 2; sort; q = quantile(a2, p0); return med + q + len(a1)
    let g = func(
        &[Ty::F64, Ty::I64, Ty::F64],
        &[
            ArrKind::Scratch { elem: Ty::F64 },
            ArrKind::Scratch { elem: Ty::F64 },
        ],
        vec![
            Stmt::Fill {
                dst: Arr(1),
                len: len(BUFFER),
                index: Var(1),
                elem: x(v(1)),
                keep: Some(un(UnOp::Not, un(UnOp::IsNan, x(v(1))))),
            },
            Stmt::ArrayOp(ArrayOp::SORT, Arr(1)),
            Stmt::Sorted {
                dst: Var(0),
                stat: SortedStat::Median,
                arr: Arr(1),
                q: f(0.0),
            },
            Stmt::Fill {
                dst: Arr(2),
                len: len(BUFFER),
                index: Var(1),
                elem: bin(BinOp::Mul, x(v(1)), f(2.0)),
                keep: None,
            },
            Stmt::ArrayOp(ArrayOp::SORT, Arr(2)),
            Stmt::Sorted {
                dst: Var(2),
                stat: SortedStat::Quantile,
                arr: Arr(2),
                q: Expr::Param(0),
            },
            ret(bin(
                BinOp::Add,
                bin(BinOp::Add, v(0), v(2)),
                cast(Ty::F64, len(Arr(1))),
            )),
        ],
    );
    for q in [0.0, 0.25, 0.5, 0.9, 1.0] {
        let bound = Bound::new(vec![q], vec![], vec![]);
        check_sizes(
            &g,
            &bound,
            &[1, 9, 25, 1500],
            &[0, 1, 2, 8, 9, 10, 25, 1500],
            8,
            true,
            "median/quantile",
        );
    }
}

#[test]
fn int_and_bool_scratch_arrays() {
    // a1 (int) = int(x * 3) for x > -1; a2 (bool) = x != 0; count(a2) + sum(a1) + a1[0] if any
    let g = func(
        &[Ty::I64, Ty::I64, Ty::I64, Ty::I64],
        &[
            ArrKind::Scratch { elem: Ty::I64 },
            ArrKind::Scratch { elem: Ty::Bool },
        ],
        vec![
            Stmt::Fill {
                dst: Arr(1),
                len: len(BUFFER),
                index: Var(1),
                elem: cast(Ty::I64, bin(BinOp::Mul, x(v(1)), f(3.0))),
                keep: Some(cmp(CmpOp::Gt, x(v(1)), f(-1.0))),
            },
            Stmt::Fill {
                dst: Arr(2),
                len: len(BUFFER),
                index: Var(1),
                elem: cast(Ty::Bool, x(v(1))),
                keep: None,
            },
            reduce(0, ReduceOp::Count, len(Arr(2)), 1, load(Arr(2), v(1))),
            reduce(2, ReduceOp::SumInt, len(Arr(1)), 1, load(Arr(1), v(1))),
            assign(3, int(0)),
            Stmt::If(
                cmp(CmpOp::Gt, len(Arr(1)), int(0)),
                vec![assign(3, load(Arr(1), int(0)))],
                vec![],
            ),
            // Overwrite a cell: a1[0] = 7 when non-empty.
            Stmt::If(
                cmp(CmpOp::Gt, len(Arr(1)), int(0)),
                vec![Stmt::Store(Arr(1), int(0), int(7))],
                vec![],
            ),
            Stmt::If(
                cmp(CmpOp::Gt, len(Arr(1)), int(0)),
                vec![assign(3, bin(BinOp::Add, v(3), load(Arr(1), int(0))))],
                vec![],
            ),
            ret(cast(
                Ty::F64,
                bin(BinOp::Add, bin(BinOp::Add, v(0), v(2)), v(3)),
            )),
        ],
    );
    check_sizes(
        &g,
        &Bound::none(),
        &[0, 9, 2000],
        &[0, 1, 9, 30, 2000],
        6,
        true,
        "int/bool scratch",
    );
}

#[test]
fn loops_with_break_and_continue() {
    // i = 0; acc = 0
    // loop { if i >= len: break; if isnan(x[i]): continue; if x[i] > 50: break; acc += x[i] }
    // latch { i += 1 }
    // return acc * 1000 + i
    let body = vec![
        Stmt::If(cmp(CmpOp::Ge, v(1), len(BUFFER)), vec![Stmt::Break], vec![]),
        Stmt::If(un(UnOp::IsNan, x(v(1))), vec![Stmt::Continue], vec![]),
        Stmt::If(
            cmp(CmpOp::Gt, x(v(1)), f(50.0)),
            vec![Stmt::Break],
            vec![assign(0, bin(BinOp::Add, v(0), x(v(1))))],
        ),
    ];
    let g = func(
        &[Ty::F64, Ty::I64],
        &[],
        vec![
            Stmt::Loop {
                body,
                latch: vec![assign(1, bin(BinOp::Add, v(1), int(1)))],
            },
            ret(bin(
                BinOp::Add,
                bin(BinOp::Mul, v(0), f(1000.0)),
                cast(Ty::F64, v(1)),
            )),
        ],
    );
    check_sizes(
        &g,
        &Bound::none(),
        &[9],
        &[0, 1, 5, 9, 40],
        20,
        true,
        "loop",
    );
}

#[test]
fn nested_loops_and_unreachable_code() {
    // for i in range(len): for j in range(i): if x[j] > x[i]: count += 1 (inversions)
    // with a Continue inside the inner latch continuing the outer loop, and dead code after
    // returns and breaks.
    let inner = Stmt::Loop {
        body: vec![
            Stmt::If(
                cmp(CmpOp::Ge, v(2), v(1)),
                vec![Stmt::Break, assign(0, int(-99))],
                vec![],
            ),
            Stmt::If(
                cmp(CmpOp::Gt, x(v(2)), x(v(1))),
                vec![assign(0, bin(BinOp::Add, v(0), int(1)))],
                vec![],
            ),
        ],
        latch: vec![assign(2, bin(BinOp::Add, v(2), int(1)))],
    };
    let outer = Stmt::Loop {
        body: vec![
            Stmt::If(cmp(CmpOp::Ge, v(1), len(BUFFER)), vec![Stmt::Break], vec![]),
            assign(2, int(0)),
            inner,
        ],
        latch: vec![assign(1, bin(BinOp::Add, v(1), int(1)))],
    };
    let g = func(
        &[Ty::I64, Ty::I64, Ty::I64],
        &[],
        vec![
            outer,
            ret(cast(Ty::F64, v(0))),
            assign(0, int(5)),
            ret(f(1.0)),
        ],
    );
    check_sizes(
        &g,
        &Bound::none(),
        &[9],
        &[0, 1, 2, 9, 30],
        10,
        true,
        "nested loops",
    );

    // A Continue in a latch continues the enclosing loop; a Break outside any loop, and falling
    // off the end, return 0 without recording a failure.
    let latch_continue = Stmt::Loop {
        body: vec![
            Stmt::If(cmp(CmpOp::Ge, v(1), len(BUFFER)), vec![Stmt::Break], vec![]),
            Stmt::Loop {
                body: vec![assign(0, bin(BinOp::Add, v(0), int(1)))],
                latch: vec![Stmt::Continue],
            },
        ],
        latch: vec![assign(1, bin(BinOp::Add, v(1), int(1)))],
    };
    let g = func(
        &[Ty::I64, Ty::I64],
        &[],
        vec![latch_continue, ret(cast(Ty::F64, v(0)))],
    );
    check_sizes(
        &g,
        &Bound::none(),
        &[],
        &[0, 3],
        2,
        true,
        "continue in latch",
    );
    let g = func(
        &[Ty::I64],
        &[],
        vec![Stmt::If(
            cmp(CmpOp::Gt, len(BUFFER), int(2)),
            vec![Stmt::Break],
            vec![ret(f(2.0))],
        )],
    );
    check_sizes(&g, &Bound::none(), &[3], &[0, 3, 4], 2, true, "stray break");
}

#[test]
fn failed_check_is_sticky_until_reset() {
    let g = func(&[], &[], vec![need(3), ret(x(int(3)))]);
    let code = jit(&g, Some(&specialise(&g, 9)));
    let bound = Bound::none();
    let ctx = bound.context();
    let short = [1.0, 2.0];
    let long = [1.0, 2.0, 3.0, 4.0, 5.0];
    assert_eq!(call(&code, &long, &ctx), (1, 4.0));
    assert_eq!(call(&code, &short, &ctx).0, 0);
    assert_eq!(
        ctx.failure(),
        Some(Failure {
            site: E_CHECK.0,
            a: 2,
            b: 3
        })
    );
    // Later calls return 0 at once, even valid ones, and the first failure is kept.
    assert_eq!(call(&code, &long, &ctx).0, 0);
    assert_eq!(call(&code, &[0.0; 9], &ctx).0, 0);
    assert_eq!(call(&code, &[], &ctx).0, 0);
    assert_eq!(
        ctx.failure(),
        Some(Failure {
            site: E_CHECK.0,
            a: 2,
            b: 3
        })
    );
    ctx.reset();
    assert_eq!(call(&code, &long, &ctx), (1, 4.0));
    check_sizes(&g, &bound, &[9], &[0, 3, 4, 9], 3, true, "check");
}

#[test]
fn null_and_invalid_arguments() {
    let g = func(
        &[Ty::F64, Ty::I64],
        &[],
        vec![reduce(0, ReduceOp::Sum, len(BUFFER), 1, x(v(1))), ret(v(0))],
    );
    let code = jit(&g, Some(&specialise(&g, 9)));
    let bound = Bound::none();
    let ctx = bound.context();
    let ctx_ptr = &ctx as *const RawContext as *mut c_void;
    let buf = [1.0; 9];
    let mut out = 0.0;
    unsafe {
        let entry = code.entry();
        // No context: 0, and nothing recorded anywhere.
        assert_eq!(
            entry(buf.as_ptr() as *mut f64, 9, &mut out, std::ptr::null_mut()),
            0
        );
        // No return slot.
        assert_eq!(
            entry(buf.as_ptr() as *mut f64, 9, std::ptr::null_mut(), ctx_ptr),
            0
        );
        assert_eq!(
            ctx.failure(),
            Some(Failure {
                site: 0,
                a: 9,
                b: 0
            })
        );
        ctx.reset();
        // No buffer for 9 values.
        assert_eq!(entry(std::ptr::null_mut(), 9, &mut out, ctx_ptr), 0);
        assert_eq!(
            ctx.failure(),
            Some(Failure {
                site: 0,
                a: 9,
                b: 0
            })
        );
        ctx.reset();
        // A negative size.
        assert_eq!(entry(buf.as_ptr() as *mut f64, -4, &mut out, ctx_ptr), 0);
        assert_eq!(
            ctx.failure(),
            Some(Failure {
                site: 0,
                a: -4,
                b: 0
            })
        );
        ctx.reset();
        // No buffer but nothing to read: fine.
        out = 5.0;
        assert_eq!(entry(std::ptr::null_mut(), 0, &mut out, ctx_ptr), 1);
        assert_eq!(out.to_bits(), 0.0f64.to_bits());
        assert_eq!(ctx.failure(), None);
        assert_eq!(entry(buf.as_ptr() as *mut f64, 9, &mut out, ctx_ptr), 1);
        assert_eq!(out, 9.0);
    }
}

#[test]
fn bound_scalars_ints_and_arrays() {
    // check len(w) == len(x); s = sum(w[i] * x[i]); return s * p1 + p0 + k0 - k1
    let mut g = func(
        &[Ty::F64, Ty::I64],
        &[ArrKind::Bound(1)],
        vec![
            Stmt::Check {
                cond: cmp(CmpOp::Eq, len(Arr(1)), len(BUFFER)),
                err: E_CHECK,
                a: len(Arr(1)),
                b: len(BUFFER),
            },
            reduce(
                0,
                ReduceOp::Sum,
                len(BUFFER),
                1,
                bin(BinOp::Mul, load(Arr(1), v(1)), x(v(1))),
            ),
            ret(bin(
                BinOp::Add,
                bin(
                    BinOp::Add,
                    bin(BinOp::Mul, v(0), Expr::Param(1)),
                    Expr::Param(0),
                ),
                cast(
                    Ty::F64,
                    bin(BinOp::Sub, Expr::IntParam(0), Expr::IntParam(1)),
                ),
            )),
        ],
    );
    g.arrays[1].name = "w".into();
    for n in [0usize, 1, 9, 25] {
        let mut rng = Rng(n as u64 + 1);
        let w = rng.buffer(n, false);
        let bound = Bound::new(
            vec![rng.value(), rng.finite()],
            vec![7, -3],
            vec![vec![9.0], w],
        );
        check_sizes(&g, &bound, &[n, 9], &[n, n + 1], 5, true, "weights");
    }
}

#[test]
fn integer_division_modulo_shifts_and_casts() {
    let a = || Expr::IntParam(0);
    let b = || Expr::IntParam(1);
    let mut exprs: Vec<Expr> = Vec::new();
    // Variable divisor (checked non-zero), through the shims.
    exprs.push(bin(BinOp::FloorDiv, a(), b()));
    exprs.push(bin(BinOp::Mod, a(), b()));
    // Constant divisors, inlined.
    for c in [1, 2, 3, 7, 8, 10, 1024, -1, -2, -3, i64::MAX] {
        exprs.push(bin(BinOp::FloorDiv, a(), int(c)));
        exprs.push(bin(BinOp::Mod, a(), int(c)));
    }
    for op in [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Min,
        BinOp::Max,
        BinOp::PyMin,
        BinOp::PyMax,
        BinOp::And,
        BinOp::Or,
        BinOp::Xor,
        BinOp::Shl,
        BinOp::Shr,
    ] {
        exprs.push(bin(op, a(), b()));
    }
    exprs.push(un(UnOp::Neg, a()));
    exprs.push(un(UnOp::Abs, a()));
    exprs.push(un(UnOp::BitNot, a()));
    exprs.push(cast(Ty::I64, un(UnOp::Not, a())));
    exprs.push(cast(Ty::I64, cast(Ty::Bool, a())));
    exprs.push(cast(Ty::I64, cmp(CmpOp::Lt, a(), b())));
    for e in exprs {
        let g = func(
            &[],
            &[],
            vec![
                Stmt::Check {
                    cond: cmp(CmpOp::Ne, b(), int(0)),
                    err: E_CHECK,
                    a: b(),
                    b: int(0),
                },
                ret(cast(Ty::F64, e.clone())),
            ],
        );
        let code = jit(&g, None);
        let mut rng = Rng(3);
        // i64::MIN only without division: the interpreter's shim overflows on `MIN // -1`.
        let divides = matches!(e, Expr::Binary(BinOp::FloorDiv | BinOp::Mod, ..));
        let specials = [
            0,
            1,
            -1,
            2,
            -2,
            3,
            -7,
            7,
            1 << 40,
            -(1 << 40),
            i64::MAX,
            i64::MIN,
            i64::MIN + 1,
            63,
            64,
            65,
            -64,
        ];
        for k in 0..400 {
            let pick = |rng: &mut Rng| {
                let v = if k % 2 == 0 {
                    specials[rng.below(specials.len() as u64) as usize]
                } else {
                    rng.next() as i64 >> rng.below(64)
                };
                if divides {
                    v.max(i64::MIN + 1)
                } else {
                    v
                }
            };
            let (p, q) = (pick(&mut rng), pick(&mut rng));
            let bound = Bound::new(vec![], vec![p, q], vec![]);
            agree(
                &code,
                &g,
                None,
                &bound,
                &[],
                &format!("{e:?} with {p}, {q}"),
            );
        }
    }
}

#[test]
fn float_operations_and_conversions() {
    let a = || x(int(0));
    let b = || x(int(1));
    let mut exprs: Vec<Expr> = Vec::new();
    for op in [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::Min,
        BinOp::Max,
        BinOp::PyMin,
        BinOp::PyMax,
    ] {
        exprs.push(bin(op, a(), b()));
    }
    for op in [
        UnOp::Neg,
        UnOp::Abs,
        UnOp::Sqrt,
        UnOp::Floor,
        UnOp::Ceil,
        UnOp::Trunc,
        UnOp::RoundEven,
    ] {
        exprs.push(un(op, a()));
    }
    for op in [
        UnOp::IsNan,
        UnOp::IsInf,
        UnOp::IsFinite,
        UnOp::SignBit,
        UnOp::Not,
    ] {
        exprs.push(cast(Ty::F64, un(op, a())));
    }
    for op in [
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
        CmpOp::Eq,
        CmpOp::Ne,
    ] {
        exprs.push(cast(Ty::F64, cmp(op, a(), b())));
        // Mixed operands compare as integers, as in eval::cmp.
        exprs.push(cast(
            Ty::F64,
            cmp(op, cast(Ty::Bool, a()), cast(Ty::Bool, b())),
        ));
    }
    exprs.push(cast(Ty::F64, cast(Ty::I64, a())));
    exprs.push(cast(Ty::F64, cast(Ty::Bool, a())));
    exprs.push(Expr::Select(
        cmp(CmpOp::Lt, a(), b()).boxed(),
        a().boxed(),
        b().boxed(),
    ));
    exprs.push(Expr::Select(
        cast(Ty::Bool, a()).boxed(),
        f(1.5).boxed(),
        b().boxed(),
    ));
    exprs.push(cast(
        Ty::F64,
        bin(BinOp::Xor, cast(Ty::Bool, a()), cast(Ty::Bool, b())),
    ));
    exprs.push(cast(
        Ty::F64,
        bin(BinOp::PyMax, cast(Ty::Bool, a()), cast(Ty::Bool, b())),
    ));
    exprs.push(cast(Ty::F64, un(UnOp::BitNot, cast(Ty::Bool, a()))));
    // Constant folding at compile time goes through eval too.
    exprs.push(bin(BinOp::Add, f(0.1), f(0.2)));
    exprs.push(Expr::Call(MathFn::Exp, vec![f(1.0)]));
    exprs.push(cast(Ty::F64, bin(BinOp::FloorDiv, int(-7), int(2))));
    for e in exprs {
        let g = func(&[], &[], vec![need(1), ret(e.clone())]);
        let mut rng = Rng(11);
        let code = jit(&g, Some(&specialise(&g, 2)));
        let spec = specialise(&g, 2);
        for _ in 0..300 {
            let buf = rng.buffer(2, true);
            agree(
                &code,
                &g,
                Some(&spec),
                &Bound::none(),
                &buf,
                &format!("{e:?}"),
            );
        }
        for (p, q) in [
            (0.0, -0.0),
            (-0.0, 0.0),
            (f64::NAN, 1.0),
            (1.0, f64::NAN),
            (2.5, 0.0),
            (-2.5, 1.0),
            (0.5, 3.0),
            (1e300, 1e-300),
        ] {
            agree(
                &code,
                &g,
                Some(&spec),
                &Bound::none(),
                &[p, q],
                &format!("{e:?}"),
            );
            agree(
                &code,
                &g,
                Some(&spec),
                &Bound::none(),
                &[p, q, 1.0],
                &format!("{e:?}"),
            );
        }
    }
}

#[test]
fn every_math_function() {
    for &m in MathFn::ALL {
        let args: Vec<Expr> = (0..m.arity() as i64).map(|i| x(int(i))).collect();
        let g = func(
            &[],
            &[],
            vec![need(m.arity() as i64 - 1), ret(Expr::Call(m, args))],
        );
        let code = jit(&g, None);
        let mut rng = Rng(5);
        for _ in 0..200 {
            let buf = rng.buffer(3, true);
            agree(&code, &g, None, &Bound::none(), &buf, m.name());
        }
    }
}

#[test]
fn specialised_body_runs_only_for_its_size() {
    // Two different bodies make the dispatch visible.
    let general = func(&[], &[], vec![ret(f(2.0))]);
    let mut spec = func(&[], &[], vec![ret(f(1.0))]);
    spec.filter_size = Some(9);
    let code = jit(&general, Some(&spec));
    let bound = Bound::none();
    let ctx = bound.context();
    assert_eq!(call(&code, &[0.0; 9], &ctx), (1, 1.0));
    assert_eq!(call(&code, &[0.0; 10], &ctx), (1, 2.0));
    assert_eq!(call(&code, &[0.0; 8], &ctx), (1, 2.0));
    assert_eq!(call(&code, &[], &ctx), (1, 2.0));

    // A realistic pair: the centre element x[len // 2] minus the mean.
    let g = func(
        &[Ty::F64, Ty::I64, Ty::I64],
        &[],
        vec![
            need(0),
            assign(2, bin(BinOp::FloorDiv, len(BUFFER), int(2))),
            reduce(0, ReduceOp::Sum, len(BUFFER), 1, x(v(1))),
            ret(bin(
                BinOp::Sub,
                x(v(2)),
                bin(BinOp::Div, v(0), cast(Ty::F64, len(BUFFER))),
            )),
        ],
    );
    check_sizes(
        &g,
        &bound,
        &[9],
        &[0, 1, 9, 10],
        20,
        true,
        "centre minus mean",
    );
}

#[test]
fn options_keep_clif_and_disassembly() {
    let g = func(
        &[Ty::F64, Ty::I64],
        &[],
        vec![reduce(0, ReduceOp::Max, len(BUFFER), 1, x(v(1))), ret(v(0))],
    );
    let spec = specialise(&g, 9);
    let code = compile(
        &g,
        Some(&spec),
        &JitOptions {
            clif_text: true,
            disasm: true,
        },
    )
    .unwrap();
    let clif = code.clif().expect("clif text");
    assert!(clif.contains("fmax"), "{clif}");
    assert!(code.disasm().is_some_and(|d| !d.is_empty()));
    let plain = jit(&g, None);
    assert!(plain.clif().is_none() && plain.disasm().is_none());
    // The unrolled body loads at fixed offsets: x[8] is at byte 64.
    assert!(clif.contains("+64"), "{clif}");
}

#[test]
fn ill_typed_ir_is_an_error_not_a_panic() {
    let bad = [
        func(&[Ty::I64], &[], vec![assign(0, f(1.0)), ret(f(0.0))]),
        func(&[], &[], vec![ret(bin(BinOp::Add, f(1.0), int(1)))]),
        func(
            &[],
            &[],
            vec![ret(bin(BinOp::Div, int(1), Expr::IntParam(0)))],
        ),
        func(&[], &[], vec![ret(Expr::Call(MathFn::Pow, vec![f(1.0)]))]),
        func(&[], &[], vec![ret(x(Expr::Var(Var(7))))]),
        func(&[], &[], vec![ret(load(Arr(5), int(0)))]),
        func(
            &[],
            &[],
            vec![Stmt::ArrayOp(ArrayOp::SORT, BUFFER), ret(f(0.0))],
        ),
    ];
    for g in &bad {
        let e =
            compile(g, None, &JitOptions::default()).expect_err("ill-typed IR must not compile");
        assert_eq!(e.kind, crate::error::ErrorKind::Codegen);
    }
}

#[test]
fn compiled_code_is_shareable_across_threads() {
    let g = func(
        &[Ty::F64, Ty::I64],
        &[ArrKind::Scratch { elem: Ty::F64 }],
        vec![
            Stmt::Fill {
                dst: Arr(1),
                len: len(BUFFER),
                index: Var(1),
                elem: x(v(1)),
                keep: None,
            },
            Stmt::ArrayOp(ArrayOp::SORT, Arr(1)),
            Stmt::Sorted {
                dst: Var(0),
                stat: SortedStat::Median,
                arr: Arr(1),
                q: f(0.0),
            },
            ret(v(0)),
        ],
    );
    let code = std::sync::Arc::new(jit(&g, None));
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let (code, g) = (code.clone(), g.clone());
            std::thread::spawn(move || {
                let b = Bound::none();
                let mut rng = Rng(t + 100);
                for _ in 0..200 {
                    let buf = rng.buffer(2000 + t as usize, true);
                    agree(&code, &g, None, &b, &buf, "threads");
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

// -------------------------------------------------------------------------------------------------
// Random programs

/// Generates random well-typed IR whose loads are in range by construction: buffer indices are
/// `e mod len(x)` after a leading `check len(x) > 0`, scratch indices likewise under an
/// `if len(a) > 0`, reduction elements read `a[i]` for `i < len(a)`; divisors are `(e & 255) | 1`.
struct Gen {
    rng: Rng,
    /// Index variables of the enclosing reductions/fills usable in element expressions.
    index: Vec<(u32, Option<Arr>)>,
    depth: u32,
    loops: u32,
}

// Variables: f64 0..4, i64 4..7, bool 7..9, reduction indices 9..12, loop counters 12..14.
const GEN_VARS: &[Ty] = &[
    Ty::F64,
    Ty::F64,
    Ty::F64,
    Ty::F64,
    Ty::I64,
    Ty::I64,
    Ty::I64,
    Ty::Bool,
    Ty::Bool,
    Ty::I64,
    Ty::I64,
    Ty::I64,
    Ty::I64,
    Ty::I64,
];
const W: Arr = Arr(4);

impl Gen {
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.rng.below(xs.len() as u64) as usize]
    }
    fn chance(&mut self, p: u64) -> bool {
        self.rng.below(100) < p
    }
    fn var_of(&mut self, ty: Ty) -> u32 {
        match ty {
            Ty::F64 => self.rng.below(4) as u32,
            Ty::I64 => 4 + self.rng.below(3) as u32,
            Ty::Bool => 7 + self.rng.below(2) as u32,
        }
    }

    fn expr(&mut self, ty: Ty, depth: u32) -> Expr {
        let leaf = depth == 0 || self.chance(30);
        match ty {
            Ty::F64 => self.f64_expr(leaf, depth),
            Ty::I64 => self.i64_expr(leaf, depth),
            Ty::Bool => self.bool_expr(leaf, depth),
        }
    }

    fn safe_index(&mut self, a: Arr, depth: u32) -> Expr {
        if let Some(&(ix, over)) = self.index.last() {
            if over == Some(a) && self.chance(70) {
                return v(ix);
            }
        }
        let e = self.expr(Ty::I64, depth.saturating_sub(1));
        bin(BinOp::Mod, e, len(a))
    }

    fn f64_expr(&mut self, leaf: bool, depth: u32) -> Expr {
        if leaf {
            return match self.rng.below(6) {
                0 => f(self.rng.value()),
                1 | 2 => v(self.var_of(Ty::F64)),
                3 => Expr::Param(self.rng.below(2) as u32),
                _ => {
                    let a = if self.chance(80) { BUFFER } else { W };
                    let i = self.safe_index(a, depth);
                    load(a, i)
                }
            };
        }
        let d = depth - 1;
        match self.rng.below(8) {
            0 => {
                let op = self.pick(&[
                    UnOp::Neg,
                    UnOp::Abs,
                    UnOp::Sqrt,
                    UnOp::Floor,
                    UnOp::Ceil,
                    UnOp::Trunc,
                    UnOp::RoundEven,
                ]);
                un(op, self.expr(Ty::F64, d))
            }
            1..=3 => {
                let op = self.pick(&[
                    BinOp::Add,
                    BinOp::Sub,
                    BinOp::Mul,
                    BinOp::Div,
                    BinOp::Min,
                    BinOp::Max,
                    BinOp::PyMin,
                    BinOp::PyMax,
                ]);
                bin(op, self.expr(Ty::F64, d), self.expr(Ty::F64, d))
            }
            4 => {
                let from = self.pick(&[Ty::I64, Ty::Bool]);
                cast(Ty::F64, self.expr(from, d))
            }
            5 => Expr::Select(
                self.expr(Ty::Bool, d).boxed(),
                self.expr(Ty::F64, d).boxed(),
                self.expr(Ty::F64, d).boxed(),
            ),
            6 => {
                let m = self.pick(MathFn::ALL);
                Expr::Call(m, (0..m.arity()).map(|_| self.expr(Ty::F64, d)).collect())
            }
            _ => self.f64_expr(true, depth),
        }
    }

    fn i64_expr(&mut self, leaf: bool, depth: u32) -> Expr {
        if leaf {
            return match self.rng.below(6) {
                0 => int(self.pick(&[0, 1, -1, 2, 3, 7, 8, -9, 1 << 40, i64::MAX, i64::MIN])),
                1 | 2 => v(self.var_of(Ty::I64)),
                3 => Expr::IntParam(self.rng.below(2) as u32),
                4 => len(self.pick(&[BUFFER, W, Arr(1), Arr(2), Arr(3)])),
                _ => match self.index.last() {
                    Some(&(ix, _)) => v(ix),
                    None => int(self.rng.below(20) as i64),
                },
            };
        }
        let d = depth - 1;
        match self.rng.below(7) {
            0 => {
                let op = self.pick(&[UnOp::Neg, UnOp::Abs, UnOp::BitNot]);
                un(op, self.expr(Ty::I64, d))
            }
            1 | 2 => {
                let op = self.pick(&[
                    BinOp::Add,
                    BinOp::Sub,
                    BinOp::Mul,
                    BinOp::Min,
                    BinOp::Max,
                    BinOp::PyMin,
                    BinOp::PyMax,
                    BinOp::And,
                    BinOp::Or,
                    BinOp::Xor,
                    BinOp::Shl,
                    BinOp::Shr,
                ]);
                bin(op, self.expr(Ty::I64, d), self.expr(Ty::I64, d))
            }
            3 => {
                let op = self.pick(&[BinOp::FloorDiv, BinOp::Mod]);
                let divisor = if self.chance(50) {
                    int(self.pick(&[1, 2, 3, 4, 5, 16, 255]))
                } else {
                    bin(
                        BinOp::Or,
                        bin(BinOp::And, self.expr(Ty::I64, d), int(255)),
                        int(1),
                    )
                };
                bin(op, self.expr(Ty::I64, d), divisor)
            }
            4 => {
                let from = self.pick(&[Ty::F64, Ty::Bool]);
                cast(Ty::I64, self.expr(from, d))
            }
            5 => Expr::Select(
                self.expr(Ty::Bool, d).boxed(),
                self.expr(Ty::I64, d).boxed(),
                self.expr(Ty::I64, d).boxed(),
            ),
            _ => self.i64_expr(true, depth),
        }
    }

    fn bool_expr(&mut self, leaf: bool, depth: u32) -> Expr {
        if leaf {
            return match self.rng.below(3) {
                0 => Expr::Bool(self.chance(50)),
                _ => v(self.var_of(Ty::Bool)),
            };
        }
        let d = depth - 1;
        match self.rng.below(6) {
            0 | 1 => {
                let op = self.pick(&[
                    CmpOp::Lt,
                    CmpOp::Le,
                    CmpOp::Gt,
                    CmpOp::Ge,
                    CmpOp::Eq,
                    CmpOp::Ne,
                ]);
                let ty = self.pick(&[Ty::F64, Ty::I64, Ty::Bool]);
                cmp(op, self.expr(ty, d), self.expr(ty, d))
            }
            2 => {
                let op = self.pick(&[
                    UnOp::Not,
                    UnOp::IsNan,
                    UnOp::IsInf,
                    UnOp::IsFinite,
                    UnOp::SignBit,
                    UnOp::BitNot,
                ]);
                let ty = if op == UnOp::BitNot {
                    Ty::Bool
                } else {
                    Ty::F64
                };
                un(op, self.expr(ty, d))
            }
            3 => {
                let op = self.pick(&[
                    BinOp::And,
                    BinOp::Or,
                    BinOp::Xor,
                    BinOp::Min,
                    BinOp::Max,
                    BinOp::PyMin,
                    BinOp::PyMax,
                ]);
                bin(op, self.expr(Ty::Bool, d), self.expr(Ty::Bool, d))
            }
            4 => {
                let from = self.pick(&[Ty::F64, Ty::I64]);
                cast(Ty::Bool, self.expr(from, d))
            }
            _ => self.bool_expr(true, depth),
        }
    }

    fn block(&mut self, n: usize) -> Vec<Stmt> {
        (0..n).map(|_| self.stmt()).collect()
    }

    fn stmt(&mut self) -> Stmt {
        self.depth += 1;
        let nested = self.depth < 3;
        let s = match self.rng.below(if nested { 12 } else { 7 }) {
            0 | 1 => {
                let ty = self.pick(&[Ty::F64, Ty::I64, Ty::Bool]);
                let var = self.var_of(ty);
                assign(var, self.expr(ty, 3))
            }
            2 => self.reduce(),
            3 => self.fill(),
            4 => {
                let a = self.pick(&[Arr(1), Arr(2), Arr(3)]);
                let ty = [Ty::F64, Ty::I64, Ty::Bool][a.0 as usize - 1];
                let i = bin(BinOp::Mod, self.expr(Ty::I64, 2), len(a));
                let store = Stmt::Store(a, i, self.expr(ty, 2));
                let var = self.var_of(ty);
                let read = assign(var, load(a, bin(BinOp::Mod, self.expr(Ty::I64, 2), len(a))));
                Stmt::If(cmp(CmpOp::Gt, len(a), int(0)), vec![store, read], vec![])
            }
            5 => {
                let cond = self.expr(Ty::Bool, 2);
                let (a, b) = (self.expr(Ty::I64, 1), self.expr(Ty::I64, 1));
                if self.chance(70) {
                    Stmt::Check {
                        cond: Expr::Bool(true),
                        err: E_CHECK,
                        a,
                        b,
                    }
                } else {
                    Stmt::Check {
                        cond,
                        err: E_CHECK,
                        a,
                        b,
                    }
                }
            }
            6 => {
                let sort = Stmt::ArrayOp(ArrayOp::SORT, Arr(1));
                let stat = self.pick(&[SortedStat::Median, SortedStat::Quantile]);
                // The IR's quantiles are in [0, 1] (param 1 is bound to one).
                let q = if self.chance(50) {
                    Expr::Param(1)
                } else {
                    f(self.pick(&[0.0, 0.1, 0.5, 0.75, 1.0]))
                };
                Stmt::If(
                    Expr::Bool(true),
                    vec![
                        sort,
                        Stmt::Sorted {
                            dst: Var(self.var_of(Ty::F64)),
                            stat,
                            arr: Arr(1),
                            q,
                        },
                    ],
                    vec![],
                )
            }
            7 | 8 => {
                let c = self.expr(Ty::Bool, 2);
                let (t, e) = (self.rng.below(3) as usize, self.rng.below(3) as usize);
                let mut then = self.block(t);
                if self.chance(15) {
                    then.push(ret(self.expr(Ty::F64, 2)));
                }
                Stmt::If(c, then, self.block(e))
            }
            9 | 10 if self.loops < 2 => {
                let counter = 12 + self.loops;
                self.loops += 1;
                let limit = self.rng.below(12) as i64;
                let mut body = vec![Stmt::If(
                    cmp(CmpOp::Ge, v(counter), int(limit)),
                    vec![Stmt::Break],
                    vec![],
                )];
                let k = self.rng.below(3) as usize;
                body.extend(self.block(k));
                if self.chance(30) {
                    let c = self.expr(Ty::Bool, 2);
                    body.push(Stmt::If(c, vec![Stmt::Continue], vec![]));
                }
                if self.chance(20) {
                    let c = self.expr(Ty::Bool, 2);
                    body.push(Stmt::If(c, vec![Stmt::Break], vec![]));
                }
                body.extend(self.block(1));
                self.loops -= 1;
                let init = assign(counter, int(0));
                let lp = Stmt::Loop {
                    body,
                    latch: vec![assign(counter, bin(BinOp::Add, v(counter), int(1)))],
                };
                Stmt::If(Expr::Bool(true), vec![init, lp], vec![])
            }
            _ => assign(self.var_of(Ty::F64), self.expr(Ty::F64, 4)),
        };
        self.depth -= 1;
        s
    }

    /// A reduction over the buffer, a scratch array, or a small constant range.
    fn reduce(&mut self) -> Stmt {
        let op = self.pick(&[
            ReduceOp::Sum,
            ReduceOp::SumInt,
            ReduceOp::Prod,
            ReduceOp::Min,
            ReduceOp::Max,
            ReduceOp::PyMin,
            ReduceOp::PyMax,
            ReduceOp::ArgMin,
            ReduceOp::ArgMax,
            ReduceOp::Any,
            ReduceOp::All,
            ReduceOp::Count,
        ]);
        let (elem_ty, result_ty) = op.types();
        let ix = 9 + self.index.len() as u32;
        let over = self.pick(&[Some(BUFFER), Some(BUFFER), Some(W), Some(Arr(1)), None]);
        let n = match over {
            Some(a) => len(a),
            None => int(self.rng.below(40) as i64 - 3),
        };
        self.index.push((ix, over));
        let elem = match (over, elem_ty) {
            (Some(a), Ty::F64)
                if self.chance(50) && a != Arr(1) || a == BUFFER && self.chance(50) =>
            {
                load(a, v(ix))
            }
            _ => self.expr(elem_ty, 3),
        };
        self.index.pop();
        let dst = self.var_of(result_ty);
        reduce(dst, op, n, ix, elem)
    }

    fn fill(&mut self) -> Stmt {
        let a = self.pick(&[Arr(1), Arr(1), Arr(2), Arr(3)]);
        let ty = [Ty::F64, Ty::I64, Ty::Bool][a.0 as usize - 1];
        let ix = 9 + self.index.len() as u32;
        let over = self.pick(&[Some(BUFFER), Some(BUFFER), Some(W), None]);
        let n = match over {
            Some(a) => len(a),
            None => int(self.rng.below(30) as i64 - 2),
        };
        self.index.push((ix, over));
        let elem = self.expr(ty, 3);
        let keep = self.chance(50).then(|| self.expr(Ty::Bool, 2));
        self.index.pop();
        Stmt::Fill {
            dst: a,
            len: n,
            index: Var(ix),
            elem,
            keep,
        }
    }

    fn program(&mut self) -> Func {
        let mut body = vec![need(0)];
        let k = 1 + self.rng.below(6) as usize;
        body.extend(self.block(k));
        body.push(ret(self.expr(Ty::F64, 3)));
        let mut func = func(
            GEN_VARS,
            &[
                ArrKind::Scratch { elem: Ty::F64 },
                ArrKind::Scratch { elem: Ty::I64 },
                ArrKind::Scratch { elem: Ty::Bool },
                ArrKind::Bound(0),
            ],
            body,
        );
        func.arrays[4].name = "w".into();
        func
    }
}

#[test]
fn random_programs_agree_with_the_interpreter() {
    let programs = if cfg!(debug_assertions) { 400 } else { 3000 };
    for seed in 0..programs {
        let mut gen = Gen {
            rng: Rng(0xC0FFEE ^ (seed * 0x9E37_79B9)),
            index: vec![],
            depth: 0,
            loops: 0,
        };
        let g = gen.program();
        let n = gen.pick(&[1usize, 5, 9, 25]);
        let spec = specialise(&g, n);
        let code = jit(&g, Some(&spec));
        let mut rng = Rng(seed + 1);
        let wlen = 1 + rng.below(12) as usize;
        let w = rng.buffer(wlen, true);
        let bound = Bound::new(
            vec![rng.value(), rng.below(5) as f64 * 0.25],
            vec![rng.next() as i64 >> 40, 3],
            vec![w],
        );
        for len in [n, n, 1, 2, 9, 30] {
            let buf = rng.buffer(len, true);
            agree(
                &code,
                &g,
                Some(&spec),
                &bound,
                &buf,
                &format!("program {seed}"),
            );
        }
    }
}
