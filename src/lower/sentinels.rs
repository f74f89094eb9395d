//! `None` as a sentinel in a local that otherwise holds numbers:
//!
//! ```python
//! best = None
//! for v in x:
//!     if best is None or v > best:
//!         best = v
//! return best
//! ```
//!
//! Such a local (one that some statement assigns `None` by name) keeps its number in its usual
//! variable and a flag "holds None" beside it, set by `name = None` and cleared by every other
//! assignment. `name is None` and `name is not None` read the flag, and a condition's truth
//! (`if name:`, `not name`) is false where it is set. Every other read of the name is one of:
//! - a read where Python raises `TypeError` at that very point if the value is None: an operand
//!   of arithmetic or of an ordering (`v > best`), the filter's own returned value, the argument
//!   of a builtin or a `math` function that takes numbers; the lowering checks the flag there and
//!   raises the same `TypeError`;
//! - a read that a test `name is not None` guards (the body of `if best is not None:`, the
//!   branch of a conditional expression, the operands after `and`) with no assignment to the
//!   name in between: the check stays, and never fails;
//! - anything else (`y = best`, `(best, 1)`, a helper's argument), where Python would carry the
//!   None on: refused at compile time, since the lowering's value holds numbers only.
//!
//! A check raises only where the value is None and Python raises there too; the checked reads
//! are those whose raising point Python reaches next, with nothing between the read and the
//! operation that could raise first (the later operands are constants or names bound there).

use crate::error::Span;
use crate::syntax::ast::{BoolOp, CmpOp, Expr, ExprKind, Stmt, StmtKind, UnaryOp};
use crate::syntax::visit;
use std::collections::{BTreeSet, HashMap, HashSet};

/// Python's message where a read of a name holding None meets an operation that takes numbers
/// (the operation names itself; Python's own words name the operand types too).
pub(super) const NOT_A_NUMBER: &str = "a variable holding None met an operation that takes numbers: unsupported operand type 'NoneType'";
/// scipy's message when a callback returns None (`PyFloat_AsDouble`).
pub(super) const RETURNED_NONE: &str = "must be real number, not NoneType";

/// The locals of `body` that some statement assigns `None` by name (`best = None`, `a = b = None`),
/// and those among them that some other assignment gives a value (the others are None or unbound).
pub(super) fn sentinel_names(body: &[Stmt]) -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut none, mut valued) = (BTreeSet::new(), BTreeSet::new());
    each_assignment(body, &mut |target, is_none| {
        let mut names = Vec::new();
        super::target_names(target, &mut names);
        for n in names {
            if is_none && matches!(target.kind, ExprKind::Name(_)) {
                none.insert(n);
            } else {
                valued.insert(n);
            }
        }
    });
    valued.retain(|n| none.contains(n));
    (none, valued)
}

/// Calls `f(target, assigns_none)` for every assignment target of `stmts`, nested blocks included.
fn each_assignment(stmts: &[Stmt], f: &mut impl FnMut(&Expr, bool)) {
    for s in stmts {
        match &s.kind {
            StmtKind::Assign { targets, value } => {
                for t in targets {
                    f(t, matches!(value.kind, ExprKind::None));
                }
            }
            StmtKind::AugAssign { target, .. } => f(target, false),
            StmtKind::For {
                target,
                body,
                orelse,
                ..
            } => {
                f(target, false);
                each_assignment(body, f);
                each_assignment(orelse, f);
            }
            StmtKind::If { body, orelse, .. } | StmtKind::While { body, orelse, .. } => {
                each_assignment(body, f);
                each_assignment(orelse, f);
            }
            _ => {}
        }
    }
}

/// Which arguments of a function raise `TypeError` at the call where they are None.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NoneArgs {
    /// Every one: `min(a, b)` and `max(a, b)` compare them.
    All,
    /// The first only: later ones may take None (`round(v, None)`, `pow(a, b, None)`,
    /// `sum((), None)`) or be read after a failure of the first (`math.log(x, base)`).
    First,
}

/// Finds the reads of sentinel locals that may be lowered with a check (see the module docs).
pub(super) struct Classifier<'a> {
    /// The sentinel locals.
    pub names: &'a BTreeSet<String>,
    /// The reads that may find their name unassigned (`unbound.rs`): they can fail on their own.
    pub unbound_reads: &'a HashSet<Span>,
    /// Which arguments of a call of this callee raise `TypeError` for None at the call.
    pub takes_numbers: &'a dyn Fn(&Expr) -> Option<NoneArgs>,
    /// Whether a returned value must be a number (the filter's own body, not a helper's).
    pub returns_number: bool,
    /// The checked reads found, by the span of their `Name` node, with the `TypeError`'s message.
    pub checked: HashMap<Span, &'static str>,
}

