//! Path facts: what the statements before one prove about the conditions it tests.
//!
//! After `if c { return … }` the rest of the block runs only where `c` is false; after `check c`,
//! only where `c` is true; inside `if c { … }`, `c` is true. Replacing such a condition by its
//! known value is exact (expressions are pure), and lets folding drop the checks and branches that
//! can no longer fire. The case that matters: a NaN-aware mean ends
//! `if count == 0: return nan` then `return total / count`, and the lowering guards the division
//! with "ZeroDivisionError when `total` is still a Python float and `count == 0`". The early
//! return proves `count != 0`, so the check folds away, and with it the per-element bookkeeping of
//! `total`'s provenance that fed it.
//!
//! A fact lives until a statement writes a variable it reads. Facts over arrays that code writes
//! (scratch and output) are never learned, so stores need no tracking.

use super::{ArrKind, BinOp, CmpOp, Expr, Func, Stmt, UnOp, Var};

/// The most facts kept at once (the newest win): bounds the cost on long unrolled bodies, where
/// every bounds check is a fact.
const MAX_FACTS: usize = 32;

/// A condition and the value it is known to have.
#[derive(Clone)]
struct Fact {
    cond: Expr,
    value: bool,
    vars: Vec<Var>,
}

/// Substitutes the facts each statement's position proves into its conditions and expressions.
/// Folding afterwards removes what became constant.
pub fn propagate(body: Vec<Stmt>, func: &Func) -> Vec<Stmt> {
    crate::with_stack(|| block(body, &[], func))
}

fn block(stmts: Vec<Stmt>, inherited: &[Fact], func: &Func) -> Vec<Stmt> {
    let mut facts = inherited.to_vec();
    let mut out = Vec::with_capacity(stmts.len());
    for s in stmts {
        // Conservative: a statement that writes a fact's variable anywhere (a loop, say) loses it
        // for the whole statement, even before the write.
        facts.retain(|f| !f.vars.iter().any(|&v| s.writes(v)));
        let s = apply(s, &facts, func);
        learn_from(&s, &mut facts, func);
        out.push(s);
    }
    out
}

/// `s` with the facts substituted; its nested blocks also know what their position proves.
fn apply(s: Stmt, facts: &[Fact], func: &Func) -> Stmt {
    let mut sub = |e: Expr| substitute(e, facts);
    match s {
        Stmt::If(c, a, b) => {
            let c = sub(c);
            let with = |value: bool| {
                let mut f = facts.to_vec();
                learn(&c, value, &mut f, func);
                f
            };
            let a = block(a, &with(true), func);
            let b = block(b, &with(false), func);
            Stmt::If(c, a, b)
        }
        Stmt::Loop { body, latch } => Stmt::Loop {
            body: block(body, facts, func),
            latch: block(latch, facts, func),
        },
        s => super::map_stmt_exprs(s, &mut sub),
    }
}

/// What holds after `s` for the statements that follow it in the same block.
fn learn_from(s: &Stmt, facts: &mut Vec<Fact>, func: &Func) {
    let exits = |b: &[Stmt]| b.last().is_some_and(super::fold::ends_block);
    match s {
        Stmt::Check { cond, .. } => learn(cond, true, facts, func),
        Stmt::If(c, a, b) if b.is_empty() && exits(a) => learn(c, false, facts, func),
        Stmt::If(c, a, b) if a.is_empty() && exits(b) => learn(c, true, facts, func),
        _ => {}
    }
}

/// Records `cond == value` and what it implies: both sides of a true `and` or a false `or`, the
/// operand of a `not`, and the complementary comparison (`a != b` for `a == b`; for integers
/// also `b <= a` for `a < b`; floats only have `!=`, because of NaN).
fn learn(cond: &Expr, value: bool, facts: &mut Vec<Fact>, func: &Func) {
    match (cond, value) {
        (Expr::Bool(_), _) => return,
        (Expr::Binary(BinOp::And, a, b), true) | (Expr::Binary(BinOp::Or, a, b), false) => {
            learn(a, value, facts, func);
            learn(b, value, facts, func);
            return;
        }
        (Expr::Unary(UnOp::Not, a), _) => return learn(a, !value, facts, func),
        _ => {}
    }
    let Some(vars) = stable_vars(cond, func) else {
        return;
    };
    let mut add = |cond: Expr, value: bool| {
        if facts.len() == MAX_FACTS {
            facts.remove(0);
        }
        facts.push(Fact {
            cond,
            value,
            vars: vars.clone(),
        });
    };
    add(cond.clone(), value);
    if let Expr::Cmp(op, a, b) = cond {
        let int = !matches!(a.ty(func), super::Ty::F64);
        let cmp = |op, x: &Expr, y: &Expr| Expr::Cmp(op, x.clone().boxed(), y.clone().boxed());
        match op {
            CmpOp::Eq => add(cmp(CmpOp::Ne, a, b), !value),
            CmpOp::Ne => add(cmp(CmpOp::Eq, a, b), !value),
            CmpOp::Lt if int => add(cmp(CmpOp::Le, b, a), !value),
            CmpOp::Le if int => add(cmp(CmpOp::Lt, b, a), !value),
            _ => {}
        }
    }
}

/// The variables `e` reads, or `None` if it reads an array that code can write.
fn stable_vars(e: &Expr, func: &Func) -> Option<Vec<Var>> {
    let mut vars = Vec::new();
    let mut stable = true;
    e.visit(&mut |e| match e {
        Expr::Var(v) => vars.push(*v),
        Expr::Load(a, _) | Expr::Len(a) => {
            stable &= matches!(
                func.arrays.get(a.0 as usize).map(|d| &d.kind),
                Some(ArrKind::Buffer | ArrKind::Coords | ArrKind::Bound(_))
            )
        }
        _ => {}
    });
    stable.then_some(vars)
}

/// `e` with every sub-expression a fact names replaced by the fact's value.
fn substitute(e: Expr, facts: &[Fact]) -> Expr {
    if facts.is_empty() {
        return e;
    }
    if let Some(f) = facts.iter().rev().find(|f| f.cond == e) {
        return Expr::Bool(f.value);
    }
    e.map_children(|c| crate::with_stack(|| substitute(c, facts)))
}
