//! Reads of a local variable that may run before any assignment to it: CPython raises
//! `UnboundLocalError` there, where the lowering's variable would hold its initial zero.
//!
//! ```python
//! for v in x:
//!     if v > 5:
//!         last = v
//! return last          # UnboundLocalError when no value is above 5
//! ```
//!
//! A definite-assignment walk over the function's body finds the reads of its locals that some
//! path reaches with the name unassigned. The lowering gives each such name a flag, false where
//! the function (or an inlined helper's call) starts and set by every assignment, and checks it
//! at those reads only; a read every path reaches assigned costs nothing. The walk may flag more
//! reads than can fail (it does not follow a loop's trips, only its first); each flagged read
//! costs a test, never a wrong error, since the flag is the run's own.

use crate::error::Span;
use crate::syntax::ast::{Expr, ExprKind, Stmt, StmtKind};
use crate::syntax::visit;
use std::collections::{BTreeSet, HashSet};

/// The names definitely assigned at a point of the body; `None` where no path reaches it (after
/// a `return`, `raise`, `break` or `continue`).
type Bound = Option<BTreeSet<String>>;

/// The reads (name and the span of its `Name` node) of `locals` in `body` that a path may reach
/// before the name's first assignment. Parameters are not locals: they are bound on entry.
pub(super) fn maybe_unbound(body: &[Stmt], locals: &HashSet<String>) -> Vec<(String, Span)> {
    let mut walk = Walk {
        locals,
        reads: Vec::new(),
    };
    walk.block(body, Some(BTreeSet::new()));
    walk.reads
}

struct Walk<'a> {
    locals: &'a HashSet<String>,
    reads: Vec<(String, Span)>,
}

impl Walk<'_> {
    fn block(&mut self, stmts: &[Stmt], mut bound: Bound) -> Bound {
        for s in stmts {
            bound = self.stmt(s, bound);
        }
        bound
    }

    fn stmt(&mut self, s: &Stmt, bound: Bound) -> Bound {
        let Some(set) = &bound else {
            return None; // unreachable code reads nothing
        };
        match &s.kind {
            StmtKind::Expr(e) => self.expr(e, set),
            StmtKind::Assign { targets, value } => {
                self.expr(value, set);
                let mut after = set.clone();
                for t in targets {
                    self.target(t, set, &mut after);
                }
                return Some(after);
            }
            StmtKind::AugAssign { target, value, .. } => {
                self.expr(target, set); // `a += 1` reads `a` first
                self.expr(value, set);
                let mut after = set.clone();
                self.target(target, set, &mut after);
                return Some(after);
            }
            StmtKind::If { test, body, orelse } => {
                self.expr(test, set);
                let then = self.block(body, bound.clone());
                let els = self.block(orelse, bound.clone());
                return meet(then, els);
            }
            StmtKind::While { test, body, orelse } => {
                self.expr(test, set);
                self.block(body, bound.clone());
                // The body may not run, or leave by `break` before its assignments; `else`
                // runs when the test fails, which may be at once.
                self.block(orelse, bound.clone());
                return bound;
            }
            StmtKind::For {
                target,
                iter,
                body,
                orelse,
            } => {
                self.expr(iter, set);
                let mut inside = set.clone();
                self.target(target, set, &mut inside);
                self.block(body, Some(inside));
                self.block(orelse, bound.clone());
                return bound;
            }
            StmtKind::Return(value) => {
                if let Some(v) = value {
                    self.expr(v, set);
                }
                return None;
            }
            StmtKind::Raise { exc } => {
                if let Some(e) = exc {
                    self.expr(e, set);
                }
                return None;
            }
            StmtKind::Break | StmtKind::Continue => return None,
            StmtKind::Assert { test, msg } => {
                self.expr(test, set);
                if let Some(m) = msg {
                    self.expr(m, set);
                }
            }
            StmtKind::Import(names) => {
                let mut after = set.clone();
                after.extend(names.iter().map(|(_, alias)| alias.clone()));
                return Some(after);
            }
            StmtKind::Pass | StmtKind::Unsupported(_) => {}
        }
        bound
    }

    /// An assignment's target: the names it binds join `after`; what it reads (a subscript's
    /// array and index) is read with `bound`.
    fn target(&mut self, t: &Expr, bound: &BTreeSet<String>, after: &mut BTreeSet<String>) {
        match &t.kind {
            ExprKind::Name(n) => {
                after.insert(n.clone());
            }
            ExprKind::Tuple(items) | ExprKind::List(items) => {
                for item in items {
                    self.target(item, bound, after);
                }
            }
            _ => self.expr(t, bound),
        }
    }

    fn expr(&mut self, e: &Expr, bound: &BTreeSet<String>) {
        match &e.kind {
            ExprKind::Name(n) if self.locals.contains(n) && !bound.contains(n) => {
                self.reads.push((n.clone(), e.span));
            }
            // A lambda's body runs when it is called, not here; its names are not the
            // function's reads at this point (ndjit calls lambdas only where they are written).
            ExprKind::Lambda(_) => {}
            ExprKind::Comp(c) => {
                // The first iterable is evaluated outside; the targets are the comprehension's
                // own names, bound for its conditions, later iterables and element.
                let mut inner = bound.clone();
                for (k, clause) in c.clauses.iter().enumerate() {
                    self.expr(&clause.iter, if k == 0 { bound } else { &inner });
                    let mut with_target = inner.clone();
                    super::target_names(&clause.target, &mut with_target);
                    inner = with_target;
                    for cond in &clause.ifs {
                        self.expr(cond, &inner);
                    }
                }
                self.expr(&c.elt, &inner);
            }
            _ => visit::for_each_child(e, |child| self.expr(child, bound)),
        }
    }
}

