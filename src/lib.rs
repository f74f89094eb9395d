//! # ndjit: compile Python filter callbacks to native code
//!
//! `ndjit` takes the callbacks people write for `scipy.ndimage.generic_filter` (an expression
//! over `x`, a `lambda`, or a `def`) and compiles them, in well under a millisecond, into a C-ABI
//! function `int f(double *buffer, intptr_t filter_size, double *return_value, void *user_data)`.
//!
//! ```
//! use ndjit::{Bindings, Filter};
//! let src = "def despike(w):
//!     c = w[len(w) // 2]
//!     med = np.median(w)
//!     return med if abs(c - med) > 3 * np.std(w) else c";
//! let f = Filter::compile(src, &Bindings::new())?;
//! let v = f.call(&[1.0, 1.0, 1.0, 1.0, 99.0, 1.0, 1.0, 1.0, 1.0])?;
//! assert_eq!(v, 1.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Stages
//! Source text → [`syntax`] (tokens, AST, with a nesting limit) → [`lower`] (names, types and
//! every compile-time check, producing the IR) → [`ir`] (one typed IR with structured control
//! flow and explicit reductions, constant-folded once) → [`interp`] (the reference interpreter)
//! and [`jit`] (Cranelift). Both backends call the same [`math`] and [`runtime`] routines, so
//! they agree bit for bit.
//!
//! Semantics are NumPy float64's: see the [`ir`] module for the exact rules.

pub mod bind;
pub mod context;
pub mod driver;
pub mod error;
pub mod filter;
pub mod integrand;
pub mod interp;
pub mod interrupt;
pub mod ir;
pub mod jit;
pub mod lower;
pub mod math;
pub mod runtime;
pub mod syntax;

pub use bind::{ArrayKind, Bindings, Layout, Origin, Value};
pub use context::{
    adaptive_callback, interpreter_callback, resumable_callback, CallContext, Hooks,
};
pub use error::{Error, ErrorKind, Exception, Position, RuntimeError, Span};
pub use filter::{Filter, FilterBuilder};
pub use ir::Sig;
pub use jit::FilterFn;

/// Runs a step of a recursive walk (parser, lowering, folding, interpreter, code generation) with
/// enough stack: it grows the stack on the heap when little is left, as rustc does. The nesting
/// limits keep the depth bounded; this keeps small thread stacks (a C host's 128 KiB pthread,
/// 2 MiB test threads, debug builds) from overflowing before a limit is reached.
///
/// Not every recursive walk calls it (the IR passes recurse into nested blocks freely), so the
/// red zone is what one unguarded walk may need at the nesting limit: 256 levels of frames of
/// up to a few KiB. `tests/errors.rs` compiles and runs every deep form at the limit on a
/// 64 KiB thread.
#[inline]
pub(crate) fn with_stack<R>(f: impl FnOnce() -> R) -> R {
    const RED_ZONE: usize = 1024 * 1024;
    const SEGMENT: usize = 8 * 1024 * 1024;
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}
