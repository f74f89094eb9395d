//! Bound values: the numbers and arrays a filter reads besides its buffer.
//!
//! Closure variables, module constants, default arguments, `extra_arguments` and `extra_keywords`
//! all arrive as [`Bindings`]. Compiling fixes a [`Layout`] (which name lives in which slot, and
//! its kind); the values themselves live in the `user_data` context, so new values can be bound
//! without recompiling.

use std::collections::BTreeMap;

/// A bound value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Float(f64),
    Int(i64),
    /// A 1-D float64 array (tuples of numbers arrive as arrays too).
    Array(Vec<f64>),
    /// A string, folded into the code at compile time (`if method == "mean":`): it has no slot,
    /// so binding another string needs a new compile.
    Str(String),
}

impl Value {
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Float(_) => "float",
            Value::Int(_) => "int",
            Value::Array(_) => "array",
            Value::Str(_) => "string",
        }
    }
}

/// Names mapped to bound values.
///
/// ```
/// let mut b = ndjit::Bindings::new();
/// b.set_float("threshold", 0.25).set_array("weights", vec![1.0, 2.0, 1.0]);
/// assert_eq!(b.len(), 2);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bindings {
    values: BTreeMap<String, Value>,
}

impl Bindings {
    pub fn new() -> Bindings {
        Bindings::default()
    }
    pub fn set(&mut self, name: impl Into<String>, value: Value) -> &mut Self {
        self.values.insert(name.into(), value);
        self
    }
    pub fn set_float(&mut self, name: impl Into<String>, v: f64) -> &mut Self {
        self.set(name, Value::Float(v))
    }
    pub fn set_int(&mut self, name: impl Into<String>, v: i64) -> &mut Self {
        self.set(name, Value::Int(v))
    }
    pub fn set_array(&mut self, name: impl Into<String>, v: Vec<f64>) -> &mut Self {
        self.set(name, Value::Array(v))
    }
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.values.get(name)
    }
    pub fn len(&self) -> usize {
        self.values.len()
    }
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v))
    }
}

/// Where a bound name lives in the context, and what kind of value it must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    Float(u32),
    Int(u32),
    Array(u32),
}

/// The bound names a compiled filter reads, in slot order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Layout {
    pub entries: Vec<(String, Slot)>,
    pub floats: u32,
    pub ints: u32,
    pub arrays: u32,
}

impl Layout {
    pub fn slot(&self, name: &str) -> Option<Slot> {
        self.entries
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| *s)
    }
    /// Adds `name` with the kind of `value` and returns its slot (the existing one if present).
    /// Strings have no slot: the lowering folds them and never calls this for one.
    pub(crate) fn add(&mut self, name: &str, value: &Value) -> Slot {
        if let Some(s) = self.slot(name) {
            return s;
        }
        let slot = match value {
            Value::Float(_) => {
                self.floats += 1;
                Slot::Float(self.floats - 1)
            }
            Value::Int(_) => {
                self.ints += 1;
                Slot::Int(self.ints - 1)
            }
            Value::Array(_) => {
                self.arrays += 1;
                Slot::Array(self.arrays - 1)
            }
            Value::Str(_) => unreachable!("strings are folded at compile time"),
        };
        self.entries.push((name.to_string(), slot));
        slot
    }
}

/// Bound values by slot: what the `user_data` context holds, and what a backend that bakes the
/// values into its code (the GPU) substitutes (see [`crate::ir::substitute`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BoundValues {
    pub floats: Vec<f64>,
    pub ints: Vec<i64>,
    pub arrays: Vec<Vec<f64>>,
}

impl BoundValues {
    /// The values of `values` in the slots of `layout`. An int bound to a float slot becomes a
    /// float (as Python would convert it); names without a slot, or of another kind, are ignored
    /// (compiling and [`crate::Filter::with_bindings`] have rejected wrong kinds already).
    pub fn new(layout: &Layout, values: &[(String, Value)]) -> BoundValues {
        let mut b = BoundValues {
            floats: vec![0.0; layout.floats as usize],
            ints: vec![0; layout.ints as usize],
            arrays: vec![Vec::new(); layout.arrays as usize],
        };
        for (name, v) in values {
            match (layout.slot(name), v) {
                (Some(Slot::Float(k)), Value::Float(x)) => b.floats[k as usize] = *x,
                (Some(Slot::Float(k)), Value::Int(x)) => b.floats[k as usize] = *x as f64,
                (Some(Slot::Int(k)), Value::Int(x)) => b.ints[k as usize] = *x,
                (Some(Slot::Array(k)), Value::Array(a)) => b.arrays[k as usize] = a.clone(),
                _ => {}
            }
        }
        b
    }
}
