//! Lowering: AST to IR, with name resolution, type inference and every check a user can get wrong.
//!
//! The translator walks a function once, in program order, emitting IR statements into the current
//! block. Variable types are inferred by running it to a fixed point: a pass that finds a variable
//! needing a wider type (an `int` counter later assigned a float) records the wider type and the
//! pass is repeated; each pass is microseconds and two suffice in practice.

mod attributes;
mod builtins;
mod comprehension;
mod empty_sum;
mod expr;
mod fate;
mod float_statistics;
mod inline;
mod int_or_float;
mod list_methods;
mod lists;
mod names;
mod nan_sign_uses;
mod nan_signs;
mod numpy;
mod provenance;
mod pyint;
mod pyround;
mod raising;
mod ranges;
mod rebind;
mod selection;
mod sentinels;
mod set_sizes;
mod sort_in_place;
mod strided_dots;
mod strings;
mod transposed;
mod tuples;
mod unbound;
mod value;
mod window_writes;
mod zero_d;
mod zero_sign_uses;

use crate::bind::{ArrayKind, Bindings, Layout, Slot, Value as Bound};
use crate::error::{Error, ErrorKind, Exception, Result, Span};
use crate::ir::{
    self, Arr, ArrDecl, ArrKind, ErrorId, ErrorSite, Expr, Func, Stmt, Ty, Var, VarDecl, BUFFER,
};
use crate::syntax::ast::{self, ExprKind, StmtKind};
use crate::syntax::Program;
use list_methods::ListMethod;
use names::Module;
use std::collections::{HashMap, HashSet};
pub(crate) use value::{ArrayVal, ElemKind, Value};

/// The most IR nodes a lowered filter may have.
pub const MAX_IR_NODES: usize = 200_000;

/// Error sites every function reserves, in this order (backends rely on the numbers).
pub const SITE_BAD_ARGS: ErrorId = ErrorId(0);
pub const SITE_NO_SCRATCH: ErrorId = ErrorId(1);

/// The inferred type of a local name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NameTy {
    Scalar(Ty),
    Array(Ty),
}

/// What a lowering pass learned for the next one.
#[derive(Default)]
struct Learned {
    /// Variable types.
    types: HashMap<String, NameTy>,
    /// Whether each variable holds Python numbers, NumPy scalars or both (`provenance.rs`).
    provs: HashMap<String, provenance::ProvHint>,
    /// Which local arrays are Python lists, with their elements' kind.
    lists: HashMap<String, ElemKind>,
    /// Float variables that hold an int on some path (`int_or_float.rs`).
    int_names: HashSet<String>,
    /// Names sorted in place by `.sort()` that hold arrays, not lists (`sort_in_place.rs`).
    sorted_arrays: HashSet<String>,
}

/// A declared local.
#[derive(Clone, Copy, Debug)]
enum Local {
    Scalar(Var, Ty),
    Array(Arr, Ty),
}

struct LoopCtx {
    /// Set when the loop has an `else:` clause: `break` must record that it broke.
    broke: Option<Var>,
}

/// The result of lowering: the IR and the bound-value layout it reads.
pub struct Lowered {
    pub func: Func,
    pub layout: Layout,
    /// An integrand's parameters, for its trampoline (empty for other signatures).
    pub integrand: crate::integrand::Params,
}

/// Lowers a parsed program to IR valid for every filter size, unoptimised: the caller runs
/// [`ir::optimize`] (after [`ir::substitute`] to specialise it).
pub fn lower(program: &Program, bindings: &Bindings, sig: ir::Sig) -> Result<Lowered> {
    lower_typed(program, bindings, sig, crate::integrand::Typing::default())
}

/// [`lower`] with an integrand's values typed as Python ints or NumPy scalars, where quad's
/// doubles may stand for them (`crate::integrand`; the variable, 0, and declared parameters keep
/// their types).
pub fn lower_typed(
    program: &Program,
    bindings: &Bindings,
    sig: ir::Sig,
    typing: crate::integrand::Typing,
) -> Result<Lowered> {
    let mut learned = Learned::default();
    for _ in 0..8 {
        let mut t = Translator::new(program, bindings, &learned);
        t.func.sig = sig;
        t.typing = typing;
        t.function()?;
        // Earlier passes may have seen an int stored where types had not settled: only this
        // pass's view counts, and a change means another pass.
        if t.int_names_seen != t.int_names {
            t.changed = true;
        }
        if !t.changed {
            if let Some(refusal) = t.refusal {
                return Err(refusal);
            }
            let size = ir::block_size(&t.block);
            if size > MAX_IR_NODES {
                return Err(Error::new(
                    ErrorKind::Limit,
                    program.function.span,
                    format!("the filter lowers to {size} IR nodes; the limit is {MAX_IR_NODES}"),
                )
                .hint("simplify the filter or split long expressions"));
            }
            let mut func = t.func;
            func.body = t.block;
            nan_signs::drop_exact_guards(&mut func, &t.nan_sign_guards);
            return Ok(Lowered {
                func,
                layout: t.layout,
                integrand: t.integrand,
            });
        }
        learned = Learned {
            types: t.hints,
            provs: t.prov_hints,
            lists: t.list_hints,
            int_names: t.int_names_seen,
            sorted_arrays: t.sorted_arrays,
        };
    }
    Err(Error::new(
        ErrorKind::Type,
        program.function.span,
        "could not infer the types of the local variables",
    )
    .hint("give each variable one kind of value (number or array)"))
}

pub(crate) struct Translator<'a> {
    program: &'a Program,
    bindings: &'a Bindings,
    pub(crate) func: Func,
    /// The statement list being emitted into.
    pub(crate) block: Vec<Stmt>,
    /// Names assigned anywhere in the function: Python makes them local.
    locals: HashSet<String>,
    declared: HashMap<String, Local>,
    hints: HashMap<String, NameTy>,
    /// Set when this pass learned a wider type: the pass must be repeated.
    changed: bool,
    /// The first refusal that depends on operand types ([`Translator::refuse_by_type`]), raised
    /// only if this pass is the last.
    refusal: Option<Error>,
    layout: Layout,
    /// Names bound to the buffer, the parameters and the module aliases.
    names: HashMap<String, Value>,
    loops: Vec<LoopCtx>,
    /// Interned error messages: one site per (message, span).
    sites: HashMap<(Exception, String, Span), ErrorId>,
    /// The column counts of local arrays that hold 2-D values (`z = w.reshape(3, 3)`).
    matrix_cols: HashMap<Arr, Var>,
    /// The name of a generic_filter1d callback's output line (written in place).
    output_name: Option<String>,
    /// Non-zero while an element-wise function is being lowered: its expressions depend on the
    /// element index, so they must stay expressions and never be hoisted into statements.
    in_elementwise: u32,
    /// Which scalars are plain Python numbers (see `provenance.rs`); absent means NumPy.
    pub(crate) var_prov: HashMap<Var, provenance::Prov>,
    pub(crate) prov_hints: HashMap<String, provenance::ProvHint>,
    /// The flag "holds an int" of float scalars that may hold one (see `int_or_float.rs`).
    pub(crate) var_int: HashMap<Var, Expr>,
    /// Names of float variables that held an int on some path in the previous pass (declared
    /// with a shadow flag), and in this one.
    pub(crate) int_names: HashSet<String>,
    pub(crate) int_names_seen: HashSet<String>,
    /// Helper calls being inlined (see `inline.rs`).
    inline: inline::Inliner,
    /// The filter's parameter names, which inlined helpers do not see.
    param_names: HashSet<String>,
    /// Names assigned once, at the top level of their function (see `tuples.rs`).
    assigned_once: HashSet<String>,
    /// The tuples, Counters and lists of a Counter's pairs held by such names.
    fixed_values: HashMap<String, Value>,
    /// Local names that hold Python lists, with their elements' kind (see `comprehension.rs`).
    list_hints: HashMap<String, ElemKind>,
    /// Comprehensions lowered so far in this pass: their hidden names are numbered by it.
    comp_count: u32,
    /// Local names whose list methods that change a list in place (`.append(...)`, `.sort()`
    /// ...) the code calls: lists stored with a length of their own (see `list_methods.rs`).
    changed_lists: HashSet<String>,
    /// Of those, the names whose only such method is `.sort()`, which may hold an array
    /// instead (`sort_in_place.rs`), and the ones found to hold one.
    sortable: HashSet<String>,
    sorted_arrays: HashSet<String>,
    /// The length of each such list; its storage's length is the capacity.
    list_len: HashMap<Arr, Var>,
    /// The `sum(...)` calls whose empty case (Python's int 0) must raise (see `empty_sum.rs`).
    pub(crate) refused_sums: HashSet<Span>,
    /// The `np.where(c, a, b)` calls whose result, a 0-d array where all three are scalars, may
    /// reach a use that tells it from a NumPy scalar (see `zero_d.rs`).
    pub(crate) differing_wheres: HashSet<Span>,
    /// The guarded extremes and quantiles whose zero reaches no use that tells its sign, and the
    /// guarded sorts whose array reaches only uses of its size (see `zero_sign_uses.rs`): their
    /// guard is left out.
    pub(crate) sign_blind_calls: HashSet<Span>,
    /// The guards of `copysign` against a NaN's sign (see `nan_signs.rs`), kept only where the
    /// lowered function shows the sign may not be NumPy's.
    nan_sign_guards: Vec<nan_signs::Guard>,
    /// The `copysign` calls whose result reaches no use that reads its sign (see
    /// `nan_sign_uses.rs`): they get no such guard.
    unread_copysigns: HashSet<Span>,
    /// The list comprehensions that may hold ints and floats, since only NumPy's float
    /// statistics read them (see `float_statistics.rs`).
    statistics_lists: HashSet<Span>,
    /// The calls of `set()` and `frozenset()` whose value reaches only `len()` (see
    /// `set_sizes.rs`): the only sets lowered.
    pub(crate) counted_sets: HashSet<Span>,
    /// The reads of locals that may find them unassigned (see `unbound.rs`), and the flag of
    /// each such local, set by its assignments.
    unbound_reads: HashSet<Span>,
    bound_flags: HashMap<String, Var>,
    /// The locals that hold None as a sentinel: the flag of each, those also assigned values,
    /// and the reads lowered with a check, with its message (see `sentinels.rs`).
    sentinel_flags: HashMap<String, Var>,
    sentinel_valued: HashSet<String>,
    sentinel_checked: HashMap<Span, &'static str>,
    /// The `.T` whose value may reach a reduction that adds in memory order (see
    /// `transposed.rs`).
    pub(crate) summed_transposes: HashSet<Span>,
    /// The views that may reach a product NumPy adds in a strided order (`strided_dots.rs`).
    strided_dots: strided_dots::StridedDots,
    /// Whether each local assigned an array so far holds 2-D ones (see `note_dimensions`).
    two_d_names: HashMap<String, bool>,
    /// How an integrand's parameters are typed ([`lower_typed`]).
    typing: crate::integrand::Typing,
    /// What the trampoline needs of an integrand's parameters.
    integrand: crate::integrand::Params,
}

