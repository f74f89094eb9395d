//! The one IR that every backend lowers.
//!
//! A filter is a [`Func`]: typed scalar variables, array slots, and a structured body of [`Stmt`]s.
//!
//! **Two invariants make every backend simple:**
//! - [`Expr`] is *pure and total*. Evaluating an expression never fails, never traps and never reads
//!   outside an array: every load's index has been proved in range, either by a dominating
//!   [`Stmt::Check`] or by the loop bounds of the [`Stmt::Reduce`]/[`Stmt::Fill`] it sits in.
//!   So a backend may evaluate any expression eagerly (as `Select` does) without guards.
//! - All partiality lives in statements. [`Stmt::Check`] fails the call with a recorded error.
//!
//! Floating-point semantics are NumPy float64's and are defined here, once: see [`BinOp`],
//! [`ReduceOp`] and [`crate::math`]. The interpreter ([`crate::interp`]) is the executable
//! definition; the Cranelift and PTX backends must agree with it bit for bit.

pub mod chains;
pub mod eval;
pub mod facts;
pub mod fold;
pub mod if_convert;
pub mod network;
pub mod optimize;
pub mod print;
pub mod ranges;
pub mod sorts_of_taps;
pub mod substitute;
pub mod zero_signs;

pub use optimize::{optimize, Pass};
pub use sorts_of_taps::sorts_of_taps;
pub use substitute::{substitute, BufferValues, Known};

use crate::error::Span;
use crate::math::MathFn;

/// Scalar types. Array elements have one of these types too.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ty {
    Bool,
    I64,
    F64,
}

impl Ty {
    pub fn name(self) -> &'static str {
        match self {
            Ty::Bool => "bool",
            Ty::I64 => "int",
            Ty::F64 => "float",
        }
    }

    /// The dtype NumPy gives an array of these elements.
    pub fn numpy_name(self) -> &'static str {
        match self {
            Ty::Bool => "bool",
            Ty::I64 => "int64",
            Ty::F64 => "float64",
        }
    }
}

/// A scalar local variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Var(pub u32);

/// An array slot: the input buffer, a bound array, or a scratch array the function fills.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Arr(pub u32);

/// The slot of the input buffer: always `Arr(0)`.
pub const BUFFER: Arr = Arr(0);

/// The C signature a function is compiled for: which scipy API calls it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Sig {
    /// `generic_filter`: `int f(double *buffer, intptr_t filter_size, double *return_value,
    /// void *user_data)`. `Return(e)` stores `e` and returns 1.
    #[default]
    Filter,
    /// `generic_filter1d`: `int f(double *input_line, intptr_t input_length, double *output_line,
    /// intptr_t output_length, void *user_data)`. The body writes [`OUTPUT`]; `Succeed` returns 1.
    Filter1d,
    /// `geometric_transform`: `int f(intptr_t *output_coordinates, double *input_coordinates,
    /// int output_rank, int input_rank, void *user_data)`. [`BUFFER`] holds the output
    /// coordinates (i64, kind [`ArrKind::Coords`]); the body writes [`OUTPUT`]; `Succeed` returns 1.
    Transform,
    /// `quad`: `double f(int n, double *xx, void *user_data)`. [`BUFFER`] is `xx`; `Return(e)`
    /// returns `e`; a failure returns NaN (quad has no error channel).
    Integrand,
}

impl Sig {
    /// scipy's capsule name for the signature (compared character for character), as the C
    /// string a capsule is named with. The one place these names are written.
    pub fn capsule_c_name(self) -> &'static std::ffi::CStr {
        match self {
            Sig::Filter => c"int (double *, intptr_t, double *, void *)",
            Sig::Filter1d => c"int (double *, intptr_t, double *, intptr_t, void *)",
            Sig::Transform => c"int (intptr_t *, double *, int, int, void *)",
            Sig::Integrand => c"double (int, double *, void *)",
        }
    }

    /// [`Sig::capsule_c_name`] as text.
    pub fn capsule_name(self) -> &'static str {
        self.capsule_c_name()
            .to_str()
            .expect("capsule names are ASCII")
    }
}

/// The slot of the output array of [`Sig::Filter1d`] and [`Sig::Transform`]: always `Arr(1)`.
pub const OUTPUT: Arr = Arr(1);

