//! The Cranelift backend: compiles an [`ir::Func`] to a native
//! `int f(double *buffer, intptr_t filter_size, double *return_value, void *user_data)`.
//!
//! The emitted function agrees bit for bit with the interpreter ([`crate::interp`], NaN payloads
//! aside): scalar operations mirror [`crate::ir::eval`], reductions follow the interpreter's order
//! (including [`crate::runtime::pairwise_sum`]), and sorting, medians, quantiles, integer floor
//! division and the math functions call the very `extern "C"` routines the interpreter calls.
//!
//! What the entry function does:
//! 1. `user_data` null → return 0. The context's `failed` flag set → return 0 at once (scipy keeps
//!    calling after a failure).
//! 2. A negative `filter_size`, a null `return_value`, or a null `buffer` with `filter_size > 0`
//!    → record error site 0 with `a = filter_size` and return 0.
//! 3. Load the bound scalars, integers and arrays the bodies use, once.
//! 4. Run the specialised body when one was given and `filter_size` is its size, else the
//!    general body. `Return` stores the result and returns 1; a failing `Check` records its
//!    site and details and returns 0.
//!
//! Layout of the module: [`translate`] (the owner of the Cranelift function: prologue, dispatch,
//! statements), `expr` (expressions), `reduce` (reductions and fills), `imports` (the runtime
//! symbols and their signatures).

mod expr;
mod imports;
pub mod kernel;
mod lanes;
mod poll;
mod reduce;
mod translate;

#[cfg(test)]
mod tests;

use crate::error::Error;
use crate::ir;
use cranelift_codegen::ir::{types, UserFuncName};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::{CodegenError, Context};
use cranelift_frontend::FunctionBuilderContext;
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, FuncId, Module, ModuleError};
use std::cell::Cell;
use std::ffi::c_void;
use std::mem::ManuallyDrop;
use std::sync::OnceLock;
use translate::codegen_error;

/// The C signature scipy's `generic_filter` calls:
/// `int (double *buffer, intptr_t filter_size, double *return_value, void *user_data)`.
pub type FilterFn = unsafe extern "C" fn(*mut f64, isize, *mut f64, *mut c_void) -> i32;

/// What to keep besides the code.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JitOptions {
    /// Keep the Cranelift IR text of the function (before optimisation).
    pub clif_text: bool,
    /// Keep Cranelift's disassembly of the generated machine code (VCode, after register
    /// allocation).
    pub disasm: bool,
}

/// Compiled code: owns the executable memory of one filter.
pub struct JitCode {
    /// The module that owns the code memory. `JITModule`'s own drop leaks that memory, so it is
    /// kept in `ManuallyDrop` and freed explicitly in `Drop`.
    module: ManuallyDrop<JITModule>,
    /// The finalized entry function, valid as long as `module` is.
    entry: FilterFn,
    clif: Option<String>,
    disasm: Option<String>,
}

// SAFETY: after `finalize_definitions` the code and its memory are immutable, and `JitCode`
// exposes only the entry pointer and owned strings; the module (which is `Send` but, because of a
// `RefCell` symbol cache used only while linking, not `Sync`) is never touched again until `Drop`,
// which has exclusive access. Calling the code from many threads at once is safe: it keeps no
// state of its own (scratch memory is per thread, failures go through the context's atomic flag
// and mutex).
unsafe impl Send for JitCode {}
unsafe impl Sync for JitCode {}

impl JitCode {
    /// The entry function of a [`crate::ir::Sig::Filter`] function. Calling it is `unsafe`: the
    /// pointers must be valid for the sizes given, and `user_data` must be null or point to a live
    /// [`crate::runtime::RawContext`] whose bound values match the layout the IR was lowered for.
    /// For the other signatures the entry has another C type: use [`JitCode::address`] and cast
    /// it to the type [`crate::ir::Sig`] documents.
    pub fn entry(&self) -> FilterFn {
        self.entry
    }

    /// The entry function's address, whatever its signature.
    pub fn address(&self) -> *const c_void {
        self.entry as *const c_void
    }

