//! The functions, methods and constants a filter can use, and how each lowers.
//!
//! Calls arrive resolved to a typed [`Builtin`] (module and function, see `names.rs`, where
//! aliases such as `amax`, `absolute` and `asin` map to one function), so each operation has one
//! lowering, chosen by matching on variants.

use super::expr::{bin, cmp, convert, un};
use super::names::Func::*;
use super::names::{self, Builtin, Func, Module};
use super::numpy::zero_signs::{self, Shows};
use super::provenance::Prov;
use super::value::{ArrayVal, ElemKind, Value};
use super::{not, Translator};
use crate::error::{Error, ErrorKind, Exception, Result, Span};
use crate::ir::{ArrayOp, BinOp, CmpOp, Expr, ReduceOp, SortedStat, Stmt, Ty, UnOp};
use crate::math::MathFn;
use crate::syntax::ast;

/// Builtins visible without import (numpy and math are too, as `np`, `numpy` and `math`).
pub(crate) fn global(name: &str) -> Option<Value> {
    Some(match name {
        "np" | "numpy" => Value::Module(Module::Np),
        "math" => Value::Module(Module::Math),
        _ => Value::Function(names::resolve(Module::Builtin, name)?),
    })
}

/// `np.<name>` / `math.<name>`: a constant or a function.
pub(crate) fn module_attr(module: Module, name: &str) -> Option<Value> {
    use Module::{Math, Np};
    let c = |v: f64| Some(Value::Scalar(Expr::F64(v), Ty::F64));
    match (module, name) {
        (_, "pi") => c(std::f64::consts::PI),
        (_, "e") => c(std::f64::consts::E),
        (_, "inf") | (Np, "Inf" | "PINF" | "infty") => c(f64::INFINITY),
        (_, "nan") | (Np, "NaN" | "NAN") => c(f64::NAN),
        (Math, "tau") => c(std::f64::consts::TAU),
        (Np, "NINF") => c(f64::NEG_INFINITY),
        (Np, "newaxis") => None,
        (Np, "linalg") => Some(Value::Module(Module::Linalg)),
        _ => names::resolve(module, name).map(Value::Function),
    }
}

/// `base.attr`.
pub(crate) fn attribute(t: &mut Translator, base: Value, attr: &str, span: Span) -> Result<Value> {
    match base {
        Value::List(..) => {
            const LIST_METHODS: &[&str] = &[
                "append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "count",
                "index", "copy",
            ];
            Err(if LIST_METHODS.contains(&attr) {
                t.err(
                    ErrorKind::Unsupported,
                    span,
                    format!("the list method `.{attr}` is not supported"),
                )
                .hint(
                    "a list assigned to a name takes `.append(v)`; otherwise use a comprehension, \
                     the builtins (len, sum, min, max, sorted) or np.array(values)",
                )
            } else {
                t.err(
                    ErrorKind::Unsupported,
                    span,
                    format!("a list has no attribute `.{attr}` (NumPy arrays do)"),
                )
                .hint(format!("convert it first: np.array(values).{attr}"))
            })
        }
        Value::Module(m) => module_attr(m, attr).ok_or_else(|| {
            let full = match m {
                Module::Np => "numpy",
                Module::Linalg => "numpy.linalg",
                _ => "math",
            };
            const NARROW: &[&str] = &[
                "float32",
                "float16",
                "single",
                "half",
                "int8",
                "int16",
                "int32",
                "uint8",
                "uint16",
                "uint32",
                "uint64",
                "uint",
                "longlong",
                "ulonglong",
            ];
            let hint = if m == Module::Np && NARROW.contains(&attr) {
                "ndjit computes in 64 bits and does not model narrower types' rounding and \
                 wrapping: use np.float64 or np.int64, and narrow the filter's output instead"
            } else {
                "see the list of supported functions in the ndjit documentation"
            };
            t.err(
                ErrorKind::UnknownName,
                span,
                format!("`{full}.{attr}` is not supported in filters"),
            )
            .hint(hint)
        }),
        Value::Matrix(a, cols) => {
            let rows = bin(
                BinOp::FloorDiv,
                a.len.clone(),
                bin(BinOp::Max, cols.clone(), Expr::I64(1)),
            );
            match attr {
                "size" => Ok(Value::Scalar(a.len, Ty::I64)),
                "shape" => Ok(Value::Tuple(vec![
                    Value::Scalar(rows, Ty::I64),
                    Value::Scalar(cols, Ty::I64),
                ])),
                "ndim" => Ok(Value::Scalar(Expr::I64(2), Ty::I64)),
                "T" => {
                    // Transposed view: element k of the result is (k % rows, k // rows) of the input.
                    let rows = t.stable(rows, Ty::I64);
                    let index = t.temp(Ty::I64);
                    let k = Expr::Var(index);
                    let safe_rows = bin(BinOp::Max, rows.clone(), Expr::I64(1));
                    let src = bin(
                        BinOp::Add,
                        bin(
                            BinOp::Mul,
                            bin(BinOp::Mod, k.clone(), safe_rows.clone()),
                            cols,
                        ),
                        bin(BinOp::FloorDiv, k, safe_rows),
                    );
                    Ok(Value::Matrix(
                        ArrayVal {
                            len: a.len.clone(),
                            ty: a.ty,
                            index,
                            elem: a.at(src),
                        },
                        rows,
                    ))
                }
                // Methods see the 2-D shape (`m.sum(axis=0)` reduces along it).
                _ => Ok(Value::Method(
                    Box::new(Value::Matrix(a, cols)),
                    attr.to_string(),
                )),
            }
        }
        Value::Array(a) => match attr {
            "size" => Ok(Value::Scalar(a.len, Ty::I64)),
            "shape" => Ok(Value::Tuple(vec![Value::Scalar(a.len, Ty::I64)])),
            "ndim" => Ok(Value::Scalar(Expr::I64(1), Ty::I64)),
            "T" | "flat" => Ok(Value::Array(a)),
            _ => Ok(Value::Method(Box::new(Value::Array(a)), attr.to_string())),
        },
        Value::Scalar(e, ty) => match attr {
            "real" => Ok(Value::Scalar(e, ty)),
            "imag" => Ok(Value::Scalar(Expr::F64(0.0), Ty::F64)),
            _ => Ok(Value::Method(
                Box::new(Value::Scalar(e, ty)),
                attr.to_string(),
            )),
        },
        other => Err(t.err(
            ErrorKind::Type,
            span,
            format!("{} has no attribute `{attr}`", other.describe()),
        )),
    }
}

/// Arguments of one call, with helpers that produce precise errors.
pub(crate) struct Args<'x> {
    pub(super) name: String,
    pub(super) pos: Vec<(Value, Span)>,
    pub(super) kw: Vec<(String, Value, Span)>,
    pub(super) span: Span,
    _p: std::marker::PhantomData<&'x ()>,
}

impl Args<'_> {
    pub(super) fn arity(&self, t: &Translator, min: usize, max: usize) -> Result<()> {
        let n = self.pos.len();
        if n < min || n > max {
            let want = if min == max {
                format!("{min}")
            } else {
                format!("{min} to {max}")
            };
            return Err(t.err(
                ErrorKind::Arity,
                self.span,
                format!(
                    "{}() takes {want} positional arguments but {n} were given",
                    self.name
                ),
            ));
        }
        Ok(())
    }
    /// Takes a keyword argument; every keyword must be taken or [`Args::done`] rejects it.
    pub(super) fn kw(&mut self, name: &str) -> Option<(Value, Span)> {
        let i = self.kw.iter().position(|(n, _, _)| n == name)?;
        let (_, v, s) = self.kw.remove(i);
        Some((v, s))
    }
    fn done(&self, t: &Translator) -> Result<()> {
        // A lowering takes every argument it understands: one left over would be ignored.
        if let Some((_, s)) = self.pos.first() {
            return Err(t.err(
                ErrorKind::Arity,
                *s,
                format!(
                    "{}() got a positional argument it does not support here",
                    self.name
                ),
            ));
        }
        if let Some((n, v, s)) = self.kw.first() {
            let msg = match (n.as_str(), v) {
                ("axis", Value::None) => return Ok(()),
                ("axis", _) => "the buffer is 1-D: axis must be None or 0".to_string(),
                _ => format!("{}() got an unsupported keyword argument `{n}`", self.name),
            };
            return Err(t.err(ErrorKind::Arity, *s, msg));
        }
        Ok(())
    }
    pub(super) fn take(&mut self) -> (Value, Span) {
        self.pos.remove(0)
    }
}

