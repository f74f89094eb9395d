//! Python's own `min()`, `max()` and `sum()`: CPython's left-to-right loops, each comparison or
//! `+` Python's or NumPy's by its operands (never NumPy's reductions, whose NaN rules and
//! summation order differ); and `divmod()`.

use super::{counted_loop, Args};
use crate::error::{ErrorKind, Exception, Result, Span};
use crate::ir::{BinOp, CmpOp, Expr, ReduceOp, Stmt, Ty};
use crate::lower::expr::{bin, cmp, convert};
use crate::lower::names::Func::{self, *};
use crate::lower::value::{ArrayVal, ElemKind, Value};
use crate::lower::{not, Translator};
use crate::syntax::ast;

/// Python's min()/max(): over one iterable, CPython's left-to-right comparison (so NaN handling
/// depends on position); over several numbers, the same rule pairwise.
pub(super) fn min_max(t: &mut Translator, base: Func, a: &mut Args) -> Result<Value> {
    let span = a.span;
    if a.pos.is_empty() {
        return Err(t.err(
            ErrorKind::Arity,
            span,
            format!("{base}() expected at least 1 argument, got 0"),
        ));
    }
    let op = if base == Min {
        BinOp::PyMin
    } else {
        BinOp::PyMax
    };
    let default = a.kw("default");
    if a.pos.len() == 1 {
        // The winner is one of the elements, so it is of their kind.
        let (v, s) = a.take();
        let (arr, kind) = crate::lower::lists::sequence(t, v, s)?;
        let Some((d, ds)) = default else {
            let (e, ty) = py_fold(t, op, &arr, span, base)?;
            let e = Value::Scalar(e, ty);
            return crate::lower::lists::result_kind(t, e, kind, s, "its minimum or maximum");
        };
        // `default` where the iterable is empty (a number: it may be the result); the fold,
        // whose empty case raises, only where it is not.
        let d = t.scalar(d, ds, &format!("the default of {base}()"))?;
        let len = t.stable(arr.len.clone(), Ty::I64);
        let (found, folded) = t.nested(|t| {
            let (e, ty) = py_fold(t, op, &arr, span, base)?;
            let e = Value::Scalar(e, ty);
            let e = crate::lower::lists::result_kind(t, e, kind, s, "its minimum or maximum")?;
            t.scalar(e, s, "its minimum or maximum")
        })?;
        let nonempty = cmp(CmpOp::Gt, len, Expr::I64(0));
        return Ok(t.choose(nonempty, (found, folded), (d, Vec::new()), span));
    }
    if let Some((_, ds)) = default {
        return Err(t.err(
            ErrorKind::Type,
            ds,
            format!("Cannot specify a default for {base}() with multiple positional arguments"),
        ));
    }
    let mut acc: Option<(Expr, Ty)> = None;
    for (v, s) in std::mem::take(&mut a.pos) {
        let (e, ty) = t.scalar(v, s, &format!("an argument of {base}()"))?;
        acc = Some(match acc {
            None => (e, ty),
            Some(best) => py_min_max_pair(t, op, best, (e, ty), span, base),
        });
    }
    Ok(acc.map(|(e, ty)| Value::Scalar(e, ty)).unwrap())
}

/// One step of CPython's `min(a, b, ...)`: `b` replaces the best so far when `b < best`
/// (`b > best` for `max`). The result *is* the chosen argument, so it keeps that argument's
/// provenance: `1.0 // max(0.0, x[0])` raises ZeroDivisionError when the Python float `0.0` wins,
/// and gives NumPy's inf when `x[0]` does. An int chosen beside a float becomes a float here,
/// which is exact only up to 2**53 (CPython keeps the int): past that, an error, never a rounded
/// int.
fn py_min_max_pair(
    t: &mut Translator,
    op: BinOp,
    (best, tb): (Expr, Ty),
    (e, te): (Expr, Ty),
    span: Span,
    base: Func,
) -> (Expr, Ty) {
    use crate::lower::provenance::Prov;
    let tt = t.joined_type(tb, te, span);
    let (pb, pe) = (t.prov(&best), t.prov(&e));
    let ints = t.joins_an_int(tt, (&best, tb), (&e, te));
    if pb == pe && tb == te && !ints {
        return (bin(op, best, e), tt);
    }
    let (best, e) = (t.stable(best, tb), t.stable(e, te));
    let (cb, ce) = (convert(best.clone(), tb, tt), convert(e.clone(), te, tt));
    // Python compares an int with a float exactly (and an int held as a float as the int).
    let later_wins = if op == BinOp::PyMin {
        ast::CmpOp::Lt
    } else {
        ast::CmpOp::Gt
    };
    let later = t.compare_one(
        later_wins,
        Value::Scalar(e.clone(), te),
        Value::Scalar(best.clone(), tb),
        span,
    );
    let later = match later {
        Ok(Value::Scalar(c, _)) => t.stable(c, Ty::Bool),
        _ => unreachable!("two numbers compare"),
    };
    let (int, int_ty, int_wins) = if tb == Ty::F64 {
        (e.clone(), te, later.clone())
    } else {
        (best.clone(), tb, not(later.clone()))
    };
    if tt == Ty::F64 && int_ty == Ty::I64 {
        let exact = crate::lower::numpy::exact_in_double(int);
        t.check_plain(
            bin(BinOp::Or, not(int_wins), exact),
            Exception::OverflowError,
            &format!(
                "{base}() chose an int that exceeds 2**53 over a float, past which ndjit cannot \
                 keep it exact (write float(...) around the int to compare as floats)"
            ),
            span,
        );
    }
    let r = Expr::Select(later.clone().boxed(), ce.boxed(), cb.boxed());
    let p = match (pb, pe) {
        (pb, pe) if pb == pe => pb,
        (pb, pe) => Prov::Dyn(Expr::Select(
            later.clone().boxed(),
            pe.flag().boxed(),
            pb.flag().boxed(),
        )),
    };
    if !ints {
        return (t.with_prov(r, tt, p), tt);
    }
    // The chosen argument is an int or a float: the result carries its flag.
    let holds = |e: &Expr, ty| t.holds_int(e, ty).unwrap_or(Expr::Bool(false));
    let flag = Expr::Select(
        later.boxed(),
        holds(&e, te).boxed(),
        holds(&best, tb).boxed(),
    );
    let r = t.with_prov(r, tt, p);
    (t.flagged(r, tt, flag), tt)
}

