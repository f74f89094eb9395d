//! Tuples held in variables: `a = (1, 2)`, `lo, hi = bounds`, `return a`; and Counters:
//! `counts = Counter(x)`, `pairs = counts.most_common(1)`.
//!
//! A tuple is immutable, so a name assigned a tuple exactly once, by a statement at the top of
//! the function body, is that value wherever it is read: its numbers are stored in temporaries
//! and computed arrays materialised, so later writes cannot change what it holds. A Counter
//! holds its data as it was when made (`collections::counter` materialises it), and ndjit
//! refuses every use that would change it, so such a name holds it the same way.

use super::{ArrayVal, Translator, Value};
use crate::error::{ErrorKind, Result, Span};
use crate::syntax::ast::{Expr, ExprKind, Stmt, StmtKind};
use std::collections::{HashMap, HashSet};

/// Names assigned exactly once in `body`, by a top-level `name = ...`.
pub(super) fn assigned_once_at_top(body: &[Stmt]) -> HashSet<String> {
    let mut counts: HashMap<String, u32> = HashMap::new();
    count_assignments(body, &mut counts);
    body.iter()
        .filter_map(|s| match &s.kind {
            StmtKind::Assign { targets, .. } => Some(targets),
            _ => None,
        })
        .flatten()
        .filter_map(|t| match &t.kind {
            ExprKind::Name(n) if counts.get(n) == Some(&1) => Some(n.clone()),
            _ => None,
        })
        .collect()
}

fn count_assignments(body: &[Stmt], counts: &mut HashMap<String, u32>) {
    fn target(t: &Expr, counts: &mut HashMap<String, u32>) {
        match &t.kind {
            ExprKind::Name(n) => *counts.entry(n.clone()).or_insert(0) += 1,
            ExprKind::Tuple(items) | ExprKind::List(items) => {
                items.iter().for_each(|i| target(i, counts))
            }
            _ => {}
        }
    }
    for s in body {
        match &s.kind {
            StmtKind::Assign { targets, .. } => targets.iter().for_each(|t| target(t, counts)),
            StmtKind::AugAssign { target: t, .. } => target(t, counts),
            StmtKind::For {
                target: t,
                body,
                orelse,
                ..
            } => {
                target(t, counts);
                count_assignments(body, counts);
                count_assignments(orelse, counts);
            }
            StmtKind::If { body, orelse, .. } | StmtKind::While { body, orelse, .. } => {
                count_assignments(body, counts);
                count_assignments(orelse, counts);
            }
            _ => {}
        }
    }
}

impl Translator<'_> {
    /// Whether `a` is the whole of an argument's or a bound array's storage, which no
    /// assignment refills.
    fn fixed_storage(&self, a: &ArrayVal) -> bool {
        a.slot().is_some_and(|s| {
            !matches!(
                self.func.arrays[s.0 as usize].kind,
                crate::ir::ArrKind::Scratch { .. }
            )
        })
    }

    /// Refuses `name = value` (`what`: a tuple, a Counter) unless the name is assigned once, at
    /// the top level of the function, where it is that value wherever it is read.
    fn check_assigned_once(&self, name: &str, what: &str, hint: &str, span: Span) -> Result<()> {
        if self.assigned_once.contains(name) {
            return Ok(());
        }
        Err(self
            .err(
                ErrorKind::Unsupported,
                span,
                format!(
                    "`{}` holds {what}, so it must be assigned once, at the top level of the function",
                    super::rebind::display(name),
                ),
            )
            .hint(hint))
    }

    /// `name = Counter(...)` or `name = counter.most_common(n)`: remembered as that value, whose
    /// data is already fixed.
    pub(super) fn assign_counter(&mut self, name: &str, value: Value, span: Span) -> Result<()> {
        let hint = "use one name for one Counter, made at the top level of the function, or name \
                    the pair: `label, count = Counter(x).most_common(1)[0]`";
        self.check_assigned_once(name, value.describe(), hint, span)?;
        self.mark_bound(name);
        self.fixed_values.insert(name.to_string(), value);
        Ok(())
    }

    /// `name = (a, b, ...)`: remembered as the tuple's (fixed) items.
    pub(super) fn assign_tuple(&mut self, name: &str, items: Vec<Value>, span: Span) -> Result<()> {
        let hint = "unpack the tuple into separate variables, e.g. `lo, hi = ...`";
        self.check_assigned_once(name, "a tuple", hint, span)?;
        let items = items
            .into_iter()
            .map(|v| match v {
                // NumPy's tuple holds the array itself. A view of an argument or a bound array
                // stays a view (their storage is never refilled; a write into it while the tuple
                // shares it is refused, `rebind::check_aliasing`); anything else, a computed
                // array or a local's storage (which an assignment may refill), is copied now.
                Value::Array(ref a) | Value::Matrix(ref a, _) | Value::List(ref a, _)
                    if self.fixed_storage(a) =>
                {
                    v
                }
                v => self.evaluated(v),
            })
            .collect();
        self.mark_bound(name);
        self.fixed_values
            .insert(name.to_string(), Value::Tuple(items));
        Ok(())
    }
}
