//! `ndjit._core`: the thin Rust layer under the `ndjit` Python package.
//!
//! One module per Python type: [`compiled`] (`CompiledFilter`: compiled code and bound values),
//! [`context`] (`CallContext`: a `user_data` with its own failure slot, handed to scipy in
//! capsules), [`driver`] (the native n-d driver), [`gpu`] (`target="cuda"`), [`interrupt`]
//! (Ctrl-C inside compiled code), [`math`] (which NumPy kernels are the C library's), plus [`values`] (bound values from Python) and [`errors`] (ndjit errors to Python
//! exceptions, constructed by `ndjit/_errors.py` so that the classes live in Python).

mod compiled;
mod context;
mod driver;
mod errors;
mod gpu;
mod interrupt;
mod math;
mod values;

use pyo3::prelude::*;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    interrupt::install(m.py())?;
    m.add_class::<compiled::CompiledFilter>()?;
    m.add_class::<context::CallContext>()?;
    m.add_function(wrap_pyfunction!(compiled::compile, m)?)?;
    m.add_function(wrap_pyfunction!(driver::generic_filter, m)?)?;
    m.add_function(wrap_pyfunction!(driver::generic_filter1d, m)?)?;
    m.add_function(wrap_pyfunction!(gpu::cuda_unavailable_reason, m)?)?;
    m.add_function(wrap_pyfunction!(gpu::gpu_math_matches_cpu, m)?)?;
    m.add_function(wrap_pyfunction!(gpu::cuda_device, m)?)?;
    m.add_function(wrap_pyfunction!(math::set_numpy_kernel, m)?)?;
    m.add_function(wrap_pyfunction!(math::numpy_kernel_is_own, m)?)?;
    m.add_function(wrap_pyfunction!(math::c_library_math, m)?)?;
    m.add_function(wrap_pyfunction!(math::set_dot_order, m)?)?;
    m.add_function(wrap_pyfunction!(math::dot_order, m)?)?;
    m.add_function(wrap_pyfunction!(gpu::cuda_ptx, m)?)?;
    m.add_function(wrap_pyfunction!(gpu::cuda_filter_host, m)?)?;
    m.add_function(wrap_pyfunction!(gpu::cuda_filter_device, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::export_kinds(m)?;
    m.add("SIGNATURE_FILTER", ndjit::Sig::Filter.capsule_name())?;
    Ok(())
}
