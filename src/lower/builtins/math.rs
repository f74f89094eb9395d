//! Python's `math` module: scalars only, computed as CPython computes them, with its domain and
//! range errors.

use super::scalars::{fits_i64, int_checks, numpy_lacks};
use super::ufuncs::{apply_unary, binary_math, unary_math};
use super::Args;
use crate::error::{arity_message, ErrorKind, Exception, Result, Span};
use crate::ir::{BinOp, CmpOp, Expr, Ty, UnOp};
use crate::lower::expr::{bin, cmp, convert, un};
use crate::lower::names::{
    Builtin,
    Func::{self, *},
};
use crate::lower::value::Value;
use crate::lower::{not, Translator};
use crate::math::MathFn;

/// `math.<base>(...)`: scalars only, with CPython's errors (`math.sqrt(-1)` raises).
pub(super) fn call(t: &mut Translator, name: Builtin, a: &mut Args) -> Result<Value> {
    let (span, base) = (a.span, name.func);
    let mut xs = Vec::new();
    for (v, s) in std::mem::take(&mut a.pos) {
        if matches!(v, Value::Array(_)) {
            return Err(t
                .err(
                    ErrorKind::Type,
                    s,
                    format!("{name}() takes a number, not an array"),
                )
                .hint(format!("use np.{base}() for arrays")));
        }
        xs.push(t.scalar(v, s, "an argument")?);
    }
    let arity = match base {
        Arctan2 | Hypot | Power | CopySign | Fmod => 2..=2,
        Log => 1..=2,
        _ => 1..=1,
    };
    if base == Hypot && xs.len() != 2 {
        // Python's takes any number of values (one pass of its own algorithm over them all).
        return Err(t
            .err(
                ErrorKind::Unsupported,
                span,
                format!(
                    "math.hypot() of {} values is not supported, only of two",
                    xs.len()
                ),
            )
            .hint("np.linalg.norm([a, b, c]) is NumPy's norm of the values (rounded its way)"));
    }
    if !arity.contains(&xs.len()) {
        return Err(t.err(
            ErrorKind::Arity,
            span,
            arity_message(&name.to_string(), &arity.start().to_string(), "", xs.len()),
        ));
    }
    let fx: Vec<Expr> = xs
        .iter()
        .map(|(e, ty)| convert(e.clone(), *ty, Ty::F64))
        .collect::<Vec<_>>();
    let fx: Vec<Expr> = fx.into_iter().map(|e| t.stable(e, Ty::F64)).collect();
    let result = match base {
        IsNan => return Ok(Value::Scalar(un(UnOp::IsNan, fx[0].clone()), Ty::Bool)),
        IsInf => return Ok(Value::Scalar(un(UnOp::IsInf, fx[0].clone()), Ty::Bool)),
        IsFinite => return Ok(Value::Scalar(un(UnOp::IsFinite, fx[0].clone()), Ty::Bool)),
        Degrees => {
            return Ok(Value::Scalar(
                bin(
                    BinOp::Mul,
                    fx[0].clone(),
                    Expr::F64(180.0 / std::f64::consts::PI),
                ),
                Ty::F64,
            ))
        }
        Radians => {
            return Ok(Value::Scalar(
                bin(
                    BinOp::Mul,
                    fx[0].clone(),
                    Expr::F64(std::f64::consts::PI / 180.0),
                ),
                Ty::F64,
            ))
        }
        Floor | Ceil | Trunc => {
            if xs[0].1 != Ty::F64 {
                if base == Trunc {
                    let class = if xs[0].1 == Ty::Bool {
                        "numpy.bool"
                    } else {
                        "numpy.int64"
                    };
                    numpy_lacks(t, &xs[0].0, class, "__trunc__", span);
                }
                if xs[0].1 == Ty::I64 {
                    return Ok(Value::Scalar(
                        floor_of_int(t, &xs[0].0, &fx[0], span),
                        Ty::I64,
                    ));
                }
                return Ok(Value::Scalar(
                    convert(xs[0].0.clone(), xs[0].1, Ty::I64),
                    Ty::I64,
                ));
            }
            let op = match base {
                Floor => UnOp::Floor,
                Ceil => UnOp::Ceil,
                _ => UnOp::Trunc,
            };
            int_checks(t, &fx[0], span);
            return Ok(Value::Scalar(
                Expr::Cast(Ty::I64, un(op, fx[0].clone()).boxed()),
                Ty::I64,
            ));
        }
        Log if fx.len() == 2 => return Ok(log_base(t, &fx[0], &fx[1], span)),
        // CPython computes math.hypot itself (np.hypot is the C library's).
        Hypot => Expr::Call(MathFn::PyHypot, fx.clone()),
        _ => match (unary_math(base), binary_math(base)) {
            (Some(f), _) => apply_unary(fx[0].clone(), f),
            (_, Some(m)) => Expr::Call(m, fx.clone()),
            _ => {
                return Err(t.err(
                    ErrorKind::UnknownName,
                    span,
                    format!("{name} is not supported"),
                ))
            }
        },
    };
    let r = t.stable(result, Ty::F64);
    cpython_errors(t, base, &fx, &r, span);
    if base == CopySign {
        let nan = crate::lower::nan_signs::shows_nan_sign(&fx[0], &fx[1]);
        crate::lower::nan_signs::refuse_nan_sign(t, nan, fx[1].clone(), "math.copysign", span);
    }
    Ok(Value::Scalar(r, Ty::F64))
}

