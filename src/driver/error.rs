//! The driver's errors, each tied to the Python exception scipy raises in the same situation.

use crate::error::{Exception, RuntimeError};
use std::fmt;

/// Why a filter could not be applied. [`DriverError::exception`] is the exception scipy's
/// `generic_filter` raises in the same situation, and `Display` gives scipy's message where scipy
/// has one, so a binding can raise exactly what scipy would.
#[derive(Clone, Debug, PartialEq)]
pub enum DriverError {
    /// A mode name scipy does not know. `RuntimeError('boundary mode not supported')`.
    BadMode(String),
    /// An element type scipy refuses: complex (`TypeError('Complex type not supported')`) or
    /// anything else outside bool/int/uint/float32/float64
    /// (`RuntimeError('array type not supported')`).
    UnsupportedDtype { dtype: String, complex: bool },
    /// An entry of `axes` outside the array. `ValueError('specified axis: 2 is out of range')`.
    AxisOutOfRange { axis: isize, ndim: usize },
    /// `axes` names an axis twice. `ValueError('axes must be unique')`.
    DuplicateAxes,
    /// `size` or `origin` has neither one entry nor one per filtered axis.
    /// `RuntimeError('sequence argument must have length equal to input rank')`.
    SequenceLength {
        what: &'static str,
        len: usize,
        expected: usize,
    },
    /// The footprint does not have one non-empty dimension per filtered axis (a dimension of
    /// size 0 counts as missing). `RuntimeError('footprint.ndim (1) must match len(axes) (2)')`.
    FootprintRank {
        footprint_ndim: usize,
        num_axes: usize,
    },
    /// `footprint_shape // 2 + origin` is outside the footprint on some axis.
    /// `ValueError('invalid origin')`.
    InvalidOrigin {
        axis: usize,
        origin: isize,
        size: usize,
    },
    /// The output array does not have the input's shape. `RuntimeError('output shape not
    /// correct')`.
    OutputShape {
        input: Vec<usize>,
        output: Vec<usize>,
    },
    /// A footprint whose mask does not match its shape (Rust callers only). `ValueError`.
    BadFootprint(String),
    /// An array description that cannot be valid: shape and strides of different lengths, or a
    /// null pointer for a non-empty array (Rust and C callers only). `ValueError`.
    BadArray(String),
    /// The filter failed on a pixel: the exception the filter's Python code raises there
    /// (`IndexError`, `ValueError`, ...), as scipy re-raises it. `position` is the pixel's index;
    /// when several pixels fail, it is the first in C order, as in scipy's sequential loop.
    Filter {
        error: RuntimeError,
        position: Vec<usize>,
    },
    /// A filter compiled for another scipy signature (a `generic_filter1d` callback passed to
    /// `generic_filter`, say). scipy: `ValueError` (no matching LowLevelCallable signature).
    WrongSignature {
        expected: &'static str,
        found: &'static str,
    },
    /// The filter's native code, deferred to its first use on the CPU
    /// ([`crate::FilterBuilder::native_code`]), failed to generate: an internal compiler error.
    /// `RuntimeError`.
    NativeCode(Box<crate::Error>),
    /// `generic_filter1d` with `filter_size < 1`. `RuntimeError('invalid filter size')`.
    InvalidFilterSize,
    /// `generic_filter1d`'s `axis` outside the array. NumPy's `AxisError` (a `ValueError` and an
    /// `IndexError`): `axis 2 is out of bounds for array of dimension 2`.
    AxisError { axis: isize, ndim: usize },
    /// The run was cancelled through [`crate::driver::Options::cancel`], or interrupted (see
    /// [`crate::interrupt`]). `KeyboardInterrupt`.
    Cancelled,
    /// A size computed from the arguments (a footprint's entry count, an array's extent in
    /// bytes) does not fit in the address space. NumPy: `ValueError('array is too big')`.
    TooLarge(String),
    /// Memory the arguments call for could not be allocated. `MemoryError`, as scipy raises.
    OutOfMemory {
        what: &'static str,
        /// The bytes asked for; `None` when the count itself overflows.
        bytes: Option<usize>,
    },
}

