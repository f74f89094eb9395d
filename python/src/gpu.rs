//! `target="cuda"`: ndjit's GPU backend (`ndjit-gpu`) on NumPy arrays (copied to the device and
//! back) and on device arrays described by `__cuda_array_interface__` (zero-copy). Arguments are
//! normalised in `ndjit/_driver.py` with scipy's own helpers; this layer describes the arrays and
//! hands them to the driver (`ndjit::driver::execute`), whose executor is the GPU.

use crate::driver::{check_writeable, describe, driver_error, footprint_mask, SendPtr};
use crate::{compiled::CompiledFilter, errors};
use ndjit::driver::{checked_c_strides, DriverError, Dtype, Footprint, Mode, Options};
use ndjit_gpu::{ArrayDesc, Gpu, GpuError, Target};
use numpy::{PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The Python exception for a GPU error: argument, compile and filter failures are the same
/// exceptions the CPU raises; a missing driver or device is `CudaUnavailableError`; the rest
/// `CudaError`.
fn gpu_error(py: Python<'_>, e: GpuError) -> PyErr {
    let class = match &e {
        GpuError::Arguments(a) => return driver_error(py, a.clone()),
        GpuError::Compile(c) => return errors::compile_error(py, c),
        GpuError::Filter { error, .. } => return errors::runtime_error(py, error),
        GpuError::Invalid(m) => return PyValueError::new_err(m.clone()),
        GpuError::NoDevice(_) => "CudaUnavailableError",
        _ => "CudaError",
    };
    errors::build(py, class, (e.to_string(),))
}

/// The driver's options from the normalised arguments of `ndjit/_driver.py` (a footprint over
/// every axis, one origin per axis): the same the CPU path builds.
fn options(
    py: Python<'_>,
    footprint: &numpy::PyReadonlyArrayDyn<'_, bool>,
    mode: &str,
    cval: f64,
    origins: &[isize],
) -> PyResult<Options> {
    let fp = Footprint::new(footprint.shape().to_vec(), footprint_mask(footprint)?)
        .map_err(|e| driver_error(py, e))?;
    let mode: Mode = mode.parse().map_err(|e| driver_error(py, e))?;
    Ok(Options::new(fp).mode(mode).cval(cval).origin(origins))
}

/// `None` when a CUDA device can be used, else why not.
#[pyfunction]
pub fn cuda_unavailable_reason() -> Option<String> {
    Gpu::available().err().map(|e| e.to_string())
}

/// Whether the GPU's math routines give this CPU's bits: the host's glibc runs the builds they
/// transcribe (`ndjit_gpu::math::cpu_runs_glibc_fma_builds`).
#[pyfunction]
pub fn gpu_math_matches_cpu() -> bool {
    ndjit_gpu::math::cpu_runs_glibc_fma_builds()
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
    // NumPy's dtype names; the others get the driver's errors for them (scipy's).
    let by_name = |name: &str| {
        Dtype::ALL
            .into_iter()
            .find(|d| d.name() == name)
            .ok_or_else(|| {
                let complex = name.starts_with("complex");
                driver_error(
                    py,
                    DriverError::UnsupportedDtype {
                        dtype: name.into(),
                        complex,
                    },
                )
            })
    };
    let (input, output) = (by_name(input_dtype)?, by_name(output_dtype)?);
    let target = match sm {
        None => Gpu::get(0).map(|g| g.target()).unwrap_or(Target::SM90),
        Some(75) => Target::PORTABLE,
        Some(90) => Target::SM90,
        Some(other) => return Err(PyValueError::new_err(format!(
            "unknown PTX target sm_{other}: use 90 (Hopper) or 75 (portable, any GPU from Turing on)"
        ))),
    };
    let rank = footprint.ndim();
    let opts = options(py, &footprint, mode, cval, &origins)?;
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
            dtype: dt,
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
    let opts = options(py, &footprint, mode, cval, &origins)?;
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

/// A device array from `__cuda_array_interface__`: `(pointer, typestr, shape, byte strides)`,
/// the strides `None` for a C-contiguous array (as the interface gives them).
type DeviceArg = (u64, String, Vec<usize>, Option<Vec<isize>>);

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
        let dtype = Dtype::from_typestr(&a.1).map_err(|e| driver_error(py, e))?;
        let strides = match &a.3 {
            Some(s) => s.clone(),
            None => checked_c_strides(&a.2, dtype).ok_or_else(|| {
                PyValueError::new_err(format!("array too large: shape {:?}", a.2))
            })?,
        };
        Ok(ArrayDesc {
            dtype,
            shape: a.2.clone(),
            strides,
        })
    };
    let (id, od) = (desc(&input)?, desc(&output)?);
    let opts = options(py, &footprint, mode, cval, &origins)?;
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
