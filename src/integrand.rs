//! Python ints and NumPy scalars among the values quad passes an integrand.
//!
//! scipy's `quad` hands a `LowLevelCallable` its `args` as C doubles: `quad(f, 0, 1, args=(0,))`,
//! `args=(0.0,)` and `args=(np.float64(0),)` reach the integrand as the same double, yet Python
//! calls `f` with the int `0`, the float `0.0` or the NumPy scalar, and integrands can tell them
//! apart: `-a * x` is `0.0` for the int and `-0.0` for the float, `a ** 40` is exact for the int
//! only, `math.comb(a, 2)` takes ints only, `1 / a` raises for the Python zero and is `inf` for
//! NumPy's, and `round(a, 2)` rounds a NumPy float by another rule. An outer variable of
//! `dblquad`/`nquad` arrives the same way (quad passes it among the inner integral's `args`),
//! always a Python float.
//!
//! So the integrand's trampoline (`crate::context`) looks at each value after the variable. Each
//! may be a Python float or a NumPy `float64`; one that could be an int (integral and not `-0.0`)
//! may also be a Python int or a NumPy `int64` — a [`Typing`] says which. A parameter whose source
//! declares its type (`a: float`, `n: int`, `a: np.float64`, `n: np.int64`) has one typing. The
//! trampoline runs the integrand once per typing of the others (the lowering compiles each on
//! first need) and returns the result they share; where they differ it raises, naming the
//! parameter, rather than pick one. Typings whose compiled IR is the plain one's need no run:
//! NumPy's scalars differ from Python's numbers in errors, rounding and wrapping only, so for most
//! integrands (`a * x**2 + b`) the NumPy typings compile to the same IR and cost nothing. A value
//! from 2**53 on stands for several ints, which no double tells apart: refused unless declared.
//! A bool runs as the int it equals (they compute alike except in arrays built from them), and
//! narrower NumPy scalars (`np.float32`, `np.int32`, ...) are not modelled (README, *Known
//! deviations*).

use crate::filter::Filter;
use crate::ir::ErrorId;
use crate::runtime::{Failure, SITE_INTERRUPTED};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, RwLock};

/// Doubles hold every int below 2**53 exactly; from 2**53 on, one double stands for several
/// ints (2**53 and 2**53 + 1 both arrive as 2**53).
pub const EXACT_INTS: f64 = 9_007_199_254_740_992.0;

/// At most this many typings run for one call: with `k` values that may be ints and each of
/// their typings NumPy-sensitive, `3^k`... `4^k` (four such values: 256), and `2^k` for `k`
/// NumPy-sensitive floats.
pub const MAX_TYPINGS: u32 = 256;

/// How an integrand's parameters are typed: bit k of `ints` makes parameter k an int, bit k of
/// `numpy` a NumPy scalar (`np.int64` with the `ints` bit, else `np.float64`); neither, a Python
/// float, as quad passes it. Declared parameters keep their declared types.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Typing {
    pub ints: u64,
    pub numpy: u64,
}

impl Typing {
    /// Whether parameter `k` is typed an int, and whether a NumPy scalar.
    pub fn kind(self, k: usize) -> (bool, bool) {
        let bit = |mask: u64| k < 64 && mask >> k & 1 == 1;
        (bit(self.ints), bit(self.numpy))
    }
}

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
    /// More than [`MAX_TYPINGS`] typings to run for one call.
    pub too_many: ErrorId,
    /// The integrand's result depends on whether the value is a Python number or a NumPy
    /// scalar (`{a}`: the value's bits, shown as a float).
    pub numpy: ErrorId,
}

/// Whether a double quad passes could stand for a Python int.
fn could_be_int(v: f64) -> bool {
    v.is_finite() && v.trunc() == v && !(v == 0.0 && v.is_sign_negative())
}

/// The positions of `values` that may stand for ints, with their error sites; the failure to
/// report when one cannot be tried.
fn doubts(params: &Params, values: &[f64]) -> Result<Vec<(usize, DoubtSites)>, Failure> {
    let mut in_doubt = Vec::new();
    for (k, (&v, sites)) in values.iter().zip(&params.sites).enumerate() {
        let Some(sites) = sites.filter(|_| could_be_int(v)) else {
            continue;
        };
        if v.abs() >= EXACT_INTS {
            // No one int to show.
            return Err(Failure {
                site: sites.inexact.0,
                a: 0,
                b: 0,
            });
        }
        if k >= 64 {
            return Err(too_many(values, k, sites));
        }
        in_doubt.push((k, sites));
    }
    Ok(in_doubt)
}

