//! NumPy's element-wise functions (ufuncs), and `abs`: each lowers one element, and
//! [`Translator::elementwise`] maps it over arrays, so a number and an array share one rule.

use super::Args;
use crate::error::{Error, ErrorKind, Exception, Result, Span};
use crate::ir::{BinOp, CmpOp, Expr, ReduceOp, Stmt, Ty, UnOp};
use crate::lower::expr::{bin, cmp, convert, un};
use crate::lower::names::Func::{self, *};
use crate::lower::nan_signs;
use crate::lower::numpy::zero_signs;
use crate::lower::provenance::Prov;
use crate::lower::value::{ArrayVal, Value};
use crate::lower::{not, Translator};
use crate::math::MathFn;
use crate::syntax::ast;

/// The element-wise function of one argument a function computes, if it is one.
pub(super) fn unary_math(func: Func) -> Option<(Option<MathFn>, Option<UnOp>)> {
    Some(match func {
        Sqrt => (None, Some(UnOp::Sqrt)),
        Floor => (None, Some(UnOp::Floor)),
        Ceil => (None, Some(UnOp::Ceil)),
        Trunc => (None, Some(UnOp::Trunc)),
        Fabs | Abs => (None, Some(UnOp::Abs)),
        Exp => (Some(MathFn::Exp), None),
        Exp2 => (Some(MathFn::Exp2), None),
        Expm1 => (Some(MathFn::Expm1), None),
        Log => (Some(MathFn::Log), None),
        Log2 => (Some(MathFn::Log2), None),
        Log10 => (Some(MathFn::Log10), None),
        Log1p => (Some(MathFn::Log1p), None),
        Sin => (Some(MathFn::Sin), None),
        Cos => (Some(MathFn::Cos), None),
        Tan => (Some(MathFn::Tan), None),
        Arcsin => (Some(MathFn::Asin), None),
        Arccos => (Some(MathFn::Acos), None),
        Arctan => (Some(MathFn::Atan), None),
        Sinh => (Some(MathFn::Sinh), None),
        Cosh => (Some(MathFn::Cosh), None),
        Tanh => (Some(MathFn::Tanh), None),
        Arcsinh => (Some(MathFn::Asinh), None),
        Arccosh => (Some(MathFn::Acosh), None),
        Arctanh => (Some(MathFn::Atanh), None),
        Cbrt => (Some(MathFn::Cbrt), None),
        _ => return None,
    })
}

/// The element-wise function of two arguments a function computes, if it is one.
pub(super) fn binary_math(func: Func) -> Option<MathFn> {
    Some(match func {
        Arctan2 => MathFn::Atan2,
        Hypot => MathFn::Hypot,
        Power => MathFn::Pow,
        CopySign => MathFn::CopySign,
        Fmod => MathFn::Fmod,
        _ => return None,
    })
}

/// Whether NumPy computes a function element by element, so that a list or tuple it is given is
/// the array `np.asarray` makes of it (`np.sqrt([a, b])`, `np.maximum([a, b], 0)`).
pub(super) fn is_elementwise(func: Func) -> bool {
    unary_math(func).is_some()
        || binary_math(func).is_some()
        || matches!(
            func,
            IsNan
                | IsInf
                | IsFinite
                | Rint
                | Sign
                | Square
                | Negative
                | Reciprocal
                | Degrees
                | Radians
                | LogicalNot
                | Round
                | Minimum
                | Maximum
                | Fmin
                | Fmax
                | Add
                | Subtract
                | Multiply
                | Divide
                | Remainder
                | FloorDivide
                | Equal
                | NotEqual
                | Less
                | LessEqual
                | Greater
                | GreaterEqual
                | LogicalAnd
                | LogicalOr
                | LogicalXor
                | Where
                | Isclose
                | Allclose
                | NanToNum
                | Clip
        )
}

pub(super) fn apply_unary(e: Expr, f: (Option<MathFn>, Option<UnOp>)) -> Expr {
    match f {
        (Some(m), _) => Expr::Call(m, vec![e]),
        (None, Some(op)) => un(op, e),
        _ => unreachable!(),
    }
}

