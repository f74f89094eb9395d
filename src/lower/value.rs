//! What an AST expression lowers to before it becomes IR: a scalar, a lazy array, a tuple, or a
//! name that only makes sense in a call (`np`, `np.sum`, `x.mean`).

use crate::ir::{Arr, Expr, Ty, Var};

use super::names::{Builtin, Module};

/// An array as the lowering sees it: `len` elements `elem(i)`, computed on demand.
///
/// Element-wise operations compose `elem` expressions, so `np.sum(np.abs(x - c) * w)` becomes
/// one reduction over a fused expression, with no temporary array. Only operations that need
/// their input all at once (masks, sorting, concatenation, assignment to a name) materialise
/// into a scratch array with [`crate::ir::Stmt::Fill`].
#[derive(Clone, Debug)]
pub struct ArrayVal {
    pub len: Expr,
    pub ty: Ty,
    /// The variable `elem` uses as the element index.
    pub index: Var,
    pub elem: Expr,
}

impl ArrayVal {
    /// The array slot this is a plain view of, if `elem` is exactly `arr[index]`.
    pub fn slot(&self) -> Option<Arr> {
        match &self.elem {
            Expr::Load(a, i) if **i == Expr::Var(self.index) => Some(*a),
            _ => None,
        }
    }

    /// The element expression at another index expression.
    pub fn at(&self, index: Expr) -> Expr {
        self.elem.clone().replacing_var(self.index, &index)
    }
}

/// What the elements of a [`Value::List`] are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElemKind {
    /// Python numbers (`[float(v) for v in x]`, `[1 for v in x if v > 0]`).
    Python,
    /// NumPy scalars (`[v * v for v in x]`, `sorted(x)`).
    NumPy,
    /// Either, per element (`[0 if v < 0 else v for v in x]`): only uses that do not depend on
    /// the kind are allowed (NumPy's conversion to an array, `len`, truth tests).
    Mixed,
}

#[derive(Clone, Debug)]
pub enum Value {
    Scalar(Expr, Ty),
    Array(ArrayVal),
    /// A 2-D array from `reshape`: its elements in row-major order, and the number of columns.
    Matrix(ArrayVal, Expr),
    Tuple(Vec<Value>),
    /// A Python list of numbers from a comprehension, `sorted()` or `list()`: its elements in
    /// order, of one IR type, each a Python number or a NumPy scalar as `ElemKind` says. Unlike an
    /// array it has no arithmetic (`+` concatenates, `*` repeats: refused); NumPy functions
    /// convert it to an array.
    List(ArrayVal, ElemKind),
    /// `np`/`numpy` or `math`.
    Module(Module),
    /// A function value, e.g. `np.median` or `len`.
    Function(Builtin),
    /// `typing` (`Typing(false)`) or `typing.cast` (`Typing(true)`): `cast(T, v)` is `v`.
    Typing(bool),
    /// A helper function of the program (its index in `Program::helpers`), inlined when called.
    Helper(usize),
    /// A method bound to its receiver, e.g. `x.sum`.
    Method(Box<Value>, String),
    /// `x.shape`: a tuple of one length, kept apart so that `.shape[0]` works.
    None,
    Ellipsis,
    Str(String),
    /// `collections.Counter(data)`: the data (a 1-D array, list or tuple of numbers) and where it
    /// was written, counted where the counts are read (`builtins::collections`).
    Counter(Box<(Value, crate::error::Span)>),
    /// `Counter(data).most_common(n)` (`n` at least 1, or all): the list of `(item, count)`
    /// pairs, of which ndjit reads the first (`[0]`).
    MostCommon(Box<(Value, crate::error::Span)>),
}

impl Value {
    /// The element type of a NumPy array (1-D or 2-D); `None` for anything else.
    pub fn element_type(&self) -> Option<Ty> {
        match self {
            Value::Array(a) | Value::Matrix(a, _) => Some(a.ty),
            _ => None,
        }
    }

    pub fn describe(&self) -> &'static str {
        match self {
            Value::Scalar(_, Ty::F64) => "a float",
            Value::Scalar(_, Ty::I64) => "an int",
            Value::Scalar(_, Ty::Bool) => "a bool",
            Value::Array(_) => "an array",
            Value::Matrix(..) => "a 2-D array",
            Value::Tuple(_) => "a tuple",
            Value::List(..) => "a list",
            Value::Module(_) => "a module",
            Value::Function(_) | Value::Method(..) | Value::Helper(_) | Value::Typing(true) => {
                "a function"
            }
            Value::Typing(false) => "a module",
            Value::None => "None",
            Value::Ellipsis => "Ellipsis",
            Value::Str(_) => "a string",
            Value::Counter(_) => "a Counter",
            Value::MostCommon(_) => "a list of (item, count) pairs",
        }
    }
}

/// The rows of a 2-D array of `len` elements in rows of `cols` (`Value::Matrix`): the count over
/// the columns, 0 where there are none (a shape `(n, 0)` with `n > 0`, which this cannot tell
/// from `(0, 0)`, is refused where it arises: `Translator::check_matrix_shape`).
pub fn matrix_rows(len: Expr, cols: Expr) -> Expr {
    use crate::ir::BinOp;
    let per_row = Expr::Binary(BinOp::Max, cols.boxed(), Expr::I64(1).boxed());
    Expr::Binary(BinOp::FloorDiv, len.boxed(), per_row.boxed())
}
