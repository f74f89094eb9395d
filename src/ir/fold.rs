//! Constant folding and simplification, done once on the IR for every backend.
//!
//! Folding evaluates through [`super::eval`], the same definitions the interpreter uses, so it can
//! never change a result. It also propagates variables assigned once to a constant (the centre
//! index `len(x) // 2` of a specialised filter, say), removes checks that always pass, branches
//! that are never taken, and code after a `return`.

use super::eval::{self, Val};
use super::{stmt_blocks, BinOp, CmpOp, Expr, Func, Stmt, Ty, UnOp, Var};
use std::collections::HashMap;

/// Folds a function in place.
pub fn fold(func: &mut Func) {
    let mut body = std::mem::take(&mut func.body);
    for _ in 0..3 {
        body = fold_block(body);
        let consts = single_constants(&body);
        if consts.is_empty() {
            break;
        }
        body = body.into_iter().map(|s| subst_stmt(s, &consts)).collect();
    }
    func.body = fold_block(body);
    let body = std::mem::take(&mut func.body);
    // Checks proved before if-conversion leave branches small enough to become selects (an int
    // held as a float has a known range: `lower/int_or_float.rs`).
    let body = super::ranges::drop_proved_checks(body, func);
    let body = super::if_convert::if_convert(body, func);
    let body = unroll_block(body);
    // What early returns and checks prove, now that unrolling has made the code straight.
    let body = super::facts::propagate(body, func);
    let mut body = fold_block(super::ranges::drop_proved_checks(body, func));
    remove_dead_assignments(&mut body);
    // Exact rewrites of the chains unrolling leaves (`chains`), then what they made dead.
    super::chains::masked_adds(&mut body, func);
    super::chains::minmax_trees(&mut body, func);
    remove_dead_assignments(&mut body);
    func.body = body;
}

/// Drops assignments whose value can never matter: temporaries the passes above left behind,
/// provenance flags no division consults, even when a variable feeds only its own next value
/// (`flag = select(c, false, flag)` in a loop). A variable is live when a statement other than an
/// assignment reads it (a return, a check, a condition, a reduction ...), or when an assignment to
/// a live variable does; expressions are pure, so every other assignment can go. This keeps each
/// compare with a single use, which lets backends fold `select(a < b, a, b)` into one min.
fn remove_dead_assignments(body: &mut Vec<Stmt>) {
    let mut live = std::collections::HashSet::new();
    let mut defs: HashMap<Var, Vec<Expr>> = HashMap::new();
    collect_uses(body, &mut live, &mut defs);
    let mut work: Vec<Var> = live.iter().copied().collect();
    while let Some(v) = work.pop() {
        for e in defs.get(&v).map(Vec::as_slice).unwrap_or(&[]) {
            vars_in(e, &mut |w| {
                if live.insert(w) {
                    work.push(w);
                }
            });
        }
    }
    drop_unread(body, &live);
}

fn vars_in(e: &Expr, f: &mut dyn FnMut(Var)) {
    e.visit(&mut |x| {
        if let Expr::Var(v) = x {
            f(*v)
        }
    });
}

/// Roots (variables read by statements other than assignments) and each variable's assigned
/// expressions.
fn collect_uses(
    stmts: &[Stmt],
    live: &mut std::collections::HashSet<Var>,
    defs: &mut HashMap<Var, Vec<Expr>>,
) {
    for s in stmts {
        match s {
            Stmt::Assign(v, e) => defs.entry(*v).or_default().push(e.clone()),
            // A reduction that cannot fail is an assignment too.
            Stmt::Reduce {
                dst,
                len,
                elem,
                on_empty: None,
                ..
            } => defs
                .entry(*dst)
                .or_default()
                .extend([len.clone(), elem.clone()]),
            s => super::stmt_exprs(s, |e| {
                vars_in(e, &mut |v| {
                    live.insert(v);
                })
            }),
        }
        stmt_blocks(s, |b| collect_uses(b, live, defs));
    }
}