/// The names assigned on both paths (a path that reaches no further assigns everything).
fn meet(a: Bound, b: Bound) -> Bound {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.intersection(&b).cloned().collect()),
        (a, None) => a,
        (None, b) => b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names of the reads flagged in `src`'s function `f`.
    fn flagged(src: &str) -> Vec<String> {
        let program = crate::syntax::parse(src).unwrap();
        let f = &program.function;
        let mut locals = HashSet::new();
        crate::lower::collect_locals(&f.body, &mut locals);
        for p in &f.params {
            locals.remove(&p.name);
        }
        maybe_unbound(&f.body, &locals)
            .into_iter()
            .map(|(n, _)| n)
            .collect()
    }

    #[test]
    fn reads_after_a_branch_or_loop_that_may_not_assign_are_flagged() {
        let branch = "def f(x):\n    if x[0] > 0:\n        a = 1.0\n    return a\n";
        assert_eq!(flagged(branch), ["a"]);
        let both = "def f(x):\n    if x[0] > 0:\n        a = 1.0\n    else:\n        a = 2.0\n    return a\n";
        assert!(flagged(both).is_empty());
        let early = "def f(x):\n    if x[0] > 0:\n        a = 1.0\n    else:\n        return 0.0\n    return a\n";
        assert!(flagged(early).is_empty());
        let target = "def f(x):\n    for v in x[:0]:\n        pass\n    return v\n";
        assert_eq!(flagged(target), ["v"]);
        let inside = "def f(x):\n    for v in x:\n        w = v\n    return 0.0\n";
        assert!(flagged(inside).is_empty());
        let carried = "def f(x):\n    for v in x:\n        if v > 0:\n            s = s + v\n        s = 0.0\n    return 1.0\n";
        assert_eq!(flagged(carried), ["s"]);
        let selfref = "def f(x):\n    a = a + 1\n    return a\n";
        assert_eq!(flagged(selfref), ["a"]);
        let aug = "def f(x):\n    a += 1\n    return a\n";
        assert_eq!(flagged(aug), ["a"]);
    }

    #[test]
    fn comprehension_targets_are_their_own() {
        let comp = "def f(x):\n    t = [v * 2 for v in x if v > 0]\n    return sum(t)\n";
        assert!(flagged(comp).is_empty());
        let outer =
            "def f(x):\n    if x[0] > 0:\n        k = 2.0\n    return sum([v * k for v in x])\n";
        assert_eq!(flagged(outer), ["k"]);
    }
}
