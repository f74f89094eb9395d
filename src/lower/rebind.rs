//! Parameters that the body rebinds or writes into, made into ordinary locals before lowering.
//!
//! `values = values.astype(int)` makes `values` an int array from that line on, while the lines
//! before it read the float buffer. Each top-level assignment to a parameter therefore starts a new
//! *version* (`values'1`, `values'2` ...), a local of its own type, and every later mention is
//! renamed to it; assignments nested in loops and branches write the current version. A write into
//! the parameter itself (`w[4] = 0`, `w += 1`, a nested rebinding) first copies it into a version
//! (`w'1 = w`), which is scipy's contract anyway: the buffer is the callback's own copy for each
//! pixel, so the copy changes nothing observable and nothing leaks between pixels.
//!
//! The lowering copies on array assignment, where NumPy shares memory (`y = x` or `y = x[1:]` is a
//! view). That differs only when one of the two names is written into and the other is read
//! afterwards; [`check_aliasing`] refuses exactly those programs and asks for `.copy()`.

use super::list_methods::ListMethod;
use crate::error::{Error, ErrorKind, Result, Span};
use crate::syntax::ast::{Expr, ExprKind, Stmt, StmtKind};
use crate::syntax::visit::{
    for_each_child_mut, for_each_stmt_expr, for_each_stmt_expr_mut, names_in,
};
use std::collections::{HashMap, HashSet};

/// How a statement changes a name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Write {
    /// `n = ...` nested in a branch or loop, or a `for` target: `n` names a new value, and the
    /// array it named before is untouched.
    Rebinding,
    /// `n[i] = ...` or `n += ...`: an array is changed in place (a number's `n += 1` rebinds).
    InPlace,
}

/// A parameter copied into a version because a statement writes it: the first such write.
pub(super) struct Copied {
    pub name: String,
    pub span: Span,
    pub write: Write,
}

/// Renames rebound parameters in `body`. `params` are the parameter names that may be versioned
/// (a generic_filter1d output line is written in place, so it is left out). Returns the new body
/// and the parameters copied into a version before their first write.
pub(super) fn version_params(params: &[String], body: &[Stmt]) -> (Vec<Stmt>, Vec<Copied>) {
    let mut r = Renamer {
        params: params.iter().cloned().collect(),
        current: HashMap::new(),
        counts: HashMap::new(),
        copied: Vec::new(),
    };
    let mut out = Vec::with_capacity(body.len());
    for s in body {
        r.top_level(s, &mut out);
    }
    (out, r.copied)
}

struct Renamer {
    params: HashSet<String>,
    /// The version each parameter name refers to now.
    current: HashMap<String, String>,
    counts: HashMap<String, u32>,
    copied: Vec<Copied>,
}

impl Renamer {
    fn top_level(&mut self, s: &Stmt, out: &mut Vec<Stmt>) {
        let mut s = s.clone();
        // Writes this statement makes into a parameter that has no version yet need a copy first,
        // except a plain top-level rebinding, which starts a version by itself.
        let mut written = Vec::new();
        writes_of(&s, true, &mut written);
        for (name, span, write) in written {
            if self.params.contains(&name) && !self.current.contains_key(&name) {
                let version = self.new_version(&name);
                out.push(assign(&version, name_expr(&name, span), span));
                self.copied.push(Copied { name, span, write });
            }
        }
        match &mut s.kind {
            StmtKind::Assign { targets, value } => {
                self.rename_expr(value);
                for t in targets {
                    self.rebind_target(t);
                }
            }
            _ => self.rename_stmt(&mut s),
        }
        out.push(s);
    }

    /// A top-level assignment target: a parameter named there gets a new version.
    fn rebind_target(&mut self, t: &mut Expr) {
        match &mut t.kind {
            ExprKind::Name(n) if self.params.contains(n.as_str()) => {
                *n = self.new_version(n);
            }
            ExprKind::Tuple(items) | ExprKind::List(items) => {
                items.iter_mut().for_each(|i| self.rebind_target(i))
            }
            _ => self.rename_expr(t),
        }
    }

    fn new_version(&mut self, name: &str) -> String {
        let k = self.counts.entry(name.to_string()).or_insert(0);
        *k += 1;
        let version = format!("{name}'{k}");
        self.current.insert(name.to_string(), version.clone());
        version
    }

    fn rename_stmt(&self, s: &mut Stmt) {
        for_each_stmt_expr_mut(std::slice::from_mut(s), &mut |e| self.rename_expr(e));
    }

