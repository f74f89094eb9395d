//! Bound values between Python and ndjit: numbers, strings and 1-D float64 arrays.

use ndjit::{Bindings, Value};
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString};

/// Reads `{name: number | 1-D float64 array}`. The Python layer has already normalised NumPy
/// scalars and tuples; anything else is a `TypeError` naming the variable.
pub fn from_dict(d: Option<&Bound<'_, PyDict>>) -> PyResult<Bindings> {
    let mut b = Bindings::new();
    let Some(d) = d else { return Ok(b) };
    for (k, v) in d.iter() {
        let name: String = k.extract()?;
        let value = if v.is_instance_of::<PyBool>() {
            Value::Int(v.extract::<bool>()? as i64)
        } else if v.is_instance_of::<PyInt>() {
            Value::Int(v.extract::<i64>().map_err(|_| {
                PyTypeError::new_err(format!("bound value `{name}` does not fit in 64 bits"))
            })?)
        } else if v.is_instance_of::<PyFloat>() {
            Value::Float(v.extract()?)
        } else if v.is_instance_of::<PyString>() {
            Value::Str(v.extract()?)
        } else if let Ok(a) = v.extract::<PyReadonlyArray1<'_, f64>>() {
            Value::Array(a.as_array().to_vec())
        } else {
            return Err(PyTypeError::new_err(format!(
                "bound value `{name}` is {}; ndjit binds numbers and 1-D float64 arrays",
                v.get_type().name()?
            )));
        };
        b.set(name, value);
    }
    Ok(b)
}

pub fn to_dict<'py>(py: Python<'py>, values: &[(String, Value)]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, v) in values {
        match v {
            Value::Float(x) => d.set_item(name, x)?,
            Value::Int(x) => d.set_item(name, x)?,
            Value::Array(a) => d.set_item(name, PyArray1::from_slice(py, a))?,
            Value::Str(s) => d.set_item(name, s)?,
        }
    }
    Ok(d)
}
