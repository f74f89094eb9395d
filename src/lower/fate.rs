//! Where a value goes, before lowering: the analysis behind values that ndjit computes as
//! something Python tells apart in some uses only.
//!
//! Three values have that shape: the empty `sum(...)`, Python's int 0 where ndjit computes the
//! float 0.0 (`empty_sum.rs`); `np.where` of numbers, NumPy's 0-d array where ndjit computes a
//! NumPy scalar (`zero_d.rs`); and a list of ints and floats, an int64 or a float64 array to
//! NumPy by path, where ndjit stores doubles (`float_statistics.rs`). The same walk finds the
//! values whose unknown part no use reads: a zero whose sign NumPy chooses
//! (`zero_sign_uses.rs`), and a set, whose order ndjit does not know, where only its size is
//! read (`set_sizes.rs`). Rather than model them at
//! run time, [`Scope`] walks each function once and follows every such value through operators,
//! calls, names (through all of a name's loads), choices, helpers' parameters and the uses of
//! what each call of a helper returns, to the uses that decide: those that agree for both, and
//! those that may differ. A [`Rules`] says which expressions it follows and which uses agree;
//! everything it does not know counts as differing, so a construct the rules miss can only add
//! an error, never hide one.

use super::names::Builtin;
use crate::error::Span;
use crate::syntax::ast::{
    BinOp, CompFor, Expr, ExprKind, Function, Keyword, Stmt, StmtKind, UnaryOp,
};
use crate::syntax::Program;
use std::collections::{HashMap, HashSet};

/// Resolves a call's function expression to a builtin (aliases, imports), if it is one.
pub(super) type Callee<'a> = &'a dyn Fn(&Expr) -> Option<Builtin>;

/// What becomes of a value at some position of the program if it is the one being followed.
#[derive(Clone, Debug)]
pub(super) enum Fate {
    /// What ndjit computes gives Python's result from here on.
    Agrees,
    /// Something may tell them apart.
    Differs,
    /// Stored into this local name: its loads decide.
    Named(String),
    /// Stored into a name of another function's walk (the `usize` in [`verdicts`]' list): a
    /// helper's parameter, or what its `return` gives ([`RETURN`]).
    In(usize, String),
}

/// The name under which a helper's walk keeps the fates of its calls' values.
const RETURN: &str = "%return";

/// One analysis: which calls make the value followed, and which uses agree.
pub(super) trait Rules {
    /// Whether `e` makes the value followed (a call, a comprehension).
    fn follows(&self, s: &Scope, e: &Expr) -> bool;
    /// The fate of `me`, an operand of `op` (the left one if `left`) beside `other`, where the
    /// operation's result has `fate`.
    fn operand(
        &self,
        s: &Scope,
        op: BinOp,
        fate: Fate,
        me: &Expr,
        other: &Expr,
        left: bool,
    ) -> Fate;
    /// The fate of a unary operator's operand, where its result has `fate`.
    fn unary(&self, op: UnaryOp, fate: Fate) -> Fate;
    /// The fate of a positional argument of `b`, called with `n` of them and `keywords`, whose
    /// result has `fate`.
    fn argument(&self, b: Builtin, call: (usize, &[Keyword]), fate: Fate) -> Fate;
    /// Whether `t op= v` changes the value of `t` in place when it is the value followed (a
    /// mutable object), so that the update itself may differ.
    fn updated_in_place(&self) -> bool;
    /// The fate of a value indexed by `index` (`v[i]`, `v[a:b]`) whose item has `fate`; by
    /// default anything may tell it apart.
    fn subscript(&self, _index: &Expr, _fate: Fate) -> Fate {
        Fate::Differs
    }
    /// The fate of the receiver of the method `name` (`v.copy()`) whose call has `fate`; by
    /// default anything may tell it apart.
    fn receiver(&self, _name: &str, _fate: Fate) -> Fate {
        Fate::Differs
    }
    /// The fate of `v` in the attribute `v.name` (not a method call) whose value has `fate`; by
    /// default anything may tell it apart.
    fn attribute(&self, _name: &str, _fate: Fate) -> Fate {
        Fate::Differs
    }
    /// The fate of a value compared (`==`, `<`, `in`) or tested for truth (`if v:`); by default
    /// these agree (they see neither a zero's sign nor whether a number is an int).
    fn compared(&self) -> Fate {
        Fate::Agrees
    }
    /// The fate of the filter's result; by default it agrees (scipy converts it to a float).
    fn result(&self) -> Fate {
        Fate::Agrees
    }
}

/// The fate of an operand of `op` where a number's sign is what is followed: the operators hand
/// it on (`1 / m`, `m * 2`: the result's fate is the operand's), but `@` of arrays is not
/// followed.
pub(super) fn sign_handed_on(op: BinOp, fate: Fate) -> Fate {
    if op == BinOp::MatMul {
        Fate::Differs
    } else {
        fate
    }
}

