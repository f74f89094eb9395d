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
//!   position. So the windows of a float input that read a NaN are computed by the general
//!   engine, running the filter's own code ([`patch`]), except where the recognizer states that
//!   the filter's NaN propagates ([`NanRule::Propagates`]: NumPy's extremes, median and
//!   quantiles, checked on the filters' own code by `tests/rank.rs`): there a window reading a
//!   NaN is NaN whatever else it holds, and is written so without running the filter. A NaN
//!   `cval` in the constant mode sends the whole run to the general engine.
//! - **Signed zeros.** `-0.0 == 0.0`, and which of the two a minimum, a maximum, a sorted
//!   position or a quantile's interpolation returns depends on where each sits in the buffer.
//!   The median does not: it adds `0.0` to the middle value (`0.0 + v` is `+0.0` for either
//!   zero), and its even-count mean `(0.0 + a + b) / 2` is `+0.0` for any zeros `a`, `b`. So
//!   the windows reading a `-0.0` are the general engine's too, for every statistic but the
//!   median ([`RankStat::sign_of_zero_matters`]). Equal non-zero values have equal bits, so no
//!   other tie can show. There NumPy's own forms (`np.min`, `np.sort`, the quantiles) raise
//!   where the values hold both zeros, NumPy's choice between them being its SIMD code's
//!   ([`crate::ir::zero_signs`]): their guards can fail only on such windows, so [`stat`]
//!   passes over them, for these statistics only.
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
//!   workers together check every line, recording which lines hold a NaN (or a `-0.0` where it
//!   matters). Afterwards the general engine recomputes the windows that read one
//!   ([`patch::pieces`]). A run that finds more of them than [`patch::limit`] (one value in
//!   eight times the taps: then an eighth of the pixels or more would be recomputed) stops and
//!   leaves the whole output to the general engine, as does a run reporting progress that a
//!   scan first finds holding one.
//!
//! Which IR forms are accepted, and why each is the statistic it is named for, is documented on
//! [`stat`]; the algorithms' own exactness on [`order`], [`sliding`] (its folds' whole vectors
//! in [`lanes`]), [`boxed`] (separable boxes, van Herk/Gil-Werman), [`groups`] (footprints of
//! one chord a row, as boxes of rows that share a chord), [`columns`] (sorted columns merged per
//! pixel), [`perreault`] (column histograms) and [`ranked`] (a band's values ranked once, each
//! window a set of ranks).

mod aligned;
mod boxed;
mod columns;
mod elem;
mod exec;
mod facts;
mod groups;
mod lanes;
mod median3;
mod order;
mod patch;
mod perreault;
mod ranked;
mod registers;
mod simd;
mod sliding;
mod stat;
mod store;

pub use stat::{Mix, NanRule, Positions, RankForm, RankStat};

use super::cache::{content_id, Lru};
use super::dtype::Dtype;
use super::error::DriverError;
use super::executor::Resolved;
use super::mode::Mode;
use super::plan::Plan;
use super::MAX_UNROLLED_TAPS;
use elem::{is_float, with_elem, Elem};
use facts::Fate;
use std::cell::Cell;
use std::sync::{Mutex, OnceLock};

thread_local! {
    /// What the last run through [`Engine::Auto`](super::Engine::Auto) on this thread computed
    /// with the rank executor (`None`: the general engines).
    static LAST: Cell<Option<RankStat>> = const { Cell::new(None) };
    /// See [`last_patched`].
    static PATCHED: Cell<usize> = const { Cell::new(0) };
    /// See [`last_nan_pixels`].
    static NAN_PIXELS: Cell<usize> = const { Cell::new(0) };
}

/// The statistic the last `Engine::Auto` run on the calling thread computed with the rank
/// executor, or `None` if it ran the general engine (the filter is not a recognised rank
/// statistic, the data held NaN or `-0.0`, `cval` is not of the input's type, or the arrays
/// overlap). For tests and for users asking why a filter is fast or not.
pub fn last_run() -> Option<RankStat> {
    LAST.with(Cell::get)
}

/// How many pixels of the last `Engine::Auto` run on the calling thread that the rank executor
/// took were recomputed by the general engine, their windows holding a NaN (where the filter's
/// NaN rule is its own) or a `-0.0` (where the statistic could show its sign): see [`patch`].
pub fn last_patched() -> usize {
    PATCHED.with(Cell::get)
}

/// How many pixels of that run were written NaN without running the filter, their windows
/// holding a NaN and the filter's NaN propagating ([`NanRule::Propagates`]): see [`patch`].
pub fn last_nan_pixels() -> usize {
    NAN_PIXELS.with(Cell::get)
}