/// NumPy's functions of one number (`np.sqrt`, `np.exp` ...) and `abs`.
pub(super) fn unary(
    t: &mut Translator,
    (base, numpy): (Func, bool),
    f: (Option<MathFn>, Option<UnOp>),
    a: &mut Args,
) -> Result<Value> {
    let span = a.span;
    a.arity(t, 1, 1)?;
    let (v, s) = a.take();
    // `np.abs(True)` is `np.True_`, where Python's `abs(True)` is 1.
    let v = if numpy { t.as_numpy(v) } else { v };
    if base == Abs {
        // abs keeps integers integral, and NumPy's bools bools.
        return t.elementwise(vec![v], s, &mut |t, ops, elementwise| {
            let (e, ty) = ops.into_iter().next().unwrap();
            if ty == Ty::Bool && (elementwise || t.prov(&e) != Prov::Py) {
                return Ok((e, ty));
            }
            if ty != Ty::F64 && !elementwise {
                // abs(-(2**63)) is past 64 bits for a Python int.
                return Ok((
                    t.int_unary(UnOp::Abs, convert(e, ty, Ty::I64), span),
                    Ty::I64,
                ));
            }
            // Python's abs of an int held as a float is an int (see int_or_float.rs).
            if let (false, Some(flag)) = (elementwise, t.int_flag(&e)) {
                return Ok((t.flagged(un(UnOp::Abs, e), Ty::F64, flag), Ty::F64));
            }
            let ty2 = ty.max(Ty::I64);
            Ok((un(UnOp::Abs, convert(e, ty, ty2)), ty2))
        });
    }
    t.elementwise(vec![v], s, &mut |t, ops, _| {
        let (e, ty) = ops.into_iter().next().unwrap();
        // NumPy's floor, ceil and trunc keep integers and bools as they are.
        if matches!(base, Floor | Ceil | Trunc) && ty != Ty::F64 {
            return Ok((e, ty));
        }
        if ty == Ty::Bool {
            return Ok(refuse_bools(t, base, s, (e, ty)));
        }
        // np.tanh and four others may not be the C library's (math::numpy_kernels).
        let f = (f.0.map(MathFn::numpy), f.1);
        Ok((apply_unary(convert(e, ty, Ty::F64), f), Ty::F64))
    })
}

/// NumPy's functions of two numbers (`np.arctan2`, `np.power`, `np.fmod` ...).
pub(super) fn binary(t: &mut Translator, base: Func, m: MathFn, a: &mut Args) -> Result<Value> {
    let span = a.span;
    a.arity(t, 2, 2)?;
    let (x, _) = a.take();
    let (y, _) = a.take();
    let one_exponent = matches!(y, Value::Scalar(..));
    // copysign's sign operand (one element of it, for arrays), for its NaN guard below.
    let mut sign: Option<(Expr, Expr)> = None;
    let result = t.elementwise(vec![x, y], span, &mut |t, ops, _| {
        let mut it = ops.into_iter();
        let ((x, tx), (y, ty)) = (it.next().unwrap(), it.next().unwrap());
        if tx == Ty::Bool || ty == Ty::Bool {
            return Ok(refuse_bools(t, base, span, (x, tx)));
        }
        if m == MathFn::Fmod && tx != Ty::F64 && ty != Ty::F64 {
            return Ok((int_fmod(t, x, y), Ty::I64));
        }
        if m == MathFn::Pow && (tx == Ty::F64 || ty == Ty::F64) {
            // NumPy's power loop, whose shortcuts hold for a scalar base too.
            return Ok((t.numpy_power(x, tx, y, ty, one_exponent), Ty::F64));
        }
        if m == MathFn::Pow {
            // np.power of ints is NumPy's integer power, wrapping at 64 bits (whatever kind of
            // number the exponent is: NumPy's scalars and Python's alike).
            return Ok(match crate::ir::fold::const_expr(&y).map(|k| k.i()) {
                Some(k) if k >= 0 => {
                    let x = convert(x, tx, Ty::I64);
                    (t.int_power(x, k as u64, Prov::Np, span)?, Ty::I64)
                }
                _ => {
                    let refusal = t.numpy_int_power_unsupported(span);
                    t.refuse_by_type(refusal, (Expr::I64(0), Ty::I64))
                }
            });
        }
        let (x, y) = (convert(x, tx, Ty::F64), convert(y, ty, Ty::F64));
        if m == MathFn::CopySign {
            sign = Some((x.clone(), y.clone()));
        }
        Ok((Expr::Call(m, vec![x, y]), Ty::F64))
    })?;
    if let Some((x, y)) = sign {
        let shows = nan_signs::shows_nan_sign(&x, &y);
        let nan = match &result {
            Value::Array(r) | Value::Matrix(r, _) => {
                let probe = ArrayVal {
                    elem: shows,
                    ty: Ty::Bool,
                    ..r.clone()
                };
                t.reduce(ReduceOp::Any, &probe, span, None)?
            }
            _ => shows,
        };
        nan_signs::refuse_nan_sign(t, nan, y, "np.copysign", span);
    }
    Ok(result)
}

