//! Checking the arguments C hands us, before anything is done with them.

use crate::error::{Failure, Result};
use crate::ndjit_status;
use std::ffi::{c_char, CStr};

/// A NUL-terminated UTF-8 string argument.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that stays valid for `'a`.
pub(crate) unsafe fn str_arg<'a>(p: *const c_char, what: &str) -> Result<&'a str> {
    if p.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: per the contract, a NUL-terminated string.
    let bytes = unsafe { CStr::from_ptr(p) };
    bytes.to_str().map_err(|e| {
        Failure::new(
            ndjit_status::NDJIT_ERR_UTF8,
            format!(
                "`{what}` is not valid UTF-8 (bad byte at offset {})",
                e.valid_up_to()
            ),
        )
    })
}

/// A Python identifier: the only names a filter can read.
pub(crate) fn identifier(name: &str, what: &str) -> Result<()> {
    let mut chars = name.chars();
    let ok = chars.next().is_some_and(|c| c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric());
    if ok {
        Ok(())
    } else {
        Err(Failure::invalid(format!(
            "`{what}` is {name:?}, which is not a Python identifier"
        )))
    }
}

/// A count argument: `>= 0`.
pub(crate) fn count(n: isize, what: &str) -> Result<usize> {
    usize::try_from(n)
        .map_err(|_| Failure::invalid(format!("`{what}` is {n}, but it must not be negative")))
}

/// `len` elements at `p`: NULL is allowed only when `len` is 0. The pointer must be aligned for
/// `T` and the whole range must be addressable (`len * size_of::<T>() <= isize::MAX`).
///
/// # Safety
/// When `p` is not NULL, it points to `len` readable `T`s that stay valid and unwritten for `'a`.
pub(crate) unsafe fn slice_arg<'a, T>(
    p: *const T,
    len: isize,
    what: &str,
    len_name: &str,
) -> Result<&'a [T]> {
    let n = count(len, len_name)?;
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Failure::null(what));
    }
    if !p.is_aligned() {
        return Err(Failure::invalid(format!(
            "`{what}` is not aligned to {} bytes",
            std::mem::align_of::<T>()
        )));
    }
    if n.checked_mul(std::mem::size_of::<T>())
        .is_none_or(|b| b > isize::MAX as usize)
    {
        return Err(Failure::invalid(format!(
            "`{len_name}` is {n}, which is larger than any array"
        )));
    }
    // SAFETY: non-NULL, aligned, of a valid total size, and readable per the contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// A handle argument.
///
/// # Safety
/// `p` is NULL or points to a live `T` for `'a`.
pub(crate) unsafe fn handle<'a, T>(p: *const T, what: &str) -> Result<&'a T> {
    // SAFETY: per the contract.
    unsafe { p.as_ref() }.ok_or_else(|| Failure::null(what))
}

/// An out-parameter: checks it is not NULL and clears it, so that on failure the caller finds
/// NULL there.
///
/// # Safety
/// `p` is NULL or points to writable storage for one `*mut T`.
pub(crate) unsafe fn out_arg<'a, T>(p: *mut *mut T, what: &str) -> Result<&'a mut *mut T> {
    // SAFETY: per the contract.
    let slot = unsafe { p.as_mut() }.ok_or_else(|| Failure::null(what))?;
    *slot = std::ptr::null_mut();
    Ok(slot)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers() {
        for ok in ["x", "_", "k2", "été"] {
            assert!(identifier(ok, "name").is_ok(), "{ok}");
        }
        for bad in ["", "2k", "a b", "a-b", "x\n"] {
            assert!(identifier(bad, "name").is_err(), "{bad}");
        }
    }

    #[test]
    fn slices() {
        let v = [1.0f64, 2.0];
        assert_eq!(
            unsafe { slice_arg(std::ptr::null::<f64>(), 0, "p", "n") }
                .unwrap()
                .len(),
            0
        );
        assert_eq!(
            unsafe { slice_arg(std::ptr::null::<f64>(), 1, "p", "n") }
                .unwrap_err()
                .status,
            ndjit_status::NDJIT_ERR_NULL
        );
        assert_eq!(
            unsafe { slice_arg(v.as_ptr(), -1, "p", "n") }
                .unwrap_err()
                .status,
            ndjit_status::NDJIT_ERR_INVALID_ARGUMENT
        );
        let odd = (v.as_ptr() as *const u8).wrapping_add(1) as *const f64;
        assert_eq!(
            unsafe { slice_arg(odd, 1, "p", "n") }.unwrap_err().status,
            ndjit_status::NDJIT_ERR_INVALID_ARGUMENT
        );
        assert_eq!(
            unsafe { slice_arg(v.as_ptr(), isize::MAX, "p", "n") }
                .unwrap_err()
                .status,
            ndjit_status::NDJIT_ERR_INVALID_ARGUMENT
        );
        assert_eq!(unsafe { slice_arg(v.as_ptr(), 2, "p", "n") }.unwrap(), &v);
    }
}
