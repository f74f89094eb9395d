//! The native n-d driver: `generic_filter` over strided arrays described by the caller.

use crate::args::{count, handle, slice_arg};
use crate::error::{guard, guard_value, ndjit_error, ndjit_status, Failure, Result};
use crate::filter::ndjit_filter;
use ndjit_core::driver::{DriverError, Dtype, Footprint, Mode, Options, RawArray, RawArrayMut};
use std::ffi::c_void;

/// The element type of an array (`ndjit_array.dtype`): one of the `NDJIT_BOOL` ...
/// `NDJIT_FLOAT64` constants. Elements are in native byte order and need no alignment.
pub type ndjit_dtype = i32;
/// `bool` as NumPy stores it: one byte, read as its value (0, 1, or any other byte).
pub const NDJIT_BOOL: ndjit_dtype = 0;
/// `uint8_t`.
pub const NDJIT_UINT8: ndjit_dtype = 1;
/// `uint16_t`.
pub const NDJIT_UINT16: ndjit_dtype = 2;
/// `uint32_t`.
pub const NDJIT_UINT32: ndjit_dtype = 3;
/// `uint64_t`.
pub const NDJIT_UINT64: ndjit_dtype = 4;
/// `int8_t`.
pub const NDJIT_INT8: ndjit_dtype = 5;
/// `int16_t`.
pub const NDJIT_INT16: ndjit_dtype = 6;
/// `int32_t`.
pub const NDJIT_INT32: ndjit_dtype = 7;
/// `int64_t`.
pub const NDJIT_INT64: ndjit_dtype = 8;
/// `float`.
pub const NDJIT_FLOAT32: ndjit_dtype = 9;
/// `double`.
pub const NDJIT_FLOAT64: ndjit_dtype = 10;

/// How the input is extended beyond its edges (`ndjit_options_set_mode`), as scipy's `mode=`:
/// one of the `NDJIT_MODE_*` constants.
pub type ndjit_mode = i32;
/// `d c b a | a b c d | d c b a`: reflect about the edge of the last pixel (the default).
pub const NDJIT_MODE_REFLECT: ndjit_mode = 0;
/// `k k k k | a b c d | k k k k`: the constant `cval`.
pub const NDJIT_MODE_CONSTANT: ndjit_mode = 1;
/// `a a a a | a b c d | d d d d`: the nearest edge pixel.
pub const NDJIT_MODE_NEAREST: ndjit_mode = 2;
/// `d c b | a b c d | c b a`: reflect about the centre of the last pixel.
pub const NDJIT_MODE_MIRROR: ndjit_mode = 3;
/// `a b c d | a b c d | a b c d`: wrap around to the opposite edge.
pub const NDJIT_MODE_WRAP: ndjit_mode = 4;
/// scipy's `grid-mirror`: inside filters the same as `NDJIT_MODE_REFLECT`.
pub const NDJIT_MODE_GRID_MIRROR: ndjit_mode = 5;
/// scipy's `grid-constant`: inside filters the same as `NDJIT_MODE_CONSTANT`.
pub const NDJIT_MODE_GRID_CONSTANT: ndjit_mode = 6;
/// scipy's `grid-wrap`: inside filters the same as `NDJIT_MODE_WRAP`.
pub const NDJIT_MODE_GRID_WRAP: ndjit_mode = 7;

/// The most dimensions an array may have (NumPy's limit).
pub const NDJIT_MAX_DIMS: i32 = 64;

fn dtype_of(code: ndjit_dtype, what: &str) -> Result<Dtype> {
    Ok(match code {
        NDJIT_BOOL => Dtype::Bool,
        NDJIT_UINT8 => Dtype::U8,
        NDJIT_UINT16 => Dtype::U16,
        NDJIT_UINT32 => Dtype::U32,
        NDJIT_UINT64 => Dtype::U64,
        NDJIT_INT8 => Dtype::I8,
        NDJIT_INT16 => Dtype::I16,
        NDJIT_INT32 => Dtype::I32,
        NDJIT_INT64 => Dtype::I64,
        NDJIT_FLOAT32 => Dtype::F32,
        NDJIT_FLOAT64 => Dtype::F64,
        _ => {
            return Err(Failure::unknown_enum(
                what,
                code,
                "NDJIT_BOOL .. NDJIT_FLOAT64 (0 .. 10)",
            ))
        }
    })
}