/// Where an array's memory comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum ArrKind {
    /// The `double *buffer` argument (the input line, or quad's `xx`); its length is
    /// `filter_size` (the input length, or quad's `n`).
    Buffer,
    /// The `intptr_t *output_coordinates` argument of a transform: i64 elements, `output_rank` of
    /// them. It is [`BUFFER`] for [`Sig::Transform`].
    Coords,
    /// The writable output array of [`Sig::Filter1d`] (the output line) and [`Sig::Transform`] (the
    /// input coordinates): f64 elements, length given by the caller. Always [`OUTPUT`].
    Output,
    /// The `i`-th bound array of the [`crate::Layout`], read from `user_data`.
    Bound(u32),
    /// Scratch storage written by [`Stmt::Fill`]; 8 bytes per element, elements of type `elem`.
    /// Its length is set by the last `Fill`.
    Scratch { elem: Ty },
}

#[derive(Clone, Debug, PartialEq)]
pub struct ArrDecl {
    pub kind: ArrKind,
    pub name: String,
}

impl ArrDecl {
    pub fn elem(&self) -> Ty {
        match self.kind {
            ArrKind::Scratch { elem } => elem,
            ArrKind::Coords => Ty::I64,
            _ => Ty::F64,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct VarDecl {
    pub ty: Ty,
    /// The user's name, or a `%tN` temporary name.
    pub name: String,
}

/// A scalar expression. Pure and total (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    F64(f64),
    I64(i64),
    Bool(bool),
    Var(Var),
    /// The `i`-th bound scalar (f64) of the layout.
    Param(u32),
    /// The `i`-th bound integer (i64) of the layout.
    IntParam(u32),
    /// The length of an array, as i64.
    Len(Arr),
    /// Element `index` (i64, proved in range) of an array.
    Load(Arr, Box<Expr>),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// Comparison of two operands of the same type, giving Bool. IEEE: any comparison with NaN is
    /// false except `Ne`.
    Cmp(CmpOp, Box<Expr>, Box<Expr>),
    /// `if c { a } else { b }`, both sides evaluated.
    Select(Box<Expr>, Box<Expr>, Box<Expr>),
    /// A math function of f64 arguments returning f64, see [`MathFn`].
    Call(MathFn, Vec<Expr>),
    /// Conversion to the given type, see [`Expr::ty`] for the operand type. Semantics:
    /// f64→i64 truncates toward zero and saturates (NaN → 0); i64→f64 rounds to nearest;
    /// anything→bool is `!= 0` (NaN is true); bool→number is 0 or 1.
    Cast(Ty, Box<Expr>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// Negation (f64: flips the sign bit; i64: wrapping).
    Neg,
    /// Boolean not.
    Not,
    /// Bitwise not of an i64.
    BitNot,
    /// |x| (f64 clears the sign bit; i64 wrapping).
    Abs,
    /// IEEE operations on f64, correctly rounded: every backend has an instruction for them.
    Sqrt,
    Floor,
    Ceil,
    Trunc,
    /// Round half to even (`np.round`, Python's `round`).
    RoundEven,
    IsNan,
    IsInf,
    IsFinite,
    /// Whether an f64's sign bit is set (negatives, `-0.0`, a NaN with its sign bit): the only
    /// test that tells `-0.0` from `0.0` without a division or a math call
    /// ([`zero_signs`] guards NumPy's choices between the two with it).
    SignBit,
}

/// Binary operators. Both operands have the same type (the lowering inserts casts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// IEEE add/sub/mul/div on f64 (never fused); wrapping on i64. `Div` is f64 only.
    Add,
    Sub,
    Mul,
    Div,
    /// Python floor division and modulo on i64: floor semantics, the divisor proved non-zero,
    /// `i64::MIN // -1` wraps. (On f64 they are [`MathFn::FloorDiv`] and [`MathFn::Remainder`].)
    FloorDiv,
    Mod,
    /// NumPy `minimum`/`maximum`: NaN if either operand is NaN, else the smaller/larger
    /// (`a <= b ? a : b` for min once NaN is excluded, so the first operand wins ties).
    Min,
    Max,
    /// Python's builtin `min(a, b)` / `max(a, b)` on two numbers: `b < a ? b : a` (and
    /// `b > a ? b : a`), so the result on NaN depends on argument order exactly as in CPython.
    PyMin,
    PyMax,
    /// `math.copysign`, `math.atan2`-style two-argument IEEE ops live in [`MathFn`]; these are
    /// the bitwise ops on bool and i64.
    And,
    Or,
    Xor,
    /// Shifts of an i64 by a count masked to `0..63` on every backend (the lowering gives counts
    /// outside that range NumPy's or Python's meaning).
    Shl,
    Shr,
    /// The high 64 bits of the signed 128-bit product of two i64: `a * b` overflows exactly when
    /// they differ from the sign fill `(a * b) >> 63` of the low half. i64 only.
    MulHi,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

/// Explicit reductions over `len` elements `elem(i)`, `i = 0..len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// f64 sum in NumPy's pairwise order (see [`crate::runtime::pairwise_sum`]): sequential
    /// below 8 elements, eight interleaved partial sums up to 128, split in two above. Empty: 0.0.
    Sum,
    /// f64 sum strictly left to right from `+0.0`: `((0.0 + e0) + e1) + ...`, the order of
    /// Python's builtin `sum` over NumPy scalars (`0 + x0` turns a `-0.0` first element into
    /// `0.0`, as in CPython). Empty: 0.0.
    SumSeq,
    /// i64 wrapping sum, in order. Empty: 0.
    SumInt,
    /// f64 product, in order. Empty: 1.0.
    Prod,
    /// NumPy min/max: NaN if any element is NaN. Empty: the statement's `on_empty` check fails.
    Min,
    Max,
    /// CPython's builtin `min(iterable)`/`max(iterable)`: `acc = e0; for v: if v < acc: acc = v`
    /// (`>` for max), so a NaN is kept only when it comes first. Empty: `on_empty` fails.
    PyMin,
    PyMax,
    /// Index of the first minimum/maximum (the first NaN if there is one), as i64.
    ArgMin,
    ArgMax,
    /// Bool reductions; empty: false / true.
    Any,
    All,
    /// Number of true elements (i64).
    Count,
}

impl ReduceOp {
    /// The type of `elem` the op consumes and the type of its result.
    pub fn types(self) -> (Ty, Ty) {
        match self {
            ReduceOp::Sum
            | ReduceOp::SumSeq
            | ReduceOp::Prod
            | ReduceOp::Min
            | ReduceOp::Max
            | ReduceOp::PyMin
            | ReduceOp::PyMax => (Ty::F64, Ty::F64),
            ReduceOp::SumInt => (Ty::I64, Ty::I64),
            ReduceOp::ArgMin | ReduceOp::ArgMax => (Ty::F64, Ty::I64),
            ReduceOp::Any | ReduceOp::All => (Ty::Bool, Ty::Bool),
            ReduceOp::Count => (Ty::Bool, Ty::I64),
        }
    }
    /// Whether an empty input has no result (the statement then needs an `on_empty` error).
    pub fn needs_nonempty(self) -> bool {
        matches!(
            self,
            ReduceOp::Min
                | ReduceOp::Max
                | ReduceOp::PyMin
                | ReduceOp::PyMax
                | ReduceOp::ArgMin
                | ReduceOp::ArgMax
        )
    }
}

/// Operations on a whole scratch array, implemented by shared runtime routines
/// ([`crate::runtime`]) that every backend calls, so they agree by construction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArrayOp {
    /// Sort ascending, NaN last (NumPy's order). `of_taps`: the array holds the first taps in
    /// order, as a [`Stmt::Fill`] of `x[i]` left it (a quantile's, `np.sort(x)[k]`'s). Lowering
    /// never sets it; [`Pass::SortsOfTaps`] does, where [`sorts_of_taps()`] proves it. The sort is
    /// the same either way, so a backend may ignore the flag, or sort the taps' values in the
    /// image's own type (the GPU sorts a float32 image's taps as float32: they order as the
    /// doubles they convert to exactly).
    Sort { of_taps: bool },
}

impl ArrayOp {
    /// The sort lowering emits: nothing known of the array's values.
    pub const SORT: ArrayOp = ArrayOp::Sort { of_taps: false };
}

/// Functions of a sorted f64 array computed by shared runtime routines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SortedStat {
    /// NumPy median: NaN if empty or if any NaN, else the middle or the mean of the two middles.
    Median,
    /// NumPy linear-method quantile at `q` in [0, 1]: NaN if empty or if any NaN.
    Quantile,
}

