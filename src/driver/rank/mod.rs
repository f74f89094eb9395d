//! The rank executor: min, max, range, median, quantile and `np.sort(x)[k]` of the
//! neighbourhood, computed in the input's own type with algorithms that share work between
//! neighbouring pixels, instead of the filter's code run on every pixel in double.
//!
//! [`Engine::Auto`](super::Engine::Auto) takes this path, for disjoint arrays, when the filter's
//! optimised IR is one of the forms [`stat::recognise`] accepts and the data facts below hold;
//! otherwise the general row kernel runs as before. [`last_run`] tells which ran.
//!
//! # Why the result is the filter's, bit for bit
//!
//! The general engine gives the filter the `n` footprint values as doubles, `(double)v` of the
//! input's elements (or `cval` outside, in the constant mode), and casts its double result to the
//! output dtype. The rank executor reads the same values (the same [`Plan`], whose lines follow
//! the mode exactly as the general engine's) but keeps them in the input's type `T`:
//! - **Order.** `(double)` is monotone on every dtype (exact, or rounded to nearest for 64-bit
//!   integers), so the value at a sorted position, or the extreme, of the `T` values converts to
//!   the one of the doubles. `cval` must be a `T` whose double is `cval` bit for bit (so not
//!   `0.5` for `uint8`, nor `-0.0` for an integer type); otherwise the general engine runs.
//! - **NaN.** `np.min`/`np.max` give NaN when any value is NaN; CPython's builtin `min(x)` and a
//!   `for v in x: if v < m: m = v` loop keep a NaN only when it comes first; `np.median`,
//!   `np.percentile` and `np.sort(x)[k]` (NaN sorts last) each have rules of their own. Without
//!   NaN all of these forms agree with each other and with a plain minimum, maximum or sorted
//!   position. So a float input is scanned first ([`facts`]), `cval` included in the constant
//!   mode, and one holding a NaN runs the general engine.
//! - **Signed zeros.** `-0.0 == 0.0`, and which of the two a minimum, a maximum, a sorted
//!   position or a quantile's interpolation returns depends on where each sits in the buffer.
//!   The median does not: it adds `0.0` to the middle value (`0.0 + v` is `+0.0` for either
//!   zero), and its even-count mean `(0.0 + a + b) / 2` is `+0.0` for any zeros `a`, `b`. So a
//!   float input holding `-0.0` runs the general engine for every statistic but the median
//!   ([`RankStat::sign_of_zero_matters`]). Equal non-zero values have equal bits, so no other
//!   tie can show.
//! - **Even-count medians and quantiles** are computed from the two values at their sorted
//!   positions, converted to double, with the runtime's own formulas: `(0.0 + a + b) / 2.0` and
//!   NumPy's `_lerp` ([`crate::runtime::QuantilePlan`], with the `q` from the IR).
//! - **`max - min`** is the difference of the two converted extremes, in double, as the IR's
//!   `Sub`.
//! - **Errors.** The recognised forms cannot fail: their reductions have `n >= 1` values, and a
//!   `np.sort(x)[k]` is accepted only with a constant `k` its bounds check proves in range.
//! - **Output.** A result that is one of the values is stored natively when the output has the
//!   input's dtype and `(T)(double)v == v` for every `T` (all but the 64-bit integers); any other
//!   result goes through the driver's C cast of the double ([`super::Dtype::write_line`]).
//!
//! - **Data facts as the run goes.** Without a progress report, float data is not scanned
//!   first: each output line checks the input line of its own index ([`facts::Watch`]), so the
//!   workers together check every line, and a run that finds a NaN (or a `-0.0` where it
//!   matters) stops and leaves the whole output to the general engine.
//!
//! Which IR forms are accepted, and why each is the statistic it is named for, is documented on
//! [`stat`]; the algorithms' own exactness on [`order`], [`sliding`], [`boxed`] (separable
//! boxes, van Herk/Gil-Werman), [`columns`] (sorted columns merged per pixel) and
//! [`perreault`] (column histograms).

mod boxed;
mod columns;
mod elem;
mod exec;
mod facts;
mod order;
mod perreault;
mod registers;
mod simd;
mod sliding;
mod stat;