    fn rename_expr(&self, e: &mut Expr) {
        if self.current.is_empty() {
            return;
        }
        rename(e, &self.current);
    }
}

/// Renames the names of `map` throughout a statement list (for inlining a helper's body).
pub(super) fn rename_stmts(body: &mut [Stmt], map: &HashMap<String, String>) {
    let r = Renamer {
        params: HashSet::new(),
        current: map.clone(),
        counts: HashMap::new(),
        copied: Vec::new(),
    };
    body.iter_mut().for_each(|s| r.rename_stmt(s));
}

/// [`rename`] for the comprehensions' scoping.
pub(super) fn rename_expr(e: &mut Expr, map: &HashMap<String, String>) {
    rename(e, map)
}

/// The names a `for` target binds (`v`, or `i, v`).
pub(super) fn target_names(t: &Expr, out: &mut Vec<String>) {
    match &t.kind {
        ExprKind::Name(n) => out.push(n.clone()),
        ExprKind::Tuple(items) | ExprKind::List(items) => {
            items.iter().for_each(|i| target_names(i, out))
        }
        _ => {}
    }
}

/// The list named by `name.method(...)` and the method, if `e` calls one of the methods that
/// change a list in place.
pub(super) fn list_method_call(e: &Expr) -> Option<(&str, ListMethod)> {
    let ExprKind::Call { func, .. } = &e.kind else {
        return None;
    };
    let ExprKind::Attribute(base, attr) = &func.kind else {
        return None;
    };
    match &base.kind {
        ExprKind::Name(n) => Some((n, ListMethod::named(attr)?)),
        _ => None,
    }
}

/// The names a `for` loop's iterable reads item by item as the loop goes: the iterable itself
/// (`for v in values`), a slice of it, or an argument of `enumerate`, `zip` or `reversed`
/// around it. Python's iterators over a list read its current length and items at each step.
pub(super) fn iterated_names(iter: &Expr) -> Vec<&str> {
    match &iter.kind {
        ExprKind::Name(n) => vec![n.as_str()],
        // A slice of a list is a copy made before the loop; with the list changed in the body,
        // ndjit's slice (a view) would not be: counted as the list.
        ExprKind::Subscript(base, _) => iterated_names(base),
        ExprKind::Call { func, args, .. } => match &func.kind {
            ExprKind::Name(f) if matches!(f.as_str(), "enumerate" | "zip" | "reversed") => {
                args.iter().flat_map(iterated_names).collect()
            }
            _ => vec![],
        },
        _ => vec![],
    }
}

/// Names whose list methods that change a list in place (`.append(...)`, `.sort()` ...) a
/// statement calls, and names assigned an empty list `[]` (which only growing makes useful):
/// lists changed in place.
pub(super) fn changed_lists(body: &[Stmt]) -> HashSet<String> {
    let (sorted, other) = list_changes(body);
    sorted.into_iter().chain(other).collect()
}

/// Of [`changed_lists`], the names whose only method that changes a list is `.sort()` and that
/// are never assigned `[]`: an array's `x.sort()` reads the same, so they may hold arrays
/// (`sort_in_place.rs`).
pub(super) fn sorted_only(body: &[Stmt]) -> HashSet<String> {
    let (sorted, other) = list_changes(body);
    sorted.into_iter().filter(|n| !other.contains(n)).collect()
}

/// The names [`changed_lists`] finds, in two sets: those `.sort()` is called on, and those
/// changed otherwise (another list method, or assigned `[]`).
fn list_changes(body: &[Stmt]) -> (HashSet<String>, HashSet<String>) {
    let (mut sorted, mut other) = (HashSet::new(), HashSet::new());
    for_each_stmt_expr(body, &mut |e| {
        if let Some((n, method)) = list_method_call(e) {
            match method {
                ListMethod::Sort => sorted.insert(n.to_string()),
                _ => other.insert(n.to_string()),
            };
        }
    });
    visit_assignments(body, &mut |targets, value| {
        if matches!(&value.kind, ExprKind::List(items) if items.is_empty()) {
            for t in targets {
                if let ExprKind::Name(n) = &t.kind {
                    other.insert(n.clone());
                }
            }
        }
    });
    (sorted, other)
}