/// An index into [`Func::errors`]: the message and location of one possible run-time failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ErrorId(pub u32);

/// A possible run-time failure. The message may contain `{a}` and `{b}`, replaced by the two
/// i64 detail values the check passes (e.g. the index and the size).
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorSite {
    pub message: String,
    pub span: Span,
    /// The Python exception the user's own code would raise here.
    pub exception: Exception,
}

pub use crate::error::Exception;

#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    Assign(Var, Expr),
    /// `arr[index] = value` on a scratch or output array, index proved in range.
    Store(Arr, Expr, Expr),
    If(Expr, Vec<Stmt>, Vec<Stmt>),
    /// Runs `body` then `latch` forever; `Break` leaves, `Continue` jumps to `latch`.
    Loop {
        body: Vec<Stmt>,
        latch: Vec<Stmt>,
    },
    Break,
    Continue,
    /// If `cond` is false: record error `err` with details `a`, `b` (i64) and return failure.
    Check {
        cond: Expr,
        err: ErrorId,
        a: Expr,
        b: Expr,
    },
    /// Store the f64 result and return success ([`Sig::Filter`]), or return it ([`Sig::Integrand`]).
    Return(Expr),
    /// Return success without a value ([`Sig::Filter1d`], [`Sig::Transform`]: the output array
    /// holds the result).
    Succeed,
    /// `dst = op(elem(i) for i in 0..len)` where `index` is bound to i inside `elem`.
    /// `on_empty` is required exactly when `op.needs_nonempty()`.
    Reduce {
        dst: Var,
        op: ReduceOp,
        len: Expr,
        index: Var,
        elem: Expr,
        on_empty: Option<ErrorId>,
    },
    /// Materialise `elem(i)` for `i in 0..len` into scratch array `dst`, keeping only the elements
    /// for which `keep(i)` is true (when given). Sets `dst`'s length to the number kept. Into
    /// [`OUTPUT`] (never with `keep`), it writes elements `0..len`, which a check has proved to be
    /// the output's length; `elem(i)` may read the output only at index `i`.
    Fill {
        dst: Arr,
        len: Expr,
        index: Var,
        elem: Expr,
        keep: Option<Expr>,
    },
    /// An in-place whole-array operation on a scratch array.
    ArrayOp(ArrayOp, Arr),
    /// `dst = stat(arr)` for a sorted f64 scratch array; `q` is the quantile (ignored for median).
    Sorted {
        dst: Var,
        stat: SortedStat,
        arr: Arr,
        q: Expr,
    },
    /// `dst = median(elems)` by a sorting network, emitted by [`network::expand_medians`] for a
    /// median of a known length (see that module for why it is exact). Every element is
    /// evaluated; when their sum (in [`network::balanced_sum`] order) is NaN, `fallback` runs
    /// instead: the runtime's own statements, which give NumPy's NaN. Otherwise the values are
    /// sorted by the comparators of [`network::batcher_pairs`], each `(i, j)` setting
    /// `(v[i], v[j]) = v[j] < v[i] ? (v[j], v[i]) : (v[i], v[j])`, and `dst` is `0.0 + v[n/2]`
    /// (odd `n`) or `(0.0 + v[n/2-1] + v[n/2]) / 2.0` (even `n`). Which branch runs never changes
    /// the result, only the speed, so a backend may test for a NaN value instead of a NaN sum
    /// (however it finds one: the GPU's float32 networks carry a NaN to their result) and then
    /// assign what [`network::nan_result`] reads from the fallback. When `elems[k]` is `x[k]`
    /// for every `k`, this is the median of the whole footprint, which the GPU computes for two
    /// (or four) neighbouring outputs at once.
    MedianNetwork {
        dst: Var,
        elems: Vec<Expr>,
        fallback: Vec<Stmt>,
    },
}