fn too_many(values: &[f64], k: usize, sites: DoubtSites) -> Failure {
    Failure {
        site: sites.too_many.0,
        a: values[k] as i64,
        b: 0,
    }
}

/// The bits of `mask`, lowest first.
fn bits(mask: u64) -> impl Iterator<Item = usize> {
    (0..64).filter(move |k| mask >> k & 1 == 1)
}

/// Every subset of `mask`, the empty one first.
fn subsets(mask: u64) -> impl Iterator<Item = u64> {
    let mut next = Some(0u64);
    std::iter::from_fn(move || {
        let s = next?;
        let after = s.wrapping_sub(mask) & mask;
        next = (after != 0).then_some(after);
        Some(s)
    })
}

/// The integrand compiled with each typing tried so far, on first need (a few per integrand in
/// practice); `None` where that typing does not compile. And, per set of int positions, the
/// parameters whose NumPy typing compiles to other IR than their Python one: the only ones
/// whose NumPy typings need a run.
#[derive(Default)]
pub(crate) struct Typings {
    compiled: RwLock<HashMap<Typing, Option<Filter>>>,
    sensitive: Mutex<HashMap<u64, u64>>,
    /// `sensitive` for no ints: the common case, read without a lock on every call.
    sensitive_floats: OnceLock<u64>,
}

impl Typings {
    fn get(&self, general: &Filter, typing: Typing) -> Option<Filter> {
        if typing == Typing::default() {
            return Some(general.clone());
        }
        let read = self.compiled.read().unwrap_or_else(|p| p.into_inner());
        if let Some(f) = read.get(&typing) {
            return f.clone();
        }
        drop(read);
        // Called from quad's C code: a compiler panic must not unwind there (the typing is then
        // one that cannot be compared, and the call raises).
        let compile = std::panic::AssertUnwindSafe(|| general.integrand_typed(typing).ok());
        let f = std::panic::catch_unwind(compile).ok().flatten();
        let mut write = self.compiled.write().unwrap_or_else(|p| p.into_inner());
        write.entry(typing).or_insert(f).clone()
    }