    /// The Cranelift IR text, when [`JitOptions::clif_text`] was set.
    pub fn clif(&self) -> Option<&str> {
        self.clif.as_deref()
    }

    /// The machine-code disassembly, when [`JitOptions::disasm`] was set.
    pub fn disasm(&self) -> Option<&str> {
        self.disasm.as_deref()
    }
}

impl Drop for JitCode {
    fn drop(&mut self) {
        // SAFETY: `module` is not used after this; no `FilterFn` obtained from `entry` may be
        // called once the `JitCode` is dropped, which owners guarantee by holding the `JitCode`
        // for as long as the callable exists.
        unsafe { ManuallyDrop::take(&mut self.module).free_memory() };
    }
}

impl std::fmt::Debug for JitCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JitCode")
            .field("entry", &(self.entry as *const u8))
            .finish_non_exhaustive()
    }
}

/// Compiles `general` (valid for any `filter_size`) and optionally a body `specialized` for one
/// filter size (`specialized.filter_size == Some(n)`) into one native function.
pub fn compile(
    general: &ir::Func,
    specialized: Option<&ir::Func>,
    opts: &JitOptions,
) -> Result<JitCode, Error> {
    // The translation recurses over expressions; it may run lazily, on a caller's small stack.
    crate::with_stack(|| {
        let mut jit = Jit::new()?;
        match jit.define(general, specialized, opts) {
            Ok(defined) => jit.finish(defined),
            Err(e) => {
                jit.discard();
                Err(e)
            }
        }
    })
}

/// Everything one compilation needs, in the manner of cranelift-jit-demo's `JIT`.
struct Jit {
    /// Declares the function and its imports, links them to the runtime's symbols and owns the
    /// executable memory; it becomes the [`JitCode`]'s.
    module: JITModule,
    /// The Cranelift function being built, plus the analysis and register-allocation state that
    /// compiling it needs; reused from one compilation to the next on the same thread.
    ctx: Context,
    /// The frontend's SSA-construction state, reused likewise.
    builder_ctx: FunctionBuilderContext,
}

/// The entry function, defined but not yet finalized.
struct Defined {
    id: FuncId,
    clif: Option<String>,
    disasm: Option<String>,
}

thread_local! {
    /// The contexts of the last successful compilation on this thread: reusing them saves their
    /// allocations (compile time is a feature: a small filter compiles in well under 1 ms).
    static SPARE: Cell<Option<Box<(Context, FunctionBuilderContext)>>> = const { Cell::new(None) };
}

impl Jit {
    fn new() -> Result<Jit, Error> {
        let mut builder = JITBuilder::with_isa(host_isa()?, default_libcall_names());
        // Every runtime and math routine the IR can call: an unresolved import panics at
        // finalize, so all are registered whether used or not.
        builder.symbols(crate::runtime::symbols());
        builder.symbols(imports::jit_symbols());
        builder.symbols(imports::libcall_shims());
        let module = JITModule::new(builder);
        let (ctx, builder_ctx) = match SPARE.with(Cell::take) {
            Some(spare) => *spare,
            None => (Context::new(), FunctionBuilderContext::new()),
        };
        Ok(Jit {
            module,
            ctx,
            builder_ctx,
        })
    }

    /// Translates the IR and compiles it to machine code in the module.
    fn define(
        &mut self,
        general: &ir::Func,
        specialized: Option<&ir::Func>,
        opts: &JitOptions,
    ) -> Result<Defined, Error> {
        let sig = translate::entry_signature(&self.module, general.sig);
        let id = self
            .module
            .declare_anonymous_function(&sig)
            .map_err(module_error)?;
        self.module.clear_context(&mut self.ctx);
        self.ctx.func.signature = sig;
        self.ctx.func.name = UserFuncName::user(0, id.as_u32());
        translate::translate(
            &mut self.module,
            &mut self.ctx.func,
            &mut self.builder_ctx,
            general,
            specialized,
        )?;

        let clif = opts.clif_text.then(|| self.ctx.func.display().to_string());
        self.ctx.set_disasm(opts.disasm);
        if let Err(e) = self.module.define_function(id, &mut self.ctx) {
            return Err(match e {
                ModuleError::Compilation(CodegenError::Verifier(errors)) => codegen_error(format!(
                    "Cranelift verifier rejected the generated code:\n{}",
                    cranelift_codegen::print_errors::pretty_verifier_error(
                        &self.ctx.func,
                        None,
                        errors
                    )
                )),
                e => module_error(e),
            });
        }
        let disasm = if opts.disasm {
            self.ctx.compiled_code().and_then(|c| c.vcode.clone())
        } else {
            None
        };
        self.module.clear_context(&mut self.ctx);
        poll::define_trampoline(&mut self.module, &mut self.ctx, &mut self.builder_ctx)?;
        Ok(Defined { id, clif, disasm })
    }

