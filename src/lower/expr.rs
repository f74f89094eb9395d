//! Lowering of expressions: operators, comparisons, indexing, and the array algebra.

use super::builtins;
use super::provenance::Prov;
use super::strided_dots::Stride;
use super::value::{ArrayVal, ElemKind, Value};
use super::{not, ItemKinds, Iterable, Seq, Translator};
use crate::error::{ErrorKind, Exception, Result, Span};
use crate::ir::{self, BinOp, CmpOp, Expr, ReduceOp, Stmt, Ty, UnOp};
use crate::math::MathFn;
use crate::syntax::ast::{self, ExprKind};

/// Converts a scalar expression between types (Python's implicit promotions).
pub(crate) fn convert(e: Expr, from: Ty, to: Ty) -> Expr {
    if from == to {
        e
    } else {
        Expr::Cast(to, e.boxed())
    }
}

pub(crate) fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    Expr::Binary(op, a.boxed(), b.boxed())
}

pub(crate) fn cmp(op: CmpOp, a: Expr, b: Expr) -> Expr {
    Expr::Cmp(op, a.boxed(), b.boxed())
}

pub(crate) fn un(op: UnOp, a: Expr) -> Expr {
    Expr::Unary(op, a.boxed())
}

/// The scalar operation that `Translator::elementwise` applies to each element: it gets the
/// operands' typed expressions and whether any operand was an array.
pub(crate) type ScalarOp<'t, 'a> =
    dyn FnMut(&mut Translator<'t>, Vec<(Expr, Ty)>, bool) -> Result<(Expr, Ty)> + 'a;

/// Where an operand of extent `extent` along an axis is read at position `at` of a result of
/// extent `full`: at `at`, or at 0 where it is broadcast (extent 1, NumPy's stride 0).
pub(super) fn repeat_unless_full(extent: &Expr, full: &Expr, at: Expr) -> Expr {
    match extent {
        _ if extent == full => at,
        Expr::I64(1) => Expr::I64(0),
        _ => Expr::Select(
            cmp(CmpOp::Eq, extent.clone(), Expr::I64(1)).boxed(),
            Expr::I64(0).boxed(),
            at.boxed(),
        ),
    }
}

impl<'p> Translator<'p> {
    pub(crate) fn expr(&mut self, e: &ast::Expr) -> Result<Value> {
        crate::with_stack(|| self.expr_inner(e))
    }

    fn expr_inner(&mut self, e: &ast::Expr) -> Result<Value> {
        Ok(match &e.kind {
            ExprKind::Name(n) => self.read_name(n, e.span)?,
            ExprKind::Int(v) => Value::Scalar(Expr::I64(*v), Ty::I64),
            ExprKind::Float(v) => Value::Scalar(Expr::F64(*v), Ty::F64),
            ExprKind::Bool(v) => Value::Scalar(Expr::Bool(*v), Ty::Bool),
            ExprKind::None => Value::None,
            ExprKind::Ellipsis => Value::Ellipsis,
            ExprKind::Str(s) => Value::Str(s.clone()),
            ExprKind::FString(_) => {
                return Err(self
                    .err(
                        ErrorKind::Unsupported,
                        e.span,
                        "an f-string with fields is supported only as the message of `raise` \
                         or `assert` (where its fields are not filled in)",
                    )
                    .hint("compare or pass the values themselves, not text made from them"))
            }
            ExprKind::Tuple(items) | ExprKind::List(items) => {
                Value::Tuple(items.iter().map(|i| self.expr(i)).collect::<Result<_>>()?)
            }
            ExprKind::Unary(ast::UnaryOp::Not, x) => {
                let c = self.condition(x)?;
                self.python_not(c)
            }
            ExprKind::Unary(op, x) => {
                if self.is_coordinates(x) {
                    return Err(self.coordinates_arithmetic(e.span));
                }
                let v = self.expr(x)?;
                self.unary(*op, v, e.span)?
            }
            ExprKind::Binary(op, a, b) => {
                if self.is_coordinates(a) || self.is_coordinates(b) {
                    return Err(self.coordinates_arithmetic(e.span));
                }
                let a = self.expr(a)?;
                let b = self.expr(b)?;
                self.binary(*op, a, b, e.span)?
            }
            ExprKind::BoolOp(op, items) => self.bool_op(*op, items)?,
            ExprKind::Compare(first, rest) => self.compare(first, rest, e.span)?,
            ExprKind::IfExp { test, body, orelse } => self.if_exp(test, body, orelse, e.span)?,
            ExprKind::Call {
                func,
                args,
                keywords,
            } => match self.expr(func)? {
                Value::Helper(k) => self.call_helper(k, args, keywords, e.span)?,
                Value::Typing(true) => self.typing_cast(args, keywords, e.span)?,
                f => builtins::call(self, f, args, keywords, e.span, func.span)?,
            },
            ExprKind::Attribute(base, attr) => {
                if let Some(v) = self.bound_attribute(base, attr) {
                    if let ExprKind::Name(n) = &base.kind {
                        let name = format!("{n}.{attr}");
                        if self.summed_transposes.contains(&e.span) {
                            return Err(self.summed_fortran(&name, e.span));
                        }
                        self.check_strided_binding(&name, e.span)?;
                    }
                    return Ok(v);
                }
                let b = self.expr(base)?;
                if matches!(b, Value::Typing(false)) && attr == "cast" {
                    return Ok(Value::Typing(true));
                }
                builtins::attribute(self, b, attr, e.span)?
            }
            ExprKind::Subscript(base, index) => {
                let b = self.expr(base)?;
                self.subscript(b, index, e.span)?
            }
            ExprKind::Slice(..) => {
                return Err(self.err(
                    ErrorKind::Syntax,
                    e.span,
                    "a slice is only valid inside [ ]",
                ))
            }
            ExprKind::Comp(c) => match c.kind {
                ast::CompKind::List => self.list_comprehension(c, e.span)?,
                ast::CompKind::Generator => return Err(self.generator_elsewhere(e.span)),
            },
            ExprKind::Lambda(_) => {
                return Err(self
                    .err(
                        ErrorKind::Unsupported,
                        e.span,
                        "nested functions and lambdas are not supported",
                    )
                    .hint("inline the expression"))
            }
            ExprKind::Unsupported(what) => {
                return Err(self.err(
                    ErrorKind::Unsupported,
                    e.span,
                    format!("{what} are not supported"),
                ))
            }
        })
    }

    /// Requires a number; `what` names the value in the error.
    pub(crate) fn scalar(&mut self, v: Value, span: Span, what: &str) -> Result<(Expr, Ty)> {
        match v {
            Value::Scalar(e, t) => Ok((e, t)),
            Value::Array(_) => Err(self
                .err(
                    ErrorKind::Type,
                    span,
                    format!("{what} must be a number, but this is an array"),
                )
                .hint("reduce it first, e.g. np.sum(...), np.mean(...) or x[i]")),
            // Python takes a Counter in some of these places (`c and v`, `bool(c)`, `c == d`):
            // refused, not called a type error.
            c @ (Value::Counter(_) | Value::MostCommon(_)) => {
                let used = format!("{} as {what}", c.describe());
                Err(super::builtins::collections::refused(self, span, &used))
            }
            other => Err(self.err(
                ErrorKind::Type,
                span,
                format!("{what} must be a number, not {}", other.describe()),
            )),
        }
    }

    /// A float-valued scalar.
    pub(crate) fn float(&mut self, v: Value, span: Span, what: &str) -> Result<Expr> {
        let (e, t) = self.scalar(v, span, what)?;
        Ok(convert(e, t, Ty::F64))
    }

    /// An integer-valued scalar (bools count as ints, floats are an error).
    pub(crate) fn int(&mut self, v: Value, span: Span, what: &str) -> Result<Expr> {
        let (e, t) = self.int_typed(v, span, what)?;
        // NumPy 2's bool has no `__index__`: where Python wants an int (a size, a slice bound,
        // an index) it raises; Python's bool is an int.
        let python = self.prov(&e).flag();
        if t == Ty::Bool && python != Expr::Bool(true) {
            self.check_plain(
                python,
                Exception::TypeError,
                "'numpy.bool' object cannot be interpreted as an integer",
                span,
            );
        }
        Ok(e)
    }

    /// [`Translator::int`], but a NumPy bool is taken as its int (`np.roll`'s shift).
    pub(crate) fn int_or_numpy_bool(&mut self, v: Value, span: Span, what: &str) -> Result<Expr> {
        Ok(self.int_typed(v, span, what)?.0)
    }

    /// An int or a bool as an int, and its type before the conversion; a float is an error.
    fn int_typed(&mut self, v: Value, span: Span, what: &str) -> Result<(Expr, Ty)> {
        let (e, t) = self.scalar(v, span, what)?;
        if t == Ty::F64 {
            return Err(self
                .err(
                    ErrorKind::Type,
                    span,
                    format!("{what} must be an integer, not a float"),
                )
                .hint(self.int_hint("use int(...)")));
        }
        Ok((convert(e, t, Ty::I64), t))
    }

    /// The truth of `test` where only its truth is used (`if`, `while`, `not`, `assert`, a
    /// conditional's or a comprehension's test). `a and b` then needs each operand's truth only:
    /// a bool and a number (`k < n and x[k]`) are not joined into one value (which refuses
    /// them), and the operands after one that decides are not evaluated, as in Python.
    pub(crate) fn condition(&mut self, test: &ast::Expr) -> Result<Expr> {
        if let Some(truth) = self.sentinel_truth(test)? {
            return Ok(truth);
        }
        let ExprKind::BoolOp(op, items) = &test.kind else {
            let v = self.expr(test)?;
            return self.truth(v, test.span);
        };
        let and = *op == ast::BoolOp::And;
        let o = if and { BinOp::And } else { BinOp::Or };
        let mut acc = self.condition(&items[0])?;
        for item in &items[1..] {
            let (rhs, stmts) = self.nested(|t| t.condition(item))?;
            if stmts.is_empty() {
                acc = bin(o, acc, rhs);
                continue;
            }
            // The next operand's statements (its checks) run only where it is evaluated.
            let (acc0, r) = (self.stable(acc, Ty::Bool), self.temp(Ty::Bool));
            let mut evaluated = stmts;
            evaluated.push(Stmt::Assign(r, rhs));
            let decided = vec![Stmt::Assign(r, Expr::Bool(!and))];
            let (then, els) = if and {
                (evaluated, decided)
            } else {
                (decided, evaluated)
            };
            self.emit(Stmt::If(acc0, then, els));
            acc = Expr::Var(r);
        }
        Ok(acc)
    }

    /// Python truthiness of a condition.
    pub(crate) fn truth(&mut self, v: Value, span: Span) -> Result<Expr> {
        match v {
            Value::Scalar(e, t) => Ok(convert(e, t, Ty::Bool)),
            Value::None => Ok(Expr::Bool(false)),
            Value::Tuple(items) => Ok(Expr::Bool(!items.is_empty())),
            Value::List(a, _) => Ok(cmp(CmpOp::Ne, a.len, Expr::I64(0))),
            // A Counter counts something, and its list of pairs (`most_common(n)`, `n` at least
            // 1) holds one, exactly where its data is not empty.
            Value::Counter(c) | Value::MostCommon(c)
                if matches!(c.0, Value::Array(_) | Value::List(..)) =>
            {
                let (Value::Array(a) | Value::List(a, _)) = c.0 else {
                    unreachable!()
                };
                Ok(cmp(CmpOp::Ne, a.len, Expr::I64(0)))
            }
            Value::Array(_) => Err(self
                .err(
                    ErrorKind::Type,
                    span,
                    "the truth value of an array with more than one element is ambiguous",
                )
                .hint("use .any() or .all(), or test len(...)")),
            other => Err(self.err(
                ErrorKind::Type,
                span,
                format!("cannot use {} as a condition", other.describe()),
            )),
        }
    }

    /// The array NumPy makes of a value (`np.asarray`), where its dtype matters. NumPy's array
    /// of an empty list is float64 whatever the list was given, where ndjit's list of ints or
    /// bools keeps its type: such a list that is empty at run time raises.
    pub(crate) fn numpy_array_of(&mut self, v: Value, span: Span) -> Result<ArrayVal> {
        if let Value::List(a, _) = &v {
            if a.ty != Ty::F64 {
                let message = format!(
                    "NumPy's array of an empty list is float64, and this list of {}s is \
                     compiled as {}: make its items floats (float(v)) to compute with it empty",
                    a.ty.name(),
                    a.ty.numpy_name()
                );
                self.check_plain(
                    cmp(CmpOp::Ne, a.len.clone(), Expr::I64(0)),
                    Exception::ValueError,
                    &message,
                    span,
                );
            }
        }
        self.array_of(v, span)
    }

    /// Converts tuples/lists of numbers into arrays; arrays pass through.
    pub(crate) fn array_of(&mut self, v: Value, span: Span) -> Result<ArrayVal> {
        match v {
            Value::Array(a) | Value::Matrix(a, _) | Value::List(a, _) => Ok(a),
            Value::Tuple(items) => {
                let mut elems = Vec::new();
                let mut ty = Ty::Bool;
                for it in items {
                    if matches!(it, Value::Tuple(_) | Value::List(..)) {
                        return Err(self
                            .err(
                                ErrorKind::Unsupported,
                                span,
                                "a tuple or list of tuples is supported only as what a `for` loop or a comprehension iterates over directly (`for a, b in pairs:`), with items of one length",
                            )
                            .hint("loop over it directly, or build a 2-D array: `np.array(...)`"));
                    }
                    let (e, t) = self.scalar(it, span, "an item of a sequence")?;
                    let e = self.stable(e, t);
                    ty = ty.max(t);
                    elems.push((e, t));
                }
                let index = self.temp(Ty::I64);
                // elem(i) = i == 0 ? e0 : i == 1 ? e1 : ... (pure, so it can stay lazy)
                let mut elem = match elems.last() {
                    Some((e, t)) => convert(e.clone(), *t, ty),
                    None => Expr::F64(0.0),
                };
                for (k, (e, t)) in elems.iter().enumerate().rev().skip(1) {
                    elem = Expr::Select(
                        cmp(CmpOp::Eq, Expr::Var(index), Expr::I64(k as i64)).boxed(),
                        convert(e.clone(), *t, ty).boxed(),
                        elem.boxed(),
                    );
                }
                if ty != Ty::Bool && elems.iter().any(|(e, t)| self.is_numpy_bool(e, *t)) {
                    self.refuse_bool_join(span);
                }
                // A Python list of ints and floats keeps each item's kind; NumPy's array of
                // them is an int array or a float one, by path.
                let flagged = elems.iter().any(|(e, _)| self.int_flag(e).is_some());
                self.refuse_int_or_float(flagged, span, "an item of a sequence");
                let ty = if elems.is_empty() { Ty::F64 } else { ty };
                Ok(ArrayVal {
                    len: Expr::I64(elems.len() as i64),
                    ty,
                    index,
                    elem,
                })
            }
            // Python iterates both (a Counter's keys, the list's pairs): not a type error.
            c @ (Value::Counter(_) | Value::MostCommon(_)) => {
                let what = format!("{} read as a sequence (its len(), its items)", c.describe());
                Err(super::builtins::collections::refused(self, span, &what))
            }
            other => Err(self.err(
                ErrorKind::Type,
                span,
                format!("expected an array, got {}", other.describe()),
            )),
        }
    }

    /// Applies a scalar function element-wise when any operand is an array, broadcasting as
    /// NumPy does and checking the extents at run time.
    pub(crate) fn elementwise(
        &mut self,
        args: Vec<Value>,
        span: Span,
        f: &mut ScalarOp<'p, '_>,
    ) -> Result<Value> {
        let two_d = args.iter().any(|a| matches!(a, Value::Matrix(..)));
        if !two_d && !args.iter().any(|a| matches!(a, Value::Array(_))) {
            let mut scalars = Vec::new();
            for a in args {
                scalars.push(self.scalar(a, span, "an operand")?);
            }
            let (e, t) = f(self, scalars, false)?;
            return Ok(Value::Scalar(e, t));
        }
        // Array operands (with their column count where 2-D), and each operand's slot: `None`
        // for an array, in order, or its scalar.
        let index = self.temp(Ty::I64);
        let mut arrays = Vec::new();
        let mut operands = Vec::new();
        for a in args {
            match a {
                Value::Matrix(arr, cols) => {
                    operands.push(None);
                    arrays.push((arr, Some(cols)));
                }
                Value::Array(_) | Value::Tuple(_) | Value::List(..) => {
                    let arr = self.array_of(a, span)?;
                    operands.push(None);
                    arrays.push((arr, None));
                }
                other => {
                    let (e, t) = self.scalar(other, span, "an operand")?;
                    operands.push(Some((self.stable(e, t), t)));
                }
            }
        }
        // With an int or bool array, NumPy's result is an int array or a float one, by path.
        let int_arrays = arrays.iter().any(|(a, _)| a.ty != Ty::F64);
        let flagged = operands
            .iter()
            .any(|op| matches!(op, Some((e, _)) if self.int_flag(e).is_some()));
        self.refuse_int_or_float(int_arrays && flagged, span, "with an int array");
        let (len, cols, positions) = if two_d {
            let (len, rows, cols, positions) = self.broadcast_2d(&arrays, index, span);
            (len, Some((rows, cols)), positions)
        } else {
            let flat: Vec<&ArrayVal> = arrays.iter().map(|(a, _)| a).collect();
            let (len, positions) = self.broadcast_1d(&flat, index, span);
            (len, None, positions)
        };
        let mut read = arrays.iter().zip(positions);
        let elems = operands
            .into_iter()
            .map(|op| {
                op.unwrap_or_else(|| {
                    let ((arr, _), at) = read.next().expect("an array per array operand");
                    (arr.at(at), arr.ty)
                })
            })
            .collect();
        self.in_elementwise += 1;
        let r = f(self, elems, true);
        self.in_elementwise -= 1;
        let (elem, ty) = r?;
        let result = ArrayVal {
            len,
            ty,
            index,
            elem,
        };
        Ok(match cols {
            Some((rows, cols)) => self.matrix(result, rows, cols, span),
            None => Value::Array(result),
        })
    }

    /// NumPy's broadcasting of 1-D operands: equal lengths, or a length-1 operand repeated (read
    /// at 0, NumPy's stride-0 broadcast). The result's length, and where each operand is read
    /// for element `index`.
    fn broadcast_1d(
        &mut self,
        arrays: &[&ArrayVal],
        index: ir::Var,
        span: Span,
    ) -> (Expr, Vec<Expr>) {
        const MESSAGE: &str = "operands could not be broadcast together with shapes ({a},) ({b},)";
        let lens = arrays.iter().map(|a| a.len.clone()).collect();
        let len = self.broadcast_extent(lens, MESSAGE, span);
        let at = arrays
            .iter()
            .map(|a| repeat_unless_full(&a.len, &len, Expr::Var(index)))
            .collect();
        (len, at)
    }

    /// A 2-D array of `rows` rows of `cols` elements, checked by
    /// [`Translator::check_matrix_shape`].
    pub(crate) fn matrix(&mut self, arr: ArrayVal, rows: Expr, cols: Expr, span: Span) -> Value {
        self.check_matrix_shape(&rows, &cols, span);
        Value::Matrix(arr, cols)
    }

    /// ndjit keeps a 2-D array as its elements and its column count, its rows being the
    /// elements over the columns (`value::matrix_rows`, which every reader of a `Value::Matrix`
    /// uses): a shape `(n, 0)` with `n > 0` would lose its rows (NumPy's `len()` is `n`), so
    /// it is refused where it arises, a `ValueError` at run time.
    pub(crate) fn check_matrix_shape(&mut self, rows: &Expr, cols: &Expr, span: Span) {
        let has_columns = matches!(cols, Expr::I64(c) if *c != 0);
        if has_columns || *rows == Expr::I64(0) {
            return;
        }
        self.check(
            bin(
                BinOp::Or,
                cmp(CmpOp::Ne, cols.clone(), Expr::I64(0)),
                cmp(CmpOp::Eq, rows.clone(), Expr::I64(0)),
            ),
            Exception::ValueError,
            "a 2-D array of shape ({a}, 0), rows without elements: ndjit keeps a 2-D array's \
             rows as its size over its columns and cannot represent it",
            span,
            rows.clone(),
            Expr::I64(0),
        );
    }

    /// NumPy's broadcasting where an operand is 2-D: a 1-D operand of length `n` is a row of
    /// shape `(1, n)`, and each axis broadcasts on its own. The result's length (its elements in
    /// row-major order), its row and column counts, and where each operand is read for element
    /// `index`.
    fn broadcast_2d(
        &mut self,
        arrays: &[(ArrayVal, Option<Expr>)],
        index: ir::Var,
        span: Span,
    ) -> (Expr, Expr, Expr, Vec<Expr>) {
        let one = Expr::I64(1);
        let mut shapes = Vec::new();
        for (arr, cols) in arrays {
            shapes.push(match cols {
                // The rows of a 2-D array as `len()` counts them.
                Some(c) => {
                    let c = self.stable(c.clone(), Ty::I64);
                    let rows = super::value::matrix_rows(arr.len.clone(), c.clone());
                    (self.stable(rows, Ty::I64), c)
                }
                None => (one.clone(), self.stable(arr.len.clone(), Ty::I64)),
            });
        }
        let rows = self.broadcast_extent(
            shapes.iter().map(|(r, _)| r.clone()).collect(),
            "operands could not be broadcast together with shapes ({a}, ...) ({b}, ...)",
            span,
        );
        let cols = self.broadcast_extent(
            shapes.iter().map(|(_, c)| c.clone()).collect(),
            "operands could not be broadcast together with shapes (..., {a}) (..., {b})",
            span,
        );
        let per_row = bin(BinOp::Max, cols.clone(), one);
        let row = bin(BinOp::FloorDiv, Expr::Var(index), per_row.clone());
        let col = bin(BinOp::Mod, Expr::Var(index), per_row);
        let at = shapes
            .iter()
            .map(|(r, c)| {
                if (r, c) == (&rows, &cols) {
                    return Expr::Var(index); // the result's own shape: no broadcast
                }
                let r0 = repeat_unless_full(r, &rows, row.clone());
                let c0 = repeat_unless_full(c, &cols, col.clone());
                bin(BinOp::Add, bin(BinOp::Mul, r0, c.clone()), c0)
            })
            .collect();
        (bin(BinOp::Mul, rows.clone(), cols.clone()), rows, cols, at)
    }

    /// The extent of operands of `extents` along one axis as NumPy broadcasts them: all equal,
    /// or 1 where they differ (checked, raising `ValueError` with `message`'s two extents).
    fn broadcast_extent(&mut self, extents: Vec<Expr>, message: &str, span: Span) -> Expr {
        let mut extents = extents.into_iter();
        let mut full = extents.next().expect("an operand");
        for e in extents {
            if e == full {
                continue;
            }
            let (l, m) = (self.stable(full, Ty::I64), self.stable(e, Ty::I64));
            let one = |e: &Expr| cmp(CmpOp::Eq, e.clone(), Expr::I64(1));
            let ok = bin(
                BinOp::Or,
                cmp(CmpOp::Eq, l.clone(), m.clone()),
                bin(BinOp::Or, one(&l), one(&m)),
            );
            self.check(
                ok,
                Exception::ValueError,
                message,
                span,
                l.clone(),
                m.clone(),
            );
            full = self.stable(Expr::Select(one(&l).boxed(), m.boxed(), l.boxed()), Ty::I64);
        }
        full
    }

    /// `x op y` for two bools that are not both Python's. NumPy adds bools as a logical or and
    /// multiplies them as a logical and, giving a bool (`np.True_ + np.True_` is `True`), and
    /// refuses to subtract them (and computes `//`, `%`, `**` in int8, refused here); Python
    /// computes with ints (`True + True` is 2). Arrays are
    /// NumPy's. A scalar whose kind is not known for certain is refused, not guessed: a NumPy
    /// bool taken for Python's (or the reverse) would give 2 where the other gives 1.
    fn numpy_bools(
        &mut self,
        op: ast::BinOp,
        x: Expr,
        y: Expr,
        elementwise: bool,
        span: Span,
    ) -> Result<(Expr, Ty)> {
        use ast::BinOp as B;
        let logical = bin(if op == B::Add { BinOp::Or } else { BinOp::And }, x, y);
        let refusal = match op {
            B::Add | B::Mul if elementwise => return Ok((logical, Ty::Bool)),
            B::Sub => self
                .err(
                    ErrorKind::Type,
                    span,
                    "numpy boolean subtract, the `-` operator, is not supported",
                )
                .hint("use `^` (NumPy's logical_xor), or int(a) - int(b) to subtract ints"),
            B::FloorDiv | B::Mod | B::Pow => self
                .err(
                    ErrorKind::Unsupported,
                    span,
                    "`//`, `%` and `**` of two NumPy bools, which NumPy computes in int8",
                )
                .hint("convert first: int(a) // int(b), or a.astype(int)"),
            _ => {
                let (sym, bits, numpy) = match op {
                    B::Add => ("+", "|", "a logical or"),
                    _ => ("*", "&", "a logical and"),
                };
                self.err(
                    ErrorKind::Unsupported,
                    span,
                    format!(
                        "`{sym}` of two bools, one of them NumPy's (a comparison of NumPy values \
                         or an element of a mask): NumPy computes {numpy} and gives a bool, \
                         Python computes with ints"
                    ),
                )
                .hint(format!(
                    "write `a {bits} b` for NumPy's result, or int(a) {sym} int(b) for ints"
                ))
            }
        };
        Ok(self.refuse_by_type(refusal, (logical, Ty::Bool)))
    }

    /// `not v` of a value whose truth is `c`: Python's bool whatever v was (`1 / (not x[0])`
    /// divides by a bool).
    fn python_not(&mut self, c: Expr) -> Value {
        let r = self.with_prov(un(UnOp::Not, c), Ty::Bool, Prov::Py);
        Value::Scalar(r, Ty::Bool)
    }

    pub(crate) fn unary(&mut self, op: ast::UnaryOp, v: Value, span: Span) -> Result<Value> {
        if op == ast::UnaryOp::Not {
            let c = self.truth(v, span)?;
            return Ok(self.python_not(c));
        }
        if let Value::Scalar(e, ty) = &v {
            let by_flag = |t: &mut Self, v: &[(Expr, Ty)]| t.unary_scalar(op, v[0].clone(), span);
            if let Some((r, ty)) = self.by_int_flags(&[(e, *ty)], span, by_flag)? {
                return Ok(Value::Scalar(r, ty));
            }
        }
        self.elementwise(vec![v], span, &mut |t, a, elementwise| {
            let (e, ty) = a.into_iter().next().unwrap();
            let numpy_bool = (ty == Ty::Bool && elementwise) || t.is_numpy_bool(&e, ty);
            Ok(match op {
                // NumPy has no positive of its bools; Python's `+True` is 1.
                ast::UnaryOp::Pos if numpy_bool => {
                    let refusal = t
                        .err(
                            ErrorKind::Type,
                            span,
                            "NumPy has no `+` (positive) of its bools",
                        )
                        .hint("int(b) for an int");
                    t.refuse_by_type(refusal, (e, Ty::Bool))
                }
                ast::UnaryOp::Pos => (e, if ty == Ty::Bool { Ty::I64 } else { ty })
                    .pipe(|(e, t2)| (convert(e, ty, t2), t2)),
                // NumPy refuses to negate its bools (`-(x > 0)`); Python's `-True` is -1.
                ast::UnaryOp::Neg if numpy_bool => {
                    let refusal = t
                        .err(
                            ErrorKind::Type,
                            span,
                            "the numpy boolean negative, the `-` operator, is not supported",
                        )
                        .hint("use `~` (NumPy's logical_not), or -int(b) for an int");
                    t.refuse_by_type(refusal, (e, Ty::Bool))
                }
                ast::UnaryOp::Neg if ty != Ty::F64 && !elementwise => (
                    t.int_unary(UnOp::Neg, convert(e, ty, Ty::I64), span),
                    Ty::I64,
                ),
                ast::UnaryOp::Neg => {
                    let t2 = ty.max(Ty::I64);
                    (un(UnOp::Neg, convert(e, ty, t2)), t2)
                }
                ast::UnaryOp::Not => unreachable!("`not` is lowered above"),
                ast::UnaryOp::Invert => match ty {
                    Ty::Bool if elementwise || t.prov(&e) == Prov::Np => {
                        (un(UnOp::Not, e), Ty::Bool)
                    }
                    // Python's `~True` inverts the int 1 (-2; deprecated since Python 3.12); a
                    // bool of either kind by path is refused too.
                    Ty::Bool => {
                        let refusal = t
                            .err(
                                ErrorKind::Unsupported,
                                span,
                                "`~` of a bool that may be Python's: Python inverts the int \
                                 (`~True` is -2)",
                            )
                            .hint("write `not b` for the negation, or ~int(b) for the int");
                        t.refuse_by_type(refusal, (e, Ty::Bool))
                    }
                    Ty::I64 => (un(UnOp::BitNot, e), Ty::I64),
                    Ty::F64 => {
                        return Err(t
                            .err(
                                ErrorKind::Type,
                                span,
                                "bad operand type for unary ~: 'float'",
                            )
                            .hint("~ inverts masks and integers; use `not` or 1 - x"))
                    }
                },
            })
        })
    }

    /// A unary operator of a number.
    fn unary_scalar(
        &mut self,
        op: ast::UnaryOp,
        (e, ty): (Expr, Ty),
        span: Span,
    ) -> Result<(Expr, Ty)> {
        let r = self.unary(op, Value::Scalar(e, ty), span)?;
        self.scalar(r, span, "an operand")
    }

    /// Arithmetic and bitwise operators with Python/NumPy promotion, element-wise on arrays.
    pub(crate) fn binary(
        &mut self,
        op: ast::BinOp,
        a: Value,
        b: Value,
        span: Span,
    ) -> Result<Value> {
        if op == ast::BinOp::MatMul {
            return super::numpy::linalg::matmul(self, a, b, span);
        }
        // Python's own operators on its sequences (`[0] * n` repeats, `+` joins); with an array
        // among the operands, NumPy converts the sequence instead (`(1, 2, 3) * x`).
        let sequence = |v: &Value| matches!(v, Value::Tuple(_) | Value::List(..));
        let array = |v: &Value| matches!(v, Value::Array(_) | Value::Matrix(..));
        if (sequence(&a) || sequence(&b)) && !(array(&a) || array(&b)) {
            return Err(self
                .err(
                    ErrorKind::Unsupported,
                    span,
                    "operators on Python lists and tuples (`[0] * n` repeats, `+` joins) are not supported",
                )
                .hint("for n zeros write `np.zeros(n)` and assign into it; to join, `np.concatenate((a, b))`; for arithmetic on the items, `np.array(...)` first"));
        }
        // NumPy's power loop takes shortcuts when one exponent serves every element.
        let one_exponent = matches!(b, Value::Scalar(..));
        self.elementwise(vec![a, b], span, &mut |t, ops, elementwise| {
            let mut it = ops.into_iter();
            let ((x, tx), (y, ty)) = (it.next().unwrap(), it.next().unwrap());
            let shape = Operands {
                elementwise,
                one_exponent,
            };
            t.scalar_binary(op, x, tx, y, ty, shape, span)
        })
    }

    /// `x op y` of two numbers, or of two elements of arrays where `shape.elementwise`.
    #[allow(clippy::too_many_arguments)]
    fn scalar_binary(
        &mut self,
        op: ast::BinOp,
        x: Expr,
        tx: Ty,
        y: Expr,
        ty: Ty,
        shape: Operands,
        span: Span,
    ) -> Result<(Expr, Ty)> {
        let elementwise = shape.elementwise;
        if !elementwise {
            let by_flag = |t: &mut Self, v: &[(Expr, Ty)]| {
                let ((x, tx), (y, ty)) = (v[0].clone(), v[1].clone());
                t.scalar_binary(op, x, tx, y, ty, shape, span)
            };
            if let Some(r) = self.by_int_flags(&[(&x, tx), (&y, ty)], span, by_flag)? {
                return Ok(r);
            }
        }
        use ast::BinOp as B;
        let arithmetic = matches!(op, B::Add | B::Sub | B::Mul | B::FloorDiv | B::Mod | B::Pow);
        if tx == Ty::Bool && ty == Ty::Bool && arithmetic {
            let python = !elementwise && Prov::both(self.prov(&x), self.prov(&y)) == Prov::Py;
            if !python {
                return self.numpy_bools(op, x, y, elementwise, span);
            }
        }
        let num = tx.max(ty).max(Ty::I64);
        let f = |e: Expr, t: Ty| convert(e, t, Ty::F64);
        Ok(match op {
            B::Add | B::Sub | B::Mul => {
                let o = match op {
                    B::Add => BinOp::Add,
                    B::Sub => BinOp::Sub,
                    _ => BinOp::Mul,
                };
                let (x, y) = (convert(x, tx, num), convert(y, ty, num));
                if num == Ty::I64 && !elementwise {
                    let python = Prov::both(self.prov(&x), self.prov(&y));
                    (self.int_binary(o, x, y, python, span), num)
                } else {
                    (bin(o, x, y), num)
                }
            }
            B::Div => {
                if !elementwise {
                    let msg = if tx.max(ty) == Ty::F64 {
                        "float division by zero"
                    } else {
                        "division by zero"
                    };
                    self.python_zero_check(&x, &y, ty, msg, span);
                    if tx != Ty::F64 && ty != Ty::F64 {
                        self.exact_int_division_check((&x, tx), (&y, ty), span);
                    }
                }
                (bin(BinOp::Div, f(x, tx), f(y, ty)), Ty::F64)
            }
            B::FloorDiv | B::Mod if num == Ty::I64 => {
                self.int_floor_division(op, (x, tx), (y, ty), elementwise, span)
            }
            B::FloorDiv | B::Mod => {
                self.float_floor_division(op, (x, tx), (y, ty), elementwise, span)
            }
            B::Pow => return self.power((x, tx), (y, ty), shape, span),
            B::BitAnd | B::BitOr | B::BitXor | B::LShift | B::RShift => {
                return self.bitwise(op, (x, tx), (y, ty), elementwise, span)
            }
            B::MatMul => unreachable!(),
        })
    }

    /// `x // y` and `x % y` of integers: Python's (raising for a zero divisor) or NumPy's (0).
    fn int_floor_division(
        &mut self,
        op: ast::BinOp,
        (x, tx): (Expr, Ty),
        (y, ty): (Expr, Ty),
        elementwise: bool,
        span: Span,
    ) -> (Expr, Ty) {
        use ast::BinOp as B;
        let (x, y) = (convert(x, tx, Ty::I64), convert(y, ty, Ty::I64));
        let o = if op == B::FloorDiv {
            BinOp::FloorDiv
        } else {
            BinOp::Mod
        };
        let python = if elementwise {
            Prov::Np
        } else {
            Prov::both(self.prov(&x), self.prov(&y))
        };
        // NumPy integers give 0 for a zero divisor (with a warning); Python ints raise.
        let numpy_zero = |x: Expr, y: Expr, r: &mut dyn FnMut(Expr, Expr) -> Expr| {
            let zero = cmp(CmpOp::Eq, y.clone(), Expr::I64(0));
            let safe = Expr::Select(zero.clone().boxed(), Expr::I64(1).boxed(), y.boxed());
            Expr::Select(zero.boxed(), Expr::I64(0).boxed(), r(x, safe).boxed())
        };
        // The result has the operands' kind, also where it is NumPy's literal 0 (which
        // would otherwise count as a Python int, and raise when divided by).
        match python {
            Prov::Np => {
                let r = numpy_zero(x, y, &mut |x, y| bin(o, x, y));
                (self.with_prov(r, Ty::I64, Prov::Np), Ty::I64)
            }
            Prov::Py => {
                let y = self.stable(y, Ty::I64);
                self.check_plain(
                    cmp(CmpOp::Ne, y.clone(), Expr::I64(0)),
                    Exception::ZeroDivisionError,
                    "integer division or modulo by zero",
                    span,
                );
                (self.int_binary(o, x, y, Prov::Py, span), Ty::I64)
            }
            // Known only at run time: raise for Python ints, NumPy's 0 otherwise.
            Prov::Dyn(flag) => {
                let (x, y) = (self.stable(x, Ty::I64), self.stable(y, Ty::I64));
                let zero = cmp(CmpOp::Eq, y.clone(), Expr::I64(0));
                self.check_plain(
                    bin(BinOp::Or, not(flag.clone()), not(zero)),
                    Exception::ZeroDivisionError,
                    "integer division or modulo by zero",
                    span,
                );
                let dynamic = Prov::Dyn(flag);
                let mut op = |x, y| self.int_binary(o, x, y, dynamic.clone(), span);
                let r = numpy_zero(x, y, &mut op);
                (self.with_prov(r, Ty::I64, dynamic), Ty::I64)
            }
        }
    }

    /// `x // y` and `x % y` of floats, by CPython's rules (the result's sign is the divisor's).
    fn float_floor_division(
        &mut self,
        op: ast::BinOp,
        (x, tx): (Expr, Ty),
        (y, ty): (Expr, Ty),
        elementwise: bool,
        span: Span,
    ) -> (Expr, Ty) {
        use ast::BinOp as B;
        let f = |e: Expr, t: Ty| convert(e, t, Ty::F64);
        // Of two Python floats, a Python float: a later division by it must still raise.
        let both = Prov::both(self.prov(&x), self.prov(&y));
        if !elementwise {
            let msg = if op == B::FloorDiv {
                "float floor division by zero"
            } else {
                "float modulo by zero"
            };
            self.python_zero_check(&x, &y, ty, msg, span);
        }
        let m = if op == B::FloorDiv {
            MathFn::FloorDiv
        } else {
            MathFn::Remainder
        };
        let r = Expr::Call(m, vec![f(x, tx), f(y, ty)]);
        (self.with_prov(r, Ty::F64, both), Ty::F64)
    }

    /// `x ** y`: NumPy's power loop or integer power for NumPy values, Python's for Python ones.
    fn power(
        &mut self,
        (x, tx): (Expr, Ty),
        (y, ty): (Expr, Ty),
        shape: Operands,
        span: Span,
    ) -> Result<(Expr, Ty)> {
        let elementwise = shape.elementwise;
        let f = |e: Expr, t: Ty| convert(e, t, Ty::F64);
        let both = Prov::both(self.prov(&x), self.prov(&y));
        let ints = tx != Ty::F64 && ty != Ty::F64;
        let k = crate::ir::fold::const_expr(&y).map(|v| v.i());
        if elementwise || both == Prov::Np {
            if !ints {
                // Arrays go through NumPy's power loop; NumPy scalars call pow.
                if elementwise {
                    let one = shape.one_exponent;
                    return Ok((self.numpy_power(x, tx, y, ty, one), Ty::F64));
                }
                return Ok((self.scalar_numpy_power((x, tx), (y, ty)), Ty::F64));
            }
            // NumPy integer powers wrap at 64 bits, and negative exponents raise.
            return match k {
                Some(k) if k >= 0 => {
                    let x = convert(x, tx, Ty::I64);
                    Ok((self.int_power(x, k as u64, Prov::Np, span)?, Ty::I64))
                }
                _ => Err(self.numpy_int_power_unsupported(span)),
            };
        }
        if let (true, Some(k)) = (ints, k) {
            if k >= 0 {
                let x = convert(x, tx, Ty::I64);
                return Ok((self.int_power(x, k as u64, both, span)?, Ty::I64));
            }
        }
        if let (true, Prov::Dyn(_)) = (ints, &both) {
            // A Python int's power or a NumPy int's by path, to a computed or negative exponent
            // (NumPy's refuses negative ones, and wraps): not known here.
            let refusal = self
                .err(
                    ErrorKind::Unsupported,
                    span,
                    "an int power of a value that is a Python int on one path and a NumPy int \
                     on another: they compute otherwise",
                )
                .hint("make it one kind: int(v) for a Python int, np.int64(v) for NumPy's");
            return Ok(self.refuse_by_type(refusal, (Expr::F64(0.0), Ty::F64)));
        }
        let (x, y) = (self.stable(x, tx), self.stable(y, ty));
        // Python's float ** calls the C library's pow, whatever the exponent.
        let pow = Expr::Call(MathFn::Pow, vec![f(x.clone(), tx), f(y.clone(), ty)]);
        let r = self.with_prov(pow, Ty::F64, both.clone());
        let r = self.stable(r, Ty::F64);
        if tx != Ty::F64 && ty != Ty::F64 {
            self.inexact_int_power_check(&y, &r, both.flag(), span);
            // An int's power is an int for an exponent >= 0 (`-(0 ** k)` is 0), a float for a
            // negative one: the double holds either (see `int_or_float.rs`).
            if let Expr::Var(v) = r {
                let int_exponent = cmp(CmpOp::Ge, convert(y.clone(), ty, Ty::I64), Expr::I64(0));
                let flag = self.stable(int_exponent, Ty::Bool);
                self.var_int.insert(v, flag);
            }
        }
        self.python_pow_checks(f(x, tx), f(y, ty), &r, both.flag(), span);
        Ok((r, Ty::F64))
    }

    /// `x ** y` of two numbers, one of them a NumPy scalar, not both ints. A NumPy float's
    /// `**` calls pow; but where a Python float meets a NumPy int or bool (`2.5 ** np.int64(3)`,
    /// `np.int64(3) ** 2.5`), neither scalar computes it and NumPy's power ufunc does, one
    /// exponent for its one element: its shortcuts, then pow.
    fn scalar_numpy_power(&mut self, (x, tx): (Expr, Ty), (y, ty): (Expr, Ty)) -> Expr {
        let (x, y) = (self.stable(x, tx), self.stable(y, ty));
        let python_float = |t: &Self, e: &Expr, ty: Ty| match ty {
            Ty::F64 => t.prov(e).flag(),
            _ => Expr::Bool(false),
        };
        let numpy_int = |t: &Self, e: &Expr, ty: Ty| match ty {
            Ty::F64 => Expr::Bool(false),
            _ => not(t.prov(e).flag()),
        };
        let ufunc = bin(
            BinOp::Or,
            bin(
                BinOp::And,
                python_float(self, &x, tx),
                numpy_int(self, &y, ty),
            ),
            bin(
                BinOp::And,
                numpy_int(self, &x, tx),
                python_float(self, &y, ty),
            ),
        );
        let pow = self.numpy_power(x.clone(), tx, y.clone(), ty, false);
        let r = match crate::ir::fold::const_expr(&ufunc).map(|v| v.b()) {
            Some(false) => pow,
            Some(true) => self.numpy_power(x, tx, y, ty, true),
            None => {
                let loop_ = self.numpy_power(x, tx, y, ty, true);
                Expr::Select(ufunc.boxed(), loop_.boxed(), pow.boxed())
            }
        };
        // Either way a NumPy float, also where a shortcut reads only the Python float (`v * v`).
        self.with_prov(r, Ty::F64, Prov::Np)
    }

    /// `&`, `|`, `^`, `<<` and `>>`: of bools and integers only.
    fn bitwise(
        &mut self,
        op: ast::BinOp,
        (x, tx): (Expr, Ty),
        (y, ty): (Expr, Ty),
        elementwise: bool,
        span: Span,
    ) -> Result<(Expr, Ty)> {
        use ast::BinOp as B;
        Ok(match op {
            B::BitAnd | B::BitOr | B::BitXor => {
                let o = match op {
                    B::BitAnd => BinOp::And,
                    B::BitOr => BinOp::Or,
                    _ => BinOp::Xor,
                };
                if tx == Ty::F64 || ty == Ty::F64 {
                    return Err(self
                        .err(
                            ErrorKind::Type,
                            span,
                            "bitwise operators need booleans or integers, not floats",
                        )
                        .hint("combine conditions with & and | on masks, e.g. (x > a) & (x < b)"));
                }
                let t = tx.max(ty);
                (bin(o, convert(x, tx, t), convert(y, ty, t)), t)
            }
            B::LShift | B::RShift => {
                if tx == Ty::F64 || ty == Ty::F64 {
                    return Err(self.err(
                        ErrorKind::Type,
                        span,
                        "shifts need integers, not floats",
                    ));
                }
                let o = if op == B::LShift {
                    BinOp::Shl
                } else {
                    BinOp::Shr
                };
                let (x, y) = (convert(x, tx, Ty::I64), convert(y, ty, Ty::I64));
                if elementwise {
                    (super::pyint::shift(o, x, y), Ty::I64)
                } else {
                    let python = Prov::both(self.prov(&x), self.prov(&y));
                    (self.int_binary(o, x, y, python, span), Ty::I64)
                }
            }
            _ => unreachable!("not a bitwise operator"),
        })
    }

    /// A NumPy integer power whose exponent is not a constant `>= 0`: NumPy wraps at 64 bits,
    /// which ndjit models only for a known exponent, and raises for a negative one.
    pub(super) fn numpy_int_power_unsupported(&self, span: Span) -> crate::error::Error {
        self.err(
            ErrorKind::Type,
            span,
            "a NumPy integer power needs a constant exponent >= 0 \
             (NumPy wraps at 64 bits, and raises for negative ones)",
        )
        .hint("make one side a float, e.g. float(a) ** b")
    }

    /// `a / b` of two Python ints is their exact quotient rounded once; ndjit divides doubles,
    /// which is the same only while both are at most 2**53 in magnitude (CPython's own fast
    /// path). Past that, an error rather than a quotient rounded twice. NumPy ints (and a Python
    /// int with a NumPy one) divide as doubles in NumPy too.
    fn exact_int_division_check(&mut self, (x, tx): (&Expr, Ty), (y, ty): (&Expr, Ty), span: Span) {
        let python = Prov::both(self.prov(x), self.prov(y));
        if python == Prov::Np {
            return;
        }
        let exact = bin(
            BinOp::And,
            super::numpy::exact_in_double(convert(x.clone(), tx, Ty::I64)),
            super::numpy::exact_in_double(convert(y.clone(), ty, Ty::I64)),
        );
        self.check_plain(
            bin(BinOp::Or, not(python.flag()), exact),
            Exception::OverflowError,
            "int / int of Python ints beyond 2**53, which Python divides exactly and ndjit in \
             doubles (write float(a) / b to divide the rounded value)",
            span,
        );
    }

    /// Python raises `ZeroDivisionError` when both operands are Python numbers and the divisor is
    /// zero; NumPy scalars give inf/nan. Emits the check when it can matter.
    fn python_zero_check(&mut self, x: &Expr, y: &Expr, ty: Ty, msg: &str, span: Span) {
        use super::provenance::Prov;
        let both = Prov::both(self.prov(x), self.prov(y));
        if both == Prov::Np {
            return;
        }
        let zero = if ty == Ty::F64 {
            Expr::F64(0.0)
        } else {
            Expr::I64(0)
        };
        let y = convert(y.clone(), ty, ty.max(Ty::I64));
        let nonzero = cmp(CmpOp::Ne, y, zero);
        let ok = match both {
            Prov::Py => nonzero,
            flag => bin(BinOp::Or, not(flag.flag()), nonzero),
        };
        self.check_plain(ok, Exception::ZeroDivisionError, msg, span);
    }

    /// The errors of Python's float `**` (when `python`, the run-time flag that both operands are
    /// Python numbers, is true), which NumPy turns into inf or nan: a zero base with a negative
    /// exponent, a negative base with a fractional exponent (a complex number in Python), and
    /// overflow of finite operands.
    fn python_pow_checks(&mut self, x: Expr, y: Expr, r: &Expr, python: Expr, span: Span) {
        let finite = |e: &Expr| un(UnOp::IsFinite, e.clone());
        // `0.0 ** -inf` is inf in Python (CPython's float_pow handles infinite exponents first).
        let zero_neg = bin(
            BinOp::And,
            cmp(CmpOp::Eq, x.clone(), Expr::F64(0.0)),
            bin(
                BinOp::And,
                cmp(CmpOp::Lt, y.clone(), Expr::F64(0.0)),
                finite(&y),
            ),
        );
        let fractional = bin(
            BinOp::And,
            finite(&y),
            cmp(CmpOp::Ne, un(UnOp::Trunc, y.clone()), y.clone()),
        );
        let complex = bin(
            BinOp::And,
            bin(
                BinOp::And,
                finite(&x),
                cmp(CmpOp::Lt, x.clone(), Expr::F64(0.0)),
            ),
            fractional,
        );
        let overflow = bin(
            BinOp::And,
            un(UnOp::IsInf, r.clone()),
            bin(BinOp::And, finite(&x), finite(&y)),
        );
        // The zero base comes first: its infinite result is not an overflow.
        let overflow = bin(BinOp::And, overflow, not(zero_neg.clone()));
        for (bad, exception, msg) in [
            (
                zero_neg,
                Exception::ZeroDivisionError,
                "0.0 cannot be raised to a negative power",
            ),
            (
                complex,
                Exception::ValueError,
                "negative number cannot be raised to a fractional power (Python's result is \
                 complex, which ndjit does not support)",
            ),
            (
                overflow,
                Exception::OverflowError,
                "(34, 'Numerical result out of range')",
            ),
        ] {
            let ok = bin(BinOp::Or, not(python.clone()), not(bad));
            self.check_plain(ok, exception, msg, span);
        }
    }

    /// Python's `int ** int` with an exponent known only at run time: computed as a float power
    /// (a negative exponent gives a float in Python too), which is exact only below 2**53.
    fn inexact_int_power_check(&mut self, y: &Expr, r: &Expr, python: Expr, span: Span) {
        let big = bin(
            BinOp::And,
            cmp(CmpOp::Ge, y.clone(), Expr::I64(0)),
            cmp(
                CmpOp::Ge,
                un(UnOp::Abs, r.clone()),
                Expr::F64(9007199254740992.0),
            ),
        );
        let ok = bin(BinOp::Or, not(python), not(big));
        self.check_plain(
            ok,
            Exception::OverflowError,
            "integer power exceeds 2**53, past which ndjit cannot compute it exactly",
            span,
        );
    }

    /// `x ** y` in floats (the callers handle integer powers exactly): `x ** 2` is `x * x` (what
    /// NumPy computes for arrays, and bit-identical to a correctly rounded pow); otherwise C `pow`.
    /// NumPy's float64 power. A NumPy scalar's `**` calls the C library's pow. NumPy's power
    /// loop (an array's `**`, `np.power`) with one exponent for every element (`one_exponent`)
    /// first takes its exact shortcuts (NumPy >= 2.0): -1 is `1 / x`, 0 is 1, 0.5 is `sqrt(x)`,
    /// 1 is `x`, 2 is `x * x`, decided on the exponent's value; any other exponent is pow.
    pub(crate) fn numpy_power(
        &mut self,
        x: Expr,
        tx: Ty,
        y: Expr,
        ty: Ty,
        one_exponent: bool,
    ) -> Expr {
        let (x, y) = (convert(x, tx, Ty::F64), convert(y, ty, Ty::F64));
        let pow = Expr::Call(MathFn::Pow, vec![x.clone(), y.clone()]);
        if !one_exponent {
            return pow;
        }
        let shortcuts = [
            (-1.0, bin(BinOp::Div, Expr::F64(1.0), x.clone())),
            (0.0, Expr::F64(1.0)),
            (0.5, un(UnOp::Sqrt, x.clone())),
            (1.0, x.clone()),
            (2.0, bin(BinOp::Mul, x.clone(), x)),
        ];
        if let Some(c) = crate::ir::fold::const_expr(&y) {
            let c = c.f();
            return shortcuts
                .into_iter()
                .find(|(k, _)| *k == c)
                .map_or(pow, |(_, e)| e);
        }
        shortcuts.into_iter().rev().fold(pow, |rest, (k, e)| {
            let here = cmp(CmpOp::Eq, y.clone(), Expr::F64(k));
            Expr::Select(here.boxed(), e.boxed(), rest.boxed())
        })
    }

    /// `a and b` / `a or b`, short-circuiting: `b` is only evaluated when needed.
    fn bool_op(&mut self, op: ast::BoolOp, items: &[ast::Expr]) -> Result<Value> {
        let first = self.expr(&items[0])?;
        let (mut acc, mut ty) = self.scalar(first, items[0].span, "an operand of and/or")?;
        for item in &items[1..] {
            let ((rhs, rty), stmts) = self.nested(|t| {
                let v = t.expr(item)?;
                t.scalar(v, item.span, "an operand of and/or")
            })?;
            let joined = self.joined_type(ty, rty, item.span);
            let ints = self.joins_an_int(joined, (&acc, ty), (&rhs, rty));
            let acc0 = self.stable(acc, ty);
            let a = convert(acc0.clone(), ty, joined);
            let cond = convert(acc0.clone(), ty, Ty::Bool);
            let b = convert(rhs.clone(), rty, joined);
            // `a and b` is `b if a else a`; `a or b` is `a if a else b`.
            let ((when_true, true_arm), (when_false, false_arm)) = match op {
                ast::BoolOp::And => ((b, (&rhs, rty)), (a, (&acc0, ty))),
                ast::BoolOp::Or => ((a, (&acc0, ty)), (b, (&rhs, rty))),
            };
            acc = if stmts.is_empty() && !ints {
                Expr::Select(cond.boxed(), when_true.boxed(), when_false.boxed())
            } else {
                let r = self.temp(joined);
                let (mut then, mut els) = (vec![], vec![]);
                let target = if op == ast::BoolOp::And {
                    &mut then
                } else {
                    &mut els
                };
                target.extend(stmts);
                if ints {
                    let ((ta, tta), (fa, tfa)) = (true_arm, false_arm);
                    self.branch_int(r, (ta, tta, &mut then), (fa, tfa, &mut els), item.span);
                }
                self.branch_prov(r, (&when_true, &mut then), (&when_false, &mut els));
                then.push(Stmt::Assign(r, when_true));
                els.push(Stmt::Assign(r, when_false));
                self.emit(Stmt::If(cond, then, els));
                Expr::Var(r)
            };
            ty = joined;
        }
        Ok(Value::Scalar(acc, ty))
    }

    /// `a if test else b`: a select when both sides are pure, else an `if` statement.
    fn if_exp(
        &mut self,
        test: &ast::Expr,
        body: &ast::Expr,
        orelse: &ast::Expr,
        span: Span,
    ) -> Result<Value> {
        let c = self.condition(test)?;
        let c = self.stable(c, Ty::Bool);
        let (a, sa) = self.nested(|t| t.expr(body))?;
        let (b, sb) = self.nested(|t| t.expr(orelse))?;
        let what = "a branch of a conditional expression";
        let a = self.scalar(a, body.span, what)?;
        let b = self.scalar(b, orelse.span, what)?;
        Ok(self.choose(c, (a, sa), (b, sb), span))
    }

    /// The number `a` where `c` holds, else `b`, each computed by its statements (`sa`, `sb`)
    /// only where it is chosen, and keeping its own type and kind (a Python int chosen beside
    /// a float stays an int, a Python float beside NumPy's stays Python's).
    pub(crate) fn choose(
        &mut self,
        c: Expr,
        ((a, ta), sa): ((Expr, Ty), Vec<Stmt>),
        ((b, tb), sb): ((Expr, Ty), Vec<Stmt>),
        span: Span,
    ) -> Value {
        let ty = self.joined_type(ta, tb, span);
        let ints = self.joins_an_int(ty, (&a, ta), (&b, tb));
        if sa.is_empty() && sb.is_empty() && !ints {
            let (a, b) = (convert(a, ta, ty), convert(b, tb, ty));
            return Value::Scalar(Expr::Select(c.boxed(), a.boxed(), b.boxed()), ty);
        }
        let (mut then, mut els) = (sa, sb);
        let r = self.temp(ty);
        if ints {
            self.branch_int(r, (&a, ta, &mut then), (&b, tb, &mut els), span);
        }
        let (a, b) = (convert(a, ta, ty), convert(b, tb, ty));
        self.branch_prov(r, (&a, &mut then), (&b, &mut els));
        then.push(Stmt::Assign(r, a));
        els.push(Stmt::Assign(r, b));
        self.emit(Stmt::If(c, then, els));
        Value::Scalar(Expr::Var(r), ty)
    }

    /// Comparisons, chained as Python does (`a < b <= c` is `a < b and b <= c`, `b` evaluated
    /// once, `c` only when `a < b` holds); on arrays they give masks.
    fn compare(
        &mut self,
        first: &ast::Expr,
        rest: &[(ast::CmpOp, ast::Expr)],
        span: Span,
    ) -> Result<Value> {
        if let Some(flag) = self.sentinel_test(first, rest) {
            return Ok(flag);
        }
        let lhs = self.expr(first)?;
        if let [(op @ (ast::CmpOp::Eq | ast::CmpOp::Ne), e)] = rest {
            if tuple_syntax(first) && tuple_syntax(e) {
                let rhs = self.expr(e)?;
                if let Some(equal) = self.int_tuples_equal(&lhs, &rhs) {
                    let same = if *op == ast::CmpOp::Eq {
                        equal
                    } else {
                        not(equal)
                    };
                    return Ok(Value::Scalar(
                        self.with_prov(same, Ty::Bool, Prov::Py),
                        Ty::Bool,
                    ));
                }
                return self.compare_one(*op, lhs, rhs, e.span);
            }
        }
        self.compare_chain(lhs, rest, span)
    }

    /// `a == b` of two tuples of ints (`w.shape == (3, 3)`): of one length, item by item equal.
    /// `None` for anything else: items that may be floats would need Python's identity test
    /// first (a NaN is equal to itself in a tuple), which ndjit does not model.
    fn int_tuples_equal(&mut self, a: &Value, b: &Value) -> Option<Expr> {
        let (Value::Tuple(xs), Value::Tuple(ys)) = (a, b) else {
            return None;
        };
        let int = |v: &Value| matches!(v, Value::Scalar(_, Ty::I64 | Ty::Bool));
        if !xs.iter().chain(ys).all(int) {
            return None;
        }
        if xs.len() != ys.len() {
            return Some(Expr::Bool(false));
        }
        let mut equal = Expr::Bool(true);
        for (x, y) in xs.iter().zip(ys) {
            let (Value::Scalar(x, tx), Value::Scalar(y, ty)) = (x, y) else {
                unreachable!("checked above")
            };
            let tt = (*tx).max(*ty);
            let same = cmp(
                CmpOp::Eq,
                convert(x.clone(), *tx, tt),
                convert(y.clone(), *ty, tt),
            );
            equal = bin(BinOp::And, equal, same);
        }
        Some(equal)
    }

    /// `lhs op₀ e₀ op₁ e₁ …`: the later links are lowered in a nested block that runs only when
    /// the first one holds, since their operands may fail (`x[9]`, `math.log(-1)`) or have
    /// effects Python would not reach.
    fn compare_chain(
        &mut self,
        lhs: Value,
        rest: &[(ast::CmpOp, ast::Expr)],
        span: Span,
    ) -> Result<Value> {
        let (op, e) = &rest[0];
        let rhs = self.expr(e)?;
        if rest.len() == 1 {
            return self.compare_one(*op, lhs, rhs, e.span);
        }
        let rhs = self.stabilize(rhs);
        let first = self.compare_one(*op, lhs, rhs.clone(), e.span)?;
        let (later, stmts) = self.nested(|t| t.compare_chain(rhs, &rest[1..], span))?;
        if matches!(first, Value::Array(_)) || matches!(later, Value::Array(_)) {
            return Err(self
                .err(
                    ErrorKind::Type,
                    span,
                    "chained comparisons of arrays are ambiguous",
                )
                .hint("write (a < x) & (x < b)"));
        }
        let p = self.truth(first, span)?;
        let q = self.truth(later, span)?;
        // `p and q` has one kind only where both links have it (a Python bool or NumPy's): the
        // link that decides gives the chain its kind (`~(x[0] < n < 3)` is Python's `~True`).
        let (pp, pq) = (self.prov(&p), self.prov(&q));
        if stmts.is_empty() && pp == pq && !matches!(pp, Prov::Dyn(_)) {
            return Ok(Value::Scalar(bin(BinOp::And, p, q), Ty::Bool));
        }
        let r = self.temp(Ty::Bool);
        // The chain's value is its last evaluated link (`p` itself when it is false).
        let (mut then, mut els) = (stmts, Vec::new());
        self.branch_prov(r, (&q, &mut then), (&p, &mut els));
        then.push(Stmt::Assign(r, q));
        els.push(Stmt::Assign(r, p.clone()));
        self.emit(Stmt::If(p, then, els));
        Ok(Value::Scalar(Expr::Var(r), Ty::Bool))
    }

    pub(crate) fn compare_one(
        &mut self,
        op: ast::CmpOp,
        a: Value,
        b: Value,
        span: Span,
    ) -> Result<Value> {
        use ast::CmpOp as C;
        if let Some(folded) = self.compare_strings(op, &a, &b, span)? {
            return Ok(folded);
        }
        let o = match op {
            C::Lt => CmpOp::Lt,
            C::Le => CmpOp::Le,
            C::Gt => CmpOp::Gt,
            C::Ge => CmpOp::Ge,
            C::Eq => CmpOp::Eq,
            C::Ne => CmpOp::Ne,
            C::In | C::NotIn => {
                let r = super::lists::contains(self, (b, span), (a, span), span)?;
                return match op {
                    C::In => Ok(r),
                    _ => self.unary(ast::UnaryOp::Not, r, span),
                };
            }
            C::Is | C::IsNot => {
                let same = match (&a, &b) {
                    (Value::None, Value::None) => true,
                    (Value::None, _) | (_, Value::None) => false,
                    _ => {
                        return Err(self
                            .err(
                                ErrorKind::Unsupported,
                                span,
                                "`is` only compares with None in filters",
                            )
                            .hint("use == to compare numbers"))
                    }
                };
                return Ok(Value::Scalar(Expr::Bool(same == (op == C::Is)), Ty::Bool));
            }
        };
        if let (Value::Scalar(x, tx), Value::Scalar(y, ty)) = (&a, &b) {
            // An int held as a float compares as the int it is (a NumPy int64 exactly with a
            // Python int past 2**53, where a NumPy float converts the int to a double).
            let by_flag = |t: &mut Self, v: &[(Expr, Ty)]| {
                let ((x, tx), (y, ty)) = (v[0].clone(), v[1].clone());
                let r = t.compare_one(op, Value::Scalar(x, tx), Value::Scalar(y, ty), span)?;
                t.scalar(r, span, "a comparison")
            };
            if let Some((r, ty)) = self.by_int_flags(&[(x, *tx), (y, *ty)], span, by_flag)? {
                return Ok(Value::Scalar(r, ty));
            }
        }
        self.elementwise(vec![a, b], span, &mut |t, ops, elementwise| {
            let mut it = ops.into_iter();
            let ((x, tx), (y, ty)) = (it.next().unwrap(), it.next().unwrap());
            if !elementwise && (tx, ty) == (Ty::F64, Ty::I64) {
                return Ok((t.float_int_compare(o, x, y, false), Ty::Bool));
            }
            if !elementwise && (tx, ty) == (Ty::I64, Ty::F64) {
                return Ok((t.float_int_compare(o, y, x, true), Ty::Bool));
            }
            let tt = tx.max(ty);
            Ok((cmp(o, convert(x, tx, tt), convert(y, ty, tt)), Ty::Bool))
        })
    }

    /// `f o i` (`i o f` when `int_first`) for a float `f` and an int `i`. Python compares a float
    /// and an int exactly, NumPy (where either is a NumPy scalar) converts the int to float64;
    /// they differ past 2**53: `9.223372036854776e18 <= 9223372036854775807` is False in Python.
    /// Exactly: where `f != float(i)` (or is NaN) the rounding cannot change the order, so the
    /// float comparison is the answer; where they are equal, `f` is an integer in
    /// `[-2**63, 2**63]`, compared as an int (2**63 itself is above every i64).
    fn float_int_compare(&mut self, o: CmpOp, f: Expr, i: Expr, int_first: bool) -> Expr {
        let python = Prov::both(self.prov(&f), self.prov(&i));
        let ordered = |a: Expr, b: Expr| {
            if int_first {
                cmp(o, b, a)
            } else {
                cmp(o, a, b)
            }
        };
        if python == Prov::Np {
            return ordered(f, convert(i, Ty::I64, Ty::F64));
        }
        let (f, i) = (self.stable(f, Ty::F64), self.stable(i, Ty::I64));
        let fi = self.stable(convert(i.clone(), Ty::I64, Ty::F64), Ty::F64);
        let as_floats = ordered(f.clone(), fi.clone());
        const TWO_63: f64 = 9223372036854775808.0;
        let exact = Expr::Select(
            cmp(CmpOp::Ne, f.clone(), fi).boxed(),
            as_floats.clone().boxed(),
            Expr::Select(
                cmp(CmpOp::Eq, f.clone(), Expr::F64(TWO_63)).boxed(),
                ordered(Expr::I64(1), Expr::I64(0)).boxed(), // f above i
                ordered(Expr::Cast(Ty::I64, f.boxed()), i).boxed(),
            )
            .boxed(),
        );
        let r = match &python {
            Prov::Py => exact,
            flag => Expr::Select(flag.flag().boxed(), exact.boxed(), as_floats.boxed()),
        };
        // A Python bool between Python numbers, np.bool_ otherwise (`1.0 / (a < b)`).
        self.with_prov(r, Ty::Bool, python)
    }

    // ---- indexing ---------------------------------------------------------------------------

    fn subscript(&mut self, base: Value, index: &ast::Expr, span: Span) -> Result<Value> {
        // An element of a NumPy array is a NumPy scalar, whatever expression computes it (a
        // transform's coordinates, a tuple of Python ints, keep theirs).
        let numpy = |t: &mut Self, v: Value, coords: bool| match v {
            v if !coords => t.as_numpy(v),
            v => v,
        };
        match base {
            Value::Array(arr) => {
                let coords = self.is_coords(&arr);
                let v = self.index_array(arr, index, span)?;
                Ok(numpy(self, v, coords))
            }
            Value::Matrix(arr, cols) => {
                let v = self.index_matrix(arr, cols, index, span)?;
                Ok(numpy(self, v, false))
            }
            Value::Function(f) if f.func == super::names::Func::RConcat => {
                super::numpy::sequences::r_(self, index, span)
            }
            Value::List(arr, kind) => self.index_list(arr, kind, index, span),
            Value::MostCommon(counted) => {
                super::builtins::collections::first_pair(self, *counted, index, span)
            }
            Value::Counter(_) => Err(super::builtins::collections::refused(
                self,
                span,
                "a Counter's count of one item (`c[v]`)",
            )),
            Value::Tuple(items) => {
                if let ExprKind::Slice(lo, hi, step) = &index.kind {
                    let (lo, hi, step) = (lo.as_deref(), hi.as_deref(), step.as_deref());
                    return self.slice_tuple(items, lo, hi, step, index.span);
                }
                let v = self.expr(index)?;
                let i = self.int(v, index.span, "a tuple index")?;
                match crate::ir::fold::const_expr(&i) {
                    Some(ir::eval::Val::I(k)) => {
                        let n = items.len() as i64;
                        let k2 = if k < 0 { k + n } else { k };
                        if !(0..n).contains(&k2) {
                            // Python's IndexError comes only where this runs: refused.
                            return Err(self.err(
                                ErrorKind::Unsupported,
                                index.span,
                                format!(
                                    "tuple index {k} out of range (Python raises IndexError \
                                     where this runs)"
                                ),
                            ));
                        }
                        Ok(items[k2 as usize].clone())
                    }
                    _ => {
                        let mixed = self.ints_and_floats(&items);
                        self.refuse_int_or_float(mixed, span, "an item of a tuple read by index");
                        let arr = self.array_of(Value::Tuple(items), span)?;
                        self.index_array(arr, index, span)
                    }
                }
            }
            other => Err(self.err(
                ErrorKind::Type,
                span,
                format!("{} cannot be indexed", other.describe()),
            )),
        }
    }

    /// `z[i, j]`, `z[i]` (a row), `z[:, j]` (a column) of a 2-D array.
    /// `m[i, j]`, `m[i]`, `m[:, j]`, `m[r0:r1, ::2]` ...: an element, a 1-D array when one axis
    /// is indexed, a 2-D array when both are sliced (elements read lazily, in row-major order).
    fn index_matrix(
        &mut self,
        arr: ArrayVal,
        cols: Expr,
        index: &ast::Expr,
        span: Span,
    ) -> Result<Value> {
        use super::selection::Pick;
        let cols = self.stable(cols, Ty::I64);
        let (r, c) = self.select_2d(arr.len.clone(), cols.clone(), index)?;
        let flat = |kr: Expr, kc: Expr| {
            bin(
                BinOp::Add,
                bin(BinOp::Mul, r.at(kr), cols.clone()),
                c.at(kc),
            )
        };
        self.check_strided_view(span, (pick_stride(&r, &c), arr.ty), false);
        let index = self.temp(Ty::I64);
        let k = Expr::Var(index);
        let line = |len: Expr, elem: Expr| ArrayVal {
            len,
            ty: arr.ty,
            index,
            elem,
        };
        Ok(match (&r, &c) {
            (Pick::One(_), Pick::One(_)) => {
                Value::Scalar(arr.at(flat(Expr::I64(0), Expr::I64(0))), arr.ty)
            }
            (Pick::One(_), Pick::Range { n, .. }) => {
                Value::Array(line(n.clone(), arr.at(flat(Expr::I64(0), k))))
            }
            (Pick::Range { n, .. }, Pick::One(_)) => {
                Value::Array(line(n.clone(), arr.at(flat(k, Expr::I64(0)))))
            }
            (Pick::Range { n: nr, .. }, Pick::Range { n: nc, .. }) => {
                let per_row = bin(BinOp::Max, nc.clone(), Expr::I64(1));
                let (kr, kc) = (
                    bin(BinOp::FloorDiv, k.clone(), per_row.clone()),
                    bin(BinOp::Mod, k, per_row),
                );
                let len = bin(BinOp::Mul, nr.clone(), nc.clone());
                let elems = line(len, arr.at(flat(kr, kc)));
                self.matrix(elems, nr.clone(), nc.clone(), span)
            }
        })
    }

    fn index_array(&mut self, arr: ArrayVal, index: &ast::Expr, span: Span) -> Result<Value> {
        match &index.kind {
            ExprKind::Slice(lo, hi, step) => {
                return self.slice(
                    arr,
                    (lo.as_deref(), hi.as_deref(), step.as_deref()),
                    Some(span),
                )
            }
            ExprKind::Tuple(items) => return Err(self
                .err(
                    ErrorKind::Type,
                    index.span,
                    format!(
                        "too many indices: the buffer is 1-D, but {} were given",
                        items.len()
                    ),
                )
                .hint(
                    "scipy passes the footprint flattened in row-major order: use x[i * ncols + j]",
                )),
            ExprKind::Ellipsis => return Ok(Value::Array(arr)),
            _ => {}
        }
        let iv = match self.expr(index)? {
            // A list of bools is a mask, as in NumPy.
            Value::Tuple(items)
                if !items.is_empty()
                    && items
                        .iter()
                        .all(|i| matches!(i, Value::Scalar(_, Ty::Bool))) =>
            {
                Value::Array(self.array_of(Value::Tuple(items), index.span)?)
            }
            iv => iv,
        };
        match iv {
            Value::Array(mask) if mask.ty == Ty::Bool => {
                let (n, m) = (arr.len.clone(), mask.len.clone());
                let mut arr = arr;
                if n != m {
                    // NumPy selects nothing with an empty mask, whatever the array's length.
                    let empty = cmp(CmpOp::Eq, m.clone(), Expr::I64(0));
                    let ok = bin(
                        BinOp::Or,
                        cmp(CmpOp::Eq, n.clone(), m.clone()),
                        empty.clone(),
                    );
                    self.check(
                        ok, Exception::IndexError,
                        "boolean index did not match indexed array along axis 0; size of axis is {a} but size of corresponding boolean axis is {b}",
                        index.span,
                        n.clone(),
                        m,
                    );
                    // No element is visited then, so the empty mask is never read.
                    arr.len = Expr::Select(empty.boxed(), Expr::I64(0).boxed(), n.boxed());
                }
                let keep = mask.at(Expr::Var(arr.index));
                Ok(Value::Array(self.materialize(&arr, Some(keep))))
            }
            // `w[np.nonzero(m)]`: a tuple holding one index array is that array.
            Value::Tuple(mut items) if items.len() == 1 && matches!(items[0], Value::Array(_)) => {
                let one = items.pop().unwrap();
                super::numpy::indexing::take(self, arr, one, index.span)
            }
            Value::Array(_) | Value::Tuple(_) => {
                super::numpy::indexing::take(self, arr, iv, index.span)
            }
            v => {
                let (i, t) = self.scalar(v, index.span, "an index")?;
                if t != Ty::I64 {
                    return Err(super::bad_scalar_index(self, t, index.span));
                }
                let i = self.checked_index(convert(i, t, Ty::I64), arr.len.clone(), index.span);
                Ok(Value::Scalar(arr.at(i), arr.ty))
            }
        }
    }

    /// `lst[i]` (an int or a bool, as Python takes it) or `lst[lo:hi:step]` of a Python list.
    fn index_list(
        &mut self,
        arr: ArrayVal,
        kind: ElemKind,
        index: &ast::Expr,
        span: Span,
    ) -> Result<Value> {
        if let ExprKind::Slice(lo, hi, step) = &index.kind {
            let part = self.slice(arr, (lo.as_deref(), hi.as_deref(), step.as_deref()), None)?;
            let part = self.array_of(part, span)?;
            return Ok(Value::List(part, kind));
        }
        let v = self.expr(index)?;
        let (i, t) = self.scalar(v, index.span, "a list index")?;
        if t == Ty::F64 {
            return Err(self
                .err(
                    ErrorKind::Type,
                    index.span,
                    "list indices must be integers or slices, not float",
                )
                .hint("use // for integer division, or int(...)"));
        }
        if kind == ElemKind::Mixed {
            return Err(self.mixed_list(span, "reading an element"));
        }
        let len = arr.len.clone();
        let i = self.checked_index_with(
            convert(i, t, Ty::I64),
            len,
            index.span,
            "list index out of range",
        );
        Ok(Value::Scalar(self.list_item(&arr, kind, i), arr.ty))
    }

    /// The error for a use of a list of mixed Python numbers and NumPy scalars that depends on
    /// each element's kind.
    pub(crate) fn mixed_list(&self, span: Span, what: &str) -> crate::error::Error {
        self.err(
            ErrorKind::Unsupported,
            span,
            format!(
                "this list holds Python numbers and NumPy scalars, and {what} depends on which \
                 each element is"
            ),
        )
        .hint("make every element one kind, e.g. `float(...)` around the element, or use np.array(...)")
    }

    /// `a[lo:hi:step]` with Python's clamping; `step` must be a constant. `view`: the span of
    /// the subscript where it makes a NumPy view (not a list), whose stride products may see.
    fn slice(
        &mut self,
        arr: ArrayVal,
        (lo, hi, step): (Option<&ast::Expr>, Option<&ast::Expr>, Option<&ast::Expr>),
        view: Option<Span>,
    ) -> Result<Value> {
        let (start, n, step) = self.slice_bounds(arr.len.clone(), lo, hi, step)?;
        if let Some(span) = view {
            self.check_strided_view(span, (Stride::of_step(step), arr.ty), false);
        }
        let index = self.temp(Ty::I64);
        let at = bin(
            BinOp::Add,
            start,
            bin(BinOp::Mul, Expr::Var(index), Expr::I64(step)),
        );
        Ok(Value::Array(ArrayVal {
            len: n,
            ty: arr.ty,
            index,
            elem: arr.at(at),
        }))
    }

    /// `t[lo:hi:step]` of a tuple or list literal: the items Python's slice picks, which constant
    /// bounds decide (a tuple has no run-time length).
    fn slice_tuple(
        &mut self,
        items: Vec<Value>,
        lo: Option<&ast::Expr>,
        hi: Option<&ast::Expr>,
        step: Option<&ast::Expr>,
        span: Span,
    ) -> Result<Value> {
        let constant = |t: &mut Self, e: Option<&ast::Expr>| -> Result<Option<Option<i64>>> {
            let Some(e) = e else { return Ok(Some(None)) };
            let v = t.expr(e)?;
            if matches!(v, Value::None) {
                return Ok(Some(None));
            }
            let i = t.int(v, e.span, "a slice bound")?;
            Ok(match crate::ir::fold::const_expr(&i) {
                Some(ir::eval::Val::I(k)) => Some(Some(k)),
                _ => None,
            })
        };
        let (lo, hi, step_value) = (
            constant(self, lo)?,
            constant(self, hi)?,
            constant(self, step)?,
        );
        let (Some(lo), Some(hi), Some(step_value)) = (lo, hi, step_value) else {
            return Err(self
                .err(
                    ErrorKind::Unsupported,
                    span,
                    "slicing a list or tuple needs constant bounds",
                )
                .hint("build an array first, e.g. `a = np.array([...])`, and slice it"));
        };
        if step_value == Some(0) {
            let at = step.map_or(span, |s| s.span);
            return Err(self.err(ErrorKind::Type, at, "slice step cannot be zero"));
        }
        let picked = python_slice(items.len() as i64, lo, hi, step_value.unwrap_or(1));
        Ok(Value::Tuple(
            picked.map(|k| items[k as usize].clone()).collect(),
        ))
    }

    /// The positions `lo:hi:step` selects in an array of `len` elements, as Python clamps them:
    /// `(start, count, step)`, element `k` at `start + k * step`; `step` must be a constant.
    pub(crate) fn slice_bounds(
        &mut self,
        len: Expr,
        lo: Option<&ast::Expr>,
        hi: Option<&ast::Expr>,
        step: Option<&ast::Expr>,
    ) -> Result<(Expr, Expr, i64)> {
        let step = match step {
            None => 1,
            Some(s) => {
                let v = self.expr(s)?;
                let e = self.int(v, s.span, "a slice step")?;
                match crate::ir::fold::const_expr(&e) {
                    Some(v) if v.i() != 0 => v.i(),
                    Some(_) => {
                        return Err(self.err(ErrorKind::Type, s.span, "slice step cannot be zero"))
                    }
                    None => {
                        return Err(self.err(
                            ErrorKind::Unsupported,
                            s.span,
                            "the slice step must be a constant",
                        ))
                    }
                }
            }
        };
        let len = self.stable(len, Ty::I64);
        let (lower, upper) = if step > 0 {
            (Expr::I64(0), len.clone())
        } else {
            (Expr::I64(-1), bin(BinOp::Sub, len.clone(), Expr::I64(1)))
        };
        let bound = |t: &mut Self, e: Option<&ast::Expr>, default: Expr| -> Result<Expr> {
            let Some(e) = e else { return Ok(default) };
            let v = t.expr(e)?;
            if matches!(v, Value::None) {
                return Ok(default);
            }
            let i = t.int(v, e.span, "a slice bound")?;
            let i = t.stable(i, Ty::I64);
            // i < 0 ? max(i + len, lower) : min(i, upper)
            let neg = bin(
                BinOp::Max,
                bin(BinOp::Add, i.clone(), len.clone()),
                lower.clone(),
            );
            let pos = bin(BinOp::Min, i.clone(), upper.clone());
            Ok(t.stable(
                Expr::Select(
                    cmp(CmpOp::Lt, i, Expr::I64(0)).boxed(),
                    neg.boxed(),
                    pos.boxed(),
                ),
                Ty::I64,
            ))
        };
        let start = bound(
            self,
            lo,
            if step > 0 {
                lower.clone()
            } else {
                upper.clone()
            },
        )?;
        let stop = bound(
            self,
            hi,
            if step > 0 {
                upper.clone()
            } else {
                lower.clone()
            },
        )?;
        // Python's slice length: (stop - start - 1) // step + 1 when non-empty.
        let n = if step > 0 {
            let d = bin(BinOp::Sub, stop.clone(), start.clone());
            Expr::Select(
                cmp(CmpOp::Gt, d.clone(), Expr::I64(0)).boxed(),
                bin(
                    BinOp::Add,
                    bin(
                        BinOp::FloorDiv,
                        bin(BinOp::Sub, d, Expr::I64(1)),
                        Expr::I64(step),
                    ),
                    Expr::I64(1),
                )
                .boxed(),
                Expr::I64(0).boxed(),
            )
        } else {
            let d = bin(BinOp::Sub, start.clone(), stop.clone());
            Expr::Select(
                cmp(CmpOp::Gt, d.clone(), Expr::I64(0)).boxed(),
                bin(
                    BinOp::Add,
                    bin(
                        BinOp::FloorDiv,
                        bin(BinOp::Sub, d, Expr::I64(1)),
                        Expr::I64(-step),
                    ),
                    Expr::I64(1),
                )
                .boxed(),
                Expr::I64(0).boxed(),
            )
        };
        let n = self.stable(n, Ty::I64);
        Ok((start, n, step))
    }

    // ---- reductions and loops ---------------------------------------------------------------

    /// Emits a reduction into a temporary; `empty` is the error when the array is empty (for ops
    /// that need one).
    pub(crate) fn reduce(
        &mut self,
        op: ReduceOp,
        arr: &ArrayVal,
        span: Span,
        empty: Option<&str>,
    ) -> Result<Expr> {
        let (ein, eout) = op.types();
        let dst = self.temp(eout);
        let on_empty = if op.needs_nonempty() {
            Some(self.site(
                Exception::ValueError,
                empty.unwrap_or("zero-size array to reduction operation which has no identity"),
                span,
            ))
        } else {
            None
        };
        let elem = convert(arr.elem.clone(), arr.ty, ein);
        self.emit(Stmt::Reduce {
            dst,
            op,
            len: arr.len.clone(),
            index: arr.index,
            elem,
            on_empty,
        });
        Ok(Expr::Var(dst))
    }

    /// What a `for` loop iterates, materialised if the body could change what it reads.
    pub(crate) fn iterable(&mut self, iter: &ast::Expr, body: &[ast::Stmt]) -> Result<Iterable> {
        self.check_in_place_writes(iter, body)?;
        let mut assigned = std::collections::HashSet::new();
        super::collect_locals(body, &mut assigned);
        let reads_assigned = |t: &Self, e: &Expr| {
            assigned.iter().any(|n| match t.declared.get(n) {
                Some(super::Local::Scalar(v, _)) => e.uses_var(*v),
                Some(super::Local::Array(a, _)) => super::expr_reads_array(e, *a),
                None => false,
            })
        };
        let fix = |t: &mut Self, a: ArrayVal| -> ArrayVal {
            if a.slot().is_some() && !reads_assigned(t, &a.elem) && !reads_assigned(t, &a.len) {
                a
            } else if reads_assigned(t, &a.elem) || reads_assigned(t, &a.len) {
                t.materialize(&a, None)
            } else {
                a
            }
        };
        if let ExprKind::Call {
            func,
            args,
            keywords,
        } = &iter.kind
        {
            if let ExprKind::Name(n) = &func.kind {
                if (n == "enumerate" || n == "zip") && self.is_builtin_name(n) {
                    if n == "enumerate" {
                        if args.is_empty()
                            || args.len() > 2
                            || !keywords.iter().all(|k| k.name == "start")
                        {
                            return Err(self.err(
                                ErrorKind::Arity,
                                iter.span,
                                "enumerate() takes an array and an optional start",
                            ));
                        }
                        let v = self.expr(&args[0])?;
                        let a = self.sequence_of(v, args[0].span, &fix)?;
                        let start_e = args.get(1).or(keywords.first().map(|k| &k.value));
                        let start = match start_e {
                            Some(s) => {
                                let v = self.expr(s)?;
                                let e = self.int(v, s.span, "enumerate's start")?;
                                self.stable(e, Ty::I64)
                            }
                            None => Expr::I64(0),
                        };
                        return Ok(Iterable::Enumerate(a, start));
                    }
                    let mut arrs = Vec::new();
                    for a in args {
                        let v = self.expr(a)?;
                        arrs.push(self.sequence_of(v, a.span, &fix)?);
                    }
                    if arrs.is_empty() {
                        return Err(self.err(
                            ErrorKind::Arity,
                            iter.span,
                            "zip() needs at least one array",
                        ));
                    }
                    let mut len = arrs[0].arr.len.clone();
                    for a in &arrs[1..] {
                        len = bin(BinOp::Min, len, a.arr.len.clone());
                    }
                    let len = self.stable(len, Ty::I64);
                    return Ok(Iterable::Zip(arrs, len));
                }
            }
        }
        if let Some(arg) = self.reversed_arg(iter)? {
            let v = self.expr(arg)?;
            let seq = self.sequence_of(v, arg.span, &fix)?;
            return Ok(Iterable::Seq(self.reversed(seq)));
        }
        let v = self.expr(iter)?;
        if let Some(columns) = tuple_columns(&v) {
            // `for dy, dx in ((-1, 0), (1, 0))`: the items, read by index, are zip's of the
            // columns `(-1, 1)` and `(0, 0)`.
            let len = Expr::I64(columns[0].len() as i64);
            let mut seqs = Vec::new();
            for column in columns {
                seqs.push(self.sequence_of(Value::Tuple(column), iter.span, &fix)?);
            }
            return Ok(Iterable::Zip(seqs, len));
        }
        let seq = self
            .sequence_of(v, iter.span, &fix)
            .map_err(|e| e.hint("for loops iterate over arrays, range(), enumerate() or zip()"))?;
        Ok(Iterable::Seq(seq))
    }

    /// The argument of `reversed(seq)` where `iter` is that call. Only iteration takes it: the
    /// iterator Python makes has no length, index or arithmetic, so elsewhere the name stays
    /// unsupported.
    fn reversed_arg<'e>(&self, iter: &'e ast::Expr) -> Result<Option<&'e ast::Expr>> {
        let Some((args, keywords)) = self.builtin_call(iter, "reversed") else {
            return Ok(None);
        };
        if args.len() != 1 || !keywords.is_empty() {
            return Err(self.err(
                ErrorKind::Arity,
                iter.span,
                "reversed() takes exactly one argument",
            ));
        }
        let arg = &args[0];
        if matches!(&arg.kind, ExprKind::Call { func, .. } if matches!(&func.kind, ExprKind::Name(n) if n == "range"))
        {
            return Err(self
                .err(
                    ErrorKind::Unsupported,
                    arg.span,
                    "reversed() of a range is not supported",
                )
                .hint("count down instead: range(n - 1, -1, -1)"));
        }
        Ok(Some(arg))
    }

    /// Refuses a loop whose body writes in place into an array its iterable reads, where the
    /// lowering's reads would not be Python's: Python iterates a view (`x`, `x[2:]`,
    /// `reversed(x)`) live, seeing element writes, and a computed array (`x * 2`, `x.copy()`,
    /// `x[idx]`) as made once before the loop. The lowering reads a computed array from its
    /// sources as it goes, and takes `x += v` for a rebinding (which the loop does not see),
    /// where NumPy updates the array in place.
    fn check_in_place_writes(&self, iter: &ast::Expr, body: &[ast::Stmt]) -> Result<()> {
        let (written, whole) = super::rebind::in_place_writes(body);
        // range()'s arguments are read once, before the loop.
        if written.is_empty() || self.builtin_call(iter, "range").is_some() {
            return Ok(());
        }
        let mut read = Vec::new();
        crate::syntax::visit::names_in(iter, &mut read);
        let view = self.is_view(iter);
        for name in read.iter().filter(|n| written.contains(*n)) {
            let shown = super::rebind::display(name);
            if view && whole.contains(name) && self.may_hold_array(name) {
                return Err(self
                    .err(
                        ErrorKind::Unsupported,
                        iter.span,
                        format!("the loop updates `{shown}` in place (`{shown} += ...`) while iterating over it"),
                    )
                    .hint("iterate by index, `for i in range(len(a)):`, or over a copy made before the loop"));
            }
            if !view && !whole.contains(name) {
                return Err(self
                    .err(
                        ErrorKind::Unsupported,
                        iter.span,
                        format!("the loop writes into `{shown}`, which the array it iterates over is computed from"),
                    )
                    .hint("Python computes that array once, before the loop: assign it to a name first (`vals = ...`), then iterate over vals"));
            }
        }
        Ok(())
    }

    /// Whether iterating `e` reads NumPy views of named arrays: a name, a basic slice of one, or
    /// `reversed`, `enumerate` or `zip` of such (which read them by index as they go).
    fn is_view(&self, e: &ast::Expr) -> bool {
        if let Some((args, _)) = self.builtin_call(e, "reversed") {
            return args.len() == 1 && self.is_view(&args[0]);
        }
        if let Some((args, _)) = self.builtin_call(e, "enumerate") {
            return args.first().is_some_and(|a| self.is_view(a));
        }
        if let Some((args, _)) = self.builtin_call(e, "zip") {
            return args.iter().all(|a| self.is_view(a));
        }
        let basic = |i: &ast::Expr| matches!(i.kind, ExprKind::Slice(..) | ExprKind::Int(_));
        match &e.kind {
            ExprKind::Name(_) => true,
            ExprKind::Subscript(base, index) => {
                let index_basic = match &index.kind {
                    ExprKind::Tuple(items) => items.iter().all(basic),
                    _ => basic(index),
                };
                index_basic && self.is_view(base)
            }
            _ => false,
        }
    }

    /// The arguments of `e` where it calls Python's builtin `name` (no local or import takes
    /// the name).
    pub(super) fn builtin_call<'e>(
        &self,
        e: &'e ast::Expr,
        name: &str,
    ) -> Option<(&'e [ast::Expr], &'e [ast::Keyword])> {
        match &e.kind {
            ExprKind::Call {
                func,
                args,
                keywords,
            } => match &func.kind {
                ExprKind::Name(n) if n == name && self.is_builtin_name(n) => Some((args, keywords)),
                _ => None,
            },
            _ => None,
        }
    }

    /// `seq` read from its last item to its first: item `i` is item `len - 1 - i`.
    fn reversed(&mut self, seq: Seq) -> Seq {
        let arr = seq.arr;
        let len = self.stable(arr.len.clone(), Ty::I64);
        let index = self.temp(Ty::I64);
        let last = bin(BinOp::Sub, len.clone(), Expr::I64(1));
        let elem = arr.at(bin(BinOp::Sub, last, Expr::Var(index)));
        let kinds = match seq.kinds {
            ItemKinds::PerItem(mut provs) => {
                provs.reverse();
                ItemKinds::PerItem(provs)
            }
            kinds => kinds,
        };
        Seq {
            arr: ArrayVal {
                len,
                ty: arr.ty,
                index,
                elem,
            },
            kinds,
        }
    }

    /// A value iterated by index (by a loop, a comprehension, `enumerate` or `zip`), with what
    /// kind of number each item is: an array's are NumPy scalars, a list's its own kind, a
    /// tuple's each its own (`for v in (0.0, 2.0): 1 / v` raises, as in Python). A 2-D array
    /// (whose items are rows) and a tuple of ints beside floats (which would share one type) are
    /// refused.
    fn sequence_of(
        &mut self,
        v: Value,
        span: Span,
        fix: &dyn Fn(&mut Self, ArrayVal) -> ArrayVal,
    ) -> Result<Seq> {
        let (arr, kinds) = match v {
            Value::Matrix(..) => {
                return Err(self
                    .err(
                        ErrorKind::Unsupported,
                        span,
                        "iterating over a 2-D array (its items are rows)",
                    )
                    .hint("iterate over its rows by index, `for i in range(len(m)): m[i]`, or over m.ravel()"))
            }
            Value::List(_, ElemKind::Mixed) => {
                return Err(self.mixed_list(span, "iterating over it"))
            }
            Value::List(a, ElemKind::Python) => (a, ItemKinds::Python),
            Value::List(a, _) => (a, ItemKinds::NumPy),
            Value::Tuple(items) => {
                let mut provs = Vec::new();
                let mut types = Vec::new();
                for it in &items {
                    if let Value::Scalar(e, ty) = it {
                        provs.push(self.prov(e));
                        types.push(if *ty == Ty::Bool { Ty::I64 } else { *ty });
                    }
                }
                if types.windows(2).any(|w| w[0] != w[1]) {
                    return Err(self
                        .err(
                            ErrorKind::Unsupported,
                            span,
                            "iterating over ints and floats together",
                        )
                        .hint("write the ints as floats (1.0), or loop over each kind apart"));
                }
                (self.array_of(Value::Tuple(items), span)?, ItemKinds::PerItem(provs))
            }
            v => (self.array_of(v, span)?, ItemKinds::NumPy),
        };
        Ok(Seq {
            arr: fix(self, arr),
            kinds,
        })
    }
}

