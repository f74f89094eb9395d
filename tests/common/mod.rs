//! Shared by the integration tests: the corpus file and bit-level comparison of results.
#![allow(dead_code)]

use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize)]
pub struct Corpus {
    pub programs: Vec<Program>,
}

#[derive(Deserialize)]
pub struct Program {
    pub name: String,
    pub source: String,
    #[serde(default)]
    pub bindings: BTreeMap<String, toml::Value>,
    #[serde(default)]
    pub cases: Vec<Case>,
}

#[derive(Deserialize)]
pub struct Case {
    pub input: Vec<f64>,
    pub expect: Expect,
}

#[derive(Deserialize, Debug)]
#[serde(untagged)]
pub enum Expect {
    Value(f64),
    Text(String),
}

/// Reads `tests/corpus/programs.toml`.
pub fn corpus() -> Corpus {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus/programs.toml");
    let text = std::fs::read_to_string(path).expect("read the corpus");
    toml::from_str(&text).expect("parse the corpus")
}

impl std::fmt::Display for Expect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Expect::Value(v) => write!(f, "{v:?}"),
            Expect::Text(s) => write!(f, "{s}"),
        }
    }
}

/// A program's bindings as ndjit values (TOML integers are ints, floats floats, lists arrays).
pub fn bindings(p: &Program) -> Result<ndjit::Bindings, String> {
    let mut b = ndjit::Bindings::new();
    for (name, v) in &p.bindings {
        match v {
            toml::Value::Integer(i) => b.set_int(name.clone(), *i),
            toml::Value::Float(f) => b.set_float(name.clone(), *f),
            toml::Value::Boolean(x) => b.set_int(name.clone(), *x as i64),
            toml::Value::Array(items) => {
                let vals: Option<Vec<f64>> = items
                    .iter()
                    .map(|i| i.as_float().or(i.as_integer().map(|n| n as f64)))
                    .collect();
                b.set_array(
                    name.clone(),
                    vals.ok_or_else(|| {
                        format!("binding `{name}`: array elements must be numbers")
                    })?,
                )
            }
            other => {
                return Err(format!(
                    "binding `{name}`: {other:?} is not a float, int or list of floats"
                ))
            }
        };
    }
    Ok(b)
}

/// The message of a caught panic.
pub fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

/// Results are equal bit for bit (any NaN equals any NaN), or both failed with the same message.
pub fn same(a: &Result<f64, ndjit::RuntimeError>, b: &Result<f64, ndjit::RuntimeError>) -> bool {
    match (a, b) {
        (Ok(x), Ok(y)) => x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
        (Err(x), Err(y)) => x.message == y.message && x.span == y.span,
        _ => false,
    }
}

/// A deterministic generator of awkward inputs: NaN, ±inf, ±0.0, subnormals, huge and tiny values
/// mixed with ordinary ones (xorshift, so tests need no RNG dependency).
pub struct Inputs(u64);

impl Inputs {
    pub fn new(seed: u64) -> Inputs {
        Inputs(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn value(&mut self) -> f64 {
        let r = self.next();
        match r % 16 {
            0 => f64::NAN,
            1 => f64::INFINITY,
            2 => f64::NEG_INFINITY,
            3 => -0.0,
            4 => 0.0,
            5 => 5e-324 * (r >> 40) as f64, // subnormals
            6 => (r >> 11) as f64 * 1e300 / (1u64 << 53) as f64,
            7 => ((r >> 8) % 5) as f64, // small integers: ties for median, argmax ...
            _ => (r >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 0.5,
        }
    }
    /// A uniform choice in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    pub fn buffer(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.value()).collect()
    }
}