    /// Links and finalizes the code; the contexts go back to the thread's spare.
    fn finish(self, defined: Defined) -> Result<JitCode, Error> {
        let mut module = self.finish_module();
        if let Err(e) = module.finalize_definitions() {
            // SAFETY: no pointer into the module's memory has been handed out.
            unsafe { module.free_memory() };
            return Err(module_error(e));
        }
        let ptr = module.get_finalized_function(defined.id);
        // SAFETY: `ptr` is the finalized code of a function declared with the C signature
        // `(i64, i64, i64, i64) -> i32` in the host's default calling convention, which is the
        // ABI of `FilterFn` on the 64-bit hosts `host_isa` accepts. A code address becomes a
        // function pointer only through a transmute; it is to an `extern "C"` type.
        let entry = unsafe { std::mem::transmute::<*const u8, FilterFn>(ptr) };
        Ok(JitCode {
            module: ManuallyDrop::new(module),
            entry,
            clif: defined.clif,
            disasm: defined.disasm,
        })
    }

    /// Returns the contexts to the thread's spare and hands over the module.
    fn finish_module(self) -> JITModule {
        let Jit {
            module,
            ctx,
            builder_ctx,
        } = self;
        SPARE.with(|s| s.set(Some(Box::new((ctx, builder_ctx)))));
        module
    }

    /// Frees whatever the module allocated. The contexts are dropped: after a failed
    /// translation the builder context may be mid-function.
    fn discard(self) {
        // SAFETY: no pointer into the module's memory has been handed out.
        unsafe { self.module.free_memory() };
    }
}

fn module_error(e: ModuleError) -> Error {
    codegen_error(format!("Cranelift: {e}"))
}

/// The host ISA with ndjit's settings, built once per process.
fn host_isa() -> Result<OwnedTargetIsa, Error> {
    static ISA: OnceLock<Result<OwnedTargetIsa, String>> = OnceLock::new();
    ISA.get_or_init(build_host_isa)
        .clone()
        .map_err(codegen_error)
}

fn build_host_isa() -> Result<OwnedTargetIsa, String> {
    let mut flags = settings::builder();
    let verifier = if cfg!(debug_assertions) {
        "true"
    } else {
        "false"
    };
    for (name, value) in [
        ("opt_level", "speed"),
        // The verifier is ~30% of compile time: debug builds only.
        ("enable_verifier", verifier),
        // cranelift-jit requires these.
        ("is_pic", "false"),
        ("use_colocated_libcalls", "false"),
        // Nothing unwinds through filter code (the runtime routines never panic).
        ("unwind_info", "false"),
        // Scratch arrays live in stack slots of up to 64 KiB in all: probe large frames inline
        // so that they cannot jump over a guard page.
        ("enable_probestack", "true"),
        ("probestack_strategy", "inline"),
    ] {
        flags
            .set(name, value)
            .map_err(|e| format!("Cranelift setting {name}={value}: {e}"))?;
    }
    let isa = cranelift_native::builder()
        .map_err(|e| format!("this host is not supported by Cranelift: {e}"))?
        .finish(settings::Flags::new(flags))
        .map_err(|e| format!("Cranelift ISA: {e}"))?;
    if isa.pointer_type() != types::I64 {
        return Err("the JIT needs a 64-bit host".into());
    }
    Ok(isa)
}
