//! `CompiledFilter`: compiled code plus the bound values it reads.

use crate::{context::CallContext, errors, values};
use ndjit::{Filter, Sig};
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

#[pyclass(frozen, module = "ndjit._core", name = "CompiledFilter")]
pub struct CompiledFilter {
    pub(crate) filter: Filter,
    /// The GPU kernels of this filter, generated on the first `target="cuda"` call and cached
    /// per specialisation (footprint, mode, dtypes ...).
    pub(crate) gpu: std::sync::OnceLock<ndjit_gpu::GpuFilter>,
}

impl CompiledFilter {
    pub(crate) fn new(filter: Filter) -> CompiledFilter {
        CompiledFilter {
            filter,
            gpu: std::sync::OnceLock::new(),
        }
    }
    pub(crate) fn gpu(&self) -> &ndjit_gpu::GpuFilter {
        self.gpu
            .get_or_init(|| ndjit_gpu::GpuFilter::new(&self.filter))
    }
}

/// Compiles filter source. `imports` maps names to modules or functions (`{"xp": "numpy"}`),
/// the way the callback's module globals do. `native=False` leaves the native code to the first
/// CPU call that needs it (the CUDA path runs the IR as PTX). The GIL is released while compiling.
#[pyfunction]
#[pyo3(signature = (source, bindings=None, imports=None, filter_size=None, inspect=false, signature="filter", native=true))]
#[allow(clippy::too_many_arguments)]
pub fn compile(
    py: Python<'_>,
    source: String,
    bindings: Option<&Bound<'_, PyDict>>,
    imports: Option<Vec<(String, String)>>,
    filter_size: Option<usize>,
    inspect: bool,
    signature: &str,
    native: bool,
) -> PyResult<CompiledFilter> {
    let sig = parse_sig(signature)?;
    let b = values::from_dict(bindings)?;
    let imports = imports.unwrap_or_default();
    let built = py.detach(move || {
        let mut builder = Filter::builder(&source)
            .bindings(&b)
            .inspect(inspect)
            .signature(sig)
            .native_code(native);
        for (module, alias) in &imports {
            builder = builder.import(module, alias);
        }
        if let Some(n) = filter_size {
            builder = builder.filter_size(n);
        }
        builder.compile()
    });
    built
        .map(CompiledFilter::new)
        .map_err(|e| errors::compile_error(py, &e))
}

/// The scipy API names the Python layer uses for each signature.
pub fn parse_sig(name: &str) -> PyResult<Sig> {
    Ok(match name {
        "filter" => Sig::Filter,
        "filter1d" => Sig::Filter1d,
        "transform" => Sig::Transform,
        "integrand" => Sig::Integrand,
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown signature {other:?}; expected filter, filter1d, transform or integrand"
            )))
        }
    })
}

#[pymethods]
impl CompiledFilter {
    /// Runs the compiled code with the arguments of any signature: `values` (the buffer, input
    /// line or quad's `xx`), `coords` (a transform's output coordinates) and the length of the
    /// output to fill. Returns `(value or None, output array)`. `typing`: an integrand's values
    /// that the caller passed as ints, and as NumPy scalars (`(ints, numpy)`, bit k of each for
    /// `values[k]`), typed so.
    #[pyo3(signature = (values, coords, out_len, interpret=false, typing=(0, 0)))]
    fn call_args<'py>(
        &self,
        py: Python<'py>,
        values: PyReadonlyArray1<'_, f64>,
        coords: PyReadonlyArray1<'_, i64>,
        out_len: usize,
        interpret: bool,
        typing: (u64, u64),
    ) -> PyResult<(Option<f64>, Bound<'py, PyArray1<f64>>)> {
        let typed;
        let typing = ndjit::integrand::Typing {
            ints: typing.0,
            numpy: typing.1,
        };
        let filter = match typing == ndjit::integrand::Typing::default() {
            true => &self.filter,
            false => {
                typed = self
                    .filter
                    .integrand_typed(typing)
                    .map_err(|e| errors::compile_error(py, &e))?;
                &typed
            }
        };
        let mut output = vec![0.0; out_len];
        let args = ndjit::interp::Args {
            values: values.as_slice()?,
            coords: coords.as_slice()?,
            output: &mut output,
        };
        let r = if interpret {
            filter.interpret_args(args)
        } else {
            filter.call_args(args)
        };
        let v = r.map_err(|e| errors::runtime_error(py, &e))?;
        Ok((v, PyArray1::from_vec(py, output)))
    }

    #[getter]
    fn signature(&self) -> &'static str {
        self.filter.signature().capsule_name()
    }

    /// Runs the compiled code once on a 1-D float64 array.
    fn call(&self, py: Python<'_>, values: PyReadonlyArray1<'_, f64>) -> PyResult<f64> {
        let v = values.as_slice()?;
        self.filter
            .call(v)
            .map_err(|e| errors::runtime_error(py, &e))
    }

    /// Runs the reference interpreter once (bit-identical to `call`).
    fn interpret(&self, py: Python<'_>, values: PyReadonlyArray1<'_, f64>) -> PyResult<f64> {
        let v = values.as_slice()?;
        self.filter
            .interpret(v)
            .map_err(|e| errors::runtime_error(py, &e))
    }

    /// The same code with other bound values (no recompilation).
    fn with_bindings(
        &self,
        py: Python<'_>,
        bindings: &Bound<'_, PyDict>,
    ) -> PyResult<CompiledFilter> {
        let b = values::from_dict(Some(bindings))?;
        self.filter
            .with_bindings(&b)
            .map(CompiledFilter::new)
            .map_err(|e| errors::compile_error(py, &e))
    }

    /// A new `user_data` context; `debug=True` makes its capsule run the reference interpreter.
    /// `locate(exc)`, if given, moves a run-time failure's position into the user's file before
    /// scipy sees the exception (the compiled filter is shared by every function with the same
    /// text, each context belongs to one of them).
    #[pyo3(signature = (debug=false, locate=None))]
    fn new_context(&self, debug: bool, locate: Option<Py<PyAny>>) -> PyResult<CallContext> {
        CallContext::new(&self.filter, debug, locate)
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
    /// Whether the native code exists yet (`compile(..., native=False)` defers it).
    #[getter]
    fn has_native_code(&self) -> bool {
        self.filter.has_native_code()
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
