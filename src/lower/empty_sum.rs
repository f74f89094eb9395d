//! `sum()` of an empty iterable is Python's int 0, where ndjit computes the float 0.0.
//!
//! A sum of NumPy floats is a NumPy float, except when the iterable is empty: then it is the
//! start value, the int 0 (`sum(v for v in x if v > t)`). ndjit computes +0.0 with Python's
//! provenance, so that dividing by it raises as dividing by the int 0 does, and wherever only
//! the value matters that is exact. But some uses tell the int from the float:
//! - `-s` is 0 for the int and -0.0 for the float; so are `s * -1`, `s % -3` and `s // -3`
//!   with another int;
//! - NumPy keeps ints integral: `np.fmax(s, s)` is an `int64` (then `% 0` gives 0 where a float
//!   gives nan, and `math.trunc` of it raises TypeError);
//! - methods, attributes, indexing, containers and helper functions each have their own rules.
//!
//! Rather than model a value whose type is known only at run time, this pass looks at where
//! each `sum(...)` result goes, before lowering, and finds the sums whose result (or a value
//! computed from it that stays an int: `s + 1`, `abs(s)`, `max(s, k)`, any name it is stored
//! in, through all of that name's loads) reaches anything but the uses where int and float
//! agree: comparisons, true division, arithmetic with a float (a literal, the buffer, NumPy
//! functions of floats), `*`/`%`/`//`/`**` with a non-negative int literal or `len()`,
//! `float()`/`int()`/`bool()`/`round(s)`, `math.*`, NumPy's float-valued functions (`np.sqrt`,
//! `np.exp`, ...), tests, and the filter's result (which scipy converts to a float). For those
//! sums the lowering raises a `TypeError` when the iterable is empty, naming the fix
//! (`sum(..., 0.0)` starts from the float). Everything not known to agree counts as telling
//! them apart, so a construct this pass does not know can only add an error, never hide one.

use super::names::{Builtin, Func, Module};
use crate::error::Span;
use crate::syntax::ast::{BinOp, CompFor, Expr, ExprKind, Function, Stmt, StmtKind, UnaryOp};
use crate::syntax::Program;
use std::collections::{HashMap, HashSet};

/// What becomes of a value at some position of the program if that value is the int 0.
#[derive(Clone, Debug)]
enum Fate {
    /// Int and float give the same result from here on.
    Agrees,
    /// Something may tell them apart.
    Differs,
    /// Stored into this local name: its loads decide.
    Named(String),
}

/// The spans of the `sum(...)` calls of `program` whose empty case ndjit must refuse.
/// `callee` resolves a call's function expression to a builtin (aliases, imports), if it is one.
/// `floats`: the filter's parameters that hold floats or float64 arrays (the buffer, an
/// integrand's variables).
pub(super) fn refused_sums(
    program: &Program,
    floats: &[&str],
    callee: &dyn Fn(&Expr) -> Option<Builtin>,
) -> HashSet<Span> {
    let mut out = HashSet::new();
    // The filter's result becomes a float.
    Scope::analyse(&program.function, Fate::Agrees, floats, callee, &mut out);
    for (_, f) in &program.helpers {
        // A helper's result goes back to its caller.
        Scope::analyse(f, Fate::Differs, &[], callee, &mut out);
    }
    out
}

/// One function's walk: the fate of each `sum` call and of each load of a local name.
struct Scope<'a> {
    callee: &'a dyn Fn(&Expr) -> Option<Builtin>,
    result: Fate,
    sums: Vec<(Span, Fate)>,
    loads: HashMap<String, Vec<Fate>>,
    /// How many times each name is bound (parameters, assignments, loop and comprehension
    /// targets), counted before the walk.
    bindings: HashMap<String, usize>,
    /// Parameters holding floats or float64 arrays, while never rebound.
    floats: HashSet<String>,
    /// Names assigned a `sum(...)` (which `is_sum` counts when that is their only binding).
    sum_names: HashSet<String>,
    /// Lambdas inside the function, analysed on their own.
    lambdas: Vec<Function>,
}

