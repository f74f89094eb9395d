//! If-conversion: `if c { a = e1 } else { b = e2 }` made only of assignments becomes
//! `a = select(c, e1', a); b = select(c, b, e2')`.
//!
//! A data-dependent branch (`if v < best: best = v`) costs a misprediction on every other element;
//! a select never does, and straight-line code is what the row kernel's lane groups compute many
//! pixels of at once. This is always sound here because expressions are total (see [`super`]):
//! evaluating a branch's expressions when the branch is not taken cannot fail or read outside an
//! array. Checks, stores, loops and calls stay branches.
//!
//! **Block temporaries.** The lowering spells `c += 1` on an int as `t1 = c; t2 = t1 + 1; c = t2`.
//! The temporaries' values never leave the branch, so they need no select and do not count
//! against the branch's size bounds: see [`carried`].

use super::fold::{fold_expr, subst_expr};
use super::{stmt_blocks, stmt_exprs, BinOp, ErrorId, Expr, Func, Stmt, Ty, UnOp, Var, VarDecl};
use std::collections::{HashMap, HashSet};

/// The most expression nodes a branch may hold and still be if-converted: both sides are then
/// always evaluated, which pays only while they are cheap.
const IF_CONVERT_NODES: usize = 24;
/// At most this many variables assigned and checks made by each branch.
const IF_CONVERT_VARS: usize = 4;
const IF_CONVERT_CHECKS: usize = 2;

/// `stmts` (a function's body) with every `if` that qualifies turned into selects.
pub(super) fn if_convert(stmts: Vec<Stmt>, func: &mut Func) -> Vec<Stmt> {
    let carried = carried(&stmts);
    block(stmts, func, &carried)
}

fn block(stmts: Vec<Stmt>, func: &mut Func, carried: &HashSet<Var>) -> Vec<Stmt> {
    let mut out = Vec::with_capacity(stmts.len());
    for s in stmts {
        match s {
            Stmt::If(c, then, els) => {
                let then = block(then, func, carried);
                let els = block(els, func, carried);
                match (branch_values(&then, carried), branch_values(&els, carried)) {
                    (Some(tv), Some(ev)) if cheap(&tv) && cheap(&ev) => {
                        out.extend(selects(c, tv, ev, func))
                    }
                    _ => out.push(Stmt::If(c, then, els)),
                }
            }
            Stmt::Loop { body, latch } => {
                let body = block(body, func, carried);
                let latch = block(latch, func, carried);
                out.push(Stmt::Loop { body, latch });
            }
            s => out.push(s),
        }
    }
    out
}

/// The variables that some read may see from outside the reader's block: read where no earlier
/// assignment in the reader's own block stored them, or where a compound statement since (an
/// `if`, a loop) may have. Every other variable is a *temporary*: the value it holds after an `if`
/// (or any compound statement) is never read, because a later reader in the same block reads
/// what a later assignment stored, and a reader in another block its own block's assignment.
pub(super) fn carried(body: &[Stmt]) -> HashSet<Var> {
    fn walk(stmts: &[Stmt], carried: &mut HashSet<Var>) {
        // Assigned earlier in this block, and not written by a compound statement since.
        let mut assigned: HashSet<Var> = HashSet::new();
        for s in stmts {
            stmt_exprs(s, |e| {
                e.visit(&mut |x| {
                    if let Expr::Var(v) = x {
                        if !assigned.contains(v) {
                            carried.insert(*v);
                        }
                    }
                })
            });
            stmt_blocks(s, |b| walk(b, carried));
            match s {
                Stmt::Assign(v, _) => {
                    assigned.insert(*v);
                }
                s => assigned.retain(|v| !s.writes(*v)),
            }
        }
    }
    let mut set = HashSet::new();
    walk(body, &mut set);
    set
}

/// What a branch of plain assignments and checks does, in terms of the state before it (later
/// statements see earlier assignments substituted).
struct Branch {
    /// The value it leaves in each variable it assigns.
    vals: Vec<(Var, Expr)>,
    /// Its checks: condition, error and details. A check before an assignment sees the same
    /// state either way, so it can run ahead of the selects, guarded by the branch's condition.
    checks: Vec<(Expr, ErrorId, Expr, Expr)>,
}

