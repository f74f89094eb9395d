//! Exact rewrites of the loop-carried chains an unrolled loop leaves behind.
//!
//! After unrolling and if-conversion (`fold`), `for v in x: if v < r: r = v` is a chain of `n`
//! dependent selects, and `if not isnan(v): total += v` a chain of selects around adds. Both are
//! latency-bound. The rewrites here shorten the chains without changing a single bit of any result,
//! for any input (NaN, signed zeros, infinities), so every backend and the interpreter still agree
//! with the user's Python:
//!
//! - [`masked_adds`]: `select(c, t + e, t)` is `t + select(c, e, -0.0)`, because `t + -0.0` is `t`
//!   for every `t` (`+0.0 + -0.0` is `+0.0`, a NaN stays itself). The select leaves the chain.
//! - [`minmax_trees`]: a running minimum from a constant `C` that is not NaN is the *leftmost*
//!   minimum of `C, v1, ..., vn`: a NaN `v` is never taken (`NaN < r` is false) and of equal
//!   values (zeros of both signs) the earliest stays. "Leftmost minimum" is associative, so it can
//!   be computed as a balanced tree: nodes `select(b < a, b, a)` (`a` before `b`), `log2 n` deep
//!   instead of `n`, with `C` brought in by leaves `select(v < C, v, C)` where a NaN could
//!   otherwise stick. Maxima likewise.

use super::{BinOp, CmpOp, Expr, Func, Stmt, Ty, Var, VarDecl};

/// The shortest chain worth a tree (shorter ones gain nothing over the chain's own latency).
const MIN_TREE: usize = 4;

/// Rewrites assignments `x = select(c, t + e, t)` (and `select(c, e + t, t)`) into an add of a
/// select, in `stmts` and the blocks inside it (the shape if-conversion gives `if c: t += e`).
pub fn masked_adds(stmts: &mut [Stmt], func: &Func) {
    for s in stmts.iter_mut() {
        match s {
            Stmt::Assign(_, e) => {
                if let Some(new) = masked(e, func) {
                    *e = new;
                }
            }
            Stmt::If(_, a, b) | Stmt::Loop { body: a, latch: b } => {
                masked_adds(a, func);
                masked_adds(b, func);
            }
            _ => {}
        }
    }
}

fn masked(e: &Expr, func: &Func) -> Option<Expr> {
    let Expr::Select(c, yes, no) = e else {
        return None;
    };
    let Expr::Var(t) = **no else { return None };
    let zero = match func.var_ty(t) {
        Ty::F64 => Expr::F64(-0.0),
        Ty::I64 => Expr::I64(0),
        _ => return None,
    };
    let Expr::Binary(BinOp::Add, a, b) = &**yes else {
        return None;
    };
    // Through folding's own select rules (a counter's `select(c, 1, 0)` is `c` as an integer).
    let masked = |x: &Expr| {
        Box::new(super::fold::fold_expr(Expr::Select(
            c.clone(),
            Box::new(x.clone()),
            Box::new(zero.clone()),
        )))
    };
    match (&**a, &**b) {
        (Expr::Var(v), other) if *v == t => {
            Some(Expr::Binary(BinOp::Add, a.clone(), masked(other)))
        }
        (other, Expr::Var(v)) if *v == t => {
            Some(Expr::Binary(BinOp::Add, masked(other), b.clone()))
        }
        _ => None,
    }
}

/// One step of a running minimum or maximum: `c = v < r; s = select(c, v, r); r = s` (minimum)
/// or `c = r < v; s = select(c, v, r); r = s` (maximum), or the same with the compare written
/// in the select (if-conversion names a condition only when several selects share it).
#[derive(Clone, Copy, PartialEq)]
struct Step {
    r: Var,
    v: Var,
    /// The compare's variable, when it has one.
    c: Option<Var>,
    s: Var,
    min: bool,
    /// Statements: 3 with a compare variable, else 2.
    len: usize,
}