/// Removes the unread assignments (and the reductions that cannot fail), then the branches left
/// empty; returns whether it removed any.
fn drop_unread(stmts: &mut Vec<Stmt>, read: &std::collections::HashSet<Var>) -> bool {
    let before = stmts.len();
    stmts.retain(|s| {
        !matches!(s, Stmt::Assign(v, _) | Stmt::Reduce { dst: v, on_empty: None, .. }
            if !read.contains(v))
    });
    let mut changed = stmts.len() != before;
    for s in stmts.iter_mut() {
        match s {
            Stmt::If(_, a, b) => {
                changed |= drop_unread(a, read);
                changed |= drop_unread(b, read);
            }
            Stmt::Loop { body, latch } => {
                changed |= drop_unread(body, read);
                changed |= drop_unread(latch, read);
            }
            _ => {}
        }
    }
    // Conditions are pure: a branch with nothing on either side does nothing.
    let before = stmts.len();
    stmts.retain(|s| !matches!(s, Stmt::If(_, a, b) if a.is_empty() && b.is_empty()));
    changed | (stmts.len() != before)
}

/// The most iterations, and expression nodes in total, a counted loop may unroll into.
const UNROLL_TRIPS: i64 = 64;
const UNROLL_NODES: usize = 4096;

/// Unrolls counted loops with a constant trip count (what a `for` over the buffer or a
/// `range(n)` becomes once the filter size is known): Cranelift has no unroller, and a loop over
/// five elements costs more in its own bookkeeping than in its body. The loop must have the shape
/// the lowering gives `for`: `i = a; loop { if !(i < b) { break }; rest } latch { i = i + s }` with
/// constant `a`, `b`, `s > 0`, and `rest` neither breaking nor continuing it.
fn unroll_block(stmts: Vec<Stmt>) -> Vec<Stmt> {
    let mut out: Vec<Stmt> = Vec::with_capacity(stmts.len());
    for s in stmts {
        let s = match s {
            Stmt::If(c, a, b) => Stmt::If(c, unroll_block(a), unroll_block(b)),
            Stmt::Loop { body, latch } => Stmt::Loop {
                body: unroll_block(body),
                latch: unroll_block(latch),
            },
            s => s,
        };
        if let Stmt::Loop { body, latch } = &s {
            if let Some(Stmt::Assign(i, Expr::I64(start))) = out.last() {
                if let Some(unrolled) = unroll(*i, *start, body, latch) {
                    out.extend(unrolled);
                    continue;
                }
            }
        }
        out.push(s);
    }
    out
}

fn unroll(i: Var, start: i64, body: &[Stmt], latch: &[Stmt]) -> Option<Vec<Stmt>> {
    let [Stmt::Assign(j, Expr::Binary(BinOp::Add, counter, step))] = latch else {
        return None;
    };
    let (Expr::Var(k), Expr::I64(step)) = (&**counter, &**step) else {
        return None;
    };
    if *j != i || *k != i || *step <= 0 {
        return None;
    }
    let (Stmt::If(Expr::Unary(UnOp::Not, cond), exit, none), rest) = body.split_first()? else {
        return None;
    };
    let (Expr::Cmp(CmpOp::Lt, a, b), [Stmt::Break], []) =
        (&**cond, exit.as_slice(), none.as_slice())
    else {
        return None;
    };
    let (Expr::Var(v), Expr::I64(stop)) = (&**a, &**b) else {
        return None;
    };
    if *v != i || rest.iter().any(|s| leaves_loop(s) || s.writes(i)) {
        return None;
    }
    let trips = if *stop > start {
        (stop - start + step - 1) / step
    } else {
        0
    };
    if trips > UNROLL_TRIPS || trips as usize * super::block_size(rest) > UNROLL_NODES {
        return None;
    }
    let mut out = Vec::new();
    for t in 0..trips {
        out.push(Stmt::Assign(i, Expr::I64(start + t * step)));
        let at: HashMap<Var, Expr> = [(i, Expr::I64(start + t * step))].into_iter().collect();
        out.extend(rest.iter().cloned().map(|s| subst_stmt(s, &at)));
    }
    out.push(Stmt::Assign(i, Expr::I64(start + trips * step)));
    Some(fold_block(out))
}

