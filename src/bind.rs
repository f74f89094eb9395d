//! Bound values: the numbers and arrays a filter reads besides its buffer.
//!
//! Closure variables, module constants, default arguments, `extra_arguments` and `extra_keywords`
//! all arrive as [`Bindings`]. Compiling fixes a [`Layout`] (which name lives in which slot, and
//! its kind); the values themselves live in the `user_data` context, so new values can be bound
//! without recompiling.

use std::collections::BTreeMap;

/// What a bound array is in Python, which decides what its elements do: NumPy's `int64` wraps
/// and divides by zero to 0, a Python int raises; a tuple repeats under `*` where an array
/// multiplies. The values themselves are held as doubles, exactly: the Python layer refuses ints
/// past 2**53 in magnitude.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArrayKind {
    /// A NumPy float64 array.
    Float64,
    /// A NumPy int64 array.
    Int64,
    /// A NumPy bool array (elements 0 or 1).
    Bool,
    /// A Python tuple or list of floats.
    PyFloats,
    /// A Python tuple or list of ints.
    PyInts,
}

impl ArrayKind {
    pub fn origin(self) -> Origin {
        match self {
            ArrayKind::Float64 | ArrayKind::Int64 | ArrayKind::Bool => Origin::NumPy,
            ArrayKind::PyFloats | ArrayKind::PyInts => Origin::Python,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            ArrayKind::Float64 => "a float64 array",
            ArrayKind::Int64 => "an int64 array",
            ArrayKind::Bool => "a bool array",
            ArrayKind::PyFloats => "a tuple of floats",
            ArrayKind::PyInts => "a tuple of ints",
        }
    }

    /// The kind of a Python tuple or list of these numbers (`None` for ints and floats mixed,
    /// whose elements keep two types). An empty one is a tuple of floats: NumPy converts it to
    /// a float64 array, and it has no elements to read.
    pub fn of_python<I: IntoIterator<Item = bool>>(is_int: I) -> Option<ArrayKind> {
        let mut kinds = is_int.into_iter();
        let first = kinds.next().unwrap_or(false);
        kinds.all(|k| k == first).then_some(match first {
            true => ArrayKind::PyInts,
            false => ArrayKind::PyFloats,
        })
    }
}

/// Whether a bound number is a Python number or a NumPy scalar: `s / 0` raises for a Python
/// float and gives inf for an `np.float64`; `s ** -1` is a float for a Python int and raises for
/// an `np.int64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    Python,
    NumPy,
}

/// A bound value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A Python float.
    Float(f64),
    /// A Python int.
    Int(i64),
    /// A Python bool: an int in Python's arithmetic, but a bool to NumPy (`np.add(b, b)` is an
    /// or), so the code reads it as a bool (held in an int slot as 0 or 1).
    Bool(bool),
    /// An `np.float64`.
    NpFloat64(f64),
    /// An `np.int64`.
    NpInt64(i64),
    /// A 1-D array or Python sequence of numbers, each held exactly as a double.
    Array(Vec<f64>, ArrayKind),
    /// A string, folded into the code at compile time (`if method == "mean":`): it has no slot,
    /// so binding another string needs a new compile.
    Str(String),
}

impl Value {
    /// Whether this value can fill `slot` and behave as the value the filter was compiled with:
    /// only one of the same kind can (even an int where a float was would differ: `-0` is 0).
    pub fn fits(&self, slot: Slot) -> bool {
        match (slot, self) {
            (Slot::Float(_, Origin::Python), Value::Float(_)) => true,
            (Slot::Float(_, Origin::NumPy), Value::NpFloat64(_)) => true,
            (Slot::Int(_, Origin::Python), Value::Int(_)) => true,
            (Slot::Int(_, Origin::NumPy), Value::NpInt64(_)) => true,
            (Slot::Bool(_), Value::Bool(_)) => true,
            (Slot::Array(_, want), Value::Array(_, kind)) => want == *kind,
            _ => false,
        }
    }