impl<'a> Scope<'a> {
    fn analyse(
        f: &Function,
        result: Fate,
        floats: &[&str],
        callee: &'a dyn Fn(&Expr) -> Option<Builtin>,
        out: &mut HashSet<Span>,
    ) {
        let mut s = Scope {
            callee,
            result,
            sums: vec![],
            loads: HashMap::new(),
            bindings: HashMap::new(),
            floats: HashSet::new(),
            sum_names: HashSet::new(),
            lambdas: vec![],
        };
        for p in &f.params {
            s.bind(&p.name);
        }
        s.bind_all(&f.body);
        s.floats = floats
            .iter()
            .filter(|n| s.bindings.get(**n) == Some(&1))
            .map(|n| n.to_string())
            .collect();
        s.stmts(&f.body);
        for (span, fate) in &s.sums {
            if s.differs(fate, &mut HashSet::new()) {
                out.insert(*span);
            }
        }
        for l in std::mem::take(&mut s.lambdas) {
            // A lambda's result goes wherever the lambda is called from.
            Scope::analyse(&l, Fate::Differs, &[], callee, out);
        }
    }

    fn bind(&mut self, name: &str) {
        *self.bindings.entry(name.to_string()).or_default() += 1;
    }

    /// Counts the bindings of every assignment, loop and comprehension target in `body`.
    fn bind_all(&mut self, body: &[Stmt]) {
        fn targets(t: &Expr, s: &mut Scope) {
            match &t.kind {
                ExprKind::Name(n) => s.bind(n),
                ExprKind::Tuple(items) | ExprKind::List(items) => {
                    items.iter().for_each(|i| targets(i, s))
                }
                _ => {}
            }
        }
        fn comps(e: &Expr, s: &mut Scope) {
            if let ExprKind::Comp(c) = &e.kind {
                c.clauses.iter().for_each(|cl| targets(&cl.target, s));
            }
            crate::syntax::visit::for_each_child(e, |c| comps(c, s));
        }
        for st in body {
            match &st.kind {
                StmtKind::Assign { targets: ts, value } => {
                    ts.iter().for_each(|t| targets(t, self));
                    if let [Expr {
                        kind: ExprKind::Name(n),
                        ..
                    }] = ts.as_slice()
                    {
                        if self.is_sum(value) {
                            self.sum_names.insert(n.clone());
                        }
                    }
                }
                StmtKind::AugAssign { target, .. } => targets(target, self),
                StmtKind::For {
                    target,
                    body,
                    orelse,
                    ..
                } => {
                    targets(target, self);
                    self.bind_all(body);
                    self.bind_all(orelse);
                }
                StmtKind::If { body, orelse, .. } | StmtKind::While { body, orelse, .. } => {
                    self.bind_all(body);
                    self.bind_all(orelse);
                }
                _ => {}
            }
        }
        crate::syntax::visit::for_each_stmt_expr(body, &mut |e| comps(e, self));
    }