/// `np.isnan`, `np.isinf` and `np.isfinite`.
pub(super) fn classify(t: &mut Translator, base: Func, a: &mut Args) -> Result<Value> {
    a.arity(t, 1, 1)?;
    let (v, s) = a.take();
    let op = match base {
        IsNan => UnOp::IsNan,
        IsInf => UnOp::IsInf,
        _ => UnOp::IsFinite,
    };
    t.elementwise(vec![v], s, &mut |_, ops, _| {
        let (e, ty) = ops.into_iter().next().unwrap();
        Ok((un(op, convert(e, ty, Ty::F64)), Ty::Bool))
    })
}

/// `np.rint`: unlike `np.round`, doubles for integers too.
pub(super) fn rint(t: &mut Translator, a: &mut Args) -> Result<Value> {
    numpy_unary(t, Rint, a, false, &mut |_, e, ty| {
        Ok((un(UnOp::RoundEven, convert(e, ty, Ty::F64)), Ty::F64))
    })
}

/// `np.sign`: -1.0, 0.0 or 1.0, and NaN for NaN.
pub(super) fn sign(t: &mut Translator, a: &mut Args) -> Result<Value> {
    numpy_unary(t, Sign, a, false, &mut |t, e, ty| {
        if ty == Ty::I64 {
            // NumPy's sign of an int is an int64.
            let x = t.stable(e, Ty::I64);
            let (pos, neg) = (
                cmp(CmpOp::Gt, x.clone(), Expr::I64(0)),
                cmp(CmpOp::Lt, x, Expr::I64(0)),
            );
            let inner = Expr::Select(pos.boxed(), Expr::I64(1).boxed(), Expr::I64(0).boxed());
            return Ok((
                Expr::Select(neg.boxed(), Expr::I64(-1).boxed(), inner.boxed()),
                Ty::I64,
            ));
        }
        let x = t.stable(convert(e, ty, Ty::F64), Ty::F64);
        let pos = cmp(CmpOp::Gt, x.clone(), Expr::F64(0.0));
        let neg = cmp(CmpOp::Lt, x.clone(), Expr::F64(0.0));
        let inner = Expr::Select(
            neg.boxed(),
            Expr::F64(-1.0).boxed(),
            Expr::Select(
                pos.boxed(),
                Expr::F64(1.0).boxed(),
                bin(BinOp::Add, x.clone(), Expr::F64(0.0)).boxed(),
            )
            .boxed(),
        );
        // NaN stays NaN; both zeros give NumPy's 0.0 (`-0.0 + 0.0` is `0.0`).
        Ok((inner, Ty::F64))
    })
}

/// `np.square`, `np.negative`, `np.reciprocal`, `np.degrees`, `np.radians` and
/// `np.logical_not`.
pub(super) fn simple_unary(t: &mut Translator, base: Func, a: &mut Args) -> Result<Value> {
    numpy_unary(t, base, a, base == LogicalNot, &mut |t, e, ty| {
        Ok(match base {
            Reciprocal if ty == Ty::I64 => (int_reciprocal(t, e), Ty::I64),
            Square => {
                let ty2 = ty.max(Ty::I64);
                let x = t.stable(convert(e, ty, ty2), ty2);
                (bin(BinOp::Mul, x.clone(), x), ty2)
            }
            Negative => {
                let ty2 = ty.max(Ty::I64);
                (un(UnOp::Neg, convert(e, ty, ty2)), ty2)
            }
            Reciprocal => (
                bin(BinOp::Div, Expr::F64(1.0), convert(e, ty, Ty::F64)),
                Ty::F64,
            ),
            Degrees => (
                bin(
                    BinOp::Mul,
                    convert(e, ty, Ty::F64),
                    Expr::F64(180.0 / std::f64::consts::PI),
                ),
                Ty::F64,
            ),
            Radians => (
                bin(
                    BinOp::Mul,
                    convert(e, ty, Ty::F64),
                    Expr::F64(std::f64::consts::PI / 180.0),
                ),
                Ty::F64,
            ),
            _ => (not(convert(e, ty, Ty::Bool)), Ty::Bool),
        })
    })
}

/// `np.round(x, decimals)`: ints kept as they are, or refused to tens and beyond.
pub(super) fn np_round(t: &mut Translator, a: &mut Args) -> Result<Value> {
    a.arity(t, 1, 2)?;
    let (v, s) = a.take();
    let decimals = match a.pos.pop().or_else(|| a.kw("decimals")) {
        Some((d, ds)) => {
            let e = t.int(d, ds, "decimals")?;
            match crate::ir::fold::const_expr(&e) {
                Some(k) => k.i(),
                None => {
                    return Err(t.err(ErrorKind::Unsupported, ds, "decimals must be a constant"))
                }
            }
        }
        None => 0,
    };
    t.elementwise(vec![v], s, &mut |t, ops, _| {
        let (e, ty) = ops.into_iter().next().unwrap();
        if ty == Ty::Bool {
            return Ok(refuse_bools(t, Round, s, (e, ty)));
        }
        if ty != Ty::F64 && decimals == 0 {
            return Ok((e, ty));
        }
        if ty != Ty::F64 {
            let refusal = rounded_ints_unsupported(t, "np.round", s);
            return Ok(t.refuse_by_type(refusal, (e, ty)));
        }
        Ok((
            round_decimals(t, convert(e, ty, Ty::F64), decimals, s)?,
            Ty::F64,
        ))
    })
}

