//! Which of NumPy's math kernels are the C library's (`ndjit::math::numpy_kernels`): the package
//! asks NumPy at import and tells the core here, before anything is compiled; so does the order
//! of NumPy's BLAS dot products (`ndjit::math::blas`).

use ndjit::math::blas::{self, DotOrder};
use ndjit::math::{numpy_kernels, MathFn};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

fn choice(name: &str) -> PyResult<MathFn> {
    numpy_kernels::CHOICES
        .iter()
        .copied()
        .find(|f| f.name().strip_prefix("np.") == Some(name))
        .ok_or_else(|| {
            let names: Vec<&str> = numpy_kernels::CHOICES
                .iter()
                .map(|f| &f.name()[3..])
                .collect();
            PyValueError::new_err(format!(
                "no NumPy kernel choice for {name:?}; the choices are {}",
                names.join(", ")
            ))
        })
}

/// Records whether NumPy computes `np.<name>` with a kernel of its own (then ndjit computes it
/// within 0.51 ulp) or with the C library (then ndjit calls the C library too).
#[pyfunction]
pub fn set_numpy_kernel(name: &str, own: bool) -> PyResult<()> {
    numpy_kernels::set_accurate(choice(name)?, own);
    Ok(())
}

/// Whether ndjit takes NumPy's kernel for `np.<name>` to be its own (see `set_numpy_kernel`).
#[pyfunction]
pub fn numpy_kernel_is_own(name: &str) -> PyResult<bool> {
    Ok(numpy_kernels::is_accurate(choice(name)?))
}

/// The C library's `<name>(x)` for each x: what NumPy computes where its kernel is not its own.
#[pyfunction]
pub fn c_library_math(name: &str, xs: Vec<f64>) -> PyResult<Vec<f64>> {
    let f = choice(name)?;
    Ok(xs
        .into_iter()
        .map(|x| numpy_kernels::c_library(f, x))
        .collect())
}

/// Sets the order of additions of float dot products for filters compiled from now on
/// (`ndjit::math::blas`): "skylakex", "haswell" or "unknown" (then they are refused).
#[pyfunction]
pub fn set_dot_order(name: &str) -> PyResult<()> {
    let order = DotOrder::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = DotOrder::ALL.iter().map(|o| o.name()).collect();
        PyValueError::new_err(format!(
            "no dot order {name:?}; the orders are {}",
            names.join(", ")
        ))
    })?;
    blas::set_dot_order(order);
    Ok(())
}

/// The order float dot products are compiled in (see `set_dot_order`).
#[pyfunction]
pub fn dot_order() -> &'static str {
    blas::dot_order().name()
}