/// Renames free occurrences of names in `e` (a lambda's own parameters shadow them).
fn rename(e: &mut Expr, map: &HashMap<String, String>) {
    crate::with_stack(|| match &mut e.kind {
        ExprKind::Name(n) => {
            if let Some(v) = map.get(n.as_str()) {
                *n = v.clone();
            }
        }
        ExprKind::Lambda(f) => {
            let mut inner = map.clone();
            for p in &f.params {
                inner.remove(&p.name);
            }
            for s in &mut f.body {
                if let StmtKind::Return(Some(r)) = &mut s.kind {
                    rename(r, &inner);
                }
            }
        }
        _ => for_each_child_mut(e, |c| rename(c, map)),
    })
}

/// Names a statement writes: rebinds (unless `top` and the statement is a plain assignment,
/// which versions them itself) and writes into (`n[i] = ...`, `n += ...`), with where and how.
fn writes_of(s: &Stmt, top: bool, out: &mut Vec<(String, Span, Write)>) {
    match &s.kind {
        StmtKind::Assign { targets, .. } => {
            for t in targets {
                target_writes(t, (!top).then_some(Write::Rebinding), out);
            }
        }
        StmtKind::AugAssign { target, .. } => target_writes(target, Some(Write::InPlace), out),
        // An array's `x.sort()` writes into it (`sort_in_place.rs`).
        StmtKind::Expr(e) => {
            if let Some((n, ListMethod::Sort)) = list_method_call(e) {
                out.push((n.to_string(), e.span, Write::InPlace));
            }
        }
        StmtKind::For {
            target,
            body,
            orelse,
            ..
        } => {
            target_writes(target, Some(Write::Rebinding), out);
            body.iter()
                .chain(orelse)
                .for_each(|s| writes_of(s, false, out));
        }
        StmtKind::If { body, orelse, .. } | StmtKind::While { body, orelse, .. } => body
            .iter()
            .chain(orelse)
            .for_each(|s| writes_of(s, false, out)),
        _ => {}
    }
}

/// The names target `t` writes: into (`n[i]`) always, and whole names as `names` says (`None`:
/// not counted).
fn target_writes(t: &Expr, names: Option<Write>, out: &mut Vec<(String, Span, Write)>) {
    match &t.kind {
        ExprKind::Name(n) => {
            if let Some(w) = names {
                out.push((n.clone(), t.span, w));
            }
        }
        ExprKind::Tuple(items) | ExprKind::List(items) => {
            items.iter().for_each(|i| target_writes(i, names, out))
        }
        // `n[i] = v`, and `n[0][1:] = v` into an array a tuple holds.
        ExprKind::Subscript(base, _) => {
            if let Some(n) = root_name(base) {
                out.push((n.to_string(), t.span, Write::InPlace));
            }
        }
        _ => {}
    }
}

fn name_expr(name: &str, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Name(name.to_string()),
        span,
    }
}

fn assign(target: &str, value: Expr, span: Span) -> Stmt {
    Stmt {
        kind: StmtKind::Assign {
            targets: vec![name_expr(target, span)],
            value,
        },
        span,
    }
}

/// The name shown to the user for a local: a version `w'2` is still `w` to them.
pub(super) fn display(name: &str) -> &str {
    name.split_once('\'').map_or(name, |(n, _)| n)
}

// ---- aliasing --------------------------------------------------------------------------------

