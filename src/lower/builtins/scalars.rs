//! Python's number builtins: `float()`, `int()` and `bool()` (and NumPy's scalar constructors),
//! `round()`, `pow()` and `.is_integer()`, with CPython's conversion errors.

use super::ufuncs::{round_decimals, rounded_ints_unsupported};
use super::Args;
use crate::error::{ErrorKind, Exception, Result, Span};
use crate::ir::{BinOp, CmpOp, Expr, Ty, UnOp};
use crate::lower::expr::{bin, cmp, convert, un};
use crate::lower::names::Func::{self, *};
use crate::lower::provenance::Prov;
use crate::lower::value::Value;
use crate::lower::{not, Translator};
use crate::syntax::ast;

/// float(x), int(x), bool(x) on numbers, and float('nan')-style literals.
pub(super) fn cast_call(t: &mut Translator, base: Func, a: &mut Args) -> Result<Value> {
    a.arity(t, 0, 1)?;
    if a.pos.is_empty() {
        return Ok(match base {
            Float => Value::Scalar(Expr::F64(0.0), Ty::F64),
            Int => Value::Scalar(Expr::I64(0), Ty::I64),
            _ => Value::Scalar(Expr::Bool(false), Ty::Bool),
        });
    }
    let (v, s) = a.take();
    if let Value::Str(text) = &v {
        let parsed = match text.trim().to_ascii_lowercase().as_str() {
            "nan" | "+nan" | "-nan" => Some(f64::NAN),
            "inf" | "+inf" | "infinity" | "+infinity" => Some(f64::INFINITY),
            "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
            other => other.parse::<f64>().ok(),
        };
        return match (base, parsed) {
            (Float, Some(x)) => Ok(Value::Scalar(Expr::F64(x), Ty::F64)),
            _ => Err(t
                .err(ErrorKind::Unsupported, s, "strings are not supported")
                .hint("float('nan') and float('inf') are; otherwise write the number")),
        };
    }
    let what = format!("{base}()'s argument");
    let (e, ty) = match v {
        Value::Array(arr) if base == Bool => {
            // NumPy's truth value of an array: that of its one element.
            let (len, n) = (arr.len.clone(), || arr.len.clone().boxed());
            let empty = "The truth value of an empty array is ambiguous. Use `array.size > 0` to \
                         check that an array is not empty.";
            let many = "The truth value of an array with more than one element is ambiguous. \
                        Use a.any() or a.all()";
            t.check_plain(
                cmp(CmpOp::Ne, len.clone(), Expr::I64(0)),
                Exception::ValueError,
                empty,
                s,
            );
            let one = Expr::Cmp(CmpOp::Le, n(), Expr::I64(1).boxed());
            t.check_plain(one, Exception::ValueError, many, s);
            (arr.at(Expr::I64(0)), arr.ty)
        }
        Value::Array(arr) => {
            // NumPy 2 converts 0-d arrays only (1-D ones of one element were deprecated in 1.25).
            let message = "only 0-dimensional arrays can be converted to Python scalars";
            t.check_plain(Expr::Bool(false), Exception::TypeError, message, s);
            (arr.at(Expr::I64(0)), arr.ty)
        }
        // A Counter's truth (and its list of pairs'): its data is not empty; a Python bool.
        c @ (Value::Counter(_) | Value::MostCommon(_)) if base == Bool => {
            let e = t.truth(c, s)?;
            let prov = crate::lower::provenance::Prov::Py;
            (t.with_prov(e, Ty::Bool, prov), Ty::Bool)
        }
        v => t.scalar(v, s, &what)?,
    };
    Ok(match base {
        Float => Value::Scalar(convert(e, ty, Ty::F64), Ty::F64),
        Bool => Value::Scalar(convert(e, ty, Ty::Bool), Ty::Bool),
        _ => {
            if ty == Ty::F64 {
                let x = t.stable(e, Ty::F64);
                int_checks(t, &x, s);
                Value::Scalar(Expr::Cast(Ty::I64, x.boxed()), Ty::I64)
            } else {
                Value::Scalar(convert(e, ty, Ty::I64), Ty::I64)
            }
        }
    })
}