/// Records how many pixels the general engine recomputed after the rank executor, and how many
/// were written NaN.
pub(crate) fn set_patched(patch: &Patch) {
    let count = |p: &[(usize, usize)]| p.iter().map(|(p0, p1)| p1 - p0).sum();
    PATCHED.with(|p| p.set(count(&patch.recomputed)));
    NAN_PIXELS.with(|p| p.set(count(&patch.nan)));
}

/// Starts a CPU run: until the rank executor takes it, [`last_run`] says `None`.
pub(crate) fn forget_last_run() {
    LAST.with(|l| l.set(None));
    PATCHED.with(|p| p.set(0));
    NAN_PIXELS.with(|p| p.set(0));
}

/// The rank statistic `filter`, specialised to `n` values, computes (its bound values baked in),
/// if it is one.
pub fn rank_stat(filter: &crate::Filter, n: usize) -> Option<RankStat> {
    rank_form(filter, n).map(|f| f.stat)
}

/// The rank statistic `filter`, specialised to `n` values, computes, with its NaN rule, if it
/// is one; remembered per filter content.
pub fn rank_form(filter: &crate::Filter, n: usize) -> Option<RankForm> {
    type Recognised = Mutex<Lru<(u64, usize), Option<RankForm>>>;
    static CACHE: OnceLock<Recognised> = OnceLock::new();
    let cache = || CACHE.get_or_init(|| Mutex::new(Lru::new(64)));
    let key = (content_id(filter), n);
    let lock = || cache().lock().unwrap_or_else(|p| p.into_inner());
    if let Some(found) = lock().get(&key) {
        return found;
    }
    let found = stat::recognise(&filter.baked_ir(n, crate::ir::BufferValues::Any));
    lock().insert(key, found);
    found
}

/// What the rank executor did with a run.
pub(crate) enum Taken {
    /// It computed the whole output.
    Done(Result<(), DriverError>),
    /// It computed the output, except the pixels whose windows read a value the proof excludes
    /// ([`patch`]).
    Patch(Patch),
}

/// The pixels a rank run left, as C-order ranges `[p0, p1)`, each within one line.
pub(crate) struct Patch {
    /// Pixels whose result is NaN: their windows read a NaN, and the filter's NaN propagates.
    pub nan: Vec<(usize, usize)>,
    /// Pixels the general engine must recompute (after the NaN ones: a pixel in both is NaN).
    pub recomputed: Vec<(usize, usize)>,
}

/// Runs `run` with the rank executor if the proof holds for it; `None` leaves it to the general
/// engine. Called for disjoint arrays under `Engine::Auto` only.
pub(crate) fn try_run(run: &Resolved<'_>, plan: &Plan) -> Option<Taken> {
    let n = run.geometry.tap_count();
    // Above this the filter is not specialised (its loops would be unrolled over every tap),
    // and neither is the IR that would prove it a rank statistic.
    if n > MAX_UNROLLED_TAPS {
        return None;
    }
    let RankForm { stat, nan } = rank_form(run.filter, n)?;
    let input = run.input;
    let constant = run.mode == Mode::Constant;
    let threads = super::exec::thread_count(run.options.threads);
    let rules = facts::Rules {
        zero_matters: stat.sign_of_zero_matters(),
        nan_is_result: nan == NanRule::Propagates,
    };
    let mut watch = None;
    if is_float(input.dtype) {
        if constant && facts::Found::of(run.cval).excludes(rules.zero_matters) {
            return None;
        }
        match run.options.progress {
            // The data is checked line by line as the run goes (`facts::Watch`), and the
            // windows holding an excluded value are patched afterwards...
            None => {
                let total = plan.lines * plan.len;
                let limit = [
                    patch::limit(total, n),
                    patch::nan_limit(total, plan.slots.len()),
                ];
                watch = Some(facts::Watch::new(rules, limit));
            }
            // ... except where progress is reported: a patch would report its pixels twice.
            Some(_) => {
                // SAFETY: the input is valid memory (`execute`'s contract).
                let found = unsafe { facts::scan(input, threads) };
                if found.excludes(rules.zero_matters) {
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
            store: store::Store::for_output(run.output),
        };
        exec::run::<T>(&work, threads)
    });
    if watch.as_ref().is_some_and(|w| w.failed()) {
        return None;
    }
    LAST.with(|l| l.set(Some(stat)));
    match watch {
        Some(w) if result.is_ok() && (w.any(Fate::Recomputed) || w.any(Fate::Nan)) => {
            let pieces = |fate| patch::pieces(plan, &w.runs(fate, plan.lines));
            Some(Taken::Patch(Patch {
                nan: pieces(Fate::Nan),
                recomputed: pieces(Fate::Recomputed),
            }))
        }
        _ => Some(Taken::Done(result)),
    }
}
