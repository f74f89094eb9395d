//! GPU backend for ndjit.
pub mod codegen;
pub mod error;
pub mod math;
pub mod pir;

pub use error::{GpuError, Result};
pub mod emulate;
pub mod plan;
pub mod reference;