/// np.round(x, decimals): NumPy multiplies by 10**d, rounds half to even, and divides back.
pub(super) fn round_decimals(t: &Translator, x: Expr, decimals: i64, ds: Span) -> Result<Expr> {
    if decimals == 0 {
        return Ok(un(UnOp::RoundEven, x));
    }
    // NumPy scales by `10**decimals`; past 10**22 that power is not a double, and how NumPy
    // rounds it is not modelled here.
    if decimals.abs() > 22 {
        return Err(t
            .err(
                ErrorKind::Unsupported,
                ds,
                "rounding to more than 22 decimal places either side of the point",
            )
            .hint("decimals between -22 and 22"));
    }
    Ok(if decimals > 0 {
        let s = 10f64.powi(decimals as i32);
        bin(
            BinOp::Div,
            un(UnOp::RoundEven, bin(BinOp::Mul, x, Expr::F64(s))),
            Expr::F64(s),
        )
    } else {
        let s = 10f64.powi(-decimals as i32);
        bin(
            BinOp::Mul,
            un(UnOp::RoundEven, bin(BinOp::Div, x, Expr::F64(s))),
            Expr::F64(s),
        )
    })
}

/// Integers rounded to tens or more (`round(n, -1)`, `np.round(i, -2)`), and bools rounded:
/// Python and NumPy round integers exactly, half to even, in integers; not modelled.
pub(super) fn rounded_ints_unsupported(t: &Translator, what: &str, span: Span) -> Error {
    t.err(
        ErrorKind::Unsupported,
        span,
        format!(
            "{what}() of an integer or bool to a negative number of digits, or of a bool to digits"
        ),
    )
    .hint("round a float: float(n), or n.astype(float) for an array")
}

