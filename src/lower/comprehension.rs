//! List comprehensions and generator expressions.
//!
//! `[elt for v in seq if cond]` becomes a loop that stores each `elt` into a scratch array, so
//! the element expression and the conditions are lowered exactly as the same code in a `for`
//! loop would be, with Python's order of evaluation and its errors. The result is a
//! [`Value::List`]: a Python list, whose elements keep their own kind (Python number or NumPy
//! scalar), unlike an array's (see `provenance.rs`).
//!
//! A generator expression is accepted only as the argument of a call that consumes it at once
//! (`sum`, `min`, `max`, `sorted`, `list`, `any`, `all`): a generator kept in a variable is
//! exhausted after one use, which a materialised list would not be. `any` and `all` stop at the
//! first element that decides them, as Python does, so that elements after it are never
//! evaluated (and never raise).
//!
//! The targets are local to the comprehension (Python 3): they are renamed apart before the
//! lowering, so a comprehension's `v` never touches the function's own `v`.

use super::float_statistics::MAX_ITEMS;
use super::value::ElemKind;
use super::{expr, not, ArrayVal, NameTy, Translator, Value};
use crate::error::{ErrorKind, Exception, Result, Span};
use crate::ir::{self, BinOp, CmpOp, Expr, Stmt, Ty};
use crate::syntax::ast::{self, CompFor, Comprehension};
use std::collections::HashMap;

/// The functions that consume a generator expression passed to them as their first argument.
pub(super) fn consumes_generator(f: super::names::Builtin) -> bool {
    use super::names::{Func::*, Module};
    match f.module {
        Module::Builtin => matches!(
            f.func,
            Sum | Min | Max | Any | All | Sorted | List | TupleOf | Set | Frozenset
        ),
        // Each reads its data once, in order, as it reads a list's (`Counter(iter(data))`,
        // `sorted(data)`), so a generator's result is its list's, errors included.
        Module::Statistics => true,
        Module::Collections => f.func == Counter,
        _ => false,
    }
}