impl Stmt {
    /// Whether the statement writes variable `v` anywhere in it, a reduction's or fill's index
    /// included.
    pub fn writes(&self, v: Var) -> bool {
        match self {
            Stmt::Assign(w, _) | Stmt::Sorted { dst: w, .. } => *w == v,
            Stmt::Reduce { dst, index, .. } => *dst == v || *index == v,
            Stmt::Fill { index, .. } => *index == v,
            Stmt::If(_, a, b) => a.iter().chain(b).any(|s| s.writes(v)),
            Stmt::MedianNetwork { dst, fallback, .. } => {
                *dst == v || fallback.iter().any(|s| s.writes(v))
            }
            Stmt::Loop { body, latch } => body.iter().chain(latch).any(|s| s.writes(v)),
            _ => false,
        }
    }
}

/// What the lowering produced for one filter program: the body and its declarations.
#[derive(Clone, Debug, PartialEq)]
pub struct Func {
    pub vars: Vec<VarDecl>,
    pub arrays: Vec<ArrDecl>,
    pub body: Vec<Stmt>,
    pub errors: Vec<ErrorSite>,
    /// `Some(n)` when compiled for a known `filter_size`: `Len(BUFFER)` has been replaced by `n`.
    pub filter_size: Option<usize>,
    /// The C signature the function is compiled for.
    pub sig: Sig,
}

