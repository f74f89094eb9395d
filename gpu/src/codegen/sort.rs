//! Sorting networks for scratch arrays held in registers.
//!
//! `np.median(x)` lowers to "fill a scratch array, sort it, take the middle". With the length
//! known and the array in registers, the sort is a comparator network: Batcher's odd-even merge
//! sort, pruned backwards to the comparators that influence the positions read afterwards (for a
//! median, little more than a selection network), each comparator a `min.f64`/`max.f64` pair.
//! That path is taken when the array holds no NaN and no zero, where any correct sort yields the
//! same bits. Otherwise (rare in data) an odd-even transposition sort with NumPy's order runs:
//! adjacent swaps of strictly greater pairs only, hence stable, hence bit for bit the CPU's
//! insertion sort, signed zeros and NaN positions included.

/// Batcher's odd-even merge sort on `n` positions: the core's network (`ir::network`), which
/// every backend emits.
pub use ndjit::ir::network::batcher_pairs as batcher;
pub use ndjit::ir::network::{pruned, Comparator};

use crate::pir::Reg;
use ndjit::driver::Mix;

/// Two sorted values made one in double as the runtime makes them ([`Mix::apply`]): the mean
/// of two middles, `(0.0 + a + b) / 2.0`, or NumPy's `_lerp` at the plan's constant `gamma`.
pub fn mix(k: &mut crate::pir::Func, mix: Mix, (a, b): (Reg, Reg)) -> Reg {
    use crate::pir::{Bin, Src, T};
    match mix {
        Mix::Mean => {
            let s = k.bin(Bin::Add, T::F64, Src::f64(0.0), a);
            let s = k.bin(Bin::Add, T::F64, s, b);
            k.bin(Bin::Div, T::F64, s, Src::f64(2.0))
        }
        Mix::Lerp(plan) => {
            let diff = k.bin(Bin::Sub, T::F64, b, a);
            if plan.gamma >= 0.5 {
                let t = k.bin(Bin::Mul, T::F64, diff, Src::f64(1.0 - plan.gamma));
                k.bin(Bin::Sub, T::F64, b, t)
            } else {
                let t = k.bin(Bin::Mul, T::F64, diff, Src::f64(plan.gamma));
                k.bin(Bin::Add, T::F64, a, t)
            }
        }
    }
}

/// [`pruned`] as plain pairs.
pub fn pruned_pairs(net: &[(usize, usize)], needed: &[usize]) -> Vec<(usize, usize)> {
    pruned(net, needed).iter().map(|c| (c.i, c.j)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(v: &mut [i64], net: &[Comparator]) {
        for c in net {
            let (a, b) = (v[c.i], v[c.j]);
            if c.want_min {
                v[c.i] = a.min(b);
            }
            if c.want_max {
                v[c.j] = a.max(b);
            }
        }
    }

    #[test]
    fn networks_sort_and_select() {
        let mut seed = 12345u64;
        for n in 1..=40 {
            let all: Vec<usize> = (0..n).collect();
            let full = pruned(&batcher(n), &all);
            let mid = pruned(&batcher(n), &[n / 2]);
            assert!(mid.len() <= full.len());
            for _ in 0..200 {
                let mut v: Vec<i64> = (0..n)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        (seed % 7) as i64
                    })
                    .collect();
                let mut sorted = v.clone();
                sorted.sort();
                let mut w = v.clone();
                run(&mut v, &full);
                assert_eq!(v, sorted, "n = {n}");
                run(&mut w, &mid);
                assert_eq!(w[n / 2], sorted[n / 2], "median, n = {n}");
            }
        }
        // For a median of 25 the pruned network is smaller than the full one (113 vs 140).
        assert!(
            pruned(&batcher(25), &[12]).len() < batcher(25).len(),
            "{} vs {}",
            pruned(&batcher(25), &[12]).len(),
            batcher(25).len()
        );
    }
}

/// Batcher's network on `ns + nt` positions whose first `ns` and last `nt` values arrive sorted,
/// without the comparators that can then never exchange (found by the 0-1 principle: the inputs
/// with two sorted runs are closed under thresholding, so a comparator that exchanges no 0-1 input
/// of that form exchanges no input of it).
pub fn merge_network(ns: usize, nt: usize) -> Vec<(usize, usize)> {
    let n = ns + nt;
    let net = batcher(n);
    let mut swaps = vec![false; net.len()];
    for a in 0..=ns {
        for b in 0..=nt {
            let mut v: Vec<u8> = (0..ns)
                .map(|i| (i >= a) as u8)
                .chain((0..nt).map(|i| (i >= b) as u8))
                .collect();
            for (k, &(i, j)) in net.iter().enumerate() {
                if v[j] < v[i] {
                    v.swap(i, j);
                    swaps[k] = true;
                }
            }
        }
    }
    net.into_iter()
        .zip(swaps)
        .filter(|(_, s)| *s)
        .map(|(p, _)| p)
        .collect()
}

