//! Python ints among the values quad passes an integrand.
//!
//! scipy's `quad` hands a `LowLevelCallable` its `args` as C doubles: `quad(f, 0, 1, args=(0,))`
//! and `args=(0.0,)` reach the integrand as the same double, yet Python calls `f` with the int
//! `0` in one case and the float `0.0` in the other, and integrands can tell them apart: `-a * x`
//! is `0.0` for the int and `-0.0` for the float, `a ** 40` is exact for the int only, and
//! `math.comb(a, 2)` takes ints only. An outer variable of `dblquad`/`nquad` arrives the same
//! way (quad passes it among the inner integral's `args`), always a float.
//!
//! So the integrand's trampoline (`crate::context`) looks at each value after the variable: one
//! that could be an int (integral and not `-0.0`) is **in doubt**, unless the source declares its
//! parameter's type (`a: float`, `n: int`). With values in doubt it runs the integrand once per
//! way of typing them (each an int or a float; the lowering compiles each way on first need) and
//! returns the result they share; where they differ it raises, naming the parameter, rather than
//! pick one. A value from 2**53 on stands for several ints, which no double tells apart: refused
//! unless declared.

use crate::filter::Filter;
use crate::ir::ErrorId;
use crate::runtime::{Failure, SITE_INTERRUPTED};
use std::sync::Mutex;

/// Doubles hold every int below 2**53 exactly; from 2**53 on, one double stands for several
/// ints (2**53 and 2**53 + 1 both arrive as 2**53).
pub const EXACT_INTS: f64 = 9_007_199_254_740_992.0;

/// At most this many values in doubt in one call: their typings double with each.
pub const MAX_DOUBTS: u32 = 4;

/// What the lowering records of an integrand's parameters, for the trampoline.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Params {
    /// Per position of quad's `xx`: the error sites to report when its value is in doubt, or
    /// `None` for the variable (position 0, always a float) and declared parameters.
    pub sites: Vec<Option<DoubtSites>>,
}

/// The errors of one parameter whose value is in doubt.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DoubtSites {
    /// The integrand's result depends on whether the value is an int or a float (`{a}`: it).
    pub differ: ErrorId,
    /// The value is 2**53 or past it: the int it may stand for is unknown.
    pub inexact: ErrorId,
    /// More than [`MAX_DOUBTS`] values in doubt in one call.
    pub too_many: ErrorId,
}

/// Whether a double quad passes could stand for a Python int.
fn could_be_int(v: f64) -> bool {
    v.is_finite() && v.trunc() == v && !(v == 0.0 && v.is_sign_negative())
}

/// The positions of `values` in doubt, with their error sites; the failure to report when they
/// cannot all be tried.
fn doubts(params: &Params, values: &[f64]) -> Result<Vec<(usize, DoubtSites)>, Failure> {
    let mut in_doubt = Vec::new();
    for (k, (&v, sites)) in values.iter().zip(&params.sites).enumerate() {
        let Some(sites) = sites.filter(|_| could_be_int(v)) else {
            continue;
        };
        // Below 2**53 the value is an exact i64 (the messages show it); beyond, no one int.
        let fail = |site: ErrorId| Failure {
            site: site.0,
            a: v as i64,
            b: 0,
        };
        if v.abs() >= EXACT_INTS {
            return Err(Failure {
                a: 0,
                ..fail(sites.inexact)
            });
        }
        if in_doubt.len() == MAX_DOUBTS as usize || k >= 64 {
            return Err(fail(sites.too_many));
        }
        in_doubt.push((k, sites));
    }
    Ok(in_doubt)
}

/// The integrand compiled with each typing tried so far: bit k of the key set where position k
/// is an int. Compiled on first need (a few per integrand in practice: one per set of argument
/// positions in doubt); `None` where that typing does not compile.
#[derive(Default)]
pub(crate) struct Typings(Mutex<Vec<(u64, Option<Filter>)>>);

impl Typings {
    fn get(&self, general: &Filter, ints: u64) -> Option<Filter> {
        if ints == 0 {
            return Some(general.clone());
        }
        let mut cache = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, f)) = cache.iter().find(|(k, _)| *k == ints) {
            return f.clone();
        }
        // Called from quad's C code: a compiler panic must not unwind there (the typing is then
        // one that cannot be compared, and the call raises).
        let compile = std::panic::AssertUnwindSafe(|| general.integrand_typed(ints).ok());
        let f = std::panic::catch_unwind(compile).ok().flatten();
        cache.push((ints, f.clone()));
        f
    }
}