/// NumPy's functions of two arrays or numbers: the arithmetic ones (as the operators), the
/// extremes (`minimum`/`maximum` and `fmin`/`fmax`, with their NaN and zero-sign rules) and the
/// logical ones.
pub(super) fn pairwise(t: &mut Translator, base: Func, a: &mut Args) -> Result<Value> {
    let span = a.span;
    a.arity(t, 2, 2)?;
    let (x, _) = a.take();
    let (y, _) = a.take();
    let (x, y) = (t.as_numpy(x), t.as_numpy(y));
    // Two bools: NumPy's sum is a logical or, its product a logical and. (`binary` refuses
    // them as scalars, where it cannot always tell a NumPy bool from Python's; these are
    // NumPy's.)
    if let (Value::Scalar(p, Ty::Bool), Value::Scalar(q, Ty::Bool), Add | Multiply) = (&x, &y, base)
    {
        let o = if base == Add { BinOp::Or } else { BinOp::And };
        return Ok(Value::Scalar(bin(o, p.clone(), q.clone()), Ty::Bool));
    }
    let op = match base {
        Add => Some(ast::BinOp::Add),
        Subtract => Some(ast::BinOp::Sub),
        Multiply => Some(ast::BinOp::Mul),
        Divide => Some(ast::BinOp::Div),
        Remainder => Some(ast::BinOp::Mod),
        FloorDivide => Some(ast::BinOp::FloorDiv),
        _ => None,
    };
    if let Some(op) = op {
        return t.binary(op, x, y, span);
    }
    // NumPy's comparisons are the operators' on NumPy values, and give NumPy bools.
    let compared = match base {
        Equal => Some(ast::CmpOp::Eq),
        NotEqual => Some(ast::CmpOp::Ne),
        Less => Some(ast::CmpOp::Lt),
        LessEqual => Some(ast::CmpOp::Le),
        Greater => Some(ast::CmpOp::Gt),
        GreaterEqual => Some(ast::CmpOp::Ge),
        _ => None,
    };
    if let Some(op) = compared {
        // NumPy's own string comparisons (trailing NULs ignored, no loop for a string and a
        // number) are not Python's.
        if matches!(x, Value::Str(_)) || matches!(y, Value::Str(_)) {
            return Err(t
                .err(
                    ErrorKind::Unsupported,
                    span,
                    format!("np.{base}() of strings is not supported"),
                )
                .hint("compare Python strings with the operators: a == b, a < b"));
        }
        let r = t.compare_one(op, x, y, span)?;
        return Ok(t.as_numpy(r));
    }
    // The operands of an fmin/fmax of arrays, element by element, for its guard.
    let mut fm_operands: Option<(Expr, Expr)> = None;
    let result = t.elementwise(vec![x, y], span, &mut |t, ops, in_array| {
        let mut it = ops.into_iter();
        let ((x, tx), (y, ty)) = (it.next().unwrap(), it.next().unwrap());
        if matches!(base, LogicalAnd | LogicalOr | LogicalXor) {
            let o = match base {
                LogicalAnd => BinOp::And,
                LogicalOr => BinOp::Or,
                _ => BinOp::Xor,
            };
            return Ok((
                bin(o, convert(x, tx, Ty::Bool), convert(y, ty, Ty::Bool)),
                Ty::Bool,
            ));
        }
        if tx == Ty::Bool && ty == Ty::Bool {
            // NumPy's extremes of two bools are bools (`-np.maximum(a, b)` raises, the sum of
            // two is an or): the smaller is an and, the larger an or.
            let o = match base {
                Minimum | Fmin => BinOp::And,
                _ => BinOp::Or,
            };
            return Ok((bin(o, x, y), Ty::Bool));
        }
        let tt = tx.max(ty).max(Ty::I64);
        let (x, y) = (convert(x, tx, tt), convert(y, ty, tt));
        Ok(match base {
            Minimum | Maximum if tt == Ty::F64 => (numpy_extreme(t, base == Maximum, x, y), tt),
            Fmin | Fmax if tt == Ty::F64 && !in_array => (c_extreme(t, base == Fmax, x, y), tt),
            Minimum => (bin(BinOp::Min, x, y), tt),
            Maximum => (bin(BinOp::Max, x, y), tt),
            _ if tt != Ty::F64 => (
                bin(if base == Fmin { BinOp::Min } else { BinOp::Max }, x, y),
                tt,
            ),
            _ => {
                // fmin/fmax of arrays ignore a NaN operand: pick the other one. (Which
                // of two equal zeros NumPy's SIMD loops keep depends on the lane: the
                // guard below refuses them.)
                let (x, y) = (t.stable(x, tt), t.stable(y, tt));
                fm_operands = Some((x.clone(), y.clone()));
                let m = bin(
                    if base == Fmin { BinOp::Min } else { BinOp::Max },
                    x.clone(),
                    y.clone(),
                );
                let xn = un(UnOp::IsNan, x.clone());
                let yn = un(UnOp::IsNan, y.clone());
                (
                    Expr::Select(
                        xn.boxed(),
                        y.boxed(),
                        Expr::Select(yn.boxed(), x.boxed(), m.boxed()).boxed(),
                    ),
                    tt,
                )
            }
        })
    })?;
    if let (Some((x, y)), Value::Array(r) | Value::Matrix(r, _)) = (fm_operands, &result) {
        let name = format!("np.{base}");
        zero_signs::guard_pairs(t, r, (x, y), &name, span)?;
    }
    Ok(result)
}

/// `np.where(cond, x, y)`, element by element.
pub(super) fn np_where(t: &mut Translator, a: &mut Args) -> Result<Value> {
    let span = a.span;
    if a.pos.len() != 3 {
        return Err(t
            .err(
                ErrorKind::Arity,
                span,
                "np.where() needs three arguments in a filter",
            )
            .hint("np.where(cond, a, b), or np.where(cond) for the indices where cond holds"));
    }
    let (c, _) = a.take();
    let (x, _) = a.take();
    let (y, _) = a.take();
    let v = t.elementwise(vec![c, x, y], span, &mut |_, ops, _| {
        let mut it = ops.into_iter();
        let ((c, tc), (x, tx), (y, ty)) =
            (it.next().unwrap(), it.next().unwrap(), it.next().unwrap());
        let tt = tx.max(ty);
        Ok((
            Expr::Select(
                convert(c, tc, Ty::Bool).boxed(),
                convert(x, tx, tt).boxed(),
                convert(y, ty, tt).boxed(),
            ),
            tt,
        ))
    })?;
    // Of three scalars NumPy's result is a 0-d array, computed here as the NumPy scalar it
    // equals: refused where a later use tells the two apart (`zero_d.rs`).
    if matches!(v, Value::Scalar(..)) && t.differing_wheres.contains(&span) {
        let refusal = t
            .err(
                ErrorKind::Unsupported,
                span,
                "np.where() of three numbers is a 0-d array, and this filter takes it where an \
                 array differs from a number (round(), math.trunc(), `+=` in place, a method, a \
                 container, or a lambda; through names, Python's max/min and helpers)",
            )
            .hint("write `a if cond else b`, or convert it first: float(np.where(cond, a, b))");
        return Ok(t.refuse_by_type(refusal, v));
    }
    Ok(v)
}

