//! Constant folding and simplification, done once on the IR for every backend.
//!
//! Folding evaluates through [`super::eval`], the same definitions the interpreter uses, so it can
//! never change a result. It also propagates variables assigned once to a constant (the centre
//! index `len(x) // 2` of a specialised filter, say), removes checks that always pass, branches
//! that are never taken, and code after a `return`.

use super::eval::{self, Val};
use super::{stmt_blocks, BinOp, CmpOp, Expr, Func, Stmt, UnOp, Var};
use std::collections::HashMap;

/// Folds a function in place.
pub fn fold(func: &mut Func) {
    let mut body = std::mem::take(&mut func.body);
    for _ in 0..3 {
        body = fold_block(body, func);
        let consts = single_constants(&body);
        if consts.is_empty() {
            break;
        }
        body = body.into_iter().map(|s| subst_stmt(s, &consts)).collect();
    }
    func.body = fold_block(body, func);
}

/// The value of an expression if it folds to a constant.
pub fn const_expr(e: &Expr) -> Option<Val> {
    as_const(&fold_expr(e.clone()))
}

fn as_const(e: &Expr) -> Option<Val> {
    match e {
        Expr::F64(v) => Some(Val::F(*v)),
        Expr::I64(v) => Some(Val::I(*v)),
        Expr::Bool(v) => Some(Val::B(*v)),
        _ => None,
    }
}

fn lit(v: Val) -> Expr {
    match v {
        Val::F(v) => Expr::F64(v),
        Val::I(v) => Expr::I64(v),
        Val::B(v) => Expr::Bool(v),
    }
}

/// Folds an expression bottom-up.
pub fn fold_expr(e: Expr) -> Expr {
    crate::with_stack(|| fold_inner(e))
}

fn fold_inner(e: Expr) -> Expr {
    match e {
        Expr::Load(a, i) => Expr::Load(a, fold_expr(*i).boxed()),
        Expr::Unary(op, x) => {
            let x = fold_expr(*x);
            if let Some(v) = as_const(&x) {
                return lit(eval::unary(op, v));
            }
            match (op, x) {
                (UnOp::Not, Expr::Unary(UnOp::Not, inner)) => *inner,
                (op, x) => Expr::Unary(op, x.boxed()),
            }
        }
        Expr::Cast(ty, x) => {
            let x = fold_expr(*x);
            match as_const(&x) {
                Some(v) => lit(eval::cast(ty, v)),
                None => Expr::Cast(ty, x.boxed()),
            }
        }
        Expr::Binary(op, a, b) => {
            let (a, b) = (fold_expr(*a), fold_expr(*b));
            match (as_const(&a), as_const(&b)) {
                // Integer division by a constant zero is guarded by a check; never fold it.
                (Some(x), Some(y)) if !(matches!(op, BinOp::FloorDiv | BinOp::Mod) && y.i() == 0) => lit(eval::binary(op, x, y)),
                (_, cb) => simplify_binary(op, a, b, cb),
            }
        }
        Expr::Cmp(op, a, b) => {
            let (a, b) = (fold_expr(*a), fold_expr(*b));
            if let (Some(x), Some(y)) = (as_const(&a), as_const(&b)) {
                return Expr::Bool(eval::cmp(op, x, y));
            }
            // An integer compared with itself (e.g. two lengths of the same array).
            if a == b && !is_float(&a) {
                return Expr::Bool(matches!(op, CmpOp::Eq | CmpOp::Le | CmpOp::Ge));
            }
            Expr::Cmp(op, a.boxed(), b.boxed())
        }
        Expr::Select(c, a, b) => {
            let (c, a, b) = (fold_expr(*c), fold_expr(*a), fold_expr(*b));
            match as_const(&c) {
                Some(v) => {
                    if v.b() {
                        a
                    } else {
                        b
                    }
                }
                None if a == b => a,
                None => Expr::Select(c.boxed(), a.boxed(), b.boxed()),
            }
        }
        Expr::Call(f, args) => {
            let args: Vec<Expr> = args.into_iter().map(fold_expr).collect();
            let consts: Option<Vec<f64>> = args.iter().map(|a| as_const(a).map(|v| v.f())).collect();
            match consts {
                Some(xs) => Expr::F64(eval::call(f, &xs)),
                None => Expr::Call(f, args),
            }
        }
        e => e,
    }
}

/// Whether an expression is (conservatively) float-typed; float `x == x` is false for NaN.
fn is_float(e: &Expr) -> bool {
    !matches!(e, Expr::I64(_) | Expr::Len(_) | Expr::IntParam(_) | Expr::Bool(_))
        && !matches!(e, Expr::Binary(_, a, _) if !is_float(a))
}

