//! The public face of the core: compile filter source once, call it many times.

use crate::bind::{Bindings, BoundValues, Layout, Slot, Value};
use crate::error::{snippet, Error, ErrorKind, Result, RuntimeError, Span};
use crate::ir::{self, Func, Sig};
use crate::jit::{self, FilterFn, JitCode, JitOptions};
use crate::runtime::{ArrayRef, RawContext};
use std::ffi::c_void;
use std::sync::Arc;

/// A compiled filter: native code for
/// `int f(double *buffer, intptr_t filter_size, double *return_value, void *user_data)` plus the
/// bound values it reads.
///
/// Cloning is cheap and shares the code. A `Filter` is `Send + Sync`; its callback may be called
/// from many threads at once.
///
/// ```
/// use ndjit::{Bindings, Filter};
/// let f = Filter::compile("max(x) - min(x)", &Bindings::new())?;
/// assert_eq!(f.call(&[3.0, 1.0, 2.0])?, 2.0);
///
/// let mut b = Bindings::new();
/// b.set_float("t", 0.5);
/// let above = Filter::compile("def f(v):\n    return np.count_nonzero(v > t)", &b)?;
/// assert_eq!(above.call(&[0.1, 0.7, 0.9])?, 2.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Filter {
    compiled: Arc<Compiled>,
    ctx: Arc<Context>,
}

struct Compiled {
    source: Arc<str>,
    /// The IR as lowered, before any optimisation: what [`Filter::specialize`] and
    /// [`Filter::baked_ir`] start from (specialising never re-parses or re-lowers).
    lowered: Func,
    general: Func,
    specialized: Option<Func>,
    layout: Layout,
    jit: JitCode,
    /// Whether [`FilterBuilder::inspect`] was set (kept for the specialised versions).
    inspect: bool,
}

/// The bound values a call reads, behind the [`RawContext`] that `user_data` points at.
struct Context {
    raw: RawContext,
    _bound: BoundValues,
    _refs: Box<[ArrayRef]>,
    values: Vec<(String, Value)>,
}

// SAFETY: the raw pointers (in `raw` and `_refs`) point into the heap buffers owned by the same
// context, which are never mutated after construction; the mutable state is atomics and a mutex.
unsafe impl Send for Context {}
unsafe impl Sync for Context {}

impl Context {
    fn new(layout: &Layout, values: Vec<(String, Value)>) -> Context {
        let bound = BoundValues::new(layout, &values);
        let refs: Box<[ArrayRef]> = bound
            .arrays
            .iter()
            .map(|a| ArrayRef {
                ptr: a.as_ptr(),
                len: a.len() as i64,
            })
            .collect();
        // The vectors' heap buffers do not move when `bound` moves into the context.
        let raw = RawContext::new(bound.floats.as_ptr(), bound.ints.as_ptr(), refs.as_ptr());
        Context {
            raw,
            _bound: bound,
            _refs: refs,
            values,
        }
    }

    /// A fresh context over the same (immutable) values, for one call.
    pub(crate) fn scratch_raw(&self) -> RawContext {
        RawContext::new(self.raw.scalars, self.raw.ints, self.raw.arrays)
    }
}

/// Options for [`Filter::builder`].
pub struct FilterBuilder {
    source: String,
    bindings: Bindings,
    imports: Vec<(String, String)>,
    filter_size: Option<usize>,
    sig: Sig,
    inspect: bool,
}