/// The branch as values (of the variables it leaves for later statements: `carried`) and checks;
/// `None` if it does anything else, or grows past what
/// [`cheap`] takes: substituting each assignment into the next makes a long branch's values
/// grow with its length, so it stops there rather than build them (a 470-term sum took
/// seconds).
fn branch_values(stmts: &[Stmt], carried: &HashSet<Var>) -> Option<Branch> {
    let mut b = Branch {
        vals: Vec::new(),
        checks: Vec::new(),
    };
    for s in stmts {
        let current: HashMap<Var, Expr> = b.vals.iter().cloned().collect();
        let sub = |e: &Expr| subst_expr(e.clone(), &current);
        let (v, e) = match s {
            Stmt::Assign(v, e) => (v, e),
            Stmt::Check { cond, err, a, b: d } => {
                let cond = sub(cond);
                if b.checks.len() == IF_CONVERT_CHECKS || cond.size() > IF_CONVERT_NODES {
                    return None;
                }
                b.checks.push((cond, *err, sub(a), sub(d)));
                continue;
            }
            _ => return None,
        };
        if e.has_call() {
            return None; // a math call is too expensive to run speculatively
        }
        let e = sub(e);
        if e.size() > IF_CONVERT_NODES {
            return None;
        }
        let escaping = b.vals.iter().filter(|(w, _)| carried.contains(w)).count();
        let full = carried.contains(v) && escaping == IF_CONVERT_VARS;
        match b.vals.iter_mut().find(|(w, _)| w == v) {
            Some(slot) => slot.1 = e,
            None if full => return None,
            None => b.vals.push((*v, e)),
        }
    }
    // A temporary's value is already substituted into every later value that reads it.
    b.vals.retain(|(v, _)| carried.contains(v));
    Some(b)
}

fn cheap(b: &Branch) -> bool {
    // A check may be what proves a load in range: with one, the branch must not load at all
    // (hoisted, the check no longer dominates the load).
    let mut loads = false;
    let checked = b.checks.iter().flat_map(|(c, _, a, d)| [c, a, d]);
    for e in b.vals.iter().map(|(_, e)| e).chain(checked) {
        e.visit(&mut |x| loads |= matches!(x, Expr::Load(..)));
    }
    if loads && !b.checks.is_empty() {
        return false;
    }
    // `branch_values` already refused branches past IF_CONVERT_VARS and IF_CONVERT_CHECKS.
    let size = b.vals.iter().map(|(_, e)| e.size()).sum::<usize>()
        + b.checks.iter().map(|c| c.0.size()).sum::<usize>();
    size <= IF_CONVERT_NODES
}