/// Python's `round(x)` (an int) and `round(x, n)`.
pub(super) fn py_round(t: &mut Translator, a: &mut Args) -> Result<Value> {
    let span = a.span;
    a.arity(t, 1, 2)?;
    let (v, s) = a.take();
    let (x, tx) = t.scalar(v, s, "round()'s argument")?;
    if let Some((d, ds)) = a.pos.pop().or_else(|| a.kw("ndigits")) {
        let e = t.int(d, ds, "ndigits")?;
        let Some(k) = crate::ir::fold::const_expr(&e) else {
            return Err(t.err(ErrorKind::Unsupported, ds, "ndigits must be a constant"));
        };
        if tx != Ty::F64 && k.i() >= 0 && tx != Ty::Bool {
            return Ok(Value::Scalar(x, tx));
        }
        if tx != Ty::F64 {
            let refusal = rounded_ints_unsupported(t, "round", ds);
            return Ok(t.refuse_by_type(refusal, Value::Scalar(x, tx)));
        }
        return python_or_numpy_round(t, x, k.i(), ds);
    }
    if tx != Ty::F64 {
        if tx == Ty::Bool {
            numpy_lacks(t, &x, "numpy.bool", "__round__", span);
        }
        return Ok(Value::Scalar(convert(x, tx, Ty::I64), Ty::I64));
    }
    // round(float) is an int: NaN and infinity cannot be converted.
    let x = t.stable(x, Ty::F64);
    int_checks(t, &x, span);
    Ok(Value::Scalar(
        Expr::Cast(Ty::I64, un(UnOp::RoundEven, x).boxed()),
        Ty::I64,
    ))
}

/// `round(x, n)`: CPython's exact decimal rounding for a Python float, NumPy's for an
/// `np.float64` (its `__round__` is `np.round`); the result keeps the argument's kind.
fn python_or_numpy_round(t: &mut Translator, x: Expr, n: i64, ds: Span) -> Result<Value> {
    use crate::lower::provenance::Prov;
    let x = t.stable(x, Ty::F64);
    let prov = t.prov(&x);
    let numpy = round_decimals(t, x.clone(), n, ds)?;
    let r = match &prov {
        Prov::Np => numpy,
        _ if n.abs() > crate::lower::pyround::MAX_DIGITS => {
            return Err(t
                .err(
                    ErrorKind::Unsupported,
                    ds,
                    "round() of a Python float to more than 22 digits",
                )
                .hint("ndigits between -22 and 22 are supported"))
        }
        Prov::Py => t.python_round(x, n),
        Prov::Dyn(flag) => {
            let py = t.python_round(x, n);
            Expr::Select(flag.clone().boxed(), py.boxed(), numpy.boxed())
        }
    };
    Ok(Value::Scalar(t.with_prov(r, Ty::F64, prov), Ty::F64))
}

/// `pow(x, y)`: Python's `x ** y`.
pub(super) fn py_pow(t: &mut Translator, a: &mut Args) -> Result<Value> {
    let span = a.span;
    if a.pos.len() > 3 {
        a.arity(t, 2, 3)?;
    }
    let base = a.take_or_kw("base");
    let exp = a.take_or_kw("exp");
    // Python's third argument (`pow(b, e, m)` or `mod=m`) is modular exponentiation over
    // unbounded ints; an arity error would read as if Python had no such form. `None` is the
    // two-argument pow.
    if let Some((m, s)) = a.take_or_kw("mod") {
        if !matches!(m, Value::None) {
            return Err(t
                .err(
                    ErrorKind::Unsupported,
                    s,
                    "pow() with a modulus (three-argument pow) is not supported",
                )
                .hint("write `(b ** e) % m`: exact while `b ** e` fits in 64 bits, an OverflowError past that"));
        }
    }
    let (Some((x, _)), Some((y, _))) = (base, exp) else {
        return Err(t.err(
            ErrorKind::Arity,
            span,
            "pow() missing a required argument: 'base' and 'exp' (Python raises TypeError)",
        ));
    };
    a.done(t)?;
    t.binary(ast::BinOp::Pow, x, y, span)
}