fn mode_of(code: ndjit_mode) -> Result<Mode> {
    Ok(match code {
        NDJIT_MODE_REFLECT => Mode::Reflect,
        NDJIT_MODE_CONSTANT => Mode::Constant,
        NDJIT_MODE_NEAREST => Mode::Nearest,
        NDJIT_MODE_MIRROR => Mode::Mirror,
        NDJIT_MODE_WRAP => Mode::Wrap,
        NDJIT_MODE_GRID_MIRROR => Mode::GridMirror,
        NDJIT_MODE_GRID_CONSTANT => Mode::GridConstant,
        NDJIT_MODE_GRID_WRAP => Mode::GridWrap,
        _ => {
            return Err(Failure::unknown_enum(
                "mode",
                code,
                "the NDJIT_MODE_* constants (0 .. 7)",
            ))
        }
    })
}

/// An n-d array in memory the caller owns: a block of `nbytes` bytes at `data`, holding
/// elements of type `dtype` laid out by `shape` and `strides` (as a NumPy array over a buffer).
///
/// Element `(i0, i1, ...)` is at byte `offset + i0 * strides[0] + i1 * strides[1] + ...` from
/// `data`. ndjit checks that every element lies inside `[data, data + nbytes)` and refuses the
/// array otherwise, so it never touches memory outside the block; the caller promises that the
/// block itself is valid (readable for an input, writable for an output) for the whole call.
///
/// For a C-contiguous array set `strides` to NULL and `offset` to 0: zero-initialising the
/// struct and filling `data`, `nbytes`, `dtype`, `ndim` and `shape` is enough. The struct is only
/// read during the call that receives it; ndjit keeps no pointer to it or its arrays.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ndjit_array {
    /// Start of the memory block. May be NULL only for an array with no elements.
    pub data: *mut c_void,
    /// Size of the block in bytes (>= 0).
    pub nbytes: isize,
    /// Byte offset of element `(0, 0, ..., 0)` from `data` (>= 0; non-zero when some strides are
    /// negative, e.g. for a flipped view).
    pub offset: isize,
    /// Element type: an `NDJIT_*` dtype constant.
    pub dtype: ndjit_dtype,
    /// Number of dimensions, 0 to `NDJIT_MAX_DIMS`. A 0-d array is one element.
    pub ndim: isize,
    /// `ndim` extents, each >= 0. May be NULL when `ndim` is 0.
    pub shape: *const isize,
    /// `ndim` strides in **bytes** (any sign, any multiple), or NULL for C-contiguous order.
    pub strides: *const isize,
}

/// An array checked against the memory it describes.
struct Checked {
    /// Element `(0, ..., 0)`.
    origin: *mut u8,
    dtype: Dtype,
    shape: Vec<usize>,
    strides: Vec<isize>,
}