impl Classifier<'_> {
    pub(super) fn block(&mut self, stmts: &[Stmt], guarded: &BTreeSet<String>) {
        for s in stmts {
            self.stmt(s, guarded);
        }
    }

    fn stmt(&mut self, s: &Stmt, guarded: &BTreeSet<String>) {
        match &s.kind {
            StmtKind::If { test, body, orelse } => {
                self.expr(test, guarded);
                self.block(body, &narrowed(guarded, not_none_if(test, true), body));
                self.block(orelse, &narrowed(guarded, not_none_if(test, false), orelse));
            }
            StmtKind::While { test, body, orelse } => {
                self.expr(test, guarded);
                self.block(body, &narrowed(guarded, not_none_if(test, true), body));
                self.block(orelse, guarded);
            }
            StmtKind::For {
                target,
                iter,
                body,
                orelse,
            } => {
                self.expr(iter, guarded);
                self.target(target, guarded);
                self.block(body, guarded);
                self.block(orelse, guarded);
            }
            StmtKind::Assign { targets, value } => {
                self.expr(value, guarded);
                for t in targets {
                    self.target(t, guarded);
                }
            }
            StmtKind::AugAssign { target, value, .. } => {
                // `best += v` reads `best`, then `v`, then adds.
                if self.safe(value) {
                    self.check(target, NOT_A_NUMBER);
                }
                self.target(target, guarded);
                self.expr(value, guarded);
            }
            StmtKind::Return(Some(value)) => {
                if self.returns_number {
                    self.check(value, RETURNED_NONE);
                }
                self.expr(value, guarded);
            }
            StmtKind::Expr(e) => self.expr(e, guarded),
            StmtKind::Assert { test, msg } => {
                self.expr(test, guarded);
                if let Some(m) = msg {
                    self.expr(m, guarded);
                }
            }
            StmtKind::Raise { exc: Some(e) } => self.expr(e, guarded),
            _ => {}
        }
    }

    /// What an assignment's target reads (a subscript's array and index).
    fn target(&mut self, t: &Expr, guarded: &BTreeSet<String>) {
        match &t.kind {
            ExprKind::Name(_) => {}
            ExprKind::Tuple(items) | ExprKind::List(items) => {
                for item in items {
                    self.target(item, guarded);
                }
            }
            _ => self.expr(t, guarded),
        }
    }

    fn expr(&mut self, e: &Expr, guarded: &BTreeSet<String>) {
        match &e.kind {
            ExprKind::Name(n) if guarded.contains(n) => self.check(e, NOT_A_NUMBER),
            ExprKind::Binary(_, a, b) => {
                if self.safe(b) {
                    self.check(a, NOT_A_NUMBER);
                }
                self.check(b, NOT_A_NUMBER);
            }
            ExprKind::Unary(op, a) if *op != UnaryOp::Not => self.check(a, NOT_A_NUMBER),
            ExprKind::Compare(first, links) => {
                // Each operand after the first is the right operand of its link: Python
                // compares as soon as it is evaluated.
                let ordering =
                    |op: &CmpOp| matches!(op, CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge);
                if ordering(&links[0].0) && self.safe(&links[0].1) {
                    self.check(first, NOT_A_NUMBER);
                }
                for (op, operand) in links {
                    if ordering(op) {
                        self.check(operand, NOT_A_NUMBER);
                    }
                }
            }
            ExprKind::Subscript(a, index) if self.safe(index) => self.check(a, NOT_A_NUMBER),
            ExprKind::Call {
                func,
                args,
                keywords,
            } if keywords.is_empty() => {
                // The arguments are evaluated first; the call raises.
                let checked = match (self.takes_numbers)(func) {
                    Some(NoneArgs::All) => args.len(),
                    Some(NoneArgs::First) => 1,
                    None => 0,
                };
                for (k, arg) in args.iter().enumerate().take(checked) {
                    if args[k + 1..].iter().all(|later| self.safe(later)) {
                        self.check(arg, NOT_A_NUMBER);
                    }
                }
            }
            ExprKind::IfExp { test, body, orelse } => {
                self.expr(test, guarded);
                self.expr(body, &union(guarded, not_none_if(test, true)));
                self.expr(orelse, &union(guarded, not_none_if(test, false)));
                return;
            }
            ExprKind::BoolOp(op, items) => {
                // Each operand is evaluated only where the ones before it did not decide.
                let mut inner = guarded.clone();
                for item in items {
                    self.expr(item, &inner);
                    inner = union(&inner, not_none_if(item, *op == BoolOp::And));
                }
                return;
            }
            // A lambda's body runs elsewhere; a comprehension's targets may shadow the name.
            ExprKind::Lambda(_) | ExprKind::Comp(_) => return,
            _ => {}
        }
        visit::for_each_child(e, |child| self.expr(child, guarded));
    }

    /// Records `e` as a checked read when it is a read of one of the names.
    fn check(&mut self, e: &Expr, message: &'static str) {
        if let ExprKind::Name(n) = &e.kind {
            if self.names.contains(n) {
                self.checked.entry(e.span).or_insert(message);
            }
        }
    }

    /// Whether evaluating `e` cannot raise: a constant, or a name bound where it is read.
    fn safe(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) | ExprKind::None => true,
            ExprKind::Unary(UnaryOp::Neg | UnaryOp::Pos, a) => {
                matches!(a.kind, ExprKind::Int(_) | ExprKind::Float(_))
            }
            ExprKind::Name(_) => !self.unbound_reads.contains(&e.span),
            _ => false,
        }
    }
}

