//! The JIT against the interpreter, bit for bit, on hand-built IR and random inputs.

use super::{compile, JitCode, JitOptions};
use crate::error::Span;
use crate::interp;
use crate::ir::{
    ArrDecl, ArrKind, Arr, BinOp, CmpOp, ErrorId, ErrorSite, Expr, Func, ReduceOp, SortedStat, Stmt, Ty, UnOp, Var,
    VarDecl, ArrayOp, BUFFER,
};
use crate::math::MathFn;
use crate::runtime::{ArrayRef, Failure, RawContext};
use std::ffi::c_void;

// -------------------------------------------------------------------------------------------------
// Building IR

const E_CHECK: ErrorId = ErrorId(2);
const E_EMPTY: ErrorId = ErrorId(3);

fn func(vars: &[Ty], scratch: &[ArrKind], body: Vec<Stmt>) -> Func {
    let mut arrays = vec![ArrDecl { kind: ArrKind::Buffer, name: "x".into() }];
    arrays.extend(scratch.iter().enumerate().map(|(i, k)| ArrDecl { kind: k.clone(), name: format!("a{}", i + 1) }));
    let site = |m: &str| ErrorSite { message: m.into(), span: Span::default() };
    Func {
        vars: vars.iter().enumerate().map(|(i, &ty)| VarDecl { ty, name: format!("v{i}") }).collect(),
        arrays,
        body,
        errors: vec![site("invalid arguments"), site("out of scratch memory"), site("check {a} {b}"), site("empty")],
        filter_size: None,
    }
}

/// The same Func lowered for a known size: the interpreter and the JIT both read `Len(BUFFER)`
/// as `n` then.
fn specialise(f: &Func, n: usize) -> Func {
    Func { filter_size: Some(n), ..f.clone() }
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
    Stmt::Check { cond: cmp(CmpOp::Gt, len(BUFFER), int(k)), err: E_CHECK, a: len(BUFFER), b: int(k) }
}
fn reduce(dst: u32, op: ReduceOp, n: Expr, index: u32, elem: Expr) -> Stmt {
    let on_empty = op.needs_nonempty().then_some(E_EMPTY);
    Stmt::Reduce { dst: Var(dst), op, len: n, index: Var(index), elem, on_empty }
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
        (0..n).map(|_| if special { self.value() } else { self.finite() }).collect()
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
        let refs = arrays.iter().map(|a| ArrayRef { ptr: a.as_ptr(), len: a.len() as i64 }).collect();
        Bound { scalars, ints, arrays, refs }
    }
    fn none() -> Bound {
        Bound::new(vec![], vec![], vec![])
    }
    fn context(&self) -> RawContext {
        let _ = &self.arrays;
        RawContext::new(self.scalars.as_ptr(), self.ints.as_ptr(), self.refs.as_ptr())
    }
}

fn call(code: &JitCode, buf: &[f64], ctx: &RawContext) -> (i32, f64) {
    let mut out = 0.0;
    let rc = unsafe {
        (code.entry())(buf.as_ptr() as *mut f64, buf.len() as isize, &mut out, ctx as *const RawContext as *mut c_void)
    };
    (rc, out)
}