/// Checks an array argument against the memory it describes.
///
/// # Safety
/// `a.shape` and `a.strides` are NULL or point to `a.ndim` readable values.
unsafe fn check(a: &ndjit_array, what: &str) -> Result<Checked> {
    let dtype = dtype_of(a.dtype, &format!("{what}.dtype"))?;
    let item = dtype.itemsize();
    let ndim = count(a.ndim, &format!("{what}.ndim"))?;
    if ndim > NDJIT_MAX_DIMS as usize {
        return Err(Failure::invalid(format!(
            "`{what}.ndim` is {ndim}, more than NDJIT_MAX_DIMS ({NDJIT_MAX_DIMS})"
        )));
    }
    // SAFETY: forwarded contract.
    let shape_in = unsafe {
        slice_arg(
            a.shape,
            a.ndim,
            &format!("{what}.shape"),
            &format!("{what}.ndim"),
        )
    }?;
    let mut shape = Vec::with_capacity(ndim);
    for (k, &n) in shape_in.iter().enumerate() {
        shape.push(count(n, &format!("{what}.shape[{k}]"))?);
    }
    let elements = shape.iter().try_fold(1usize, |acc, &n| acc.checked_mul(n));
    let too_big = || {
        Failure::shape(format!(
            "`{what}` has more elements than fit in memory (shape {shape:?})"
        ))
    };
    let elements = elements.ok_or_else(too_big)?;
    let strides = if a.strides.is_null() {
        // C order: the last axis is contiguous.
        let mut strides = vec![0isize; ndim];
        let mut step: isize = item as isize;
        for k in (0..ndim).rev() {
            strides[k] = step;
            step = step
                .checked_mul(shape[k].max(1) as isize)
                .ok_or_else(too_big)?;
        }
        strides
    } else {
        // SAFETY: forwarded contract.
        unsafe {
            slice_arg(
                a.strides,
                a.ndim,
                &format!("{what}.strides"),
                &format!("{what}.ndim"),
            )
        }?
        .to_vec()
    };
    let nbytes = count(a.nbytes, &format!("{what}.nbytes"))?;
    let offset = count(a.offset, &format!("{what}.offset"))?;
    if offset > nbytes {
        return Err(Failure::shape(format!(
            "`{what}.offset` ({offset}) is past the end of the block (`{what}.nbytes` = {nbytes})"
        )));
    }
    if elements == 0 {
        // Nothing is read or written; the driver still wants a non-NULL, well-formed pointer.
        let origin = if a.data.is_null() {
            std::ptr::NonNull::<u64>::dangling().as_ptr().cast()
        } else {
            a.data.cast()
        };
        return Ok(Checked {
            origin,
            dtype,
            shape,
            strides,
        });
    }
    if a.data.is_null() {
        return Err(Failure::null(&format!("{what}.data")));
    }
    // The lowest and highest byte any element touches, relative to `data` (i128: no overflow for
    // 64 axes of isize extents).
    let (mut lo, mut hi) = (offset as i128, offset as i128 + item as i128);
    for (&n, &s) in shape.iter().zip(&strides) {
        let far = s as i128 * (n as i128 - 1);
        if far < 0 {
            lo += far;
        } else {
            hi += far;
        }
    }
    if lo < 0 || hi > nbytes as i128 {
        return Err(Failure::shape(format!(
            "`{what}` reaches bytes {lo} .. {hi} of its block, outside the {nbytes} bytes described \
             (shape {shape:?}, strides {strides:?}, offset {offset}, {item}-byte elements)"
        )));
    }
    if (a.data as usize).checked_add(nbytes).is_none() {
        return Err(Failure::shape(format!(
            "`{what}.data` + `{what}.nbytes` wraps around the address space"
        )));
    }
    // SAFETY: `offset <= nbytes` and the block is one allocation per the caller's promise.
    let origin = unsafe { a.data.cast::<u8>().add(offset) };
    Ok(Checked {
        origin,
        dtype,
        shape,
        strides,
    })
}

/// The options of a driver run (scipy's `generic_filter` keywords besides the arrays and the
/// function): footprint, mode, cval, origin, axes, thread count.
///
/// Created by `ndjit_options_new` with scipy's defaults (`mode='reflect'`, `cval=0.0`, zero
/// origins, all axes) and no footprint: set one with `ndjit_options_set_size` or
/// `ndjit_options_set_footprint` before running. Freed with `ndjit_options_free`.
///
/// Setters copy their arguments and check them at once where they can (negative sizes, unknown
/// modes); what depends on the image (origin and footprint ranks, axes in range) is checked by
/// `ndjit_generic_filter`. Not synchronised: setters must not run concurrently with other uses
/// of the same options; several threads may run `ndjit_generic_filter` with the same options at
/// once.
pub struct ndjit_options {
    footprint: Option<Footprint>,
    mode: Mode,
    cval: f64,
    origin: Vec<isize>,
    /// As given: negative entries count from the end, resolved against the image's rank.
    axes: Option<Vec<isize>>,
    threads: Option<usize>,
}