impl<'a> Translator<'a> {
    fn new(program: &'a Program, bindings: &'a Bindings, passes: &Learned) -> Self {
        let mut t = Translator {
            program,
            bindings,
            func: Func {
                vars: Vec::new(),
                arrays: Vec::new(),
                body: Vec::new(),
                errors: Vec::new(),
                filter_size: None,
                sig: ir::Sig::Filter,
            },
            block: Vec::new(),
            locals: HashSet::new(),
            declared: HashMap::new(),
            hints: passes.types.clone(),
            changed: false,
            refusal: None,
            layout: Layout::default(),
            names: HashMap::new(),
            loops: Vec::new(),
            sites: HashMap::new(),
            in_elementwise: 0,
            output_name: None,
            matrix_cols: HashMap::new(),
            var_prov: HashMap::new(),
            prov_hints: passes.provs.clone(),
            var_int: HashMap::new(),
            int_names: passes.int_names.clone(),
            int_names_seen: HashSet::new(),
            inline: inline::Inliner::default(),
            param_names: program
                .function
                .params
                .iter()
                .map(|p| p.name.clone())
                .collect(),
            assigned_once: HashSet::new(),
            fixed_values: HashMap::new(),
            list_hints: passes.lists.clone(),
            comp_count: 0,
            changed_lists: HashSet::new(),
            sortable: HashSet::new(),
            sorted_arrays: passes.sorted_arrays.clone(),
            list_len: HashMap::new(),
            refused_sums: HashSet::new(),
            differing_wheres: HashSet::new(),
            sign_blind_calls: HashSet::new(),
            nan_sign_guards: Vec::new(),
            unread_copysigns: HashSet::new(),
            statistics_lists: HashSet::new(),
            counted_sets: HashSet::new(),
            unbound_reads: HashSet::new(),
            bound_flags: HashMap::new(),
            sentinel_flags: HashMap::new(),
            sentinel_valued: HashSet::new(),
            sentinel_checked: HashMap::new(),
            summed_transposes: HashSet::new(),
            strided_dots: Default::default(),
            two_d_names: HashMap::new(),
            typing: crate::integrand::Typing::default(),
            integrand: Default::default(),
        };
        let span = program.function.span;
        t.site(Exception::ValueError, SITE_BAD_ARGS_MSG, span);
        t.site(
            Exception::RuntimeError,
            "out of memory for {a} elements of scratch space",
            span,
        );
        t
    }

    // ---- declarations -----------------------------------------------------------------------

    pub(crate) fn err(&self, kind: ErrorKind, span: Span, msg: impl Into<String>) -> Error {
        Error::new(kind, span, msg)
    }

    /// The error site for an exception and message at a span (deduplicated).
    pub(crate) fn site(&mut self, exception: Exception, message: &str, span: Span) -> ErrorId {
        let key = (exception, message.to_string(), span);
        if let Some(id) = self.sites.get(&key) {
            return *id;
        }
        let id = ErrorId(self.func.errors.len() as u32);
        self.func.errors.push(ErrorSite {
            message: message.to_string(),
            span,
            exception,
        });
        self.sites.insert(key, id);
        id
    }

    pub(crate) fn new_var(&mut self, ty: Ty, name: &str) -> Var {
        self.func.vars.push(VarDecl {
            ty,
            name: name.to_string(),
        });
        Var(self.func.vars.len() as u32 - 1)
    }

    pub(crate) fn temp(&mut self, ty: Ty) -> Var {
        let n = self.func.vars.len();
        self.new_var(ty, &format!("%t{n}"))
    }

    pub(crate) fn new_array(&mut self, kind: ArrKind, name: &str) -> Arr {
        self.func.arrays.push(ArrDecl {
            kind,
            name: name.to_string(),
        });
        Arr(self.func.arrays.len() as u32 - 1)
    }

    /// The length of an array slot (the buffer's becomes a constant when the IR is specialised,
    /// see [`ir::substitute`]).
    pub(crate) fn slot_len(&self, a: Arr) -> Expr {
        Expr::Len(a)
    }

    /// A plain view `a[i]` of an array slot.
    pub(crate) fn view(&mut self, a: Arr) -> ArrayVal {
        let index = self.temp(Ty::I64);
        let ty = self.func.arrays[a.0 as usize].elem();
        ArrayVal {
            len: self.slot_len(a),
            ty,
            index,
            elem: Expr::Load(a, Expr::Var(index).boxed()),
        }
    }

    pub(crate) fn emit(&mut self, s: Stmt) {
        self.block.push(s);
    }

    /// Lowers `f` into a fresh block and returns it, restoring the current one.
    pub(crate) fn nested<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<(T, Vec<Stmt>)> {
        let saved = std::mem::take(&mut self.block);
        let r = f(self);
        let inner = std::mem::replace(&mut self.block, saved);
        Ok((r?, inner))
    }

    /// Emits `check(cond)` failing with `exception` and `message` (which may use `{a}`/`{b}`).
    pub(crate) fn check(
        &mut self,
        cond: Expr,
        exception: Exception,
        message: &str,
        span: Span,
        a: Expr,
        b: Expr,
    ) {
        let err = self.site(exception, message, span);
        self.emit(Stmt::Check { cond, err, a, b });
    }

    /// [`Translator::check`] for a message without `{a}`/`{b}` details.
    pub(crate) fn check_plain(
        &mut self,
        cond: Expr,
        exception: Exception,
        message: &str,
        span: Span,
    ) {
        self.check(cond, exception, message, span, Expr::I64(0), Expr::I64(0));
    }

    // ---- the function -----------------------------------------------------------------------

    fn function(&mut self) -> Result<()> {
        let f = &self.program.function;
        for i in &self.program.imports {
            let span = i.span.unwrap_or(f.span);
            if self.helper(&i.alias).is_some() {
                // Python calls whichever of the two the module bound last.
                return Err(self
                    .err(
                        ErrorKind::Unsupported,
                        span,
                        format!("`{}` is both imported and defined by a `def`", i.alias),
                    )
                    .hint("rename one of them"));
            }
            self.import(&i.module, &i.alias, span)?;
        }
        // The parameter that holds floats: the buffer (the input line of generic_filter1d), an
        // integrand's variable; a transform's coordinates are ints.
        let floats: Vec<&str> = match (self.func.sig, f.params.first()) {
            (ir::Sig::Transform, _) | (_, None) => vec![],
            (_, Some(p)) => vec![p.name.as_str()],
        };
        let bound_layouts = attributes::bound_layouts(self.bindings);
        self.refused_sums = empty_sum::refused_sums(self.program, &floats, &|e| self.callee_of(e));
        self.differing_wheres = zero_d::differing_wheres(self.program, &|e| self.callee_of(e));
        self.sign_blind_calls =
            zero_sign_uses::sign_blind_calls(self.program, &|e| self.callee_of(e));
        self.unread_copysigns =
            nan_sign_uses::sign_unread_copysigns(self.program, &|e| self.callee_of(e));
        self.statistics_lists =
            float_statistics::statistics_lists(self.program, &|e| self.callee_of(e));
        self.counted_sets = set_sizes::counted_sets(self.program, &|e| self.callee_of(e));
        self.summed_transposes = transposed::summed_transposes(
            self.program,
            (&floats, &|e| self.callee_of(e)),
            &bound_layouts,
        );
        self.strided_dots =
            strided_dots::strided_dots(self.program, &|e| self.callee_of(e), bound_layouts);
        let sig = self.func.sig;
        let needed = if sig == ir::Sig::Filter1d { 2 } else { 1 };
        if f.params.len() < needed {
            let msg = match sig {
                ir::Sig::Filter1d => {
                    "a generic_filter1d callback takes the input line and the output line"
                }
                ir::Sig::Transform => "a geometric_transform mapping takes the output coordinates",
                ir::Sig::Integrand => "an integrand takes at least the integration variable",
                ir::Sig::Filter => "the filter function takes no parameters",
            };
            return Err(self.err(ErrorKind::Arity, f.span, msg).hint(
                "e.g. `def f(x): ...` (or `def f(iline, oline): ...` for generic_filter1d)",
            ));
        }
        let first = &f.params[0];
        let buffer_kind = if sig == ir::Sig::Transform {
            ArrKind::Coords
        } else {
            ArrKind::Buffer
        };
        self.func.arrays.push(ArrDecl {
            kind: buffer_kind,
            name: first.name.clone(),
        });
        let mut bound_from = 1;
        match sig {
            ir::Sig::Integrand => {
                // Every parameter is a number from quad's `xx` (the variable, then `args`); quad
                // always passes the variable, and every load below relies on that check.
                bound_from = f.params.len();
                let n = self.slot_len(BUFFER);
                self.check(
                    Expr::Cmp(ir::CmpOp::Gt, n.clone().boxed(), Expr::I64(0).boxed()),
                    Exception::TypeError,
                    "the integrand needs argument 1 but quad passed {a} values",
                    first.span,
                    n,
                    Expr::I64(0),
                );
                // A parameter the body never mentions cannot change the result, whatever its type.
                let mut mentioned = Vec::new();
                crate::syntax::visit::for_each_stmt_expr(&f.body, &mut |e| {
                    crate::syntax::visit::names_in(e, &mut mentioned)
                });
                for (k, p) in f.params.iter().enumerate() {
                    let v = self.integrand_param(k, p, mentioned.contains(&p.name))?;
                    self.names.insert(p.name.clone(), v);
                }
                // Python calls it with every value quad passes: more than it takes is an error.
                let takes = Expr::I64(f.params.len() as i64);
                let n = self.slot_len(BUFFER);
                self.check(
                    Expr::Cmp(ir::CmpOp::Le, n.clone().boxed(), takes.clone().boxed()),
                    Exception::TypeError,
                    "the integrand takes {b} arguments but quad passed {a} values",
                    first.span,
                    n,
                    takes,
                );
            }
            _ => {
                let buffer = self.view(BUFFER);
                self.names.insert(first.name.clone(), Value::Array(buffer));
            }
        }
        if matches!(sig, ir::Sig::Filter1d | ir::Sig::Transform) {
            let name = if sig == ir::Sig::Filter1d {
                f.params[1].name.clone()
            } else {
                "%input_coordinates".into()
            };
            let out = self.new_array(ArrKind::Output, &name);
            debug_assert_eq!(out, ir::OUTPUT);
            if sig == ir::Sig::Filter1d {
                let view = self.view(out);
                // scipy hands a Python callback a new, zeroed `oline` for every line
                // (`Py_Filter1DFunc`), and a C callback the buffer of the line before: zeroed
                // here, `oline += v` reads what Python reads through either.
                builtins::counted_loop(self, view.len.clone(), |t, i| {
                    t.emit(Stmt::Store(out, i, Expr::F64(0.0)));
                    Ok(())
                })?;
                self.names.insert(name.clone(), Value::Array(view));
                self.output_name = Some(name);
                bound_from = 2;
            }
        }
        for p in &f.params[bound_from..] {
            let v = self.param(p)?;
            self.names.insert(p.name.clone(), v);
        }
        let body = self.rebind_params(f)?;
        self.changed_lists = rebind::changed_lists(&body);
        self.sortable = rebind::sorted_only(&body);
        let sorted_arrays = &self.sorted_arrays;
        self.changed_lists.retain(|n| !sorted_arrays.contains(n));
        self.assigned_once = tuples::assigned_once_at_top(&body);
        self.assigned_once
            .retain(|n| !self.changed_lists.contains(n));
        collect_locals(&body, &mut self.locals);
        for p in &f.params {
            self.locals.remove(&p.name); // only the output line, written in place, is left
        }
        let locals = self.locals.clone();
        self.guard_unbound(&body, &locals);
        let returns_number = !matches!(sig, ir::Sig::Filter1d | ir::Sig::Transform);
        self.guard_sentinels(&body, &locals, returns_number);
        self.stmts(&body)?;
        // Arrays read again after the call: the output line, and bound arrays (parameters and
        // module-level names) that are not the filter's own copy.
        let outlives = |n: &str| {
            self.output_name.as_deref() == Some(n)
                || self.bound_object(n)
                || (!self.own_copy(f, n)
                    && (f.params.iter().any(|p| p.name == n)
                        || (!self.locals.contains(n) && self.bindings.get(n).is_some())))
        };
        rebind::check_aliasing(
            &body,
            |n| self.may_hold_array(n) || self.bound_object(n) || self.helper_gives_bound(n),
            |n| self.items_are_views(n),
            |n| self.helper(n).is_some(),
            outlives,
        )?;
        if sig == ir::Sig::Filter1d {
            self.emit(Stmt::Succeed); // the output line holds the result
        } else {
            let end = self.site(
                Exception::TypeError,
                "the filter returned None: every path must return a number",
                f.span,
            );
            self.emit(Stmt::Check {
                cond: Expr::Bool(false),
                err: end,
                a: Expr::I64(0),
                b: Expr::I64(0),
            });
        }
        Ok(())
    }