pub use stat::RankStat;

use super::cache::{content_id, Lru};
use super::dtype::Dtype;
use super::error::DriverError;
use super::executor::Resolved;
use super::mode::Mode;
use super::plan::Plan;
use super::MAX_UNROLLED_TAPS;
use elem::{is_float, with_elem, Elem};
use std::cell::Cell;
use std::sync::{Mutex, OnceLock};

thread_local! {
    /// What the last run through [`Engine::Auto`](super::Engine::Auto) on this thread computed
    /// with the rank executor (`None`: the general engines).
    static LAST: Cell<Option<RankStat>> = const { Cell::new(None) };
}

/// The statistic the last `Engine::Auto` run on the calling thread computed with the rank
/// executor, or `None` if it ran the general engine (the filter is not a recognised rank
/// statistic, the data held NaN or `-0.0`, `cval` is not of the input's type, or the arrays
/// overlap). For tests and for users asking why a filter is fast or not.
pub fn last_run() -> Option<RankStat> {
    LAST.with(Cell::get)
}

/// Starts a CPU run: until the rank executor takes it, [`last_run`] says `None`.
pub(crate) fn forget_last_run() {
    LAST.with(|l| l.set(None));
}

/// The rank statistic `filter`, specialised to `n` values, computes (its bound values baked in),
/// if it is one; remembered per filter content.
pub fn rank_stat(filter: &crate::Filter, n: usize) -> Option<RankStat> {
    type Recognised = Mutex<Lru<(u64, usize), Option<RankStat>>>;
    static CACHE: OnceLock<Recognised> = OnceLock::new();
    let cache = || CACHE.get_or_init(|| Mutex::new(Lru::new(64)));
    let key = (content_id(filter), n);
    let lock = || cache().lock().unwrap_or_else(|p| p.into_inner());
    if let Some(found) = lock().get(&key) {
        return found;
    }
    let found = stat::recognise(&filter.baked_ir(n));
    lock().insert(key, found);
    found
}

/// Runs `run` with the rank executor if the proof holds for it; `None` leaves it to the general
/// engine. Called for disjoint arrays under `Engine::Auto` only.
pub(crate) fn try_run(run: &Resolved<'_>, plan: &Plan) -> Option<Result<(), DriverError>> {
    let n = run.geometry.tap_count();
    // Above this the filter is not specialised (its loops would be unrolled over every tap),
    // and neither is the IR that would prove it a rank statistic.
    if n > MAX_UNROLLED_TAPS {
        return None;
    }
    let stat = rank_stat(run.filter, n)?;
    let input = run.input;
    let constant = run.mode == Mode::Constant;
    let threads = super::exec::thread_count(run.options.threads);
    let zero_matters = stat.sign_of_zero_matters();
    let mut watch = None;
    if is_float(input.dtype) {
        if constant {
            let c = facts::Found::of(run.cval);
            if c.nan || (c.negative_zero && zero_matters) {
                return None;
            }
        }
        match run.options.progress {
            // The data is checked line by line as the run goes (`facts::Watch`)...
            None => watch = Some(facts::Watch::new(zero_matters)),
            // ... except where progress is reported: a run that stopped on a NaN would have
            // reported lines that the general engine then reports again.
            Some(_) => {
                // SAFETY: the input is valid memory (`execute`'s contract).
                let found = unsafe { facts::scan(input, threads) };
                if found.nan || (found.negative_zero && zero_matters) {
                    return None;
                }
            }
        }
    }
    let result = with_elem!(input.dtype, T => {
        // Outside the constant mode `cval` is never read; any value of the type will do.
        let cval = match constant {
            true => T::exactly(run.cval)?,
            false => T::default(),
        };
        let work = exec::Work {
            plan, input, output: run.output, stat, cval, options: run.options, watch: watch.as_ref(),
        };
        exec::run::<T>(&work, threads)
    });
    if watch.is_some_and(|w| w.failed()) {
        return None;
    }
    LAST.with(|l| l.set(Some(stat)));
    Some(result)
}