/// Creates driver options with scipy's defaults and no footprint. The caller owns the result
/// and frees it with `ndjit_options_free`. Returns NULL only on an internal error. Thread-safe.
#[no_mangle]
pub extern "C" fn ndjit_options_new() -> *mut ndjit_options {
    guard_value(std::ptr::null_mut(), || {
        Box::into_raw(Box::new(ndjit_options {
            footprint: None,
            mode: Mode::Reflect,
            cval: 0.0,
            origin: Vec::new(),
            axes: None,
            threads: None,
        }))
    })
}

/// Frees options. NULL is allowed and does nothing. Needs exclusive access: no other thread may be
/// using `options` (a run that started with them must have returned).
///
/// # Safety
/// `options` is NULL or a live object from `ndjit_options_new`, not used after this call.
#[no_mangle]
pub unsafe extern "C" fn ndjit_options_free(options: *mut ndjit_options) {
    if !options.is_null() {
        // SAFETY: per the contract, it came from `Box::into_raw` and is freed once.
        guard_value((), || drop(unsafe { Box::from_raw(options) }));
    }
}

/// Shared part of the setters.
///
/// # Safety
/// `options` is NULL or live and not in use elsewhere; `error` NULL or writable.
unsafe fn set(
    options: *mut ndjit_options,
    error: *mut *mut ndjit_error,
    f: impl FnOnce(&mut ndjit_options) -> Result<()>,
) -> ndjit_status {
    guard(error, || {
        // SAFETY: forwarded contract.
        let o = unsafe { options.as_mut() }.ok_or_else(|| Failure::null("options"))?;
        f(o)
    })
}

/// A footprint that is a full box (scipy's `size=`): `ndim` extents, one per filtered axis
/// (one per image axis unless axes are set). The filter's `filter_size` is their product.
/// Replaces an earlier footprint. `size` is copied.
///
/// Like every `ndjit_options_set_*`, this needs exclusive access to `options`: no other thread
/// may use the same options (for example in `ndjit_generic_filter`) meanwhile.
///
/// Errors: `NDJIT_ERR_NULL` (`options`, or `size` with `ndim > 0`), `NDJIT_ERR_INVALID_ARGUMENT`
/// (negative `ndim` or extent, `ndim > NDJIT_MAX_DIMS`). An extent of 0 is accepted here and
/// refused by `ndjit_generic_filter`, as scipy does.
///
/// # Safety
/// `options` is NULL or live options not in use by another thread; `size` is NULL or points to
/// `ndim` readable values; `error` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ndjit_options_set_size(
    options: *mut ndjit_options,
    size: *const isize,
    ndim: isize,
    error: *mut *mut ndjit_error,
) -> ndjit_status {
    // SAFETY: forwarded contracts.
    unsafe {
        set(options, error, |o| {
            let size = extents(size, ndim, "size")?;
            o.footprint = Some(Footprint::from_size(&size));
            Ok(())
        })
    }
}

/// `ndim` extents at `p`, each >= 0.
///
/// # Safety
/// `p` is NULL or points to `ndim` readable values.
unsafe fn extents(p: *const isize, ndim: isize, what: &str) -> Result<Vec<usize>> {
    // SAFETY: forwarded contract.
    let v = unsafe { slice_arg(p, ndim, what, "ndim") }?;
    if v.len() > NDJIT_MAX_DIMS as usize {
        return Err(Failure::invalid(format!(
            "`ndim` is {}, more than NDJIT_MAX_DIMS ({NDJIT_MAX_DIMS})",
            v.len()
        )));
    }
    v.iter()
        .enumerate()
        .map(|(k, &n)| count(n, &format!("{what}[{k}]")))
        .collect()
}