/// Whether a statement breaks out of or continues the loop it is in.
fn leaves_loop(s: &Stmt) -> bool {
    match s {
        Stmt::Break | Stmt::Continue => true,
        Stmt::If(_, a, b) => a.iter().any(leaves_loop) || b.iter().any(leaves_loop),
        _ => false, // a nested loop's break and continue are its own
    }
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
                (Some(x), Some(y))
                    if !(matches!(op, BinOp::FloorDiv | BinOp::Mod) && y.i() == 0) =>
                {
                    lit(eval::binary(op, x, y))
                }
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
            // One spelling for each order (`a > b` is `b < a`, for NaN too), so that backends see
            // `select(b < a, a, b)` as the max it is.
            match op {
                CmpOp::Gt => Expr::Cmp(CmpOp::Lt, b.boxed(), a.boxed()),
                CmpOp::Ge => Expr::Cmp(CmpOp::Le, b.boxed(), a.boxed()),
                _ => Expr::Cmp(op, a.boxed(), b.boxed()),
            }
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
                None if identical(&a, &b) => a,
                None => select_shape(c, a, b),
            }
        }
        Expr::Call(f, args) => {
            let args: Vec<Expr> = args.into_iter().map(fold_expr).collect();
            let consts: Option<Vec<f64>> =
                args.iter().map(|a| as_const(a).map(|v| v.f())).collect();
            match consts {
                Some(xs) => Expr::F64(eval::call(f, &xs)),
                None => Expr::Call(f, args),
            }
        }
        e => e,
    }
}

/// Whether two expressions compute the same bits. Derived equality holds `0.0 == -0.0`, whose
/// results differ in sign: `-0.0 if c else 0.0` is not `0.0`.
fn identical(a: &Expr, b: &Expr) -> bool {
    let constants = |e: &Expr| {
        let mut bits = Vec::new();
        e.visit(&mut |x| {
            if let Expr::F64(v) = x {
                bits.push(v.to_bits());
            }
        });
        bits
    };
    a == b && constants(a) == constants(b)
}

/// Whether an expression is (conservatively) float-typed; float `x == x` is false for NaN.
/// Cheaper shapes of a select with a condition that is not constant, all exact: a negated
/// condition swaps the arms; selects of `1`/`0` are the condition as an integer; selects of a
/// boolean constant are `and`/`or` (these are the counters and Python-provenance flags that
/// if-conversion leaves, which would otherwise be chains of conditional moves).
fn select_shape(c: Expr, a: Expr, b: Expr) -> Expr {
    let not = |e: Expr| Expr::Unary(UnOp::Not, e.boxed());
    let bin = |op: BinOp, x: Expr, y: Expr| Expr::Binary(op, x.boxed(), y.boxed());
    match (c, a, b) {
        (Expr::Unary(UnOp::Not, c), a, b) => select_shape(*c, b, a),
        (c, Expr::I64(1), Expr::I64(0)) => Expr::Cast(Ty::I64, c.boxed()),
        (c, Expr::Bool(false), x) => bin(BinOp::And, not(c), x),
        (c, Expr::Bool(true), x) => bin(BinOp::Or, c, x),
        (c, x, Expr::Bool(false)) => bin(BinOp::And, c, x),
        (c, x, Expr::Bool(true)) => bin(BinOp::Or, not(c), x),
        (c, a, b) => Expr::Select(c.boxed(), a.boxed(), b.boxed()),
    }
}

fn is_float(e: &Expr) -> bool {
    !matches!(
        e,
        Expr::I64(_) | Expr::Len(_) | Expr::IntParam(_) | Expr::Bool(_)
    ) && !matches!(e, Expr::Binary(_, a, _) if !is_float(a))
}