    /// Whether `e` is certainly a float (a Python float or NumPy float64 scalar or array): then
    /// an operation with it is a float operation, the int converted first, exact either way.
    fn float_like(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Float(_) => true,
            ExprKind::Name(n) => self.floats.contains(n),
            ExprKind::Subscript(a, _) => {
                matches!(&a.kind, ExprKind::Name(n) if self.floats.contains(n))
            }
            ExprKind::Unary(UnaryOp::Neg | UnaryOp::Pos, a) => self.float_like(a),
            ExprKind::Binary(op, a, b) => {
                !matches!(op, BinOp::MatMul) && (self.float_like(a) || self.float_like(b))
            }
            ExprKind::Call { func, args, .. } => match self.builtin(func) {
                // A method of a float array or scalar: `x.mean()`, `x.max()`.
                None => matches!(&func.kind, ExprKind::Attribute(recv, m)
                    if self.float_like(recv)
                        && super::names::method(m)
                            .is_some_and(|b| !int_or_bool_valued(b.func) && b.func != Func::Astype)),
                Some(b) if float_valued(b) => true,
                // A NumPy function of floats, other than those that count, index or test.
                Some(b) if b.module == Module::Np && !int_or_bool_valued(b.func) => {
                    !args.is_empty() && args.iter().all(|a| self.float_like(a))
                }
                _ => false,
            },
            ExprKind::Tuple(items) | ExprKind::List(items) => {
                !items.is_empty() && items.iter().all(|i| self.float_like(i))
            }
            _ => false,
        }
    }

    /// The builtin a call's function names, unless a local name shadows it.
    fn builtin(&self, func: &Expr) -> Option<Builtin> {
        match &func.kind {
            ExprKind::Name(n) if self.bindings.contains_key(n) => None,
            _ => (self.callee)(func),
        }
    }

    /// Whether `e` is certainly an int >= `min` (a literal, or `len(...)` for 0).
    fn int_at_least(&self, e: &Expr, min: i64) -> bool {
        match (literal(e), &e.kind) {
            (Some(Literal::Int(k)), _) => k >= min,
            (None, ExprKind::Call { func, .. }) => {
                min <= 0
                    && self.builtin(func)
                        == Some(Builtin {
                            module: Module::Builtin,
                            func: Func::Len,
                        })
            }
            _ => false,
        }
    }

    /// Whether `e` is a call of the builtin `sum`, or a name bound only to one.
    fn is_sum(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Call { func, .. } => self.builtin(func) == Some(SUM),
            ExprKind::Name(n) => self.sum_names.contains(n) && self.bindings.get(n) == Some(&1),
            _ => false,
        }
    }

    /// The fate of `me`, an operand of `op` (the left one if `left`) whose result has `fate`,
    /// beside `other`:
    /// - true division, or a float on the other side: a float operation (Python converts the
    ///   int first), exact either way;
    /// - `+`, `-`; `*` by an int >= 1 (>= 0 for the sum itself); `%`, `//` by an int >= 0;
    ///   `**` with an int >= 0: exact in both, and the result stays an int with an int;
    /// - the sum itself as a divisor: it is 0, which raises ZeroDivisionError in both;
    /// - otherwise a zero's sign may differ (`0 * -1` is 0, `0.0 * -1` is -0.0).
    fn operand_fate(&self, op: BinOp, fate: Fate, me: &Expr, other: &Expr, left: bool) -> Fate {
        let agrees = match op {
            _ if op == BinOp::Div || self.float_like(other) => return Fate::Agrees,
            BinOp::Add | BinOp::Sub => true,
            // The sum itself is 0: times an int >= 0 it is +0 in both.
            BinOp::Mul => self.int_at_least(other, if self.is_sum(me) { 0 } else { 1 }),
            BinOp::Mod | BinOp::FloorDiv if left => self.int_at_least(other, 0),
            BinOp::Mod | BinOp::FloorDiv if self.is_sum(me) => return Fate::Agrees,
            BinOp::Pow => self.int_at_least(other, 0),
            _ => false,
        };
        if agrees {
            fate
        } else {
            Fate::Differs
        }
    }

    /// Whether a value with `fate` may be told apart from a float, following names: a name
    /// tells them apart if any of its loads does (whichever assignment a load sees, it is a
    /// load; a name already being followed adds nothing new).
    fn differs(&self, fate: &Fate, seen: &mut HashSet<String>) -> bool {
        match fate {
            Fate::Agrees => false,
            Fate::Differs => true,
            Fate::Named(n) => {
                if !seen.insert(n.clone()) {
                    return false;
                }
                let loads = self.loads.get(n).map(Vec::as_slice).unwrap_or(&[]);
                loads.iter().any(|l| self.differs(l, seen))
            }
        }
    }

    fn stmts(&mut self, body: &[Stmt]) {
        for s in body {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Expr(e) => self.expr(e, Fate::Agrees),
            StmtKind::Return(Some(e)) => self.expr(e, self.result.clone()),
            StmtKind::Assign { targets, value } => {
                let fate = match targets.as_slice() {
                    [Expr {
                        kind: ExprKind::Name(n),
                        ..
                    }] => Fate::Named(n.clone()),
                    _ => Fate::Differs,
                };
                for t in targets {
                    self.target(t);
                }
                self.expr(value, fate);
            }
            StmtKind::AugAssign { target, op, value } => {
                // `t op= v` is `t = t op v`.
                self.target(target);
                let result = match &target.kind {
                    ExprKind::Name(n) => Fate::Named(n.clone()),
                    _ => Fate::Differs,
                };
                let fate = self.operand_fate(*op, result, value, target, false);
                if let ExprKind::Name(n) = &target.kind {
                    let own = self.operand_fate(*op, Fate::Named(n.clone()), target, value, true);
                    self.loads.entry(n.clone()).or_default().push(own);
                }
                self.expr(value, fate);
            }
            StmtKind::If { test, body, orelse } | StmtKind::While { test, body, orelse } => {
                self.expr(test, Fate::Agrees);
                self.stmts(body);
                self.stmts(orelse);
            }
            StmtKind::For {
                target,
                iter,
                body,
                orelse,
            } => {
                self.target(target);
                self.expr(iter, Fate::Differs);
                self.stmts(body);
                self.stmts(orelse);
            }
            StmtKind::Assert { test, msg } => {
                self.expr(test, Fate::Agrees);
                if let Some(m) = msg {
                    self.expr(m, Fate::Differs);
                }
            }
            StmtKind::Raise { exc: Some(e) } => self.expr(e, Fate::Differs),
            StmtKind::Return(None)
            | StmtKind::Raise { exc: None }
            | StmtKind::Break
            | StmtKind::Continue
            | StmtKind::Pass
            | StmtKind::Import(_)
            | StmtKind::Unsupported(_) => {}
        }
    }

    /// An assignment target (names were bound by `bind_all`); what a subscript reads is a use.
    fn target(&mut self, t: &Expr) {
        match &t.kind {
            ExprKind::Name(_) => {}
            ExprKind::Tuple(items) | ExprKind::List(items) => {
                items.iter().for_each(|i| self.target(i))
            }
            _ => self.expr(t, Fate::Differs),
        }
    }

    fn expr(&mut self, e: &Expr, fate: Fate) {
        match &e.kind {
            ExprKind::Name(n) => self.loads.entry(n.clone()).or_default().push(fate),
            ExprKind::Binary(op, a, b) => {
                let fa = self.operand_fate(*op, fate.clone(), a, b, true);
                let fb = self.operand_fate(*op, fate, b, a, false);
                self.expr(a, fa);
                self.expr(b, fb);
            }
            ExprKind::Unary(op, a) => {
                let f = match op {
                    UnaryOp::Not => Fate::Agrees,
                    UnaryOp::Pos => fate,
                    _ => Fate::Differs,
                };
                self.expr(a, f);
            }
            ExprKind::Compare(a, rest) => {
                self.expr(a, Fate::Agrees);
                rest.iter().for_each(|(_, r)| self.expr(r, Fate::Agrees));
            }
            // `a and b` / `a or b` give one of their operands.
            ExprKind::BoolOp(_, items) => items.iter().for_each(|i| self.expr(i, fate.clone())),
            ExprKind::IfExp { test, body, orelse } => {
                self.expr(test, Fate::Agrees);
                self.expr(body, fate.clone());
                self.expr(orelse, fate);
            }
            ExprKind::Call {
                func,
                args,
                keywords,
            } => self.call(e, func, args, keywords, fate),
            ExprKind::Comp(c) => {
                for CompFor { target, iter, ifs } in &c.clauses {
                    self.target(target);
                    self.expr(iter, Fate::Differs);
                    ifs.iter().for_each(|i| self.expr(i, Fate::Agrees));
                }
                self.expr(&c.elt, Fate::Differs);
            }
            ExprKind::Lambda(f) => {
                // What it reads of this scope may meet anything inside it.
                let mut names = vec![];
                crate::syntax::visit::names_in(e, &mut names);
                for n in names {
                    self.loads.entry(n).or_default().push(Fate::Differs);
                }
                self.lambdas.push((**f).clone())
            }
            // Containers, methods, attributes, indexing and slicing: their own rules.
            _ => crate::syntax::visit::for_each_child(e, |c| self.expr(c, Fate::Differs)),
        }
    }

    fn call(
        &mut self,
        call: &Expr,
        func: &Expr,
        args: &[Expr],
        keywords: &[crate::syntax::ast::Keyword],
        fate: Fate,
    ) {
        let builtin = self.builtin(func);
        if builtin == Some(SUM) {
            self.sums.push((call.span, fate.clone()));
        }
        let arg_fate = match builtin {
            Some(b) => argument_fate(b, args.len(), fate),
            None => Fate::Differs,
        };
        match &func.kind {
            ExprKind::Name(_) => {}
            // `np.sqrt(...)`: the module is no value; a method's receiver is one.
            ExprKind::Attribute(..) if builtin.is_some() => {}
            ExprKind::Attribute(receiver, _) => self.expr(receiver, Fate::Differs),
            _ => self.expr(func, Fate::Differs),
        }
        for a in args {
            self.expr(a, arg_fate.clone());
        }
        for k in keywords {
            self.expr(&k.value, Fate::Differs);
        }
    }
}

