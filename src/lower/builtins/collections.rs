//! `collections.Counter` as majority filters use it: `Counter(data).most_common(1)[0][0]`, the
//! item seen most often (ties to the one seen first), and `[0][1]`, its count. CPython's
//! `statistics.mode` is `Counter(iter(data)).most_common(1)[0][0]`, so both are counted by
//! [`statistics::most_common`]; only the error for no data differs (`IndexError` here: the
//! list of pairs is empty).
//!
//! ndjit's Counter is read, never changed: `Counter(data)` holds the data (as it is when the
//! Counter is made: a name may hold the Counter, `tuples.rs`), `.most_common(n)` (`n` at least
//! 1, or all) the list of pairs, and indexing that list by `0` counts. Anything
//! else a Counter does (`c[v]`, `update`, iteration, other pairs than the first) is refused by
//! name, with what to write instead.

use super::statistics::{self, Counted};
use super::Args;
use crate::error::{ErrorKind, Exception, Result, Span};
use crate::ir::{CmpOp, Expr, Ty};
use crate::lower::expr::cmp;
use crate::lower::names::Func;
use crate::lower::provenance::Prov;
use crate::lower::value::Value;
use crate::lower::value::{ArrayVal, ElemKind};
use crate::lower::Translator;
use crate::syntax::ast;

/// What to write instead of a use of a Counter that ndjit does not take.
const HINT: &str = "ndjit reads `Counter(data).most_common(1)[0]`: `[0][0]` is the most common \
                    item, `[0][1]` its count";

/// The refusal of `what`, a use of a Counter ndjit does not take.
pub(crate) fn refused(t: &Translator, span: Span, what: &str) -> crate::error::Error {
    t.err(
        ErrorKind::Unsupported,
        span,
        format!("{what} is not supported in filters"),
    )
    .hint(
        "ndjit reads `Counter(data).most_common(1)[0]` ((item, count)); count one value with \
         np.count_nonzero(x == v)",
    )
}

/// `collections.Counter(data)`.
pub(super) fn counter(t: &mut Translator, a: &mut Args) -> Result<Value> {
    a.arity(t, 1, 1)?;
    let (data, s) = a.take();
    match data {
        Value::Array(_) | Value::List(..) | Value::Tuple(_) => {
            // Counted as the items are now: a Counter held in a tuple may be read after the
            // names its data reads have changed.
            let array = matches!(data, Value::Array(_));
            let (items, kind) = crate::lower::lists::sequence(t, data, s)?;
            let items = t.materialize(&items, None);
            let data = match array {
                true => Value::Array(items),
                false => Value::List(items, kind),
            };
            Ok(Value::Counter(Box::new((data, s))))
        }
        // Its items are the rows, arrays, which a dict cannot hold.
        Value::Matrix(..) => Err(t
            .err(
                ErrorKind::Type,
                s,
                "Counter of a 2-D array counts its rows, and an array is unhashable",
            )
            .hint("count its values: Counter(m.ravel())")),
        other => Err(t
            .err(
                ErrorKind::Type,
                s,
                format!(
                    "Counter counts the items of an iterable, and {} is none",
                    other.describe()
                ),
            )
            .hint(HINT)),
    }
}

/// `counter.most_common(n)`: `n` omitted, `None`, a constant int of at least 1 or the float
/// `1.0` (every such list starts with the same pair).
pub(super) fn most_common(t: &mut Translator, a: &mut Args) -> Result<Value> {
    a.arity(t, 1, 2)?;
    let counter = match a.take() {
        (Value::Counter(counter), _) => counter,
        // (A method name of no array or number: resolved for a Counter, bound to anything.)
        (other, s) => {
            return Err(t.err(
                ErrorKind::Type,
                s,
                format!(
                    "{} has no attribute `most_common` (a Counter's)",
                    other.describe()
                ),
            ))
        }
    };
    if let Some((n, s)) = a.take_or_kw("n") {
        let count = match &n {
            Value::None => None,
            Value::Scalar(e, Ty::I64 | Ty::Bool) => match crate::ir::fold::const_expr(e) {
                Some(crate::ir::eval::Val::I(k)) => Some(k),
                Some(crate::ir::eval::Val::B(b)) => Some(b as i64),
                _ => {
                    return Err(t
                        .err(
                            ErrorKind::Unsupported,
                            s,
                            "most_common(n) with an `n` computed at run time",
                        )
                        .hint("write most_common(1): ndjit reads the first pair"))
                }
            },
            // CPython's `heapq.nlargest` takes `n == 1` by `max`, so a float 1.0 gives the
            // first pair; any other float reaches `range` or a slice, a TypeError.
            Value::Scalar(e, Ty::F64) => match crate::ir::fold::const_expr(e) {
                Some(v) if v.f() == 1.0 => Some(1),
                Some(_) => {
                    return Err(t.err(
                        ErrorKind::Type,
                        s,
                        "most_common(n) takes an int: a float other than 1.0 is a TypeError",
                    ))
                }
                None => {
                    return Err(t
                        .err(
                            ErrorKind::Unsupported,
                            s,
                            "most_common(n) with a float `n` computed at run time",
                        )
                        .hint("write most_common(1): ndjit reads the first pair"))
                }
            },
            other => {
                return Err(t.err(
                    ErrorKind::Type,
                    s,
                    format!("most_common(n) takes an int, not {}", other.describe()),
                ))
            }
        };
        if let Some(k) = count.filter(|&k| k < 1) {
            return Err(t
                .err(
                    ErrorKind::Unsupported,
                    s,
                    format!("most_common({k}) is an empty list, whose items ndjit cannot read"),
                )
                .hint(HINT));
        }
    }
    Ok(Value::MostCommon(counter))
}