impl Func {
    pub fn var_ty(&self, v: Var) -> Ty {
        self.vars[v.0 as usize].ty
    }

    /// Whether a call can fail: a [`Stmt::Check`] is left somewhere in the body (after
    /// optimisation, only those that folding could not decide).
    pub fn can_fail(&self) -> bool {
        any_stmt(&self.body, &|s| matches!(s, Stmt::Check { .. }))
    }
}

/// Whether any statement of `stmts`, nested ones included, satisfies `p`.
pub fn any_stmt(stmts: &[Stmt], p: &dyn Fn(&Stmt) -> bool) -> bool {
    stmts.iter().any(|s| {
        let mut nested = false;
        stmt_blocks(s, |b| nested |= any_stmt(b, p));
        p(s) || nested
    })
}

impl Expr {
    /// The type of an expression, given the function's declarations.
    pub fn ty(&self, f: &Func) -> Ty {
        match self {
            Expr::F64(_) | Expr::Param(_) => Ty::F64,
            Expr::I64(_) | Expr::Len(_) | Expr::IntParam(_) => Ty::I64,
            Expr::Bool(_) | Expr::Cmp(..) => Ty::Bool,
            Expr::Var(v) => f.var_ty(*v),
            Expr::Load(a, _) => f.arrays[a.0 as usize].elem(),
            Expr::Unary(op, e) => match op {
                UnOp::IsNan | UnOp::IsInf | UnOp::IsFinite | UnOp::SignBit => Ty::Bool,
                _ => e.ty(f),
            },
            Expr::Binary(_, a, _) => a.ty(f),
            Expr::Select(_, a, _) => a.ty(f),
            Expr::Call(..) => Ty::F64,
            Expr::Cast(t, _) => *t,
        }
    }

    pub fn boxed(self) -> Box<Expr> {
        Box::new(self)
    }

    /// Calls `f` on every direct sub-expression.
    pub fn for_each_child(&self, mut f: impl FnMut(&Expr)) {
        match self {
            Expr::F64(_)
            | Expr::I64(_)
            | Expr::Bool(_)
            | Expr::Var(_)
            | Expr::Param(_)
            | Expr::IntParam(_)
            | Expr::Len(_) => {}
            Expr::Load(_, i) | Expr::Unary(_, i) | Expr::Cast(_, i) => f(i),
            Expr::Binary(_, a, b) | Expr::Cmp(_, a, b) => {
                f(a);
                f(b)
            }
            Expr::Select(c, a, b) => {
                f(c);
                f(a);
                f(b)
            }
            Expr::Call(_, args) => args.iter().for_each(f),
        }
    }

    /// The expression with `f` applied to each direct sub-expression (the node itself kept).
    pub fn map_children(self, mut f: impl FnMut(Expr) -> Expr) -> Expr {
        let mut r = |x: Box<Expr>| Box::new(f(*x));
        match self {
            e @ (Expr::F64(_)
            | Expr::I64(_)
            | Expr::Bool(_)
            | Expr::Var(_)
            | Expr::Param(_)
            | Expr::IntParam(_)
            | Expr::Len(_)) => e,
            Expr::Load(a, i) => Expr::Load(a, r(i)),
            Expr::Unary(op, x) => Expr::Unary(op, r(x)),
            Expr::Cast(t, x) => Expr::Cast(t, r(x)),
            Expr::Binary(op, a, b) => Expr::Binary(op, r(a), r(b)),
            Expr::Cmp(op, a, b) => Expr::Cmp(op, r(a), r(b)),
            Expr::Select(c, a, b) => Expr::Select(r(c), r(a), r(b)),
            Expr::Call(g, args) => {
                Expr::Call(g, args.into_iter().map(|x| *r(Box::new(x))).collect())
            }
        }
    }

