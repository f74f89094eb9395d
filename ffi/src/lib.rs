//! # libndjit: the C ABI of ndjit
//!
//! This crate builds `libndjit.so` / `libndjit.a` and is described, for C programmers, by
//! `include/ndjit.h`, which cbindgen generates from the doc comments in this crate
//! (`tests/header.rs` fails when the committed header is stale; run it with `NDJIT_BLESS=1` to
//! rewrite it).
//!
//! ## Rules every entry point follows
//!
//! - Fallible functions return an [`ndjit_status`] and take an optional `ndjit_error **error` last:
//!   on failure `*error` receives a new error object (message, line, column, caret text), on
//!   success it is set to NULL.
//! - Arguments are checked before anything is done: NULL pointers, invalid UTF-8, negative or
//!   absurd sizes, unknown enum values, shapes and strides that leave the memory the caller
//!   described. A bad argument is an error code, never a crash.
//! - Panics are caught at the boundary ([`std::panic::catch_unwind`]) and reported as
//!   [`ndjit_status::NDJIT_ERR_INTERNAL`]; nothing unwinds into C.
//! - Every object the library returns has exactly one `ndjit_*_free` function, which accepts NULL.
//!
//! The modules follow the header's sections: [`error`] (status codes, error objects), [`bindings`]
//! (bound values), [`filter`] (compiling, calling, contexts), [`driver`] (the n-d driver) and
//! [`version`].

#![allow(non_camel_case_types)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

// In the header's order: cbindgen emits functions in the order it parses these modules.
mod args;
pub mod bindings;
pub mod driver;
pub mod error;
pub mod filter;
pub mod interrupt;
pub mod version;

pub use bindings::ndjit_bindings;
pub use driver::{ndjit_array, ndjit_dtype, ndjit_mode, ndjit_options};
pub use error::{ndjit_error, ndjit_status};
pub use filter::{ndjit_callback, ndjit_context, ndjit_filter};
pub use interrupt::ndjit_poll_hook;
