//! The public face of the core: compile filter source once, call it many times.

use crate::bind::{Bindings, Layout, Slot, Value};
use crate::error::{snippet, Error, ErrorKind, Result, RuntimeError, Span};
use crate::ir::{Func, Sig};
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
    /// Aliases given with [`FilterBuilder::import`], kept to recompile (`specialize`).
    imports: Vec<(String, String)>,
    general: Func,
    specialized: Option<Func>,
    layout: Layout,
    jit: JitCode,
}

/// The bound values a call reads, behind the [`RawContext`] that `user_data` points at.
struct Context {
    raw: RawContext,
    _floats: Box<[f64]>,
    _ints: Box<[i64]>,
    _arrays: Vec<Box<[f64]>>,
    _refs: Box<[ArrayRef]>,
    values: Vec<(String, Value)>,
}

// SAFETY: the raw pointers (in `raw` and `_refs`) point into the boxed slices owned by the same
// context, which are never mutated after construction; the mutable state is atomics and a mutex.
unsafe impl Send for Context {}
unsafe impl Sync for Context {}

impl Context {
    fn new(layout: &Layout, values: Vec<(String, Value)>) -> Context {
        let mut floats = vec![0.0; layout.floats as usize].into_boxed_slice();
        let mut ints = vec![0i64; layout.ints as usize].into_boxed_slice();
        let mut arrays: Vec<Box<[f64]>> = vec![Box::new([]); layout.arrays as usize];
        for (name, v) in &values {
            match (layout.slot(name), v) {
                (Some(Slot::Float(k)), Value::Float(x)) => floats[k as usize] = *x,
                (Some(Slot::Float(k)), Value::Int(x)) => floats[k as usize] = *x as f64,
                (Some(Slot::Int(k)), Value::Int(x)) => ints[k as usize] = *x,
                (Some(Slot::Array(k)), Value::Array(a)) => {
                    arrays[k as usize] = a.clone().into_boxed_slice()
                }
                _ => {}
            }
        }
        let refs: Box<[ArrayRef]> = arrays
            .iter()
            .map(|a| ArrayRef {
                ptr: a.as_ptr(),
                len: a.len() as i64,
            })
            .collect();
        let raw = RawContext::new(floats.as_ptr(), ints.as_ptr(), refs.as_ptr());
        Context {
            raw,
            _floats: floats,
            _ints: ints,
            _arrays: arrays,
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
    pub fn compile(self) -> Result<Filter> {
        let source: Arc<str> = self.source.into();
        let attach = |e: Error| e.with_source(&source);
        let mut program = crate::syntax::parse(&source).map_err(attach)?;
        program.imports.extend(self.imports.iter().cloned());
        let general =
            crate::lower::lower(&program, &self.bindings, None, self.sig).map_err(attach)?;
        // Only generic_filter calls have one size per footprint worth specialising for.
        let specialized = match self.filter_size {
            Some(n) if self.sig == Sig::Filter => Some(
                crate::lower::lower(&program, &self.bindings, Some(n), self.sig)
                    .map_err(attach)?
                    .func,
            ),
            _ => None,
        };
        let opts = JitOptions {
            clif_text: self.inspect,
            disasm: self.inspect,
        };
        let jit = jit::compile(&general.func, specialized.as_ref(), &opts).map_err(attach)?;
        let values = general
            .layout
            .entries
            .iter()
            .map(|(name, _)| {
                (
                    name.clone(),
                    self.bindings
                        .get(name)
                        .cloned()
                        .unwrap_or_else(|| default_of(&program, name)),
                )
            })
            .collect();
        let ctx = Arc::new(Context::new(&general.layout, values));
        let compiled = Compiled {
            source,
            imports: self.imports,
            general: general.func,
            specialized,
            layout: general.layout,
            jit,
        };
        Ok(Filter {
            compiled: Arc::new(compiled),
            ctx,
        })
    }
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
    /// same source and current bound values. Returns a clone when already specialised to `n`.
    pub fn specialize(&self, n: usize) -> Result<Filter> {
        if self.filter_size() == Some(n) {
            return Ok(self.clone());
        }
        let mut b = Bindings::new();
        for (name, v) in &self.ctx.values {
            b.set(name.clone(), v.clone());
        }
        let mut builder = Filter::builder(&self.compiled.source)
            .bindings(&b)
            .signature(self.signature())
            .filter_size(n);
        for (module, alias) in &self.compiled.imports {
            builder = builder.import(module, alias);
        }
        builder.compile()
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