/// How `clip` was called: NumPy's function and the array method take their bounds differently.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum ClipForm {
    /// `np.clip(a, a_min, a_max, *, min, max)`: `a_min` and `a_max` both or neither, and then
    /// the keywords `min` and `max`.
    Function,
    /// `x.clip(min=None, max=None)`.
    Method,
}

/// The bounds of a `clip` call as NumPy takes them, `None` where absent (a missing bound is
/// None, and with both None the call is `np.positive(x)`).
fn clip_bounds(t: &Translator, a: &mut Args, form: ClipForm) -> Result<(Value, Value)> {
    let span = a.span;
    let bound = |a: &mut Args, name: &str| match a.pos.is_empty() {
        true => a.kw(name).map(|(v, _)| v),
        false => Some(a.take().0),
    };
    let (lo, hi) = match form {
        ClipForm::Method => (bound(a, "min"), bound(a, "max")),
        ClipForm::Function => {
            let (lo, hi) = (bound(a, "a_min"), bound(a, "a_max"));
            let (min, max) = (a.kw("min"), a.kw("max"));
            let missing = |arg: &str| {
                t.err(
                    ErrorKind::Arity,
                    span,
                    format!("clip() missing 1 required positional argument: '{arg}' (NumPy raises TypeError)"),
                )
                .hint("give both bounds, `np.clip(x, lo, None)` for one, or name them: np.clip(x, min=lo)")
            };
            match (lo, hi) {
                (None, None) => (min.map(|m| m.0), max.map(|m| m.0)),
                (Some(_), None) => return Err(missing("a_max")),
                (None, Some(_)) => return Err(missing("a_min")),
                (Some(lo), Some(hi)) => {
                    if let Some((_, s)) = min.or(max) {
                        return Err(t.err(
                            ErrorKind::Arity,
                            s,
                            "passing `min` or `max` keyword argument when `a_min` and `a_max` are \
                             provided is forbidden (NumPy raises ValueError)",
                        ));
                    }
                    (Some(lo), Some(hi))
                }
            }
        }
    };
    Ok((lo.unwrap_or(Value::None), hi.unwrap_or(Value::None)))
}