/// How the operands of an element-wise binary operation were given.
#[derive(Clone, Copy)]
struct Operands {
    /// At least one is an array.
    elementwise: bool,
    /// The right operand is one number (for `**`, NumPy's power loop then takes shortcuts).
    one_exponent: bool,
}

/// A tiny combinator for readability in match arms.
trait Pipe: Sized {
    fn pipe<R>(self, f: impl FnOnce(Self) -> R) -> R {
        f(self)
    }
}
impl<T> Pipe for T {}

/// The columns of a tuple of equally long tuples of numbers (`((-1, 0), (1, 0))` has the columns
/// `(-1, 1)` and `(0, 0)`); `None` for any other value.
fn tuple_columns(v: &Value) -> Option<Vec<Vec<Value>>> {
    let Value::Tuple(rows) = v else { return None };
    let width = match rows.first()? {
        Value::Tuple(first) if !first.is_empty() => first.len(),
        _ => return None,
    };
    let mut columns = vec![Vec::with_capacity(rows.len()); width];
    for row in rows {
        let Value::Tuple(items) = row else {
            return None;
        };
        if items.len() != width || !items.iter().all(|i| matches!(i, Value::Scalar(..))) {
            return None;
        }
        for (column, item) in columns.iter_mut().zip(items) {
            column.push(item.clone());
        }
    }
    Some(columns)
}