impl FilterBuilder {
    /// The bound values (copied).
    pub fn bindings(mut self, b: &Bindings) -> Self {
        self.bindings = b.clone();
        self
    }
    /// Also compile a version specialised to this `filter_size` (straight-line code, constant
    /// indices folded); calls with another size use the general version.
    ///
    /// ```
    /// let f = ndjit::Filter::builder("x[len(x) // 2] - np.mean(x)").filter_size(9).compile()?;
    /// assert_eq!(f.filter_size(), Some(9));
    /// assert_eq!(f.call(&[0.0, 0.0, 0.0, 0.0, 9.0, 0.0, 0.0, 0.0, 0.0])?, 8.0);
    /// assert_eq!(f.call(&[1.0, 2.0, 3.0])?, 0.0); // any other size still works
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn filter_size(mut self, n: usize) -> Self {
        self.filter_size = Some(n);
        self
    }
    /// The scipy API the function is for (default: `generic_filter`). See [`Sig`] for each C ABI.
    pub fn signature(mut self, sig: Sig) -> Self {
        self.sig = sig;
        self
    }
    /// Makes `alias` name `module` (`"numpy"`, `"math"`, or a function such as `"numpy.median"`), as
    /// `import numpy as alias` would: how names a Python callback reads from its module arrive.
    pub fn import(mut self, module: &str, alias: &str) -> Self {
        self.imports.push((module.to_string(), alias.to_string()));
        self
    }
    /// Keep the Cranelift IR and disassembly text for [`Filter::clif_text`] / [`Filter::disasm`].
    pub fn inspect(mut self, yes: bool) -> Self {
        self.inspect = yes;
        self
    }
    /// Parse → check and lower → optimise → generate code, each step one call.
    pub fn compile(self) -> Result<Filter> {
        let source: Arc<str> = self.source.into();
        let attach = |e: Error| e.with_source(&source);
        let mut program = crate::syntax::parse(&source).map_err(attach)?;
        program.imports.extend(self.imports);
        let lowered = crate::lower::lower(&program, &self.bindings, self.sig).map_err(attach)?;
        let general = ir::optimize(lowered.func.clone(), ir::optimize::ALL);
        // Only generic_filter calls have one size per footprint worth specialising for.
        let specialized = match self.filter_size {
            Some(n) if self.sig == Sig::Filter => Some(specialized(&lowered.func, n)),
            _ => None,
        };
        let jit = jit::compile(&general, specialized.as_ref(), &jit_options(self.inspect))
            .map_err(attach)?;
        let values = bound_values(&program, &self.bindings, &lowered.layout);
        let compiled = Compiled {
            source,
            lowered: lowered.func,
            general,
            specialized,
            layout: lowered.layout,
            jit,
            inspect: self.inspect,
        };
        Ok(Filter::new(compiled, values))
    }
}

/// Keep the Cranelift IR and disassembly text when inspecting.
fn jit_options(inspect: bool) -> JitOptions {
    JitOptions {
        clif_text: inspect,
        disasm: inspect,
    }
}

/// The lowered IR specialised to `filter_size = n`, then optimised.
fn specialized(lowered: &Func, n: usize) -> Func {
    let known = ir::Known {
        filter_size: Some(n),
        bound: None,
    };
    ir::optimize(ir::substitute(lowered.clone(), known), ir::optimize::ALL)
}

/// The value of each name of the layout: the binding, else the parameter's default.
fn bound_values(
    program: &crate::syntax::Program,
    bindings: &Bindings,
    layout: &Layout,
) -> Vec<(String, Value)> {
    layout
        .entries
        .iter()
        .map(|(name, _)| {
            let value = bindings.get(name).cloned();
            (
                name.clone(),
                value.unwrap_or_else(|| default_of(program, name)),
            )
        })
        // Strings have no slot: kept so that rebinding one can be refused (they are folded).
        .chain(
            bindings
                .iter()
                .filter(|(_, v)| matches!(v, Value::Str(_)))
                .map(|(n, v)| (n.to_string(), v.clone())),
        )
        .collect()
}

/// The default value of a parameter (the lowering has already checked it is a constant).
fn default_of(program: &crate::syntax::Program, name: &str) -> Value {
    use crate::syntax::ast::{ExprKind, UnaryOp};
    let p = program.function.params.iter().find(|p| p.name == name);
    let num = |e: &crate::syntax::ast::Expr| match &e.kind {
        ExprKind::Int(v) => Some(*v as f64),
        ExprKind::Float(v) => Some(*v),
        ExprKind::Unary(UnaryOp::Neg, i) => match i.kind {
            ExprKind::Int(v) => Some(-(v as f64)),
            ExprKind::Float(v) => Some(-v),
            _ => None,
        },
        _ => None,
    };
    match p.and_then(|p| p.default.as_ref()) {
        Some(d) => match &d.kind {
            ExprKind::Int(v) => Value::Int(*v),
            ExprKind::Bool(v) => Value::Int(*v as i64),
            ExprKind::Unary(UnaryOp::Neg, i) if matches!(i.kind, ExprKind::Int(_)) => {
                Value::Int(-(num(i).unwrap() as i64))
            }
            ExprKind::Tuple(items) | ExprKind::List(items) => {
                Value::Array(items.iter().filter_map(num).collect())
            }
            _ => Value::Float(num(d).unwrap_or(0.0)),
        },
        None => Value::Float(0.0),
    }
}