    /// The expression with every read of variable `from` replaced by `to` (a reduction's or a
    /// fill's element at a given index, say).
    pub fn replacing_var(self, from: Var, to: &Expr) -> Expr {
        // Elements may nest deeply: a caller's small stack must not matter.
        crate::with_stack(|| match self {
            Expr::Var(v) if v == from => to.clone(),
            e => e.map_children(|c| c.replacing_var(from, to)),
        })
    }

    /// Number of nodes in the tree (used to enforce the IR size limit).
    pub fn size(&self) -> usize {
        let mut n = 1;
        self.for_each_child(|c| n += c.size());
        n
    }

    /// Calls `f` on the expression and every sub-expression, parents first.
    pub fn visit(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        self.for_each_child(|c| c.visit(f));
    }

    /// Whether `v` occurs in the expression.
    pub fn uses_var(&self, v: Var) -> bool {
        if let Expr::Var(w) = self {
            return *w == v;
        }
        let mut found = false;
        self.for_each_child(|c| found |= c.uses_var(v));
        found
    }

    /// Whether the expression calls a transcendental [`MathFn`] (GPU results may then differ from
    /// the CPU's within ulp bounds instead of bit for bit).
    pub fn has_call(&self) -> bool {
        if let Expr::Call(..) = self {
            return true;
        }
        let mut found = false;
        self.for_each_child(|c| found |= c.has_call());
        found
    }
}

/// Calls `f` on every expression directly held by a statement (not recursing into nested blocks).
pub fn stmt_exprs<'a>(s: &'a Stmt, mut f: impl FnMut(&'a Expr)) {
    match s {
        Stmt::Assign(_, e) | Stmt::Return(e) => f(e),
        Stmt::Store(_, i, v) => {
            f(i);
            f(v)
        }
        Stmt::If(c, _, _) => f(c),
        Stmt::Check { cond, a, b, .. } => {
            f(cond);
            f(a);
            f(b)
        }
        Stmt::Reduce { len, elem, .. } => {
            f(len);
            f(elem)
        }
        Stmt::Fill {
            len, elem, keep, ..
        } => {
            f(len);
            f(elem);
            if let Some(k) = keep {
                f(k)
            }
        }
        Stmt::Sorted { q, .. } => f(q),
        Stmt::MedianNetwork { elems, .. } => elems.iter().for_each(f),
        Stmt::Loop { .. } | Stmt::Break | Stmt::Continue | Stmt::ArrayOp(..) | Stmt::Succeed => {}
    }
}

/// The statement with `f` applied to every expression it holds, nested blocks included (the
/// statements themselves kept).
pub fn map_stmt_exprs(s: Stmt, f: &mut dyn FnMut(Expr) -> Expr) -> Stmt {
    let block = |b: Vec<Stmt>, f: &mut dyn FnMut(Expr) -> Expr| {
        b.into_iter()
            .map(|s| map_stmt_exprs(s, f))
            .collect::<Vec<_>>()
    };
    match s {
        Stmt::Assign(v, e) => Stmt::Assign(v, f(e)),
        Stmt::Store(a, i, v) => Stmt::Store(a, f(i), f(v)),
        Stmt::If(c, t, e) => {
            let c = f(c);
            let t = block(t, f);
            Stmt::If(c, t, block(e, f))
        }
        Stmt::Loop { body, latch } => {
            let body = block(body, f);
            Stmt::Loop {
                body,
                latch: block(latch, f),
            }
        }
        Stmt::Check { cond, err, a, b } => Stmt::Check {
            cond: f(cond),
            err,
            a: f(a),
            b: f(b),
        },
        Stmt::Return(e) => Stmt::Return(f(e)),
        Stmt::Reduce {
            dst,
            op,
            len,
            index,
            elem,
            on_empty,
        } => Stmt::Reduce {
            dst,
            op,
            len: f(len),
            index,
            elem: f(elem),
            on_empty,
        },
        Stmt::Fill {
            dst,
            len,
            index,
            elem,
            keep,
        } => Stmt::Fill {
            dst,
            len: f(len),
            index,
            elem: f(elem),
            keep: keep.map(f),
        },
        Stmt::Sorted { dst, stat, arr, q } => Stmt::Sorted {
            dst,
            stat,
            arr,
            q: f(q),
        },
        Stmt::MedianNetwork {
            dst,
            elems,
            fallback,
        } => {
            let elems = elems.into_iter().map(&mut *f).collect();
            Stmt::MedianNetwork {
                dst,
                elems,
                fallback: block(fallback, f),
            }
        }
        s @ (Stmt::Break | Stmt::Continue | Stmt::ArrayOp(..) | Stmt::Succeed) => s,
    }
}