/// The positions Python's `seq[lo:hi:step]` picks from a sequence of `len` items (`step` not 0),
/// in order: each bound clamped as `slice.indices` does.
fn python_slice(
    len: i64,
    lo: Option<i64>,
    hi: Option<i64>,
    step: i64,
) -> impl Iterator<Item = i64> {
    let (lower, upper) = if step > 0 { (0, len) } else { (-1, len - 1) };
    let clamp = |b: Option<i64>, default: i64| match b {
        None => default,
        Some(i) if i < 0 => (i + len).max(lower),
        Some(i) => i.min(upper),
    };
    let start = clamp(lo, if step > 0 { lower } else { upper });
    let stop = clamp(hi, if step > 0 { upper } else { lower });
    let mut k = start;
    std::iter::from_fn(move || {
        let inside = if step > 0 { k < stop } else { k > stop };
        let here = k;
        k += step;
        inside.then_some(here)
    })
}

/// Whether `e` is written as a tuple: a tuple display, an array's `.shape` or `np.shape(...)`.
/// (A list display is lowered as a tuple too, but a list never equals a tuple in Python.)
fn tuple_syntax(e: &ast::Expr) -> bool {
    match &e.kind {
        ast::ExprKind::Tuple(_) => true,
        ast::ExprKind::Attribute(_, attr) => attr == "shape",
        ast::ExprKind::Call { func, .. } => matches!(&func.kind,
            ast::ExprKind::Attribute(m, f) if f == "shape"
                && matches!(&m.kind, ast::ExprKind::Name(n) if n == "np" || n == "numpy")),
        _ => false,
    }
}