/// `math.log(x, base)` as CPython computes it: each logarithm with its own domain check (an
/// argument that is neither positive nor NaN is a domain error, `x` first), then a Python float
/// division, whose zero divisor (`base == 1`) raises `ZeroDivisionError` and whose NaN or infinite
/// quotient (`math.log(inf, inf)`) is no error.
fn log_base(t: &mut Translator, x: &Expr, base: &Expr, span: Span) -> Value {
    for v in [x, base] {
        let in_domain = bin(
            BinOp::Or,
            cmp(CmpOp::Gt, v.clone(), Expr::F64(0.0)),
            un(UnOp::IsNan, v.clone()),
        );
        t.check_plain(in_domain, Exception::ValueError, "math domain error", span);
    }
    let den = t.stable(Expr::Call(MathFn::Log, vec![base.clone()]), Ty::F64);
    t.check_plain(
        cmp(CmpOp::Ne, den.clone(), Expr::F64(0.0)),
        Exception::ZeroDivisionError,
        "float division by zero",
        span,
    );
    let num = Expr::Call(MathFn::Log, vec![x.clone()]);
    Value::Scalar(bin(BinOp::Div, num, den), Ty::F64)
}

/// CPython's errors for `math.<base>` giving `r` from `fx`: a NaN result from non-NaN input is a
/// domain error; an infinite result from finite input is a range error for the functions that
/// can overflow and a domain error otherwise.
fn cpython_errors(t: &mut Translator, base: Func, fx: &[Expr], r: &Expr, span: Span) {
    let any_nan = fx
        .iter()
        .map(|x| un(UnOp::IsNan, x.clone()))
        .reduce(|p, q| bin(BinOp::Or, p, q))
        .unwrap();
    let all_finite = fx
        .iter()
        .map(|x| un(UnOp::IsFinite, x.clone()))
        .reduce(|p, q| bin(BinOp::And, p, q))
        .unwrap();
    let bad_nan = bin(BinOp::And, un(UnOp::IsNan, r.clone()), not(any_nan));
    t.check_plain(
        not(bad_nan),
        Exception::ValueError,
        "math domain error",
        span,
    );
    if base != Fabs && base != CopySign && base != Hypot {
        let overflow = matches!(base, Exp | Exp2 | Expm1 | Cosh | Sinh | Power);
        let bad_inf = bin(BinOp::And, un(UnOp::IsInf, r.clone()), all_finite);
        // CPython's math.pow: an infinite result from a zero base (`0.0 ** -1.0`) is a domain
        // error, from any other finite base an overflow.
        let (domain_inf, range_inf) = if base == Power {
            let zero_base = cmp(CmpOp::Eq, fx[0].clone(), Expr::F64(0.0));
            (
                bin(BinOp::And, bad_inf.clone(), zero_base.clone()),
                bin(BinOp::And, bad_inf, not(zero_base)),
            )
        } else if overflow {
            (Expr::Bool(false), bad_inf)
        } else {
            (bad_inf, Expr::Bool(false))
        };
        for (bad, exception, msg) in [
            (domain_inf, Exception::ValueError, "math domain error"),
            (range_inf, Exception::OverflowError, "math range error"),
        ] {
            if bad != Expr::Bool(false) {
                t.check_plain(not(bad), exception, msg, span);
            }
        }
    }
}

/// `math.floor(n)` or `math.ceil(n)` of an int `n` (`f` its double): a Python int's own
/// `__floor__` is exact; a NumPy int has none, so CPython floors `float(n)`, rounded to a double
/// past 2**53 (`math.floor(np.int64(2**60 + 1))` is 2**60), an int again.
fn floor_of_int(t: &mut Translator, n: &Expr, f: &Expr, span: Span) -> Expr {
    let python = t.prov(n).flag();
    let python = t.stable(python, Ty::Bool);
    // The double of a NumPy int near 2**63 rounds up to 2**63, past 64 bits.
    t.check_plain(
        bin(BinOp::Or, python.clone(), fits_i64(f.clone())),
        Exception::OverflowError,
        crate::lower::pyint::TOO_BIG,
        span,
    );
    Expr::Select(
        python.boxed(),
        n.clone().boxed(),
        Expr::Cast(Ty::I64, f.clone().boxed()).boxed(),
    )
}
