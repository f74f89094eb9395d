//! `target="cuda"`: ndjit's GPU backend (`ndjit-gpu`) on NumPy arrays (copied to the device and
//! back) and on device arrays described by `__cuda_array_interface__` (zero-copy). Arguments are
//! normalised in `ndjit/_cuda.py` with scipy's own helpers; this layer describes the arrays.

use crate::driver::{check_writeable, describe, driver_error, SendPtr};
use crate::{compiled::CompiledFilter, errors};
use ndjit_gpu::{ArrayDesc, DType, Footprint, Gpu, GpuError, Mode, Options, Target};
use numpy::{PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// The Python exception for a GPU error: compile and filter failures are the same exceptions the
/// CPU raises; a missing driver or device is `CudaUnavailableError`; the rest `CudaError`.
fn gpu_error(py: Python<'_>, e: GpuError) -> PyErr {
    let class = match &e {
        GpuError::Compile(c) => return errors::compile_error(py, c),
        GpuError::Filter { error, .. } => return errors::runtime_error(py, error),
        GpuError::Invalid(m) => return PyValueError::new_err(m.clone()),
        GpuError::NoDevice(_) => "CudaUnavailableError",
        _ => "CudaError",
    };
    errors::build(py, class, (e.to_string(),))
}

fn dtype(name: &str) -> PyResult<DType> {
    DType::parse(name).map_err(|e| PyTypeError::new_err(e.to_string()))
}

/// The filter's application, as `ndjit-gpu` takes it.
fn options(
    footprint: &numpy::PyReadonlyArrayDyn<'_, bool>,
    mode: &str,
    cval: f64,
    origins: &[isize],
) -> Result<Options, GpuError> {
    let mask = crate::driver::footprint_mask(footprint)
        .map_err(|_| GpuError::Invalid("the footprint must be C-contiguous".into()))?;
    let fp = Footprint::from_mask(footprint.shape(), &mask)?;
    Ok(Options::new(fp)
        .mode(Mode::parse(mode)?)
        .cval(cval)
        .origin(origins))
}

/// `None` when a CUDA device can be used, else why not.
#[pyfunction]
pub fn cuda_unavailable_reason() -> Option<String> {
    Gpu::available().err().map(|e| e.to_string())
}

/// `(name, (major, minor), driver_version, ptx_target)` of device `ordinal`.
#[pyfunction]
#[pyo3(signature = (ordinal=0))]
pub fn cuda_device(py: Python<'_>, ordinal: usize) -> PyResult<(String, (i32, i32), i32, String)> {
    let g = Gpu::get(ordinal).map_err(|e| gpu_error(py, e))?;
    let t = g.target();
    Ok((
        g.name().to_string(),
        g.compute_capability(),
        g.driver_version(),
        format!("sm_{} (PTX ISA {}.{})", t.sm, t.version.0, t.version.1),
    ))
}

/// The PTX of the stencil kernel for these arguments. `sm`: the target (`None`: the device's,
/// or sm_90 without one; 75 is the portable target).
#[pyfunction]
#[pyo3(signature = (compiled, footprint, mode, cval, origins, input_dtype, output_dtype, sm=None))]
#[allow(clippy::too_many_arguments)]
pub fn cuda_ptx(
    py: Python<'_>,
    compiled: &CompiledFilter,
    footprint: numpy::PyReadonlyArrayDyn<'_, bool>,
    mode: &str,
    cval: f64,
    origins: Vec<isize>,
    input_dtype: &str,
    output_dtype: &str,
    sm: Option<u32>,
) -> PyResult<String> {
    let (input, output) = (dtype(input_dtype)?, dtype(output_dtype)?);
    let target = match sm {
        None => Gpu::get(0).map(|g| g.target()).unwrap_or(Target::SM90),
        Some(75) => Target::PORTABLE,
        Some(90) => Target::SM90,
        Some(other) => return Err(PyValueError::new_err(format!(
            "unknown PTX target sm_{other}: use 90 (Hopper) or 75 (portable, any GPU from Turing on)"
        ))),
    };
    let rank = footprint.ndim();
    let opts = options(&footprint, mode, cval, &origins).map_err(|e| gpu_error(py, e))?;
    compiled
        .gpu()
        .ptx(&opts, rank, input, output, target)
        .map_err(|e| gpu_error(py, e))
}

/// Describes a NumPy array for the GPU (the driver's description: byte strides, as NumPy's).
fn host_desc(py: Python<'_>, a: &Bound<'_, PyUntypedArray>) -> PyResult<(*mut u8, ArrayDesc)> {
    let (ptr, dt, shape, strides) = describe(a).map_err(|e| driver_error(py, e))?;
    Ok((
        ptr,
        ArrayDesc {
            dtype: dtype(dt.name())?,
            shape,
            strides,
        },
    ))
}

/// Filters NumPy `input` into NumPy `output` on the GPU (both copied), GIL released.
#[pyfunction]
#[pyo3(signature = (input, output, compiled, footprint, mode, cval, origins))]
#[allow(clippy::too_many_arguments)]
pub fn cuda_filter_host(
    py: Python<'_>,
    input: &Bound<'_, PyUntypedArray>,
    output: &Bound<'_, PyUntypedArray>,
    compiled: &CompiledFilter,
    footprint: numpy::PyReadonlyArrayDyn<'_, bool>,
    mode: &str,
    cval: f64,
    origins: Vec<isize>,
) -> PyResult<()> {
    check_writeable(output)?;
    let (ip, id) = host_desc(py, input)?;
    let (op, od) = host_desc(py, output)?;
    let opts = options(&footprint, mode, cval, &origins).map_err(|e| gpu_error(py, e))?;
    let gpu = Gpu::get(0).map_err(|e| gpu_error(py, e))?;
    let filter = compiled.gpu();
    let (ip, op) = (SendPtr(ip), SendPtr(op));
    py.detach(move || {
        let (ip, op) = (ip, op);
        // SAFETY: the arrays are alive (borrowed by the caller) and described by their own
        // shapes and strides.
        unsafe { filter.run_host_raw(&gpu, ip.0, &id, op.0, &od, &opts) }
    })
    .map_err(|e| gpu_error(py, e))
}

/// A device array from `__cuda_array_interface__`: `(pointer, dtype, shape, byte strides)`.
type DeviceArg = (u64, String, Vec<usize>, Vec<isize>);

/// Filters device array `input` into device array `output` in place on the device (no copies),
/// on the producer's `stream` (the interface's stream handle; `None`: ndjit's own stream), and
/// waits for the result.
#[pyfunction]
#[pyo3(signature = (input, output, compiled, footprint, mode, cval, origins, stream=None))]
#[allow(clippy::too_many_arguments)]
pub fn cuda_filter_device(
    py: Python<'_>,
    input: DeviceArg,
    output: DeviceArg,
    compiled: &CompiledFilter,
    footprint: numpy::PyReadonlyArrayDyn<'_, bool>,
    mode: &str,
    cval: f64,
    origins: Vec<isize>,
    stream: Option<usize>,
) -> PyResult<()> {
    let desc = |a: &DeviceArg| -> PyResult<ArrayDesc> {
        Ok(ArrayDesc {
            dtype: dtype(&a.1)?,
            shape: a.2.clone(),
            strides: a.3.clone(),
        })
    };
    let (id, od) = (desc(&input)?, desc(&output)?);
    let opts = options(&footprint, mode, cval, &origins).map_err(|e| gpu_error(py, e))?;
    if id.is_empty() {
        return Ok(()); // nothing to compute, and an empty array's pointer may be null
    }
    let run = || -> Result<(), GpuError> {
        let ordinal = Gpu::pointer_device(input.0)?;
        if Gpu::pointer_device(output.0)? != ordinal {
            return Err(GpuError::Invalid(
                "the input and output arrays are on different GPUs".into(),
            ));
        }
        let gpu = Gpu::get(ordinal)?;
        let stream = stream.map(|s| s as ndjit_gpu::CUstream);
        // SAFETY: both pointers were checked to be device memory of this GPU; the arrays are kept
        // alive by the caller, which describes them with their interface's shape and strides.
        unsafe {
            compiled
                .gpu()
                .run_raw(&gpu, input.0, &id, output.0, &od, &opts, stream)
        }
    };
    py.detach(run).map_err(|e| gpu_error(py, e))
}