/// Refuses two names for one NumPy array where one is written into and the other read: NumPy
/// would share the memory, the lowering copies. A name shares the array of what it is assigned
/// (`y = x`, a view: a slice, `reshape`, `ravel`, `.T`, `np.flip`, a row of a 2-D array), of
/// what a container or a helper call it is assigned from holds (`b = [a][0]`, `b = g(a)`), and
/// of the other targets of a chained or tuple assignment (`a = b = x.copy()`, `a, b = x, x`).
/// `is_array` tells the names that hold arrays (and, of [`HELPER_RESULT`], whether a helper
/// reads a bound array) (`n += 1` on a number rebinds it, on an array it
/// writes in place), `items_are_views` those whose items are views: 2-D arrays (whose `m[i]` is
/// a row) and tuples (whose `t[0]` may be an array), and `defined` the functions the program
/// defines, whose results may be views of their arguments whatever builtin they are named after.
/// `outlives` tells the names whose arrays are read again after the body: generic_filter1d's
/// output line, which scipy reads when the callback returns (`o = oline; o[0] = 7` writes the
/// result in NumPy), a bound array, which every later pixel reads (`k = kernel; k[0] += 1`
/// changes it for them), and a helper's arguments, which its caller reads. A version of such a
/// name that may still be its array (`kernel = kernel[1:]`, or `kernel = kernel[valids]` nested
/// in a branch, whose other path keeps the bound array) shares it too.
pub(super) fn check_aliasing(
    body: &[Stmt],
    is_array: impl Fn(&str) -> bool,
    items_are_views: impl Fn(&str) -> bool,
    defined: impl Fn(&str) -> bool,
    outlives: impl Fn(&str) -> bool,
) -> Result<()> {
    let known = Known {
        items_are_views: &items_are_views,
        defined: &defined,
    };
    // A helper's result may be a bound array's memory (where `is_array` says helpers read one),
    // read after the call.
    let outlives = |n: &str| n == HELPER_RESULT || outlives(n);
    let mut mutated = Vec::new();
    for s in body {
        element_writes(s, &mut mutated);
    }
    mutated.retain(|n| is_array(n));
    if mutated.is_empty() {
        return Ok(());
    }
    // A version is the same NumPy array as the name it was copied from (see `version_params`).
    let is_mutated = |n: &str| mutated.iter().any(|m: &String| display(m) == display(n));
    let mut found = None;
    visit_assignments(body, &mut |targets, value| {
        for (target, source, in_value) in shared_pairs(targets, value, &known) {
            // Both hold arrays (`n = len(a)` shares nothing); a version shares its own name's
            // array, which only matters where that array outlives the call.
            if found.is_some()
                || (display(source) == display(target) && !outlives(source))
                || !is_array(source)
                || !is_array(target)
            {
                continue;
            }
            let (written, other) = if is_mutated(target) {
                (target, source)
            } else if is_mutated(source) {
                (source, target)
            } else {
                continue;
            };
            // Each read of `other` beyond its reads in the assignment itself sees NumPy's
            // shared memory.
            let own = if other == source { in_value } else { 0 };
            let after = usize::from(outlives(other));
            if count_reads(body, other) + after > own {
                found = Some((
                    display(target).to_string(),
                    display(source).to_string(),
                    display(written).to_string(),
                    (after == 1).then(|| display(other).to_string()),
                    value.span,
                ));
            }
        }
    });
    let Some((target, source, written, later, span)) = found else {
        return Ok(());
    };
    if source == HELPER_RESULT {
        return Err(Error::new(
            ErrorKind::Unsupported,
            span,
            format!(
                "`{target}` may be an array a helper gives back from a bound array it reads (or \
                 from its arguments), and writing into `{written}` would change that array in NumPy"
            ),
        )
        .hint(format!(
            "copy the helper's result: `{target} = helper(...).copy()`"
        )));
    }
    let message = match (target == source, later) {
        (true, _) => format!(
            "`{target}` may still be the array it was given (a bound array that every pixel \
             reads, or a helper's argument), and writing into it would change that array in NumPy"
        ),
        (false, Some(other)) => format!(
            "`{target}` shares memory with `{source}` in NumPy, and writing into `{written}` \
             would change `{other}`, which is read after the call"
        ),
        (false, None) => format!(
            "`{target}` shares memory with `{source}` in NumPy, and `{written}` is written into \
             while the other is read"
        ),
    };
    Err(
        Error::new(ErrorKind::Unsupported, span, message).hint(format!(
            "make an independent copy: `{target} = {source}.copy()`"
        )),
    )
}

/// Each name `target` binds, with the names its part of `value` may share memory with: `a, b =
/// x, y` item by item, nested tuples too (`(a, c), b = (y, 1), 2`); a tuple target of another
/// value shares with all of it.
fn bind_target<'e>(
    target: &'e Expr,
    value: &'e Expr,
    known: &Known,
    bound: &mut Vec<(&'e str, Vec<&'e str>)>,
) {
    match (&target.kind, &value.kind) {
        (ExprKind::Name(n), _) => bound.push((n, shared_with(value, known))),
        (ExprKind::Tuple(ts) | ExprKind::List(ts), ExprKind::Tuple(vs) | ExprKind::List(vs))
            if ts.len() == vs.len() =>
        {
            for (t, v) in ts.iter().zip(vs) {
                bind_target(t, v, known, bound);
            }
        }
        (ExprKind::Tuple(ts) | ExprKind::List(ts), _) => {
            for t in ts {
                bind_target(t, value, known, bound);
            }
        }
        _ => {}
    }
}