fn same(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

/// Runs `buf` through the interpreter (the specialised Func when the size matches) and the JIT,
/// and asserts the same outcome: the same bits, or the same recorded failure.
fn agree(code: &JitCode, general: &Func, spec: Option<&Func>, bound: &Bound, buf: &[f64], what: &str) {
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
            assert_eq!(rc, 1, "{what}: JIT failed ({failure:?}) where the interpreter gave {e} on {buf:?}");
            assert!(same(e, out), "{what}: interpreter {e:?} ({:#x}) vs JIT {out:?} ({:#x}) on {buf:?}", e.to_bits(), out.to_bits());
        }
        Err(()) => {
            assert_eq!(rc, 0, "{what}: JIT returned {out} where the interpreter failed with {expected_failure:?} on {buf:?}");
            assert_eq!(failure, expected_failure, "{what}: failures differ on {buf:?}");
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
fn check_sizes(general: &Func, bound: &Bound, sizes: &[usize], lens: &[usize], rounds: usize, special: bool, what: &str) {
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

const SUM_LENS: &[usize] = &[0, 1, 7, 8, 9, 15, 16, 17, 25, 127, 128, 129, 255, 256, 257, 300];

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
        let g = func(&[result_ty, Ty::I64], &[], vec![reduce(0, op, len(BUFFER), 1, elem), ret(cast(Ty::F64, v(0)))]);
        let what = format!("{op:?}");
        check_sizes(&g, &Bound::none(), &[1, 9, 25, 300], SUM_LENS, 6, true, &what);
        if op == ReduceOp::Sum {
            // Finite values, where every rounding shows.
            check_sizes(&g, &Bound::none(), &[8, 9, 16, 17, 128, 129, 256], SUM_LENS, 10, false, "finite sum");
            // An element that is not a plain load is materialised before summing.
            let scaled = bin(BinOp::Mul, x(v(1)), f(0.3));
            let g = func(&[Ty::F64, Ty::I64], &[], vec![reduce(0, op, len(BUFFER), 1, scaled), ret(v(0))]);
            check_sizes(&g, &Bound::none(), &[9, 200, 300], SUM_LENS, 10, false, "scaled sum");
        }
    }
}

#[test]
fn sum_matches_runtime_pairwise_sum() {
    let g = func(&[Ty::F64, Ty::I64], &[], vec![reduce(0, ReduceOp::Sum, len(BUFFER), 1, x(v(1))), ret(v(0))]);
    let plain = jit(&g, None);
    let mut rng = Rng(7);
    for n in 0..600 {
        let buf = rng.buffer(n, false);
        let (rc, out) = call(&plain, &buf, &Bound::none().context());
        assert_eq!(rc, 1);
        assert_eq!(out.to_bits(), crate::runtime::pairwise_sum(&buf).to_bits(), "n = {n}");
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
    check_sizes(&g, &Bound::none(), &[9], &[0, 3, 5, 9, 10], 10, true, "sum of squares");
}

#[test]
fn empty_min_fails_with_on_empty() {
    let g = func(&[Ty::F64, Ty::I64], &[], vec![reduce(0, ReduceOp::Min, len(BUFFER), 1, x(v(1))), ret(v(0))]);
    let code = jit(&g, None);
    let bound = Bound::none();
    let ctx = bound.context();
    assert_eq!(call(&code, &[], &ctx).0, 0);
    assert_eq!(ctx.failure(), Some(Failure { site: E_EMPTY.0, a: 0, b: 0 }));
    check_sizes(&g, &bound, &[0, 3], &[0, 3], 3, true, "empty min");
}

#[test]
fn fill_keep_sort_median_quantile() {
    // a1 = x[~isnan(x)]; sort; med = median(a1)
    // a2 = x * 2; sort; q = quantile(a2, p0); return med + q + len(a1)
    let g = func(
        &[Ty::F64, Ty::I64, Ty::F64],
        &[ArrKind::Scratch { elem: Ty::F64 }, ArrKind::Scratch { elem: Ty::F64 }],
        vec![
            Stmt::Fill { dst: Arr(1), len: len(BUFFER), index: Var(1), elem: x(v(1)), keep: Some(un(UnOp::Not, un(UnOp::IsNan, x(v(1))))) },
            Stmt::ArrayOp(ArrayOp::Sort, Arr(1)),
            Stmt::Sorted { dst: Var(0), stat: SortedStat::Median, arr: Arr(1), q: f(0.0) },
            Stmt::Fill { dst: Arr(2), len: len(BUFFER), index: Var(1), elem: bin(BinOp::Mul, x(v(1)), f(2.0)), keep: None },
            Stmt::ArrayOp(ArrayOp::Sort, Arr(2)),
            Stmt::Sorted { dst: Var(2), stat: SortedStat::Quantile, arr: Arr(2), q: Expr::Param(0) },
            ret(bin(BinOp::Add, bin(BinOp::Add, v(0), v(2)), cast(Ty::F64, len(Arr(1))))),
        ],
    );
    for q in [0.0, 0.25, 0.5, 0.9, 1.0] {
        let bound = Bound::new(vec![q], vec![], vec![]);
        check_sizes(&g, &bound, &[1, 9, 25, 1500], &[0, 1, 2, 8, 9, 10, 25, 1500], 8, true, "median/quantile");
    }
}

#[test]
fn int_and_bool_scratch_arrays() {
    // a1 (int) = int(x * 3) for x > -1; a2 (bool) = x != 0; count(a2) + sum(a1) + a1[0] if any
    let g = func(
        &[Ty::I64, Ty::I64, Ty::I64, Ty::I64],
        &[ArrKind::Scratch { elem: Ty::I64 }, ArrKind::Scratch { elem: Ty::Bool }],
        vec![
            Stmt::Fill {
                dst: Arr(1),
                len: len(BUFFER),
                index: Var(1),
                elem: cast(Ty::I64, bin(BinOp::Mul, x(v(1)), f(3.0))),
                keep: Some(cmp(CmpOp::Gt, x(v(1)), f(-1.0))),
            },
            Stmt::Fill { dst: Arr(2), len: len(BUFFER), index: Var(1), elem: cast(Ty::Bool, x(v(1))), keep: None },
            reduce(0, ReduceOp::Count, len(Arr(2)), 1, load(Arr(2), v(1))),
            reduce(2, ReduceOp::SumInt, len(Arr(1)), 1, load(Arr(1), v(1))),
            assign(3, int(0)),
            Stmt::If(cmp(CmpOp::Gt, len(Arr(1)), int(0)), vec![assign(3, load(Arr(1), int(0)))], vec![]),
            // Overwrite a cell: a1[0] = 7 when non-empty.
            Stmt::If(cmp(CmpOp::Gt, len(Arr(1)), int(0)), vec![Stmt::Store(Arr(1), int(0), int(7))], vec![]),
            Stmt::If(cmp(CmpOp::Gt, len(Arr(1)), int(0)), vec![assign(3, bin(BinOp::Add, v(3), load(Arr(1), int(0))))], vec![]),
            ret(cast(Ty::F64, bin(BinOp::Add, bin(BinOp::Add, v(0), v(2)), v(3)))),
        ],
    );
    check_sizes(&g, &Bound::none(), &[0, 9, 2000], &[0, 1, 9, 30, 2000], 6, true, "int/bool scratch");
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
        Stmt::If(cmp(CmpOp::Gt, x(v(1)), f(50.0)), vec![Stmt::Break], vec![assign(0, bin(BinOp::Add, v(0), x(v(1))))]),
    ];
    let g = func(
        &[Ty::F64, Ty::I64],
        &[],
        vec![
            Stmt::Loop { body, latch: vec![assign(1, bin(BinOp::Add, v(1), int(1)))] },
            ret(bin(BinOp::Add, bin(BinOp::Mul, v(0), f(1000.0)), cast(Ty::F64, v(1)))),
        ],
    );
    check_sizes(&g, &Bound::none(), &[9], &[0, 1, 5, 9, 40], 20, true, "loop");
}

#[test]
fn nested_loops_and_unreachable_code() {
    // for i in range(len): for j in range(i): if x[j] > x[i]: count += 1 (inversions)
    // with a Continue inside the inner latch continuing the outer loop, and dead code after
    // returns and breaks.
    let inner = Stmt::Loop {
        body: vec![
            Stmt::If(cmp(CmpOp::Ge, v(2), v(1)), vec![Stmt::Break, assign(0, int(-99))], vec![]),
            Stmt::If(cmp(CmpOp::Gt, x(v(2)), x(v(1))), vec![assign(0, bin(BinOp::Add, v(0), int(1)))], vec![]),
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
        vec![outer, ret(cast(Ty::F64, v(0))), assign(0, int(5)), ret(f(1.0))],
    );
    check_sizes(&g, &Bound::none(), &[9], &[0, 1, 2, 9, 30], 10, true, "nested loops");

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
    let g = func(&[Ty::I64, Ty::I64], &[], vec![latch_continue, ret(cast(Ty::F64, v(0)))]);
    check_sizes(&g, &Bound::none(), &[], &[0, 3], 2, true, "continue in latch");
    let g = func(&[Ty::I64], &[], vec![Stmt::If(cmp(CmpOp::Gt, len(BUFFER), int(2)), vec![Stmt::Break], vec![ret(f(2.0))])]);
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
    assert_eq!(ctx.failure(), Some(Failure { site: E_CHECK.0, a: 2, b: 3 }));
    // Later calls return 0 at once, even valid ones, and the first failure is kept.
    assert_eq!(call(&code, &long, &ctx).0, 0);
    assert_eq!(call(&code, &[0.0; 9], &ctx).0, 0);
    assert_eq!(call(&code, &[], &ctx).0, 0);
    assert_eq!(ctx.failure(), Some(Failure { site: E_CHECK.0, a: 2, b: 3 }));
    ctx.reset();
    assert_eq!(call(&code, &long, &ctx), (1, 4.0));
    check_sizes(&g, &bound, &[9], &[0, 3, 4, 9], 3, true, "check");
}

#[test]
fn null_and_invalid_arguments() {
    let g = func(&[Ty::F64, Ty::I64], &[], vec![reduce(0, ReduceOp::Sum, len(BUFFER), 1, x(v(1))), ret(v(0))]);
    let code = jit(&g, Some(&specialise(&g, 9)));
    let bound = Bound::none();
    let ctx = bound.context();
    let ctx_ptr = &ctx as *const RawContext as *mut c_void;
    let buf = [1.0; 9];
    let mut out = 0.0;
    unsafe {
        let entry = code.entry();
        // No context: 0, and nothing recorded anywhere.
        assert_eq!(entry(buf.as_ptr() as *mut f64, 9, &mut out, std::ptr::null_mut()), 0);
        // No return slot.
        assert_eq!(entry(buf.as_ptr() as *mut f64, 9, std::ptr::null_mut(), ctx_ptr), 0);
        assert_eq!(ctx.failure(), Some(Failure { site: 0, a: 9, b: 0 }));
        ctx.reset();
        // No buffer for 9 values.
        assert_eq!(entry(std::ptr::null_mut(), 9, &mut out, ctx_ptr), 0);
        assert_eq!(ctx.failure(), Some(Failure { site: 0, a: 9, b: 0 }));
        ctx.reset();
        // A negative size.
        assert_eq!(entry(buf.as_ptr() as *mut f64, -4, &mut out, ctx_ptr), 0);
        assert_eq!(ctx.failure(), Some(Failure { site: 0, a: -4, b: 0 }));
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
            Stmt::Check { cond: cmp(CmpOp::Eq, len(Arr(1)), len(BUFFER)), err: E_CHECK, a: len(Arr(1)), b: len(BUFFER) },
            reduce(0, ReduceOp::Sum, len(BUFFER), 1, bin(BinOp::Mul, load(Arr(1), v(1)), x(v(1)))),
            ret(bin(
                BinOp::Add,
                bin(BinOp::Add, bin(BinOp::Mul, v(0), Expr::Param(1)), Expr::Param(0)),
                cast(Ty::F64, bin(BinOp::Sub, Expr::IntParam(0), Expr::IntParam(1))),
            )),
        ],
    );
    g.arrays[1].name = "w".into();
    for n in [0usize, 1, 9, 25] {
        let mut rng = Rng(n as u64 + 1);
        let w = rng.buffer(n, false);
        let bound = Bound::new(vec![rng.value(), rng.finite()], vec![7, -3], vec![vec![9.0], w]);
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
    for op in [BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Min, BinOp::Max, BinOp::PyMin, BinOp::PyMax, BinOp::And, BinOp::Or, BinOp::Xor, BinOp::Shl, BinOp::Shr] {
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
                Stmt::Check { cond: cmp(CmpOp::Ne, b(), int(0)), err: E_CHECK, a: b(), b: int(0) },
                ret(cast(Ty::F64, e.clone())),
            ],
        );
        let code = jit(&g, None);
        let mut rng = Rng(3);
        let specials = [0, 1, -1, 2, -2, 3, -7, 7, 1 << 40, -(1 << 40), i64::MAX, i64::MIN + 1, 63, 64, 65, -64];
        for k in 0..400 {
            // Never i64::MIN: the interpreter's shim overflows on `MIN // -1` (see math.rs).
            let pick = |rng: &mut Rng| {
                let v = if k % 2 == 0 { specials[rng.below(specials.len() as u64) as usize] } else { rng.next() as i64 >> rng.below(64) };
                v.max(i64::MIN + 1)
            };
            let (p, q) = (pick(&mut rng), pick(&mut rng));
            let bound = Bound::new(vec![], vec![p, q], vec![]);
            agree(&code, &g, None, &bound, &[], &format!("{e:?} with {p}, {q}"));
        }
    }
}