impl Translator<'_> {
    /// `[elt for ...]`, or a generator expression consumed whole: the list of its elements.
    pub(super) fn list_comprehension(&mut self, c: &Comprehension, span: Span) -> Result<Value> {
        let c = self.scoped(c);
        let [clause] = &c.clauses[..] else {
            return Err(self
                .err(
                    ErrorKind::Unsupported,
                    span,
                    "a comprehension with more than one `for` is supported only inside any() \
                     and all()",
                )
                .hint("write nested for loops that append to an array"));
        };
        // The storage is sized by the number of iterations, before the loop; its element type is
        // learned from the element expression (another pass widens it, as for any local).
        self.comp_count += 1;
        let name = format!("%list'@c{}", self.comp_count);
        let count = self.temp(Ty::I64);
        let slot = std::cell::Cell::new(None);
        let mut kinds: Vec<ElemKind> = Vec::new();
        // Ints and floats together only where NumPy's float statistics alone read the list.
        let statistics = self.statistics_lists.contains(&span);
        let mut ints_and_floats = false;
        self.iterate(
            &clause.target,
            &clause.iter,
            &[],
            Some(&mut |t: &mut Self, trips: Expr| {
                let ty = match t.hints.get(&name) {
                    Some(NameTy::Array(ty)) => *ty,
                    _ => Ty::Bool,
                };
                let super::Local::Array(a, ety) = t.local_for(&name, NameTy::Array(ty), span)?
                else {
                    unreachable!("a comprehension's storage is an array")
                };
                let n = expr::convert(trips.clone(), Ty::I64, Ty::F64);
                super::numpy::creation::limit(t, n, span);
                super::builtins::fill_zeros(t, a, trips, ety);
                t.emit(Stmt::Assign(count, Expr::I64(0)));
                slot.set(Some((a, ety)));
                Ok(())
            }),
            |t| {
                t.filters(&clause.ifs)?;
                let v = t.expr(&c.elt)?;
                let (e, ty) = t.scalar(v, c.elt.span, "an element of a comprehension")?;
                let flagged = t.int_flag(&e).is_some();
                ints_and_floats |= flagged;
                t.refuse_int_or_float(flagged && !statistics, c.elt.span, "an element of a list");
                kinds.push(ElemKind::of(&t.prov(&e)));
                t.local_for(&name, NameTy::Array(ty), span)?;
                let (a, ety) = slot
                    .get()
                    .expect("the storage is declared before the loop body");
                t.emit(Stmt::Store(a, Expr::Var(count), expr::convert(e, ty, ety)));
                t.emit(Stmt::Assign(
                    count,
                    expr::bin(BinOp::Add, Expr::Var(count), Expr::I64(1)),
                ));
                Ok(())
            },
        )?;
        if ints_and_floats {
            self.check_plain(
                expr::cmp(CmpOp::Le, Expr::Var(count), Expr::I64(MAX_ITEMS)),
                Exception::ValueError,
                &format!(
                    "this list holds ints and floats, which NumPy's statistics take exactly \
                     only up to {MAX_ITEMS} items"
                ),
                span,
            );
        }
        let (a, ety) = slot.get().expect("the loop declared the storage");
        let index = self.temp(Ty::I64);
        let filled = ArrayVal {
            len: Expr::Var(count),
            ty: ety,
            index,
            elem: Expr::Load(a, Expr::Var(index).boxed()),
        };
        let list = self.materialize(&filled, None);
        let kind = kinds
            .into_iter()
            .reduce(ElemKind::join)
            .unwrap_or(ElemKind::Python);
        Ok(Value::List(list, kind))
    }

    /// `any(elt for ...)` / `all(elt for ...)`: true (false) at the first element that is true
    /// (false), leaving every loop at once; the rest are never evaluated.
    pub(super) fn any_all_generator(&mut self, any: bool, c: &Comprehension) -> Result<Value> {
        let c = self.scoped(c);
        let decided = self.temp(Ty::Bool);
        self.emit(Stmt::Assign(decided, Expr::Bool(false)));
        self.decide_loops(&c.clauses, &c.elt, any, decided)?;
        let r = if any {
            Expr::Var(decided)
        } else {
            not(Expr::Var(decided))
        };
        Ok(Value::Scalar(
            self.with_prov(r, Ty::Bool, super::provenance::Prov::Py),
            Ty::Bool,
        ))
    }

    /// The loops of `clauses`, innermost setting `decided` and leaving when `elt`'s truth is
    /// `stop_on`; each outer loop leaves too once `decided` is set.
    fn decide_loops(
        &mut self,
        clauses: &[CompFor],
        elt: &ast::Expr,
        stop_on: bool,
        decided: ir::Var,
    ) -> Result<()> {
        let (clause, rest) = clauses.split_first().expect("a comprehension has a `for`");
        self.iterate(&clause.target, &clause.iter, &[], None, |t| {
            t.filters(&clause.ifs)?;
            if rest.is_empty() {
                let v = t.expr(elt)?;
                let truth = t.truth(v, elt.span)?;
                let hit = if stop_on { truth } else { not(truth) };
                t.emit(Stmt::If(
                    hit,
                    vec![Stmt::Assign(decided, Expr::Bool(true)), Stmt::Break],
                    vec![],
                ));
            } else {
                t.decide_loops(rest, elt, stop_on, decided)?;
                t.emit(Stmt::If(Expr::Var(decided), vec![Stmt::Break], vec![]));
            }
            Ok(())
        })
    }

    /// A clause's `if`s: the rest of the iteration is skipped when one is false (each evaluated
    /// only when the ones before it held).
    fn filters(&mut self, ifs: &[ast::Expr]) -> Result<()> {
        for cond in ifs {
            let c = self.condition(cond)?;
            self.emit(Stmt::If(not(c), vec![Stmt::Continue], vec![]));
        }
        Ok(())
    }

    /// The comprehension with its targets renamed apart: each clause's names are new locals,
    /// seen by its own `if`s, the later clauses and the element, not by its own iterable (which
    /// Python evaluates outside, in the enclosing scope for the first clause).
    fn scoped(&mut self, c: &Comprehension) -> Comprehension {
        let mut c = c.clone();
        for k in 0..c.clauses.len() {
            let mut names = Vec::new();
            super::rebind::target_names(&c.clauses[k].target, &mut names);
            self.comp_count += 1;
            let map: HashMap<String, String> = names
                .into_iter()
                .map(|n| {
                    let fresh = format!("{n}'@c{}", self.comp_count);
                    (n, fresh)
                })
                .collect();
            self.locals.extend(map.values().cloned());
            let (clause, later) = c.clauses[k..].split_first_mut().unwrap();
            super::rebind::rename_expr(&mut clause.target, &map);
            clause
                .ifs
                .iter_mut()
                .for_each(|e| super::rebind::rename_expr(e, &map));
            for l in later {
                super::rebind::rename_expr(&mut l.target, &map);
                super::rebind::rename_expr(&mut l.iter, &map);
                l.ifs
                    .iter_mut()
                    .for_each(|e| super::rebind::rename_expr(e, &map));
            }
            super::rebind::rename_expr(&mut c.elt, &map);
        }
        c
    }

    /// A generator expression anywhere but as the argument of a call that consumes it.
    pub(super) fn generator_elsewhere(&self, span: Span) -> crate::error::Error {
        self.err(
            ErrorKind::Unsupported,
            span,
            "a generator expression is supported only as the argument of sum(), min(), max(), \
             any(), all(), sorted(), list(), tuple(), set(), Counter() or statistics' functions",
        )
        .hint("write a list comprehension `[... for ...]` to keep the values")
    }
}

impl ElemKind {
    fn of(p: &super::provenance::Prov) -> ElemKind {
        match p {
            super::provenance::Prov::Py => ElemKind::Python,
            super::provenance::Prov::Np => ElemKind::NumPy,
            super::provenance::Prov::Dyn(_) => ElemKind::Mixed,
        }
    }

    /// The kind of a list whose elements are of either kind.
    pub(crate) fn join(self, other: ElemKind) -> ElemKind {
        if self == other {
            self
        } else {
            ElemKind::Mixed
        }
    }
}
