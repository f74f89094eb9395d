//! Integer ranges: drops the checks that the values' ranges prove can never fail.
//!
//! Python ints are checked for overflow at every `+`, `-`, `*` (see `lower/pyint.rs`). In a
//! specialised filter the loops are unrolled, so a counter `n += 1` is straight-line code whose
//! range is known (`0 <= n <= 9` for a 3×3 window): a forward pass over the statements keeps an
//! interval for each int and bool variable, evaluates each check's condition over the intervals,
//! and removes the checks that are true for every value. It only ever removes a check it has
//! proved, so it cannot change a result.

use super::{BinOp, CmpOp, Expr, Func, Stmt, Ty, UnOp, Var};
use std::collections::HashMap;

/// An inclusive range of i64 values (bools are 0 and 1).
pub(crate) type Iv = (i64, i64);

/// Removes the checks of `body` whose condition holds for every value of its variables' ranges.
pub fn drop_proved_checks(body: Vec<Stmt>, func: &Func) -> Vec<Stmt> {
    crate::with_stack(|| block(body, &mut HashMap::new(), func))
}

fn block(stmts: Vec<Stmt>, env: &mut HashMap<Var, Iv>, func: &Func) -> Vec<Stmt> {
    let mut out = Vec::with_capacity(stmts.len());
    for s in stmts {
        match s {
            Stmt::Assign(v, e) => {
                match range(&e, env, func) {
                    Some(r) if func.var_ty(v) != Ty::F64 => env.insert(v, r),
                    _ => env.remove(&v),
                };
                out.push(Stmt::Assign(v, e));
            }
            Stmt::Check { cond, .. } if range(&cond, env, func) == Some((1, 1)) => {}
            Stmt::If(c, a, b) => {
                let (mut ea, mut eb) = (env.clone(), env.clone());
                let (a, b) = (block(a, &mut ea, func), block(b, &mut eb, func));
                // After the `if`, a variable is in the union of what the two branches left.
                env.clear();
                for (v, x) in ea {
                    if let Some(y) = eb.get(&v) {
                        env.insert(v, (x.0.min(y.0), x.1.max(y.1)));
                    }
                }
                out.push(Stmt::If(c, a, b));
            }
            s => {
                // Loops, reductions, fills: whatever they write is unknown afterwards (the body of
                // a loop is not analysed: its checks stay).
                env.retain(|v, _| !s.writes(*v));
                out.push(s);
            }
        }
    }
    out
}

/// The range of an int or bool expression, if it can be bounded.
fn range(e: &Expr, env: &HashMap<Var, Iv>, func: &Func) -> Option<Iv> {
    let r = |x: &Expr| range(x, env, func);
    match e {
        Expr::I64(c) => Some((*c, *c)),
        Expr::Bool(b) => Some((*b as i64, *b as i64)),
        Expr::Var(v) => env.get(v).copied(),
        Expr::Len(_) => Some((0, i64::MAX)),
        Expr::Unary(UnOp::Not, x) => r(x).map(|(lo, hi)| (1 - hi, 1 - lo)),
        // Wrapping: exact only where no value is i64::MIN.
        Expr::Unary(UnOp::Neg, x) if x.ty(func) == Ty::I64 => {
            r(x).and_then(|(lo, hi)| Some((hi.checked_neg()?, lo.checked_neg()?)))
        }
        Expr::Unary(UnOp::Abs, x) if x.ty(func) == Ty::I64 => r(x).and_then(|(lo, hi)| {
            let (a, b) = (lo.checked_abs()?, hi.checked_abs()?);
            Some((if lo <= 0 && hi >= 0 { 0 } else { a.min(b) }, a.max(b)))
        }),
        Expr::Cast(Ty::I64, x) if x.ty(func) == Ty::Bool => Some((0, 1)),
        Expr::Select(c, a, b) => match r(c) {
            Some((1, 1)) => r(a),
            Some((0, 0)) => r(b),
            _ => r(a).zip(r(b)).map(|(x, y)| (x.0.min(y.0), x.1.max(y.1))),
        },
        Expr::Cmp(op, a, b) if a.ty(func) != Ty::F64 => {
            let (x, y) = (r(a), r(b));
            Some(compare(*op, x?, y?).unwrap_or((0, 1)))
        }
        // Every int lies in i64's range: an unknown operand still bounds a min or a max.
        Expr::Binary(op, a, b) if a.ty(func) == Ty::I64 => {
            let full = (i64::MIN, i64::MAX);
            binary(*op, r(a).unwrap_or(full), r(b).unwrap_or(full))
        }
        Expr::Binary(op, a, b) if a.ty(func) == Ty::Bool => {
            let (x, y) = (r(a)?, r(b)?);
            match op {
                BinOp::And | BinOp::Min | BinOp::PyMin => Some((x.0 & y.0, x.1 & y.1)),
                BinOp::Or | BinOp::Max | BinOp::PyMax => Some((x.0 | y.0, x.1 | y.1)),
                _ => Some((0, 1)),
            }
        }
        _ if e.ty(func) == Ty::Bool => Some((0, 1)),
        _ => None,
    }
}