/// Identities that hold bit for bit: only integer and boolean ones, and `x * 1.0`, `x - 0.0`.
fn simplify_binary(op: BinOp, a: Expr, b: Expr, cb: Option<Val>) -> Expr {
    let ca = as_const(&a);
    match (op, ca, cb) {
        (BinOp::Add, _, Some(Val::I(0)))
        | (BinOp::Sub, _, Some(Val::I(0)))
        | (BinOp::Mul, _, Some(Val::I(1))) => a,
        (BinOp::Add, Some(Val::I(0)), _) | (BinOp::Mul, Some(Val::I(1)), _) => b,
        (BinOp::Mul, _, Some(Val::F(1.0))) => a,
        (BinOp::Sub, _, Some(Val::F(v))) if v == 0.0 && v.is_sign_positive() => a,
        (BinOp::And, _, Some(Val::B(true))) | (BinOp::Or, _, Some(Val::B(false))) => a,
        (BinOp::And, Some(Val::B(true)), _) | (BinOp::Or, Some(Val::B(false)), _) => b,
        (BinOp::And, _, Some(Val::B(false))) | (BinOp::And, Some(Val::B(false)), _) => {
            Expr::Bool(false)
        }
        (BinOp::Or, _, Some(Val::B(true))) | (BinOp::Or, Some(Val::B(true)), _) => Expr::Bool(true),
        _ => Expr::Binary(op, a.boxed(), b.boxed()),
    }
}

fn fold_block(stmts: Vec<Stmt>) -> Vec<Stmt> {
    let mut out = Vec::with_capacity(stmts.len());
    let mut known = BlockConstants::default();
    for s in stmts {
        let s = fold_stmt(known.substituted(s));
        let ss = match s {
            Folded::None => vec![],
            Folded::One(s) => vec![s],
            Folded::Many(ss) => ss,
        };
        for s in ss {
            let ends = ends_block(&s);
            known.learn(&s);
            out.push(s);
            if ends {
                return out; // what follows is unreachable
            }
        }
    }
    out
}

/// The constants that the statements of a block before this one assigned, and that nothing has
/// written since: after `v = c`, the block's later statements read `c` until one writes `v`.
/// [`single_constants`] propagates the function's top-level constants; this also reaches those
/// assigned inside a branch (`if m == 0: neg = false ...` once a type's facts decide `neg`).
#[derive(Default)]
struct BlockConstants(HashMap<Var, Expr>);

/// The most constants a block tracks at once (long unrolled bodies assign many).
const MAX_BLOCK_CONSTANTS: usize = 32;

impl BlockConstants {
    /// `s` reading the known constants, those it writes aside (a loop that reads `v` and then
    /// writes it must keep reading `v`).
    fn substituted(&self, s: Stmt) -> Stmt {
        if self.0.is_empty() {
            return s;
        }
        let m: HashMap<Var, Expr> = self
            .0
            .iter()
            .filter(|(v, _)| !s.writes(**v))
            .map(|(v, e)| (*v, e.clone()))
            .collect();
        if m.is_empty() {
            s
        } else {
            subst_stmt(s, &m)
        }
    }

    /// Forgets what `s` writes, then learns what it assigns a constant.
    fn learn(&mut self, s: &Stmt) {
        self.0.retain(|v, _| !s.writes(*v));
        if let Stmt::Assign(v, e) = s {
            // Bools only: a float constant carried into a running extreme's chain would hide
            // the chain from `chains::minmax_trees`.
            if matches!(e, Expr::Bool(_)) && self.0.len() < MAX_BLOCK_CONSTANTS {
                self.0.insert(*v, e.clone());
            }
        }
    }
}