impl Filter {
    fn new(compiled: Compiled, values: Vec<(String, Value)>) -> Filter {
        let ctx = Arc::new(Context::new(&compiled.layout, values));
        Filter {
            compiled: Arc::new(compiled),
            ctx,
        }
    }

    /// Compiles filter source: an expression over `x` (`"max(x) - min(x)"`), a `lambda`, or a
    /// `def` whose first parameter is the neighbourhood. Names the source reads that are not
    /// locals, parameters with defaults, `np`/`math` or builtins must be in `bindings`.
    pub fn compile(source: &str, bindings: &Bindings) -> Result<Filter> {
        Filter::builder(source).bindings(bindings).compile()
    }

    /// A builder for the less common options (specialisation, introspection).
    pub fn builder(source: &str) -> FilterBuilder {
        FilterBuilder {
            source: source.to_string(),
            bindings: Bindings::new(),
            imports: Vec::new(),
            filter_size: None,
            sig: Sig::Filter,
            inspect: false,
        }
    }

    /// The scipy API (C signature) the filter was compiled for.
    pub fn signature(&self) -> Sig {
        self.compiled.general.sig
    }

    /// The address of the compiled entry function, whose C type is given by [`Filter::signature`]
    /// (for [`Sig::Filter`] this is [`Filter::callback`]).
    pub fn entry_address(&self) -> *const c_void {
        self.compiled.jit.address()
    }

    /// Runs the compiled code with the arguments of any signature: `Ok(Some(v))` for a filter or
    /// integrand, `Ok(None)` for generic_filter1d and transforms (the result is in `args.output`).
    pub fn call_args(
        &self,
        args: crate::interp::Args<'_>,
    ) -> std::result::Result<Option<f64>, RuntimeError> {
        let raw = self.ctx.scratch_raw();
        let ud = &raw as *const RawContext as *mut c_void;
        let addr = self.entry_address();
        let (values, coords, output) = (args.values, args.coords, args.output);
        let as_i32 = |n: usize| i32::try_from(n).unwrap_or(i32::MAX);
        // SAFETY: the entry has the C type of its signature; the slices are valid for the call and
        // the compiled code writes only `output` (and, for a filter, the return slot).
        let (ok, value) = unsafe {
            match self.signature() {
                Sig::Filter => {
                    let mut out = 0.0;
                    let ok = (self.compiled.jit.entry())(
                        values.as_ptr() as *mut f64,
                        values.len() as isize,
                        &mut out,
                        ud,
                    );
                    (ok == 1, Some(out))
                }
                Sig::Filter1d => {
                    let f: unsafe extern "C" fn(
                        *mut f64,
                        isize,
                        *mut f64,
                        isize,
                        *mut c_void,
                    ) -> i32 = std::mem::transmute(addr);
                    (
                        f(
                            values.as_ptr() as *mut f64,
                            values.len() as isize,
                            output.as_mut_ptr(),
                            output.len() as isize,
                            ud,
                        ) == 1,
                        None,
                    )
                }
                Sig::Transform => {
                    let f: unsafe extern "C" fn(*mut i64, *mut f64, i32, i32, *mut c_void) -> i32 =
                        std::mem::transmute(addr);
                    (
                        f(
                            coords.as_ptr() as *mut i64,
                            output.as_mut_ptr(),
                            as_i32(coords.len()),
                            as_i32(output.len()),
                            ud,
                        ) == 1,
                        None,
                    )
                }
                Sig::Integrand => {
                    let f: unsafe extern "C" fn(i32, *mut f64, *mut c_void) -> f64 =
                        std::mem::transmute(addr);
                    let v = f(as_i32(values.len()), values.as_ptr() as *mut f64, ud);
                    (raw.failure().is_none(), Some(v))
                }
            }
        };
        if ok {
            Ok(value)
        } else {
            Err(self.runtime_error(&raw))
        }
    }

