//! Python lists, whose elements keep their own kind (see [`Value::List`]): the builtins on them
//! (`sorted`, `list`, and `sum`/`min`/`max` of a list or a tuple), and lists grown by `append`.
//!
//! A list the code appends to is a local with a length variable beside its storage, whose length
//! is the capacity; an append that finds it full copies the elements out, makes the storage
//! twice as large and copies them back. Python's lists are shared between names, the lowering's
//! are copied on assignment, so a second name for a growing list is refused where it is made.

use super::builtins::{counted_loop, Args};
use super::expr::{bin, cmp, convert, un};
use super::names::Func;
use super::provenance::Prov;
use super::value::{ArrayVal, ElemKind, Value};
use super::Translator;
use crate::error::{ErrorKind, Exception, Result, Span};
use crate::ir::{ArrKind, ArrayOp, BinOp, CmpOp, Expr, ReduceOp, Stmt, Ty, UnOp};
use crate::syntax::ast;

/// Integers up to this magnitude survive the round trip through f64 that sorting takes.
const EXACT_INT: i64 = 1 << 53;

/// A sequence as Python iterates it: its elements, and what kind of number each is. An array's
/// elements are NumPy scalars; a tuple's and a list's are whatever they hold.
pub(super) fn sequence(t: &mut Translator, v: Value, span: Span) -> Result<(ArrayVal, ElemKind)> {
    match v {
        Value::List(a, kind) => Ok((a, kind)),
        Value::Tuple(items) => {
            let mixed = t.ints_and_floats(&items);
            t.refuse_int_or_float(mixed, span, "an item of a sequence");
            let kind = items
                .iter()
                .map(|it| match it {
                    Value::Scalar(e, _) => match t.prov(e) {
                        Prov::Py => ElemKind::Python,
                        Prov::Np => ElemKind::NumPy,
                        Prov::Dyn(_) => ElemKind::Mixed,
                    },
                    _ => ElemKind::Mixed,
                })
                .reduce(ElemKind::join)
                .unwrap_or(ElemKind::Python);
            Ok((t.array_of(Value::Tuple(items), span)?, kind))
        }
        Value::Matrix(..) => Err(t
            .err(
                ErrorKind::Unsupported,
                span,
                "iterating a 2-D array gives its rows, which are not numbers",
            )
            .hint("flatten it first: m.ravel()")),
        v => {
            let arr = t.array_of(v, span)?;
            // A transform's coordinates are a tuple of Python ints; an array's elements NumPy's.
            let kind = match t.is_coords(&arr) {
                true => ElemKind::Python,
                false => ElemKind::NumPy,
            };
            Ok((arr, kind))
        }
    }
}

/// `sorted(iterable, reverse=False)`: a new list in ascending order, equal elements in their
/// original order (Python's sort is stable, which decides where `-0.0` and `0.0` go; the runtime
/// sort is stable too). `reverse=True` keeps the order of equal elements as well, as CPython
/// does by reversing before and after a stable sort.
///
/// CPython compares with `<` only, so with a NaN among the values the order is whatever its
/// merge steps leave; ndjit raises instead of guessing it.
pub(super) fn sorted(t: &mut Translator, a: &mut Args) -> Result<Value> {
    let span = a.span;
    a.arity(t, 1, 1)?;
    let (v, s) = a.take();
    let reverse = sort_options(t, "sorted", a.kw("key"), a.kw("reverse"))?;
    sort_sequence(t, (v, s), reverse, span)
}

/// The keyword arguments `sorted()` and `list.sort()` share: `key` (only `None`: a key function
/// would be a lambda or a function to run per item) and `reverse`, a constant; gives `reverse`.
pub(super) fn sort_options(
    t: &mut Translator,
    what: &str,
    key: Option<(Value, Span)>,
    reverse: Option<(Value, Span)>,
) -> Result<bool> {
    if let Some((k, ks)) = key {
        if !matches!(k, Value::None) {
            return Err(t
                .err(
                    ErrorKind::Unsupported,
                    ks,
                    format!("{what}(key=...) is not supported"),
                )
                .hint("sort the values themselves, e.g. sorted(np.abs(x))"));
        }
    }
    match reverse {
        None => Ok(false),
        Some((Value::Scalar(e, Ty::Bool | Ty::I64), rs)) => match crate::ir::fold::const_expr(&e) {
            Some(c) => Ok(c.f() != 0.0),
            None => Err(t.err(
                ErrorKind::Unsupported,
                rs,
                format!("{what}(reverse=...) must be a constant"),
            )),
        },
        Some((_, rs)) => Err(t.err(
            ErrorKind::Type,
            rs,
            format!("{what}(reverse=...) takes a bool"),
        )),
    }
}