/// The names `test` proves are not None where its truth is `when`.
fn not_none_if(test: &Expr, when: bool) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    match &test.kind {
        ExprKind::Compare(a, links) if links.len() == 1 => {
            let (op, b) = (&links[0].0, &links[0].1);
            let proves = match op {
                CmpOp::IsNot => when,
                CmpOp::Is => !when,
                _ => false,
            };
            let name = match (&a.kind, &b.kind) {
                (ExprKind::Name(n), ExprKind::None) | (ExprKind::None, ExprKind::Name(n)) => {
                    Some(n)
                }
                _ => None,
            };
            if let (true, Some(n)) = (proves, name) {
                out.insert(n.clone());
            }
        }
        ExprKind::Name(n) if when => {
            out.insert(n.clone());
        }
        ExprKind::Unary(UnaryOp::Not, a) => return not_none_if(a, !when),
        ExprKind::BoolOp(op, items) if (*op == BoolOp::And) == when => {
            // `a and b` true: both hold; `a or b` false: both failed.
            for item in items {
                out.extend(not_none_if(item, when));
            }
        }
        _ => {}
    }
    out
}

fn union(a: &BTreeSet<String>, b: BTreeSet<String>) -> BTreeSet<String> {
    let mut out = a.clone();
    out.extend(b);
    out
}

/// `guarded` with the names `proved`, less any the block assigns (a guard holds until then;
/// the simple rule is to drop the name from the whole block).
fn narrowed(
    guarded: &BTreeSet<String>,
    proved: BTreeSet<String>,
    block: &[Stmt],
) -> BTreeSet<String> {
    let mut assigned = HashSet::new();
    super::collect_locals(block, &mut assigned);
    let mut out = union(guarded, proved);
    out.retain(|n| !assigned.contains(n));
    out
}