/// A number written in the source, its sign included.
enum Literal {
    Float,
    Int(i64),
}

fn literal(e: &Expr) -> Option<Literal> {
    match &e.kind {
        ExprKind::Float(_) => Some(Literal::Float),
        ExprKind::Int(k) => Some(Literal::Int(*k)),
        ExprKind::Unary(UnaryOp::Neg, a) => match literal(a)? {
            Literal::Int(k) => Some(Literal::Int(k.checked_neg()?)),
            f => Some(f),
        },
        ExprKind::Unary(UnaryOp::Pos, a) => literal(a),
        _ => None,
    }
}

/// The fate of a positional argument of `b` (called with `n` of them) whose result has `fate`.
fn argument_fate(b: Builtin, n: usize, fate: Fate) -> Fate {
    use Func::*;
    match (b.module, b.func) {
        // CPython's math converts ints to floats (trunc, floor and ceil give the same int).
        (Module::Math, _) => Fate::Agrees,
        (Module::Builtin, Float | Int | Bool) => Fate::Agrees,
        (Module::Builtin, Round) if n == 1 => Fate::Agrees,
        // They give back (a rounding of) one of their arguments, an int for an int.
        (Module::Builtin, Round | Abs | Min | Max) => fate,
        // NumPy's functions whose result is a float (or a bool) for an int.
        (Module::Np, IsNan | IsInf | IsFinite) => Fate::Agrees,
        _ if float_valued(b) => Fate::Agrees,
        _ => Fate::Differs,
    }
}