fn step_at(stmts: &[Stmt], i: usize) -> Option<Step> {
    let var = |e: &Expr| match e {
        Expr::Var(v) => Some(*v),
        _ => None,
    };
    let (c, cmp, select) = match stmts.get(i..)? {
        [Stmt::Assign(c, cmp @ Expr::Cmp(..)), select @ Stmt::Assign(_, Expr::Select(cond, _, _)), ..]
            if var(cond) == Some(*c) =>
        {
            (Some(*c), cmp, select)
        }
        [select @ Stmt::Assign(_, Expr::Select(cmp, _, _)), ..] => (None, &**cmp, select),
        _ => return None,
    };
    let len = if c.is_some() { 3 } else { 2 };
    let Expr::Cmp(CmpOp::Lt, x, y) = cmp else {
        return None;
    };
    let Stmt::Assign(s, Expr::Select(_, a, b)) = select else {
        return None;
    };
    let Some(Stmt::Assign(r, Expr::Var(s2))) = stmts.get(i + len - 1) else {
        return None;
    };
    let (x, y, a, b) = (var(x)?, var(y)?, var(a)?, var(b)?);
    let temporaries = [c, Some(*s)];
    if s2 != s || b != *r || a == *r || temporaries.contains(&Some(a)) {
        return None;
    }
    let min = if x == a && y == *r {
        true
    } else if x == *r && y == a {
        false
    } else {
        return None;
    };
    Some(Step {
        r: *r,
        v: a,
        c,
        s: *s,
        min,
        len,
    })
}

/// Turns running minima and maxima that start from a non-NaN constant into balanced trees (module
/// docs), in `stmts` and the blocks inside it. `reads` counts every variable's reads in the whole
/// function: a chain's compare and select temporaries must be read by the chain alone.
pub fn minmax_trees(stmts: &mut Vec<Stmt>, func: &mut Func) {
    // One chain at a time: interleaved chains (a minimum and a maximum in one loop) overlap.
    for _ in 0..16 {
        let mut reads = std::collections::HashMap::new();
        count_reads(stmts, &mut reads);
        if !trees_in(stmts, func, &reads) {
            break;
        }
    }
}

/// Rewrites the first chain found in each block; returns whether it rewrote any.
fn trees_in(
    stmts: &mut Vec<Stmt>,
    func: &mut Func,
    reads: &std::collections::HashMap<Var, usize>,
) -> bool {
    let mut changed = false;
    for s in stmts.iter_mut() {
        if let Stmt::If(_, a, b) | Stmt::Loop { body: a, latch: b } = s {
            changed |= trees_in(a, func, reads);
            changed |= trees_in(b, func, reads);
        }
    }
    let mut out = Vec::with_capacity(stmts.len());
    let mut i = 0;
    while i < stmts.len() {
        if let Stmt::Assign(r, Expr::F64(c0)) = stmts[i] {
            if !c0.is_nan() && func.var_ty(r) == Ty::F64 {
                if let Some(chain) = chain_from(stmts, i + 1, r, reads) {
                    out.push(stmts[i].clone());
                    let last = chain[chain.len() - 1];
                    let end = last + step_at(stmts, last).expect("a step").len;
                    out.extend(rewrite_chain(&stmts[i + 1..end], &chain, i + 1, c0, func));
                    out.extend(stmts[end..].iter().cloned());
                    *stmts = out;
                    return true;
                }
            }
        }
        out.push(stmts[i].clone());
        i += 1;
    }
    changed
}

/// The positions of the steps of `r`'s chain after position `from`, if it is long enough and
/// nothing else touches `r` or the chain's temporaries in between.
fn chain_from(
    stmts: &[Stmt],
    from: usize,
    r: Var,
    reads: &std::collections::HashMap<Var, usize>,
) -> Option<Vec<usize>> {
    let mut steps: Vec<usize> = Vec::new();
    let mut first: Option<Step> = None;
    let mut i = from;
    while i < stmts.len() {
        match step_at(stmts, i) {
            Some(st) if st.r == r => {
                match first {
                    None => first = Some(st),
                    Some(f) if f.min == st.min && f.c == st.c && f.s == st.s => {}
                    Some(_) => break,
                }
                steps.push(i);
                i += st.len;
            }
            _ => {
                let mut vars = vec![r];
                if let Some(f) = first {
                    vars.extend(f.c.into_iter().chain([f.s]));
                }
                let touched = mentions(&stmts[i], &vars);
                if touched {
                    break;
                }
                i += 1;
            }
        }
    }
    let f = first?;
    // The temporaries are read by the chain alone (once per step); `r` by nothing in it.
    let alone = |v: Var| reads.get(&v).copied().unwrap_or(0) == steps.len();
    (steps.len() >= MIN_TREE && f.c.is_none_or(alone) && alone(f.s)).then_some(steps)
}