/// The pairs of names an assignment makes share one array: each target name with each name
/// its value may share memory with ([`shared_with`]; with the times that name is read in the
/// value), and the targets that may share one with each other.
fn shared_pairs<'e>(
    targets: &'e [Expr],
    value: &'e Expr,
    known: &Known,
) -> Vec<(&'e str, &'e str, usize)> {
    let mut bound: Vec<(&str, Vec<&str>)> = Vec::new();
    for t in targets {
        bind_target(t, value, known, &mut bound);
    }
    let chained = targets
        .iter()
        .filter(|t| matches!(t.kind, ExprKind::Name(_)))
        .count()
        > 1;
    let reads = |n: &str| {
        let mut names = Vec::new();
        names_in(value, &mut names);
        names.iter().filter(|m| *m == n).count()
    };
    let mut pairs = Vec::new();
    for (i, (t, sources)) in bound.iter().enumerate() {
        pairs.extend(sources.iter().map(|s| (*t, *s, reads(s))));
        for (u, other) in &bound[i + 1..] {
            // Chained targets hold the same object; others share what both values may share.
            if chained || sources.iter().any(|s| other.contains(s)) {
                pairs.push((*t, *u, 0));
            }
        }
    }
    pairs
}

/// The names whose array `e`'s value may share memory with: `x`, its views (`x[a:b]`,
/// `x[...]`, a row `m[i]` of a 2-D array, `x.reshape(...)`, `x.ravel()`, `x.T`, `np.flip(x)`,
/// `np.asarray(x)` ...), what a container literal, a choice or a helper call holds or may give
/// back, and an item of any of them.
/// What a helper's result may share memory with besides its arguments: a bound array the helper
/// reads (`def tail(): return G[1:]`), which outlives the call. Not a name of the program.
pub(super) const HELPER_RESULT: &str = "%helper";

/// What the aliasing walk knows of the program's names (see [`check_aliasing`]).
struct Known<'a> {
    items_are_views: &'a dyn Fn(&str) -> bool,
    defined: &'a dyn Fn(&str) -> bool,
}

fn shared_with<'e>(e: &'e Expr, known: &Known) -> Vec<&'e str> {
    // Numbers, new lists, a set's count, and a Counter, which holds its data as it was when made.
    const PYTHON_BUILTINS: &[&str] = &[
        "len",
        "float",
        "int",
        "bool",
        "abs",
        "round",
        "sum",
        "min",
        "max",
        "sorted",
        "list",
        "tuple",
        "any",
        "all",
        "Counter",
        "set",
        "frozenset",
    ];
    let items_are_views = known.items_are_views;
    const METHODS: &[&str] = &["reshape", "ravel", "view", "squeeze", "transpose"];
    const FUNCTIONS: &[&str] = &[
        "reshape",
        "ravel",
        "asarray",
        "asanyarray",
        "squeeze",
        "flip",
        "fliplr",
        "flipud",
        "transpose",
    ];
    let numpy =
        |b: &Expr| matches!(&b.kind, ExprKind::Name(m) if matches!(m.as_str(), "np" | "numpy"));
    let all = |items: &'e [Expr]| items.iter().flat_map(|i| shared_with(i, known)).collect();
    match &e.kind {
        ExprKind::Name(n) => vec![n.as_str()],
        ExprKind::Subscript(base, index) => match &base.kind {
            // An element of a 1-D array is a number; a slice, a row of a 2-D one or an item of a
            // tuple (an array it holds), a view.
            ExprKind::Name(n) if !has_slice(index) && !items_are_views(n) => vec![],
            _ => shared_with(base, known),
        },
        // An array's sizes are numbers; any other attribute (`.T`, `.real`, a class's or an
        // instance's array `cfg.kernel`) may be the object's memory.
        ExprKind::Attribute(_, attr)
            if matches!(
                attr.as_str(),
                "shape" | "size" | "ndim" | "dtype" | "itemsize" | "nbytes"
            ) =>
        {
            vec![]
        }
        ExprKind::Attribute(base, _) => shared_with(base, known),
        ExprKind::Tuple(items) | ExprKind::List(items) => all(items),
        ExprKind::IfExp { body, orelse, .. } => {
            let mut v = shared_with(body, known);
            v.extend(shared_with(orelse, known));
            v
        }
        ExprKind::BoolOp(_, items) => all(items),
        ExprKind::Call {
            func,
            args,
            keywords,
        } => match &func.kind {
            ExprKind::Attribute(base, m) if numpy(base) => {
                if FUNCTIONS.contains(&m.as_str()) {
                    args.first()
                        .map(|a| shared_with(a, known))
                        .unwrap_or_default()
                } else {
                    vec![]
                }
            }
            ExprKind::Attribute(base, m) if METHODS.contains(&m.as_str()) => {
                shared_with(base, known)
            }
            // Python's builtins give numbers or new lists; a helper may give back (a view of)
            // an argument, or of a bound array it reads ([`HELPER_RESULT`]).
            ExprKind::Name(f) if PYTHON_BUILTINS.contains(&f.as_str()) && !(known.defined)(f) => {
                vec![]
            }
            ExprKind::Name(_) => {
                let mut v: Vec<&str> = all(args);
                v.extend(keywords.iter().flat_map(|k| shared_with(&k.value, known)));
                v.push(HELPER_RESULT);
                v
            }
            _ => vec![],
        },
        _ => vec![],
    }
}

