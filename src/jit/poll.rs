//! The interrupt poll on loop back edges (see [`crate::interrupt`]), called through a trampoline
//! that clobbers no register.
//!
//! A call inside a loop, even one on a cold path, makes the register allocator keep the loop's
//! floating-point values across it, and every XMM register is caller-saved: it spills them, and
//! the loop's carried sums go through memory on every iteration. Measured on a `while` loop adding
//! one buffer value (`benches/poll_cost.py`): 1.5-1.9 ns per iteration without the poll, 8.0
//! with a direct call to `ndjit_rt_poll`, 2.0-2.3 through the trampoline. The poll therefore calls a small function of the module, of Cranelift's
//! `PreserveAll` convention (no clobbered registers at the call site), which calls
//! `ndjit_rt_poll` in the C convention and saves and restores what that clobbers. The trampoline
//! returns nothing (`PreserveAll` has no return values): `ndjit_rt_poll` records an interrupt in
//! the context, whose `failed` flag the loop then reads.

use super::imports::Callee;
use super::module_error;
use super::translate::codegen_error;
use crate::error::Error;
use cranelift_codegen::ir::{types, AbiParam, InstBuilder, Signature, UserFuncName};
use cranelift_codegen::isa::CallConv;
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::JITModule;
use cranelift_module::{FuncOrDataId, Linkage, Module};

/// The trampoline's name in the module (local to it).
pub(super) const TRAMPOLINE: &str = "ndjit_poll_trampoline";

/// `void trampoline(RawContext *ctx)`, clobbering nothing.
pub(super) fn trampoline_signature() -> Signature {
    let mut sig = Signature::new(CallConv::PreserveAll);
    sig.params.push(AbiParam::new(types::I64));
    sig
}

/// Defines the trampoline in `module` if the code compiled into it declared it (it has a loop).
pub(super) fn define_trampoline(
    module: &mut JITModule,
    ctx: &mut Context,
    builder_ctx: &mut FunctionBuilderContext,
) -> Result<(), Error> {
    let Some(FuncOrDataId::Func(id)) = module.get_name(TRAMPOLINE) else {
        return Ok(());
    };
    let poll_sig = Callee::Poll.signature(module.isa().default_call_conv(), types::I64);
    let poll = module
        .declare_function(Callee::Poll.symbol(), Linkage::Import, &poll_sig)
        .map_err(|e| codegen_error(format!("cannot import ndjit_rt_poll: {e}")))?;
    module.clear_context(ctx);
    ctx.func.signature = trampoline_signature();
    ctx.func.name = UserFuncName::user(0, id.as_u32());
    let poll = module.declare_func_in_func(poll, &mut ctx.func);
    let mut b = FunctionBuilder::new(&mut ctx.func, builder_ctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    b.seal_block(entry);
    let raw_ctx = b.block_params(entry)[0];
    // The result is also in the context's `failed` flag, which the caller reads.
    b.ins().call(poll, &[raw_ctx]);
    b.ins().return_(&[]);
    b.finalize(module.target_config());
    module.define_function(id, ctx).map_err(module_error)?;
    module.clear_context(ctx);
    Ok(())
}