/// `counter.most_common(n)[index]`: `index` must be `0`, the pair `(item, count)`; `IndexError`
/// for no data.
pub(crate) fn first_pair(
    t: &mut Translator,
    data: (Value, Span),
    index: &ast::Expr,
    span: Span,
) -> Result<Value> {
    let i = t.expr(index)?;
    let first = match &i {
        Value::Scalar(e, Ty::I64) => {
            crate::ir::fold::const_expr(e) == Some(crate::ir::eval::Val::I(0))
        }
        _ => false,
    };
    if !first {
        return Err(t
            .err(
                ErrorKind::Unsupported,
                index.span,
                "ndjit reads the first pair of most_common() only (index 0)",
            )
            .hint(HINT));
    }
    let counted = Counted {
        empty: (Exception::IndexError, "list index out of range"),
        by: "Counter",
        counts_read: true,
    };
    let (item, count) = statistics::most_common(t, data, span, counted)?;
    let count = t.with_prov(count, Ty::I64, Prov::Py);
    Ok(Value::Tuple(vec![item, Value::Scalar(count, Ty::I64)]))
}

/// `set(data)` or `frozenset(data)` (`func`), whose value reaches only `len()` (`set_sizes.rs`):
/// an array of as many items as the set holds, which only that size reads. Any other set is
/// refused: it iterates in CPython's hash order.
pub(super) fn set(t: &mut Translator, func: Func, a: &mut Args) -> Result<Value> {
    let (span, name) = (a.span, func.name());
    if !t.counted_sets.contains(&span) {
        return Err(t
            .err(
                ErrorKind::Unsupported,
                span,
                format!("a {name} whose items are read: it iterates in CPython's hash order"),
            )
            .hint(
                "ndjit counts a set's items, `len(set(x))`; for the distinct values in order \
                 use `np.unique(x)`",
            ));
    }
    a.arity(t, 0, 1)?;
    if a.pos.is_empty() {
        return Ok(sized(t, Expr::I64(0)));
    }
    let (data, s) = a.take();
    let fresh_items = matches!(data, Value::Array(_));
    let what = match &data {
        Value::Array(_) | Value::List(..) | Value::Tuple(_) => None,
        // Its items are the rows, arrays, which a set cannot hold.
        Value::Matrix(..) => Some(format!(
            "{name} of a 2-D array holds its rows, and an array is unhashable"
        )),
        other => Some(format!(
            "{name} holds the items of an iterable, and {} is none",
            other.describe()
        )),
    };
    if let Some(what) = what {
        return Err(t.err(ErrorKind::Type, s, what));
    }
    let (items, kind) = crate::lower::lists::sequence(t, data, s)?;
    if kind == ElemKind::Mixed {
        return Err(t.mixed_list(s, "counting its distinct items"));
    }
    let (count, nans) = crate::lower::numpy::distinct_count(t, items, span)?;
    if !fresh_items {
        // A list may hold one NaN object twice (`[v, v]`), which the set holds once.
        t.check_plain(
            cmp(CmpOp::Lt, nans, Expr::I64(2)),
            Exception::ValueError,
            &format!(
                "{name} of a list or tuple holding two NaNs or more: it holds a NaN once for each \
                 object, which ndjit does not track: pass an array (each item a new object)"
            ),
            span,
        );
    }
    let n = t.stable(count, Ty::I64);
    Ok(sized(t, n))
}

/// An array of `len` items that only its size reads (a counted set's).
fn sized(t: &mut Translator, len: Expr) -> Value {
    Value::Array(ArrayVal {
        len,
        ty: Ty::F64,
        index: t.temp(Ty::I64),
        elem: Expr::F64(0.0),
    })
}