    /// The body with rebound parameters renamed to versions (see `rebind.rs`), after refusing
    /// writes into parameters that are not the callback's own copy.
    fn rebind_params(&mut self, f: &ast::Function) -> Result<Vec<ast::Stmt>> {
        let versioned: Vec<String> = f
            .params
            .iter()
            .map(|p| p.name.clone())
            .filter(|n| Some(n) != self.output_name.as_ref())
            .collect();
        let (body, copied) = rebind::version_params(&versioned, &f.body);
        for rebind::Copied { name, span, write } in copied {
            // Only generic_filter's buffer is a fresh copy for each call; a bound array is shared
            // by every pixel, a transform's coordinates are a tuple, and a generic_filter1d input
            // line is scipy's own buffer. Rebinding one in a branch leaves it as it is (and
            // `check_aliasing` refuses writes into a version that may still be it).
            let is_array = !matches!(self.names.get(&name), Some(Value::Scalar(..)));
            if is_array && !self.own_copy(f, &name) && write == rebind::Write::InPlace {
                return Err(self
                    .err(
                        ErrorKind::Unsupported,
                        span,
                        format!("`{name}` cannot be written into: it is not the filter's own copy"),
                    )
                    .hint(format!(
                        "assign to a new local variable, e.g. `y = {name}.copy()`, and change that"
                    )));
            }
        }
        Ok(body)
    }

    /// Whether `name` is generic_filter's buffer: a fresh copy for each call, which the
    /// callback may change as it likes.
    fn own_copy(&self, f: &ast::Function, name: &str) -> bool {
        self.func.sig == ir::Sig::Filter && f.params.first().is_some_and(|p| p.name == name)
    }

    /// Whether a name holds an array (a local as typed so far, or a parameter or bound value).
    /// (A Python list is not one here: slicing it copies, and the aliases that writing into one
    /// could expose are refused where they are made, see `refuse_list_alias`.)
    fn holds_array(&self, name: &str) -> bool {
        if self.list_hints.contains_key(name) || self.changed_lists.contains(name) {
            return false;
        }
        match self.hints.get(name) {
            Some(t) => matches!(t, NameTy::Array(_)),
            None => matches!(
                self.names.get(name),
                Some(Value::Array(_) | Value::Matrix(..))
            ),
        }
    }

    /// Whether `name` holds an array, or a tuple that may hold one.
    fn may_hold_array(&self, name: &str) -> bool {
        self.holds_array(name) || self.holds_tuple(name)
    }

    /// Whether `name` holds a tuple (a local's, or a helper's parameter's), whose items may be
    /// arrays.
    fn holds_tuple(&self, name: &str) -> bool {
        matches!(self.fixed_values.get(name), Some(Value::Tuple(_)))
            || matches!(self.names.get(name), Some(Value::Tuple(_)))
    }

    /// Whether `name[i]` may be a view of `name`'s memory: a row of a 2-D array, an array a
    /// tuple holds.
    pub(super) fn items_are_views(&self, name: &str) -> bool {
        self.holds_2d(name) || self.holds_tuple(name)
    }

    /// Whether `name` is [`rebind::HELPER_RESULT`] and a helper of the program may give back a
    /// bound array's memory: one mentions a bound array, or an object with bound attributes.
    fn helper_gives_bound(&self, name: &str) -> bool {
        if name != rebind::HELPER_RESULT {
            return false;
        }
        let mut names = Vec::new();
        for (_, h) in &self.program.helpers {
            crate::syntax::visit::for_each_stmt_expr(&h.body, &mut |e| {
                crate::syntax::visit::names_in(e, &mut names)
            });
            for p in &h.params {
                if let Some(d) = &p.default {
                    crate::syntax::visit::names_in(d, &mut names);
                }
            }
        }
        names.iter().any(|n| {
            matches!(self.bindings.get(n), Some(crate::bind::Value::Array(..)))
                || self.bound_object(n)
        })
    }

    /// Whether `name` is a module-level object (a class or an instance) whose attributes were
    /// bound (`Cfg.kernel`): its arrays are read by every later call.
    fn bound_object(&self, name: &str) -> bool {
        !self.locals.contains(name)
            && !self.names.contains_key(name)
            && self.bindings.iter().any(|(k, _)| {
                k.strip_prefix(name)
                    .is_some_and(|rest| rest.starts_with('.'))
            })
    }

    /// Whether `name` holds a 2-D array (whose `m[i]` is a row, a view).
    fn holds_2d(&self, name: &str) -> bool {
        self.two_d_names.get(name) == Some(&true)
            || matches!(self.names.get(name), Some(Value::Matrix(..)))
    }

    /// Parameter `k` of an integrand: `xx[k]`, or its default when quad passed fewer values; a
    /// Python int or a NumPy scalar where the source declares one (`n: int`, `a: np.float64`) or
    /// [`lower_typed`] types it so, else a Python float, as quad passes it (`crate::integrand`).
    fn integrand_param(&mut self, k: usize, p: &ast::Param, read: bool) -> Result<Value> {
        use ir::CmpOp;
        // The variable (0) is always a float; an annotation elsewhere declares the type.
        let declared = if k == 0 { None } else { self.declared_kind(p)? };
        self.record_doubt(k, p, declared, read);
        // Bit 0 too: `evaluate` may pass the variable as an int (quad never does).
        let (as_int, numpy) = declared.unwrap_or_else(|| self.typing.kind(k));
        let prov = match numpy {
            true => provenance::Prov::Np,
            false => provenance::Prov::Py,
        };
        let v = self.new_var(Ty::F64, &p.name);
        self.var_prov.insert(v, prov.clone());
        let present = Expr::Cmp(
            CmpOp::Gt,
            self.slot_len(BUFFER).boxed(),
            Expr::I64(k as i64).boxed(),
        );
        let load = Stmt::Assign(v, Expr::Load(BUFFER, Expr::I64(k as i64).boxed()));
        match &p.default {
            Some(d) => {
                let default = self.integrand_default(d, declared)?;
                // Total without relying on a branch (expressions must be): the index is clamped
                // into 0..len, which the check above made non-empty.
                let index = Expr::Select(
                    present.clone().boxed(),
                    Expr::I64(k as i64).boxed(),
                    Expr::I64(0).boxed(),
                );
                let value = Expr::Select(
                    present.boxed(),
                    Expr::Load(BUFFER, index.boxed()).boxed(),
                    default.boxed(),
                );
                self.emit(Stmt::Assign(v, value));
            }
            None => {
                let n = self.slot_len(BUFFER);
                self.check(present, Exception::TypeError, "the integrand needs argument {b} but quad passed {a} values (pass the rest with args=)", p.span, n, Expr::I64(k as i64 + 1));
                self.emit(load);
            }
        }
        if !as_int {
            return Ok(Value::Scalar(Expr::Var(v), Ty::F64));
        }
        if declared.is_some() {
            // Declared: the double must hold one int exactly (typed ones are checked by the
            // trampoline before it runs them).
            let x = || Expr::Var(v).boxed();
            let and = |a: Expr, b: Expr| Expr::Binary(ir::BinOp::And, a.boxed(), b.boxed());
            let integral = Expr::Cmp(CmpOp::Eq, Expr::Unary(ir::UnOp::Trunc, x()).boxed(), x());
            let abs = Expr::Unary(ir::UnOp::Abs, x()).boxed();
            let exact = Expr::Cmp(
                CmpOp::Lt,
                abs,
                Expr::F64(crate::integrand::EXACT_INTS).boxed(),
            );
            // No int is -0.0: that value was a float.
            let zero = Expr::Cmp(CmpOp::Eq, x(), Expr::F64(0.0).boxed());
            let negative_zero = and(zero, Expr::Unary(ir::UnOp::SignBit, x()));
            let not_negative_zero = Expr::Unary(ir::UnOp::Not, negative_zero.boxed());
            let message = format!(
                "`{}` is declared an int, but quad passed a value that is not one: not an \
                 integer, -0.0, or past 2**53, where a double stands for several ints",
                p.name
            );
            let ok = and(and(integral, exact), not_negative_zero);
            self.check_plain(ok, Exception::TypeError, &message, p.span);
        }
        let i = self.new_var(Ty::I64, &p.name);
        self.var_prov.insert(i, prov);
        self.emit(Stmt::Assign(i, Expr::Cast(Ty::I64, Expr::Var(v).boxed())));
        Ok(Value::Scalar(Expr::Var(i), Ty::I64))
    }

    /// The type an integrand parameter's annotation declares, as (an int, a NumPy scalar):
    /// `float`, `int` (or `bool`, which computes as the int it is but in arrays built from it),
    /// `np.float64` or `np.int64`; other annotations declare nothing, as in Python. NumPy's
    /// narrower scalars are refused: ndjit does not model their arithmetic.
    fn declared_kind(&self, p: &ast::Param) -> Result<Option<(bool, bool)>> {
        let Some(annotation) = &p.annotation else {
            return Ok(None);
        };
        match &annotation.kind {
            ExprKind::Name(n) if n == "int" || n == "bool" => return Ok(Some((true, false))),
            ExprKind::Name(n) if n == "float" => return Ok(Some((false, false))),
            _ => {}
        }
        let numpy = self
            .callee_of(annotation)
            .filter(|b| b.module == Module::Np);
        match numpy.map(|b| b.func) {
            Some(names::Func::Float64) => Ok(Some((false, true))),
            Some(names::Func::Int64) => Ok(Some((true, true))),
            _ if self.names_numpy_attribute(annotation) => {
                Err(self
                    .err(ErrorKind::Unsupported, annotation.span, "an integrand's NumPy parameters are np.float64 or np.int64")
                    .hint("pass the value as np.float64 or a Python float (float(v)): ndjit does not model NumPy's narrower scalars"))
            }
            _ => Ok(None),
        }
    }

    /// Whether `e` is `np.<name>` (any alias of NumPy).
    fn names_numpy_attribute(&self, e: &ast::Expr) -> bool {
        let ExprKind::Attribute(m, _) = &e.kind else {
            return false;
        };
        let ExprKind::Name(n) = &m.kind else {
            return false;
        };
        let module = self.names.get(n).cloned().or_else(|| builtins::global(n));
        matches!(module, Some(Value::Module(Module::Np)))
    }

    /// The hint for a float where an int is needed: an integrand's parameters are floats unless
    /// declared ints.
    pub(crate) fn int_hint(&self, otherwise: &str) -> String {
        match self.func.sig {
            ir::Sig::Integrand => format!(
                "quad passes an integrand's values as floats: declare the parameter an int \
                 (`def f(x, n: int)`), or {otherwise}"
            ),
            _ => otherwise.to_string(),
        }
    }

    /// An integrand parameter's default, as the double quad would pass: a float literal, or an
    /// int one for a parameter declared an int.
    fn integrand_default(&mut self, d: &ast::Expr, declared: Option<(bool, bool)>) -> Result<Expr> {
        match (self.constant(d)?, declared) {
            // The default is a Python number, not the NumPy scalar the parameter declares.
            (_, Some((_, true))) => Err(self
                .err(ErrorKind::Unsupported, d.span, "a parameter declared a NumPy scalar takes no default (the default would be a Python number)")
                .hint("pass the value with quad's args=, or declare the parameter `float` or `int`")),
            (Bound::Float(x), None | Some((false, false))) => Ok(Expr::F64(x)),
            (Bound::Int(i), Some((true, false))) if (i as f64).abs() < crate::integrand::EXACT_INTS => {
                Ok(Expr::F64(i as f64))
            }
            (_, Some((true, false))) => Err(self
                .err(ErrorKind::Unsupported, d.span, "a parameter declared an int takes an int default")
                .hint("write the default as an int literal within 2**53, e.g. 0")),
            // quad passes floats: an int default would make the parameter an int on one path
            // and a float on the other (`-k` is 0 for one, -0.0 for the other).
            _ => Err(self
                .err(ErrorKind::Unsupported, d.span, "an integrand's parameter defaults are floats, as quad passes them")
                .hint("write the default as a float literal, e.g. 0.0, or declare the parameter `n: int`")),
        }
    }

