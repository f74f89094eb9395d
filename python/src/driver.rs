//! `ndjit._core.generic_filter`: the native n-d driver on NumPy arrays, with the GIL released.
//! Argument handling (footprint, origins, output allocation) is done in `ndjit/_scipy_args.py`
//! exactly as scipy does it; this layer only describes the arrays to the driver.

use crate::{compiled::CompiledFilter, errors};
use ndjit::driver::{self, DriverError, Dtype, Footprint, Options, RawArray, RawArrayMut};
use numpy::{PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// A NumPy array as the driver sees it: data pointer, dtype, shape and byte strides.
pub(crate) type ArrayParts = (*mut u8, Dtype, Vec<usize>, Vec<isize>);

/// Describes a NumPy array to the driver.
pub(crate) fn describe(a: &Bound<'_, PyUntypedArray>) -> Result<ArrayParts, DriverError> {
    let dtype = a.dtype();
    let kind = dtype.kind() as char;
    let itemsize = dtype.itemsize();
    let dt = if dtype.is_native_byteorder() != Some(false) {
        Dtype::from_kind(kind, itemsize)?
    } else {
        return Err(DriverError::UnsupportedDtype {
            dtype: format!("{kind}{itemsize} (non-native byte order)"),
            complex: kind == 'c',
        });
    };
    // SAFETY: a live ndarray's data pointer; the driver reads/writes only within shape × strides.
    let ptr = unsafe { (*a.as_array_ptr()).fields.data as *mut u8 };
    Ok((ptr, dt, a.shape().to_vec(), a.strides().to_vec()))
}

/// The input and a writable output, described for the driver.
fn arrays(
    input: &Bound<'_, PyUntypedArray>,
    output: &Bound<'_, PyUntypedArray>,
) -> Result<(RawArray, RawArrayMut), DriverError> {
    let (ip, idt, ishape, istrides) = describe(input)?;
    let (op, odt, oshape, ostrides) = describe(output)?;
    Ok((
        RawArray {
            ptr: ip as *const u8,
            dtype: idt,
            shape: ishape,
            strides: istrides,
        },
        RawArrayMut {
            ptr: op,
            dtype: odt,
            shape: oshape,
            strides: ostrides,
        },
    ))
}

pub(crate) fn check_writeable(output: &Bound<'_, PyUntypedArray>) -> PyResult<()> {
    // SAFETY: reading the flags of a live array (NPY_ARRAY_WRITEABLE = 0x0400).
    if unsafe { (*output.as_array_ptr()).fields.flags } & 0x0400 == 0 {
        return Err(PyValueError::new_err("output array is read-only"));
    }
    Ok(())
}

/// A footprint's row-major entries. Read as a slice: an ndarray view (`as_array`) panics above 32
/// dimensions, and NumPy arrays have up to 64. `ndjit/_scipy_args.py` makes the footprint C-contiguous.
pub(crate) fn footprint_mask(
    footprint: &numpy::PyReadonlyArrayDyn<'_, bool>,
) -> PyResult<Vec<bool>> {
    if !footprint.is_c_contiguous() {
        return Err(PyValueError::new_err("the footprint must be C-contiguous"));
    }
    Ok(footprint.as_slice()?.to_vec())
}

/// The exception scipy would raise for a driver error.
pub fn driver_error(py: Python<'_>, e: DriverError) -> PyErr {
    if let Some(rt) = e.runtime_error() {
        return errors::runtime_error(py, rt);
    }
    let msg = e.to_string();
    match e.exception() {
        ndjit::Exception::KeyboardInterrupt => crate::interrupt::take_pending(msg),
        exception => errors::builtin_exception(py, exception, msg),
    }
}

/// Filters `input` into `output` (same shape, any supported dtypes) with an expanded n-d
/// `footprint` (bool, one dimension per input axis) and per-axis `origins`; `region`, a
/// `(start, stop)` per axis, computes only that box (`Options::region`).
#[pyfunction]
#[pyo3(signature = (input, output, compiled, footprint, mode, cval, origins, threads=None, region=None))]
#[allow(clippy::too_many_arguments)]
pub fn generic_filter(
    py: Python<'_>,
    input: &Bound<'_, PyUntypedArray>,
    output: &Bound<'_, PyUntypedArray>,
    compiled: &CompiledFilter,
    footprint: numpy::PyReadonlyArrayDyn<'_, bool>,
    mode: &str,
    cval: f64,
    origins: Vec<isize>,
    threads: Option<usize>,
    region: Option<Vec<(usize, usize)>>,
) -> PyResult<()> {
    check_writeable(output)?;
    let mask = footprint_mask(&footprint)?;
    let run = || -> Result<(RawArray, RawArrayMut, Options), DriverError> {
        let (i, o) = arrays(input, output)?;
        let fp = Footprint::new(footprint.shape().to_vec(), mask)?;
        let mut opts = Options::new(fp)
            .mode(mode.parse()?)
            .cval(cval)
            .origin(&origins);
        opts.threads = threads;
        opts.region = region.map(|r| r.into_iter().map(|(a, b)| a..b).collect());
        Ok((i, o, opts))
    };
    let (i, o, opts) = run().map_err(|e| driver_error(py, e))?;
    let filter = compiled.filter.clone();
    // Raw pointers are not Send; the arrays stay alive (borrowed above) while the GIL is released.
    let (i, o) = (SendPtr(i), SendPtr(o));
    let r = crate::interrupt::detached(py, move || {
        let (i, o) = (i, o);
        // SAFETY: the arrays describe live NumPy memory of their dtype, shape and strides.
        unsafe { driver::generic_filter_raw(&i.0, &o.0, &filter, &opts) }
    });
    r.map_err(|e| driver_error(py, e))
}

/// Moves array descriptions into the GIL-free closure (the memory is kept alive by the caller).
pub(crate) struct SendPtr<T>(pub(crate) T);
unsafe impl<T> Send for SendPtr<T> {}

/// `generic_filter1d` on NumPy arrays: `compiled` has the generic_filter1d signature; argument
/// checks were done in `ndjit/_driver.py` as scipy does them.
#[pyfunction]
#[pyo3(signature = (input, output, compiled, filter_size, axis, mode, cval, origin, threads=None))]
#[allow(clippy::too_many_arguments)]
pub fn generic_filter1d(
    py: Python<'_>,
    input: &Bound<'_, PyUntypedArray>,
    output: &Bound<'_, PyUntypedArray>,
    compiled: &CompiledFilter,
    filter_size: usize,
    axis: isize,
    mode: &str,
    cval: f64,
    origin: isize,
    threads: Option<usize>,
) -> PyResult<()> {
    check_writeable(output)?;
    let prepared = || -> Result<(RawArray, RawArrayMut, Options), DriverError> {
        let (i, o) = arrays(input, output)?;
        let mut opts = Options::filter1d(filter_size, axis)
            .mode(mode.parse()?)
            .cval(cval)
            .origin(&[origin]);
        opts.threads = threads;
        Ok((i, o, opts))
    };
    let (i, o, opts) = prepared().map_err(|e| driver_error(py, e))?;
    let filter = compiled.filter.clone();
    let (i, o) = (SendPtr(i), SendPtr(o));
    let r = crate::interrupt::detached(py, move || {
        let (i, o) = (i, o);
        // SAFETY: as in `generic_filter`.
        unsafe { driver::generic_filter_raw(&i.0, &o.0, &filter, &opts) }
    });
    r.map_err(|e| driver_error(py, e))
}