/// Whether control never continues past the statement.
pub(super) fn ends_block(s: &Stmt) -> bool {
    match s {
        Stmt::Return(_) | Stmt::Succeed | Stmt::Break | Stmt::Continue => true,
        Stmt::Check {
            cond: Expr::Bool(false),
            ..
        } => true,
        Stmt::If(_, a, b) => a.last().is_some_and(ends_block) && b.last().is_some_and(ends_block),
        _ => false,
    }
}

enum Folded {
    None,
    One(Stmt),
    Many(Vec<Stmt>),
}

fn fold_stmt(s: Stmt) -> Folded {
    Folded::One(match s {
        Stmt::If(c, a, b) => {
            let c = fold_expr(c);
            let (a, b) = (fold_block(a), fold_block(b));
            match as_const(&c) {
                Some(v) => return Folded::Many(if v.b() { a } else { b }),
                None if a.is_empty() && b.is_empty() => return Folded::None,
                None => Stmt::If(c, a, b),
            }
        }
        Stmt::Loop { body, latch } => Stmt::Loop {
            body: fold_block(body),
            latch: fold_block(latch),
        },
        Stmt::Check { cond, err, a, b } => {
            let cond = fold_expr(cond);
            if as_const(&cond) == Some(Val::B(true)) {
                return Folded::None;
            }
            Stmt::Check {
                cond,
                err,
                a: fold_expr(a),
                b: fold_expr(b),
            }
        }
        // `any`/`all` of elements that are all the identity (a test that the element type
        // decides, `any(isnan(v) for v in x)` of an integer image) is the identity, whatever the
        // length, empty included.
        Stmt::Reduce {
            dst,
            op: op @ (super::ReduceOp::Any | super::ReduceOp::All),
            elem,
            len,
            index,
            on_empty,
        } => {
            let elem = fold_expr(elem);
            let identity = eval::reduce_empty(op);
            if on_empty.is_none() && as_const(&elem) == Some(identity) {
                return Folded::One(Stmt::Assign(dst, Expr::Bool(identity.b())));
            }
            Stmt::Reduce {
                dst,
                op,
                len: fold_expr(len),
                index,
                elem,
                on_empty,
            }
        }
        // Everything else holds expressions only (no nested blocks).
        s => super::map_stmt_exprs(s, &mut fold_expr),
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
            Stmt::Assign(v, _)
            | Stmt::Reduce { dst: v, .. }
            | Stmt::Sorted { dst: v, .. }
            | Stmt::MedianNetwork { dst: v, .. } => *counts.entry(*v).or_default() += 1,
            _ => {}
        }
        if let Stmt::Reduce { index, .. } | Stmt::Fill { index, .. } = s {
            *counts.entry(*index).or_default() += 2; // bound per element: never a constant
        }
        stmt_blocks(s, |b| count_defs(b, counts));
    }
}

pub(super) fn subst_expr(e: Expr, m: &HashMap<Var, Expr>) -> Expr {
    match e {
        Expr::Var(v) => m.get(&v).cloned().unwrap_or(e),
        e => e.map_children(|c| subst_expr(c, m)),
    }
}

fn subst_stmt(s: Stmt, m: &HashMap<Var, Expr>) -> Stmt {
    super::map_stmt_exprs(s, &mut |x| subst_expr(x, m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_through_the_interpreters_semantics() {
        let e = Expr::Binary(BinOp::Add, Expr::F64(0.1).boxed(), Expr::F64(0.2).boxed());
        assert_eq!(const_expr(&e), Some(Val::F(0.1 + 0.2)));
        let nan_cmp = Expr::Cmp(
            CmpOp::Eq,
            Expr::F64(f64::NAN).boxed(),
            Expr::F64(f64::NAN).boxed(),
        );
        assert_eq!(const_expr(&nan_cmp), Some(Val::B(false)));
        let div0 = Expr::Binary(BinOp::FloorDiv, Expr::I64(1).boxed(), Expr::I64(0).boxed());
        assert_eq!(
            const_expr(&div0),
            None,
            "integer division by zero is left to its check"
        );
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
