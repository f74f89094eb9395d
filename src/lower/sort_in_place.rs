//! An array's `x.sort()`: NumPy sorts the array in place, in `np.sort`'s order (NaN last), and
//! every name for that memory sees it. Lowered as the write `x[:] = np.sort(x)`, so it takes the
//! path of every other write into an array:
//! - the filter's own buffer `w` is first copied into a version (`rebind::version_params` counts
//!   `w.sort()` as a write), which is scipy's contract anyway;
//! - a bound array, a generic_filter1d input line or a helper's argument is refused as any write
//!   into one is;
//! - another name for the same memory read afterwards (`v = w[1:]; v.sort(); return w[1]`) is
//!   refused by `rebind::check_aliasing`, which counts a list method's call as a write.
//!
//! Before types are known, `.sort()` also marks its name as a list changed in place
//! (`rebind::changed_lists`). A name whose only such method is `.sort()` and that is first given
//! an array ([`Translator::note_sorted_arrays`]) is an array instead; the passes after remember it
//! (`Learned::sorted_arrays`), so that the checks made before the body is lowered see an array.

use super::{Translator, Value};
use crate::error::{ErrorKind, Result};
use crate::syntax::ast::{self, ExprKind};

/// The kinds NumPy's `sort` accepts: all give the same values here (`np.sort`'s guard refuses
/// the windows where the order of `0.0` and `-0.0` would show).
const KINDS: [&str; 4] = ["quicksort", "mergesort", "heapsort", "stable"];

impl Translator<'_> {
    /// Lowers the statement `e` if it is `name.sort(...)` of an array. Returns whether it did.
    pub(super) fn array_sort_statement(&mut self, e: &ast::Expr) -> Result<bool> {
        let ExprKind::Call {
            func,
            args,
            keywords,
        } = &e.kind
        else {
            return Ok(false);
        };
        let ExprKind::Attribute(receiver, method) = &func.kind else {
            return Ok(false);
        };
        // (A local list changed in place never gets here: `list_methods.rs` sorts it.)
        if method != "sort" || !matches!(receiver.kind, ExprKind::Name(_)) {
            return Ok(false);
        }
        let array = self.expr(receiver)?;
        if !matches!(array, Value::Array(_) | Value::Matrix(..)) {
            return Ok(false);
        }
        self.sort_arguments(args, keywords)?;
        let sorted =
            super::builtins::sorted_array(self, array, receiver.span, "`.sort()`", e.span)?;
        // `name[:] = sorted`: the whole array, through the writes' own path.
        let whole = ast::Expr {
            kind: ExprKind::Slice(None, None, None),
            span: e.span,
        };
        let target = ast::Expr {
            kind: ExprKind::Subscript(receiver.clone(), Box::new(whole)),
            span: receiver.span,
        };
        self.assign(&target, sorted)?;
        Ok(true)
    }

    /// `.sort()`'s arguments, NumPy's `sort(axis=-1, kind=None, order=None, *, stable=None)`:
    /// the axis `-1` or `0` (a 1-D array's one axis), a kind NumPy knows, `stable` a constant;
    /// no `order` (fields of structured arrays).
    fn sort_arguments(&self, args: &[ast::Expr], keywords: &[ast::Keyword]) -> Result<()> {
        const NAMES: [&str; 2] = ["axis", "kind"];
        if let Some(extra) = args.get(NAMES.len()) {
            return Err(self
                .err(
                    ErrorKind::Unsupported,
                    extra.span,
                    "`.sort()` of an array takes its axis and kind here, nothing more",
                )
                .hint("write `x.sort()`"));
        }
        let given = NAMES.iter().zip(args).map(|(n, a)| (*n, a));
        for (name, value) in given.chain(keywords.iter().map(|k| (k.name.as_str(), &k.value))) {
            let ok = match (name, &value.kind) {
                ("kind", ExprKind::Str(s)) => KINDS.contains(&s.as_str()),
                ("kind" | "stable", ExprKind::None) | ("stable", ExprKind::Bool(_)) => true,
                ("axis", ExprKind::Int(0)) => true,
                ("axis", ExprKind::Unary(ast::UnaryOp::Neg, a)) => {
                    matches!(a.kind, ExprKind::Int(1))
                }
                _ => false,
            };
            if !ok {
                return Err(self
                    .err(
                        ErrorKind::Unsupported,
                        value.span,
                        format!("this `{name}` of `.sort()` is not supported"),
                    )
                    .hint(
                        "write `x.sort()`: `axis=-1` (a 1-D array's one axis), one of NumPy's \
                         kinds or `stable=True` (each gives the same values) are accepted",
                    ));
            }
        }
        Ok(())
    }

    /// Whether an assignment's targets name a list changed by `.sort()` alone that holds
    /// nothing yet: one that may be an array ([`Translator::note_sorted_arrays`]).
    pub(super) fn sorted_target(&self, targets: &[ast::Expr]) -> bool {
        targets.iter().any(|t| match &t.kind {
            ExprKind::Name(n) => {
                self.sortable.contains(n.as_str())
                    && self.changed_lists.contains(n.as_str())
                    && !self.declared.contains_key(n.as_str())
            }
            ExprKind::Tuple(items) | ExprKind::List(items) => self.sorted_target(items),
            _ => false,
        })
    }

    /// A name in `sortable` (its only list method is `.sort()`) that an assignment gives an
    /// array before it holds anything else is an array, sorted in place where `.sort()` is
    /// called: not a list. Tuple targets take their items' values (`a, b = w, w[1:]`).
    pub(super) fn note_sorted_arrays(&mut self, targets: &[ast::Expr], value: &Value) {
        for t in targets {
            match (&t.kind, value) {
                (ExprKind::Tuple(ts) | ExprKind::List(ts), Value::Tuple(vs))
                    if ts.len() == vs.len() =>
                {
                    for (t, v) in ts.iter().zip(vs) {
                        self.note_sorted_arrays(std::slice::from_ref(t), v);
                    }
                }
                (ExprKind::Name(n), Value::Array(_) | Value::Matrix(..))
                    if self.sorted_target(std::slice::from_ref(t)) =>
                {
                    self.changed_lists.remove(n.as_str());
                    if self.sorted_arrays.insert(n.clone()) {
                        self.changed = true; // the checks before the body must see an array
                    }
                }
                _ => {}
            }
        }
    }
}