/// `np.clip(x, lo, hi)` and `x.clip(lo, hi)`, either bound possibly None.
pub(super) fn clip(t: &mut Translator, a: &mut Args, form: ClipForm) -> Result<Value> {
    let span = a.span;
    a.arity(t, 1, 3)?;
    let (x, _) = a.take();
    let (lo, hi) = clip_bounds(t, a, form)?;
    let mut vals = vec![x];
    let (has_lo, has_hi) = (!matches!(lo, Value::None), !matches!(hi, Value::None));
    // With one bound, NumPy's `_clip` calls `np.maximum(x, lo)` or `np.minimum(x, hi)`, which
    // keep the bound of two equal zeros. With both, its clip loop keeps `x` on its path for two
    // scalar bounds (stride 0: numbers, or one-element arrays broadcast over more), and its
    // general loop, `min(max(x, lo), hi)`, keeps the bound: chosen at run time by the lengths.
    let mut bound_lens = Vec::new();
    for b in [&lo, &hi] {
        if let Value::Array(a) | Value::Matrix(a, _) | Value::List(a, _) = b {
            bound_lens.push(a.len.clone());
        } else if let Value::Tuple(items) = b {
            bound_lens.push(Expr::I64(items.len() as i64));
        }
    }
    let keeps_x = (has_lo && has_hi && !bound_lens.is_empty()).then(|| t.temp(Ty::Bool));
    if has_lo {
        vals.push(lo);
    }
    if has_hi {
        vals.push(hi);
    }
    let v = t.elementwise(vals, span, &mut |t, ops, _| {
        let mut it = ops.iter().map(|o| o.1);
        let tx = it.next().unwrap();
        if !has_lo && !has_hi && tx == Ty::Bool {
            return Err(t.err(
                ErrorKind::Type,
                span,
                "clip() without bounds is np.positive(x), which NumPy does not define for booleans",
            ));
        }
        // Without bounds the value itself, in its own type (NumPy's `positive`). Bools clipped
        // by bools stay bools, as NumPy's extremes of two bools do (`+ True` is then an or).
        let tt = match has_lo || has_hi {
            true => match it.fold(tx, Ty::max) {
                Ty::Bool => Ty::Bool,
                ty => ty.max(Ty::I64),
            },
            false => tx,
        };
        let mut it = ops.into_iter();
        let (x, tx) = it.next().unwrap();
        let mut e = convert(x, tx, tt);
        let one_sided = has_lo != has_hi && tt == Ty::F64;
        let bound = |t: &mut Translator, e: Expr, upper: bool, (b, tb): (Expr, Ty)| {
            let b = convert(b, tb, tt);
            match (one_sided, keeps_x) {
                (true, _) => numpy_extreme(t, !upper, e, b),
                (false, Some(flag)) if tt == Ty::F64 => {
                    let (e, b) = (t.stable(e, Ty::F64), t.stable(b, Ty::F64));
                    let general = numpy_extreme(t, !upper, e.clone(), b.clone());
                    let scalar = clamp(t, tt, upper, e, b);
                    Expr::Select(Expr::Var(flag).boxed(), scalar.boxed(), general.boxed())
                }
                (false, _) => clamp(t, tt, upper, e, b),
            }
        };
        if has_lo {
            e = bound(t, e, false, it.next().unwrap());
        }
        if has_hi {
            e = bound(t, e, true, it.next().unwrap());
        }
        Ok((e, tt))
    })?;
    // Integers and bools have no zeros to tell apart: only a float result takes the guard.
    let float_array = match &v {
        Value::Array(r) | Value::Matrix(r, _) if r.ty == Ty::F64 => Some(r),
        _ => None,
    };
    if let (Some(flag), Some(r)) = (keeps_x, float_array) {
        // The elements are computed where the result is read, after this.
        let scalar_path = bound_lens
            .into_iter()
            .map(|l| cmp(CmpOp::Eq, l, Expr::I64(1)))
            .fold(cmp(CmpOp::Gt, r.len.clone(), Expr::I64(1)), |a, b| {
                bin(BinOp::And, a, b)
            });
        t.emit(Stmt::Assign(flag, scalar_path));
        // Of one value, which loop NumPy runs depends on whether its iterator broadcast the
        // operands (`np.clip(x1, np.zeros(1), 5.0)` keeps the bound, `np.clip(x1,
        // np.zeros((1, 1)), 5.0)` the value): not followed.
        t.check_plain(
            cmp(CmpOp::Ne, r.len.clone(), Expr::I64(1)),
            Exception::ValueError,
            "np.clip() of one value with array bounds: which of two equal zeros NumPy keeps \
             depends on how it broadcasts them; pass the bounds as numbers",
            span,
        );
    }
    Ok(v)
}

/// Maps one element of a given type to its result and the result's type.
type ElementFn<'f> = dyn FnMut(&mut Translator, Expr, Ty) -> Result<(Expr, Ty)> + 'f;

/// A NumPy function of one array or number, element by element: `f` maps each element and its
/// type. Bools are refused first where NumPy's result for them is no double or int64
/// ([`refuse_bools`]).
fn numpy_unary(
    t: &mut Translator,
    base: Func,
    a: &mut Args,
    bools: bool,
    f: &mut ElementFn,
) -> Result<Value> {
    a.arity(t, 1, 1)?;
    let (v, s) = a.take();
    t.elementwise(vec![v], s, &mut |t, ops, _| {
        let (e, ty) = ops.into_iter().next().unwrap();
        if ty == Ty::Bool && !bools {
            return Ok(refuse_bools(t, base, s, (e, ty)));
        }
        f(t, e, ty)
    })
}

/// A NumPy function of bools whose NumPy result is not a double or an int64: float16 for the
/// math functions (`np.sqrt(x > 0)`), int8 for `np.square`, `np.reciprocal` and `np.fmod`, or a
/// TypeError (`np.negative`, `np.sign`). ndjit computes in 64 bits, so it refuses them.
fn refuse_bools(t: &mut Translator, f: Func, span: Span, placeholder: (Expr, Ty)) -> (Expr, Ty) {
    let refusal = t
        .err(
            ErrorKind::Unsupported,
            span,
            format!("np.{f}() of bools (NumPy computes it in float16 or int8, or refuses it)"),
        )
        .hint(format!(
            "convert first: np.{f}(b.astype(float)), or b.astype(int)"
        ));
    t.refuse_by_type(refusal, placeholder)
}