/// `x.is_integer()` of a float: false for infinities and NaN, whose `x - floor(x)` is NaN (for
/// finite `x` it is exact, and zero exactly where `x` is an integer).
pub(super) fn is_integer(t: &mut Translator, a: &mut Args) -> Result<Value> {
    a.arity(t, 1, 1)?;
    let (v, s) = a.take();
    if !matches!(v, Value::Scalar(_, Ty::F64 | Ty::I64)) {
        // NumPy's bools have no such method (ints have it: NumPy's, and Python's from 3.12).
        return Err(t
            .err(
                ErrorKind::Type,
                s,
                format!("is_integer() of {} is not supported", v.describe()),
            )
            .hint("call it on a float, e.g. `float(v).is_integer()`"));
    }
    if let Value::Scalar(e, ty) = &v {
        // Python's int has the method from CPython 3.12 only (`AttributeError` before); NumPy's
        // integers have it in every supported NumPy.
        let only = "is_integer() of a Python int: CPython has it from 3.12 only (an \
                    AttributeError before)";
        match t.prov(e) {
            Prov::Py if *ty == Ty::I64 => {
                return Err(t
                    .err(ErrorKind::Unsupported, s, only)
                    .hint("call it on a float, e.g. `float(v).is_integer()`"))
            }
            // A Python int on some paths only: raised where it is one.
            Prov::Dyn(python) if *ty == Ty::I64 => {
                let message = format!("{only}: call it on a float, e.g. float(v).is_integer()");
                t.check_plain(not(python), Exception::ValueError, &message, s);
            }
            _ => {}
        }
        let flagged = t.int_flag(e).is_some();
        t.refuse_int_or_float(flagged, s, "the receiver of is_integer()");
    }
    let x = t.float(v, s, "the receiver")?;
    let x = t.stable(x, Ty::F64);
    // A Python bool, also of a NumPy float (`Call::lower` gives it that provenance).
    Ok(Value::Scalar(
        cmp(
            CmpOp::Eq,
            bin(BinOp::Sub, x.clone(), un(UnOp::Floor, x)),
            Expr::F64(0.0),
        ),
        Ty::Bool,
    ))
}

/// NumPy's integer and bool scalars define no `__trunc__` (and bools no `__round__`), so
/// `math.trunc(np.int64(3))` and `round(x[0] > 0)` raise TypeError in Python: a check that `x`
/// holds a Python number.
pub(super) fn numpy_lacks(t: &mut Translator, x: &Expr, class: &str, method: &str, span: Span) {
    let is_python = t.prov(x).flag();
    let message = format!("type {class} doesn't define {method} method");
    t.check_plain(is_python, Exception::TypeError, &message, span);
}

/// CPython's errors for converting a float to an int: NaN is a ValueError, infinity an OverflowError.
pub(crate) fn int_checks(t: &mut Translator, x: &Expr, span: Span) {
    t.check_plain(
        not(un(UnOp::IsNan, x.clone())),
        Exception::ValueError,
        "cannot convert float NaN to integer",
        span,
    );
    t.check_plain(
        not(un(UnOp::IsInf, x.clone())),
        Exception::OverflowError,
        "cannot convert float infinity to integer",
        span,
    );
    t.check_plain(
        fits_i64(x.clone()),
        Exception::OverflowError,
        crate::lower::pyint::TOO_BIG,
        span,
    );
}

/// Whether a float's integer part is in the i64 range (false for NaN).
pub(super) fn fits_i64(x: Expr) -> Expr {
    const LIMIT: f64 = 9223372036854775808.0; // 2**63
    bin(
        BinOp::And,
        cmp(CmpOp::Ge, x.clone(), Expr::F64(-LIMIT)),
        cmp(CmpOp::Lt, x, Expr::F64(LIMIT)),
    )
}