/// Calls `f` on every nested block of a statement.
pub fn stmt_blocks<'a>(s: &'a Stmt, mut f: impl FnMut(&'a [Stmt])) {
    match s {
        Stmt::If(_, a, b) => {
            f(a);
            f(b)
        }
        Stmt::Loop { body, latch } => {
            f(body);
            f(latch)
        }
        Stmt::MedianNetwork { fallback, .. } => f(fallback),
        _ => {}
    }
}

/// Calls `f` on every nested block of a statement, to rewrite it in place.
pub fn stmt_blocks_mut(s: &mut Stmt, mut f: impl FnMut(&mut [Stmt])) {
    match s {
        Stmt::If(_, a, b) | Stmt::Loop { body: a, latch: b } => {
            f(a);
            f(b)
        }
        Stmt::MedianNetwork { fallback, .. } => f(fallback),
        _ => {}
    }
}

/// Total number of expression nodes and statements in a block.
pub fn block_size(stmts: &[Stmt]) -> usize {
    let mut n = 0;
    for s in stmts {
        n += 1;
        stmt_exprs(s, |e| n += e.size());
        stmt_blocks(s, |b| n += block_size(b));
    }
    n
}

/// Whether any statement in the block (recursively) calls a transcendental math function.
pub fn block_has_call(stmts: &[Stmt]) -> bool {
    stmts.iter().any(|s| {
        let mut found = false;
        stmt_exprs(s, |e| found |= e.has_call());
        stmt_blocks(s, |b| found |= block_has_call(b));
        found
    })
}

/// A filter's function built by hand, for tests: the buffer `x` and the `scratch` arrays `a1`,
/// `a2` ..., variables `v0`, `v1` ... of the types `vars`, and four `ValueError` sites (ids 0 to 3:
/// invalid arguments, out of scratch memory, a check's `{a} {b}`, empty).
#[cfg(test)]
pub(crate) fn test_func(vars: &[Ty], scratch: &[ArrKind], body: Vec<Stmt>) -> Func {
    use crate::error::{Exception, Span};

    let mut arrays = vec![ArrDecl {
        kind: ArrKind::Buffer,
        name: "x".into(),
    }];
    arrays.extend(scratch.iter().enumerate().map(|(i, k)| ArrDecl {
        kind: k.clone(),
        name: format!("a{}", i + 1),
    }));
    let site = |m: &str| ErrorSite {
        message: m.into(),
        span: Span::default(),
        exception: Exception::ValueError,
    };
    Func {
        vars: vars
            .iter()
            .enumerate()
            .map(|(i, &ty)| VarDecl {
                ty,
                name: format!("v{i}"),
            })
            .collect(),
        arrays,
        body,
        errors: vec![
            site("invalid arguments"),
            site("out of scratch memory"),
            site("check {a} {b}"),
            site("empty"),
        ],
        filter_size: None,
        sig: Sig::Filter,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replacing_a_variable_reaches_every_child_and_leaves_other_variables() {
        let (i, j) = (Var(0), Var(1));
        let load = |e: Expr| Expr::Load(BUFFER, e.boxed());
        let e = Expr::Select(
            Expr::Cmp(CmpOp::Lt, Expr::Var(i).boxed(), Expr::Var(j).boxed()).boxed(),
            Expr::Call(MathFn::Exp, vec![load(Expr::Var(i))]).boxed(),
            Expr::Unary(UnOp::Neg, load(Expr::Var(j)).boxed()).boxed(),
        );
        let want = Expr::Select(
            Expr::Cmp(CmpOp::Lt, Expr::I64(3).boxed(), Expr::Var(j).boxed()).boxed(),
            Expr::Call(MathFn::Exp, vec![load(Expr::I64(3))]).boxed(),
            Expr::Unary(UnOp::Neg, load(Expr::Var(j)).boxed()).boxed(),
        );
        assert_eq!(e.replacing_var(i, &Expr::I64(3)), want);
    }
}