/// `f(args...)`.
pub(crate) fn call(
    t: &mut Translator,
    f: Value,
    args: &[ast::Expr],
    keywords: &[ast::Keyword],
    span: Span,
    fspan: Span,
) -> Result<Value> {
    let mut pos = Vec::new();
    let mut kw = Vec::new();
    let (name, receiver) = match f {
        Value::Function(n) => (n, None),
        Value::Method(recv, m) => {
            let Some(n) = names::method(&m) else {
                return Err(t
                    .err(ErrorKind::UnknownName, fspan, format!("`.{m}()` is not supported in filters"))
                    .hint("supported methods: sum mean var std min max prod any all argmin argmax astype copy round clip item"));
            };
            (n, Some(*recv))
        }
        other => {
            return Err(t.err(
                ErrorKind::Type,
                fspan,
                format!("{} is not callable", other.describe()),
            ))
        }
    };
    if matches!(name.func, Range | Enumerate | Zip) {
        return Err(t
            .err(
                ErrorKind::Unsupported,
                span,
                format!(
                    "{}() can only be used as the iterable of a for loop",
                    name.func
                ),
            )
            .hint("write `for i in range(n):`"));
    }
    let receiver_was_array = matches!(receiver, Some(Value::Array(_) | Value::Matrix(..)));
    if let Some(r) = receiver {
        pos.push((r, fspan));
    }
    for a in args {
        if let ast::ExprKind::Comp(c) = &a.kind {
            if c.kind == ast::CompKind::Generator {
                let consumed = name.module == Module::Builtin
                    && super::comprehension::consumes_generator(name.func)
                    && pos.is_empty();
                if !consumed {
                    return Err(t.generator_elsewhere(a.span));
                }
                if matches!(name.func, Any | All) && args.len() == 1 && keywords.is_empty() {
                    return t.any_all_generator(name.func == Any, c);
                }
                pos.push((t.list_comprehension(c, a.span)?, a.span));
                continue;
            }
        }
        pos.push((t.expr(a)?, a.span));
    }
    for k in keywords {
        kw.push((k.name.clone(), t.expr(&k.value)?, k.span));
    }
    let mut a = Args {
        name: name.to_string(),
        pos,
        kw,
        span,
        _p: std::marker::PhantomData,
    };
    let v = lower_call(t, name, &mut a)?;
    a.done(t)?;
    // NumPy functions and array methods return NumPy scalars; math.*, float(), int(), round()
    // and len() return Python numbers (see provenance.rs).
    use super::provenance::Prov;
    let python = match name.module {
        Module::Math => true,
        Module::Builtin => matches!(name.func, Float | Int | Round | Len | Bool),
        Module::Method => name.func == Item,
        Module::Np | Module::Linalg => false,
    };
    let numpy = !python
        && (matches!(name.module, Module::Np | Module::Linalg | Module::Method)
            || receiver_was_array);
    Ok(match v {
        // round(x, n) of a float keeps x's kind (see python_or_numpy_round).
        Value::Scalar(_, Ty::F64) if name.module == Module::Builtin && name.func == Round => v,
        Value::Scalar(e, ty) if python => Value::Scalar(t.with_prov(e, ty, Prov::Py), ty),
        Value::Scalar(e, ty) if numpy => Value::Scalar(t.with_prov(e, ty, Prov::Np), ty),
        v => v,
    })
}

