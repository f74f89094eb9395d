//! Sets, where only their size is read: `len(set(x))`, the count of distinct values.
//!
//! A set of numbers iterates in CPython's hash order, which ndjit does not reproduce, so what
//! reads its items (`sum(set(x))`, `max(set(x))` where a NaN makes the order show, `for v in
//! s`) would depend on it; its size does not. The walk of `fate.rs`, with the rules below, finds
//! the calls of `set()` and `frozenset()` whose value reaches only `len()` (directly or through
//! names); the lowering counts their distinct items (`builtins::collections::set`) and refuses
//! any other set.

use super::fate::{self, Callee, Fate, Rules, Scope, Verdict};
use super::names::{Builtin, Func, Module};
use crate::error::Span;
use crate::syntax::ast::{BinOp, Expr, ExprKind, Keyword, UnaryOp};
use crate::syntax::Program;
use std::collections::HashSet;

/// The spans of the `set(...)` and `frozenset(...)` calls of `program` whose value reaches only
/// `len()`.
pub(super) fn counted_sets(program: &Program, callee: Callee) -> HashSet<Span> {
    fate::followed(program, &SetSize, (&[], callee), Verdict::Agrees)
}

/// The rules for a set whose items ndjit holds in another order than CPython's.
struct SetSize;

impl Rules for SetSize {
    fn follows(&self, s: &Scope, e: &Expr) -> bool {
        let ExprKind::Call { func, .. } = &e.kind else {
            return false;
        };
        s.builtin(func).is_some_and(|b| {
            b.module == Module::Builtin && matches!(b.func, Func::Set | Func::Frozenset)
        })
    }

    /// `s | t`, `s - t`, `s == t`, `v in s`: set algebra and tests, not lowered.
    fn operand(&self, _: &Scope, _: BinOp, _: Fate, _: &Expr, _: &Expr, _: bool) -> Fate {
        Fate::Differs
    }

    fn unary(&self, _: UnaryOp, _: Fate) -> Fate {
        Fate::Differs
    }

    fn argument(&self, b: Builtin, (n, keywords): (usize, &[Keyword]), _: Fate) -> Fate {
        match (b.module, b.func) {
            (Module::Builtin, Func::Len) if n == 1 && keywords.is_empty() => Fate::Agrees,
            _ => Fate::Differs,
        }
    }

    /// `v in s` reads the items, and `s == t` and a set's truth are not lowered.
    fn compared(&self) -> Fate {
        Fate::Differs
    }

    /// `s |= t` changes the set itself.
    fn updated_in_place(&self) -> bool {
        true
    }

    /// A filter's result is a number: a set there is refused.
    fn result(&self) -> Fate {
        Fate::Differs
    }
}