impl DriverError {
    /// The Python exception scipy raises in the same situation, or for [`DriverError::Filter`]
    /// the filter's own (from [`RuntimeError::exception`]).
    pub fn exception(&self) -> Exception {
        match self {
            DriverError::UnsupportedDtype { complex: true, .. } => Exception::TypeError,
            DriverError::BadMode(_)
            | DriverError::UnsupportedDtype { .. }
            | DriverError::SequenceLength { .. }
            | DriverError::FootprintRank { .. }
            | DriverError::OutputShape { .. }
            | DriverError::InvalidFilterSize
            | DriverError::NativeCode(_) => Exception::RuntimeError,
            DriverError::AxisError { .. } => Exception::AxisError,
            DriverError::AxisOutOfRange { .. }
            | DriverError::DuplicateAxes
            | DriverError::InvalidOrigin { .. }
            | DriverError::BadFootprint(_)
            | DriverError::BadArray(_)
            | DriverError::TooLarge(_)
            | DriverError::WrongSignature { .. } => Exception::ValueError,
            DriverError::OutOfMemory { .. } => Exception::MemoryError,
            DriverError::Filter { error, .. } => error.exception,
            DriverError::Cancelled => Exception::KeyboardInterrupt,
        }
    }

    /// The name of [`DriverError::exception`], e.g. `"ValueError"`.
    pub fn python_type(&self) -> &'static str {
        self.exception().name()
    }

    /// The filter's run-time error, for [`DriverError::Filter`].
    pub fn runtime_error(&self) -> Option<&RuntimeError> {
        match self {
            DriverError::Filter { error, .. } => Some(error),
            _ => None,
        }
    }
}

impl fmt::Display for DriverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DriverError::BadMode(_) => f.write_str("boundary mode not supported"),
            DriverError::UnsupportedDtype { complex: true, .. } => {
                f.write_str("Complex type not supported")
            }
            DriverError::UnsupportedDtype { .. } => f.write_str("array type not supported"),
            DriverError::AxisOutOfRange { axis, .. } => {
                write!(f, "specified axis: {axis} is out of range")
            }
            DriverError::DuplicateAxes => f.write_str("axes must be unique"),
            DriverError::SequenceLength { .. } => {
                f.write_str("sequence argument must have length equal to input rank")
            }
            DriverError::FootprintRank {
                footprint_ndim,
                num_axes,
            } => {
                write!(
                    f,
                    "footprint.ndim ({footprint_ndim}) must match len(axes) ({num_axes})"
                )
            }
            DriverError::InvalidOrigin { .. } => f.write_str("invalid origin"),
            DriverError::OutputShape { .. } => f.write_str("output shape not correct"),
            DriverError::BadFootprint(m) | DriverError::BadArray(m) | DriverError::TooLarge(m) => {
                f.write_str(m)
            }
            DriverError::OutOfMemory {
                what,
                bytes: Some(n),
            } => write!(f, "unable to allocate {n} bytes for {what}"),
            DriverError::OutOfMemory { what, bytes: None } => {
                write!(f, "unable to allocate {what} (more than 2^64 bytes)")
            }
            DriverError::Filter { error, .. } => write!(f, "{error}"),
            DriverError::WrongSignature { expected, found } => {
                write!(f, "the filter was compiled for the signature \"{found}\", but this function calls \"{expected}\"")
            }
            DriverError::InvalidFilterSize => f.write_str("invalid filter size"),
            DriverError::NativeCode(e) => write!(f, "{}: {}", e.kind.as_str(), e.message),
            DriverError::AxisError { axis, ndim } => write!(
                f,
                "axis {axis} is out of bounds for array of dimension {ndim}"
            ),
            DriverError::Cancelled => f.write_str("cancelled"),
        }
    }
}

impl std::error::Error for DriverError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DriverError::Filter { error, .. } => Some(error),
            DriverError::NativeCode(e) => Some(e.as_ref()),
            _ => None,
        }
    }
}

impl From<crate::Error> for DriverError {
    /// The only compile errors a driver run meets: native code generated late.
    fn from(e: crate::Error) -> DriverError {
        DriverError::NativeCode(Box::new(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{ErrorKind, Span};

    /// Native code that fails to generate at a call's first use is that call's `RuntimeError`,
    /// from the driver and from `Filter::call`, with the compiler's message.
    #[test]
    fn late_native_code_failures_are_runtime_errors() {
        let e = crate::Error::new(ErrorKind::Codegen, Span::default(), "verifier errors");
        let d = DriverError::from(e.clone());
        assert!(matches!(d, DriverError::NativeCode(_)));
        assert_eq!(d.exception(), Exception::RuntimeError);
        assert_eq!(d.to_string(), "internal compiler error: verifier errors");
        assert!(std::error::Error::source(&d).is_some());
        let r = RuntimeError::native_code_failed(&e);
        assert_eq!(r.exception, Exception::RuntimeError);
        assert_eq!(r.message, "internal compiler error: verifier errors");
    }
}