/// The statements `span` (which starts at position `offset`) with the chain's steps replaced by
/// leaves, followed by the tree that leaves the result in the chain's variable.
fn rewrite_chain(
    span: &[Stmt],
    chain: &[usize],
    offset: usize,
    c0: f64,
    func: &mut Func,
) -> Vec<Stmt> {
    let st0 = step_at(span, chain[0] - offset).expect("a step");
    let (r, min) = (st0.r, st0.min);
    // `b` replaces `a` when it is strictly smaller (larger): the earlier of equal values stays.
    let pick = |a: Expr, b: Expr| {
        let better = if min {
            Expr::Cmp(CmpOp::Lt, Box::new(b.clone()), Box::new(a.clone()))
        } else {
            Expr::Cmp(CmpOp::Lt, Box::new(a.clone()), Box::new(b.clone()))
        };
        Expr::Select(Box::new(better), Box::new(b), Box::new(a))
    };
    let new_var = |func: &mut Func| {
        let v = Var(func.vars.len() as u32);
        func.vars.push(VarDecl {
            ty: Ty::F64,
            name: format!("%m{}", v.0),
        });
        v
    };
    // Leaves are combined as soon as two of a height exist (a binary counter), so that few values
    // are live at once; every grouping gives the same leftmost minimum. Only a value that becomes
    // the left operand of a node needs the `select(v < C, v, C)` leaf (a NaN there would stick,
    // while a NaN on the right is never taken), and those are exactly the even positions.
    let mut out = Vec::with_capacity(span.len());
    let mut stack: Vec<(u32, Var)> = Vec::new();
    let mut k = 0;
    let mut j = 0;
    while j < span.len() {
        if !chain.contains(&(j + offset)) {
            out.push(span[j].clone());
            j += 1;
            continue;
        }
        let st = step_at(span, j).expect("a step");
        j += st.len;
        let leaf = if k % 2 == 0 && k + 1 < chain.len() {
            let leaf = new_var(func);
            out.push(Stmt::Assign(leaf, pick(Expr::F64(c0), Expr::Var(st.v))));
            leaf
        } else {
            // The variable is reassigned later: take its value now.
            let leaf = new_var(func);
            out.push(Stmt::Assign(leaf, Expr::Var(st.v)));
            leaf
        };
        k += 1;
        stack.push((0, leaf));
        while let [.., (ha, a), (hb, b)] = stack[..] {
            if ha != hb {
                break;
            }
            stack.truncate(stack.len() - 2);
            let node = new_var(func);
            out.push(Stmt::Assign(node, pick(Expr::Var(a), Expr::Var(b))));
            stack.push((ha + 1, node));
        }
    }
    // The rest, right to left: `s0 ⊕ (s1 ⊕ (... ⊕ sk))`.
    let (_, mut acc) = stack.pop().expect("a leaf");
    while let Some((_, a)) = stack.pop() {
        let node = new_var(func);
        out.push(Stmt::Assign(node, pick(Expr::Var(a), Expr::Var(acc))));
        acc = node;
    }
    let level = [acc];
    out.push(Stmt::Assign(r, Expr::Var(level[0])));
    out
}

/// Whether `s` reads or writes any of `vars` (in nested blocks too).
fn mentions(s: &Stmt, vars: &[Var]) -> bool {
    let mut found = matches!(s, Stmt::Assign(v, _) if vars.contains(v));
    super::stmt_exprs(s, |e| found |= vars.iter().any(|v| e.uses_var(*v)));
    super::stmt_blocks(s, |b| found |= b.iter().any(|t| mentions(t, vars)));
    found
}

fn count_reads(stmts: &[Stmt], reads: &mut std::collections::HashMap<Var, usize>) {
    fn in_expr(e: &Expr, reads: &mut std::collections::HashMap<Var, usize>) {
        if let Expr::Var(v) = e {
            *reads.entry(*v).or_default() += 1;
        }
        e.for_each_child(|c| in_expr(c, reads));
    }
    for s in stmts {
        super::stmt_exprs(s, |e| in_expr(e, reads));
        super::stmt_blocks(s, |b| count_reads(b, reads));
    }
}