/// A footprint of any shape (scipy's `footprint=`): `ndim` extents in `shape` and a row-major
/// mask of `shape[0] * shape[1] * ...` bytes, non-zero for the neighbours the filter sees. The
/// filter's buffer holds those neighbours in row-major order; `filter_size` is their count.
///
/// Errors: `NDJIT_ERR_NULL` (`options`, `shape` with `ndim > 0`, `mask`),
/// `NDJIT_ERR_INVALID_ARGUMENT` (negative `ndim` or extent, `ndim > NDJIT_MAX_DIMS`, a mask too
/// large for memory).
///
/// # Safety
/// `options` is NULL or live options not in use by another thread; `shape` is NULL or points to
/// `ndim` readable values; `mask` is NULL or points to the product of the extents readable
/// bytes; `error` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ndjit_options_set_footprint(
    options: *mut ndjit_options,
    shape: *const isize,
    ndim: isize,
    mask: *const u8,
    error: *mut *mut ndjit_error,
) -> ndjit_status {
    // SAFETY: forwarded contracts.
    unsafe {
        set(options, error, |o| {
            let shape = extents(shape, ndim, "shape")?;
            let n = shape
                .iter()
                .try_fold(1usize, |a, &d| a.checked_mul(d))
                .filter(|&n| n <= isize::MAX as usize)
                .ok_or_else(|| {
                    Failure::invalid(format!("a footprint of shape {shape:?} is too large"))
                })?;
            if mask.is_null() {
                return Err(Failure::null("mask"));
            }
            let mask = slice_arg(mask, n as isize, "mask", "the product of the extents")?;
            let fp = Footprint::new(shape, mask.iter().map(|&b| b != 0).collect())
                .map_err(|e| driver_failure(&e))?;
            o.footprint = Some(fp);
            Ok(())
        })
    }
}

/// The boundary mode (default `NDJIT_MODE_REFLECT`). `NDJIT_ERR_UNKNOWN_ENUM` for a value that
/// is not an `NDJIT_MODE_*` constant; `NDJIT_ERR_NULL` if `options` is NULL.
///
/// # Safety
/// `options` is NULL or live options not in use by another thread; `error` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ndjit_options_set_mode(
    options: *mut ndjit_options,
    mode: ndjit_mode,
    error: *mut *mut ndjit_error,
) -> ndjit_status {
    // SAFETY: forwarded contracts.
    unsafe {
        set(options, error, |o| {
            o.mode = mode_of(mode)?;
            Ok(())
        })
    }
}

/// The value outside the image for `NDJIT_MODE_CONSTANT` and `NDJIT_MODE_GRID_CONSTANT`
/// (default 0.0; NaN and infinities are allowed). `NDJIT_ERR_NULL` if `options` is NULL.
///
/// # Safety
/// `options` is NULL or live options not in use by another thread; `error` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ndjit_options_set_cval(
    options: *mut ndjit_options,
    cval: f64,
    error: *mut *mut ndjit_error,
) -> ndjit_status {
    // SAFETY: forwarded contracts.
    unsafe {
        set(options, error, |o| {
            o.cval = cval;
            Ok(())
        })
    }
}

/// Origins, one per filtered axis (in the order of the axes), as scipy's `origin=`: a positive
/// origin shifts the footprint toward lower indices; `footprint_extent / 2 + origin` must lie in
/// `[0, footprint_extent)`. `n = 0` restores the default (all zeros); `origin` may then be NULL.
///
/// Errors: `NDJIT_ERR_NULL`, `NDJIT_ERR_INVALID_ARGUMENT` (negative `n`). Lengths and ranges are
/// checked against the footprint by `ndjit_generic_filter` (`NDJIT_ERR_SHAPE`).
///
/// # Safety
/// `options` is NULL or live options not in use by another thread; `origin` is NULL or points
/// to `n` readable values; `error` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ndjit_options_set_origin(
    options: *mut ndjit_options,
    origin: *const isize,
    n: isize,
    error: *mut *mut ndjit_error,
) -> ndjit_status {
    // SAFETY: forwarded contracts.
    unsafe {
        set(options, error, |o| {
            o.origin = slice_arg(origin, n, "origin", "n")?.to_vec();
            Ok(())
        })
    }
}