/// The element-wise function of one argument a function computes, if it is one.
fn unary_math(func: Func) -> Option<(Option<MathFn>, Option<UnOp>)> {
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
fn binary_math(func: Func) -> Option<MathFn> {
    Some(match func {
        Arctan2 => MathFn::Atan2,
        Hypot => MathFn::Hypot,
        Power => MathFn::Pow,
        CopySign => MathFn::CopySign,
        Fmod => MathFn::Fmod,
        _ => return None,
    })
}

fn apply_unary(e: Expr, f: (Option<MathFn>, Option<UnOp>)) -> Expr {
    match f {
        (Some(m), _) => Expr::Call(m, vec![e]),
        (None, Some(op)) => un(op, e),
        _ => unreachable!(),
    }
}

fn lower_call(t: &mut Translator, name: Builtin, a: &mut Args) -> Result<Value> {
    use Module::{Math, Np};
    let Builtin { module, func: base } = name;
    let span = a.span;
    if let Some(r) = super::numpy::lower(t, name, a) {
        return r;
    }

    // math.*: scalars only, with CPython's domain and range errors.
    if module == Math {
        return math_call(t, base, a);
    }

    if let Some(f) = unary_math(base).filter(|_| module == Np || base == Abs) {
        a.arity(t, 1, 1)?;
        let (v, s) = a.take();
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
                let ty2 = ty.max(Ty::I64);
                Ok((un(UnOp::Abs, convert(e, ty, ty2)), ty2))
            });
        }
        return t.elementwise(vec![v], s, &mut |t, ops, _| {
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
        });
    }
    if module == Np {
        if let Some(m) = binary_math(base) {
            a.arity(t, 2, 2)?;
            let (x, _) = a.take();
            let (y, _) = a.take();
            let one_exponent = matches!(y, Value::Scalar(..));
            return t.elementwise(vec![x, y], span, &mut |t, ops, _| {
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
                    // np.power of ints is NumPy's integer power (wrapping at 64 bits).
                    use super::provenance::Prov;
                    let (x, y) = (t.with_prov(x, tx, Prov::Np), t.with_prov(y, ty, Prov::Np));
                    let v = t.binary(
                        ast::BinOp::Pow,
                        Value::Scalar(x, tx),
                        Value::Scalar(y, ty),
                        span,
                    )?;
                    let (e, ty) = t.scalar(v, span, "a power")?;
                    return Ok((e, ty));
                }
                Ok((
                    Expr::Call(m, vec![convert(x, tx, Ty::F64), convert(y, ty, Ty::F64)]),
                    Ty::F64,
                ))
            });
        }
    }

    match (module, base) {
        (Np, IsNan | IsInf | IsFinite) => {
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
        // Unlike np.round, np.rint gives doubles for integers too.
        (Np, Rint) => numpy_unary(t, base, a, false, &mut |_, e, ty| {
            Ok((un(UnOp::RoundEven, convert(e, ty, Ty::F64)), Ty::F64))
        }),
        (Np, Sign) => numpy_unary(t, base, a, false, &mut |t, e, ty| {
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
        }),
        (Np, Square | Negative | Reciprocal | Degrees | Radians | LogicalNot) => {
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
        (Np, Round) => {
            a.arity(t, 1, 2)?;
            let (v, s) = a.take();
            let decimals = match a.pos.pop().or_else(|| a.kw("decimals")) {
                Some((d, ds)) => {
                    let e = t.int(d, ds, "decimals")?;
                    match crate::ir::fold::const_expr(&e) {
                        Some(k) => k.i(),
                        None => {
                            return Err(t.err(
                                ErrorKind::Unsupported,
                                ds,
                                "decimals must be a constant",
                            ))
                        }
                    }
                }
                None => 0,
            };
            t.elementwise(vec![v], s, &mut |t, ops, _| {
                let (e, ty) = ops.into_iter().next().unwrap();
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
        (
            Np,
            Minimum | Maximum | Fmin | Fmax | Add | Subtract | Multiply | Divide | Remainder
            | FloorDivide | LogicalAnd | LogicalOr | LogicalXor,
        ) => {
            a.arity(t, 2, 2)?;
            let (x, _) = a.take();
            let (y, _) = a.take();
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
                let tt = tx.max(ty).max(Ty::I64);
                let (x, y) = (convert(x, tx, tt), convert(y, ty, tt));
                Ok(match base {
                    Minimum | Maximum if tt == Ty::F64 => {
                        (numpy_extreme(t, base == Maximum, x, y), tt)
                    }
                    Fmin | Fmax if tt == Ty::F64 && !in_array => {
                        (c_extreme(t, base == Fmax, x, y), tt)
                    }
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
        (Np, Where) => {
            if a.pos.len() != 3 {
                return Err(t
                    .err(
                        ErrorKind::Arity,
                        span,
                        "np.where() needs three arguments in a filter",
                    )
                    .hint(
                        "np.where(cond, a, b), or np.where(cond) for the indices where cond holds",
                    ));
            }
            let (c, _) = a.take();
            let (x, _) = a.take();
            let (y, _) = a.take();
            t.elementwise(vec![c, x, y], span, &mut |_, ops, _| {
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
            })
        }
        (Np, Clip) => {
            a.arity(t, 1, 3)?;
            let (x, _) = a.take();
            let lo = if a.pos.is_empty() {
                a.kw("a_min").or(a.kw("min"))
            } else {
                Some(a.take())
            };
            let hi = if a.pos.is_empty() {
                a.kw("a_max").or(a.kw("max"))
            } else {
                Some(a.take())
            };
            let (Some((lo, _)), Some((hi, _))) = (lo, hi) else {
                return Err(t.err(
                    ErrorKind::Arity,
                    span,
                    "clip() needs a lower and an upper bound",
                ));
            };
            let mut vals = vec![x];
            let (has_lo, has_hi) = (!matches!(lo, Value::None), !matches!(hi, Value::None));
            if has_lo {
                vals.push(lo);
            }
            if has_hi {
                vals.push(hi);
            }
            t.elementwise(vals, span, &mut |t, ops, _| {
                let tt = ops.iter().map(|o| o.1).max().unwrap().max(Ty::I64);
                let mut it = ops.into_iter();
                let (x, tx) = it.next().unwrap();
                let mut e = convert(x, tx, tt);
                if has_lo {
                    let (l, tl) = it.next().unwrap();
                    e = clamp(t, tt, false, e, convert(l, tl, tt));
                }
                if has_hi {
                    let (h, th) = it.next().unwrap();
                    e = clamp(t, tt, true, e, convert(h, th, tt));
                }
                Ok((e, tt))
            })
        }
        (Np, Array | Ravel) => {
            a.arity(t, 1, 1)?;
            let dtype = a.kw("dtype");
            let (v, s) = a.take();
            // `np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]])`: rows of one length make a 2-D array.
            let v = match v {
                Value::Tuple(rows) if rows.iter().any(|r| !matches!(r, Value::Scalar(..))) => {
                    super::numpy::creation::rows_to_matrix(t, rows, s)?
                }
                // Numbers listed go to an int dtype as Python's `int()` takes them, raising for
                // NaN, infinity and values past 64 bits (an array's `astype` gives -(2**63)).
                Value::Tuple(items) if matches!(&dtype, Some((d, _)) if dtype_ty(t, d, s).ok() == Some(Ty::I64)) =>
                {
                    let mut checked = Vec::with_capacity(items.len());
                    for item in items {
                        checked.push(match item {
                            Value::Scalar(e, Ty::F64) => {
                                let e = t.stable(e, Ty::F64);
                                int_checks(t, &e, s);
                                Value::Scalar(e, Ty::F64)
                            }
                            other => other,
                        });
                    }
                    Value::Tuple(checked)
                }
                v => v,
            };
            // `np.array`, `np.asarray` and `.copy()` keep a 2-D array 2-D; `np.ravel`,
            // `.ravel()` and `.flatten()` make it 1-D.
            let cols = match name.func {
                Array => super::numpy::columns(&v),
                _ => None,
            };
            let arr = t.array_of(v, s)?;
            let arr = match dtype {
                None => arr,
                Some((d, ds)) => {
                    let ty = dtype_ty(t, &d, ds)?;
                    cast_array(arr, ty)
                }
            };
            Ok(super::numpy::shaped(arr, cols))
        }
        (Module::Method, Astype) => {
            a.arity(t, 2, 2)?;
            let (v, s) = a.take();
            let (d, ds) = a.take();
            match v {
                Value::Scalar(e, ty) => {
                    let arr = ArrayVal {
                        len: Expr::I64(1),
                        ty,
                        index: t.temp(Ty::I64),
                        elem: e,
                    };
                    match astype(t, arr, d, ds)? {
                        Value::Array(r) => Ok(Value::Scalar(r.elem, r.ty)),
                        other => Ok(other),
                    }
                }
                v => {
                    let cols = super::numpy::columns(&v);
                    let arr = t.array_of(v, s)?;
                    let ty = dtype_ty(t, &d, ds)?;
                    Ok(super::numpy::shaped(cast_array(arr, ty), cols))
                }
            }
        }
        (Module::Method | Np, Reshape) => {
            if a.pos.len() < 2 {
                return Err(t.err(ErrorKind::Arity, span, "reshape() needs the new shape"));
            }
            let (v, s) = a.take();
            let arr = t.array_of(v, s)?;
            let dims: Vec<(Value, Span)> = match a.pos.len() {
                1 => match a.take() {
                    (Value::Tuple(items), ds) => items.into_iter().map(|i| (i, ds)).collect(),
                    one => vec![one],
                },
                _ => std::mem::take(&mut a.pos),
            };
            reshape(t, arr, dims, span)
        }
        (Np, Bincount) => bincount(t, a),
        (Module::Method, Item) => {
            a.arity(t, 1, 1)?;
            let (v, s) = a.take();
            match v {
                // A Python number: see the provenance rule in `call` (`1.0 / x[0].item()` raises).
                Value::Scalar(..) => Ok(v),
                v => {
                    let arr = t.array_of(v, s)?;
                    t.check(
                        cmp(CmpOp::Eq, arr.len.clone(), Expr::I64(1)),
                        Exception::ValueError,
                        "can only convert an array of size 1 to a Python scalar (size {a})",
                        span,
                        arr.len.clone(),
                        Expr::I64(0),
                    );
                    Ok(Value::Scalar(arr.at(Expr::I64(0)), arr.ty))
                }
            }
        }
        (Module::Method, IsInteger) => {
            a.arity(t, 1, 1)?;
            let (v, s) = a.take();
            let x = t.float(v, s, "the receiver")?;
            let x = t.stable(x, Ty::F64);
            Ok(Value::Scalar(
                cmp(CmpOp::Eq, un(UnOp::Floor, x.clone()), x),
                Ty::Bool,
            ))
        }
        (Np, Delete) => {
            a.arity(t, 2, 2)?;
            let (v, s) = a.take();
            let (i, is) = a.take();
            let arr = t.array_of(v, s)?;
            let i = t.int(i, is, "the index to delete")?;
            let i = t.checked_index(i, arr.len.clone(), is);
            let index = t.temp(Ty::I64);
            let k = Expr::Var(index);
            let src = Expr::Select(
                cmp(CmpOp::Ge, k.clone(), i).boxed(),
                bin(BinOp::Add, k.clone(), Expr::I64(1)).boxed(),
                k.boxed(),
            );
            Ok(Value::Array(ArrayVal {
                len: bin(BinOp::Sub, arr.len.clone(), Expr::I64(1)),
                ty: arr.ty,
                index,
                elem: arr.at(src),
            }))
        }
        (Np, Concatenate) => {
            a.arity(t, 1, 1)?;
            let (v, s) = a.take();
            let Value::Tuple(parts) = v else {
                return Err(t
                    .err(
                        ErrorKind::Type,
                        s,
                        "np.concatenate() takes a tuple of arrays",
                    )
                    .hint("np.concatenate((a, b))"));
            };
            let mut arrays = Vec::new();
            for p in parts {
                let p = match p {
                    Value::Scalar(..) => {
                        return Err(t
                            .err(
                                ErrorKind::Type,
                                s,
                                "np.concatenate() needs arrays, not numbers",
                            )
                            .hint("wrap numbers in a tuple: (v,)"))
                    }
                    p => {
                        rows_unsupported(t, &p, s, "np.concatenate")?;
                        t.array_of(p, s)?
                    }
                };
                arrays.push(p);
            }
            let Some(mut acc) = arrays.first().cloned() else {
                return Err(t.err(
                    ErrorKind::Arity,
                    s,
                    "need at least one array to concatenate",
                ));
            };
            for next in &arrays[1..] {
                acc = concat2(t, &acc, next);
            }
            Ok(Value::Array(acc))
        }
        (Np, Sort) => {
            a.arity(t, 1, 1)?;
            let (v, s) = a.take();
            rows_unsupported(t, &v, s, "np.sort")?;
            let arr = t.array_of(v, s)?;
            let kind = arr.ty;
            // The sort runs over doubles: exact for ints up to 2**53, which come back as ints.
            if kind == Ty::I64 {
                super::numpy::exact_ints(t, &arr, "np.sort", span);
            }
            let arr = ArrayVal {
                elem: convert(arr.elem.clone(), arr.ty, Ty::F64),
                ty: Ty::F64,
                ..arr
            };
            let m = t.materialize(&arr, None);
            if kind == Ty::F64 {
                zero_signs::guard(t, &m, Shows::Sorted, "np.sort", a.span)?;
            }
            let slot = m.slot().unwrap();
            t.emit(Stmt::ArrayOp(ArrayOp::Sort, slot));
            Ok(Value::Array(super::numpy::as_type(&m, kind)))
        }
        (Np, Flip) => {
            a.arity(t, 1, 1)?;
            let (v, s) = a.take();
            // Flipping every axis of a 2-D array reverses its flat order and keeps its shape.
            let cols = super::numpy::columns(&v);
            let arr = t.array_of(v, s)?;
            let len = t.stable(arr.len.clone(), Ty::I64);
            let index = t.temp(Ty::I64);
            let src = bin(
                BinOp::Sub,
                bin(BinOp::Sub, len.clone(), Expr::I64(1)),
                Expr::Var(index),
            );
            let flipped = ArrayVal {
                len,
                ty: arr.ty,
                index,
                elem: arr.at(src),
            };
            Ok(super::numpy::shaped(flipped, cols))
        }
        (Np, Diff) => {
            a.arity(t, 1, 1)?;
            let (v, s) = a.take();
            rows_unsupported(t, &v, s, "np.diff")?;
            let arr = t.array_of(v, s)?;
            let len = t.stable(arr.len.clone(), Ty::I64);
            let index = t.temp(Ty::I64);
            let k = Expr::Var(index);
            let (next, here) = (arr.at(bin(BinOp::Add, k.clone(), Expr::I64(1))), arr.at(k));
            // NumPy's diff of bools is their `!=` (it cannot subtract them).
            let (elem, tt) = match arr.ty {
                Ty::Bool => (bin(BinOp::Xor, next, here), Ty::Bool),
                ty => {
                    let tt = ty.max(Ty::I64);
                    (
                        bin(BinOp::Sub, convert(next, ty, tt), convert(here, ty, tt)),
                        tt,
                    )
                }
            };
            Ok(Value::Array(ArrayVal {
                len: bin(BinOp::Max, bin(BinOp::Sub, len, Expr::I64(1)), Expr::I64(0)),
                ty: tt,
                index,
                elem,
            }))
        }
        (Np, Dot) => {
            a.arity(t, 2, 2)?;
            let x = a.take();
            let y = a.take();
            super::numpy::linalg::dot(t, x, y, span)
        }
        (Np, Average) => {
            a.arity(t, 1, 1)?;
            let (x, xs) = a.take();
            // np.average takes no dtype=: `reduce_values` leaves it for `Args::done` to refuse.
            match a.kw("weights") {
                None => {
                    let x = reduced_array(t, x, xs)?;
                    reduce_values(t, Mean, x, a)
                }
                Some((w, ws)) => weighted_average(t, (x, xs), (w, ws), a),
            }
        }
        (Np, Size) | (Module::Builtin, Len) => {
            a.arity(t, 1, 1)?;
            let (v, s) = a.take();
            match v {
                Value::Tuple(items) => Ok(Value::Scalar(Expr::I64(items.len() as i64), Ty::I64)),
                Value::Scalar(..) if base == Size => Ok(Value::Scalar(Expr::I64(1), Ty::I64)),
                // The length of a 2-D array is its number of rows.
                Value::Matrix(arr, cols) if base == Len => Ok(Value::Scalar(
                    bin(
                        BinOp::FloorDiv,
                        arr.len,
                        bin(BinOp::Max, cols, Expr::I64(1)),
                    ),
                    Ty::I64,
                )),
                v => {
                    let arr = t
                        .array_of(v, s)
                        .map_err(|e| e.hint("len() needs an array"))?;
                    Ok(Value::Scalar(arr.len, Ty::I64))
                }
            }
        }
        (Module::Builtin, Abs) => unreachable!("handled with the unary math functions"),
        (Module::Builtin, Float | Int | Bool) => cast_call(t, base, a),
        // NumPy scalar constructors: the same conversions, but the result is a NumPy scalar.
        (Np, Float64) => cast_call(t, Float, a),
        (Np, Int64) => cast_call(t, Int, a),
        (Np, BoolScalar) => cast_call(t, Bool, a),
        (Module::Builtin, Round) => {
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
        (Module::Builtin, Pow) => {
            a.arity(t, 2, 2)?;
            let (x, _) = a.take();
            let (y, _) = a.take();
            t.binary(ast::BinOp::Pow, x, y, span)
        }
        (Module::Builtin, Min | Max) => builtin_min_max(t, base, a),
        (Module::Builtin, Sorted) => super::lists::sorted(t, a),
        // A tuple of numbers made at run time reads like a list (both are immutable here).
        (Module::Builtin, List | TupleOf) => super::lists::list(t, a),
        (Module::Builtin, Sum) => builtin_sum(t, a),
        (Module::Builtin, Any | All) => {
            a.arity(t, 1, 1)?;
            let (v, s) = a.take();
            reduction(t, base, v, s, a)
        }
        (Np, _) => {
            a.arity(t, 1, 2)?;
            let (v, s) = a.take();
            reduction(t, base, v, s, a)
        }
        _ => Err(t.err(
            ErrorKind::UnknownName,
            span,
            format!("`{name}` cannot be called here"),
        )),
    }
}

/// `reshape(r, c)` (one of them may be -1) to a 2-D array, or `reshape(n)`/`reshape(-1)` to 1-D.
fn reshape(
    t: &mut Translator,
    arr: ArrayVal,
    dims: Vec<(Value, Span)>,
    span: Span,
) -> Result<Value> {
    let mut ds = Vec::new();
    for (d, s) in dims {
        let e = t.int(d, s, "a dimension")?;
        match crate::ir::fold::const_expr(&e) {
            Some(v) => ds.push(v.i()),
            None => {
                return Err(t.err(
                    ErrorKind::Unsupported,
                    s,
                    "reshape dimensions must be constants",
                ))
            }
        }
    }
    let len = t.stable(arr.len.clone(), Ty::I64);
    let msg = format!(
        "cannot reshape array of size {{a}} into shape ({})",
        ds.iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    match ds.as_slice() {
        [n] => {
            if *n >= 0 {
                t.check(
                    cmp(CmpOp::Eq, len.clone(), Expr::I64(*n)),
                    Exception::ValueError,
                    &msg,
                    span,
                    len,
                    Expr::I64(0),
                );
            }
            Ok(Value::Array(arr))
        }
        [r, c] if *r >= 0 && *c >= 0 => {
            t.check(
                cmp(CmpOp::Eq, len.clone(), Expr::I64(r * c)),
                Exception::ValueError,
                &msg,
                span,
                len,
                Expr::I64(0),
            );
            Ok(Value::Matrix(arr, Expr::I64(*c)))
        }
        [-1, c] if *c > 0 => {
            t.check(
                cmp(
                    CmpOp::Eq,
                    bin(BinOp::Mod, len.clone(), Expr::I64(*c)),
                    Expr::I64(0),
                ),
                Exception::ValueError,
                &msg,
                span,
                len,
                Expr::I64(0),
            );
            Ok(Value::Matrix(arr, Expr::I64(*c)))
        }
        [r, -1] if *r > 0 => {
            t.check(
                cmp(
                    CmpOp::Eq,
                    bin(BinOp::Mod, len.clone(), Expr::I64(*r)),
                    Expr::I64(0),
                ),
                Exception::ValueError,
                &msg,
                span,
                len.clone(),
                Expr::I64(0),
            );
            let cols = t.stable(bin(BinOp::FloorDiv, len, Expr::I64(*r)), Ty::I64);
            Ok(Value::Matrix(arr, cols))
        }
        _ => Err(t
            .err(
                ErrorKind::Unsupported,
                span,
                "filters reshape to 1-D or 2-D arrays",
            )
            .hint("e.g. w.reshape(3, 3)")),
    }
}

/// Emits `for i in 0..n: body(i)` as an IR loop over a fresh counter.
pub(super) fn counted_loop(
    t: &mut Translator,
    n: Expr,
    body: impl FnOnce(&mut Translator, Expr) -> Result<()>,
) -> Result<()> {
    let i = t.temp(Ty::I64);
    t.emit(Stmt::Assign(i, Expr::I64(0)));
    let ((), mut stmts) = t.nested(|t| {
        t.emit(Stmt::If(
            not(cmp(CmpOp::Lt, Expr::Var(i), n)),
            vec![Stmt::Break],
            vec![],
        ));
        body(t, Expr::Var(i))
    })?;
    let latch = vec![Stmt::Assign(i, bin(BinOp::Add, Expr::Var(i), Expr::I64(1)))];
    t.emit(Stmt::Loop {
        body: std::mem::take(&mut stmts),
        latch,
    });
    Ok(())
}

/// A zeroed scratch array of `len` elements.
pub(super) fn zeros(t: &mut Translator, len: Expr, ty: Ty, name: &str) -> crate::ir::Arr {
    let slot = t.new_array(crate::ir::ArrKind::Scratch { elem: ty }, name);
    fill_zeros(t, slot, len, ty);
    slot
}

/// Sizes scratch array `slot` (of elements `ty`) to `len` zeros.
pub(super) fn fill_zeros(t: &mut Translator, slot: crate::ir::Arr, len: Expr, ty: Ty) {
    let index = t.temp(Ty::I64);
    let zero = match ty {
        Ty::F64 => Expr::F64(0.0),
        Ty::I64 => Expr::I64(0),
        Ty::Bool => Expr::Bool(false),
    };
    t.emit(Stmt::Fill {
        dst: slot,
        len,
        index,
        elem: zero,
        keep: None,
    });
}

/// `np.bincount(x, weights=None, minlength=0)`: counts of each non-negative integer value.
fn bincount(t: &mut Translator, a: &mut Args) -> Result<Value> {
    let span = a.span;
    a.arity(t, 1, 2)?;
    let (v, s) = a.take();
    let weights = a.pos.pop().or_else(|| a.kw("weights"));
    let minlength = match a.kw("minlength") {
        Some((m, ms)) => {
            let e = t.int(m, ms, "minlength")?;
            t.stable(e, Ty::I64)
        }
        None => Expr::I64(0),
    };
    let arr = t.array_of(v, s)?;
    if arr.ty == Ty::F64 {
        return Err(t
            .err(
                ErrorKind::Type,
                s,
                "np.bincount() needs integers: cannot cast array data from float64 to int64",
            )
            .hint("convert first, e.g. np.bincount(x.astype(int))"));
    }
    let vals = t.materialize(&super::numpy::as_type(&arr, Ty::I64), None);
    let vslot = vals.slot().unwrap();
    let n = t.stable(vals.len.clone(), Ty::I64);
    let nonneg = ArrayVal {
        elem: cmp(CmpOp::Ge, vals.elem.clone(), Expr::I64(0)),
        ty: Ty::Bool,
        ..vals.clone()
    };
    let ok = t.reduce(ReduceOp::All, &nonneg, span, None)?;
    t.check_plain(
        ok,
        Exception::ValueError,
        "'list' argument must have no negative elements",
        span,
    );
    let w = match weights {
        Some((w, ws)) => {
            let w = t.array_of(w, ws)?;
            t.check_plain(
                cmp(CmpOp::Eq, w.len.clone(), n.clone()),
                Exception::ValueError,
                "The weights and list don't have the same length.",
                ws,
            );
            Some(ArrayVal {
                elem: convert(w.elem.clone(), w.ty, Ty::F64),
                ty: Ty::F64,
                ..w
            })
        }
        None => None,
    };
    // Length: max(max(x) + 1, minlength), with max() of an empty array taken as -1.
    let top = super::numpy::if_nonempty(t, &n, Ty::I64, Expr::I64(-1), |t| {
        let m = t.reduce(
            ReduceOp::Max,
            &super::numpy::as_type(&vals, Ty::F64),
            span,
            None,
        )?;
        Ok(Expr::Cast(Ty::I64, m.boxed()))
    })?;
    let len = t.stable(
        bin(BinOp::Max, bin(BinOp::Add, top, Expr::I64(1)), minlength),
        Ty::I64,
    );
    let ty = if w.is_some() { Ty::F64 } else { Ty::I64 };
    let counts = zeros(t, len, ty, "%bincount");
    counted_loop(t, n, |t, i| {
        // The index is in 0..=max(x) < len: in range by construction.
        let k = t.stable(Expr::Load(vslot, i.clone().boxed()), Ty::I64);
        let add = match &w {
            Some(w) => w.at(i),
            None => Expr::I64(1),
        };
        t.emit(Stmt::Store(
            counts,
            k.clone(),
            bin(BinOp::Add, Expr::Load(counts, k.boxed()), add),
        ));
        Ok(())
    })?;
    Ok(Value::Array(t.view(counts)))
}

/// np.round(x, decimals): NumPy multiplies by 10**d, rounds half to even, and divides back.
fn round_decimals(t: &Translator, x: Expr, decimals: i64, ds: Span) -> Result<Expr> {
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

/// Integers rounded to tens or more (`round(n, -1)`, `np.round(i, -2)`), and bools rounded:
/// Python and NumPy round integers exactly, half to even, in integers; not modelled.
fn rounded_ints_unsupported(t: &Translator, what: &str, span: Span) -> Error {
    t.err(
        ErrorKind::Unsupported,
        span,
        format!(
            "{what}() of an integer or bool to a negative number of digits, or of a bool to digits"
        ),
    )
    .hint("round a float: float(n), or n.astype(float) for an array")
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
        .hint("convert first: np.{f}(b.astype(float)), or b.astype(int)");
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

/// `round(x, n)`: CPython's exact decimal rounding for a Python float, NumPy's for an
/// `np.float64` (its `__round__` is `np.round`); the result keeps the argument's kind.
fn python_or_numpy_round(t: &mut Translator, x: Expr, n: i64, ds: Span) -> Result<Value> {
    use super::provenance::Prov;
    let x = t.stable(x, Ty::F64);
    let prov = t.prov(&x);
    let numpy = round_decimals(t, x.clone(), n, ds)?;
    let r = match &prov {
        Prov::Np => numpy,
        _ if n.abs() > super::pyround::MAX_DIGITS => {
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

/// Two arrays joined: materialised, each part copied under a guard so no load is out of range.
pub(super) fn concat2(t: &mut Translator, a: &ArrayVal, b: &ArrayVal) -> ArrayVal {
    let ty = a.ty.max(b.ty);
    let la = t.stable(a.len.clone(), Ty::I64);
    let lb = t.stable(b.len.clone(), Ty::I64);
    let slot = t.new_array(crate::ir::ArrKind::Scratch { elem: ty }, "%concat");
    let index = t.temp(Ty::I64);
    let k = Expr::Var(index);
    let fill = |elem: Expr, len: Expr| Stmt::Fill {
        dst: slot,
        len,
        index,
        elem,
        keep: None,
    };
    let only_a = fill(convert(a.at(k.clone()), a.ty, ty), la.clone());
    let only_b = fill(convert(b.at(k.clone()), b.ty, ty), lb.clone());
    // With both parts non-empty, clamped indices keep both loads in range.
    let ka = bin(
        BinOp::Min,
        k.clone(),
        bin(BinOp::Sub, la.clone(), Expr::I64(1)),
    );
    let kb = bin(
        BinOp::Max,
        bin(BinOp::Sub, k.clone(), la.clone()),
        Expr::I64(0),
    );
    let both = Expr::Select(
        cmp(CmpOp::Lt, k.clone(), la.clone()).boxed(),
        convert(a.at(ka), a.ty, ty).boxed(),
        convert(b.at(kb), b.ty, ty).boxed(),
    );
    let joined = fill(both, bin(BinOp::Add, la.clone(), lb.clone()));
    let a_empty = cmp(CmpOp::Eq, la, Expr::I64(0));
    let b_empty = cmp(CmpOp::Eq, lb, Expr::I64(0));
    t.emit(Stmt::If(
        a_empty,
        vec![only_b],
        vec![Stmt::If(b_empty, vec![only_a], vec![joined])],
    ));
    t.view(slot)
}

/// Refuses a 2-D array for a function that works along its last axis, row by row, which ndjit
/// does not compute (flattening it instead would silently give another result).
fn rows_unsupported(t: &mut Translator, v: &Value, span: Span, what: &str) -> Result<()> {
    if let Value::Matrix(..) = v {
        return Err(t
            .err(
                ErrorKind::Unsupported,
                span,
                format!("{what} of a 2-D array works along an axis, which is not supported"),
            )
            .hint("flatten it first (w.ravel()), or work on one row w[i] at a time"));
    }
    Ok(())
}

fn astype(t: &mut Translator, arr: ArrayVal, d: Value, ds: Span) -> Result<Value> {
    let ty = dtype_ty(t, &d, ds)?;
    Ok(Value::Array(cast_array(arr, ty)))
}

/// The element type a `dtype` argument names: 64-bit types only.
pub(super) fn dtype_ty(t: &mut Translator, d: &Value, ds: Span) -> Result<Ty> {
    Ok(match d {
        // int, float and bool, or np.int64, np.float64 and np.bool_ (and their 64-bit aliases).
        Value::Function(Builtin { module, func }) => match (module, func) {
            (Module::Builtin, Int) | (Module::Np, Int64) => Ty::I64,
            (Module::Builtin, Float) | (Module::Np, Float64) => Ty::F64,
            (Module::Builtin, Bool) | (Module::Np, BoolScalar) => Ty::Bool,
            _ => return Err(narrow_dtype(t, ds)),
        },
        Value::Str(s) if matches!(s.as_str(), "int" | "int64" | "i8" | "intp" | "int_") => Ty::I64,
        Value::Str(s) if matches!(s.as_str(), "float" | "float64" | "f8" | "d") => Ty::F64,
        Value::Str(s) if s == "bool" || s == "?" => Ty::Bool,
        _ => return Err(narrow_dtype(t, ds)),
    })
}

/// Narrower types wrap or round (uint8 300 is 44): refused rather than computed wide.
fn narrow_dtype(t: &Translator, ds: Span) -> Error {
    t.err(ErrorKind::Type, ds, "astype() supports int, float and bool")
        .hint("64-bit types only: int, np.int64, 'int64', float, np.float64, bool")
}

/// An array's elements converted to `ty` as NumPy's `astype` converts them.
pub(super) fn cast_array(arr: ArrayVal, ty: Ty) -> ArrayVal {
    let elem = cast_elem(arr.elem.clone(), arr.ty, ty);
    ArrayVal { elem, ty, ..arr }
}

/// One element of type `from` converted to `to` as NumPy's `astype` converts it.
pub(super) fn cast_elem(x: Expr, from: Ty, to: Ty) -> Expr {
    if from == Ty::F64 && to == Ty::I64 {
        // NumPy's float-to-int cast on x86-64 (`cvttsd2si`): NaN and values out of range give
        // -(2**63), where the IR's cast saturates.
        Expr::Select(
            fits_i64(x.clone()).boxed(),
            Expr::Cast(Ty::I64, x.boxed()).boxed(),
            Expr::I64(i64::MIN).boxed(),
        )
    } else {
        convert(x, from, to)
    }
}

/// NumPy's integer and bool scalars define no `__trunc__` (and bools no `__round__`), so
/// `math.trunc(np.int64(3))` and `round(x[0] > 0)` raise TypeError in Python: a check that `x`
/// holds a Python number.
fn numpy_lacks(t: &mut Translator, x: &Expr, class: &str, method: &str, span: Span) {
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
        super::pyint::TOO_BIG,
        span,
    );
}

/// Whether a float's integer part is in the i64 range (false for NaN).
fn fits_i64(x: Expr) -> Expr {
    const LIMIT: f64 = 9223372036854775808.0; // 2**63
    bin(
        BinOp::And,
        cmp(CmpOp::Ge, x.clone(), Expr::F64(-LIMIT)),
        cmp(CmpOp::Lt, x, Expr::F64(LIMIT)),
    )
}

/// float(x), int(x), bool(x) on numbers, and float('nan')-style literals.
fn cast_call(t: &mut Translator, base: Func, a: &mut Args) -> Result<Value> {
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
        Value::Array(arr) => {
            // float(arr) works in NumPy for one-element arrays.
            t.check(
                cmp(CmpOp::Eq, arr.len.clone(), Expr::I64(1)),
                Exception::ValueError,
                "only arrays of size 1 can be converted to Python scalars (size {a})",
                s,
                arr.len.clone(),
                Expr::I64(0),
            );
            (arr.at(Expr::I64(0)), arr.ty)
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

/// math.* functions: scalars only, with CPython's errors (`math.sqrt(-1)` raises).
fn math_call(t: &mut Translator, base: Func, a: &mut Args) -> Result<Value> {
    let span = a.span;
    let mut xs = Vec::new();
    for (v, s) in std::mem::take(&mut a.pos) {
        if matches!(v, Value::Array(_)) {
            return Err(t
                .err(
                    ErrorKind::Type,
                    s,
                    format!("math.{base}() takes a number, not an array"),
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
    if !arity.contains(&xs.len()) {
        return Err(t.err(
            ErrorKind::Arity,
            span,
            format!(
                "math.{base}() takes {} arguments but {} were given",
                arity.start(),
                xs.len()
            ),
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
        Log if fx.len() == 2 => bin(
            BinOp::Div,
            Expr::Call(MathFn::Log, vec![fx[0].clone()]),
            Expr::Call(MathFn::Log, vec![fx[1].clone()]),
        ),
        // CPython computes math.hypot itself (np.hypot is the C library's).
        Hypot => Expr::Call(MathFn::PyHypot, fx.clone()),
        _ => match (unary_math(base), binary_math(base)) {
            (Some(f), _) => apply_unary(fx[0].clone(), f),
            (_, Some(m)) => Expr::Call(m, fx.clone()),
            _ => {
                return Err(t.err(
                    ErrorKind::UnknownName,
                    span,
                    format!("math.{base} is not supported"),
                ))
            }
        },
    };
    let r = t.stable(result, Ty::F64);
    // CPython: a NaN result from non-NaN input is a domain error; an infinite result from finite
    // input is a range error for the functions that can overflow and a domain error otherwise.
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
    Ok(Value::Scalar(r, Ty::F64))
}

/// Python's min()/max(): over one iterable, CPython's left-to-right comparison (so NaN handling
/// depends on position); over several numbers, the same rule pairwise.
fn builtin_min_max(t: &mut Translator, base: Func, a: &mut Args) -> Result<Value> {
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
    if a.pos.len() == 1 {
        // The winner is one of the elements, so it is of their kind.
        let (v, s) = a.take();
        let (arr, kind) = super::lists::sequence(t, v, s)?;
        let (e, ty) = py_fold(t, op, &arr, span, base)?;
        return super::lists::result_kind(
            t,
            Value::Scalar(e, ty),
            kind,
            s,
            "its minimum or maximum",
        );
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
    use super::provenance::Prov;
    let tt = tb.max(te);
    let (pb, pe) = (t.prov(&best), t.prov(&e));
    if pb == pe && tb == te {
        return (bin(op, best, e), tt);
    }
    let (best, e) = (t.stable(best, tb), t.stable(e, te));
    let (cb, ce) = (convert(best.clone(), tb, tt), convert(e.clone(), te, tt));
    let later_wins = if op == BinOp::PyMin {
        CmpOp::Lt
    } else {
        CmpOp::Gt
    };
    let later = t.stable(cmp(later_wins, ce.clone(), cb.clone()), Ty::Bool);
    let (int, int_ty, int_wins) = if tb == Ty::F64 {
        (e.clone(), te, later.clone())
    } else {
        (best.clone(), tb, not(later.clone()))
    };
    if tt == Ty::F64 && int_ty == Ty::I64 {
        const EXACT: i64 = 1 << 53;
        let exact = bin(
            BinOp::And,
            cmp(CmpOp::Ge, int.clone(), Expr::I64(-EXACT)),
            cmp(CmpOp::Le, int, Expr::I64(EXACT)),
        );
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
    let r = bin(op, cb, ce);
    let p = match (pb, pe) {
        (pb, pe) if pb == pe => pb,
        (pb, pe) => Prov::Dyn(Expr::Select(
            later.boxed(),
            pe.flag().boxed(),
            pb.flag().boxed(),
        )),
    };
    (t.with_prov(r, tt, p), tt)
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
    Ok((Expr::Var(acc), Ty::I64))
}

/// Python's builtin `sum(iterable, start=0)`: `start + e0 + e1 + ...` strictly left to right,
/// each `+` being Python's or NumPy's own by its operands (never NumPy's pairwise order).
fn builtin_sum(t: &mut Translator, a: &mut Args) -> Result<Value> {
    use super::provenance::Prov;
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
                return super::lists::sum_python_ints(t, &arr, span);
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

/// NumPy reductions by name, on an array (or a number, as a one-element array), with the
/// `dtype=` of those that take one.
pub(super) fn reduction(
    t: &mut Translator,
    base: Func,
    v: Value,
    s: Span,
    a: &mut Args,
) -> Result<Value> {
    let arr = reduced_array(t, v, s)?;
    // `dtype` follows `axis` (which `numpy::axes` has taken) among the positional arguments.
    let dtype = match takes_dtype(base) {
        true if !a.pos.is_empty() => Some(a.pos.remove(0)),
        true => a.kw("dtype"),
        false => None,
    };
    let arr = match dtype {
        Some(dtype) => with_dtype(t, base, arr, dtype)?,
        None => arr,
    };
    reduce_values(t, base, arr, a)
}

/// The values a reduction reads: an array, or a number as a one-element array.
fn reduced_array(t: &mut Translator, v: Value, s: Span) -> Result<ArrayVal> {
    Ok(match v {
        Value::Scalar(e, ty) => ArrayVal {
            len: Expr::I64(1),
            ty,
            index: t.temp(Ty::I64),
            elem: e,
        },
        v => t.array_of(v, s)?,
    })
}

/// The reductions that take NumPy's `dtype=`. The others (`np.max`, `np.median`, `np.any`,
/// `np.average` ...) leave it to [`Args::done`], which refuses it as NumPy does.
pub(super) fn takes_dtype(f: Func) -> bool {
    matches!(
        f,
        Sum | Nansum | Prod | Nanprod | Mean | Nanmean | Var | Nanvar | Std | Nanstd
    )
}

/// `arr` as `np.<f>(arr, dtype=d)` reduces it: NumPy casts each value to `d` (as `astype`
/// does: NaN and values past 64 bits become `-(2**63)`) and reduces in `d`. The `nan` forms
/// replace a NaN first (by 0 for a sum, 1 for a product), as NumPy's `_replace_nan` does.
/// float64 serves every reduction; int64 the sums and products, which NumPy keeps integral
/// (its mean, variance and deviation of an int64 dtype truncate through casts ndjit does not
/// model, so they are refused, as are bool and the narrow types).
fn with_dtype(
    t: &mut Translator,
    f: Func,
    arr: ArrayVal,
    (d, ds): (Value, Span),
) -> Result<ArrayVal> {
    if matches!(d, Value::None) {
        return Ok(arr);
    }
    let ty = dtype_ty(t, &d, ds)?;
    let arr = match (ty, f) {
        (Ty::F64, _) | (Ty::I64, Sum | Prod) => arr,
        (Ty::I64, Nansum | Nanprod) if arr.ty == Ty::F64 => {
            let fill = if f == Nansum { 0.0 } else { 1.0 };
            let replaced = Expr::Select(
                un(UnOp::IsNan, arr.elem.clone()).boxed(),
                Expr::F64(fill).boxed(),
                arr.elem.clone().boxed(),
            );
            ArrayVal {
                elem: replaced,
                ..arr
            }
        }
        (Ty::I64, Nansum | Nanprod) => arr,
        _ => {
            let hint = match ty {
                Ty::Bool => "np.any(x) or np.all(x) for a logical reduction",
                _ => "leave dtype= out (the reduction computes in float64)",
            };
            return Err(t
                .err(
                    ErrorKind::Unsupported,
                    ds,
                    format!("np.{f}() with this dtype"),
                )
                .hint(hint));
        }
    };
    Ok(cast_array(arr, ty))
}

/// [`reduction`] of values already gathered, without a `dtype=`.
fn reduce_values(t: &mut Translator, base: Func, arr: ArrayVal, a: &mut Args) -> Result<Value> {
    let span = a.span;
    if let Some((_, ks)) = a.kw("keepdims").or(a.kw("out")).or(a.kw("where")) {
        return Err(t.err(
            ErrorKind::Unsupported,
            ks,
            "keepdims=, out= and where= are not supported in filters",
        ));
    }
    let n = t.stable(arr.len.clone(), Ty::I64);
    let nf = || convert(n.clone(), Ty::I64, Ty::F64);
    let f64_arr = |arr: &ArrayVal| ArrayVal {
        elem: convert(arr.elem.clone(), arr.ty, Ty::F64),
        ty: Ty::F64,
        ..arr.clone()
    };
    let is_nan = |arr: &ArrayVal| un(UnOp::IsNan, convert(arr.elem.clone(), arr.ty, Ty::F64));
    let nan_to = |arr: &ArrayVal, v: f64| ArrayVal {
        elem: Expr::Select(
            is_nan(arr).boxed(),
            Expr::F64(v).boxed(),
            convert(arr.elem.clone(), arr.ty, Ty::F64).boxed(),
        ),
        ty: Ty::F64,
        ..arr.clone()
    };
    let ddof = |t: &mut Translator, a: &mut Args| -> Result<Expr> {
        match a.pos.pop().or_else(|| a.kw("ddof")) {
            Some((d, ds)) => {
                let (e, ty) = t.scalar(d, ds, "ddof")?;
                Ok(convert(e, ty, Ty::F64))
            }
            None => Ok(Expr::F64(0.0)),
        }
    };
    // Extremes, ranks and sorted positions run over doubles: exact for ints up to 2**53.
    if arr.ty == Ty::I64 && ranks_values(base) {
        super::numpy::exact_ints(t, &arr, &format!("np.{base}"), span);
    }
    let f = |e: Expr| Ok(Value::Scalar(e, Ty::F64));
    let empty_msg =
        |op: &str| format!("zero-size array to reduction operation {op} which has no identity");
    match base {
        Sum | Nansum => {
            if arr.ty != Ty::F64 {
                let ints = ArrayVal {
                    elem: convert(arr.elem.clone(), arr.ty, Ty::I64),
                    ty: Ty::I64,
                    ..arr
                };
                return Ok(Value::Scalar(
                    t.reduce(ReduceOp::SumInt, &ints, span, None)?,
                    Ty::I64,
                ));
            }
            let src = if base == Nansum {
                nan_to(&arr, 0.0)
            } else {
                arr
            };
            f(t.reduce(ReduceOp::Sum, &src, span, None)?)
        }
        // NumPy multiplies integers (and bools) as int64, wrapping: never through doubles,
        // which round past 2**53.
        Prod | Nanprod if arr.ty != Ty::F64 => Ok(Value::Scalar(int_product(t, &arr)?, Ty::I64)),
        Prod | Nanprod => {
            let src = if base == Nanprod {
                nan_to(&arr, 1.0)
            } else {
                arr
            };
            f(t.reduce(ReduceOp::Prod, &src, span, None)?)
        }
        Mean => {
            let s = t.reduce(ReduceOp::Sum, &f64_arr(&arr), span, None)?;
            f(bin(BinOp::Div, s, nf()))
        }
        Nanmean => {
            let s = t.reduce(ReduceOp::Sum, &nan_to(&arr, 0.0), span, None)?;
            let c = count_valid(t, &arr, span)?;
            f(bin(BinOp::Div, s, convert(c, Ty::I64, Ty::F64)))
        }
        Var | Std => {
            let ddof = ddof(t, a)?;
            let x = f64_arr(&arr);
            let s = t.reduce(ReduceOp::Sum, &x, span, None)?;
            let mean = t.stable(bin(BinOp::Div, s, nf()), Ty::F64);
            let d = t.temp(Ty::F64);
            let _ = d;
            let dev = bin(BinOp::Sub, x.elem.clone(), mean);
            let sq = ArrayVal {
                elem: sq_expr(t, dev, &x),
                ..x.clone()
            };
            let ss = t.reduce(ReduceOp::Sum, &sq, span, None)?;
            let denom = bin(BinOp::Max, bin(BinOp::Sub, nf(), ddof), Expr::F64(0.0));
            let var = bin(BinOp::Div, ss, denom);
            f(if base == Std {
                un(UnOp::Sqrt, var)
            } else {
                var
            })
        }
        Nanvar | Nanstd => {
            let ddof = ddof(t, a)?;
            let cnt = count_valid(t, &arr, span)?;
            let cnt = convert(cnt, Ty::I64, Ty::F64);
            let s = t.reduce(ReduceOp::Sum, &nan_to(&arr, 0.0), span, None)?;
            let avg = t.stable(bin(BinOp::Div, s, cnt.clone()), Ty::F64);
            let x = f64_arr(&arr);
            let dev = bin(BinOp::Sub, x.elem.clone(), avg);
            let sq = sq_expr(t, dev, &x);
            let sq = ArrayVal {
                elem: Expr::Select(is_nan(&arr).boxed(), Expr::F64(0.0).boxed(), sq.boxed()),
                ..x.clone()
            };
            let ss = t.reduce(ReduceOp::Sum, &sq, span, None)?;
            let dof = t.stable(bin(BinOp::Sub, cnt, ddof), Ty::F64);
            let var = Expr::Select(
                cmp(CmpOp::Le, dof.clone(), Expr::F64(0.0)).boxed(),
                Expr::F64(f64::NAN).boxed(),
                bin(BinOp::Div, ss, dof).boxed(),
            );
            f(if base == Nanstd {
                un(UnOp::Sqrt, var)
            } else {
                var
            })
        }
        Min | Max => {
            let op = if base == Min {
                ReduceOp::Min
            } else {
                ReduceOp::Max
            };
            let e = t.reduce(
                op,
                &f64_arr(&arr),
                span,
                Some(&empty_msg(if base == Min { "minimum" } else { "maximum" })),
            )?;
            Ok(if arr.ty == Ty::F64 {
                zero_signs::guard(t, &arr, Shows::Result(&e), &format!("np.{base}"), span)?;
                Value::Scalar(e, Ty::F64)
            } else {
                Value::Scalar(
                    Expr::Cast(arr.ty.max(Ty::I64), e.boxed()),
                    arr.ty.max(Ty::I64),
                )
            })
        }
        Nanmin | Nanmax => {
            // fmin.reduce: NaN only when every element is NaN.
            let op = if base == Nanmin {
                ReduceOp::Min
            } else {
                ReduceOp::Max
            };
            let fill = if base == Nanmin {
                f64::INFINITY
            } else {
                f64::NEG_INFINITY
            };
            let r = t.reduce(
                op,
                &nan_to(&arr, fill),
                span,
                Some(&empty_msg(if base == Nanmin { "fmin" } else { "fmax" })),
            )?;
            let r = match r {
                Expr::Var(v) => v,
                _ => unreachable!(),
            };
            let (_, check) = t.nested(|t| {
                let c = count_valid(t, &arr, span)?;
                t.emit(Stmt::If(
                    cmp(CmpOp::Eq, c, Expr::I64(0)),
                    vec![Stmt::Assign(r, Expr::F64(f64::NAN))],
                    vec![],
                ));
                Ok(())
            })?;
            t.emit(Stmt::If(
                cmp(CmpOp::Eq, Expr::Var(r), Expr::F64(fill)),
                check,
                vec![],
            ));
            if arr.ty == Ty::F64 {
                // Over the values themselves: a NaN, which fmin/fmax skip, is no zero either.
                let name = format!("np.{base}");
                zero_signs::guard(t, &arr, Shows::Result(&Expr::Var(r)), &name, span)?;
            }
            f(Expr::Var(r))
        }
        Ptp => {
            let x = f64_arr(&arr);
            let hi = t.reduce(ReduceOp::Max, &x, span, Some(&empty_msg("maximum")))?;
            let lo = t.reduce(ReduceOp::Min, &x, span, Some(&empty_msg("minimum")))?;
            if arr.ty != Ty::F64 {
                // NumPy subtracts integers as int64 (and bools refuse to: see `binary`).
                let (hi, lo) = (convert(hi, Ty::F64, Ty::I64), convert(lo, Ty::F64, Ty::I64));
                let (hi, lo) = (Value::Scalar(hi, Ty::I64), Value::Scalar(lo, Ty::I64));
                let kind = if arr.ty == Ty::Bool {
                    Ty::Bool
                } else {
                    Ty::I64
                };
                let as_kind = |v: Value| match v {
                    Value::Scalar(e, _) => Value::Scalar(convert(e, Ty::I64, kind), kind),
                    v => v,
                };
                return t.binary(ast::BinOp::Sub, as_kind(hi), as_kind(lo), span);
            }
            let range = bin(BinOp::Sub, hi, lo);
            // Only a zero range shows the extremes' signs: both are then zeros.
            zero_signs::guard(t, &x, Shows::Result(&range), "np.ptp", span)?;
            f(range)
        }
        Median | Nanmedian => {
            let keep = if base == Nanmedian {
                Some(not(is_nan(&arr)))
            } else {
                None
            };
            let sorted = sorted_copy(t, &arr, keep);
            let dst = t.temp(Ty::F64);
            t.emit(Stmt::Sorted {
                dst,
                stat: SortedStat::Median,
                arr: sorted,
                q: Expr::F64(0.0),
            });
            f(Expr::Var(dst))
        }
        Percentile | Nanpercentile | Quantile | Nanquantile => {
            let Some((q, qs)) = a.pos.pop().or_else(|| a.kw("q")) else {
                return Err(t.err(ErrorKind::Arity, span, format!("{base}() needs q")));
            };
            if let Some((m, ms)) = a.kw("method").or(a.kw("interpolation")) {
                if !matches!(&m, Value::Str(s) if s == "linear") {
                    return Err(t.err(
                        ErrorKind::Unsupported,
                        ms,
                        "only the default 'linear' method is supported",
                    ));
                }
            }
            if arr.ty == Ty::Bool {
                // NumPy interpolates by subtracting, which it refuses for bools.
                let refusal = t
                    .err(ErrorKind::Type, span, format!("np.{base}() of bools"))
                    .hint("convert first: b.astype(int)");
                return Ok(t.refuse_by_type(refusal, Value::Scalar(Expr::F64(0.0), Ty::F64)));
            }
            let is_pct = matches!(base, Percentile | Nanpercentile);
            let (hi, msg) = if is_pct {
                (100.0, "Percentiles must be in the range [0, 100]")
            } else {
                (1.0, "Quantiles must be in the range [0, 1]")
            };
            let in_range = |q: Expr| {
                bin(
                    BinOp::And,
                    cmp(CmpOp::Ge, q.clone(), Expr::F64(0.0)),
                    cmp(CmpOp::Le, q, Expr::F64(hi)),
                )
            };
            // One q gives a number; several (`[75, 25]`, an array) an array of as many, each
            // checked before any is computed, as NumPy does.
            let qs_arr = match q {
                Value::Scalar(e, ty) => {
                    let q = t.stable(convert(e, ty, Ty::F64), Ty::F64);
                    t.check_plain(in_range(q.clone()), Exception::ValueError, msg, qs);
                    Err(q)
                }
                v @ (Value::Tuple(_) | Value::Array(_) | Value::List(..)) => {
                    let qa = t.array_of(v, qs)?;
                    let qa = t.materialize(&super::numpy::as_type(&qa, Ty::F64), None);
                    let probe = ArrayVal {
                        elem: not(in_range(qa.elem.clone())),
                        ty: Ty::Bool,
                        ..qa.clone()
                    };
                    let bad = t.reduce(ReduceOp::Any, &probe, qs, None)?;
                    t.check_plain(not(bad), Exception::ValueError, msg, qs);
                    Ok(qa)
                }
                _ => {
                    return Err(t
                        .err(
                            ErrorKind::Unsupported,
                            qs,
                            "q must be a number or a list of numbers",
                        )
                        .hint("e.g. np.percentile(x, 90) or np.percentile(x, [25, 75])"))
                }
            };
            let nan_variant = matches!(base, Nanpercentile | Nanquantile);
            if !nan_variant {
                t.check_plain(
                    cmp(CmpOp::Gt, n.clone(), Expr::I64(0)),
                    Exception::IndexError,
                    "index -1 is out of bounds for axis 0 with size 0",
                    span,
                );
            }
            let keep = if nan_variant {
                Some(not(is_nan(&arr)))
            } else {
                None
            };
            let sorted = sorted_copy(t, &arr, keep);
            let floats = arr.ty == Ty::F64;
            let quantile = |t: &mut Translator, q: Expr| -> Result<Expr> {
                let q = if is_pct {
                    bin(BinOp::Div, q, Expr::F64(100.0))
                } else {
                    q
                };
                let dst = t.temp(Ty::F64);
                t.emit(Stmt::Sorted {
                    dst,
                    stat: SortedStat::Quantile,
                    arr: sorted,
                    q,
                });
                if floats {
                    let (values, name) = (t.view(sorted), format!("np.{base}"));
                    zero_signs::guard(t, &values, Shows::Result(&Expr::Var(dst)), &name, span)?;
                }
                Ok(Expr::Var(dst))
            };
            match qs_arr {
                Err(q) => f(quantile(t, q)?),
                Ok(qa) => {
                    let out = super::numpy::tabulate(t, qa.len.clone(), "%quantiles", |t, k| {
                        Ok((quantile(t, qa.at(k))?, Ty::F64))
                    })?;
                    Ok(Value::Array(out))
                }
            }
        }
        Any | All => {
            let b = ArrayVal {
                elem: convert(arr.elem.clone(), arr.ty, Ty::Bool),
                ty: Ty::Bool,
                ..arr
            };
            let op = if base == Any {
                ReduceOp::Any
            } else {
                ReduceOp::All
            };
            Ok(Value::Scalar(t.reduce(op, &b, span, None)?, Ty::Bool))
        }
        CountNonzero => {
            let b = ArrayVal {
                elem: convert(arr.elem.clone(), arr.ty, Ty::Bool),
                ty: Ty::Bool,
                ..arr
            };
            Ok(Value::Scalar(
                t.reduce(ReduceOp::Count, &b, span, None)?,
                Ty::I64,
            ))
        }
        Argmin | Argmax => {
            let op = if base == Argmin {
                ReduceOp::ArgMin
            } else {
                ReduceOp::ArgMax
            };
            let msg = format!("attempt to get {base} of an empty sequence");
            Ok(Value::Scalar(
                t.reduce(op, &f64_arr(&arr), span, Some(&msg))?,
                Ty::I64,
            ))
        }
        _ => Err(t.err(
            ErrorKind::UnknownName,
            span,
            format!("np.{base} is not supported in filters"),
        )),
    }
}

/// `np.average(x, weights=w)`: NumPy multiplies and sums in float64 (whatever `x` and `w`
/// hold), and raises where the weights sum to zero.
fn weighted_average(
    t: &mut Translator,
    (x, xs): (Value, Span),
    (w, ws): (Value, Span),
    a: &mut Args,
) -> Result<Value> {
    let span = a.span;
    let x = super::numpy::as_type(&reduced_array(t, x, xs)?, Ty::F64);
    let w = super::numpy::as_type(&reduced_array(t, w, ws)?, Ty::F64);
    let xw = t.binary(
        ast::BinOp::Mul,
        Value::Array(x),
        Value::Array(w.clone()),
        span,
    )?;
    let xw = reduced_array(t, xw, span)?;
    let num = reduce_values(t, Sum, xw, a)?;
    let den = reduce_values(t, Sum, w, a)?;
    let (den, _) = t.scalar(den, ws, "the weights' sum")?;
    let den = t.stable(den, Ty::F64);
    t.check_plain(
        cmp(CmpOp::Ne, den.clone(), Expr::F64(0.0)),
        Exception::ZeroDivisionError,
        "Weights sum to zero, can't be normalized",
        ws,
    );
    t.binary(ast::BinOp::Div, num, Value::Scalar(den, Ty::F64), span)
}

/// The reductions that order the values (extremes, their positions, sorted positions), which
/// ndjit computes over doubles.
pub(super) fn ranks_values(f: Func) -> bool {
    matches!(
        f,
        Min | Max
            | Nanmin
            | Nanmax
            | Ptp
            | Median
            | Nanmedian
            | Percentile
            | Nanpercentile
            | Quantile
            | Nanquantile
            | Argmin
            | Argmax
    )
}

/// The product of integers or bools as NumPy's `multiply.reduce` computes it: in int64,
/// wrapping, from 1.
fn int_product(t: &mut Translator, arr: &ArrayVal) -> Result<Expr> {
    let ints = super::numpy::as_type(arr, Ty::I64);
    let len = t.stable(ints.len.clone(), Ty::I64);
    let acc = t.temp(Ty::I64);
    t.emit(Stmt::Assign(acc, Expr::I64(1)));
    counted_loop(t, len, |t, i| {
        t.emit(Stmt::Assign(
            acc,
            bin(BinOp::Mul, Expr::Var(acc), ints.at(i)),
        ));
        Ok(())
    })?;
    Ok(Expr::Var(acc))
}

/// `d * d` for a deviation, keeping `d` computed once per element.
fn sq_expr(_t: &mut Translator, dev: Expr, _x: &ArrayVal) -> Expr {
    bin(BinOp::Mul, dev.clone(), dev)
}

/// The number of non-NaN elements.
pub(super) fn count_valid(t: &mut Translator, arr: &ArrayVal, span: Span) -> Result<Expr> {
    let valid = ArrayVal {
        elem: not(un(UnOp::IsNan, convert(arr.elem.clone(), arr.ty, Ty::F64))),
        ty: Ty::Bool,
        ..arr.clone()
    };
    t.reduce(ReduceOp::Count, &valid, span, None)
}

/// A sorted f64 copy (of the elements where `keep` holds).
pub(super) fn sorted_copy(
    t: &mut Translator,
    arr: &ArrayVal,
    keep: Option<Expr>,
) -> crate::ir::Arr {
    let x = ArrayVal {
        elem: convert(arr.elem.clone(), arr.ty, Ty::F64),
        ty: Ty::F64,
        ..arr.clone()
    };
    let m = t.materialize(&x, keep);
    let slot = m.slot().unwrap();
    t.emit(Stmt::ArrayOp(ArrayOp::Sort, slot));
    slot
}

#[allow(dead_code)]
fn unsupported(t: &Translator, span: Span, what: &str) -> Error {
    t.err(ErrorKind::Unsupported, span, what.to_string())
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
/// Integers have no signed zero: their minimum or maximum.
fn clamp(t: &mut Translator, ty: Ty, upper: bool, x: Expr, bound: Expr) -> Expr {
    if ty != Ty::F64 {
        return bin(if upper { BinOp::Min } else { BinOp::Max }, x, bound);
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
