//! Which rank statistic a filter computes, read from its optimised IR (never from source text).
//!
//! The IR is the filter specialised to the footprint's size `n` with its bound values baked in
//! ([`crate::Filter::baked_ir`]): straight-line code in which `np.min(x)` is one [`Stmt::Reduce`],
//! `np.median(x)` a [`Stmt::MedianNetwork`] (or `Fill` + `Sort` + [`Stmt::Sorted`] above the
//! network size), and a `for v in x: if v < m: m = v` loop an unrolled chain of `Select`s. A
//! small symbolic evaluation walks the body; every value is one of a few shapes ([`Sym`]) and
//! anything else makes the filter "not a rank statistic" (the general engine then runs). The
//! zero-sign guards NumPy's forms carry ([`crate::ir::zero_signs`]) are passed over where the
//! statistic sends the windows holding `-0.0` to the general engine, which runs them. Which
//! forms are accepted, and why each equals its [`RankStat`], is the proof in the parent module.

use crate::ir::zero_signs::as_zero_of_sign;
use crate::ir::{ArrayOp, BinOp, CmpOp, Expr, Func, ReduceOp, SortedStat, Stmt, UnOp, Var, BUFFER};
use crate::runtime::QuantilePlan;

/// A statistic of the footprint's values that the rank executor computes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RankStat {
    Min,
    Max,
    /// `max - min`, in double.
    Range,
    /// NumPy's median: the middle value plus `0.0`, or the mean of the two middle values.
    Median,
    /// NumPy's linear quantile at `q` in `[0, 1]` ([`QuantilePlan`]).
    Quantile(f64),
    /// The `k`-th smallest value (0-based), as `np.sort(x)[k]`.
    KthSorted(usize),
}

/// What a recognised filter gives where its values hold a NaN.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NanRule {
    /// NaN whenever any value is NaN: NumPy's `np.min`/`np.max` ([`ReduceOp::Min`]), a
    /// difference with one of them on either side, `np.median` and the quantiles, and the one
    /// value of a single-tap footprint. An algorithm that carries a NaN on through every step
    /// computes these windows too.
    Propagates,
    /// A rule of the form's own: CPython's `min`/`max` and `<` loops keep a NaN only when it
    /// comes first, `np.sort` orders it last. Those windows must run the filter's own code.
    OwnCode,
}

impl NanRule {
    /// The rule of a difference of two values: NaN minus anything is NaN, so it propagates
    /// when either side does.
    fn difference(self, other: NanRule) -> NanRule {
        match (self, other) {
            (NanRule::OwnCode, NanRule::OwnCode) => NanRule::OwnCode,
            _ => NanRule::Propagates,
        }
    }
}

/// A filter recognised as a rank statistic, with its NaN rule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RankForm {
    pub stat: RankStat,
    pub nan: NanRule,
}

/// Which sorted positions a statistic reads, for `n` values; `None` for min, max and range,
/// which the rank executor computes without ordering the values.
pub enum Positions {
    /// One position; the result is that value (plus `0.0` for a median, where `plus_zero`).
    One { at: usize, plus_zero: bool },
    /// Two positions mixed in double: NumPy's even median or a quantile.
    Two(usize, usize, Mix),
}

/// How two sorted values make the result.
#[derive(Clone, Copy)]
pub enum Mix {
    /// `(0.0 + a + b) / 2.0` ([`crate::runtime::middle_mean`]).
    Mean,
    /// NumPy's linear interpolation ([`QuantilePlan::lerp`]).
    Lerp(QuantilePlan),
}

impl Mix {
    #[inline]
    pub fn apply(self, a: f64, b: f64) -> f64 {
        match self {
            Mix::Mean => (0.0 + a + b) / 2.0,
            Mix::Lerp(plan) => plan.lerp(a, b),
        }
    }
}

impl RankStat {
    /// Whether which of two equal values with different bits (`-0.0`, `+0.0`) the statistic
    /// picks can show in its result. Only the median adds `0.0` to whatever it picks.
    pub fn sign_of_zero_matters(self) -> bool {
        self != RankStat::Median
    }