#[test]
fn float_operations_and_conversions() {
    let a = || x(int(0));
    let b = || x(int(1));
    let mut exprs: Vec<Expr> = Vec::new();
    for op in [BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div, BinOp::Min, BinOp::Max, BinOp::PyMin, BinOp::PyMax] {
        exprs.push(bin(op, a(), b()));
    }
    for op in [UnOp::Neg, UnOp::Abs, UnOp::Sqrt, UnOp::Floor, UnOp::Ceil, UnOp::Trunc, UnOp::RoundEven] {
        exprs.push(un(op, a()));
    }
    for op in [UnOp::IsNan, UnOp::IsInf, UnOp::IsFinite, UnOp::Not] {
        exprs.push(cast(Ty::F64, un(op, a())));
    }
    for op in [CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge, CmpOp::Eq, CmpOp::Ne] {
        exprs.push(cast(Ty::F64, cmp(op, a(), b())));
        // Mixed operands compare as integers, as in eval::cmp.
        exprs.push(cast(Ty::F64, cmp(op, cast(Ty::Bool, a()), cast(Ty::Bool, b()))));
    }
    exprs.push(cast(Ty::F64, cast(Ty::I64, a())));
    exprs.push(cast(Ty::F64, cast(Ty::Bool, a())));
    exprs.push(Expr::Select(cmp(CmpOp::Lt, a(), b()).boxed(), a().boxed(), b().boxed()));
    exprs.push(Expr::Select(cast(Ty::Bool, a()).boxed(), f(1.5).boxed(), b().boxed()));
    exprs.push(cast(Ty::F64, bin(BinOp::Xor, cast(Ty::Bool, a()), cast(Ty::Bool, b()))));
    exprs.push(cast(Ty::F64, bin(BinOp::PyMax, cast(Ty::Bool, a()), cast(Ty::Bool, b()))));
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
            agree(&code, &g, Some(&spec), &Bound::none(), &buf, &format!("{e:?}"));
        }
        for (p, q) in [(0.0, -0.0), (-0.0, 0.0), (f64::NAN, 1.0), (1.0, f64::NAN), (2.5, 0.0), (-2.5, 1.0), (0.5, 3.0), (1e300, 1e-300)] {
            agree(&code, &g, Some(&spec), &Bound::none(), &[p, q], &format!("{e:?}"));
            agree(&code, &g, Some(&spec), &Bound::none(), &[p, q, 1.0], &format!("{e:?}"));
        }
    }
}