/// CPython's `min(iterable)`: `acc = x0; for v in rest: if v < acc: acc = v`.
fn py_fold(
    t: &mut Translator,
    op: BinOp,
    arr: &ArrayVal,
    span: Span,
    base: Func,
) -> Result<(Expr, Ty)> {
    let len = t.stable(arr.len.clone(), Ty::I64);
    t.check_plain(
        cmp(CmpOp::Gt, len.clone(), Expr::I64(0)),
        Exception::ValueError,
        &format!("{base}() arg is an empty sequence"),
        span,
    );
    if arr.ty == Ty::F64 {
        let red = if op == BinOp::PyMin {
            ReduceOp::PyMin
        } else {
            ReduceOp::PyMax
        };
        let e = t.reduce(
            red,
            arr,
            span,
            Some(&format!("{base}() arg is an empty sequence")),
        )?;
        return Ok((e, Ty::F64));
    }
    let ints = ArrayVal {
        elem: convert(arr.elem.clone(), arr.ty, Ty::I64),
        ty: Ty::I64,
        ..arr.clone()
    };
    // Integers have no NaN: CPython's loop, comparing them as integers (a comparison in f64
    // rounded those past 2**53: `min([2**60 + 1, 2**60 + 3])` gave 2**60).
    let later_wins = if op == BinOp::PyMin {
        CmpOp::Lt
    } else {
        CmpOp::Gt
    };
    let acc = t.temp(Ty::I64);
    t.emit(Stmt::Assign(acc, ints.at(Expr::I64(0)))); // the length was checked above
    counted_loop(t, len, |t, i| {
        let e = t.stable(ints.at(i), Ty::I64);
        t.emit(Stmt::If(
            cmp(later_wins, e.clone(), Expr::Var(acc)),
            vec![Stmt::Assign(acc, e)],
            vec![],
        ));
        Ok(())
    })?;
    // The winner is an element: a bool of bools (`max(b) + max(b)` of NumPy's is an or).
    Ok((convert(Expr::Var(acc), Ty::I64, arr.ty), arr.ty))
}