    /// The sorted positions read for `n >= 1` values ([`Positions`]), `None` for the
    /// extremes.
    pub fn positions(self, n: usize) -> Option<Positions> {
        match self {
            RankStat::Min | RankStat::Max | RankStat::Range => None,
            RankStat::Median if n % 2 == 1 => Some(Positions::One {
                at: n / 2,
                plus_zero: true,
            }),
            RankStat::Median => Some(Positions::Two(n / 2 - 1, n / 2, Mix::Mean)),
            RankStat::KthSorted(k) => Some(Positions::One {
                at: k,
                plus_zero: false,
            }),
            RankStat::Quantile(q) => {
                let plan = QuantilePlan::new(n, q)?;
                Some(Positions::Two(plan.prev, plan.next, Mix::Lerp(plan)))
            }
        }
    }
}

/// A value of the symbolic evaluation.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Sym {
    /// An integer known at compile time (indices, dead loop counters).
    Int(i64),
    /// Buffer element `k`.
    Tap(usize),
    /// CPython's running `min`/`max` over taps `0..seen` in buffer order: `acc = x[0]`, then
    /// `if v < acc: acc = v` (`>` for max) for each later tap.
    Running {
        max: bool,
        seen: usize,
    },
    Stat(RankStat, NanRule),
    /// Whether the footprint's values hold a zero of this sign (`true`: `-0.0`): a reduction of
    /// [`zero_of_sign`](crate::ir::zero_signs::zero_of_sign) over all of them, part of a guard.
    ZeroSeen(bool),
    /// Anything else: fine while unused, fatal once read.
    Other,
}

/// What a scratch array holds: a copy of the whole buffer, then that copy sorted.
#[derive(Clone, Copy, PartialEq)]
enum Scratch {
    Buffer,
    Sorted,
    Other,
}

/// The rank statistic `ir` computes over its `n` values, if it is one of the recognised forms.
pub fn recognise(ir: &Func) -> Option<RankForm> {
    let n = ir.filter_size?;
    if n == 0 {
        return None;
    }
    let mut eval = Eval {
        n,
        vars: vec![Sym::Other; ir.vars.len()],
        arrays: vec![Scratch::Other; ir.arrays.len()],
        guarded: false,
    };
    for s in &ir.body {
        if let Some(result) = eval.stmt(s)? {
            // A guard can fail only on values holding a `-0.0`, which the executor leaves to
            // the general engine (running the guard) for the statistics that show a zero's sign.
            return (!eval.guarded || result.stat.sign_of_zero_matters()).then_some(result);
        }
    }
    None
}

struct Eval {
    n: usize,
    vars: Vec<Sym>,
    arrays: Vec<Scratch>,
    /// Whether a zero-sign guard was passed over ([`Eval::zero_guard`]).
    guarded: bool,
}

impl Eval {
    /// Steps over one statement: `None` if it leaves the recognised forms, `Some(Some(stat))` at
    /// the `return` of a statistic.
    fn stmt(&mut self, s: &Stmt) -> Option<Option<RankForm>> {
        match s {
            Stmt::Assign(v, e) => self.vars[v.0 as usize] = self.expr(e),
            Stmt::Reduce {
                dst,
                op,
                len,
                index,
                elem,
                ..
            } => {
                let (stat, nan) = match op {
                    ReduceOp::Min => (RankStat::Min, NanRule::Propagates),
                    ReduceOp::Max => (RankStat::Max, NanRule::Propagates),
                    ReduceOp::PyMin => (RankStat::Min, NanRule::OwnCode),
                    ReduceOp::PyMax => (RankStat::Max, NanRule::OwnCode),
                    ReduceOp::Any => {
                        let negative = self.zero_seen(len, *index, elem)?;
                        self.vars[dst.0 as usize] = Sym::ZeroSeen(negative);
                        return Some(None);
                    }
                    _ => return None,
                };
                self.whole_buffer(len, *index, elem)?;
                self.vars[dst.0 as usize] = Sym::Stat(stat, nan);
            }
            Stmt::Fill {
                dst,
                len,
                index,
                elem,
                keep: None,
            } => {
                self.whole_buffer(len, *index, elem)?;
                self.arrays[dst.0 as usize] = Scratch::Buffer;
            }
            Stmt::ArrayOp(ArrayOp::Sort { .. }, a) => {
                let a = &mut self.arrays[a.0 as usize];
                *a = match *a {
                    Scratch::Buffer | Scratch::Sorted => Scratch::Sorted,
                    Scratch::Other => Scratch::Other,
                };
            }
            Stmt::Sorted { dst, stat, arr, q } => {
                if self.arrays[arr.0 as usize] != Scratch::Sorted {
                    return None;
                }
                let stat = match (stat, q) {
                    (SortedStat::Median, _) => RankStat::Median,
                    (SortedStat::Quantile, Expr::F64(q)) => RankStat::Quantile(*q),
                    _ => return None,
                };
                // NumPy's median and quantiles are NaN when any value is.
                self.vars[dst.0 as usize] = Sym::Stat(stat, NanRule::Propagates);
            }
            Stmt::MedianNetwork { dst, elems, .. } => {
                // The median is symmetric: any order of the whole buffer will do.
                let mut seen = vec![false; self.n];
                for e in elems {
                    match self.expr(e) {
                        Sym::Tap(k) if !seen[k] => seen[k] = true,
                        _ => return None,
                    }
                }
                if !seen.iter().all(|&s| s) {
                    return None;
                }
                self.vars[dst.0 as usize] = Sym::Stat(RankStat::Median, NanRule::Propagates);
            }
            Stmt::Check { cond, .. } => {
                // Only checks that cannot fail, or a zero-sign guard's: one that could fail
                // otherwise must raise its error.
                if !self.always_true(cond) && !self.zero_guard(cond) {
                    return None;
                }
            }
            // A guard run when a result is a zero: its condition does not matter, since the
            // guard fails only where the values hold both zeros whatever it is.
            Stmt::If(_, then, els) if els.is_empty() => {
                for s in then {
                    match s {
                        Stmt::Reduce {
                            op: ReduceOp::Any, ..
                        }
                        | Stmt::Check { .. } => self.stmt(s)?,
                        _ => return None,
                    };
                }
            }
            Stmt::Return(e) => return self.result(e).map(Some),
            _ => return None,
        }
        Some(None)
    }