#[test]
fn every_math_function() {
    for &m in MathFn::ALL {
        let args: Vec<Expr> = (0..m.arity() as i64).map(|i| x(int(i))).collect();
        let g = func(&[], &[], vec![need(1), ret(Expr::Call(m, args))]);
        let code = jit(&g, None);
        let mut rng = Rng(5);
        for _ in 0..200 {
            let buf = rng.buffer(2, true);
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
            ret(bin(BinOp::Sub, x(v(2)), bin(BinOp::Div, v(0), cast(Ty::F64, len(BUFFER))))),
        ],
    );
    check_sizes(&g, &bound, &[9], &[0, 1, 9, 10], 20, true, "centre minus mean");
}

#[test]
fn options_keep_clif_and_disassembly() {
    let g = func(&[Ty::F64, Ty::I64], &[], vec![reduce(0, ReduceOp::Max, len(BUFFER), 1, x(v(1))), ret(v(0))]);
    let spec = specialise(&g, 9);
    let code = compile(&g, Some(&spec), &JitOptions { clif_text: true, disasm: true }).unwrap();
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
        func(&[], &[], vec![ret(bin(BinOp::Div, int(1), Expr::IntParam(0)))]),
        func(&[], &[], vec![ret(Expr::Call(MathFn::Pow, vec![f(1.0)]))]),
        func(&[], &[], vec![ret(x(Expr::Var(Var(7))))]),
        func(&[], &[], vec![ret(load(Arr(5), int(0)))]),
        func(&[], &[], vec![Stmt::ArrayOp(ArrayOp::Sort, BUFFER), ret(f(0.0))]),
    ];
    for g in &bad {
        let e = compile(g, None, &JitOptions::default()).expect_err("ill-typed IR must not compile");
        assert_eq!(e.kind, crate::error::ErrorKind::Codegen);
    }
}