/// Python's builtin `sum(iterable, start=0)`: `start + e0 + e1 + ...` strictly left to right,
/// each `+` being Python's or NumPy's own by its operands (never NumPy's pairwise order).
pub(super) fn sum(t: &mut Translator, a: &mut Args) -> Result<Value> {
    use crate::lower::provenance::Prov;
    let span = a.span;
    a.arity(t, 1, 2)?;
    let (v, s) = a.take();
    let start = a.pos.pop().or_else(|| a.kw("start"));
    if let Value::Tuple(items) = v {
        // CPython 3.12+ adds Python floats with Neumaier's compensated summation, older versions
        // left to right: with two or more of them the result depends on the version, so refuse.
        let python_floats = items
            .iter()
            .filter(|it| matches!(it, Value::Scalar(e, Ty::F64) if t.prov(e) != Prov::Np))
            .count();
        if python_floats > 1 {
            return Err(t
                .err(
                    ErrorKind::Unsupported,
                    s,
                    "sum() of several Python floats depends on the Python version (3.12+ uses \
                     compensated summation)",
                )
                .hint("write np.sum([...]) or add the terms with +"));
        }
        let mut acc = match start {
            Some((st, _)) => st,
            None => Value::Scalar(Expr::I64(0), Ty::I64),
        };
        for it in items {
            acc = t.binary(ast::BinOp::Add, acc, it, span)?;
        }
        return Ok(acc);
    }
    let v = match v {
        // A transform's coordinates are a tuple of Python ints.
        Value::Array(arr) if t.is_coords(&arr) => Value::List(arr, ElemKind::Python),
        v => v,
    };
    let v = match v {
        Value::List(arr, kind) => match (kind, arr.ty) {
            (ElemKind::NumPy, _) => Value::Array(arr),
            (ElemKind::Mixed, _) => return Err(t.mixed_list(s, "its sum")),
            (ElemKind::Python, Ty::F64) => {
                return Err(t
                    .err(
                        ErrorKind::Unsupported,
                        s,
                        "sum() of Python floats depends on the Python version (3.12+ uses \
                         compensated summation)",
                    )
                    .hint("sum NumPy values (`sum(v for v in x)`), or write np.sum([...])"))
            }
            (ElemKind::Python, _) => {
                if let Some((_, ss)) = start {
                    return Err(t
                        .err(
                            ErrorKind::Unsupported,
                            ss,
                            "sum() of a list with a start value",
                        )
                        .hint("write start + sum(values)"));
                }
                return crate::lower::lists::sum_python_ints(t, &arr, span);
            }
        },
        v => v,
    };
    if let Value::Matrix(..) = v {
        // Iterating a 2-D array gives its rows, so Python's sum would be a row, not a number.
        return Err(t
            .err(
                ErrorKind::Unsupported,
                s,
                "sum() of a 2-D array (it adds the rows)",
            )
            .hint("write np.sum(m) for the total"));
    }
    // An array's elements are NumPy scalars: `0 + e0` is e0's type, and the sum goes on in order.
    let arr = t.array_of(v, s)?;
    // Python's start: the int 0 unless a float is given (`sum(..., 0.0)`).
    let int_start = !matches!(start, Some((Value::Scalar(_, Ty::F64), _)));
    if let Some((st, ss)) = start {
        // `start + e0 + ...` equals the plain sum only when start is the int 0 or +0.0.
        let zero = match &st {
            Value::Scalar(e, _) => crate::ir::fold::const_expr(e)
                .is_some_and(|c| c.ty() != Ty::Bool && c.f().to_bits() == 0),
            _ => false,
        };
        if !zero {
            return Err(t
                .err(
                    ErrorKind::Unsupported,
                    ss,
                    "sum() of an array with a start value",
                )
                .hint("write start + sum(x), if that order is what you mean"));
        }
    }
    let n = t.stable(arr.len.clone(), Ty::I64);
    let (op, ty) = if arr.ty == Ty::F64 {
        (ReduceOp::SumSeq, Ty::F64)
    } else {
        (ReduceOp::SumInt, Ty::I64)
    };
    let total = t.reduce(op, &arr, span, None)?;
    // An empty iterable leaves the start, the Python int 0; otherwise the result is NumPy's.
    if ty == Ty::F64 && int_start && t.refused_sums.contains(&span) {
        t.check_plain(
            cmp(CmpOp::Ne, n.clone(), Expr::I64(0)),
            Exception::TypeError,
            "sum() of an empty iterable is Python's int 0, and this function goes on to use it \
             where an int and ndjit's float 0.0 differ (a zero's sign, an integer NumPy result, \
             a method); write sum(..., 0.0) to start from a float",
            span,
        );
    }
    let empty = cmp(CmpOp::Eq, n, Expr::I64(0));
    Ok(Value::Scalar(t.with_prov(total, ty, Prov::Dyn(empty)), ty))
}

/// `divmod(a, b)`: the tuple `(a // b, a % b)`, which is what CPython's `int.__divmod__`,
/// `float.__divmod__` (the same `_float_div_mod` as `//` and `%`) and NumPy's `np.divmod` ufunc
/// (`npy_divmod`, as `floor_divide` and `remainder`) compute. `numpy` is `np.divmod`, which
/// takes Python numbers as NumPy scalars (`np.divmod(7, 0)` is `(0, 0)`, not an exception).
pub(super) fn divmod(t: &mut Translator, numpy: bool, a: &mut Args) -> Result<Value> {
    let span = a.span;
    a.arity(t, 2, 2)?;
    let (x, _) = a.take();
    let (y, _) = a.take();
    let (x, y) = match numpy {
        true => (t.as_numpy(x), t.as_numpy(y)),
        false => (x, y),
    };
    // Each operand is computed once, then read by both operators.
    let (x, y) = (t.stabilize(x), t.stabilize(y));
    let quotient = t.binary(ast::BinOp::FloorDiv, x.clone(), y.clone(), span)?;
    let remainder = t.binary(ast::BinOp::Mod, x, y, span)?;
    Ok(Value::Tuple(vec![quotient, remainder]))
}