/// The axes to filter (scipy's `axes=`), `n` distinct axis numbers; negative numbers count from
/// the last axis (-1). The footprint's dimensions apply to these axes in increasing order,
/// origins in the order given. `axes` NULL restores the default, all axes (`n` is then
/// ignored).
///
/// Errors: `NDJIT_ERR_NULL` (`options`), `NDJIT_ERR_INVALID_ARGUMENT` (negative `n`). Whether the
/// axes exist and are distinct is checked by `ndjit_generic_filter`.
///
/// # Safety
/// `options` is NULL or live options not in use by another thread; `axes` is NULL or points to
/// `n` readable values; `error` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ndjit_options_set_axes(
    options: *mut ndjit_options,
    axes: *const isize,
    n: isize,
    error: *mut *mut ndjit_error,
) -> ndjit_status {
    // SAFETY: forwarded contracts.
    unsafe {
        set(options, error, |o| {
            o.axes = if axes.is_null() {
                None
            } else {
                let v = slice_arg(axes, n, "axes", "n")?;
                if v.len() > NDJIT_MAX_DIMS as usize {
                    return Err(Failure::invalid(format!(
                        "`n` is {}, more than NDJIT_MAX_DIMS ({NDJIT_MAX_DIMS})",
                        v.len()
                    )));
                }
                Some(v.to_vec())
            };
            Ok(())
        })
    }
}

/// Worker threads for `ndjit_generic_filter`: 0 (the default) uses every core, 1 runs on the
/// calling thread. The result does not depend on it. `NDJIT_ERR_INVALID_ARGUMENT` if negative.
///
/// # Safety
/// `options` is NULL or live options not in use by another thread; `error` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ndjit_options_set_threads(
    options: *mut ndjit_options,
    threads: isize,
    error: *mut *mut ndjit_error,
) -> ndjit_status {
    // SAFETY: forwarded contracts.
    unsafe {
        set(options, error, |o| {
            let n = count(threads, "threads")?;
            o.threads = (n > 0).then_some(n);
            Ok(())
        })
    }
}

/// How a driver error reaches C: the status, scipy's exception type as the kind, scipy's message.
fn driver_failure(e: &DriverError) -> Failure {
    use ndjit_status::*;
    if let DriverError::Filter { error, position } = e {
        let mut f = Failure::runtime(error);
        let at = format!(" at pixel {position:?}");
        f.message.push_str(&at);
        let mut text = format!(
            "{}: {} (at {}:{}){at}",
            error.exception, error.message, f.line, f.column
        );
        if let Some(s) = &error.snippet {
            text.push('\n');
            text.push_str(s);
        }
        f.text = Some(text);
        return f;
    }
    let status = match e {
        DriverError::BadMode(_) | DriverError::UnsupportedDtype { .. } => NDJIT_ERR_UNKNOWN_ENUM,
        // A footprint or array too large to exist, or to allocate: an absurd size, as for the
        // other arguments checked here.
        DriverError::AxisOutOfRange { .. }
        | DriverError::DuplicateAxes
        | DriverError::TooLarge(_)
        | DriverError::OutOfMemory { .. } => NDJIT_ERR_INVALID_ARGUMENT,
        DriverError::SequenceLength { .. }
        | DriverError::FootprintRank { .. }
        | DriverError::InvalidOrigin { .. }
        | DriverError::OutputShape { .. }
        | DriverError::BadFootprint(_)
        | DriverError::BadArray(_) => NDJIT_ERR_SHAPE,
        // Stopped by the poll hook (`ndjit_set_poll_hook`), as a call of the filter is.
        DriverError::Cancelled => NDJIT_ERR_RUNTIME,
        _ => NDJIT_ERR_INTERNAL,
    };
    let mut f = Failure::new(status, e.to_string());
    f.kind = e.python_type().to_string();
    f
}