/// Identities that hold bit for bit: only integer and boolean ones, and `x * 1.0`, `x - 0.0`.
fn simplify_binary(op: BinOp, a: Expr, b: Expr, cb: Option<Val>) -> Expr {
    let ca = as_const(&a);
    match (op, ca, cb) {
        (BinOp::Add, _, Some(Val::I(0))) | (BinOp::Sub, _, Some(Val::I(0))) | (BinOp::Mul, _, Some(Val::I(1))) => a,
        (BinOp::Add, Some(Val::I(0)), _) | (BinOp::Mul, Some(Val::I(1)), _) => b,
        (BinOp::Mul, _, Some(Val::F(v))) if v == 1.0 => a,
        (BinOp::Sub, _, Some(Val::F(v))) if v == 0.0 && v.is_sign_positive() => a,
        (BinOp::And, _, Some(Val::B(true))) | (BinOp::Or, _, Some(Val::B(false))) => a,
        (BinOp::And, Some(Val::B(true)), _) | (BinOp::Or, Some(Val::B(false)), _) => b,
        (BinOp::And, _, Some(Val::B(false))) | (BinOp::And, Some(Val::B(false)), _) => Expr::Bool(false),
        (BinOp::Or, _, Some(Val::B(true))) | (BinOp::Or, Some(Val::B(true)), _) => Expr::Bool(true),
        _ => Expr::Binary(op, a.boxed(), b.boxed()),
    }
}

fn fold_block(stmts: Vec<Stmt>, func: &Func) -> Vec<Stmt> {
    let mut out = Vec::with_capacity(stmts.len());
    for s in stmts {
        let s = fold_stmt(s, func);
        match s {
            Folded::None => {}
            Folded::One(s) => {
                let ends = ends_block(&s);
                out.push(s);
                if ends {
                    break; // what follows is unreachable
                }
            }
            Folded::Many(ss) => {
                let mut ended = false;
                for s in ss {
                    ended = ends_block(&s);
                    out.push(s);
                    if ended {
                        break;
                    }
                }
                if ended {
                    break;
                }
            }
        }
    }
    out
}

/// Whether control never continues past the statement.
fn ends_block(s: &Stmt) -> bool {
    match s {
        Stmt::Return(_) | Stmt::Succeed | Stmt::Break | Stmt::Continue => true,
        Stmt::Check { cond: Expr::Bool(false), .. } => true,
        Stmt::If(_, a, b) => a.last().is_some_and(ends_block) && b.last().is_some_and(ends_block),
        _ => false,
    }
}

enum Folded {
    None,
    One(Stmt),
    Many(Vec<Stmt>),
}

fn fold_stmt(s: Stmt, func: &Func) -> Folded {
    let f = fold_expr;
    Folded::One(match s {
        Stmt::Assign(v, e) => Stmt::Assign(v, f(e)),
        Stmt::Store(a, i, v) => Stmt::Store(a, f(i), f(v)),
        Stmt::If(c, a, b) => {
            let c = f(c);
            let (a, b) = (fold_block(a, func), fold_block(b, func));
            match as_const(&c) {
                Some(v) => return Folded::Many(if v.b() { a } else { b }),
                None if a.is_empty() && b.is_empty() => return Folded::None,
                None => Stmt::If(c, a, b),
            }
        }
        Stmt::Loop { body, latch } => Stmt::Loop { body: fold_block(body, func), latch: fold_block(latch, func) },
        Stmt::Check { cond, err, a, b } => {
            let cond = f(cond);
            if as_const(&cond) == Some(Val::B(true)) {
                return Folded::None;
            }
            Stmt::Check { cond, err, a: f(a), b: f(b) }
        }
        Stmt::Return(e) => Stmt::Return(f(e)),
        Stmt::Reduce { dst, op, len, index, elem, on_empty } => Stmt::Reduce { dst, op, len: f(len), index, elem: f(elem), on_empty },
        Stmt::Fill { dst, len, index, elem, keep } => Stmt::Fill { dst, len: f(len), index, elem: f(elem), keep: keep.map(f) },
        Stmt::Sorted { dst, stat, arr, q } => Stmt::Sorted { dst, stat, arr, q: f(q) },
        s @ (Stmt::Break | Stmt::Continue | Stmt::ArrayOp(..) | Stmt::Succeed) => s,
    })
}

/// Variables assigned exactly once in the whole function, by a top-level `Assign` of a constant.
fn single_constants(body: &[Stmt]) -> HashMap<Var, Expr> {
    let mut counts: HashMap<Var, usize> = HashMap::new();
    count_defs(body, &mut counts);
    let mut out = HashMap::new();
    for s in body {
        if let Stmt::Assign(v, e) = s {
            if counts.get(v) == Some(&1) && as_const(e).is_some() {
                out.insert(*v, e.clone());
            }
        }
    }
    out
}