const SUM: Builtin = Builtin {
    module: Module::Builtin,
    func: Func::Sum,
};

/// Whether `b` returns a float whatever numbers it is given: `float()`, math's functions but
/// the rounding ones and the tests, and NumPy's same functions (but `fmod`, which keeps ints
/// integral), true division and `float64`.
fn float_valued(b: Builtin) -> bool {
    use Func::*;
    let math = b.func.is_in(Module::Math)
        && !matches!(b.func, Floor | Ceil | Trunc | IsNan | IsInf | IsFinite);
    match b.module {
        Module::Builtin => b.func == Float,
        Module::Math => math || b.func == Power,
        Module::Np => (math && b.func != Fmod) || matches!(b.func, Divide | Float64),
        _ => false,
    }
}

/// NumPy functions whose result is an int or a bool whatever their arguments.
fn int_or_bool_valued(f: Func) -> bool {
    use Func::*;
    matches!(
        f,
        Argmin
            | Argmax
            | Argsort
            | Argwhere
            | Nonzero
            | Flatnonzero
            | CountNonzero
            | Size
            | Bincount
            | Histogram
            | Int64
            | BoolScalar
            | IsNan
            | IsInf
            | IsFinite
            | Isin
            | Any
            | All
            | LogicalAnd
            | LogicalOr
            | LogicalNot
            | LogicalXor
            | Sign
            | Arange
            | Zeros
            | Ones
            | Full
            | ZerosLike
            | OnesLike
            | FullLike
            | Linspace
            | Where
    )
}