/// The names `body` writes into element-wise or in place (see [`element_writes`]), and those
/// among them updated whole by an augmented assignment (`n += v`).
pub(super) fn in_place_writes(body: &[Stmt]) -> (HashSet<String>, HashSet<String>) {
    let mut written = Vec::new();
    body.iter().for_each(|s| element_writes(s, &mut written));
    let mut whole = HashSet::new();
    visit_augmented(body, &mut |target| {
        if let ExprKind::Name(n) = &target.kind {
            whole.insert(n.clone());
        }
    });
    (written.into_iter().collect(), whole)
}

fn visit_augmented(body: &[Stmt], f: &mut impl FnMut(&Expr)) {
    for s in body {
        match &s.kind {
            StmtKind::AugAssign { target, .. } => f(target),
            StmtKind::If { body, orelse, .. }
            | StmtKind::While { body, orelse, .. }
            | StmtKind::For { body, orelse, .. } => {
                visit_augmented(body, f);
                visit_augmented(orelse, f);
            }
            _ => {}
        }
    }
}

/// Names written into element-wise (`n[i] = v`) or in place (`n += v`, an array updated in place,
/// a list's `n.append(v)`, `m = n.pop()` ...).
fn element_writes(s: &Stmt, out: &mut Vec<String>) {
    match &s.kind {
        StmtKind::Expr(e) => {
            if let Some((n, _)) = list_method_call(e) {
                out.push(n.to_string());
            }
        }
        StmtKind::Assign { targets, value } => {
            if let Some((n, _)) = list_method_call(value) {
                out.push(n.to_string()); // `m = values.pop()`
            }
            for t in targets {
                if let ExprKind::Subscript(base, _) = &t.kind {
                    out.extend(root_name(base).map(str::to_string));
                }
            }
        }
        StmtKind::AugAssign { target, .. } => match &target.kind {
            ExprKind::Name(n) => out.push(n.clone()),
            ExprKind::Subscript(base, _) => out.extend(root_name(base).map(str::to_string)),
            _ => {}
        },
        StmtKind::If { body, orelse, .. }
        | StmtKind::While { body, orelse, .. }
        | StmtKind::For { body, orelse, .. } => body
            .iter()
            .chain(orelse)
            .for_each(|s| element_writes(s, out)),
        _ => {}
    }
}

/// The name whose memory `e` reads: `n` of `n`, `n[0]`, `n[0][1:]` (an item of a tuple), `n.T`.
fn root_name(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Name(n) => Some(n),
        ExprKind::Subscript(base, _) | ExprKind::Attribute(base, _) => root_name(base),
        _ => None,
    }
}

fn visit_assignments(body: &[Stmt], f: &mut impl FnMut(&[Expr], &Expr)) {
    for s in body {
        match &s.kind {
            StmtKind::Assign { targets, value } => f(targets, value),
            StmtKind::If { body, orelse, .. }
            | StmtKind::While { body, orelse, .. }
            | StmtKind::For { body, orelse, .. } => {
                visit_assignments(body, f);
                visit_assignments(orelse, f);
            }
            _ => {}
        }
    }
}

pub(super) fn has_slice(index: &Expr) -> bool {
    match &index.kind {
        ExprKind::Slice(..) | ExprKind::Ellipsis => true,
        ExprKind::Tuple(items) => items.iter().any(has_slice),
        _ => false,
    }
}

/// How many times `name` is mentioned in `body`, assignments to it included (an over-count of
/// its reads, so the aliasing check errs on the side of refusing).
fn count_reads(body: &[Stmt], name: &str) -> usize {
    let mut names = Vec::new();
    for_each_stmt_expr(body, &mut |e| names_in(e, &mut names));
    names.iter().filter(|n| *n == name).count()
}
