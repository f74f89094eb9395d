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

use super::{ArrKind, BinOp, CmpOp, Expr, Func, Stmt, Ty, UnOp, Var};

/// The most facts (and, separately, definitions) kept at once, the newest winning: bounds the
/// cost on long unrolled bodies, where every bounds check is a fact.
const MAX_FACTS: usize = 32;

/// A condition and the value it is known to have.
#[derive(Clone)]
struct Fact {
    cond: Expr,
    value: bool,
    vars: Vec<Var>,
}

/// `var = expr` for a bool variable, while neither it nor what `expr` reads is written again: a
/// fact about `var` is then one about `expr` too (`nonzero = bool(count)`, later `if nonzero`).
#[derive(Clone)]
struct Def {
    var: Var,
    expr: Expr,
    vars: Vec<Var>,
}

/// What holds at a position.
#[derive(Clone, Default)]
struct Known {
    facts: Vec<Fact>,
    defs: Vec<Def>,
}

impl Known {
    /// Drops what `s` may invalidate: anything reading a variable it writes.
    fn forget_writes(&mut self, s: &Stmt) {
        self.facts.retain(|f| !f.vars.iter().any(|&v| s.writes(v)));
        self.defs
            .retain(|d| !s.writes(d.var) && !d.vars.iter().any(|&v| s.writes(v)));
    }

    /// Records `v = e` for a bool `v` when `e` is stable and does not read `v`.
    fn define(&mut self, v: Var, e: &Expr, func: &Func) {
        if func.var_ty(v) != Ty::Bool {
            return;
        }
        let Some(vars) = stable_vars(e, func) else {
            return;
        };
        if vars.contains(&v) {
            return;
        }
        if self.defs.len() == MAX_FACTS {
            self.defs.remove(0);
        }
        self.defs.push(Def {
            var: v,
            expr: e.clone(),
            vars,
        });
    }
}

/// Substitutes the facts each statement's position proves into its conditions and expressions.
/// Folding afterwards removes what became constant.
pub fn propagate(body: Vec<Stmt>, func: &Func) -> Vec<Stmt> {
    crate::with_stack(|| block(body, &Known::default(), func))
}

fn block(stmts: Vec<Stmt>, inherited: &Known, func: &Func) -> Vec<Stmt> {
    let mut known = inherited.clone();
    let mut out = Vec::with_capacity(stmts.len());
    for s in stmts {
        // Conservative: a statement that writes a fact's variable anywhere (a loop, say) loses it
        // for the whole statement, even before the write.
        known.forget_writes(&s);
        let s = apply(s, &known, func);
        learn_from(&s, &mut known, func);
        if let Stmt::Assign(v, e) = &s {
            known.define(*v, e, func);
        }
        out.push(s);
    }
    out
}

/// `s` with the facts substituted; its nested blocks also know what their position proves.
fn apply(s: Stmt, known: &Known, func: &Func) -> Stmt {
    let mut sub = |e: Expr| substitute(e, known, func);
    match s {
        Stmt::If(c, a, b) => {
            let c = sub(c);
            let with = |value: bool| {
                let mut k = known.clone();
                learn(&c, value, &mut k, func);
                k
            };
            let a = block(a, &with(true), func);
            let b = block(b, &with(false), func);
            Stmt::If(c, a, b)
        }
        Stmt::Loop { body, latch } => Stmt::Loop {
            body: block(body, known, func),
            latch: block(latch, known, func),
        },
        s => super::map_stmt_exprs(s, &mut sub),
    }
}

/// What holds after `s` for the statements that follow it in the same block.
fn learn_from(s: &Stmt, known: &mut Known, func: &Func) {
    let exits = |b: &[Stmt]| b.last().is_some_and(super::fold::ends_block);
    match s {
        Stmt::Check { cond, .. } => learn(cond, true, known, func),
        Stmt::If(c, a, b) if b.is_empty() && exits(a) => learn(c, false, known, func),
        Stmt::If(c, a, b) if a.is_empty() && exits(b) => learn(c, true, known, func),
        _ => {}
    }
}