/// The same for a unary operator: `not v` is the same for either sign, `-v` hands it on.
pub(super) fn sign_handed_on_unary(op: UnaryOp, fate: Fate) -> Fate {
    match op {
        UnaryOp::Not => Fate::Agrees,
        _ => fate,
    }
}

/// Which followed expressions an analysis wants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Those whose value may reach a use that tells it apart (to refuse or check).
    Differs,
    /// Those whose value reaches only uses that agree (to allow).
    Agrees,
}

/// The spans of the expressions `rules` follows in `program` with `verdict`. `callee` resolves
/// a call's function expression to a builtin (aliases, imports); `floats`: the filter's
/// parameters that hold floats or float64 arrays (the buffer, an integrand's variables). The
/// filter's result goes where [`Rules::result`] says; a helper's goes wherever its calls send
/// it, and a lambda's anywhere.
pub(super) fn followed(
    program: &Program,
    rules: &dyn Rules,
    (floats, callee): (&[&str], Callee),
    verdict: Verdict,
) -> HashSet<Span> {
    let differs = verdict == Verdict::Differs;
    let verdicts = verdicts(program, rules, floats, callee);
    verdicts
        .into_iter()
        .filter(|(_, d)| *d == differs)
        .map(|(s, _)| s)
        .collect()
}

/// Each followed expression's span, and whether its value may reach a use that differs.
/// Every function is walked (the filter, its helpers, then the lambdas inside them); a value
/// passed to a helper goes to its parameter, and what a helper returns goes wherever each of its
/// calls sends it.
fn verdicts(
    program: &Program,
    rules: &dyn Rules,
    floats: &[&str],
    callee: Callee,
) -> HashMap<Span, bool> {
    let helpers = program
        .helpers
        .iter()
        .enumerate()
        .map(|(i, (n, f))| {
            (
                n.clone(),
                (i + 1, f.params.iter().map(|p| p.name.clone()).collect()),
            )
        })
        .collect();
    let walk = Walk {
        rules,
        callee,
        helpers,
    };
    let mut scopes = vec![Scope::walked(
        (&program.function, true),
        rules.result(),
        floats,
        &walk,
    )];
    for (_, f) in &program.helpers {
        scopes.push(Scope::walked(
            (f, false),
            Fate::Named(RETURN.into()),
            &[],
            &walk,
        ));
    }
    let mut k = 0;
    while k < scopes.len() {
        // A lambda's result goes wherever the lambda is called from.
        for l in std::mem::take(&mut scopes[k].lambdas) {
            scopes.push(Scope::walked((&l, false), Fate::Differs, &[], &walk));
        }
        k += 1;
    }
    for caller in 0..scopes.len() {
        for (h, fate) in std::mem::take(&mut scopes[caller].helper_calls) {
            let fate = match fate {
                Fate::Named(n) => Fate::In(caller, n),
                f => f,
            };
            scopes[h].loads.entry(RETURN.into()).or_default().push(fate);
        }
    }
    let mut out = HashMap::new();
    for (at, s) in scopes.iter().enumerate() {
        for (span, fate) in &s.calls {
            let differs = differs(&scopes, at, fate, &mut HashSet::new());
            *out.entry(*span).or_default() |= differs;
        }
    }
    out
}

/// Whether a value with `fate` in the walk `scopes[at]` may be told apart, following names: a
/// name tells it apart if any of its loads does (whichever assignment a load sees, it is a
/// load; a name already being followed adds nothing new).
fn differs(scopes: &[Scope], at: usize, fate: &Fate, seen: &mut HashSet<(usize, String)>) -> bool {
    let (scope, name) = match fate {
        Fate::Agrees => return false,
        Fate::Differs => return true,
        Fate::Named(n) => (at, n),
        Fate::In(s, n) => (*s, n),
    };
    if !seen.insert((scope, name.clone())) {
        return false;
    }
    let loads = scopes[scope]
        .loads
        .get(name)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    loads.iter().any(|l| differs(scopes, scope, l, seen))
}

/// What every function's walk shares.
struct Walk<'a> {
    rules: &'a dyn Rules,
    callee: Callee<'a>,
    /// The program's helper functions by name: their walk's index and their parameters. They
    /// shadow builtins of their names (`def max(a, b)`).
    helpers: HashMap<String, (usize, Vec<String>)>,
}