/// The items of `v` (a list, a tuple or an array) in ascending order (descending with
/// `reverse`), as a new list: see [`sorted`].
pub(super) fn sort_sequence(
    t: &mut Translator,
    (v, s): (Value, Span),
    reverse: bool,
    span: Span,
) -> Result<Value> {
    let (arr, kind) = sequence(t, v, s)?;
    if kind == ElemKind::Mixed {
        return Err(t.mixed_list(s, "sorting it"));
    }
    let arr = t.materialize(&arr, None);
    let values = ArrayVal {
        elem: convert(arr.elem.clone(), arr.ty, Ty::F64),
        ty: Ty::F64,
        ..arr.clone()
    };
    refuse_unsortable(t, &values, arr.ty, span)?;
    let values = if reverse {
        reversed(t, &values)
    } else {
        values
    };
    let slot = t.new_array(ArrKind::Scratch { elem: Ty::F64 }, "%sorted");
    t.emit(Stmt::Fill {
        dst: slot,
        len: values.len.clone(),
        index: values.index,
        elem: values.elem.clone(),
        keep: None,
    });
    t.emit(Stmt::ArrayOp(ArrayOp::SORT, slot));
    let out = t.view(slot);
    let out = if reverse { reversed(t, &out) } else { out };
    let back = ArrayVal {
        elem: convert(out.elem.clone(), Ty::F64, arr.ty),
        ty: arr.ty,
        ..out
    };
    Ok(Value::List(t.materialize(&back, None), kind))
}

/// Raises for the values a sort through f64 cannot order as Python does: a NaN, and ints past
/// 2**53 (which f64 would round).
fn refuse_unsortable(t: &mut Translator, values: &ArrayVal, ty: Ty, span: Span) -> Result<()> {
    let (bad, exception, message) = match ty {
        Ty::F64 => (
            un(UnOp::IsNan, values.elem.clone()),
            Exception::ValueError,
            "sorted() of values that include NaN: CPython's order then depends on its merge \
             steps, which ndjit does not reproduce (np.sort puts NaN last)",
        ),
        Ty::I64 => (
            cmp(
                CmpOp::Gt,
                un(UnOp::Abs, values.elem.clone()),
                Expr::F64(EXACT_INT as f64),
            ),
            Exception::OverflowError,
            "sorted() of ints beyond 2**53, which ndjit sorts as floats",
        ),
        Ty::Bool => return Ok(()),
    };
    let probe = ArrayVal {
        elem: bad,
        ty: Ty::Bool,
        ..values.clone()
    };
    let any = t.reduce(ReduceOp::Any, &probe, span, None)?;
    t.check_plain(crate::lower::not(any), exception, message, span);
    Ok(())
}

/// The elements in reverse order (a lazy view).
pub(super) fn reversed(t: &mut Translator, a: &ArrayVal) -> ArrayVal {
    let index = t.temp(Ty::I64);
    let len = a.len.clone();
    let from = bin(
        BinOp::Sub,
        bin(BinOp::Sub, len.clone(), Expr::I64(1)),
        Expr::Var(index),
    );
    ArrayVal {
        len,
        ty: a.ty,
        index,
        elem: a.at(from),
    }
}

/// `list(iterable)`: a new list of the same elements.
pub(super) fn list(t: &mut Translator, a: &mut Args) -> Result<Value> {
    a.arity(t, 1, 1)?;
    let (v, s) = a.take();
    let (arr, kind) = sequence(t, v, s)?;
    Ok(Value::List(t.materialize(&arr, None), kind))
}

