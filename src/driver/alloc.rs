//! Allocations whose size the caller's arguments decide (a footprint's taps, a line extended by
//! `filter_size`): a request the system refuses becomes [`DriverError::OutOfMemory`] (Python's
//! `MemoryError`, as scipy raises) instead of aborting the process.

use super::error::DriverError;

/// `vec![value; n]`, or the error if the memory cannot be had.
pub(crate) fn try_vec<T: Clone>(
    n: usize,
    value: T,
    what: &'static str,
) -> Result<Vec<T>, DriverError> {
    let mut v = Vec::new();
    try_resize(&mut v, n, value, what)?;
    Ok(v)
}

/// `v.resize(n, value)`, or the error if the memory cannot be had.
pub(crate) fn try_resize<T: Clone>(
    v: &mut Vec<T>,
    n: usize,
    value: T,
    what: &'static str,
) -> Result<(), DriverError> {
    if n > v.len() {
        v.try_reserve_exact(n - v.len())
            .map_err(|_| out_of_memory::<T>(n, what))?;
    }
    v.resize(n, value);
    Ok(())
}

/// The error for `n` elements of `T` that could not be allocated.
pub(crate) fn out_of_memory<T>(n: usize, what: &'static str) -> DriverError {
    DriverError::OutOfMemory {
        what,
        bytes: n.checked_mul(std::mem::size_of::<T>()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_allocations_are_errors() {
        assert_eq!(try_vec(3, 1.5f64, "x").unwrap(), vec![1.5; 3]);
        let e = try_vec(usize::MAX / 2, 0.0f64, "the taps").unwrap_err();
        assert_eq!(e.python_type(), "MemoryError");
        assert_eq!(
            e.to_string(),
            "unable to allocate the taps (more than 2^64 bytes)"
        );
        let e = try_vec(1 << 60, 0u8, "a line").unwrap_err();
        assert_eq!(
            e.to_string(),
            "unable to allocate 1152921504606846976 bytes for a line"
        );
    }
}
