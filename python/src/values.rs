//! Bound values between Python and ndjit: Python numbers and NumPy scalars, strings, 1-D float64,
//! int64 and bool arrays, and tuples of Python floats or of Python ints.

use ndjit::{ArrayKind, Bindings, Value};
use numpy::{PyArray1, PyReadonlyArray0, PyReadonlyArray1};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString, PyTuple};

/// Reads `{name: number | string | 0-d float64/int64 array (a NumPy scalar) | 1-D float64/int64/bool
/// array | tuple of floats or of ints}`. The Python layer has already normalised NumPy scalars,
/// lists and other dtypes; anything else is a `TypeError` naming the variable.
pub fn from_dict(d: Option<&Bound<'_, PyDict>>) -> PyResult<Bindings> {
    let mut b = Bindings::new();
    let Some(d) = d else { return Ok(b) };
    for (k, v) in d.iter() {
        let name: String = k.extract()?;
        // Exact types: a subclass (`np.float64` is a `float`) would bring NumPy's arithmetic.
        let value = if v.is_exact_instance_of::<PyBool>() {
            Value::Bool(v.extract()?)
        } else if v.is_exact_instance_of::<PyInt>() {
            Value::Int(v.extract::<i64>().map_err(|_| {
                PyTypeError::new_err(format!("bound value `{name}` does not fit in 64 bits"))
            })?)
        } else if v.is_exact_instance_of::<PyFloat>() {
            Value::Float(v.extract()?)
        } else if v.is_exact_instance_of::<PyString>() {
            Value::Str(v.extract()?)
        } else if let Ok(a) = v.extract::<PyReadonlyArray0<'_, f64>>() {
            Value::NpFloat64(a.as_array()[()])
        } else if let Ok(a) = v.extract::<PyReadonlyArray0<'_, i64>>() {
            Value::NpInt64(a.as_array()[()])
        } else if let Some(a) = sequence(&name, &v)? {
            a
        } else {
            return Err(PyTypeError::new_err(format!(
                "bound value `{name}` is {}; ndjit binds numbers, 1-D float64, int64 and bool \
                 arrays, and tuples of floats or of ints",
                v.get_type().name()?
            )));
        };
        b.set(name, value);
    }
    Ok(b)
}

/// A bound array or tuple, if `v` is one. Ints must be doubles exactly (|i| <= 2**53): the
/// context holds every element as a double.
fn sequence(name: &str, v: &Bound<'_, PyAny>) -> PyResult<Option<Value>> {
    let exact = |i: i64| {
        ndjit::bind::exact_double(i).ok_or_else(|| {
            PyTypeError::new_err(format!(
                "bound value `{name}` holds {i}, which a double cannot hold exactly (past 2**53)"
            ))
        })
    };
    if let Ok(a) = v.extract::<PyReadonlyArray1<'_, f64>>() {
        return Ok(Some(Value::Array(
            a.as_array().to_vec(),
            ArrayKind::Float64,
        )));
    }
    if let Ok(a) = v.extract::<PyReadonlyArray1<'_, i64>>() {
        let values = a
            .as_array()
            .iter()
            .map(|&i| exact(i))
            .collect::<PyResult<_>>()?;
        return Ok(Some(Value::Array(values, ArrayKind::Int64)));
    }
    if let Ok(a) = v.extract::<PyReadonlyArray1<'_, bool>>() {
        let values = a.as_array().iter().map(|&b| b as u8 as f64).collect();
        return Ok(Some(Value::Array(values, ArrayKind::Bool)));
    }
    let Ok(t) = v.cast::<PyTuple>() else {
        return Ok(None);
    };
    // Exactly ints or exactly floats: a bool or a NumPy scalar element would behave otherwise.
    let items: Vec<_> = t.iter().collect();
    let ints = items.iter().all(|i| i.is_exact_instance_of::<PyInt>());
    let kind = if ints && !items.is_empty() {
        ArrayKind::PyInts
    } else if items.iter().all(|i| i.is_exact_instance_of::<PyFloat>()) {
        ArrayKind::PyFloats // (an empty tuple too: NumPy makes it a float64 array)
    } else {
        return Err(PyTypeError::new_err(format!(
            "bound value `{name}` is a tuple of mixed element types; ndjit binds tuples of \
             floats or of ints"
        )));
    };
    let values = items
        .iter()
        .map(|i| match kind {
            ArrayKind::PyInts => exact(i.extract::<i64>().map_err(|_| {
                PyTypeError::new_err(format!("bound value `{name}` holds an int past 64 bits"))
            })?),
            _ => i.extract::<f64>(),
        })
        .collect::<PyResult<_>>()?;
    Ok(Some(Value::Array(values, kind)))
}

pub fn to_dict<'py>(py: Python<'py>, values: &[(String, Value)]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let numpy = py.import("numpy")?;
    for (name, v) in values {
        match v {
            Value::Float(x) => d.set_item(name, x)?,
            Value::Int(x) => d.set_item(name, x)?,
            Value::Bool(b) => d.set_item(name, b)?,
            Value::NpFloat64(x) => d.set_item(name, numpy.getattr("float64")?.call1((x,))?)?,
            Value::NpInt64(x) => d.set_item(name, numpy.getattr("int64")?.call1((x,))?)?,
            Value::Array(a, ArrayKind::Float64) => d.set_item(name, PyArray1::from_slice(py, a))?,
            Value::Array(a, ArrayKind::Int64) => {
                let ints: Vec<i64> = a.iter().map(|&x| x as i64).collect();
                d.set_item(name, PyArray1::from_vec(py, ints))?
            }
            Value::Array(a, ArrayKind::Bool) => {
                let bools: Vec<bool> = a.iter().map(|&x| x != 0.0).collect();
                d.set_item(name, PyArray1::from_vec(py, bools))?
            }
            Value::Array(a, ArrayKind::PyInts) => {
                let ints = a.iter().map(|&x| x as i64);
                d.set_item(name, PyTuple::new(py, ints)?)?
            }
            Value::Array(a, ArrayKind::PyFloats) => d.set_item(name, PyTuple::new(py, a)?)?,
            Value::Str(s) => d.set_item(name, s)?,
        }
    }
    Ok(d)
}