#[test]
fn compiled_code_is_shareable_across_threads() {
    let g = func(&[Ty::F64, Ty::I64], &[ArrKind::Scratch { elem: Ty::F64 }], vec![
        Stmt::Fill { dst: Arr(1), len: len(BUFFER), index: Var(1), elem: x(v(1)), keep: None },
        Stmt::ArrayOp(ArrayOp::Sort, Arr(1)),
        Stmt::Sorted { dst: Var(0), stat: SortedStat::Median, arr: Arr(1), q: f(0.0) },
        ret(v(0)),
    ]);
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

#[test]
#[ignore]
fn zz_show() {
    let g = func(&[Ty::F64, Ty::I64], &[ArrKind::Bound(0)], vec![
        Stmt::Check { cond: cmp(CmpOp::Eq, len(Arr(1)), len(BUFFER)), err: E_CHECK, a: len(Arr(1)), b: len(BUFFER) },
        reduce(0, ReduceOp::Sum, len(BUFFER), 1, bin(BinOp::Mul, load(Arr(1), v(1)), x(v(1)))), ret(v(0))]);
    let code = compile(&g, None, &JitOptions { clif_text: true, disasm: true }).unwrap();
    println!("{}\n{}", code.clif().unwrap(), code.disasm().unwrap());
}

#[test]
#[ignore]
fn zz_perf() {
    use std::hint::black_box;
    use std::time::Instant;
    let min_g = func(&[Ty::F64, Ty::I64], &[], vec![reduce(0, ReduceOp::Min, len(BUFFER), 1, x(v(1))), ret(v(0))]);
    let sum_g = func(&[Ty::F64, Ty::I64], &[], vec![reduce(0, ReduceOp::Sum, len(BUFFER), 1, x(v(1))), ret(v(0))]);
    let med_g = func(&[Ty::F64, Ty::I64], &[ArrKind::Scratch { elem: Ty::F64 }], vec![
        Stmt::Fill { dst: Arr(1), len: len(BUFFER), index: Var(1), elem: x(v(1)), keep: None },
        Stmt::ArrayOp(ArrayOp::Sort, Arr(1)),
        Stmt::Sorted { dst: Var(0), stat: SortedStat::Median, arr: Arr(1), q: f(0.0) },
        ret(v(0)),
    ]);
    let w_g = func(&[Ty::F64, Ty::I64], &[ArrKind::Bound(0)], vec![
        Stmt::Check { cond: cmp(CmpOp::Eq, len(Arr(1)), len(BUFFER)), err: E_CHECK, a: len(Arr(1)), b: len(BUFFER) },
        reduce(0, ReduceOp::Sum, len(BUFFER), 1, bin(BinOp::Mul, load(Arr(1), v(1)), x(v(1)))), ret(v(0))]);
    for (name, g) in [("min", &min_g), ("sum", &sum_g), ("median", &med_g), ("wsum", &w_g)] {
        for n in [9usize, 25] {
            let spec = specialise(g, n);
            let t = Instant::now();
            let reps = 300;
            for _ in 0..reps {
                black_box(jit(g, Some(&spec)));
            }
            let ct = t.elapsed().as_secs_f64() / reps as f64;
            let code = jit(g, Some(&spec));
            let plain = jit(g, None);
            let w: Vec<f64> = (0..n).map(|i| i as f64 * 0.1).collect();
            let bound = Bound::new(vec![], vec![], vec![w.clone()]);
            let ctx = bound.context();
            let mut rng = Rng(1);
            let bufs: Vec<Vec<f64>> = (0..1024).map(|_| (0..n).map(|_| (rng.next() as f64 / u64::MAX as f64 - 0.5) * 200.0).collect()).collect();
            let calls = 2_000_000;
            let time = |c: &JitCode| {
                let t = Instant::now();
                let mut acc = 0.0;
                for k in 0..calls {
                    let b = &bufs[k & 1023];
                    acc += call(c, black_box(b), &ctx).1;
                }
                black_box(acc);
                t.elapsed().as_secs_f64() / calls as f64 * 1e9
            };
            let (ts, tg) = (time(&code), time(&plain));
            let t = Instant::now();
            let mut acc = 0.0;
            let mut scratch = vec![0.0; n];
            for k in 0..calls {
                let b = black_box(&bufs[k & 1023]);
                acc += match name {
                    "min" => b.iter().copied().fold(b[0], crate::math::fmin),
                    "sum" => crate::runtime::pairwise_sum(b),
                    "median" => { scratch.copy_from_slice(b); unsafe { crate::runtime::ndjit_rt_sort(scratch.as_mut_ptr(), n as i64); crate::runtime::ndjit_rt_median(scratch.as_ptr(), n as i64) } }
                    _ => crate::runtime::pairwise_sum(&b.iter().zip(&w).map(|(a, c)| a * c).collect::<Vec<_>>()),
                };
            }
            black_box(acc);
            let tr = t.elapsed().as_secs_f64() / calls as f64 * 1e9;
            println!("{name:7} n={n:3}: compile {:7.1} us | call spec {ts:6.2} ns, general {tg:6.2} ns, rust {tr:6.2} ns", ct * 1e6);
        }
    }
}

#[test]
#[ignore]
fn zz_breakdown() {
    use std::time::Instant;
    let w_g = func(&[Ty::F64, Ty::I64], &[ArrKind::Bound(0)], vec![
        Stmt::Check { cond: cmp(CmpOp::Eq, len(Arr(1)), len(BUFFER)), err: E_CHECK, a: len(Arr(1)), b: len(BUFFER) },
        reduce(0, ReduceOp::Sum, len(BUFFER), 1, bin(BinOp::Mul, load(Arr(1), v(1)), x(v(1)))), ret(v(0))]);
    let min_g = func(&[Ty::F64, Ty::I64], &[], vec![reduce(0, ReduceOp::Min, len(BUFFER), 1, x(v(1))), ret(v(0))]);
    for (name, g) in [("wsum", &w_g), ("min", &min_g)] {
        for spec in [None, Some(specialise(g, 9)), Some(specialise(g, 25))] {
            let (mut t_new, mut t_tr, mut t_def, mut t_fin) = (0.0, 0.0, 0.0, 0.0);
            let _ = cranelift_codegen::timing::take_current();
            let reps = 300;
            for _ in 0..reps {
                let t0 = Instant::now();
                let mut j = super::Jit::new().unwrap();
                let t1 = Instant::now();
                let sig = super::translate::entry_signature(&j.module);
                let id = cranelift_module::Module::declare_anonymous_function(&mut j.module, &sig).unwrap();
                cranelift_module::Module::clear_context(&j.module, &mut j.ctx);
                j.ctx.func.signature = sig;
                super::translate::translate(&mut j.module, &mut j.ctx.func, &mut j.builder_ctx, g, spec.as_ref()).unwrap();
                let t2 = Instant::now();
                cranelift_module::Module::define_function(&mut j.module, id, &mut j.ctx).unwrap();
                cranelift_module::Module::clear_context(&j.module, &mut j.ctx);
                let t3 = Instant::now();
                let code = j.finish(super::Defined { id, clif: None, disasm: None }).unwrap();
                drop(code);
                let t4 = Instant::now();
                t_new += (t1 - t0).as_secs_f64();
                t_tr += (t2 - t1).as_secs_f64();
                t_def += (t3 - t2).as_secs_f64();
                t_fin += (t4 - t3).as_secs_f64();
            }
            let us = |t: f64| t / reps as f64 * 1e6;
            println!("{}", cranelift_codegen::timing::take_current());
            println!("{name} spec={:?}: new {:.1} translate {:.1} cranelift {:.1} finalize+drop {:.1} us", spec.as_ref().map(|s| s.filter_size), us(t_new), us(t_tr), us(t_def), us(t_fin));
        }
    }
}