/// The truth of `x op y` when every pair of values agrees on it.
fn compare(op: CmpOp, x: Iv, y: Iv) -> Option<Iv> {
    let always = |b: bool| Some(if b { (1, 1) } else { (0, 0) });
    let (lt, ge) = (x.1 < y.0, x.0 >= y.1);
    let (gt, le) = (x.0 > y.1, x.1 <= y.0);
    let disjoint = lt || gt;
    let same = x.0 == x.1 && y.0 == y.1 && x.0 == y.0;
    match op {
        CmpOp::Lt if lt || ge => always(lt),
        CmpOp::Ge if lt || ge => always(ge),
        CmpOp::Gt if gt || le => always(gt),
        CmpOp::Le if gt || le => always(le),
        CmpOp::Eq if disjoint || same => always(same),
        CmpOp::Ne if disjoint || same => always(disjoint),
        _ => None,
    }
}

/// The range of `x op y` for ints in `x` and `y`, where it can be bounded (no overflow).
pub(crate) fn binary(op: BinOp, x: Iv, y: Iv) -> Option<Iv> {
    let corners = |f: fn(i64, i64) -> Option<i64>| -> Option<Iv> {
        let c = [f(x.0, y.0)?, f(x.0, y.1)?, f(x.1, y.0)?, f(x.1, y.1)?];
        Some((*c.iter().min()?, *c.iter().max()?))
    };
    let nonneg = x.0 >= 0 && y.0 >= 0;
    match op {
        BinOp::Add => Some((x.0.checked_add(y.0)?, x.1.checked_add(y.1)?)),
        BinOp::Sub => Some((x.0.checked_sub(y.1)?, x.1.checked_sub(y.0)?)),
        BinOp::Mul => corners(i64::checked_mul),
        // Where no product overflows, the high half is the product's sign fill.
        BinOp::MulHi => {
            let p = corners(i64::checked_mul)?;
            Some((if p.0 < 0 { -1 } else { 0 }, if p.1 < 0 { -1 } else { 0 }))
        }
        BinOp::Shr if y.0 == y.1 && (0..64).contains(&y.0) => Some((x.0 >> y.0, x.1 >> y.0)),
        BinOp::And if nonneg => Some((0, x.1.min(y.1))),
        BinOp::Or | BinOp::Xor if nonneg => Some((0, i64::MAX)),
        BinOp::Min | BinOp::PyMin => Some((x.0.min(y.0), x.1.min(y.1))),
        BinOp::Max | BinOp::PyMax => Some((x.0.max(y.0), x.1.max(y.1))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflow_tests_of_small_counters_are_decided() {
        // `n + 1` with 0 <= n <= 8: the sign test of the add's overflow check is false.
        let (n, r) = ((0, 8), (1, 9));
        let xor = binary(BinOp::Xor, n, r).unwrap();
        let both = binary(BinOp::And, xor, binary(BinOp::Xor, (1, 1), r).unwrap()).unwrap();
        assert_eq!(compare(CmpOp::Lt, both, (0, 0)), Some((0, 0)));
        // A product that may overflow stays undecided; a small one does not.
        assert_eq!(binary(BinOp::MulHi, (0, i64::MAX), (2, 2)), None);
        assert_eq!(binary(BinOp::MulHi, (-3, 4), (2, 5)), Some((-1, 0)));
        assert_eq!(compare(CmpOp::Eq, (0, 3), (5, 9)), Some((0, 0)));
        assert_eq!(compare(CmpOp::Ne, (2, 2), (2, 2)), Some((0, 0)));
        assert_eq!(compare(CmpOp::Le, (0, 3), (3, 9)), Some((1, 1)));
        assert_eq!(compare(CmpOp::Lt, (0, 3), (3, 9)), None);
    }

    #[test]
    fn negations_and_absolute_values_of_ranges() {
        let func = crate::ir::test_func(&[Ty::I64], &[], vec![]);
        let v = Var(0);
        let of = |op, lo, hi| {
            let env = HashMap::from([(v, (lo, hi))]);
            range(&Expr::Unary(op, Expr::Var(v).boxed()), &env, &func)
        };
        assert_eq!(of(UnOp::Neg, -3, 5), Some((-5, 3)));
        assert_eq!(of(UnOp::Abs, -3, 5), Some((0, 5)));
        assert_eq!(of(UnOp::Abs, -9, -4), Some((4, 9)));
        assert_eq!(of(UnOp::Abs, 2, 7), Some((2, 7)));
        // i64::MIN wraps to itself: no range.
        assert_eq!(of(UnOp::Neg, i64::MIN, 0), None);
        assert_eq!(of(UnOp::Abs, i64::MIN, 0), None);
    }
}
