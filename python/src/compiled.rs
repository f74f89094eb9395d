//! `CompiledFilter`: compiled code plus the bound values it reads.

use crate::{context::CallContext, errors, values};
use ndjit::Filter;
use numpy::PyReadonlyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;

#[pyclass(frozen, module = "ndjit._core", name = "CompiledFilter")]
pub struct CompiledFilter {
    pub(crate) filter: Filter,
}

/// Compiles filter source. `imports` maps names to modules or functions (`{"xp": "numpy"}`),
/// the way the callback's module globals do. The GIL is released while compiling.
#[pyfunction]
#[pyo3(signature = (source, bindings=None, imports=None, filter_size=None, inspect=false))]
pub fn compile(
    py: Python<'_>,
    source: String,
    bindings: Option<&Bound<'_, PyDict>>,
    imports: Option<Vec<(String, String)>>,
    filter_size: Option<usize>,
    inspect: bool,
) -> PyResult<CompiledFilter> {
    let b = values::from_dict(bindings)?;
    let imports = imports.unwrap_or_default();
    let built = py.detach(move || {
        let mut builder = Filter::builder(&source).bindings(&b).inspect(inspect);
        for (module, alias) in &imports {
            builder = builder.import(module, alias);
        }
        if let Some(n) = filter_size {
            builder = builder.filter_size(n);
        }
        builder.compile()
    });
    built.map(|filter| CompiledFilter { filter }).map_err(|e| errors::compile_error(py, &e))
}

#[pymethods]
impl CompiledFilter {
    /// Runs the compiled code once on a 1-D float64 array.
    fn call(&self, py: Python<'_>, values: PyReadonlyArray1<'_, f64>) -> PyResult<f64> {
        let v = values.as_slice()?;
        self.filter.call(v).map_err(|e| errors::runtime_error(py, &e))
    }

    /// Runs the reference interpreter once (bit-identical to `call`).
    fn interpret(&self, py: Python<'_>, values: PyReadonlyArray1<'_, f64>) -> PyResult<f64> {
        let v = values.as_slice()?;
        self.filter.interpret(v).map_err(|e| errors::runtime_error(py, &e))
    }

    /// The same code with other bound values (no recompilation).
    fn with_bindings(&self, py: Python<'_>, bindings: &Bound<'_, PyDict>) -> PyResult<CompiledFilter> {
        let b = values::from_dict(Some(bindings))?;
        self.filter.with_bindings(&b).map(|filter| CompiledFilter { filter }).map_err(|e| errors::compile_error(py, &e))
    }

    /// A new `user_data` context; `debug=True` makes its capsule run the reference interpreter.
    #[pyo3(signature = (debug=false))]
    fn new_context(&self, debug: bool) -> CallContext {
        CallContext::new(&self.filter, debug)
    }

    #[getter]
    fn source(&self) -> &str {
        self.filter.source()
    }
    #[getter]
    fn ir(&self) -> String {
        self.filter.ir_text()
    }
    #[getter]
    fn clif(&self) -> Option<&str> {
        self.filter.clif_text()
    }
    #[getter]
    fn disasm(&self) -> Option<&str> {
        self.filter.disasm()
    }
    #[getter]
    fn filter_size(&self) -> Option<usize> {
        self.filter.filter_size()
    }
    #[getter]
    fn bound_values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        values::to_dict(py, self.filter.bound_values())
    }
}
