//! Errors of the GPU backend.

use std::fmt;

/// What can go wrong on the way from a filter to a result on the GPU.
#[derive(Debug)]
pub enum GpuError {
    /// No usable CUDA driver or device: libcuda is missing, no GPU is visible, or the driver
    /// refused to initialise. The CPU features of ndjit are unaffected.
    NoDevice(String),
    /// A CUDA driver call failed.
    Driver { call: &'static str, code: String },
    /// The driver rejected the generated PTX; `log` is ptxas's own error log.
    PtxLoad { log: String },
    /// The driver's validation rejected the arguments (footprint, origin, axes, shapes): the
    /// same error, and the same scipy exception, as on the CPU.
    Arguments(ndjit::driver::DriverError),
    /// The arrays cannot be used as given (on different GPUs, say).
    Invalid(String),
    /// The filter uses something this backend cannot compile (the message says what).
    Unsupported(String),
    /// Compiling the filter source failed (the same error the CPU compiler reports).
    Compile(ndjit::Error),
    /// The filter failed while running, at `pixel` (the first failing pixel in C order): the
    /// same error the CPU raises for that neighbourhood.
    Filter {
        pixel: Vec<usize>,
        error: Box<ndjit::RuntimeError>,
    },
    /// The filter failed at `pixel`, but replaying that neighbourhood on the CPU did not fail
    /// (possible only through a last-bit difference in a transcendental function); `message`
    /// is the error site's message with its details.
    FilterGpuOnly { pixel: Vec<usize>, message: String },
}

impl fmt::Display for GpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuError::NoDevice(why) => write!(f, "no CUDA device: {why}"),
            GpuError::Driver { call, code } => write!(f, "CUDA driver call {call} failed: {code}"),
            GpuError::PtxLoad { log } => {
                write!(f, "the CUDA driver rejected the generated PTX:\n{log}")
            }
            GpuError::Arguments(e) => write!(f, "{e}"),
            GpuError::Invalid(m) => write!(f, "{m}"),
            GpuError::Unsupported(m) => write!(f, "not supported on the GPU: {m}"),
            GpuError::Compile(e) => write!(f, "{e}"),
            GpuError::Filter { pixel, error } => write!(f, "{error} (at pixel {pixel:?})"),
            GpuError::FilterGpuOnly { pixel, message } => {
                write!(f, "{message} (at pixel {pixel:?})")
            }
        }
    }
}

impl std::error::Error for GpuError {}

impl From<ndjit::Error> for GpuError {
    fn from(e: ndjit::Error) -> GpuError {
        GpuError::Compile(e)
    }
}

impl From<ndjit::driver::DriverError> for GpuError {
    fn from(e: ndjit::driver::DriverError) -> GpuError {
        GpuError::Arguments(e)
    }
}

pub type Result<T> = std::result::Result<T, GpuError>;