/// What the trampoline does with one call.
pub(crate) enum Verdict {
    /// Run the integrand as compiled: no value is in doubt, or every typing fails alike (the
    /// run records that failure as any other).
    Run,
    /// Every typing gives this value.
    Value(f64),
    /// Record this failure: the typings differ, or cannot all be tried, or one was interrupted.
    Fail(Failure),
}

/// One typing's outcome, compared by bits (a NaN's payload aside, which ndjit does not promise:
/// README, *Known deviations*) and by the error raised: its class and message, which differ
/// between typings only where the error does (each typing has its own error sites).
#[derive(Clone, PartialEq)]
enum Outcome {
    Value(u64),
    Raised(crate::Exception, String),
    /// This typing does not compile: no result to compare.
    Refused,
}

impl Outcome {
    fn value(v: f64) -> Outcome {
        Outcome::Value(if v.is_nan() {
            f64::NAN.to_bits()
        } else {
            v.to_bits()
        })
    }
}

/// Runs `general`'s integrand on quad's `values` with every typing of the values in doubt.
pub(crate) fn resolve(general: &Filter, typings: &Typings, values: &[f64]) -> Verdict {
    let in_doubt = match doubts(general.integrand_params(), values) {
        Ok(in_doubt) if in_doubt.is_empty() => return Verdict::Run,
        Ok(in_doubt) => in_doubt,
        Err(fail) => return Verdict::Fail(fail),
    };
    let mask = in_doubt.iter().fold(0u64, |m, (k, _)| m | 1 << k);
    let run = |ints: u64| match typings.get(general, ints) {
        None => Outcome::Refused,
        Some(f) => match f.call(values) {
            Ok(v) => Outcome::value(v),
            Err(e) => Outcome::Raised(e.exception, e.message),
        },
    };
    let first = run(0);
    let mut ints = 0u64;
    let mut outcome = first.clone();
    loop {
        if matches!(
            outcome,
            Outcome::Raised(crate::Exception::KeyboardInterrupt, _)
        ) {
            let site = SITE_INTERRUPTED;
            return Verdict::Fail(Failure { site, a: 0, b: 0 });
        }
        if outcome != first {
            return Verdict::Fail(differ(values, &in_doubt, &first, &run));
        }
        // The next subset of `mask` (every one after the empty set, which is `first`'s
        // typing: all floats).
        ints = ints.wrapping_sub(mask) & mask;
        if ints == 0 {
            break;
        }
        outcome = run(ints);
    }
    match first {
        Outcome::Value(bits) => Verdict::Value(f64::from_bits(bits)),
        Outcome::Raised(..) | Outcome::Refused => Verdict::Run,
    }
}

/// The failure naming the first position whose typing alone changes the result (else the first
/// in doubt: only a combination does).
fn differ(
    values: &[f64],
    in_doubt: &[(usize, DoubtSites)],
    first: &Outcome,
    run: &dyn Fn(u64) -> Outcome,
) -> Failure {
    let (k, sites) = in_doubt
        .iter()
        .find(|(k, _)| run(1 << k) != *first)
        .unwrap_or(&in_doubt[0]);
    Failure {
        site: sites.differ.0,
        a: values[*k] as i64,
        b: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_integral_finite_values_but_negative_zero_could_be_ints() {
        for v in [0.0, 3.0, -7.0, EXACT_INTS, 1e300] {
            assert!(could_be_int(v), "{v}");
        }
        for v in [-0.0, 0.5, f64::NAN, f64::INFINITY, -f64::INFINITY, 1e-300] {
            assert!(!could_be_int(v), "{v}");
        }
    }

    #[test]
    fn doubts_skip_the_variable_and_declared_parameters() {
        let s = |n| {
            Some(DoubtSites {
                differ: ErrorId(n),
                inexact: ErrorId(n + 10),
                too_many: ErrorId(n + 20),
            })
        };
        let params = Params {
            sites: vec![None, s(1), None, s(3)],
        };
        let positions =
            |v: &[f64]| doubts(&params, v).map(|d| d.iter().map(|p| p.0).collect::<Vec<_>>());
        assert_eq!(positions(&[1.0, 2.0, 3.0, 4.0]), Ok(vec![1, 3]));
        assert_eq!(positions(&[1.0, 2.5, 3.0, -0.0]), Ok(vec![]));
        let past = doubts(&params, &[1.0, 2.0, 3.0, 1e17]).unwrap_err();
        assert_eq!((past.site, past.a), (13, 0), "no one int to show");
        let many = Params {
            sites: (0..7).map(|k| if k == 0 { None } else { s(k) }).collect(),
        };
        let err = doubts(&many, &[0.0; 7]).unwrap_err();
        assert_eq!(err.site, 25, "the fifth value in doubt is one too many");
    }
}