/// One function's walk: the fate of each followed call and of each load of a local name.
pub(super) struct Scope<'a> {
    result: Fate,
    /// The followed expressions met, with their fates.
    calls: Vec<(Span, Fate)>,
    loads: HashMap<String, Vec<Fate>>,
    /// How many times each name is bound (parameters, assignments, loop and comprehension
    /// targets), counted before the walk.
    bindings: HashMap<String, usize>,
    /// Parameters holding floats or float64 arrays, while never rebound.
    floats: HashSet<String>,
    /// The filter's own parameters, which hold bound values (`extra_arguments`, defaults)
    /// where they are not the buffer; empty in a helper's or a lambda's walk.
    filter_params: HashSet<String>,
    /// Names assigned a followed call (which `is_followed` counts when that is their only
    /// binding).
    followed_names: HashSet<String>,
    /// Lambdas inside the function, walked on their own.
    lambdas: Vec<Function>,
    /// The helpers called (their walk's index), with the fate of each call's value.
    helper_calls: Vec<(usize, Fate)>,
    walk: &'a Walk<'a>,
}

impl<'a> Scope<'a> {
    /// `f` walked (`filter`: whether it is the filter itself): the fates of its followed
    /// expressions and of its names' loads.
    fn walked(
        (f, filter): (&Function, bool),
        result: Fate,
        floats: &[&str],
        walk: &'a Walk<'a>,
    ) -> Scope<'a> {
        let mut s = Scope {
            walk,
            helper_calls: vec![],
            result,
            calls: vec![],
            loads: HashMap::new(),
            bindings: HashMap::new(),
            floats: HashSet::new(),
            filter_params: match filter {
                true => f.params.iter().map(|p| p.name.clone()).collect(),
                false => HashSet::new(),
            },
            followed_names: HashSet::new(),
            lambdas: vec![],
        };
        for p in &f.params {
            s.bind(&p.name);
        }
        // A default is made once, where the function is defined, and shared by its calls.
        for d in f.params.iter().filter_map(|p| p.default.as_ref()) {
            s.expr(d, Fate::Differs);
        }
        s.bind_all(&f.body);
        s.floats = floats
            .iter()
            .filter(|n| s.bindings.get(**n) == Some(&1))
            .map(|n| n.to_string())
            .collect();
        s.stmts(&f.body);
        s
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
                        if self.is_followed(value) {
                            self.followed_names.insert(n.clone());
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

    /// Whether the parameter `name` holds floats or float64 arrays (and is never rebound).
    pub(super) fn is_float_param(&self, name: &str) -> bool {
        self.floats.contains(name)
    }

    /// The builtin a call's function names, unless a local name or a helper shadows it.
    pub(super) fn builtin(&self, func: &Expr) -> Option<Builtin> {
        match &func.kind {
            ExprKind::Name(n)
                if self.bindings.contains_key(n) || self.walk.helpers.contains_key(n) =>
            {
                None
            }
            _ => (self.walk.callee)(func),
        }
    }

    /// Whether a load of `name` may read the value bound to that name: a module-level name
    /// this function does not bind, or one of the filter's parameters (also where the filter
    /// rebinds it: then only some of its loads do).
    pub(super) fn may_read_bound(&self, name: &str) -> bool {
        !self.bindings.contains_key(name) || self.filter_params.contains(name)
    }

    /// Whether every load of `name` reads the value bound to that name (a filter's parameter
    /// never rebound, or a module-level name this function does not bind).
    pub(super) fn reads_bound_only(&self, name: &str) -> bool {
        match self.bindings.get(name) {
            None => true,
            Some(n) => *n == 1 && self.filter_params.contains(name),
        }
    }

    /// Whether `e` makes the value the rules follow, or is a name bound only to one.
    pub(super) fn is_followed(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Name(n) => {
                self.followed_names.contains(n) && self.bindings.get(n) == Some(&1)
            }
            _ => self.walk.rules.follows(self, e),
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
            StmtKind::AugAssign { target, op, value } => self.update(target, *op, value),
            StmtKind::If { test, body, orelse } | StmtKind::While { test, body, orelse } => {
                self.expr(test, self.walk.rules.compared());
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
                self.expr(test, self.walk.rules.compared());
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

    /// `t op= v`: `t = t op v`, or for a mutable `t`, a change of `t` itself.
    fn update(&mut self, target: &Expr, op: BinOp, value: &Expr) {
        self.target(target);
        let result = match &target.kind {
            ExprKind::Name(n) => Fate::Named(n.clone()),
            _ => Fate::Differs,
        };
        let fate = self
            .walk
            .rules
            .operand(self, op, result, value, target, false);
        if let ExprKind::Name(n) = &target.kind {
            let own = if self.walk.rules.updated_in_place() {
                Fate::Differs
            } else {
                self.walk
                    .rules
                    .operand(self, op, Fate::Named(n.clone()), target, value, true)
            };
            self.loads.entry(n.clone()).or_default().push(own);
        }
        self.expr(value, fate);
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
        if self.walk.rules.follows(self, e) {
            self.calls.push((e.span, fate.clone()));
        }
        match &e.kind {
            ExprKind::Name(n) => match self.helper(n) {
                // A helper as a value (not called here): its result may go anywhere.
                Some((h, _)) => self.helper_calls.push((h, Fate::Differs)),
                None => self.loads.entry(n.clone()).or_default().push(fate),
            },
            ExprKind::Binary(op, a, b) => {
                let fa = self.walk.rules.operand(self, *op, fate.clone(), a, b, true);
                let fb = self.walk.rules.operand(self, *op, fate, b, a, false);
                self.expr(a, fa);
                self.expr(b, fb);
            }
            ExprKind::Unary(op, a) => {
                let f = self.walk.rules.unary(*op, fate);
                self.expr(a, f);
            }
            ExprKind::Compare(a, rest) => {
                self.expr(a, self.walk.rules.compared());
                rest.iter()
                    .for_each(|(_, r)| self.expr(r, self.walk.rules.compared()));
            }
            // `a and b` / `a or b` give one of their operands.
            ExprKind::BoolOp(_, items) => items.iter().for_each(|i| self.expr(i, fate.clone())),
            ExprKind::IfExp { test, body, orelse } => {
                self.expr(test, self.walk.rules.compared());
                self.expr(body, fate.clone());
                self.expr(orelse, fate);
            }
            ExprKind::Call {
                func,
                args,
                keywords,
            } => self.call(func, args, keywords, fate),
            ExprKind::Comp(c) => {
                for CompFor { target, iter, ifs } in &c.clauses {
                    self.target(target);
                    self.expr(iter, Fate::Differs);
                    ifs.iter()
                        .for_each(|i| self.expr(i, self.walk.rules.compared()));
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
            ExprKind::Attribute(base, name) => {
                let f = self.walk.rules.attribute(name, fate);
                self.expr(base, f);
            }
            ExprKind::Subscript(base, index) => {
                let f = self.walk.rules.subscript(index, fate);
                self.expr(base, f);
                self.expr(index, Fate::Differs);
            }
            // Containers, attributes, slices: their own rules.
            _ => crate::syntax::visit::for_each_child(e, |c| self.expr(c, Fate::Differs)),
        }
    }

    /// The helper `name` calls, unless a local name shadows it: its walk's index and its
    /// parameters.
    fn helper(&mut self, name: &str) -> Option<(usize, &'a [String])> {
        let walk: &'a Walk<'a> = self.walk;
        let (h, params) = walk.helpers.get(name)?;
        if self.bindings.contains_key(name) {
            // Also a local name somewhere here (a comprehension's target, say): a call through
            // it may be the helper's, whose result may then go anywhere.
            self.helper_calls.push((*h, Fate::Differs));
            return None;
        }
        Some((*h, params.as_slice()))
    }

    fn call(&mut self, func: &Expr, args: &[Expr], keywords: &[Keyword], fate: Fate) {
        if let ExprKind::Name(n) = &func.kind {
            if let Some((h, params)) = self.helper(n) {
                return self.helper_call((h, params), args, keywords, fate);
            }
        }
        let builtin = self.builtin(func);
        let arg_fate = match builtin {
            Some(b) => self
                .walk
                .rules
                .argument(b, (args.len(), keywords), fate.clone()),
            None => Fate::Differs,
        };
        match &func.kind {
            ExprKind::Name(_) => {}
            // `np.sqrt(...)`: the module is no value; a method's receiver is one.
            ExprKind::Attribute(..) if builtin.is_some() => {}
            ExprKind::Attribute(receiver, name) => {
                let f = self.walk.rules.receiver(name, fate.clone());
                self.expr(receiver, f)
            }
            _ => self.expr(func, Fate::Differs),
        }
        for a in args {
            self.expr(a, arg_fate.clone());
        }
        for k in keywords {
            self.expr(&k.value, Fate::Differs);
        }
    }

    /// A call of the helper `h`: each argument goes to its parameter, and the call's value
    /// (what the helper returns) goes where `fate` says.
    fn helper_call(
        &mut self,
        (h, params): (usize, &[String]),
        args: &[Expr],
        keywords: &[Keyword],
        fate: Fate,
    ) {
        self.helper_calls.push((h, fate));
        let param = |name: Option<&String>| name.map_or(Fate::Differs, |p| Fate::In(h, p.clone()));
        for (i, a) in args.iter().enumerate() {
            self.expr(a, param(params.get(i)));
        }
        for k in keywords {
            self.expr(&k.value, param(params.iter().find(|p| **p == k.name)));
        }
    }
}