    /// [`Filter::call_args`] through the reference interpreter.
    pub fn interpret_args(
        &self,
        args: crate::interp::Args<'_>,
    ) -> std::result::Result<Option<f64>, RuntimeError> {
        let raw = self.ctx.scratch_raw();
        let func = self.ir_for(args.values.len());
        crate::interp::run_args(func, &raw, args).map_err(|_| self.runtime_error(&raw))
    }

    /// Runs the compiled code on one neighbourhood (or, for an integrand, on quad's `xx`).
    ///
    /// ```
    /// let f = ndjit::Filter::compile("x[4]", &ndjit::Bindings::new())?;
    /// let err = f.call(&[1.0, 2.0]).unwrap_err();
    /// assert_eq!(err.message, "index 4 is out of bounds for axis 0 with size 2");
    /// assert_eq!(err.exception, ndjit::Exception::IndexError);
    /// # Ok::<(), ndjit::Error>(())
    /// ```
    pub fn call(&self, buffer: &[f64]) -> std::result::Result<f64, RuntimeError> {
        if self.signature() != Sig::Filter {
            let v = self.call_args(crate::interp::Args {
                values: buffer,
                coords: &[],
                output: &mut [],
            })?;
            return Ok(v.unwrap_or(f64::NAN));
        }
        let raw = self.ctx.scratch_raw();
        let mut out = 0.0;
        // SAFETY: the pointers are valid for the call; compiled code never writes to the buffer
        // (the IR has no stores to it), so handing out a `*mut` to shared data is sound.
        let ok = unsafe {
            (self.compiled.jit.entry())(
                buffer.as_ptr() as *mut f64,
                buffer.len() as isize,
                &mut out,
                &raw as *const RawContext as *mut c_void,
            )
        };
        if ok == 1 {
            Ok(out)
        } else {
            Err(self.runtime_error(&raw))
        }
    }