/// Runs `filter` over an n-d image: for each element of `input`, the values under the footprint
/// (extended beyond the edges by the mode) are gathered into a buffer and the filter's result is
/// written to the same element of `output`, converted to the output's dtype with a C cast. This
/// is scipy's `generic_filter(input, filter, footprint=..., output=..., mode=..., cval=...,
/// origin=..., axes=...)` with the same results, computed natively and in parallel.
///
/// - `input`, `output`: arrays of the same shape, any dtypes. The output may overlap the input
///   (the run then proceeds sequentially in C order, reproducing scipy's in-place result; where
///   either array is unaligned, scipy filters through aligned copies, reading the input as it
///   was, and so does ndjit); an output whose own elements may overlap (e.g. a zero stride) is
///   also written sequentially.
/// - `options`: footprint (required), mode, cval, origin, axes, threads.
///
/// Errors: `NDJIT_ERR_NULL` (any handle, a NULL `data`/`shape` where elements exist),
/// `NDJIT_ERR_UNKNOWN_ENUM` (a dtype), `NDJIT_ERR_INVALID_ARGUMENT` (negative sizes, too many
/// dimensions, axes out of range or repeated, no footprint set), `NDJIT_ERR_SHAPE` (an array
/// reaching outside its block, shapes that differ, a footprint or origin that does not fit),
/// `NDJIT_ERR_RUNTIME` (the filter failed on some pixel: the error names the first such pixel in
/// C order, with the line and column of the failing expression; or the poll hook stopped the
/// run: the kind `"KeyboardInterrupt"`). Output elements may have been
/// written when an error is returned during the run.
///
/// Thread-safe: several threads may run filters at once, with the same filter and options, as
/// long as their outputs do not overlap each other or another thread's input. The filter's and
/// contexts' failure slots are not used.
///
/// # Safety
/// Each handle is NULL or live; `input` and `output` are NULL or point to readable
/// `ndjit_array` structs whose `shape`/`strides` point to `ndim` values, whose blocks are valid
/// for reading (input) and writing (output) for the whole call and not written by anyone else
/// meanwhile; `error` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ndjit_generic_filter(
    filter: *const ndjit_filter,
    input: *const ndjit_array,
    output: *const ndjit_array,
    options: *const ndjit_options,
    error: *mut *mut ndjit_error,
) -> ndjit_status {
    guard(error, || {
        // SAFETY (all): forwarded contracts.
        let filter = unsafe { handle(filter, "filter") }?;
        let input = unsafe { handle(input, "input") }?;
        let output = unsafe { handle(output, "output") }?;
        let options = unsafe { handle(options, "options") }?;
        let inp = unsafe { check(input, "input") }?;
        let out = unsafe { check(output, "output") }?;
        if inp.shape != out.shape {
            return Err(Failure::shape(format!(
                "`output` has shape {:?}, but `input` has shape {:?}",
                out.shape, inp.shape
            )));
        }
        let footprint = options.footprint.clone().ok_or_else(|| {
            Failure::invalid(
                "no footprint: call ndjit_options_set_size or ndjit_options_set_footprint first",
            )
        })?;
        // The driver normalises negative axes and runs a self-overlapping output sequentially.
        let mut opts = Options::new(footprint);
        opts.mode = options.mode;
        opts.cval = options.cval;
        opts.origin = options.origin.clone();
        opts.axes = options.axes.clone();
        opts.threads = options.threads;
        let raw_in = RawArray {
            ptr: inp.origin,
            dtype: inp.dtype,
            shape: inp.shape.clone(),
            strides: inp.strides.clone(),
        };
        let raw_out = RawArrayMut {
            ptr: out.origin,
            dtype: out.dtype,
            shape: out.shape.clone(),
            strides: out.strides.clone(),
        };
        // SAFETY: every element of both arrays lies inside a block the caller vouches for
        // (checked above); the driver handles overlap between input and output.
        unsafe { ndjit_core::driver::generic_filter_raw(&raw_in, &raw_out, &filter.inner, &opts) }
            .map_err(|e| driver_failure(&e))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arr(
        data: *mut c_void,
        nbytes: isize,
        offset: isize,
        dtype: ndjit_dtype,
        shape: &[isize],
        strides: Option<&[isize]>,
    ) -> ndjit_array {
        ndjit_array {
            data,
            nbytes,
            offset,
            dtype,
            ndim: shape.len() as isize,
            shape: shape.as_ptr(),
            strides: strides.map_or(std::ptr::null(), |s| s.as_ptr()),
        }
    }

    #[test]
    fn bounds_are_checked() {
        let mut buf = [0u8; 48];
        let p = buf.as_mut_ptr().cast();
        // 2x3 f64, C order: exactly 48 bytes.
        let c = unsafe { check(&arr(p, 48, 0, NDJIT_FLOAT64, &[2, 3], None), "a") }.unwrap();
        assert_eq!(c.strides, vec![24, 8]);
        assert_eq!(
            unsafe { check(&arr(p, 47, 0, NDJIT_FLOAT64, &[2, 3], None), "a") }
                .err()
                .unwrap()
                .status,
            ndjit_status::NDJIT_ERR_SHAPE
        );
        // Flipped rows: element 0 at byte 24, stride -24.
        assert!(unsafe {
            check(
                &arr(p, 48, 24, NDJIT_FLOAT64, &[2, 3], Some(&[-24, 8])),
                "a",
            )
        }
        .is_ok());
        assert!(unsafe {
            check(
                &arr(p, 48, 16, NDJIT_FLOAT64, &[2, 3], Some(&[-24, 8])),
                "a",
            )
        }
        .is_err());
        // Zero strides and overlapping rows are allowed (the driver writes such outputs
        // sequentially: `driver::array`'s `self_overlapping_outputs_are_recognised`).
        assert!(
            unsafe { check(&arr(p, 8, 0, NDJIT_FLOAT64, &[2, 3], Some(&[0, 0])), "a") }.is_ok()
        );
        assert!(
            unsafe { check(&arr(p, 48, 0, NDJIT_FLOAT64, &[2, 3], Some(&[8, 8])), "a") }.is_ok()
        );
        // Empty arrays need no memory.
        assert!(
            unsafe {
                check(
                    &arr(std::ptr::null_mut(), 0, 0, NDJIT_UINT8, &[0, 5], None),
                    "a",
                )
            }
            .unwrap()
            .shape
                == [0, 5]
        );
        // Huge strides do not overflow.
        assert!(unsafe {
            check(
                &arr(
                    p,
                    48,
                    0,
                    NDJIT_FLOAT64,
                    &[2, 2],
                    Some(&[isize::MAX, isize::MIN]),
                ),
                "a",
            )
        }
        .is_err());
        assert_eq!(
            unsafe { check(&arr(p, 48, 0, 11, &[2, 3], None), "a") }
                .err()
                .unwrap()
                .status,
            ndjit_status::NDJIT_ERR_UNKNOWN_ENUM
        );
        assert_eq!(
            unsafe { check(&arr(p, 48, 0, NDJIT_UINT8, &[-1, 3], None), "a") }
                .err()
                .unwrap()
                .status,
            ndjit_status::NDJIT_ERR_INVALID_ARGUMENT
        );
        assert_eq!(
            unsafe { check(&arr(p, 48, 49, NDJIT_UINT8, &[1], None), "a") }
                .err()
                .unwrap()
                .status,
            ndjit_status::NDJIT_ERR_SHAPE
        );
    }
}