/// Records `cond == value` and what it implies: both sides of a true `and` or a false `or`, the
/// operand of a `not`, the definition of a bool variable, `x != 0` for `bool(x)`, and the
/// complementary comparison (`a != b` for `a == b`; for integers also `b <= a` for `a < b`;
/// floats only have `!=`, because of NaN).
fn learn(cond: &Expr, value: bool, known: &mut Known, func: &Func) {
    match (cond, value) {
        (Expr::Bool(_), _) => return,
        (Expr::Binary(BinOp::And, a, b), true) | (Expr::Binary(BinOp::Or, a, b), false) => {
            learn(a, value, known, func);
            learn(b, value, known, func);
            return;
        }
        (Expr::Unary(UnOp::Not, a), _) => return learn(a, !value, known, func),
        (Expr::Var(v), _) => {
            if let Some(d) = known.defs.iter().rev().find(|d| d.var == *v) {
                let e = d.expr.clone();
                learn(&e, value, known, func);
            }
        }
        (Expr::Cast(Ty::Bool, x), _) => {
            // Truthiness is `!= 0` (NaN is true: `NaN != 0.0`), for ints and floats alike.
            let zero = match x.ty(func) {
                Ty::I64 => Expr::I64(0),
                Ty::F64 => Expr::F64(0.0),
                Ty::Bool => return learn(x, value, known, func),
            };
            learn(
                &Expr::Cmp(CmpOp::Ne, x.clone(), zero.boxed()),
                value,
                known,
                func,
            );
        }
        _ => {}
    }
    let Some(vars) = stable_vars(cond, func) else {
        return;
    };
    let mut add = |cond: Expr, value: bool| {
        if known.facts.len() == MAX_FACTS {
            known.facts.remove(0);
        }
        known.facts.push(Fact {
            cond,
            value,
            vars: vars.clone(),
        });
    };
    add(cond.clone(), value);
    if let Expr::Cmp(op, a, b) = cond {
        let int = !matches!(a.ty(func), Ty::F64);
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

/// `e` with every sub-expression a fact names replaced by the fact's value. Inside a boolean
/// expression the same reasoning holds for its operands: `b` of `a or b` matters only where `a`
/// is false, and of `a and b` only where `a` is true, so a guarded check
/// `not nonzero or count != 0` becomes `not nonzero or true`. Only where `b` is total for every
/// state, though: both operands are evaluated (expressions are pure), and a load's index or a
/// divisor that the lowering made safe by a select on `a` (`x[int(1 < len(x))]`) must stay safe
/// where `a` says the other thing.
fn substitute(e: Expr, known: &Known, func: &Func) -> Expr {
    if let Some(f) = known.facts.iter().rev().find(|f| f.cond == e) {
        return Expr::Bool(f.value);
    }
    match e {
        // (`And`/`Or` are also the bitwise operators on ints, which say nothing of either side.)
        Expr::Binary(op @ (BinOp::Or | BinOp::And), a, b) if a.ty(func) == Ty::Bool => {
            let a = crate::with_stack(|| substitute(*a, known, func));
            let b = if total_everywhere(&b) {
                let mut k = known.clone();
                learn(&a, op == BinOp::And, &mut k, func);
                crate::with_stack(|| substitute(*b, &k, func))
            } else {
                crate::with_stack(|| substitute(*b, known, func))
            };
            Expr::Binary(op, a.boxed(), b.boxed())
        }
        e => e.map_children(|c| crate::with_stack(|| substitute(c, known, func))),
    }
}

/// Whether `e` can be evaluated in any state whatever its operands: no loads (whose indices the
/// lowering keeps in range by construction) and no integer division (whose divisors it keeps
/// nonzero).
fn total_everywhere(e: &Expr) -> bool {
    let mut total = true;
    e.visit(&mut |x| {
        total &= !matches!(
            x,
            Expr::Load(..) | Expr::Binary(BinOp::FloorDiv | BinOp::Mod, ..)
        )
    });
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{ErrorId, BUFFER};

    fn func(vars: &[Ty], body: Vec<Stmt>) -> Func {
        crate::ir::test_func(vars, &[], body)
    }

    fn check(cond: Expr) -> Stmt {
        Stmt::Check {
            cond,
            err: ErrorId(0),
            a: Expr::I64(0),
            b: Expr::I64(0),
        }
    }

    fn or(a: Expr, b: Expr) -> Expr {
        Expr::Binary(BinOp::Or, a.boxed(), b.boxed())
    }

    fn not(a: Expr) -> Expr {
        Expr::Unary(UnOp::Not, a.boxed())
    }

    fn checked(body: &[Stmt]) -> &Expr {
        match body.last() {
            Some(Stmt::Check { cond, .. }) => cond,
            _ => panic!("the body ends with a check"),
        }
    }

    #[test]
    fn a_check_guarded_by_truthiness_knows_the_count_is_nonzero() {
        // `nonzero = bool(c); check not nonzero or (not python or c != 0)`: the division
        // guard of `t / c if c else nan`.
        let (c, nonzero, python) = (Var(0), Var(1), Var(2));
        let guard = or(
            not(Expr::Var(nonzero)),
            or(
                not(Expr::Var(python)),
                Expr::Cmp(CmpOp::Ne, Expr::Var(c).boxed(), Expr::I64(0).boxed()),
            ),
        );
        let body = vec![
            Stmt::Assign(nonzero, Expr::Cast(Ty::Bool, Expr::Var(c).boxed())),
            check(guard.clone()),
        ];
        let f = func(&[Ty::I64, Ty::Bool, Ty::Bool], body.clone());
        let out = propagate(body, &f);
        let folded = super::super::fold::fold_expr(checked(&out).clone());
        assert_eq!(folded, Expr::Bool(true), "{:?}", checked(&out));
        // Reassigning the count between the two forgets the definition.
        let body = vec![
            Stmt::Assign(nonzero, Expr::Cast(Ty::Bool, Expr::Var(c).boxed())),
            Stmt::Assign(c, Expr::I64(0)),
            check(guard.clone()),
        ];
        let out = propagate(body, &f);
        assert_eq!(checked(&out), &guard);
    }

    #[test]
    fn loads_made_safe_by_a_condition_keep_it() {
        // `1 >= len(x) or x[int(1 < len(x))] < 0`: both operands are evaluated, so the index must
        // stay `int(1 < len(x))` (0 when the buffer has one element), not become 1.
        let longer = Expr::Cmp(CmpOp::Lt, Expr::I64(1).boxed(), Expr::Len(BUFFER).boxed());
        let index = Expr::Cast(Ty::I64, longer.clone().boxed());
        let load = Expr::Load(BUFFER, index.boxed());
        let cond = or(
            not(longer),
            Expr::Cmp(CmpOp::Lt, load.boxed(), Expr::F64(0.0).boxed()),
        );
        let body = vec![check(cond.clone())];
        let f = func(&[], body.clone());
        let out = propagate(body, &f);
        assert_eq!(checked(&out), &cond);
    }

    #[test]
    fn bitwise_operators_on_ints_teach_nothing() {
        // `&` and `|` of ints are `And`/`Or` in the IR too; reading an int operand as a fact put a
        // bool into an int addition (found by the differential fuzzer, seed 2026112601).
        let sources = [
            "def f(x):\n    v1 = np.count_nonzero(x)\n    v9 = (v1 & (1 + v1))\n    return float(v9)",
            "def f(x):\n    v3 = int(np.argmax(x))\n    v6 = int(x[0]) - (v3 | (~v3))\n    return float(v6 + (v3 | 1))",
        ];
        let buf = [0.5, 3.0, -1.0, 2.0, 7.0, 0.0, 1.0, 9.0, 4.0];
        for src in sources {
            let f = crate::Filter::compile(src, &crate::Bindings::new()).unwrap();
            let sized = f.specialize(9).unwrap();
            assert_eq!(sized.call(&buf), f.interpret(&buf), "{src}");
        }
    }
}