/// Every variable either branch assigns gets `select(c, then_value, else_value)`, computed into
/// temporaries first so that each select reads the state from before the `if`.
fn selects(c: Expr, then: Branch, els: Branch, func: &mut Func) -> Vec<Stmt> {
    let checks = [(true, then.checks), (false, els.checks)];
    let (then, els) = (then.vals, els.vals);
    let guarded = checks.iter().any(|(_, cs)| !cs.is_empty());
    let mut order: Vec<Var> = then.iter().map(|(v, _)| *v).collect();
    for (v, _) in &els {
        if !order.contains(v) {
            order.push(*v);
        }
    }
    let value = |side: &[(Var, Expr)], v: Var| {
        side.iter()
            .find(|(w, _)| *w == v)
            .map(|(_, e)| e.clone())
            .unwrap_or(Expr::Var(v))
    };
    let mut out = Vec::new();
    let cond = if (order.len() > 1 || guarded) && !matches!(c, Expr::Var(_)) {
        let t = Var(func.vars.len() as u32);
        func.vars.push(VarDecl {
            ty: Ty::Bool,
            name: format!("%c{}", t.0),
        });
        out.push(Stmt::Assign(t, c));
        Expr::Var(t)
    } else {
        c
    };
    // `check ok` in the branch taken when `cond` is `side` becomes `check (cond != side) or ok`.
    for (side, cs) in checks {
        for (ok, err, a, b) in cs {
            let skip = if side {
                Expr::Unary(UnOp::Not, cond.clone().boxed())
            } else {
                cond.clone()
            };
            out.push(Stmt::Check {
                cond: fold_expr(Expr::Binary(BinOp::Or, skip.boxed(), ok.boxed())),
                err,
                a,
                b,
            });
        }
    }
    let mut temps = Vec::new();
    for v in &order {
        let sel = fold_expr(Expr::Select(
            cond.clone().boxed(),
            value(&then, *v).boxed(),
            value(&els, *v).boxed(),
        ));
        let t = Var(func.vars.len() as u32);
        func.vars.push(VarDecl {
            ty: func.var_ty(*v),
            name: format!("%s{}", t.0),
        });
        out.push(Stmt::Assign(t, sel));
        temps.push((*v, t));
    }
    out.extend(
        temps
            .into_iter()
            .map(|(v, t)| Stmt::Assign(v, Expr::Var(t))),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add1(dst: u32, src: u32) -> Stmt {
        let prev = Expr::Var(Var(src));
        Stmt::Assign(
            Var(dst),
            Expr::Binary(BinOp::Add, prev.boxed(), Expr::I64(1).boxed()),
        )
    }

    #[test]
    fn branches_past_if_conversions_bounds_are_refused_as_they_grow() {
        // `t1 = t0 + 1; t2 = t1 + 1; ...`: substituted, value k has k additions.
        let chain = |n: u32| -> Vec<Stmt> { (0..n).map(|i| add1(i + 1, i)).collect() };
        let all: HashSet<Var> = (0..=6).map(Var).collect();
        assert!(branch_values(&chain(3), &all).is_some_and(|b| cheap(&b)));
        // Five variables: past IF_CONVERT_VARS.
        assert!(branch_values(&chain(5), &all).is_none());
        // The same five as temporaries but the last: one value leaves the branch.
        let last: HashSet<Var> = [Var(5)].into();
        let b = branch_values(&chain(5), &last).expect("one carried variable");
        assert_eq!(b.vals.len(), 1);
        assert_eq!(b.vals[0].0, Var(5));
        // One variable reassigned: the value outgrows IF_CONVERT_NODES.
        let long: Vec<Stmt> = (0..500).map(|_| add1(0, 0)).collect();
        assert!(branch_values(&long, &all).is_none());
    }

    #[test]
    fn a_variable_is_carried_when_a_read_may_see_another_blocks_value() {
        let read = |dst: u32, v: u32| Stmt::Assign(Var(dst), Expr::Var(Var(v)));
        let m = Expr::Var(Var(9));
        // `if m { t = c; u = t + 1; c = u }; out = c`: t and u are temporaries.
        let counter = vec![
            Stmt::If(m.clone(), vec![read(1, 0), add1(2, 1), read(0, 2)], vec![]),
            read(3, 0),
        ];
        let carried_vars = carried(&counter);
        assert!(carried_vars.contains(&Var(0)) && carried_vars.contains(&Var(9)));
        assert!(!carried_vars.contains(&Var(1)) && !carried_vars.contains(&Var(2)));
        // `x = 1; if m { x = 2 }; y = x`: the read after the `if` sees the branch's x.
        let clobbered = vec![
            Stmt::Assign(Var(4), Expr::I64(1)),
            Stmt::If(m.clone(), vec![Stmt::Assign(Var(4), Expr::I64(2))], vec![]),
            read(5, 4),
        ];
        assert!(carried(&clobbered).contains(&Var(4)));
        // A read in a nested block of a variable assigned only outside it.
        let nested = vec![
            Stmt::Assign(Var(6), Expr::I64(1)),
            Stmt::If(m, vec![read(7, 6)], vec![]),
        ];
        assert!(carried(&nested).contains(&Var(6)));
    }

    #[test]
    fn a_counting_loop_if_converts_whole() {
        // `c += 1` is three assignments through temporaries: with `t += v`, five in the branch.
        let src = "def f(x):
    t = 0.0
    c = 0
    for v in x:
        if not np.isnan(v):
            t += v
            c += 1
    return t / c if c else np.nan";
        let f = crate::Filter::compile(src, &crate::Bindings::new()).unwrap();
        let spec = f.specialize(9).unwrap();
        let ir = spec.specialized_ir().unwrap();
        let ifs = ir.body.iter().filter(|s| matches!(s, Stmt::If(..))).count();
        assert_eq!(ifs, 0, "{ir}");
    }
}