/// The stride of a pick of a 2-D array as products see it. A part of a row steps as its
/// columns do; a part of a column, by whole rows. A block is positive where its rows step
/// forwards past one column; negative where its rows or columns run backwards (a view of it
/// may then step forwards again only through a backwards slice, which `strided_dots.rs`
/// follows); else its rows are contiguous, and where it may be one column wide (`m[:, 2:3]`)
/// a `reshape` of it is a view stepping by rows.
fn pick_stride(r: &super::selection::Pick, c: &super::selection::Pick) -> Stride {
    use super::selection::Pick;
    let one_column = |n: &Expr| !matches!(crate::ir::fold::const_expr(n), Some(v) if v.i() > 1);
    match (r, c) {
        (Pick::One(_), Pick::One(_)) => Stride::Contiguous,
        (Pick::One(_), Pick::Range { step, .. }) => Stride::of_step(*step),
        (Pick::Range { step, .. }, Pick::One(_)) if *step > 0 => Stride::Positive,
        (Pick::Range { .. }, Pick::One(_)) => Stride::Negative,
        (Pick::Range { step: rs, .. }, Pick::Range { step: cs, n, .. }) => {
            // One column stepping backwards is a line stepping by rows, forwards.
            if *cs > 1 || (*cs < 0 && *rs > 0 && one_column(n)) {
                Stride::Positive
            } else if *rs < 0 || *cs < 0 {
                Stride::Negative
            } else if one_column(n) {
                Stride::MaybeOneColumn
            } else {
                Stride::Contiguous
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::python_slice;

    #[test]
    fn a_sequence_slice_picks_what_python_picks() {
        // CPython's `list(range(5))[lo:hi:step]` for each case.
        type Case = (Option<i64>, Option<i64>, i64, &'static [i64]);
        let cases: [Case; 8] = [
            (None, None, -1, &[4, 3, 2, 1, 0]),
            (Some(-2), None, 1, &[3, 4]),
            (Some(1), Some(9), 2, &[1, 3]),
            (Some(3), Some(0), -2, &[3, 1]),
            (Some(-7), Some(-2), 1, &[0, 1, 2]),
            (Some(9), None, -3, &[4, 1]),
            (None, Some(-7), -1, &[4, 3, 2, 1, 0]),
            (Some(3), Some(1), 1, &[]),
        ];
        for (lo, hi, step, want) in cases {
            let got: Vec<i64> = python_slice(5, lo, hi, step).collect();
            assert_eq!(got, want, "[{lo:?}:{hi:?}:{step}]");
        }
    }
}