    /// Records the errors the trampoline reports when parameter `k`'s value may stand for an
    /// int or a float: none for the variable and declared parameters.
    fn record_doubt(
        &mut self,
        k: usize,
        p: &ast::Param,
        declared: Option<(bool, bool)>,
        read: bool,
    ) {
        let sites = (k > 0 && declared.is_none() && read).then(|| {
            let name = &p.name;
            let declare = format!("declare it in a def: `{name}: int` or `{name}: float` (or `np.int64`, `np.float64`)");
            let mut site = |m: String| self.site(Exception::TypeError, &m, p.span);
            crate::integrand::DoubtSites {
                differ: site(format!(
                    "quad passed {{a}} for `{name}`, which may stand for the int or the float \
                     (scipy passes args as doubles), and the integrand's result differs between \
                     them (or ndjit cannot compute it for one); {declare}"
                )),
                inexact: site(format!(
                    "quad passed a value of 2**53 or more for `{name}`, where a double stands for \
                     a float or for several ints (scipy passes args as doubles); declare it in a \
                     def: `{name}: float`"
                )),
                too_many: site(format!(
                    "quad passed too many values that may stand for ints or floats, Python numbers \
                     or NumPy scalars (scipy passes args as doubles; ndjit tries up to {} ways of \
                     typing them, among the first 64 parameters), up to `{name}`; {declare}",
                    crate::integrand::MAX_TYPINGS
                )),
                numpy: site(format!(
                    "quad passed {{a:float}} for `{name}`, which may stand for a Python number or a \
                     NumPy scalar (scipy passes args as doubles: `args=(v[0],)` of an array passes \
                     an np.float64), and the integrand's result differs between them (or ndjit \
                     cannot compute it for one); declare it in a def: `{name}: float` or \
                     `{name}: np.float64` (`int` or `np.int64` for an int)"
                )),
            }
        });
        self.integrand.sites.push(sites);
    }

    /// A parameter after the buffer: a bound value by name, else its default (bound too, so that
    /// it can be rebound without recompiling).
    fn param(&mut self, p: &ast::Param) -> Result<Value> {
        // A function passed as an argument: a helper of that name, or a default naming one.
        let helper = match &p.default {
            Some(ast::Expr {
                kind: ExprKind::Name(n),
                ..
            }) if self.bindings.get(&p.name).is_none() => self.helper(n),
            _ => None,
        };
        if let Some(k) = helper.or_else(|| self.helper(&p.name)) {
            return Ok(Value::Helper(k));
        }
        let value = match self.bindings.get(&p.name) {
            Some(v) => v.clone(),
            None => match &p.default {
                Some(d) => self.constant(d)?,
                None => {
                    return Err(self
                        .err(
                            ErrorKind::Binding,
                            p.span,
                            format!("parameter `{}` has no value", p.name),
                        )
                        .hint("bind it (extra_arguments / extra_keywords), or give it a default"))
                }
            },
        };
        Ok(self.bound(&p.name, &value))
    }

    /// Registers a bound value in the layout and returns how the code reads it (2-D where a
    /// column count is bound beside it). The context holds every array as doubles; the element
    /// type and the Python-or-NumPy kind come back here, so that `T[0] // 0` raises for a tuple
    /// of ints and gives 0 for an int64 array.
    fn bound(&mut self, name: &str, value: &Bound) -> Value {
        if let Bound::Str(s) = value {
            return Value::Str(s.clone());
        }
        match self.layout.add(name, value) {
            // Python's or NumPy's arithmetic: see `prov`.
            Slot::Float(k, _) => Value::Scalar(Expr::Param(k), Ty::F64),
            Slot::Int(k, _) => Value::Scalar(Expr::IntParam(k), Ty::I64),
            // A Python bool (`Cast` keeps the slot's Python provenance: see `prov`).
            Slot::Bool(k) => {
                Value::Scalar(Expr::Cast(Ty::Bool, Expr::IntParam(k).boxed()), Ty::Bool)
            }
            Slot::Array(k, kind) => {
                let a = self.new_array(ArrKind::Bound(k), name);
                let doubles = self.view(a);
                let typed = |ty: Ty| ArrayVal {
                    ty,
                    elem: Expr::Cast(ty, doubles.elem.clone().boxed()),
                    ..doubles.clone()
                };
                let v = match kind {
                    ArrayKind::Float64 => Value::Array(doubles),
                    ArrayKind::Int64 => Value::Array(typed(Ty::I64)),
                    ArrayKind::Bool => Value::Array(typed(Ty::Bool)),
                    ArrayKind::PyFloats => Value::List(doubles, ElemKind::Python),
                    ArrayKind::PyInts => Value::List(typed(Ty::I64), ElemKind::Python),
                };
                // Every way of binding an array (argument, default, global, attribute) can
                // bind a 2-D one, so its shape is applied here, once.
                self.bound_matrix(name, v)
            }
        }
    }

    /// A parameter's default value: a number literal (possibly negated) or a tuple/list of them.
    fn constant(&self, e: &ast::Expr) -> Result<Bound> {
        if let ExprKind::Str(s) = &e.kind {
            return Ok(Bound::Str(s.clone()));
        }
        crate::bind::default_value(e).ok_or_else(|| {
            self.err(
                ErrorKind::Unsupported,
                e.span,
                "default values must be numbers or tuples of numbers (all ints or all floats)",
            )
            .hint("bind the value instead (extra_keywords)")
        })
    }