/// `a.tolist()`: a new list of Python numbers (floats, ints or bools by the array's type); a
/// NumPy scalar's `.tolist()` is its Python number (the caller gives it Python's kind).
pub(super) fn tolist(t: &mut Translator, a: &mut Args) -> Result<Value> {
    a.arity(t, 1, 1)?;
    let (v, s) = a.take();
    match v {
        Value::Scalar(..) => Ok(v),
        Value::Matrix(..) => Err(t
            .err(
                ErrorKind::Unsupported,
                s,
                "`.tolist()` of a 2-D array is a list of lists, which filters do not have",
            )
            .hint("flatten it first: m.ravel().tolist()")),
        v => {
            let arr = t.array_of(v, s)?;
            Ok(Value::List(t.materialize(&arr, None), ElemKind::Python))
        }
    }
}

/// `sum(seq)` of a list or tuple of Python ints (or bools): Python adds exactly, so a total past
/// 64 bits raises OverflowError rather than wrapping. Python floats are refused by the caller.
pub(super) fn sum_python_ints(t: &mut Translator, arr: &ArrayVal, span: Span) -> Result<Value> {
    let acc = t.temp(Ty::I64);
    t.emit(Stmt::Assign(acc, Expr::I64(0)));
    t.var_prov.insert(acc, Prov::Py);
    let n = t.stable(arr.len.clone(), Ty::I64);
    counted_loop(t, n, |t, i| {
        let item = convert(arr.at(i), arr.ty, Ty::I64);
        let item = t.with_prov(item, Ty::I64, Prov::Py);
        let total = t.binary(
            ast::BinOp::Add,
            Value::Scalar(Expr::Var(acc), Ty::I64),
            Value::Scalar(item, Ty::I64),
            span,
        )?;
        let (e, _) = t.scalar(total, span, "a sum")?;
        t.emit(Stmt::Assign(acc, e));
        Ok(())
    })?;
    t.var_prov.insert(acc, Prov::Py);
    Ok(Value::Scalar(Expr::Var(acc), Ty::I64))
}

/// The kind a `min`/`max`/`sum` of a sequence's elements hands back: its elements' own.
pub(super) fn result_kind(
    t: &mut Translator,
    v: Value,
    kind: ElemKind,
    span: Span,
    what: &str,
) -> Result<Value> {
    match (v, kind) {
        (_, ElemKind::Mixed) => Err(t.mixed_list(span, what)),
        (Value::Scalar(e, ty), ElemKind::Python) => {
            Ok(Value::Scalar(t.with_prov(e, ty, Prov::Py), ty))
        }
        (Value::Scalar(e, ty), ElemKind::NumPy) => {
            Ok(Value::Scalar(t.with_prov(e, ty, Prov::Np), ty))
        }
        (v, _) => Ok(v),
    }
}

impl Translator<'_> {
    /// `name = [...]` (`[]`, a comprehension, `list(...)`, `sorted(...)`) for a list the code
    /// changes in place: the list's storage and its length (see `list_methods.rs`).
    pub(super) fn assign_growing_list(
        &mut self,
        name: &str,
        value: Value,
        span: Span,
    ) -> Result<()> {
        let elements = match value {
            Value::Tuple(items) if items.is_empty() => None,
            v @ (Value::Tuple(_) | Value::List(..)) => Some(sequence(self, v, span)?),
            other => {
                return Err(self
                    .err(
                        ErrorKind::Type,
                        span,
                        format!(
                            "`{}` is changed by list methods (`.append`, `.sort` ...), so it \
                             holds a list, not {}",
                            super::rebind::display(name),
                            other.describe()
                        ),
                    )
                    .hint(
                        "use a different variable name for each; an array's sorted copy is \
                         np.sort(a), a longer one np.append(a, v), a list of its items list(a)",
                    ))
            }
        };
        let ty = match (&elements, self.hints.get(name)) {
            (Some((a, _)), _) => a.ty,
            (None, Some(super::NameTy::Array(ty))) => *ty,
            (None, _) => Ty::Bool,
        };
        let super::Local::Array(slot, ety) =
            self.local_for(name, super::NameTy::Array(ty), span)?
        else {
            unreachable!("a list is stored in an array")
        };
        let len = self.list_len[&slot];
        let Some((arr, kind)) = elements else {
            super::builtins::fill_zeros(self, slot, Expr::I64(0), ety);
            self.emit(Stmt::Assign(len, Expr::I64(0)));
            return Ok(());
        };
        self.note_list_kind(name, kind);
        self.refuse_list_of_types(name, arr.ty, ety, span);
        let arr = self.materialize(&arr, None); // it may read the list it replaces
        self.emit(Stmt::Fill {
            dst: slot,
            len: arr.len.clone(),
            index: arr.index,
            elem: convert(arr.elem.clone(), arr.ty, ety),
            keep: None,
        });
        self.emit(Stmt::Assign(len, Expr::Len(slot)));
        Ok(())
    }
}