fn count_defs(stmts: &[Stmt], counts: &mut HashMap<Var, usize>) {
    for s in stmts {
        match s {
            Stmt::Assign(v, _) | Stmt::Reduce { dst: v, .. } | Stmt::Sorted { dst: v, .. } => *counts.entry(*v).or_default() += 1,
            _ => {}
        }
        if let Stmt::Reduce { index, .. } | Stmt::Fill { index, .. } = s {
            *counts.entry(*index).or_default() += 2; // bound per element: never a constant
        }
        stmt_blocks(s, |b| count_defs(b, counts));
    }
}

fn subst_expr(e: Expr, m: &HashMap<Var, Expr>) -> Expr {
    match e {
        Expr::Var(v) => m.get(&v).cloned().unwrap_or(e),
        Expr::Load(a, i) => Expr::Load(a, subst_expr(*i, m).boxed()),
        Expr::Unary(op, x) => Expr::Unary(op, subst_expr(*x, m).boxed()),
        Expr::Cast(t, x) => Expr::Cast(t, subst_expr(*x, m).boxed()),
        Expr::Binary(op, a, b) => Expr::Binary(op, subst_expr(*a, m).boxed(), subst_expr(*b, m).boxed()),
        Expr::Cmp(op, a, b) => Expr::Cmp(op, subst_expr(*a, m).boxed(), subst_expr(*b, m).boxed()),
        Expr::Select(c, a, b) => Expr::Select(subst_expr(*c, m).boxed(), subst_expr(*a, m).boxed(), subst_expr(*b, m).boxed()),
        Expr::Call(f, args) => Expr::Call(f, args.into_iter().map(|a| subst_expr(a, m)).collect()),
        e => e,
    }
}

fn subst_stmt(s: Stmt, m: &HashMap<Var, Expr>) -> Stmt {
    let e = |x: Expr| subst_expr(x, m);
    let b = |xs: Vec<Stmt>| xs.into_iter().map(|s| subst_stmt(s, m)).collect::<Vec<_>>();
    match s {
        Stmt::Assign(v, x) => Stmt::Assign(v, e(x)),
        Stmt::Store(a, i, v) => Stmt::Store(a, e(i), e(v)),
        Stmt::If(c, t, f) => Stmt::If(e(c), b(t), b(f)),
        Stmt::Loop { body, latch } => Stmt::Loop { body: b(body), latch: b(latch) },
        Stmt::Check { cond, err, a, b: bb } => Stmt::Check { cond: e(cond), err, a: e(a), b: e(bb) },
        Stmt::Return(x) => Stmt::Return(e(x)),
        Stmt::Reduce { dst, op, len, index, elem, on_empty } => Stmt::Reduce { dst, op, len: e(len), index, elem: e(elem), on_empty },
        Stmt::Fill { dst, len, index, elem, keep } => Stmt::Fill { dst, len: e(len), index, elem: e(elem), keep: keep.map(e) },
        Stmt::Sorted { dst, stat, arr, q } => Stmt::Sorted { dst, stat, arr, q: e(q) },
        s @ (Stmt::Break | Stmt::Continue | Stmt::ArrayOp(..) | Stmt::Succeed) => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_through_the_interpreters_semantics() {
        let e = Expr::Binary(BinOp::Add, Expr::F64(0.1).boxed(), Expr::F64(0.2).boxed());
        assert_eq!(const_expr(&e), Some(Val::F(0.1 + 0.2)));
        let nan_cmp = Expr::Cmp(CmpOp::Eq, Expr::F64(f64::NAN).boxed(), Expr::F64(f64::NAN).boxed());
        assert_eq!(const_expr(&nan_cmp), Some(Val::B(false)));
        let div0 = Expr::Binary(BinOp::FloorDiv, Expr::I64(1).boxed(), Expr::I64(0).boxed());
        assert_eq!(const_expr(&div0), None, "integer division by zero is left to its check");
    }

    #[test]
    fn float_self_comparison_is_not_folded() {
        let x = Expr::Param(0);
        let e = Expr::Cmp(CmpOp::Eq, x.clone().boxed(), x.boxed());
        assert_eq!(const_expr(&e), None);
        let n = Expr::Len(super::super::BUFFER);
        let e = Expr::Cmp(CmpOp::Eq, n.clone().boxed(), n.boxed());
        assert_eq!(const_expr(&e), Some(Val::B(true)));
    }
}