/// The median of two horizontally adjacent windows of a `rows × cols` box (odd `rows × cols`),
/// which share all but one column: sort the shared values once (only the positions that can
/// matter), then per output sort its own column and merge the two at the right rank.
#[derive(Clone, Debug, PartialEq)]
pub struct PairMedian {
    /// On the `rows × (cols - 1)` shared values.
    pub shared: Vec<(usize, usize)>,
    /// The shared positions `lo..=hi` that are candidates.
    pub lo: usize,
    pub hi: usize,
    /// On one output's own column (`rows` values).
    pub own: Vec<(usize, usize)>,
    /// On the candidates followed by the sorted own column; the median ends at position `rank`.
    pub merge: Vec<(usize, usize)>,
    pub rank: usize,
}

impl PairMedian {
    pub fn new(rows: usize, cols: usize) -> Option<PairMedian> {
        let n = rows * cols;
        if n.is_multiple_of(2) || cols < 2 || rows == 0 {
            return None;
        }
        let (k, t) = (n / 2, rows);
        let (lo, hi) = (k.checked_sub(t)?, k);
        let shared = pruned_pairs(&batcher(n - t), &(lo..=hi).collect::<Vec<_>>());
        let merge = pruned_pairs(&merge_network(hi - lo + 1, t), &[t]);
        Some(PairMedian {
            shared,
            lo,
            hi,
            own: batcher(t),
            merge,
            rank: t,
        })
    }

    /// The pair's candidates: `shared` (its shared values, in the positions [`PairMedian::shared`]
    /// sorts) through `step`, a compare-exchange of two positions.
    pub fn candidates<R: Copy>(
        &self,
        mut shared: Vec<R>,
        mut step: impl FnMut(&mut [R], usize, usize),
    ) -> Vec<R> {
        for &(i, j) in &self.shared {
            step(&mut shared, i, j);
        }
        shared[self.lo..=self.hi].to_vec()
    }

    /// One output's median: its `own` column sorted and merged with the pair's `cands`.
    pub fn median<R: Copy>(
        &self,
        cands: &[R],
        mut own: Vec<R>,
        mut step: impl FnMut(&mut [R], usize, usize),
    ) -> R {
        for &(i, j) in &self.own {
            step(&mut own, i, j);
        }
        let mut c: Vec<R> = cands.iter().copied().chain(own).collect();
        for &(i, j) in &self.merge {
            step(&mut c, i, j);
        }
        c[self.rank]
    }
}

#[cfg(test)]
mod pair_tests {
    use super::*;

    fn step(v: &mut [i64], i: usize, j: usize) {
        if v[j] < v[i] {
            v.swap(i, j);
        }
    }

    #[test]
    fn pair_medians_are_the_medians() {
        let mut seed = 99u64;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % 9) as i64
        };
        for (rows, cols) in [(3, 3), (5, 5), (3, 5), (5, 3), (7, 7), (1, 3)] {
            let p = PairMedian::new(rows, cols).unwrap();
            for _ in 0..3000 {
                // A rows × (cols + 1) patch: output 0 uses columns 0..cols, output 1 columns 1..=cols.
                let g: Vec<Vec<i64>> = (0..rows)
                    .map(|_| (0..=cols).map(|_| rnd()).collect())
                    .collect();
                let s: Vec<i64> = (0..rows)
                    .flat_map(|r| (1..cols).map(move |c| (r, c)))
                    .map(|(r, c)| g[r][c])
                    .collect();
                let cands = p.candidates(s, step);
                for out in 0..2 {
                    let col = if out == 0 { 0 } else { cols };
                    let t: Vec<i64> = (0..rows).map(|r| g[r][col]).collect();
                    let median = p.median(&cands, t, step);
                    let mut w: Vec<i64> = (0..rows)
                        .flat_map(|r| (out..out + cols).map(move |c| (r, c)))
                        .map(|(r, c)| g[r][c])
                        .collect();
                    w.sort();
                    assert_eq!(median, w[w.len() / 2], "{rows}x{cols}");
                }
            }
        }
    }
}