use super::expr::bin;
use super::names::{Func, Module};
use super::{builtins, not, provenance::Prov, rebind, Translator, Value};
use crate::error::{ErrorKind, Exception, Result};
use crate::ir::{self, Expr as IrExpr, Stmt as IrStmt, Ty};
impl Translator<'_> {
    /// Gives each local of `body` that some statement assigns `None` a flag "holds None", false
    /// until an assignment, and finds the reads that may be lowered with a check (see the module
    /// docs): at the filter's start, and where each inlined helper call starts.
    pub(super) fn guard_sentinels(
        &mut self,
        body: &[Stmt],
        locals: &HashSet<String>,
        returns_number: bool,
    ) {
        let (mut names, valued) = sentinel_names(body);
        names.retain(|n| locals.contains(n));
        if names.is_empty() {
            return;
        }
        for n in &names {
            if !self.sentinel_flags.contains_key(n) {
                let flag = self.new_var(Ty::Bool, &format!("{n}%none"));
                self.var_prov.insert(flag, Prov::Py);
                self.emit(IrStmt::Assign(flag, IrExpr::Bool(false)));
                self.sentinel_flags.insert(n.clone(), flag);
            }
        }
        self.sentinel_valued.extend(valued);
        let takes_numbers = |f: &Expr| self.raises_for_none(f);
        let mut classifier = Classifier {
            names: &names,
            unbound_reads: &self.unbound_reads,
            takes_numbers: &takes_numbers,
            returns_number,
            checked: HashMap::new(),
        };
        classifier.block(body, &BTreeSet::new());
        let checked = classifier.checked;
        self.sentinel_checked.extend(checked);
    }

    /// The flag of `name` where it is a sentinel local seen from here (an inlined helper does not
    /// see the filter's locals).
    fn sentinel_flag(&self, name: &str) -> Option<ir::Var> {
        if self.hidden_in_helper(name) {
            return None;
        }
        self.sentinel_flags.get(name).copied()
    }

    /// Which arguments of a call of `func` raise `TypeError` where they are None: of Python's
    /// builtins that take numbers or sequences, and of every `math` function.
    fn raises_for_none(&self, func: &Expr) -> Option<NoneArgs> {
        let callee = match &func.kind {
            ExprKind::Name(n) => self.plain_global(n),
            ExprKind::Attribute(m, attr) => match &m.kind {
                ExprKind::Name(m) => match self.plain_global(m) {
                    Some(Value::Module(Module::Math)) => builtins::module_attr(Module::Math, attr),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        };
        use Func::*;
        let Some(Value::Function(b)) = callee else {
            return None;
        };
        match (b.module, b.func) {
            (Module::Builtin, Min | Max) => Some(NoneArgs::All),
            (Module::Math, _) => Some(NoneArgs::First),
            // `bool(None)` is False; every other builtin of the language raises for None.
            (Module::Builtin, Bool) => None,
            (Module::Builtin, _) => Some(NoneArgs::First),
            _ => None,
        }
    }

    /// What `name` stands for where no local, parameter, bound value or helper takes it: an
    /// import or a builtin.
    fn plain_global(&self, name: &str) -> Option<Value> {
        if let Some(v @ (Value::Module(_) | Value::Function(_))) = self.names.get(name) {
            return Some(v.clone()); // an import
        }
        self.is_builtin_name(name)
            .then(|| builtins::global(name))
            .flatten()
    }

    /// Whether `name` means Python's builtin of that name here: no local, parameter, bound
    /// value, helper or import takes it.
    pub(super) fn is_builtin_name(&self, name: &str) -> bool {
        !(self.locals.contains(name)
            || self.param_names.contains(name)
            || self.names.contains_key(name)
            || self.bindings.get(name).is_some()
            || self.helper(name).is_some())
    }

    /// `name is None` / `name is not None` of a sentinel local: its flag.
    pub(super) fn sentinel_test(&mut self, first: &Expr, rest: &[(CmpOp, Expr)]) -> Option<Value> {
        let [(op @ (CmpOp::Is | CmpOp::IsNot), other)] = rest else {
            return None;
        };
        let name = match (&first.kind, &other.kind) {
            (ExprKind::Name(n), ExprKind::None) => (n, first.span),
            (ExprKind::None, ExprKind::Name(n)) => (n, other.span),
            _ => return None,
        };
        let flag = self.sentinel_flag(name.0)?;
        self.check_bound(name.0, name.1);
        let is_none = IrExpr::Var(flag);
        let e = match op {
            CmpOp::Is => is_none,
            _ => not(is_none),
        };
        let e = self.with_prov(e, Ty::Bool, Prov::Py);
        Some(Value::Scalar(e, Ty::Bool))
    }

    /// The truth of a sentinel local read as a condition (`if best:`, `not best`): false where
    /// it holds None, else its number's.
    pub(super) fn sentinel_truth(&mut self, test: &Expr) -> Result<Option<IrExpr>> {
        let ExprKind::Name(n) = &test.kind else {
            return Ok(None);
        };
        let Some(flag) = self.sentinel_flag(n) else {
            return Ok(None);
        };
        self.check_bound(n, test.span);
        let number = if self.sentinel_valued.contains(n) {
            let v = self.read_local(n, test.span)?;
            self.truth(v, test.span)?
        } else {
            IrExpr::Bool(false)
        };
        Ok(Some(bin(ir::BinOp::And, not(IrExpr::Var(flag)), number)))
    }

    /// Any other read of a sentinel local: checked where Python raises `TypeError` at that point
    /// for None (or where a test guards it), refused elsewhere. A local that holds nothing but
    /// None reads as a number no check lets through.
    pub(super) fn sentinel_read(&mut self, name: &str, span: Span) -> Result<Option<Value>> {
        let Some(flag) = self.sentinel_flag(name) else {
            return Ok(None);
        };
        let Some(message) = self.sentinel_checked.get(&span).copied() else {
            let shown = rebind::display(name);
            return Err(self
                .err(
                    ErrorKind::Unsupported,
                    span,
                    format!("`{shown}` may hold None here, where Python would carry the None on"),
                )
                .hint(format!(
                    "ndjit follows None through `{shown} is None`, `{shown} is not None`, conditions, and operations on numbers; test `{shown} is not None` first, or start it at a number such as np.nan"
                )));
        };
        self.check_plain(not(IrExpr::Var(flag)), Exception::TypeError, message, span);
        if self.sentinel_valued.contains(name) {
            return Ok(None);
        }
        Ok(Some(Value::Scalar(IrExpr::F64(0.0), Ty::F64)))
    }

    /// `name = value` of a sentinel local: `None` sets its flag; numbers clear it (through
    /// `mark_bound`); anything else is refused. `Ok(true)` where the assignment is done.
    pub(super) fn assign_sentinel(
        &mut self,
        name: &str,
        value: &Value,
        span: Span,
    ) -> Result<bool> {
        let Some(flag) = self.sentinel_flag(name) else {
            return Ok(false);
        };
        match value {
            Value::None => {
                self.mark_bound(name);
                self.emit(IrStmt::Assign(flag, IrExpr::Bool(true)));
                Ok(true)
            }
            Value::Scalar(..) => Ok(false),
            other => Err(self
                .err(
                    ErrorKind::Type,
                    span,
                    format!(
                        "`{}` holds None elsewhere and {} here",
                        rebind::display(name),
                        other.describe()
                    ),
                )
                .hint("a variable that holds None holds numbers otherwise; use another name")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The source text of each checked read of `src`'s function `f`, in order.
    fn checked(src: &str) -> Vec<String> {
        let program = crate::syntax::parse(src).unwrap();
        let body = &program.function.body;
        let (names, _) = sentinel_names(body);
        let takes_numbers = |f: &Expr| match &f.kind {
            ExprKind::Name(n) if n == "abs" => Some(NoneArgs::First),
            ExprKind::Name(n) if n == "max" => Some(NoneArgs::All),
            _ => None,
        };
        let mut c = Classifier {
            names: &names,
            unbound_reads: &HashSet::new(),
            takes_numbers: &takes_numbers,
            returns_number: true,
            checked: HashMap::new(),
        };
        c.block(body, &BTreeSet::new());
        let mut spans: Vec<Span> = c.checked.into_keys().collect();
        spans.sort_by_key(|s| (s.start.line, s.start.column));
        spans
            .iter()
            .map(|s| format!("{}:{}", s.start.line, s.start.column))
            .collect()
    }

    #[test]
    fn reads_where_python_raises_for_none_are_checked() {
        // line 3: `m + 1` (left, a constant after it), `1 - m` (right), `-m`, `abs(m)`
        let src = "def f(x):\n    m = None\n    a = (m + 1, 1 - m, -m, abs(m))\n    return m\n";
        assert_eq!(checked(src), ["3:10", "3:21", "3:25", "3:32", "4:12"]);
    }

    #[test]
    fn only_the_arguments_a_call_reads_as_numbers_are_checked() {
        // `max` compares every argument; `abs` (standing for `round`, `pow`, `math.log`) checks
        // its first only
        let src = "def f(x):\n    m = None\n    v = 1.0\n    a = (max(v, m), abs(v, m), abs(m, v))\n    return 0.0\n";
        assert_eq!(checked(src), ["4:17", "4:36"]);
    }

    #[test]
    fn reads_python_carries_on_are_not_checked() {
        // a copy, a tuple item, `==`, `in`, an unknown callee, an operand before an index
        let src = "def f(x):\n    m = None\n    y = m\n    t = (m, m == 1, m in x, g(m), m + x[9])\n    return 0.0\n";
        assert!(checked(src).is_empty());
    }

    #[test]
    fn a_not_none_test_guards_until_an_assignment() {
        let guarded =
            "def f(x):\n    m = None\n    if m is not None:\n        y = m\n    return 0.0\n";
        assert_eq!(checked(guarded), ["4:13"]);
        let orelse = "def f(x):\n    m = None\n    y = 0.0 if m is None else m\n    return 0.0\n";
        assert_eq!(checked(orelse), ["3:31"]);
        let reassigned =
            "def f(x):\n    m = None\n    if m is not None:\n        m = None\n        y = m\n    return 0.0\n";
        assert!(checked(reassigned).is_empty());
    }
}