/// What [`search`] looks for.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Search {
    /// `seq.index(v)`: the first position of an item equal to `v`.
    Index,
    /// `seq.count(v)`: the number of them.
    Count,
    /// `v in seq`: whether there is one.
    Contains,
    /// `list.remove(v)`: the position [`Search::Index`] gives, to delete.
    Remove,
}

/// `seq.index(v)` and `seq.count(v)` of a list or a tuple (a transform's coordinates too): the
/// first position of an item equal to `v` (`ValueError` where none is), and the number of them,
/// as Python ints. NumPy arrays have neither method.
pub(super) fn index_or_count(t: &mut Translator, func: Func, a: &mut Args) -> Result<Value> {
    let span = a.span;
    let method = func.name();
    a.arity(t, 2, 2)?;
    let (seq, ss) = a.take();
    if !is_python_sequence(t, &seq) {
        return Err(t
            .err(
                ErrorKind::Type,
                ss,
                format!("{} has no method `.{method}()`", seq.describe()),
            )
            .hint(match func {
                Func::SeqIndex => {
                    "the first position of v in an array is np.flatnonzero(x == v)[0]"
                }
                _ => "the number of elements equal to v is np.count_nonzero(x == v)",
            }));
    }
    let what = match func {
        Func::SeqIndex => Search::Index,
        _ => Search::Count,
    };
    search(t, what, (seq, ss), a.take(), span)
}

/// Whether `v` is a Python list or tuple (a transform's coordinates are a tuple), not an array.
fn is_python_sequence(t: &Translator, v: &Value) -> bool {
    match v {
        Value::List(..) | Value::Tuple(_) => true,
        Value::Array(arr) => t.is_coords(arr),
        _ => false,
    }
}

/// `v in seq`, a Python bool: [`search`] of a Python list or tuple; of a NumPy array, whether any
/// element `== v` (NumPy compares values only, through float64 where an int meets a float).
pub(super) fn contains(
    t: &mut Translator,
    (seq, ss): (Value, Span),
    (v, vs): (Value, Span),
    span: Span,
) -> Result<Value> {
    if is_python_sequence(t, &seq) {
        return search(t, Search::Contains, (seq, ss), (v, vs), span);
    }
    let arr = t.array_of(seq, ss)?;
    let (v, vt) = t.scalar(v, vs, "the left side of `in`")?;
    let any = any_equal(t, &arr, v, vt, span)?;
    Ok(Value::Scalar(
        t.with_prov(any, Ty::Bool, Prov::Py),
        Ty::Bool,
    ))
}

/// Whether any element of `arr` equals `v`, compared as doubles where either is one: one
/// reduction, which the row kernel's lanes compute.
fn any_equal(t: &mut Translator, arr: &ArrayVal, v: Expr, vt: Ty, span: Span) -> Result<Expr> {
    let ty = vt.max(arr.ty).max(Ty::I64);
    let v = t.stable(convert(v, vt, ty), ty);
    let equal = ArrayVal {
        elem: cmp(CmpOp::Eq, convert(arr.elem.clone(), arr.ty, ty), v),
        ty: Ty::Bool,
        ..arr.clone()
    };
    t.reduce(ReduceOp::Any, &equal, span, None)
}

