//! The functions, methods and constants a filter can use, and how each lowers.
//!
//! Calls arrive resolved to a typed [`Builtin`] (module and function, see `names.rs`, where
//! aliases such as `amax`, `absolute` and `asin` map to one function), so each operation has one
//! lowering, chosen by matching on variants in [`lower_call`]. The lowerings live by family:
//! NumPy's element-wise functions in `ufuncs`, arrays made and rearranged in `arrays`, reductions
//! in `reductions` and `quantiles`, Python's number builtins in `scalars`, its `min`, `max` and
//! `sum` in `python`, the `math` module in `math`, and the `statistics` module's medians in
//! `statistics`; NumPy's larger array functions are in `super::numpy`.

mod arrays;
mod closeness;
pub(super) mod collections;
mod math;
mod python;
mod quantiles;
mod reductions;
mod scalars;
mod statistics;
mod ufuncs;

pub(super) use arrays::sorted as sorted_array;
pub(super) use arrays::{cast_array, cast_elem, concat2, dtype_ty};
pub(super) use reductions::{count_valid, ranks_values, reduction, sorted_copy, takes_dtype};
pub(crate) use scalars::int_checks;

use super::expr::{bin, cmp};
use super::list_methods::ListMethod;
use super::names::Func::*;
use super::names::{self, Builtin, Module};
use super::provenance::Prov;
use super::strided_dots::Stride;
use super::value::{matrix_rows, ArrayVal, Value};
use super::{not, Translator};
use crate::error::{arity_message, ErrorKind, Result, Span};
use crate::ir::{BinOp, CmpOp, Expr, Stmt, Ty};
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
        // The methods a list and a tuple share that do not change them.
        Value::List(..) | Value::Tuple(_) if matches!(attr, "index" | "count") => {
            Ok(Value::Method(Box::new(base), attr.to_string()))
        }
        Value::List(..) if attr == "copy" => Ok(Value::Method(Box::new(base), attr.to_string())),
        Value::Counter(_) if attr == "most_common" => {
            Ok(Value::Method(Box::new(base), attr.to_string()))
        }
        Value::Counter(_) => Err(collections::refused(
            t,
            span,
            &format!("a Counter's `.{attr}`"),
        )),
        Value::List(..) | Value::Tuple(_) if ListMethod::named(attr).is_some() => {
            // (A list display that nothing changes in place is lowered as a tuple.)
            let m = ListMethod::named(attr).expect("matched above");
            let call = match m {
                ListMethod::Pop => {
                    "as a statement (`values.pop()`) or as the whole right side of an assignment \
                     (`v = values.pop()`)"
                }
                _ => "as a statement of its own",
            };
            Err(t
                .err(
                    ErrorKind::Unsupported,
                    span,
                    format!(
                        "`.{attr}()` changes the list in place: ndjit takes it on a list assigned \
                         to a local name, called {call}"
                    ),
                )
                .hint(
                    "e.g. `values = list(x)` then `values.sort()`; or use sorted(values), a \
                     comprehension or a slice",
                ))
        }
        Value::List(..) => Err(t
            .err(
                ErrorKind::Unsupported,
                span,
                format!("a list has no attribute `.{attr}` (NumPy arrays do)"),
            )
            .hint(format!("convert it first: np.array(values).{attr}"))),
        Value::Module(m) => module_attr(m, attr).ok_or_else(|| {
            let full = match m {
                Module::Np => "numpy",
                Module::Linalg => "numpy.linalg",
                Module::Statistics => "statistics",
                Module::Collections => "collections",
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
            } else if m == Module::Collections {
                "ndjit has collections.Counter, read as `Counter(data).most_common(1)[0]`"
            } else if m == Module::Statistics {
                "ndjit has statistics.median, median_low, median_high and mode; the module's \
                 other functions compute with exact fractions, which ndjit does not reproduce"
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
            let rows = matrix_rows(a.len.clone(), cols.clone());
            match attr {
                "size" => Ok(Value::Scalar(a.len, Ty::I64)),
                "shape" => Ok(Value::Tuple(vec![
                    Value::Scalar(rows, Ty::I64),
                    Value::Scalar(cols, Ty::I64),
                ])),
                "ndim" => Ok(Value::Scalar(Expr::I64(2), Ty::I64)),
                "T" if t.summed_transposes.contains(&span) => Err(t
                    .err(
                        ErrorKind::Unsupported,
                        span,
                        "`.T` of a 2-D array whose sum NumPy adds in memory order, column by column",
                    )
                    .hint("ndjit adds a transposed array's elements row by row (other rounding): sum the untransposed array, or index it as m[j, i]")),
                "T" => {
                    // Its rows are the columns: strided.
                    t.check_strided_view(span, (Stride::Positive, a.ty), true);
                    // Transposed view: element k of the result is (k % rows, k // rows) of the input.
                    let rows = t.stable(rows, Ty::I64);
                    let cols = t.stable(cols, Ty::I64);
                    let index = t.temp(Ty::I64);
                    let k = Expr::Var(index);
                    let safe_rows = bin(BinOp::Max, rows.clone(), Expr::I64(1));
                    let src = bin(
                        BinOp::Add,
                        bin(
                            BinOp::Mul,
                            bin(BinOp::Mod, k.clone(), safe_rows.clone()),
                            cols.clone(),
                        ),
                        bin(BinOp::FloorDiv, k, safe_rows),
                    );
                    let transposed = ArrayVal {
                        len: a.len.clone(),
                        ty: a.ty,
                        index,
                        elem: a.at(src),
                    };
                    // `(0, n).T` is `(n, 0)`.
                    Ok(t.matrix(transposed, cols, rows, span))
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
        Value::Scalar(e, ty) => scalar_attribute(t, e, ty, attr, span),
        other => Err(t.err(
            ErrorKind::Type,
            span,
            format!("{} has no attribute `{attr}`", other.describe()),
        )),
    }
}

/// `v.attr` of a number. NumPy's scalars have the array methods (`.sum()`, `.item()`,
/// `.astype()`); Python's numbers do not (`AttributeError`), so those are refused where the
/// number is, or may be, Python's.
fn scalar_attribute(t: &mut Translator, e: Expr, ty: Ty, attr: &str, span: Span) -> Result<Value> {
    /// The methods of Python's `float`, `int` and `bool` (the others are NumPy's alone).
    const PYTHON_METHODS: &[&str] = &[
        "is_integer",
        "conjugate",
        "as_integer_ratio",
        "hex",
        "bit_length",
        "bit_count",
        "to_bytes",
    ];
    let p = t.prov(&e);
    match attr {
        "real" => Ok(Value::Scalar(e, ty)),
        "imag" => {
            let flagged = t.int_flag(&e).is_some();
            t.refuse_int_or_float(flagged, span, "the receiver of .imag");
            // Zero of the number's own kind: a float's 0.0, an int's 0, a NumPy bool's False
            // (a Python bool is an int: its `.imag` is the int 0).
            let (zero, zero_ty) = match (ty, &p) {
                (Ty::F64, _) => (Expr::F64(0.0), Ty::F64),
                (Ty::I64, _) | (Ty::Bool, Prov::Py) => (Expr::I64(0), Ty::I64),
                (Ty::Bool, Prov::Np) => (Expr::Bool(false), Ty::Bool),
                (Ty::Bool, Prov::Dyn(_)) => {
                    return Err(t.err(
                        ErrorKind::Unsupported,
                        span,
                        "`.imag` of a bool that is Python's on one path and NumPy's on another",
                    ))
                }
            };
            Ok(Value::Scalar(t.with_prov(zero, zero_ty, p), zero_ty))
        }
        _ if p != Prov::Np && !PYTHON_METHODS.contains(&attr) => {
            let kind = match ty {
                Ty::F64 => "float",
                Ty::I64 => "int",
                Ty::Bool => "bool",
            };
            let what = if p == Prov::Py {
                format!("a Python {kind} has no attribute `.{attr}`")
            } else {
                format!("a number that may be a Python {kind} has no attribute `.{attr}`")
            };
            Err(t
                .err(ErrorKind::Type, span, what)
                .hint(format!("NumPy's scalars have it: np.float64(v).{attr}, or call np.{attr}(v) where NumPy has the function")))
        }
        _ => Ok(Value::Method(
            Box::new(Value::Scalar(e, ty)),
            attr.to_string(),
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
                arity_message(&self.name, &want, "positional ", n),
            ));
        }
        Ok(())
    }
    /// Lists and tuples, positional or keyword, made the arrays `np.asarray` makes of them.
    pub(super) fn sequences_as_arrays(&mut self, t: &mut Translator) -> Result<()> {
        let pos = self.pos.iter_mut().map(|(v, s)| (v, *s));
        for (v, s) in pos.chain(self.kw.iter_mut().map(|(_, v, s)| (v, *s))) {
            if matches!(v, Value::Tuple(_) | Value::List(..)) {
                *v = arrays::asarray(t, std::mem::replace(v, Value::None), s)?;
            }
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
                // Reductions along an axis take `axis` before this; the rest take none.
                ("axis", _) => format!(
                    "{}() along an axis is not supported: only axis=None (or 0 of a 1-D array)",
                    self.name
                ),
                _ => format!("{}() got an unsupported keyword argument `{n}`", self.name),
            };
            return Err(t.err(ErrorKind::Arity, *s, msg));
        }
        Ok(())
    }
    pub(super) fn take(&mut self) -> (Value, Span) {
        self.pos.remove(0)
    }
    /// The next argument of a parameter that may be given by position or by keyword `name`.
    pub(super) fn take_or_kw(&mut self, name: &str) -> Option<(Value, Span)> {
        match self.pos.is_empty() {
            true => self.kw(name),
            false => Some(self.take()),
        }
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
            let n = match (&*recv, m.as_str()) {
                // A list's `.copy()` is `list(v)`: a new list of the same items and kinds (NumPy's
                // `copy` would make it an array).
                (Value::List(..), "copy") => Some(Builtin {
                    module: Module::Builtin,
                    func: List,
                }),
                _ => names::method(&m),
            };
            let Some(n) = n else {
                if m == "sort" && matches!(*recv, Value::Array(_)) {
                    return Err(t
                        .err(
                            ErrorKind::Unsupported,
                            fspan,
                            "`.sort()` sorts the array in place and gives None: ndjit sorts \
                             a named array on a line of its own",
                        )
                        .hint(
                            "write `x.sort()` as a statement, or sort a copy: `y = np.sort(x)`",
                        ));
                }
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
    // A generator consumed by the call: Python runs it inside the call, after the other
    // arguments are evaluated, so its items are computed last.
    let mut generator = None;
    for a in args {
        if let ast::ExprKind::Comp(c) = &a.kind {
            if c.kind == ast::CompKind::Generator {
                let first = pos.is_empty() && generator.is_none();
                if !(first && super::comprehension::consumes_generator(name)) {
                    return Err(t.generator_elsewhere(a.span));
                }
                if matches!(name.func, Any | All) && args.len() == 1 && keywords.is_empty() {
                    return t.any_all_generator(name.func == Any, c);
                }
                generator = Some((c, a.span));
                continue;
            }
        }
        pos.push((t.expr(a)?, a.span));
    }
    for k in keywords {
        kw.push((k.name.clone(), t.expr(&k.value)?, k.span));
    }
    if let Some((c, s)) = generator {
        pos.insert(0, (t.list_comprehension(c, s)?, s));
    }
    let call = Call {
        name,
        span,
        receiver_was_array,
    };
    let flagged = pos
        .iter()
        .map(|(v, _)| v)
        .chain(kw.iter().map(|(_, v, _)| v))
        .any(|v| matches!(v, Value::Scalar(e, _) if t.int_flag(e).is_some()));
    if flagged && !takes_int_or_float(name, pos.len() + kw.len()) {
        return lower_by_kind(t, &call, pos, kw);
    }
    call.lower(t, pos, kw)
}

/// A call's identity, lowered by [`Call::lower`] once its arguments are evaluated.
struct Call {
    name: Builtin,
    span: Span,
    receiver_was_array: bool,
}

impl Call {
    fn lower(
        &self,
        t: &mut Translator,
        pos: Vec<(Value, Span)>,
        kw: Vec<(String, Value, Span)>,
    ) -> Result<Value> {
        let Call {
            name,
            span,
            receiver_was_array,
        } = *self;
        let nargs = pos.len() + kw.len();
        let mut a = Args {
            name: name.to_string(),
            pos,
            kw,
            span,
            _p: std::marker::PhantomData,
        };
        let v = lower_call(t, name, &mut a)?;
        a.done(t)?;
        // float(v) of an int held as a float is a float (`-float(0)` is -0.0).
        let v = match v {
            Value::Scalar(e, ty) if matches!(name.func, Float | Float64) => {
                Value::Scalar(t.float_only(e), ty)
            }
            v => v,
        };
        // NumPy functions and array methods return NumPy scalars; math.*, float(), int(), round()
        // len() and np.size() return Python numbers (see provenance.rs).
        use super::provenance::Prov;
        let python = match name.module {
            Module::Math => true,
            Module::Builtin => matches!(name.func, Float | Int | Round | Len | Bool | Any | All),
            // `is_integer()` is Python's method, also of a NumPy float: a Python bool.
            // ... and a list's or tuple's `.index()`/`.count()`, a Python int.
            Module::Method => matches!(name.func, Item | IsInteger | SeqIndex | SeqCount | Tolist),
            // np.allclose is `bool(np.all(np.isclose(...)))`.
            Module::Np => matches!(name.func, Size | Allclose),
            // The statistics module's medians are items of the data, or their mean, of the
            // items' own kind.
            // A Counter is no number; its pairs are built where they are read.
            Module::Linalg | Module::Statistics | Module::Collections => false,
        };
        let numpy = !python
            && (matches!(name.module, Module::Np | Module::Linalg | Module::Method)
                || receiver_was_array);
        Ok(match v {
            // round(x, n) keeps x's kind (see python_or_numpy_round; `round(np.int64(3), 0)`
            // is NumPy's int); round(x) of a float is a Python int.
            Value::Scalar(_, ty)
                if name.module == Module::Builtin
                    && name.func == Round
                    && (ty == Ty::F64 || nargs == 2) =>
            {
                v
            }
            Value::Scalar(e, ty) if python => Value::Scalar(t.with_prov(e, ty, Prov::Py), ty),
            v if numpy => t.as_numpy(v),
            v => v,
        })
    }
}

/// A call given numbers that may be ints held as floats (see `int_or_float.rs`), of a function
/// whose result depends on which (`np.sign`, `np.maximum`, `round(r, n)` ...): lowered for ints
/// where every number holds one, for floats otherwise (NumPy's promotion: one float makes
/// the computation a float one). With an array argument the result's dtype would depend on
/// the path: refused.
fn lower_by_kind(
    t: &mut Translator,
    call: &Call,
    pos: Vec<(Value, Span)>,
    kw: Vec<(String, Value, Span)>,
) -> Result<Value> {
    let what = format!("passed to {}()", call.name);
    let values = || {
        pos.iter()
            .map(|(v, _)| v)
            .chain(kw.iter().map(|(_, v, _)| v))
    };
    let arrays = values().any(|v| {
        matches!(
            v,
            Value::Array(_) | Value::Matrix(..) | Value::List(..) | Value::Tuple(_)
        )
    });
    if arrays {
        t.refuse_int_or_float(true, call.span, &format!("{what} with an array"));
        return call.lower(t, pos, kw);
    }
    let scalars: Vec<(Expr, Ty)> = values()
        .filter_map(|v| match v {
            Value::Scalar(e, ty) => Some((e.clone(), *ty)),
            _ => None,
        })
        .collect();
    let ints = t.ints_by_flag(&scalars.iter().map(|(e, ty)| (e, *ty)).collect::<Vec<_>>());
    // Each argument as an int and as a float (the same value where it is not flagged).
    let mut view = |v: Value| match v {
        Value::Scalar(e, ty) => {
            let (i, f) = t.int_and_float_views(e, ty);
            (Value::Scalar(i.0, i.1), Value::Scalar(f.0, f.1))
        }
        v => (v.clone(), v),
    };
    let (mut pos_i, mut pos_f) = (vec![], vec![]);
    for (v, s) in pos {
        let (i, f) = view(v);
        pos_i.push((i, s));
        pos_f.push((f, s));
    }
    let (mut kw_i, mut kw_f) = (vec![], vec![]);
    for (n, v, s) in kw {
        let (i, f) = view(v);
        kw_i.push((n.clone(), i, s));
        kw_f.push((n, f, s));
    }
    let Some(ints) = ints else {
        return call.lower(t, pos_f, kw_f);
    };
    let number = |t: &mut Translator, v: Value| match v {
        Value::Scalar(e, ty) => (e, ty),
        _ => {
            t.refuse_int_or_float(true, call.span, &format!("{what} (not a number)"));
            (Expr::F64(0.0), Ty::F64)
        }
    };
    let (r, ty) = t.int_or_float(
        ints,
        call.span,
        |t| {
            let v = call.lower(t, pos_i, kw_i)?;
            Ok(number(t, v))
        },
        |t| {
            let v = call.lower(t, pos_f, kw_f)?;
            Ok(number(t, v))
        },
    )?;
    Ok(Value::Scalar(r, ty))
}

/// Lowers a call of a builtin: to the lowering of NumPy's larger array functions, or to this
/// module's, one function per builtin or family of builtins.
fn lower_call(t: &mut Translator, name: Builtin, a: &mut Args) -> Result<Value> {
    use Module::{Math, Method, Np};
    if let Some(r) = super::numpy::lower(t, name, a) {
        return r;
    }
    let Builtin { module, func } = name;
    // math.*: scalars only, with CPython's domain and range errors.
    if module == Math {
        return math::call(t, name, a);
    }
    // (A method's receiver is an array: a list or tuple has none of these methods.)
    if matches!(module, Np | Method) && ufuncs::is_elementwise(func) {
        a.sequences_as_arrays(t)?;
    }
    if let Some(f) = ufuncs::unary_math(func).filter(|_| module == Np || func == Abs) {
        return ufuncs::unary(t, (func, module == Np), f, a);
    }
    if let Some(m) = ufuncs::binary_math(func).filter(|_| module == Np) {
        return ufuncs::binary(t, func, m, a);
    }
    match (module, func) {
        (Np, IsNan | IsInf | IsFinite) => ufuncs::classify(t, func, a),
        (Np, Rint) => ufuncs::rint(t, a),
        (Np, Sign) => ufuncs::sign(t, a),
        (Np, Square | Negative | Reciprocal | Degrees | Radians | LogicalNot) => {
            ufuncs::simple_unary(t, func, a)
        }
        (Np, Round) => ufuncs::np_round(t, a),
        (
            Np,
            Minimum | Maximum | Fmin | Fmax | Add | Subtract | Multiply | Divide | Remainder
            | FloorDivide | Equal | NotEqual | Less | LessEqual | Greater | GreaterEqual
            | LogicalAnd | LogicalOr | LogicalXor,
        ) => ufuncs::pairwise(t, func, a),
        (Np, Where) => ufuncs::np_where(t, a),
        (Np, Isclose | Allclose) => closeness::isclose(t, func == Allclose, a),
        (Np, NanToNum) => closeness::nan_to_num(t, a),
        (Np, Clip) => ufuncs::clip(t, a, ufuncs::ClipForm::Function),
        (Method, Clip) => ufuncs::clip(t, a, ufuncs::ClipForm::Method),
        (Np, Array | AsArray | Ravel) => arrays::array(t, func, a),
        (Np, CopyOf) => arrays::copy(t, a),
        (Module::Statistics, Mode) => statistics::mode(t, a),
        (Module::Collections, Counter) => collections::counter(t, a),
        (Method, MostCommon) => collections::most_common(t, a),
        (Module::Statistics, _) => statistics::median(t, func, a),
        (Np, Shape | Ndim) => arrays::shape_or_ndim(t, func, a),
        (Method, Astype) => arrays::astype_method(t, a),
        (Method | Np, Reshape) => arrays::reshape_call(t, a),
        (Np, Bincount) => arrays::bincount(t, a),
        (Method, Item) => arrays::item(t, a),
        (Method, Tolist) => super::lists::tolist(t, a),
        (Method, IsInteger) => scalars::is_integer(t, a),
        (Np, Delete) => arrays::delete(t, a),
        (Np, Concatenate) => arrays::concatenate(t, a),
        (Np, Sort) => arrays::sort(t, a),
        (Np, Flip) => arrays::flip(t, a),
        (Np, Diff) => arrays::diff(t, a),
        (Np, Dot) => {
            a.arity(t, 2, 2)?;
            let x = a.take();
            let y = a.take();
            super::numpy::linalg::dot(t, x, y, a.span)
        }
        (Np, Average) => reductions::average(t, a),
        (Np, Size) | (Module::Builtin, Len) => arrays::size_or_len(t, func, a),
        (Module::Builtin, Abs) => unreachable!("handled with the unary math functions"),
        (Module::Builtin, Float | Int | Bool) => scalars::cast_call(t, func, a),
        // NumPy scalar constructors: the same conversions, but the result is a NumPy scalar.
        (Np, Float64) => scalars::cast_call(t, Float, a),
        (Np, Int64) => scalars::cast_call(t, Int, a),
        (Np, BoolScalar) => scalars::cast_call(t, Bool, a),
        (Module::Builtin, Round) => scalars::py_round(t, a),
        (Module::Builtin, Pow) => scalars::py_pow(t, a),
        (Module::Builtin, Min | Max) => python::min_max(t, func, a),
        (Module::Builtin, Sorted) => super::lists::sorted(t, a),
        (Module::Builtin, Set | Frozenset) => collections::set(t, func, a),
        (Method, SeqIndex | SeqCount) => super::lists::index_or_count(t, func, a),
        (Module::Builtin | Np, Divmod) => python::divmod(t, module == Np, a),
        // A tuple of numbers made at run time reads like a list (both are immutable here).
        (Module::Builtin, List | TupleOf) => super::lists::list(t, a),
        (Module::Builtin, Sum) => python::sum(t, a),
        (Module::Builtin, Any | All) => {
            a.arity(t, 1, 1)?;
            let (v, s) = a.take();
            if let Value::Matrix(..) = v {
                // Python's any() iterates the rows, each an array whose truth is ambiguous.
                return Err(t
                    .err(
                        ErrorKind::Type,
                        s,
                        format!(
                            "{func}() of a 2-D array tests each row, whose truth value is ambiguous"
                        ),
                    )
                    .hint("use np.any(...) or np.all(...), or .any()/.all()"));
            }
            if let Value::Scalar(_, ty) = v {
                // (NumPy's np.any takes a number as a one-element array; Python's does not.)
                let what = Value::Scalar(Expr::Bool(false), ty).describe();
                return Err(t.err(
                    ErrorKind::Type,
                    s,
                    format!("{func}() takes an iterable, and {what} is not iterable"),
                ));
            }
            reduction(t, func, v, s, a)
        }
        (Np, _) => {
            a.arity(t, 1, 2)?;
            let (v, s) = a.take();
            reduction(t, func, v, s, a)
        }
        _ => Err(t.err(
            ErrorKind::UnknownName,
            a.span,
            format!("`{name}` cannot be called here"),
        )),
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

/// Whether a call of `nargs` arguments computes the same for an int as for the float holding
/// it exactly, or branches on which it is (see `int_or_float.rs`): Python's conversions, `abs`,
/// `min`/`max` of numbers and `pow` (which branch), `round` to an int, `math.*` (floats in),
/// and NumPy's functions that compute in floats whatever they are given.
fn takes_int_or_float(name: Builtin, nargs: usize) -> bool {
    match name.module {
        // (math.floor, ceil and trunc call the number's own method: NumPy's ints lack them.)
        Module::Math => !matches!(name.func, Floor | Ceil | Trunc),
        Module::Builtin => match name.func {
            Float | Int | Bool | Abs | Min | Max | Pow => true,
            Round => nargs == 1,
            _ => false,
        },
        Module::Np => {
            matches!(ufuncs::unary_math(name.func), Some((Some(_), None)))
                || matches!(
                    name.func,
                    Sqrt | IsNan
                        | IsInf
                        | IsFinite
                        | Isclose
                        | Allclose
                        | Divide
                        | Arctan2
                        | Hypot
                        | CopySign
                        | Degrees
                        | Radians
                        | Float64
                )
        }
        Module::Method | Module::Linalg | Module::Statistics | Module::Collections => false,
    }
}