/// NumPy's `fmod` of int64: the remainder of truncating division, with the dividend's sign, and
/// 0 for a zero divisor (with a warning).
fn int_fmod(t: &mut Translator, x: Expr, y: Expr) -> Expr {
    let (x, y) = (t.stable(x, Ty::I64), t.stable(y, Ty::I64));
    let zero = cmp(CmpOp::Eq, y.clone(), Expr::I64(0));
    let safe = Expr::Select(
        zero.clone().boxed(),
        Expr::I64(1).boxed(),
        y.clone().boxed(),
    );
    // The IR's `Mod` floors (the divisor's sign); truncation differs where the signs differ.
    let r = t.stable(bin(BinOp::Mod, x.clone(), safe.clone()), Ty::I64);
    let signs_differ = cmp(
        CmpOp::Ne,
        cmp(CmpOp::Lt, r.clone(), Expr::I64(0)),
        cmp(CmpOp::Lt, x, Expr::I64(0)),
    );
    let fix = bin(
        BinOp::And,
        cmp(CmpOp::Ne, r.clone(), Expr::I64(0)),
        signs_differ,
    );
    let truncated = Expr::Select(
        fix.boxed(),
        bin(BinOp::Sub, r.clone(), safe).boxed(),
        r.boxed(),
    );
    Expr::Select(zero.boxed(), Expr::I64(0).boxed(), truncated.boxed())
}

/// NumPy's `reciprocal` of an int64: `1 // x` truncated, so 1 and -1 give themselves, other
/// values 0, and 0 gives `-(2**63)` (x86's result of the division NumPy attempts).
fn int_reciprocal(t: &mut Translator, x: Expr) -> Expr {
    let x = t.stable(x, Ty::I64);
    let unit = bin(
        BinOp::Or,
        cmp(CmpOp::Eq, x.clone(), Expr::I64(1)),
        cmp(CmpOp::Eq, x.clone(), Expr::I64(-1)),
    );
    let zero = cmp(CmpOp::Eq, x.clone(), Expr::I64(0));
    let rest = Expr::Select(
        zero.boxed(),
        Expr::I64(i64::MIN).boxed(),
        Expr::I64(0).boxed(),
    );
    Expr::Select(unit.boxed(), x.boxed(), rest.boxed())
}

/// NumPy's `maximum` (`max`) or `minimum` of two doubles: NaN if either is (the first's if both
/// are), else the second of two equal values, so `np.maximum(0.0, -0.0)` is `-0.0`. NumPy's loops
/// keep the second operand of equal values, scalar and SIMD alike (`maxpd` does), at every
/// length (`python/tests/test_zero_signs.py`).
fn numpy_extreme(t: &mut Translator, max: bool, x: Expr, y: Expr) -> Expr {
    let op = if max { CmpOp::Gt } else { CmpOp::Lt };
    pick(t, op, x, y, true).2
}

/// NumPy's `fmax` (`max`) or `fmin` of two scalars, the C library's: a NaN operand gives the
/// other, and of two equal values the first, so `np.fmax(-0.0, 0.0)` is `-0.0`.
fn c_extreme(t: &mut Translator, max: bool, x: Expr, y: Expr) -> Expr {
    let op = if max { CmpOp::Ge } else { CmpOp::Le };
    let (x, y, picked) = pick(t, op, x, y, false);
    Expr::Select(un(UnOp::IsNan, x).boxed(), y.boxed(), picked.boxed())
}

/// `np.clip`'s bound: `x` past `bound` (above it for `upper`) becomes `bound`, a NaN bound
/// included, and `x` stays where they are equal, so `np.clip(0.0, -0.0, 1.0)` is `0.0`.
/// Integers have no signed zero: their minimum or maximum; of bools, an and or an or.
fn clamp(t: &mut Translator, ty: Ty, upper: bool, x: Expr, bound: Expr) -> Expr {
    match (ty, upper) {
        (Ty::Bool, true) => return bin(BinOp::And, x, bound),
        (Ty::Bool, false) => return bin(BinOp::Or, x, bound),
        (Ty::F64, _) => {}
        _ => return bin(if upper { BinOp::Min } else { BinOp::Max }, x, bound),
    }
    let op = if upper { CmpOp::Lt } else { CmpOp::Gt };
    pick(t, op, bound, x, true).2
}

/// `a op b || isnan(a or b) ? a : b` (the NaN tested: `a`'s if `nan_of_a`), with `a` and `b`
/// made safe to repeat; returns them and the selection.
fn pick(t: &mut Translator, op: CmpOp, a: Expr, b: Expr, nan_of_a: bool) -> (Expr, Expr, Expr) {
    let (a, b) = (t.stable(a, Ty::F64), t.stable(b, Ty::F64));
    let nan = un(UnOp::IsNan, if nan_of_a { a.clone() } else { b.clone() });
    let keep_a = bin(BinOp::Or, cmp(op, a.clone(), b.clone()), nan);
    let picked = Expr::Select(keep_a.boxed(), a.clone().boxed(), b.clone().boxed());
    (a, b, picked)
}
