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

/// A comparator on positions `(i, j)`, `i < j`: afterwards `i` holds the smaller value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Comparator {
    pub i: usize,
    pub j: usize,
    /// Which outputs are needed: the minimum (at `i`) and/or the maximum (at `j`).
    pub want_min: bool,
    pub want_max: bool,
}

/// Batcher's odd-even merge sort on `n` positions (built for the next power of two; comparators
/// touching positions `>= n` are dropped, which is valid because padding would be +inf).
pub fn batcher(n: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    if n < 2 {
        return out;
    }
    let size = n.next_power_of_two();
    let mut p = 1;
    while p < size {
        let mut k = p;
        while k >= 1 {
            let mut j = k % p;
            while j + k < size {
                for i in 0..k.min(size - j - k) {
                    let (a, b) = (i + j, i + j + k);
                    if a / (2 * p) == b / (2 * p) && b < n {
                        out.push((a, b));
                    }
                }
                j += 2 * k;
            }
            k /= 2;
        }
        p *= 2;
    }
    out
}

/// The network for `n` positions pruned to what `needed` positions depend on, in execution
/// order.
pub fn pruned(n: usize, needed: &[usize]) -> Vec<Comparator> {
    let net = batcher(n);
    let mut live = vec![false; n];
    for &p in needed {
        if p < n {
            live[p] = true;
        }
    }
    let mut out = Vec::new();
    for &(i, j) in net.iter().rev() {
        let (want_min, want_max) = (live[i], live[j]);
        if !want_min && !want_max {
            continue;
        }
        live[i] = true;
        live[j] = true;
        out.push(Comparator {
            i,
            j,
            want_min,
            want_max,
        });
    }
    out.reverse();
    out
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
            let full = pruned(n, &all);
            let mid = pruned(n, &[n / 2]);
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
            pruned(25, &[12]).len() < batcher(25).len(),
            "{} vs {}",
            pruned(25, &[12]).len(),
            batcher(25).len()
        );
    }
}