    /// The sign a reduction's [`zero_of_sign`](crate::ir::zero_signs::zero_of_sign) asks about,
    /// if it reads all the footprint's values: the buffer, or a copy of it, sorted or not.
    fn zero_seen(&self, len: &Expr, index: Var, elem: &Expr) -> Option<bool> {
        let (e, negative) = as_zero_of_sign(elem)?;
        let all = match e {
            Expr::Load(a, i) if **i == Expr::Var(index) => {
                *a == BUFFER || self.arrays[a.0 as usize] != Scratch::Other
            }
            _ => false,
        };
        (all && self.expr(len) == Sym::Int(self.n as i64)).then_some(negative)
    }

    /// `not (... and neg and pos)`, a conjunction holding both [`Sym::ZeroSeen`]: the check of a
    /// zero-sign guard, which fails only where the values hold both `0.0` and `-0.0`, whatever
    /// else the conjunction asks (that the result is a zero, say).
    fn zero_guard(&mut self, cond: &Expr) -> bool {
        fn conjuncts<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
            match e {
                Expr::Binary(BinOp::And, a, b) => {
                    conjuncts(a, out);
                    conjuncts(b, out);
                }
                e => out.push(e),
            }
        }
        let Expr::Unary(UnOp::Not, all) = cond else {
            return false;
        };
        let mut terms = Vec::new();
        conjuncts(all, &mut terms);
        let holds = |negative| {
            terms
                .iter()
                .any(|t| self.expr(t) == Sym::ZeroSeen(negative))
        };
        let guard = holds(true) && holds(false);
        self.guarded |= guard;
        guard
    }

    /// That a reduction or fill reads `x[i]` for `i in 0..n`.
    fn whole_buffer(&self, len: &Expr, index: Var, elem: &Expr) -> Option<()> {
        let whole = *len == Expr::I64(self.n as i64)
            && matches!(elem, Expr::Load(BUFFER, i) if **i == Expr::Var(index));
        whole.then_some(())
    }

    fn expr(&self, e: &Expr) -> Sym {
        match e {
            Expr::I64(i) => Sym::Int(*i),
            Expr::Var(v) => self.vars[v.0 as usize],
            Expr::Load(BUFFER, i) => match self.expr(i) {
                Sym::Int(k) if (0..self.n as i64).contains(&k) => Sym::Tap(k as usize),
                _ => Sym::Other,
            },
            Expr::Select(c, a, b) => self.running(c, a, b),
            // The length of the buffer or of a copy of it, and index arithmetic on it.
            Expr::Len(a) if *a == BUFFER || self.arrays[a.0 as usize] != Scratch::Other => {
                Sym::Int(self.n as i64)
            }
            Expr::Binary(op @ (BinOp::Add | BinOp::Sub), a, b) => {
                match (self.expr(a), self.expr(b)) {
                    (Sym::Int(a), Sym::Int(b)) if *op == BinOp::Add => Sym::Int(a.wrapping_add(b)),
                    (Sym::Int(a), Sym::Int(b)) => Sym::Int(a.wrapping_sub(b)),
                    _ => Sym::Other,
                }
            }
            _ => Sym::Other,
        }
    }

    /// `select(v < acc, v, acc)` (or `acc > v`; `>` for max): one step of CPython's running
    /// min/max, where `acc` starts as `x[0]` and `v` is the next tap. A tap already seen leaves
    /// the result unchanged (the loop's first step compares `x[0]` with itself): `acc` is NaN
    /// only if `x[0]` is, and otherwise no larger than every non-NaN tap seen, so the
    /// comparison is false.
    fn running(&self, c: &Expr, a: &Expr, b: &Expr) -> Sym {
        let Expr::Cmp(op, l, r) = c else {
            return Sym::Other;
        };
        let (v, acc) = (self.expr(a), self.expr(b));
        let (Sym::Tap(k), Some((max, seen))) = (v, running_state(acc)) else {
            return Sym::Other;
        };
        // The comparison as `v OP acc`.
        let op = match (
            self.expr(l) == v && self.expr(r) == acc,
            self.expr(r) == v && self.expr(l) == acc,
        ) {
            (true, _) => *op,
            (_, true) => flip(*op),
            _ => return Sym::Other,
        };
        let is_max = match op {
            CmpOp::Lt => false,
            CmpOp::Gt => true,
            _ => return Sym::Other,
        };
        if is_max != max && seen > 1 {
            return Sym::Other;
        }
        match k {
            k if k < seen => Sym::Running { max: is_max, seen },
            k if k == seen => Sym::Running {
                max: is_max,
                seen: seen + 1,
            },
            _ => Sym::Other,
        }
    }

    fn always_true(&self, cond: &Expr) -> bool {
        self.truth(cond) == Some(true)
    }

    /// A condition's value where the integers it compares are known.
    fn truth(&self, e: &Expr) -> Option<bool> {
        match e {
            Expr::Bool(b) => Some(*b),
            Expr::Cmp(op, a, b) => match (self.expr(a), self.expr(b)) {
                (Sym::Int(a), Sym::Int(b)) => Some(match op {
                    CmpOp::Lt => a < b,
                    CmpOp::Le => a <= b,
                    CmpOp::Gt => a > b,
                    CmpOp::Ge => a >= b,
                    CmpOp::Eq => a == b,
                    CmpOp::Ne => a != b,
                }),
                _ => None,
            },
            Expr::Binary(BinOp::And, a, b) => Some(self.truth(a)? && self.truth(b)?),
            Expr::Binary(BinOp::Or, a, b) => Some(self.truth(a)? || self.truth(b)?),
            _ => None,
        }
    }

    /// The statistic a returned expression is.
    fn result(&self, e: &Expr) -> Option<RankForm> {
        let form = |stat, nan| Some(RankForm { stat, nan });
        match e {
            Expr::Binary(BinOp::Sub, a, b) => match (self.expr(a), self.expr(b)) {
                (Sym::Stat(RankStat::Max, x), Sym::Stat(RankStat::Min, y)) => {
                    form(RankStat::Range, x.difference(y))
                }
                _ => None,
            },
            Expr::Load(arr, i) if self.arrays[arr.0 as usize] == Scratch::Sorted => {
                match self.expr(i) {
                    Sym::Int(k) if (0..self.n as i64).contains(&k) => {
                        form(RankStat::KthSorted(k as usize), NanRule::OwnCode)
                    }
                    _ => None,
                }
            }
            _ => match self.expr(e) {
                Sym::Stat(s, nan) => form(s, nan),
                Sym::Running { max, seen } if seen == self.n => {
                    let stat = if max { RankStat::Max } else { RankStat::Min };
                    form(stat, NanRule::OwnCode)
                }
                // The value itself, NaN or not.
                Sym::Tap(0) if self.n == 1 => form(RankStat::Min, NanRule::Propagates),
                _ => None,
            },
        }
    }
}

/// `(max, seen)` of a running extreme; `x[0]` alone starts one of either kind.
fn running_state(s: Sym) -> Option<(bool, usize)> {
    match s {
        Sym::Running { max, seen } => Some((max, seen)),
        Sym::Tap(0) => Some((false, 1)),
        _ => None,
    }
}

/// `a OP b` as `b OP' a`.
fn flip(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::Le => CmpOp::Ge,
        CmpOp::Ge => CmpOp::Le,
        o => o,
    }
}
