//! The abstract syntax tree of the accepted Python subset.
//!
//! It stays close to Python's own `ast` module so that the parser is a plain transcription of the
//! grammar; deciding what is *supported* is the lowering's job, where the error can say why.

use crate::error::Span;

/// A whole program: either a bare expression over `x`, a `lambda`, or a `def`.
#[derive(Clone, Debug)]
pub enum Program {
    Expr(Expr),
    Function(Function),
}

/// A `def` or a `lambda` (whose body is a single `return`).
#[derive(Clone, Debug)]
pub struct Function {
    pub name: Option<String>,
    pub params: Vec<Param>,
    pub body: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    pub default: Option<Expr>,
    /// `name: annotation` in a `def`: ignored, but by an integrand, whose `int`/`float` ones say
    /// what quad's doubles stand for (`crate::integrand`).
    pub annotation: Option<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum StmtKind {
    Expr(Expr),
    /// `a = b = value` has two targets.
    Assign {
        targets: Vec<Expr>,
        value: Expr,
    },
    AugAssign {
        target: Expr,
        op: BinOp,
        value: Expr,
    },
    If {
        test: Expr,
        body: Vec<Stmt>,
        orelse: Vec<Stmt>,
    },
    For {
        target: Expr,
        iter: Expr,
        body: Vec<Stmt>,
        orelse: Vec<Stmt>,
    },
    While {
        test: Expr,
        body: Vec<Stmt>,
        orelse: Vec<Stmt>,
    },
    Return(Option<Expr>),
    /// `raise E("message")` (`exc` is None for a bare `raise`; a `from` clause is dropped: it
    /// only sets `__cause__`).
    Raise {
        exc: Option<Expr>,
    },
    /// `assert test, msg`.
    Assert {
        test: Expr,
        msg: Option<Expr>,
    },
    Break,
    Continue,
    Pass,
    /// `import numpy as np` / `from math import sqrt`: (module, alias) pairs, checked by the lowering.
    Import(Vec<(String, String)>),
    /// A statement Python has and ndjit does not compile; the string names it (`try`, `with` ...).
    Unsupported(&'static str),
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    Name(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    None,
    Str(String),
    /// An f-string with replacement fields: its raw text, the fields not filled in (ndjit takes
    /// it only as an exception's message).
    FString(String),
    Ellipsis,
    Tuple(Vec<Expr>),
    List(Vec<Expr>),
    Unary(UnaryOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `a and b and c` / `a or b`.
    BoolOp(BoolOp, Vec<Expr>),
    /// `a < b <= c`: the first operand, then (operator, operand) pairs.
    Compare(Box<Expr>, Vec<(CmpOp, Expr)>),
    IfExp {
        test: Box<Expr>,
        body: Box<Expr>,
        orelse: Box<Expr>,
    },
    Call {
        func: Box<Expr>,
        args: Vec<Expr>,
        keywords: Vec<Keyword>,
    },
    Attribute(Box<Expr>, String),
    Subscript(Box<Expr>, Box<Expr>),
    /// `a:b:c` inside a subscript.
    Slice(Option<Box<Expr>>, Option<Box<Expr>>, Option<Box<Expr>>),
    Lambda(Box<Function>),
    /// `[elt for target in iter if cond ...]` or `(elt for ...)`.
    Comp(Box<Comprehension>),
    /// Valid Python that the subset does not include (dicts, sets, f-strings ...).
    Unsupported(&'static str),
}

/// A list comprehension or a generator expression: `elt` for each combination of its `for`
/// clauses' items that passes their `if`s. The targets are local to it (Python 3 scoping); the
/// first clause's iterable is evaluated in the enclosing scope.
#[derive(Clone, Debug)]
pub struct Comprehension {
    pub kind: CompKind,
    pub elt: Expr,
    pub clauses: Vec<CompFor>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompKind {
    /// `[...]`: a list, built at once.
    List,
    /// `(...)` or the sole argument of a call: a generator, consumed lazily by its caller.
    Generator,
}

/// `for target in iter if cond if cond ...`.
#[derive(Clone, Debug)]
pub struct CompFor {
    pub target: Expr,
    pub iter: Expr,
    pub ifs: Vec<Expr>,
}

#[derive(Clone, Debug)]
pub struct Keyword {
    pub name: String,
    pub value: Expr,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Pos,
    Not,
    Invert,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Pow,
    MatMul,
    BitAnd,
    BitOr,
    BitXor,
    LShift,
    RShift,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoolOp {
    And,
    Or,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    In,
    NotIn,
    Is,
    IsNot,
}