/// Python's `in`, `.index()` and `.count()` on a list or a tuple test each item for *identity*
/// before equality, so a NaN is found where the very object is an item (`m in vals` with
/// `m = max(vals)`, `np.nan in [np.nan]`), and not where only an equal NaN is. Which objects are
/// the same is nothing a value here records; it matters only where the value searched (`v`, of
/// type `ty`) and some item are both NaN, and there this raises.
fn refuse_nan_identity(
    t: &mut Translator,
    arr: &ArrayVal,
    v: &Expr,
    ty: Ty,
    span: Span,
) -> Result<()> {
    if ty != Ty::F64 || arr.ty != Ty::F64 {
        return Ok(()); // an int or a bool is never NaN
    }
    let ((), on_nan) = t.nested(|t| {
        let nan_items = ArrayVal {
            elem: un(UnOp::IsNan, arr.elem.clone()),
            ty: Ty::Bool,
            ..arr.clone()
        };
        let any = t.reduce(ReduceOp::Any, &nan_items, span, None)?;
        t.check_plain(
            crate::lower::not(any),
            Exception::ValueError,
            "a NaN searched for in a list or tuple holding NaN: CPython finds it only if it is \
             the same object as an item, which ndjit does not track",
            span,
        );
        Ok(())
    })?;
    t.emit(Stmt::If(un(UnOp::IsNan, v.clone()), on_nan, vec![]));
    Ok(())
}

/// `v in seq`, `seq.index(v)` or `seq.count(v)` of a Python list or tuple: each item compared as
/// `item == v` is, with the item's own kind (a Python int exactly with a Python float, a NumPy
/// scalar through float64). Where identity would decide, a NaN, it raises
/// ([`refuse_nan_identity`]).
pub(super) fn search(
    t: &mut Translator,
    what: Search,
    (seq, ss): (Value, Span),
    (v, vs): (Value, Span),
    span: Span,
) -> Result<Value> {
    let tuple = !matches!(seq, Value::List(..));
    let (arr, kind) = sequence(t, seq, ss)?;
    let (v, vt) = t.scalar(v, vs, "the value searched for")?;
    let v = t.stable(v, vt);
    let n = t.stable(arr.len.clone(), Ty::I64);
    refuse_nan_identity(t, &arr, &v, vt.max(arr.ty), span)?;
    // Only a Python int meeting a Python float compares exactly; values of one type (a bool
    // widened to either), or a NumPy scalar on either side, compare as doubles or ints.
    let int_meets_float = matches!((arr.ty, vt), (Ty::I64, Ty::F64) | (Ty::F64, Ty::I64));
    let exact = int_meets_float && t.prov(&v) != Prov::Np && kind != ElemKind::NumPy;
    if what == Search::Contains && !exact {
        let any = any_equal(t, &arr, v, vt, span)?;
        return Ok(Value::Scalar(
            t.with_prov(any, Ty::Bool, Prov::Py),
            Ty::Bool,
        ));
    }
    if kind == ElemKind::Mixed {
        return Err(t.mixed_list(span, "comparing an element"));
    }
    let found = t.temp(Ty::I64);
    let start = if what == Search::Count { 0 } else { -1 };
    t.emit(Stmt::Assign(found, Expr::I64(start)));
    counted_loop(t, n, |t, i| {
        let item = Value::Scalar(t.list_item(&arr, kind, i.clone()), arr.ty);
        let eq = t.compare_one(ast::CmpOp::Eq, item, Value::Scalar(v.clone(), vt), span)?;
        let eq = t.truth(eq, span)?;
        t.emit(match what {
            Search::Count => Stmt::Assign(
                found,
                bin(BinOp::Add, Expr::Var(found), convert(eq, Ty::Bool, Ty::I64)),
            ),
            _ => Stmt::If(eq, vec![Stmt::Assign(found, i), Stmt::Break], vec![]),
        });
        Ok(())
    })?;
    let present = cmp(CmpOp::Ge, Expr::Var(found), Expr::I64(0));
    if what == Search::Contains {
        // `in` gives a Python bool, whatever it searched (`(v in t) % 0` raises).
        return Ok(Value::Scalar(
            t.with_prov(present, Ty::Bool, Prov::Py),
            Ty::Bool,
        ));
    }
    let missing = match what {
        Search::Index if tuple => Some("tuple.index(x): x not in tuple"),
        Search::Index => Some("list.index(x): x not in list"),
        Search::Remove => Some("list.remove(x): x not in list"),
        Search::Count | Search::Contains => None,
    };
    if let Some(message) = missing {
        t.check_plain(present, Exception::ValueError, message, span);
    }
    t.var_prov.insert(found, Prov::Py);
    Ok(Value::Scalar(Expr::Var(found), Ty::I64))
}