    /// Runs the reference interpreter on one neighbourhood: the same result as [`Filter::call`],
    /// bit for bit, computed by walking the IR (for debugging and testing).
    ///
    /// ```
    /// let f = ndjit::Filter::compile("np.std(x, ddof=1)", &ndjit::Bindings::new())?;
    /// let v = [0.1, 0.7, 0.2];
    /// assert_eq!(f.interpret(&v)?.to_bits(), f.call(&v)?.to_bits());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn interpret(&self, buffer: &[f64]) -> std::result::Result<f64, RuntimeError> {
        let raw = self.ctx.scratch_raw();
        let args = crate::interp::Args {
            values: buffer,
            coords: &[],
            output: &mut [],
        };
        let v = crate::interp::run_args(self.ir_for(buffer.len()), &raw, args)
            .map_err(|_| self.runtime_error(&raw))?;
        Ok(v.unwrap_or(f64::NAN))
    }

    pub(crate) fn fresh_raw(&self) -> RawContext {
        self.ctx.scratch_raw()
    }

    pub(crate) fn ir_for(&self, n: usize) -> &Func {
        match &self.compiled.specialized {
            Some(f) if f.filter_size == Some(n) => f,
            _ => &self.compiled.general,
        }
    }

    pub(crate) fn runtime_error(&self, raw: &RawContext) -> RuntimeError {
        self.describe(raw.failure())
    }

    /// The user-facing error for a recorded failure.
    pub(crate) fn describe(&self, fail: Option<crate::runtime::Failure>) -> RuntimeError {
        let Some(fail) = fail else {
            return RuntimeError {
                message: "the filter failed without recording why".into(),
                exception: crate::Exception::RuntimeError,
                span: Span::default(),
                snippet: None,
            };
        };
        if fail.is_interrupt() {
            return RuntimeError::interrupted();
        }
        let Some(site) = self.compiled.general.errors.get(fail.site as usize) else {
            return self.describe(None);
        };
        let message = site
            .message
            .replace("{a}", &fail.a.to_string())
            .replace("{b}", &fail.b.to_string());
        RuntimeError {
            message,
            exception: site.exception,
            span: site.span,
            snippet: snippet(&self.compiled.source, site.span),
        }
    }

    /// The first run-time failure recorded by calls through [`Filter::callback`] with
    /// [`Filter::user_data`]; once set, the callback returns 0 at once until [`Filter::reset`].
    pub fn failure(&self) -> Option<RuntimeError> {
        self.ctx
            .raw
            .failure()
            .map(|_| self.runtime_error(&self.ctx.raw))
    }

    /// Clears a recorded failure so that the callback runs again.
    pub fn reset(&self) {
        self.ctx.raw.reset()
    }

    /// The raw C-ABI callback of a [`Sig::Filter`] filter. Pass [`Filter::user_data`] (or another
    /// context of this filter) as its last argument. Other signatures: [`Filter::entry_address`].
    ///
    /// ```
    /// let f = ndjit::Filter::compile("max(x) - min(x)", &ndjit::Bindings::new())?;
    /// let (cb, ud) = (f.callback(), f.user_data());
    /// let mut buf = [3.0, 1.0, 2.0];
    /// let mut out = 0.0;
    /// assert_eq!(unsafe { cb(buf.as_mut_ptr(), 3, &mut out, ud) }, 1);
    /// assert_eq!(out, 2.0);
    /// # Ok::<(), ndjit::Error>(())
    /// ```
    pub fn callback(&self) -> FilterFn {
        self.compiled.jit.entry()
    }

    /// The `user_data` pointer for [`Filter::callback`]. Valid while this `Filter` (or a clone)
    /// is alive. Calls through it share one failure slot.
    pub fn user_data(&self) -> *mut c_void {
        &self.ctx.raw as *const RawContext as *mut c_void
    }

    /// The same code with other bound values, without recompiling. Names not given keep their
    /// current values; a value of the wrong kind (an array for a number) is an error.
    ///
    /// ```
    /// let mut b = ndjit::Bindings::new();
    /// b.set_float("gain", 2.0);
    /// let f = ndjit::Filter::compile("gain * np.mean(x)", &b)?;
    /// b.set_float("gain", 10.0);
    /// let g = f.with_bindings(&b)?;
    /// assert_eq!((f.call(&[1.0, 3.0])?, g.call(&[1.0, 3.0])?), (4.0, 20.0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_bindings(&self, bindings: &Bindings) -> Result<Filter> {
        let mut values = self.ctx.values.clone();
        for (name, v) in bindings.iter() {
            let folded = values.iter().find_map(|(n, old)| match old {
                Value::Str(s) if n == name => Some(s),
                _ => None,
            });
            if let Some(old) = folded.filter(|old| !matches!(v, Value::Str(s) if s == *old)) {
                return Err(Error::new(
                    ErrorKind::Binding,
                    Span::default(),
                    format!("`{name}` was compiled as the string {old:?}, folded into the code"),
                )
                .hint("recompile the filter to bind another string"));
            }
            let Some(slot) = self.compiled.layout.slot(name) else {
                continue;
            };
            let ok = matches!(
                (slot, v),
                (Slot::Float(_), Value::Float(_) | Value::Int(_))
                    | (Slot::Int(_), Value::Int(_))
                    | (Slot::Array(_), Value::Array(_))
            );
            if !ok {
                let want = match slot {
                    Slot::Float(_) => "a float",
                    Slot::Int(_) => "an int",
                    Slot::Array(_) => "an array",
                };
                return Err(Error::new(
                    ErrorKind::Binding,
                    Span::default(),
                    format!(
                        "`{name}` was compiled as {want}, but {} was given",
                        v.kind()
                    ),
                )
                .hint("recompile the filter to change the kind of a bound value"));
            }
            if let Some(entry) = values.iter_mut().find(|(n, _)| n == name) {
                entry.1 = v.clone();
            }
        }
        Ok(Filter {
            compiled: self.compiled.clone(),
            ctx: Arc::new(Context::new(&self.compiled.layout, values)),
        })
    }

    /// This filter compiled for a known `filter_size` (straight-line code for that size), with the
    /// same source and current bound values. It starts from the lowered IR kept at compile time
    /// (nothing is parsed or lowered again). Returns a clone when already specialised to `n`, or
    /// when the signature has no footprint size (only generic_filter callbacks are specialised).
    pub fn specialize(&self, n: usize) -> Result<Filter> {
        if self.filter_size() == Some(n) {
            return Ok(self.clone());
        }
        let c = &self.compiled;
        if c.general.sig != Sig::Filter {
            return Ok(self.clone());
        }
        let sized = specialized(&c.lowered, n);
        let attach = |e: Error| e.with_source(&c.source);
        let jit =
            jit::compile(&c.general, Some(&sized), &jit_options(c.inspect)).map_err(attach)?;
        let compiled = Compiled {
            source: c.source.clone(),
            lowered: c.lowered.clone(),
            general: c.general.clone(),
            specialized: Some(sized),
            layout: c.layout.clone(),
            jit,
            inspect: c.inspect,
        };
        Ok(Filter::new(compiled, self.ctx.values.clone()))
    }

    /// The IR specialised to `filter_size = n` with the current bound values substituted and
    /// everything they decide folded: what a backend that bakes the values into its code (the
    /// GPU) compiles. Makes no native code.
    pub fn baked_ir(&self, n: usize) -> Func {
        let bound = BoundValues::new(&self.compiled.layout, &self.ctx.values);
        let known = ir::Known {
            filter_size: Some(n),
            bound: Some(&bound),
        };
        let baked = ir::substitute(self.compiled.lowered.clone(), known);
        let optimized = ir::optimize(baked, ir::optimize::ALL);
        // The networks' elements read bound arrays at indices that only they made constant.
        let bound_only = ir::Known {
            filter_size: None,
            bound: Some(&bound),
        };
        ir::substitute(optimized, bound_only)
    }

    /// The names of the bound values the filter reads, and their current values.
    pub fn bound_values(&self) -> &[(String, Value)] {
        &self.ctx.values
    }

    pub fn source(&self) -> &str {
        &self.compiled.source
    }

    /// The filter size the specialised version was compiled for, if any.
    pub fn filter_size(&self) -> Option<usize> {
        self.compiled
            .specialized
            .as_ref()
            .and_then(|f| f.filter_size)
    }

    /// The IR (general, then specialised if present) as text.
    ///
    /// ```
    /// let f = ndjit::Filter::compile("np.sum(x * 2.0)", &ndjit::Bindings::new())?;
    /// assert!(f.ir_text().contains("sum for"));
    /// # Ok::<(), ndjit::Error>(())
    /// ```
    pub fn ir_text(&self) -> String {
        let mut s = self.compiled.general.to_string();
        if let Some(sp) = &self.compiled.specialized {
            s.push('\n');
            s.push_str(&sp.to_string());
        }
        s
    }

    /// The IR of the general version.
    pub fn ir(&self) -> &Func {
        &self.compiled.general
    }

    /// The IR of the version specialised to [`Filter::filter_size`], if one was compiled.
    pub fn specialized_ir(&self) -> Option<&Func> {
        self.compiled.specialized.as_ref()
    }

    /// The layout of the bound values: which name lives in which slot of the context.
    pub fn layout(&self) -> &Layout {
        &self.compiled.layout
    }

    /// Cranelift IR text, when built with [`FilterBuilder::inspect`].
    pub fn clif_text(&self) -> Option<&str> {
        self.compiled.jit.clif()
    }

    /// Native disassembly, when built with [`FilterBuilder::inspect`].
    pub fn disasm(&self) -> Option<&str> {
        self.compiled.jit.disasm()
    }
}

impl std::fmt::Debug for Filter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Filter")
            .field("source", &self.source())
            .field("bound", &self.ctx.values)
            .finish()
    }
}

/// A filter that keeps neither its code nor its values alive, and only tells whether a filter is
/// (a clone of) that one: the driver's caches remember filters by it without extending their
/// lifetime. Its weak references keep the two addresses it compares from being reused.
pub(crate) struct FilterRef {
    compiled: std::sync::Weak<Compiled>,
    ctx: std::sync::Weak<Context>,
}

impl FilterRef {
    pub(crate) fn of(filter: &Filter) -> FilterRef {
        FilterRef {
            compiled: Arc::downgrade(&filter.compiled),
            ctx: Arc::downgrade(&filter.ctx),
        }
    }

    pub(crate) fn is(&self, filter: &Filter) -> bool {
        std::ptr::eq(self.compiled.as_ptr(), Arc::as_ptr(&filter.compiled))
            && std::ptr::eq(self.ctx.as_ptr(), Arc::as_ptr(&filter.ctx))
    }
}