    /// Python's or NumPy's (arrays and strings count as NumPy's and Python's).
    pub fn origin(&self) -> Origin {
        match self {
            Value::Float(_) | Value::Int(_) | Value::Bool(_) | Value::Str(_) => Origin::Python,
            Value::NpFloat64(_) | Value::NpInt64(_) => Origin::NumPy,
            Value::Array(_, kind) => kind.origin(),
        }
    }

    /// What the value is, for messages: "an np.int64".
    pub fn kind(&self) -> &'static str {
        let slot = match self {
            Value::Float(_) | Value::NpFloat64(_) => Slot::Float(0, self.origin()),
            Value::Int(_) | Value::NpInt64(_) => Slot::Int(0, self.origin()),
            Value::Array(_, kind) => Slot::Array(0, *kind),
            Value::Bool(_) => Slot::Bool(0),
            Value::Str(_) => return "a string",
        };
        slot.describe()
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
    /// Binds a float64 array.
    pub fn set_array(&mut self, name: impl Into<String>, v: Vec<f64>) -> &mut Self {
        self.set(name, Value::Array(v, ArrayKind::Float64))
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
    Float(u32, Origin),
    Int(u32, Origin),
    /// A Python bool, in the ints.
    Bool(u32),
    Array(u32, ArrayKind),
}

impl Slot {
    /// The kind of value the slot takes, for messages: "an np.int64".
    pub fn describe(self) -> &'static str {
        match self {
            Slot::Float(_, Origin::Python) => "a float",
            Slot::Int(_, Origin::Python) => "an int",
            Slot::Float(_, Origin::NumPy) => "an np.float64",
            Slot::Int(_, Origin::NumPy) => "an np.int64",
            Slot::Bool(_) => "a bool",
            Slot::Array(_, kind) => kind.describe(),
        }
    }
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
    /// Whether some name lives in exactly `slot` (index and kind).
    pub fn has(&self, slot: Slot) -> bool {
        self.entries.iter().any(|(_, s)| *s == slot)
    }

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
            Value::Float(_) | Value::NpFloat64(_) => {
                self.floats += 1;
                Slot::Float(self.floats - 1, value.origin())
            }
            Value::Int(_) | Value::NpInt64(_) => {
                self.ints += 1;
                Slot::Int(self.ints - 1, value.origin())
            }
            Value::Bool(_) => {
                self.ints += 1;
                Slot::Bool(self.ints - 1)
            }
            Value::Array(_, kind) => {
                self.arrays += 1;
                Slot::Array(self.arrays - 1, *kind)
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
    /// The values of `values` in the slots of `layout`. Names without a slot, or of another
    /// kind, are ignored (compiling and [`crate::Filter::with_bindings`] have rejected wrong
    /// kinds already: see [`Value::fits`]).
    pub fn new(layout: &Layout, values: &[(String, Value)]) -> BoundValues {
        let mut b = BoundValues {
            floats: vec![0.0; layout.floats as usize],
            ints: vec![0; layout.ints as usize],
            arrays: vec![Vec::new(); layout.arrays as usize],
        };
        for (name, v) in values {
            match (layout.slot(name), v) {
                (Some(Slot::Float(k, _)), Value::Float(x) | Value::NpFloat64(x)) => {
                    b.floats[k as usize] = *x
                }
                (Some(Slot::Int(k, _)), Value::Int(x) | Value::NpInt64(x)) => {
                    b.ints[k as usize] = *x
                }
                (Some(Slot::Bool(k)), Value::Bool(x)) => b.ints[k as usize] = *x as i64,
                (Some(Slot::Array(k, _)), Value::Array(a, _)) => b.arrays[k as usize] = a.clone(),
                _ => {}
            }
        }
        b
    }
}

/// The bound value a parameter's default stands for: a number literal, possibly negated, or a
/// tuple or list of them, all ints or all floats (a bool on its own is a Python bool; in a tuple
/// it is refused). `None` for anything else.
pub(crate) fn default_value(e: &crate::syntax::ast::Expr) -> Option<Value> {
    use crate::syntax::ast::{ExprKind, UnaryOp};
    let number = |e: &crate::syntax::ast::Expr| match &e.kind {
        ExprKind::Int(v) => Some(Value::Int(*v)),
        ExprKind::Float(v) => Some(Value::Float(*v)),
        ExprKind::Unary(UnaryOp::Neg, inner) => match inner.kind {
            ExprKind::Int(v) => v.checked_neg().map(Value::Int),
            ExprKind::Float(v) => Some(Value::Float(-v)),
            _ => None,
        },
        _ => None,
    };
    match &e.kind {
        ExprKind::Bool(v) => Some(Value::Bool(*v)),
        ExprKind::Tuple(items) | ExprKind::List(items) => {
            let numbers = items.iter().map(number).collect::<Option<Vec<_>>>()?;
            let kind = ArrayKind::of_python(numbers.iter().map(|v| matches!(v, Value::Int(_))))?;
            let values = numbers.iter().map(|v| match v {
                Value::Int(i) => exact_double(*i),
                Value::Float(x) => Some(*x),
                _ => None,
            });
            Some(Value::Array(values.collect::<Option<_>>()?, kind))
        }
        _ => number(e),
    }
}

/// `i` as a double when that is exact (|i| <= 2**53), as an int element of a bound array must be.
pub fn exact_double(i: i64) -> Option<f64> {
    (i.unsigned_abs() <= 1 << 53).then_some(i as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_fits_only_a_slot_of_its_own_kind() {
        let py_float = Slot::Float(0, Origin::Python);
        assert!(Value::Float(1.5).fits(py_float));
        assert!(!Value::Int(0).fits(py_float), "-0 is 0, -0.0 is not");
        assert!(!Value::NpFloat64(1.5).fits(py_float));
        assert!(!Value::Float(1.5).fits(Slot::Float(0, Origin::NumPy)));
        assert!(!Value::Int(1).fits(Slot::Int(0, Origin::NumPy)));
        assert!(Value::NpInt64(1).fits(Slot::Int(0, Origin::NumPy)));
        assert!(Value::Bool(true).fits(Slot::Bool(0)));
        assert!(
            !Value::Int(1).fits(Slot::Bool(0))
                && !Value::Bool(true).fits(Slot::Int(0, Origin::Python))
        );
        assert_eq!(Value::Bool(false).kind(), "a bool");
        let ints = Slot::Array(0, ArrayKind::PyInts);
        assert!(Value::Array(vec![1.0], ArrayKind::PyInts).fits(ints));
        assert!(!Value::Array(vec![1.0], ArrayKind::Int64).fits(ints));
        assert_eq!(Value::NpInt64(1).kind(), "an np.int64");
        assert_eq!(Value::Array(vec![], ArrayKind::Bool).kind(), "a bool array");
    }

    #[test]
    fn python_sequences_are_ints_or_floats_not_both() {
        assert_eq!(ArrayKind::of_python([true, true]), Some(ArrayKind::PyInts));
        assert_eq!(ArrayKind::of_python([false]), Some(ArrayKind::PyFloats));
        assert_eq!(ArrayKind::of_python([]), Some(ArrayKind::PyFloats));
        assert_eq!(ArrayKind::of_python([true, false]), None);
        assert_eq!(exact_double(1 << 53), Some(9007199254740992.0));
        assert_eq!(exact_double(-(1 << 53) - 1), None);
    }

    #[test]
    fn layout_knows_which_scalars_are_numpy_scalars() {
        let mut layout = Layout::default();
        layout.add("a", &Value::Float(1.0));
        layout.add("b", &Value::NpFloat64(1.0));
        layout.add("c", &Value::NpInt64(1));
        assert!(layout.has(Slot::Float(0, Origin::Python)));
        assert!(!layout.has(Slot::Float(0, Origin::NumPy)));
        assert!(layout.has(Slot::Float(1, Origin::NumPy)));
        assert!(layout.has(Slot::Int(0, Origin::NumPy)));
        assert!(!layout.has(Slot::Int(1, Origin::NumPy)));
    }
}