    /// The builtin a call's function expression names (`len`, `np.sqrt`, an imported alias),
    /// before any local binding (the caller checks those).
    fn callee_of(&self, func: &ast::Expr) -> Option<names::Builtin> {
        let lookup = |n: &str| self.names.get(n).cloned().or_else(|| builtins::global(n));
        match &func.kind {
            ast::ExprKind::Name(n) => match lookup(n)? {
                Value::Function(b) => Some(b),
                _ => None,
            },
            ast::ExprKind::Attribute(m, attr) => {
                let ast::ExprKind::Name(module) = &m.kind else {
                    return None;
                };
                let Value::Module(module) = lookup(module)? else {
                    return None;
                };
                match builtins::module_attr(module, attr)? {
                    Value::Function(b) => Some(b),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    fn import(&mut self, module: &str, alias: &str, span: Span) -> Result<()> {
        let v = match module {
            "numpy" => Value::Module(Module::Np),
            "math" => Value::Module(Module::Math),
            "statistics" => Value::Module(Module::Statistics),
            "collections" => Value::Module(Module::Collections),
            "typing" => Value::Typing(false),
            "typing.cast" => Value::Typing(true),
            _ => match module.split_once('.') {
                Some((parent @ ("numpy" | "math" | "statistics" | "collections"), name)) => {
                    let m = match parent {
                        "numpy" => Module::Np,
                        "math" => Module::Math,
                        "statistics" => Module::Statistics,
                        _ => Module::Collections,
                    };
                    match builtins::module_attr(m, name) {
                        Some(v) => v,
                        None => {
                            return Err(self.err(
                                ErrorKind::UnknownName,
                                span,
                                format!("`{module}` is not supported"),
                            ))
                        }
                    }
                }
                _ => {
                    return Err(self
                        .err(
                            ErrorKind::Unsupported,
                            span,
                            format!("module `{module}` is not available in filters"),
                        )
                        .hint(
                            "only numpy, math, statistics (its medians and mode) and \
                             collections (its Counter) can be used",
                        ))
                }
            },
        };
        self.names.insert(alias.to_string(), v);
        Ok(())
    }

    // ---- names ------------------------------------------------------------------------------

    /// The refusal of a read of `name`, bound to a 2-D array in Fortran order, whose value may
    /// reach a sum (see `transposed.rs`).
    pub(crate) fn summed_fortran(&self, name: &str, span: Span) -> Error {
        self.err(
            ErrorKind::Unsupported,
            span,
            format!("`{name}` is bound to a 2-D array in Fortran order, whose sum NumPy adds in memory order, column by column"),
        )
        .hint(format!("ndjit binds a 2-D array row by row and adds it so (other rounding): bind np.ascontiguousarray({name}), or index it as {name}[i, j]"))
    }

    pub(crate) fn read_name(&mut self, name: &str, span: Span) -> Result<Value> {
        // Only the reads of a bound Fortran-order array are there (`transposed.rs`).
        if self.summed_transposes.contains(&span) {
            return Err(self.summed_fortran(name, span));
        }
        self.check_strided_binding(name, span)?;
        if self.hidden_in_helper(name) {
            return self.global_name(name, span);
        }
        if self.fixed_values.contains_key(name) || self.locals.contains(name) {
            self.check_bound(name, span);
        }
        if let Some(v) = self.sentinel_read(name, span)? {
            return Ok(v);
        }
        self.read_local(name, span)
    }

    /// Code inlined from a helper sees its own (renamed) names and the module's, never the
    /// filter's parameters and locals.
    fn hidden_in_helper(&self, name: &str) -> bool {
        self.inline.in_helper()
            && !inline::is_scoped(name)
            && (self.locals.contains(name) || self.param_names.contains(name))
    }

    /// The value of a name seen from here, its checks done.
    fn read_local(&mut self, name: &str, span: Span) -> Result<Value> {
        if let Some(v) = self.fixed_values.get(name) {
            return Ok(v.clone());
        }
        if self.locals.contains(name) {
            if let Some(local) = self.declared.get(name).copied() {
                return Ok(self.local_value(name, local));
            }
            // Read before its first assignment in program order: legal in a loop (set on an earlier
            // iteration). Declare it with the type learned so far, or ask for another pass.
            return match self.hints.get(name).copied() {
                Some(t) => {
                    let local = self.declare(name, t);
                    Ok(self.local_value(name, local))
                }
                None => {
                    self.changed = true;
                    Ok(Value::Scalar(Expr::F64(0.0), Ty::F64))
                }
            };
        }
        if let Some(v) = self.names.get(name) {
            return Ok(v.clone());
        }
        self.global_name(name, span)
    }

    /// A module-level name: a bound value, a helper function, or a builtin.
    fn global_name(&mut self, name: &str, span: Span) -> Result<Value> {
        if let Some(b) = self.bindings.get(name) {
            let b = b.clone();
            let v = self.bound(name, &b);
            self.names.insert(name.to_string(), v.clone());
            return Ok(v);
        }
        if let Some(k) = self.helper(name) {
            return Ok(Value::Helper(k));
        }
        if let Some(v) = builtins::global(name) {
            return Ok(v);
        }
        if let Some(instead) = unsupported_builtin(name) {
            return Err(self
                .err(
                    ErrorKind::UnknownName,
                    span,
                    format!("Python's builtin `{name}` is not supported in filters"),
                )
                .hint(instead)
                .naming(name));
        }
        if self.program.function.name.as_deref() == Some(name) {
            return Err(self
                .err(
                    ErrorKind::Unsupported,
                    span,
                    format!("recursion cannot be inlined: the filter `{name}` calls itself"),
                )
                .hint("rewrite the recursion as a loop"));
        }
        let hint = "bind it as a value (extra_arguments, extra_keywords or a closure), or check the spelling";
        Err(self
            .err(
                ErrorKind::UnknownName,
                span,
                format!("name `{name}` is not defined"),
            )
            .hint(hint)
            .naming(name))
    }

    /// Gives each local of `body` that a read may find unassigned a flag, false from here until
    /// an assignment sets it (see `unbound.rs`): at the filter's start, and where each inlined
    /// helper call starts (a new frame, with its own names).
    fn guard_unbound(&mut self, body: &[ast::Stmt], locals: &HashSet<String>) {
        for (name, span) in unbound::maybe_unbound(body, locals) {
            self.unbound_reads.insert(span);
            if !self.bound_flags.contains_key(&name) {
                let flag = self.new_var(Ty::Bool, &format!("{name}%bound"));
                self.emit(Stmt::Assign(flag, Expr::Bool(false)));
                self.bound_flags.insert(name, flag);
            }
        }
    }

    /// Records that `name` is assigned from here on, where a read may need to know.
    fn mark_bound(&mut self, name: &str) {
        if let Some(&flag) = self.bound_flags.get(name) {
            self.emit(Stmt::Assign(flag, Expr::Bool(true)));
        }
        // A sentinel's assignment holds a value unless it is `None` (`assign_sentinel`).
        if let Some(&flag) = self.sentinel_flags.get(name) {
            self.emit(Stmt::Assign(flag, Expr::Bool(false)));
        }
    }

    /// CPython's `UnboundLocalError` where the read of `name` at `span` may find it unassigned.
    pub(crate) fn check_bound(&mut self, name: &str, span: Span) {
        if !self.unbound_reads.contains(&span) {
            return;
        }
        if let Some(&flag) = self.bound_flags.get(name) {
            let message = format!(
                "cannot access local variable '{}' where it is not associated with a value",
                rebind::display(name)
            );
            self.check_plain(
                Expr::Var(flag),
                Exception::UnboundLocalError,
                &message,
                span,
            );
        }
    }

    fn local_value(&mut self, name: &str, local: Local) -> Value {
        match local {
            Local::Scalar(v, ty) => Value::Scalar(Expr::Var(v), ty),
            Local::Array(a, _) => {
                let mut view = self.view(a);
                if let Some(len) = self.list_len.get(&a) {
                    view.len = Expr::Var(*len);
                }
                if let Some(kind) = self.list_hints.get(name) {
                    return Value::List(view, *kind);
                }
                if self.changed_lists.contains(name) {
                    return Value::List(view, ElemKind::Python); // `[]`: nothing stored yet
                }
                match self.matrix_cols.get(&a) {
                    Some(cols) => Value::Matrix(view, Expr::Var(*cols)),
                    None => Value::Array(view),
                }
            }
        }
    }

    fn declare(&mut self, name: &str, t: NameTy) -> Local {
        let local = match t {
            NameTy::Scalar(ty) => {
                let v = self.new_var(ty, name);
                self.declare_prov(name, v);
                self.declare_int(name, v, ty);
                Local::Scalar(v, ty)
            }
            NameTy::Array(ty) => {
                let slot = self.new_array(ArrKind::Scratch { elem: ty }, name);
                if self.changed_lists.contains(name) {
                    let len = self.new_var(Ty::I64, &format!("{name}%len"));
                    self.list_len.insert(slot, len);
                }
                Local::Array(slot, ty)
            }
        };
        self.declared.insert(name.to_string(), local);
        local
    }

    /// Records that `name` holds a value of type `t`; widens the hint (and asks for another pass)
    /// when needed. Returns the declared local.
    fn local_for(&mut self, name: &str, t: NameTy, span: Span) -> Result<Local> {
        self.mark_bound(name);
        let joined = match (self.hints.get(name).copied(), t) {
            (None, t) => t,
            (Some(NameTy::Scalar(a)), NameTy::Scalar(b)) => NameTy::Scalar(a.max(b)),
            (Some(NameTy::Array(a)), NameTy::Array(b)) => NameTy::Array(a.max(b)),
            (Some(old), new) => {
                let what = |t: NameTy| {
                    if matches!(t, NameTy::Array(_)) {
                        "an array"
                    } else {
                        "a number"
                    }
                };
                return Err(self
                    .err(
                        ErrorKind::Type,
                        span,
                        format!(
                            "`{}` holds {} here but {} elsewhere",
                            rebind::display(name),
                            what(new),
                            what(old)
                        ),
                    )
                    .hint("use a different variable name for each"));
            }
        };
        if self.hints.get(name) != Some(&joined) {
            self.hints.insert(name.to_string(), joined);
        }
        match self.declared.get(name).copied() {
            Some(local) => {
                let have = match local {
                    Local::Scalar(_, ty) => NameTy::Scalar(ty),
                    Local::Array(_, ty) => NameTy::Array(ty),
                };
                if have != joined {
                    self.changed = true; // declared narrower earlier in this pass
                }
                Ok(local)
            }
            None => Ok(self.declare(name, joined)),
        }
    }

    /// `name = value`.
    fn assign_name(&mut self, name: &str, value: Value, span: Span) -> Result<()> {
        if Some(name) == self.output_name.as_deref() {
            return self.assign_output(value, span);
        }
        if !self.locals.contains(name) {
            return Err(self.err(
                ErrorKind::Unsupported,
                span,
                format!("cannot assign to `{name}`"),
            ));
        }
        if self.assign_sentinel(name, &value, span)? {
            return Ok(());
        }
        if self.changed_lists.contains(name) {
            return self.assign_growing_list(name, value, span);
        }
        self.note_list(name, &value, span)?;
        self.note_dimensions(name, &value, span)?;
        // A list of Python bools may become one of numbers (Python's bools are ints); NumPy's
        // bools may not.
        let python_list = matches!(value, Value::List(_, ElemKind::Python));
        // A 2-D value's column count, stored once its elements are.
        let mut column_count = None;
        let value = match value {
            Value::Tuple(items) => return self.assign_tuple(name, items, span),
            Value::List(arr, _) => Value::Array(arr),
            Value::Matrix(arr, cols) => {
                // A 2-D value: stored flat, its column count in the slot's own variable, which
                // every assignment sets (a branch or a loop's pass may store another shape).
                let Local::Array(slot, _) = self.local_for(name, NameTy::Array(arr.ty), span)?
                else {
                    unreachable!()
                };
                let var = match self.matrix_cols.get(&slot) {
                    Some(var) => *var,
                    None => {
                        let var = self.new_var(Ty::I64, &format!("{name}.shape[1]"));
                        self.var_prov.insert(var, provenance::Prov::Py);
                        self.matrix_cols.insert(slot, var);
                        var
                    }
                };
                column_count = Some((var, self.stable(cols, Ty::I64)));
                Value::Array(arr)
            }
            v => v,
        };
        match value {
            Value::Scalar(e, ty) => {
                let Local::Scalar(var, vty) = self.local_for(name, NameTy::Scalar(ty), span)?
                else {
                    unreachable!()
                };
                if vty != Ty::Bool && ty == Ty::Bool {
                    self.refuse_bool_join(span);
                }
                let p = self.prov(&e);
                if vty == Ty::F64 {
                    self.assign_int(name, var, (&e, ty), span);
                }
                let e = expr::convert(e, ty, vty);
                self.emit(Stmt::Assign(var, e));
                self.assign_prov(name, var, p);
            }
            Value::Array(arr) => {
                let Local::Array(slot, ety) = self.local_for(name, NameTy::Array(arr.ty), span)?
                else {
                    unreachable!()
                };
                if arr.ty == Ty::Bool && ety != Ty::Bool && !python_list {
                    self.refuse_bool_join(span);
                }
                // Its elements would be ints on one path and floats on another.
                let ints = ety == Ty::F64 && arr.ty == Ty::I64;
                self.refuse_int_or_float(ints, span, "an int array here and a float one elsewhere");
                // Materialise through a temporary when the value reads the slot it overwrites.
                let arr = if expr_reads_array(&arr.elem, slot) || expr_reads_array(&arr.len, slot) {
                    self.materialize(&arr, None)
                } else {
                    arr
                };
                let elem = expr::convert(arr.elem, arr.ty, ety);
                self.emit(Stmt::Fill {
                    dst: slot,
                    len: arr.len,
                    index: arr.index,
                    elem,
                    keep: None,
                });
                if let Some((var, cols)) = column_count {
                    self.emit(Stmt::Assign(var, cols));
                }
            }
            Value::Counter(_) | Value::MostCommon(_) => {
                return self.assign_counter(name, value, span)
            }
            other => {
                return Err(self
                    .err(
                        ErrorKind::Type,
                        span,
                        format!("cannot assign {} to a variable", other.describe()),
                    )
                    .hint("variables hold numbers or arrays"))
            }
        }
        Ok(())
    }

    /// Records whether `name` holds a 2-D array or a 1-D one: its reads know one shape (the
    /// column count kept with its storage), so a name holds 2-D arrays everywhere or nowhere.
    fn note_dimensions(&mut self, name: &str, value: &Value, span: Span) -> Result<()> {
        let two_d = match value {
            Value::Matrix(..) => true,
            Value::Array(_) | Value::List(..) => false,
            _ => return Ok(()),
        };
        match self.two_d_names.insert(name.to_string(), two_d) {
            Some(before) if before != two_d => Err(self
                .err(
                    ErrorKind::Type,
                    span,
                    format!(
                        "`{}` holds a {} array here but a {} one elsewhere",
                        rebind::display(name),
                        if two_d { "2-D" } else { "1-D" },
                        if two_d { "1-D" } else { "2-D" },
                    ),
                )
                .hint("use a different variable name for each")),
            _ => Ok(()),
        }
    }

    /// Records whether `name` holds a Python list, and of which kind: a name holds lists
    /// everywhere or arrays everywhere, since a read must know which it gets.
    fn note_list(&mut self, name: &str, value: &Value, span: Span) -> Result<()> {
        let kind = match value {
            Value::List(_, kind) => Some(*kind),
            Value::Array(_) | Value::Matrix(..) => None,
            _ => return Ok(()),
        };
        let array_before = matches!(self.hints.get(name), Some(NameTy::Array(_)));
        match (kind, self.list_hints.get(name).copied()) {
            (Some(k), Some(_)) => self.note_list_kind(name, k),
            (Some(k), None) if !array_before => self.note_list_kind(name, k),
            (None, None) => {}
            _ => {
                return Err(self
                    .err(
                        ErrorKind::Type,
                        span,
                        format!(
                            "`{}` holds a list here but an array elsewhere",
                            rebind::display(name)
                        ),
                    )
                    .hint("use a different variable name for each, or np.array(...) for both"))
            }
        }
        Ok(())
    }

    /// Refuses an operation for its operands' types, once those are settled: a pass that
    /// learns a wider type (a list's elements start as bools) is repeated, and what it refused
    /// may be fine. Lowering goes on with `placeholder`; [`lower`] raises the first refusal of
    /// the last pass.
    pub(crate) fn refuse_by_type<T>(&mut self, refusal: Error, placeholder: T) -> T {
        self.refusal.get_or_insert(refusal);
        placeholder
    }

    /// Records an `Unsupported` refusal with its hint, as [`Translator::refuse_by_type`] does.
    pub(crate) fn refuse_unsupported(&mut self, span: Span, message: String, hint: &str) {
        let refusal = self.err(ErrorKind::Unsupported, span, message).hint(hint);
        self.refuse_by_type(refusal, ());
    }

    /// Joins `kind` into what `name`'s list elements are known to be; a change means that earlier
    /// reads in this pass may have assumed less, so the pass is repeated.
    pub(crate) fn note_list_kind(&mut self, name: &str, kind: ElemKind) {
        let joined = match self.list_hints.get(name) {
            Some(old) => old.join(kind),
            None => kind,
        };
        if self.list_hints.get(name) != Some(&joined) {
            self.list_hints.insert(name.to_string(), joined);
            self.changed = true;
        }
    }

    /// Materialises an array into a fresh scratch slot (keeping elements where `keep` holds).
    pub(crate) fn materialize(&mut self, arr: &ArrayVal, keep: Option<Expr>) -> ArrayVal {
        let slot = self.new_array(ArrKind::Scratch { elem: arr.ty }, "%tmp");
        self.emit(Stmt::Fill {
            dst: slot,
            len: arr.len.clone(),
            index: arr.index,
            elem: arr.elem.clone(),
            keep,
        });
        self.view(slot)
    }

    // ---- statements -------------------------------------------------------------------------

    fn stmts(&mut self, stmts: &[ast::Stmt]) -> Result<()> {
        for s in stmts {
            self.stmt(s)?;
        }
        Ok(())
    }

    fn block_of(&mut self, stmts: &[ast::Stmt]) -> Result<Vec<Stmt>> {
        Ok(self.nested(|t| t.stmts(stmts))?.1)
    }

    fn stmt(&mut self, s: &ast::Stmt) -> Result<()> {
        crate::with_stack(|| self.stmt_inner(s))
    }

    fn stmt_inner(&mut self, s: &ast::Stmt) -> Result<()> {
        match &s.kind {
            StmtKind::Expr(e) => match &e.kind {
                ExprKind::Str(_) => {} // docstring
                ExprKind::Lambda(f) if f.name.is_some() => {
                    return Err(self
                        .err(
                            ErrorKind::Unsupported,
                            s.span,
                            "nested function definitions are not supported",
                        )
                        .hint("inline the helper's body into the filter"))
                }
                _ => match self.changed_list_call(e) {
                    Some((name, method)) => {
                        self.list_method(name, method, e)?;
                    }
                    None => {
                        if !self.array_sort_statement(e)? {
                            self.expr(e)?;
                        }
                    }
                },
            },
            StmtKind::Assign { targets, value } => {
                // Whether a name sorted in place holds an array or a list shows in the value.
                let sorted_target = self.sorted_target(targets);
                if !sorted_target {
                    self.refuse_list_alias(targets, value)?;
                }
                let v = match self.changed_list_call(value) {
                    // `m = values.pop()`: the one place besides a statement where a method that
                    // changes a list gives its value (see `list_methods.rs`).
                    Some((name, method @ ListMethod::Pop)) => {
                        self.list_method(name, method, value)?
                    }
                    _ => self.expr(value)?,
                };
                if sorted_target {
                    self.note_sorted_arrays(targets, &v);
                    self.refuse_list_alias(targets, value)?;
                }
                self.refuse_list_from_helper(value, &v)?;
                // Evaluate once when several targets (or a tuple) read the value again; a single
                // name is assigned the expression itself.
                let single_name =
                    targets.len() == 1 && matches!(targets[0].kind, ExprKind::Name(_));
                let v = if single_name { v } else { self.stabilize(v) };
                for t in targets {
                    self.assign(t, v.clone())?;
                }
            }
            StmtKind::AugAssign { target, op, value } => {
                let current = self.expr(target)?;
                let rhs = self.expr(value)?;
                let before = current.element_type();
                let v = self.binary(*op, current, rhs, s.span)?;
                if let ExprKind::Subscript(..) = target.kind {
                    self.same_kind_casting(before, &v, s.span);
                }
                self.assign(target, v)?;
            }
            StmtKind::If { test, body, orelse } => {
                let c = self.condition(test)?;
                let then = self.block_of(body)?;
                let els = self.block_of(orelse)?;
                self.emit(Stmt::If(c, then, els));
            }
            StmtKind::While { test, body, orelse } => {
                let broke = self.loop_flag(orelse);
                let (cond, cond_stmts) = self.nested(|t| t.condition(test))?;
                self.loops.push(LoopCtx { broke });
                let inner = self.block_of(body);
                self.loops.pop();
                let mut loop_body = cond_stmts;
                loop_body.push(Stmt::If(not(cond), vec![Stmt::Break], vec![]));
                loop_body.extend(inner?);
                self.emit(Stmt::Loop {
                    body: loop_body,
                    latch: vec![],
                });
                self.leave_if_returned();
                self.loop_else(broke, orelse)?;
            }
            StmtKind::For {
                target,
                iter,
                body,
                orelse,
            } => self.for_loop(target, iter, body, orelse, s.span)?,
            StmtKind::Return(value) => self.lower_return(value.as_ref(), s.span)?,
            StmtKind::Break | StmtKind::Continue => {
                let Some(ctx) = self.loops.last() else {
                    let what = if matches!(s.kind, StmtKind::Break) {
                        "break"
                    } else {
                        "continue"
                    };
                    return Err(self.err(
                        ErrorKind::Syntax,
                        s.span,
                        format!("'{what}' outside loop"),
                    ));
                };
                if matches!(s.kind, StmtKind::Break) {
                    if let Some(flag) = ctx.broke {
                        self.emit(Stmt::Assign(flag, Expr::Bool(true)));
                    }
                    self.emit(Stmt::Break);
                } else {
                    self.emit(Stmt::Continue);
                }
            }
            StmtKind::Pass => {}
            StmtKind::Import(names) => {
                for (m, a) in names {
                    self.import(m, a, s.span)?;
                }
            }
            StmtKind::Raise { exc } => self.lower_raise(exc.as_ref(), s.span)?,
            StmtKind::Assert { test, msg } => self.lower_assert(test, msg.as_ref(), s.span)?,
            StmtKind::Unsupported(what) => {
                return Err(self.err(
                    ErrorKind::Unsupported,
                    s.span,
                    format!("`{what}` is not supported"),
                ))
            }
        }
        Ok(())
    }

    /// `return value`, per signature: a number (filters, integrands), nothing (generic_filter1d
    /// writes its output line), or a tuple of input coordinates (transforms).
    fn lower_return(&mut self, value: Option<&ast::Expr>, span: Span) -> Result<()> {
        if self.inline.ret.is_some() {
            return self.helper_return(value, span);
        }
        match (self.func.sig, value) {
            (ir::Sig::Filter1d, None) => self.emit(Stmt::Succeed),
            (ir::Sig::Filter1d, Some(v)) => {
                return Err(self
                    .err(
                        ErrorKind::Type,
                        v.span,
                        "a generic_filter1d callback returns nothing",
                    )
                    .hint("write the result into the output line, e.g. `oline[...] = ...`"))
            }
            (_, None) => {
                return Err(self
                    .err(
                        ErrorKind::Type,
                        span,
                        "a filter must return a number, not None",
                    )
                    .hint("return np.nan to mark a missing value"))
            }
            (ir::Sig::Transform, Some(value)) => {
                let v = self.expr(value)?;
                let hint = "return a tuple of input coordinates, e.g. `return (c[0] - 0.5, c[1])`";
                // scipy reads the result with `PyTuple_GetItem`: a list or an array raises.
                if !self.makes_tuple(value, &self.program.function.body) {
                    let e = self.err(
                        ErrorKind::Type,
                        value.span,
                        "a geometric_transform mapping must return a tuple (scipy raises TypeError for a list or an array)",
                    );
                    return Err(e.hint(hint));
                }
                let coords = self.array_of(v, value.span).map_err(|e| e.hint(hint))?;
                let rank = self.slot_len(ir::OUTPUT);
                // Too few: scipy's `PyTuple_GetItem` fails and `PyFloat_AsDouble` raises
                // TypeError. Too many: scipy reads the first `rank`; refused here.
                let checks = [
                    (ir::CmpOp::Ge, Exception::TypeError, ""),
                    (
                        ir::CmpOp::Le,
                        Exception::ValueError,
                        " (scipy would ignore the extra ones)",
                    ),
                ];
                for (op, exception, more) in checks {
                    let fits = Expr::Cmp(op, coords.len.clone().boxed(), rank.clone().boxed());
                    let message = format!(
                        "the mapping returned {{a}} coordinates, but the input has rank {{b}}{more}"
                    );
                    let (a, b) = (coords.len.clone(), rank.clone());
                    self.check(fits, exception, &message, value.span, a, b);
                }
                let elem = expr::convert(coords.elem.clone(), coords.ty, Ty::F64);
                self.emit(Stmt::Fill {
                    dst: ir::OUTPUT,
                    len: coords.len,
                    index: coords.index,
                    elem,
                    keep: None,
                });
                self.emit(Stmt::Succeed);
            }
            (_, Some(value)) => {
                let v = self.expr(value)?;
                let e = self.scalar(v, value.span, "the return value")?;
                self.emit(Stmt::Return(expr::convert(e.0, e.1, Ty::F64)));
            }
        }
        Ok(())
    }

    /// Whether `e` is certainly a Python tuple (ndjit lowers lists and tuples alike): a tuple
    /// display, a `tuple(...)` call, the coordinates and slices of tuples, a choice of two, or a
    /// local name that `body` assigns only those.
    fn makes_tuple(&self, e: &ast::Expr, body: &[ast::Stmt]) -> bool {
        use ast::{ExprKind, StmtKind};
        fn assigned<'b>(name: &str, body: &'b [ast::Stmt], out: &mut Vec<&'b ast::Expr>) {
            for s in body {
                match &s.kind {
                    StmtKind::Assign { targets, value }
                        if targets
                            .iter()
                            .any(|t| matches!(&t.kind, ExprKind::Name(n) if n == name)) =>
                    {
                        out.push(value)
                    }
                    StmtKind::If { body, orelse, .. }
                    | StmtKind::While { body, orelse, .. }
                    | StmtKind::For { body, orelse, .. } => {
                        assigned(name, body, out);
                        assigned(name, orelse, out);
                    }
                    _ => {}
                }
            }
        }
        // scipy hands the mapping its coordinates as a tuple.
        let coordinates = &self.program.function.params[0].name;
        match &e.kind {
            ExprKind::Tuple(_) => true,
            ExprKind::Name(n) if n == coordinates => {
                let mut values = vec![];
                assigned(n, body, &mut values);
                values.is_empty()
            }
            // A slice of a tuple is a tuple.
            ExprKind::Subscript(base, index) if matches!(index.kind, ExprKind::Slice(..)) => {
                self.makes_tuple(base, body)
            }
            ExprKind::Call { func, .. } => self
                .callee_of(func)
                .is_some_and(|b| b.func == names::Func::TupleOf),
            ExprKind::IfExp {
                body: a, orelse: b, ..
            } => self.makes_tuple(a, body) && self.makes_tuple(b, body),
            // Not through other names (`r = s`), which could lead around in a circle.
            ExprKind::Name(n) if self.locals.contains(n) => {
                let mut values = vec![];
                assigned(n, body, &mut values);
                let direct = |v: &&ast::Expr| !matches!(v.kind, ExprKind::Name(_));
                !values.is_empty()
                    && values
                        .iter()
                        .all(|v| direct(v) && self.makes_tuple(v, body))
            }
            _ => false,
        }
    }

    /// Whether `e` is a transform's coordinates, or a slice of them: the tuple scipy passes,
    /// which ndjit holds as an array, so that Python's operators would tell them apart (`c + c`
    /// joins tuples, `c * 0.5` raises).
    pub(crate) fn is_coordinates(&self, e: &ast::Expr) -> bool {
        use ast::ExprKind;
        if self.func.sig != ir::Sig::Transform || self.inline.in_helper() {
            return false;
        }
        match &e.kind {
            ExprKind::Name(n) => *n == self.program.function.params[0].name,
            ExprKind::Subscript(base, index) => {
                matches!(index.kind, ExprKind::Slice(..)) && self.is_coordinates(base)
            }
            _ => false,
        }
    }

    /// The refusal of an operator applied to the coordinates tuple.
    pub(crate) fn coordinates_arithmetic(&self, span: Span) -> Error {
        self.err(
            ErrorKind::Unsupported,
            span,
            "the coordinates are a tuple, which Python's operators join or repeat (`c + c`) or refuse (`c * 0.5`)",
        )
        .hint("compute on their elements (`(c[0] - 0.5, c[1])`) or on `np.array(c)`")
    }

    /// `oline[...] = value`, `oline[:] = value`, `oline = ...`, `oline /= k`: writes the whole
    /// output line, whose length must match (NumPy broadcasts a number).
    fn assign_output(&mut self, value: Value, span: Span) -> Result<()> {
        let out_len = self.slot_len(ir::OUTPUT);
        let arr = match value {
            Value::Scalar(e, ty) => {
                let e = self.stable(e, ty);
                ArrayVal {
                    len: out_len.clone(),
                    ty,
                    index: self.temp(Ty::I64),
                    elem: e,
                }
            }
            Value::Matrix(a, cols) => {
                // NumPy drops leading axes of length 1 only: a (1, n) array fits, (n, 1) not.
                let rows = value::matrix_rows(a.len.clone(), cols.clone());
                let one_row = expr::cmp(ir::CmpOp::Le, rows.clone(), Expr::I64(1));
                let message = "could not broadcast input array of {a} rows and {b} columns into the output line";
                self.check(one_row, Exception::ValueError, message, span, rows, cols);
                a
            }
            v => self.array_of(v, span)?,
        };
        let arr = if arr.len != out_len {
            // NumPy's assignment broadcasts a length-1 array (read at 0) to the whole line.
            let len = self.stable(arr.len.clone(), Ty::I64);
            let fits = expr::bin(
                ir::BinOp::Or,
                expr::cmp(ir::CmpOp::Eq, len.clone(), out_len.clone()),
                expr::cmp(ir::CmpOp::Eq, len.clone(), Expr::I64(1)),
            );
            self.check(
                fits,
                Exception::ValueError,
                "could not broadcast input array from shape ({a},) into shape ({b},)",
                span,
                len.clone(),
                out_len.clone(),
            );
            let index = self.temp(Ty::I64);
            let at = expr::repeat_unless_full(&len, &out_len, Expr::Var(index));
            ArrayVal {
                elem: arr.at(at),
                len: out_len,
                ty: arr.ty,
                index,
            }
        } else {
            arr
        };
        // In place only when each element reads the output at its own index; otherwise copy first.
        let arr = if reads_array_elsewhere(&arr.elem, ir::OUTPUT, arr.index) {
            self.materialize(&arr, None)
        } else {
            arr
        };
        let elem = expr::convert(arr.elem, arr.ty, Ty::F64);
        self.emit(Stmt::Fill {
            dst: ir::OUTPUT,
            len: arr.len,
            index: arr.index,
            elem,
            keep: None,
        });
        Ok(())
    }

    /// For loops with an `else:` clause get a flag that `break` sets.
    fn loop_flag(&mut self, orelse: &[ast::Stmt]) -> Option<Var> {
        if orelse.is_empty() {
            return None;
        }
        let v = self.temp(Ty::Bool);
        self.emit(Stmt::Assign(v, Expr::Bool(false)));
        Some(v)
    }

    fn loop_else(&mut self, broke: Option<Var>, orelse: &[ast::Stmt]) -> Result<()> {
        if let Some(flag) = broke {
            let els = self.block_of(orelse)?;
            self.emit(Stmt::If(Expr::Var(flag), vec![], els));
        }
        Ok(())
    }

    /// Stores a scalar in a temporary unless it is already a constant or a variable, so that
    /// using it several times does not repeat work.
    pub(crate) fn stabilize(&mut self, v: Value) -> Value {
        match v {
            Value::Scalar(e, ty) => Value::Scalar(self.stable(e, ty), ty),
            Value::Tuple(items) => {
                Value::Tuple(items.into_iter().map(|i| self.stabilize(i)).collect())
            }
            other => other,
        }
    }

    /// `v` computed now, arrays included: numbers as [`Self::stabilize`] keeps them, arrays
    /// (flat or 2-D) and lists copied out of the slots a later assignment may rebind.
    pub(super) fn evaluated(&mut self, v: Value) -> Value {
        match v {
            Value::Array(a) => Value::Array(self.materialize(&a, None)),
            Value::Matrix(a, cols) => {
                let cols = self.stable(cols, Ty::I64);
                Value::Matrix(self.materialize(&a, None), cols)
            }
            Value::List(a, kind) => Value::List(self.materialize(&a, None), kind),
            Value::Tuple(items) => {
                Value::Tuple(items.into_iter().map(|i| self.evaluated(i)).collect())
            }
            v => self.stabilize(v),
        }
    }

    pub(crate) fn stable(&mut self, e: Expr, ty: Ty) -> Expr {
        if self.in_elementwise > 0 {
            return e; // pure, so repeating it is correct; the backends share common subexpressions
        }
        match e {
            Expr::F64(_) | Expr::I64(_) | Expr::Bool(_) | Expr::Param(_) | Expr::IntParam(_) => e,
            // The arguments' and bound arrays' lengths are fixed; a scratch slot may be filled
            // again, with another length, before the use (`for i in range(len(y)): y = y[1:]`):
            // its length is copied below.
            Expr::Len(a)
                if !matches!(self.func.arrays[a.0 as usize].kind, ArrKind::Scratch { .. }) =>
            {
                e
            }
            Expr::Var(v) if !self.func.vars[v.0 as usize].name.starts_with('%') => {
                // A user variable may be reassigned before the use: copy it (and its provenance,
                // which may be a shadow flag that is reassigned too).
                let p = self.prov(&e);
                let holds_int = self.int_flag(&e);
                let t = self.temp(ty);
                self.emit(Stmt::Assign(t, e));
                let p = match p {
                    provenance::Prov::Dyn(flag) => {
                        let f = self.temp(Ty::Bool);
                        self.emit(Stmt::Assign(f, flag));
                        provenance::Prov::Dyn(Expr::Var(f))
                    }
                    p => p,
                };
                self.var_prov.insert(t, p);
                self.keep_flag(t, holds_int);
                Expr::Var(t)
            }
            Expr::Var(_) => e,
            e => {
                let p = self.prov(&e);
                let holds_int = self.int_flag(&e);
                let t = self.temp(ty);
                self.emit(Stmt::Assign(t, e));
                // A flag known at run time is copied now: it may read a user variable's shadow,
                // reassigned before `t` is read (`r, s = 1.5, r + 0.0`).
                let p = match p {
                    provenance::Prov::Dyn(flag) => {
                        provenance::Prov::Dyn(self.stable(flag, Ty::Bool))
                    }
                    p => p,
                };
                if p != provenance::Prov::Np {
                    self.var_prov.insert(t, p);
                }
                self.keep_flag(t, holds_int);
                Expr::Var(t)
            }
        }
    }

    /// Assigns to a target: a name, a tuple of targets, or an element of a local array.
    fn assign(&mut self, target: &ast::Expr, value: Value) -> Result<()> {
        match &target.kind {
            ExprKind::Name(n) => self.assign_name(n, value, target.span),
            ExprKind::Tuple(ts) | ExprKind::List(ts) => {
                let items = match value {
                    Value::Tuple(items) => items,
                    Value::Array(a) => {
                        // `a, b = arr` unpacks a short array: its length must match.
                        let n = ts.len() as i64;
                        self.check(
                            Expr::Cmp(ir::CmpOp::Eq, a.len.clone().boxed(), Expr::I64(n).boxed()),
                            Exception::ValueError,
                            "cannot unpack an array of {a} values into {b} names",
                            target.span,
                            a.len.clone(),
                            Expr::I64(n),
                        );
                        (0..n)
                            .map(|i| Value::Scalar(self.element(&a, Expr::I64(i)), a.ty))
                            .collect()
                    }
                    other => {
                        return Err(self.err(
                            ErrorKind::Type,
                            target.span,
                            format!("cannot unpack {}", other.describe()),
                        ))
                    }
                };
                if items.len() != ts.len() {
                    return Err(self.err(
                        ErrorKind::Type,
                        target.span,
                        format!(
                            "cannot unpack {} values into {} names",
                            items.len(),
                            ts.len()
                        ),
                    ));
                }
                // Python evaluates the whole right side before assigning: `a, b = b, a` swaps,
                // arrays too (a view of `b` would read it after `a = b` rebound it). An array
                // written in place is another matter: a NumPy view taken on the right sees the
                // earlier targets' writes (`x[:3], x[3:6] = x[3:6], x[:3]`) and a copy does not,
                // which the values here do not tell apart: refused.
                if items.iter().any(holds_arrays) && ts.iter().any(writes_in_place) {
                    return Err(self
                        .err(
                            ErrorKind::Unsupported,
                            target.span,
                            "a tuple assignment that writes into an array and assigns arrays: \
                             NumPy's views on the right see the earlier targets' writes, copies do not",
                        )
                        .hint("assign one target per statement, copying first what must keep its old values"));
                }
                let items: Vec<Value> = items.into_iter().map(|v| self.evaluated(v)).collect();
                for (t, v) in ts.iter().zip(items) {
                    self.assign(t, v)?;
                }
                Ok(())
            }
            ExprKind::Subscript(base, index) => {
                self.assign_element(base, index, value, target.span)
            }
            ExprKind::Attribute(..) => Err(self
                .err(
                    ErrorKind::Unsupported,
                    target.span,
                    "assigning to attributes is not supported",
                )
                .hint("use a local variable")),
            _ => Err(self.err(
                ErrorKind::Syntax,
                target.span,
                "cannot assign to this expression",
            )),
        }
    }

    /// `arr[i] = v` for a local (scratch) array or the output line.
    fn assign_element(
        &mut self,
        base: &ast::Expr,
        index: &ast::Expr,
        value: Value,
        span: Span,
    ) -> Result<()> {
        let ExprKind::Name(name) = &base.kind else {
            return Err(self.err(
                ErrorKind::Unsupported,
                span,
                "only elements of local arrays can be assigned",
            ));
        };
        self.check_bound(name, base.span);
        let is_output = Some(name.as_str()) == self.output_name.as_deref();
        if is_output
            && matches!(
                &index.kind,
                ExprKind::Ellipsis | ExprKind::Slice(None, None, None)
            )
        {
            return self.assign_output(value, span);
        }
        if self.list_hints.contains_key(name.as_str()) {
            // A list element takes the value as it is (its own type and kind), where the
            // list's storage would convert it.
            return Err(self
                .err(
                    ErrorKind::Unsupported,
                    span,
                    "assigning into a list is not supported",
                )
                .hint("build an array instead, e.g. `a = np.array([...])`, and assign into it"));
        }
        let local = if is_output {
            Some(Local::Array(ir::OUTPUT, Ty::F64))
        } else {
            self.declared.get(name).copied()
        };
        let Some(Local::Array(slot, ety)) = local else {
            if let Some(Value::Counter(_) | Value::MostCommon(_)) = self.fixed_values.get(name) {
                let what = "changing a Counter or its list of pairs (`c[v] = n`)";
                return Err(builtins::collections::refused(self, span, what));
            }
            let sequence = matches!(
                self.names.get(name.as_str()),
                Some(Value::Tuple(_) | Value::List(..))
            ) || self.fixed_values.contains_key(name.as_str());
            if sequence {
                return Err(self
                    .err(ErrorKind::Unsupported, span, "assigning into a list or tuple is not supported")
                    .hint("build an array instead, e.g. `c = np.zeros(4)` or `c = np.array([...])`, and assign into it"));
            }
            return Err(self
                .err(
                    ErrorKind::Unsupported,
                    base.span,
                    format!("`{name}` is read-only in a filter"),
                )
                .hint("copy it first, e.g. `y = x * 1.0`, then assign elements of the copy"));
        };
        if let Some(cols) = self.matrix_cols.get(&slot).map(|v| Expr::Var(*v)) {
            // Stored flat: a 1-D index or slice would write the wrong elements.
            return self.assign_matrix_element(slot, ety, cols, index, value, span);
        }
        if let ExprKind::Slice(lo, hi, step) = &index.kind {
            if is_output {
                return Err(self
                    .err(
                        ErrorKind::Unsupported,
                        index.span,
                        "assigning to a slice of the output line is not supported",
                    )
                    .hint("assign the whole line with [...] or loop over the elements"));
            }
            let (lo, hi, step) = (lo.as_deref(), hi.as_deref(), step.as_deref());
            return self.assign_slice(slot, ety, (lo, hi, step), value, span);
        }
        let iv = match self.expr(index)? {
            // `a[[0, 2]] = v`: a list of ints is an index array, a list of bools a mask.
            Value::Tuple(items) if matches!(index.kind, ExprKind::List(_)) => {
                Value::Array(self.array_of(Value::Tuple(items), index.span)?)
            }
            Value::List(arr, _) => Value::Array(arr),
            iv => iv,
        };
        if let Value::Array(idx) = iv {
            if is_output {
                return Err(self
                    .err(
                        ErrorKind::Unsupported,
                        index.span,
                        "assigning through a mask or an index array into the output line is not supported",
                    )
                    .hint("assign the whole line with [...] or loop over the elements"));
            }
            return match idx.ty {
                Ty::Bool => self.assign_masked(slot, ety, idx, value, span),
                Ty::I64 => self.assign_fancy(slot, ety, idx, value, span),
                Ty::F64 => Err(self
                    .err(
                        ErrorKind::Type,
                        index.span,
                        "arrays used as indices must be of integer (or boolean) type",
                    )
                    .hint("use .astype(int)")),
            };
        }
        let (i, ity) = self.scalar(iv, index.span, "an index")?;
        if ity != Ty::I64 {
            return Err(bad_scalar_index(self, ity, index.span));
        }
        let len = self.slot_len(slot);
        let i = self.checked_index(i, len, index.span);
        let (v, vty) = self.scalar(value, span, "an array element")?;
        let v = self.store_value(v, vty, ety, span);
        self.emit(Stmt::Store(slot, i, v));
        Ok(())
    }

    /// Normalises a possibly negative index and checks it against `len`; returns the checked index.
    pub(crate) fn checked_index(&mut self, i: Expr, len: Expr, span: Span) -> Expr {
        self.checked_index_with(
            i,
            len,
            span,
            "index {a} is out of bounds for axis 0 with size {b}",
        )
    }

    /// [`Translator::checked_index`] failing with IndexError and `message`.
    pub(crate) fn checked_index_with(
        &mut self,
        i: Expr,
        len: Expr,
        span: Span,
        message: &str,
    ) -> Expr {
        use ir::{BinOp, CmpOp};
        let i = self.stable(
            expr::convert(i.clone(), Ty::Bool.max(Ty::I64), Ty::I64),
            Ty::I64,
        );
        let idx = match i {
            Expr::I64(v) if v >= 0 => Expr::I64(v),
            _ => Expr::Select(
                Expr::Cmp(CmpOp::Lt, i.clone().boxed(), Expr::I64(0).boxed()).boxed(),
                Expr::Binary(BinOp::Add, i.clone().boxed(), len.clone().boxed()).boxed(),
                i.clone().boxed(),
            ),
        };
        let idx = self.stable(idx, Ty::I64);
        let ok = Expr::Binary(
            BinOp::And,
            Expr::Cmp(CmpOp::Ge, idx.clone().boxed(), Expr::I64(0).boxed()).boxed(),
            Expr::Cmp(CmpOp::Lt, idx.clone().boxed(), len.clone().boxed()).boxed(),
        );
        self.check(ok, Exception::IndexError, message, span, i, len);
        idx
    }

    fn for_loop(
        &mut self,
        target: &ast::Expr,
        iter: &ast::Expr,
        body: &[ast::Stmt],
        orelse: &[ast::Stmt],
        _span: Span,
    ) -> Result<()> {
        let changed = rebind::changed_lists(body);
        for n in rebind::iterated_names(iter) {
            if self.changed_lists.contains(n) && changed.contains(n) {
                return Err(self
                    .err(
                        ErrorKind::Unsupported,
                        iter.span,
                        format!(
                            "the loop changes `{}` while it iterates over it",
                            rebind::display(n)
                        ),
                    )
                    .hint("iterate over a copy, `for v in list(values):`, or use a while loop"));
            }
        }
        let broke = self.loop_flag(orelse);
        self.iterate(target, iter, body, None, |t| {
            t.loops.push(LoopCtx { broke });
            let r = t.stmts(body);
            t.loops.pop();
            r
        })?;
        self.leave_if_returned();
        self.loop_else(broke, orelse)
    }

    /// The loop `for target in iter:` with `body` lowered after the item is bound: `range(...)`
    /// counts directly, everything else is iterated by index. `assigned` is the Python body,
    /// whose assignments may require the iterable to be copied first. `prepare`, when given, is
    /// called with the number of iterations before the loop starts.
    #[allow(clippy::type_complexity)]
    pub(super) fn iterate(
        &mut self,
        target: &ast::Expr,
        iter: &ast::Expr,
        assigned: &[ast::Stmt],
        prepare: Option<&mut dyn FnMut(&mut Self, Expr) -> Result<()>>,
        body: impl FnOnce(&mut Self) -> Result<()>,
    ) -> Result<()> {
        type Item = Box<dyn Fn(&mut Translator, Expr) -> Value>;
        let (start, stop, step, item): (Expr, Expr, Expr, Item) = match self.range_args(iter)? {
            Some((a, b, s)) => (a, b, s, Box::new(|_, i| Value::Scalar(i, Ty::I64))),
            None => {
                let seq = self.iterable(iter, assigned)?;
                let len = self.stable(seq.len(), Ty::I64);
                (
                    Expr::I64(0),
                    len,
                    Expr::I64(1),
                    Box::new(move |t, i| seq.item(t, i)),
                )
            }
        };
        let start = self.stable(start, Ty::I64);
        let stop = self.stable(stop, Ty::I64);
        if let Some(prepare) = prepare {
            let Expr::I64(step) = step else {
                return Err(self
                    .err(
                        ErrorKind::Unsupported,
                        iter.span,
                        "a comprehension over a range() whose step is computed",
                    )
                    .hint("build the list with a for loop and .append(v)"));
            };
            let trips = self.range_trips(&start, &stop, step, iter.span);
            prepare(self, trips)?;
        }
        let counter = self.temp(Ty::I64);
        self.emit(Stmt::Assign(counter, start));
        self.var_prov.insert(counter, provenance::Prov::Py);
        let more = self.range_continues(&Expr::Var(counter), &stop, &step);
        let (_, mut loop_body) = self.nested(|t| {
            t.emit(Stmt::If(not(more), vec![Stmt::Break], vec![]));
            let v = item(t, Expr::Var(counter));
            t.assign(target, v)?;
            body(t)
        })?;
        let next = self.range_next(&Expr::Var(counter), &stop, &step);
        let latch = vec![Stmt::Assign(counter, next)];
        self.emit(Stmt::Loop {
            body: std::mem::take(&mut loop_body),
            latch,
        });
        Ok(())
    }
}

const SITE_BAD_ARGS_MSG: &str =
    "invalid arguments: NULL buffer or return_value, or negative filter_size ({a})";

pub(crate) fn not(e: Expr) -> Expr {
    Expr::Unary(ir::UnOp::Not, e.boxed())
}

/// The error for a float or bool used as an array index: NumPy refuses a float, and a bool
/// is not an integer there (`x[True]` adds an axis and selects the whole array).
pub(crate) fn bad_scalar_index(t: &Translator, ty: Ty, span: Span) -> Error {
    match ty {
        Ty::Bool => t
            .err(
                ErrorKind::Unsupported,
                span,
                "indexing an array with a bool (NumPy then adds an axis: x[True] is the whole array)",
            )
            .hint("index with an int, int(cond), or select with a mask array"),
        _ => t
            .err(
                ErrorKind::Type,
                span,
                "array indices must be integers, not float",
            )
            .hint("use // for integer division, or int(...)"),
    }
}

/// Whether `e` reads array `a` at any index other than `index` (so writing `a[index]` while
/// evaluating `e` element by element would change what later elements read).
fn reads_array_elsewhere(e: &Expr, a: Arr, index: Var) -> bool {
    match e {
        Expr::Load(b, i) if *b == a => {
            **i != Expr::Var(index) || reads_array_elsewhere(i, a, index)
        }
        _ => {
            let mut found = false;
            e.for_each_child(|c| found |= reads_array_elsewhere(c, a, index));
            found
        }
    }
}

/// Whether an expression loads from array `a`.
fn expr_reads_array(e: &Expr, a: Arr) -> bool {
    match e {
        Expr::Load(b, _) | Expr::Len(b) if *b == a => true,
        _ => {
            let mut found = false;
            e.for_each_child(|c| found |= expr_reads_array(c, a));
            found
        }
    }
}

/// The names an assignment target binds (`a`, `a, (b, c)`; none for `a[i]`).
fn target_names(e: &ast::Expr, out: &mut impl Extend<String>) {
    match &e.kind {
        ExprKind::Name(n) => out.extend([n.clone()]),
        ExprKind::Tuple(items) | ExprKind::List(items) => {
            items.iter().for_each(|i| target_names(i, out))
        }
        _ => {}
    }
}

/// Python's rule: a name assigned anywhere in the function body is local to it.
fn collect_locals(stmts: &[ast::Stmt], out: &mut HashSet<String>) {
    let targets = |e: &ast::Expr, out: &mut HashSet<String>| target_names(e, out);
    for s in stmts {
        match &s.kind {
            StmtKind::Assign { targets: ts, .. } => ts.iter().for_each(|t| targets(t, out)),
            StmtKind::AugAssign { target, .. } => targets(target, out),
            StmtKind::For {
                target,
                body,
                orelse,
                ..
            } => {
                targets(target, out);
                collect_locals(body, out);
                collect_locals(orelse, out);
            }
            StmtKind::If { body, orelse, .. } | StmtKind::While { body, orelse, .. } => {
                collect_locals(body, out);
                collect_locals(orelse, out);
            }
            StmtKind::Import(names) => names.iter().for_each(|(_, a)| {
                out.remove(a);
            }),
            _ => {}
        }
    }
}

/// Whether assigning to `target` writes into an array (`x[i] = v`, in a tuple or not) rather
/// than binding names.
fn writes_in_place(target: &ast::Expr) -> bool {
    match &target.kind {
        ExprKind::Subscript(..) => true,
        ExprKind::Tuple(ts) | ExprKind::List(ts) => ts.iter().any(writes_in_place),
        _ => false,
    }
}

/// Whether `v` is an array (flat or 2-D) or a list, or a tuple holding one.
fn holds_arrays(v: &Value) -> bool {
    match v {
        Value::Array(_) | Value::Matrix(..) | Value::List(..) => true,
        Value::Tuple(items) => items.iter().any(holds_arrays),
        _ => false,
    }
}

/// What a `for` loop iterates: item `i` of one sequence, or of several at once.
pub(crate) enum Iterable {
    Seq(Seq),
    Enumerate(Seq, Expr),
    Zip(Vec<Seq>, Expr),
}

/// A sequence iterated by index: its elements, and what kind of number each item is.
pub(crate) struct Seq {
    pub arr: ArrayVal,
    pub kinds: ItemKinds,
}

pub(crate) enum ItemKinds {
    /// An array's elements (a transform's coordinates stay Python ints, see `element`).
    NumPy,
    /// A list of Python numbers.
    Python,
    /// A tuple: item `k` has the kind of the tuple's `k`-th number.
    PerItem(Vec<provenance::Prov>),
}

impl Seq {
    fn item(&self, t: &mut Translator, i: Expr) -> Value {
        let a = &self.arr;
        let e = match &self.kinds {
            ItemKinds::NumPy => t.element(a, i),
            ItemKinds::Python => t.list_item(a, ElemKind::Python, i),
            ItemKinds::PerItem(provs) => {
                let p = provenance::Prov::at(provs, &i);
                t.with_prov(a.at(i), a.ty, p)
            }
        };
        Value::Scalar(e, a.ty)
    }
}

impl Iterable {
    fn len(&self) -> Expr {
        match self {
            Iterable::Seq(s) | Iterable::Enumerate(s, _) => s.arr.len.clone(),
            Iterable::Zip(_, len) => len.clone(),
        }
    }
    /// Item `i`: the sequence's, with `enumerate`'s counter (a Python int) first.
    fn item(&self, t: &mut Translator, i: Expr) -> Value {
        match self {
            Iterable::Seq(s) => s.item(t, i),
            Iterable::Enumerate(s, start) => Value::Tuple(vec![
                Value::Scalar(
                    Expr::Binary(ir::BinOp::Add, start.clone().boxed(), i.clone().boxed()),
                    Ty::I64,
                ),
                s.item(t, i),
            ]),
            Iterable::Zip(seqs, _) => {
                Value::Tuple(seqs.iter().map(|s| s.item(t, i.clone())).collect())
            }
        }
    }
}

/// What to write instead of a Python builtin ndjit does not lower (a name it would otherwise
/// report as undefined, with advice to bind it that cannot apply).
fn unsupported_builtin(name: &str) -> Option<&'static str> {
    Some(match name {
        "print" => {
            "remove the print call; use Filter::interpret or ndjit's debug mode to inspect values"
        }
        "dict" => {
            "count values with `np.unique(x, return_counts=True)`, or index an array by int keys"
        }
        "reversed" => "slice backwards: `x[::-1]`",
        "map" | "filter" => "write a list comprehension: `[f(v) for v in x if ...]`",
        "iter" | "next" => "index the values, or loop over them with `for`",
        "isinstance" | "type" | "callable" | "hasattr" | "getattr" | "setattr" | "id" | "hash" => {
            "a filter's values are numbers and arrays of known types: test the value itself"
        }
        "str" | "repr" | "format" | "chr" | "ord" | "bytes" | "input" | "open" => {
            "filters compute with numbers and arrays only"
        }
        "complex" => "filters compute with real numbers only",
        "hex" | "oct" | "bin" | "ascii" | "bytearray" | "memoryview" => {
            "filters compute with numbers and arrays only"
        }
        "exec" | "eval" | "compile" | "globals" | "locals" | "vars" | "dir" | "super"
        | "object" | "property" | "staticmethod" | "classmethod" | "issubclass" | "delattr"
        | "breakpoint" | "help" | "__import__" | "aiter" | "anext" => {
            "a filter computes with its values only: write the computation itself"
        }
        "slice" => "write the slice itself: `x[a:b:c]`",
        _ => return None,
    })
}