    /// The parameters (among those with doubt sites) whose NumPy typing changes the IR, with
    /// `ints` typed ints: where a NumPy scalar's rules may give another result.
    fn numpy_sensitive(&self, general: &Filter, ints: u64) -> u64 {
        let compute = || {
            let params = &general.integrand_params().sites;
            let python = self.get(general, Typing { ints, numpy: 0 });
            let candidates = params
                .iter()
                .enumerate()
                .filter(|(k, s)| *k < 64 && s.is_some());
            candidates
                .filter(|(k, _)| {
                    let numpy = Typing {
                        ints,
                        numpy: 1 << k,
                    };
                    // A typing that does not compile must run (and is then refused).
                    match (&python, self.get(general, numpy)) {
                        (Some(python), Some(numpy)) => python.ir() != numpy.ir(),
                        _ => true,
                    }
                })
                .fold(0u64, |m, (k, _)| m | 1 << k)
        };
        if ints == 0 {
            return *self.sensitive_floats.get_or_init(compute);
        }
        if let Some(&m) = self
            .sensitive
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&ints)
        {
            return m;
        }
        let m = compute();
        self.sensitive
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(ints, m);
        m
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

/// Runs `general`'s integrand on quad's `values` with every typing of the values in doubt whose
/// IR is not the plain one's.
pub(crate) fn resolve(general: &Filter, typings: &Typings, values: &[f64]) -> Verdict {
    let params = general.integrand_params();
    let int_doubts = match doubts(params, values) {
        Ok(d) => d,
        Err(fail) => return Verdict::Fail(fail),
    };
    let int_mask = int_doubts.iter().fold(0u64, |m, (k, _)| m | 1 << k);
    // The parameters quad passed a value for (the others take their Python-float defaults).
    let passed = match values.len() {
        n if n >= 64 => u64::MAX,
        n => (1u64 << n) - 1,
    };
    let sensitive = |ints: u64| typings.numpy_sensitive(general, ints) & passed;
    let too_many_at = |mask: u64| {
        let k = bits(mask).last().unwrap_or(0);
        let sites = params.sites[k].expect("a position in doubt has sites");
        Verdict::Fail(too_many(values, k, sites))
    };
    // Counted before compiling the typings of every set of ints: past 2^8 sets, 256 typings
    // already.
    if 1u64 << int_mask.count_ones() > u64::from(MAX_TYPINGS) {
        return too_many_at(int_mask);
    }
    let count: u64 = subsets(int_mask)
        .map(|ints| 1u64 << sensitive(ints).count_ones())
        .sum();
    if count == 1 {
        return Verdict::Run;
    }
    if count > u64::from(MAX_TYPINGS) {
        return too_many_at(int_mask | sensitive(int_mask));
    }
    let run = |typing: Typing| match typings.get(general, typing) {
        None => Outcome::Refused,
        Some(f) => match f.call(values) {
            Ok(v) => Outcome::value(v),
            Err(e) => Outcome::Raised(e.exception, e.message),
        },
    };
    let first = run(Typing::default());
    for ints in subsets(int_mask) {
        for numpy in subsets(sensitive(ints)) {
            let typing = Typing { ints, numpy };
            let outcome = if typing == Typing::default() {
                first.clone()
            } else {
                run(typing)
            };
            if let Outcome::Raised(crate::Exception::KeyboardInterrupt, _) = outcome {
                let site = SITE_INTERRUPTED;
                return Verdict::Fail(Failure { site, a: 0, b: 0 });
            }
            if outcome != first {
                return Verdict::Fail(differ(params, values, typing, &first, &run));
            }
        }
    }
    match first {
        Outcome::Value(bits) => Verdict::Value(f64::from_bits(bits)),
        Outcome::Raised(..) | Outcome::Refused => Verdict::Run,
    }
}

/// The failure naming the first parameter whose typing alone (as an int, else as a NumPy
/// scalar) changes the result; else the first of `typing`'s, whose combination does.
fn differ(
    params: &Params,
    values: &[f64],
    typing: Typing,
    first: &Outcome,
    run: &dyn Fn(Typing) -> Outcome,
) -> Failure {
    let int = |k: usize| Typing {
        ints: 1 << k,
        numpy: 0,
    };
    let numpy = |k: usize| Typing {
        ints: 0,
        numpy: 1 << k,
    };
    let alone = bits(typing.ints)
        .map(|k| (k, false))
        .chain(bits(typing.numpy).map(|k| (k, true)));
    let candidates: Vec<(usize, bool)> = alone.collect();
    let (k, is_numpy) = candidates
        .iter()
        .copied()
        .find(|&(k, is_numpy)| {
            let t = if is_numpy { numpy(k) } else { int(k) };
            run(t) != *first
        })
        .unwrap_or(candidates[0]);
    let sites = params.sites[k].expect("a position in doubt has sites");
    if is_numpy {
        let a = values[k].to_bits() as i64;
        return Failure {
            site: sites.numpy.0,
            a,
            b: 0,
        };
    }
    Failure {
        site: sites.differ.0,
        a: values[k] as i64,
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
                numpy: ErrorId(n + 30),
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
    }

    #[test]
    fn subsets_run_from_the_empty_one_through_each_once() {
        let all: Vec<u64> = subsets(0b1010).collect();
        assert_eq!(all, vec![0, 0b0010, 0b1000, 0b1010]);
        assert_eq!(subsets(0).collect::<Vec<_>>(), vec![0]);
        assert_eq!(subsets(u64::MAX).take(3).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert_eq!(bits(0b1010).collect::<Vec<_>>(), vec![1, 3]);
    }

    #[test]
    fn a_typing_reads_its_kinds_per_parameter() {
        let t = Typing {
            ints: 0b0110,
            numpy: 0b1100,
        };
        let kinds: Vec<_> = (0..5).map(|k| t.kind(k)).collect();
        let want = [
            (false, false),
            (true, false),
            (true, true),
            (false, true),
            (false, false),
        ];
        assert_eq!(kinds, want);
        assert_eq!(t.kind(64), (false, false), "past the masks: a Python float");
    }
}
