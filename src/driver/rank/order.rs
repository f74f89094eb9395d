//! Sorted positions of every window of a line segment (medians, quantiles, `np.sort(x)[k]`),
//! three ways, chosen by the footprint's size and the element type ([`Order::choose`]):
//! - a selection network run on many pixels at once: each comparator is a `min` and a `max` of
//!   two rows of pixels, which LLVM vectorises; only the comparators the wanted positions depend
//!   on are kept;
//! - Huang's sliding histogram for 8- and 16-bit types with larger footprints: moving one pixel
//!   along the line removes the values leaving each chord of the footprint and adds those
//!   entering it, and a two-level histogram finds a position in `O(sqrt(bins))`;
//! - selection per pixel (`select_nth_unstable`) on the values in their own type, otherwise.
//!
//! Each gives the values at the sorted positions exactly: the multiset of a window's values is
//! what it is, however it is ordered, and equal values have equal bits except `±0.0`, which the
//! caller has excluded where their sign could show (the parent module's proof).

use super::elem::Elem;
use super::simd;
use super::stat::Positions;
use crate::ir::network::batcher_pairs;

/// Where a segment's results go: `native[j]` for a result that is one of the values, `double[j]`
/// for one mixed in double (an even median, a quantile).
pub(crate) struct Results<'a, T> {
    pub native: &'a mut [T],
    pub double: &'a mut [f64],
}

impl<T: Elem> Results<'_, T> {
    /// Stores the result of pixel `j` from the values at its sorted positions (`b` is read only
    /// for two positions).
    #[inline(always)]
    fn put(&mut self, j: usize, pos: &Positions, a: T, b: T) {
        match *pos {
            Positions::One { plus_zero, .. } => {
                self.native[j] = if plus_zero { a.plus_zero() } else { a }
            }
            Positions::Two(_, _, mix) => self.double[j] = mix.apply(a.to_f64(), b.to_f64()),
        }
    }
}

/// The sorted positions a statistic reads, as indices.
fn wanted(pos: &Positions) -> (usize, usize) {
    match *pos {
        Positions::One { at, .. } => (at, at),
        Positions::Two(a, b, _) => (a, b),
    }
}

/// The algorithm for one footprint and element type.
pub(crate) enum Order {
    Network(Vec<(u32, u32)>),
    Histogram,
    Select,
}

/// Footprints up to this many values use a selection network; measured on 8-bit and float data,
/// the network beats the alternatives at 49 values and loses to the histogram at 81.
const NETWORK_MAX: usize = 64;

impl Order {
    pub fn choose<T: Elem>(n: usize, pos: &Positions) -> Order {
        if n <= NETWORK_MAX * 2 {
            let (a, b) = wanted(pos);
            Order::Network(pruned(n, &[a, b]))
        } else if T::KEY_BITS > 0 {
            Order::Histogram
        } else {
            Order::Select
        }
    }
}

/// Batcher's comparators that the values at `keep` depend on, in order.
fn pruned(n: usize, keep: &[usize]) -> Vec<(u32, u32)> {
    let mut live = vec![false; n];
    for &k in keep {
        live[k] = true;
    }
    let mut out: Vec<(u32, u32)> = Vec::new();
    for (i, j) in batcher_pairs(n).into_iter().rev() {
        if live[i] || live[j] {
            live[i] = true;
            live[j] = true;
            out.push((i as u32, j as u32));
        }
    }
    out.reverse();
    out
}

/// Pixels per network block: each of the `n` rows of the block stays in L1 together.
const BLOCK_BYTES: usize = 512;

/// The network over `m` pixels: `taps[t][j]` is tap `t` of pixel `j`.
pub(crate) fn network<T: Elem>(
    pairs: &[(u32, u32)],
    taps: &[&[T]],
    m: usize,
    pos: &Positions,
    out: &mut Results<T>,
    wires: &mut Vec<T>,
) {
    let n = taps.len();
    let block = (BLOCK_BYTES / std::mem::size_of::<T>()).max(8);
    wires.resize(n * block, T::default());
    let (pa, pb) = wanted(pos);
    let mut j0 = 0;
    while j0 < m {
        let len = block.min(m - j0);
        for (t, tap) in taps.iter().enumerate() {
            wires[t * block..t * block + len].copy_from_slice(&tap[j0..j0 + len]);
        }
        simd::fast(|| {
            for &(i, j) in pairs {
                let (lo, hi) = wires.split_at_mut(j as usize * block);
                let a = &mut lo[i as usize * block..i as usize * block + len];
                let b = &mut hi[..len];
                for (x, y) in a.iter_mut().zip(b.iter_mut()) {
                    let (u, v) = (*x, *y);
                    *x = T::min(u, v);
                    *y = T::max(u, v);
                }
            }
        });
        for k in 0..len {
            out.put(j0 + k, pos, wires[pa * block + k], wires[pb * block + k]);
        }
        j0 += len;
    }
}

/// Per pixel, the values gathered and partly sorted by `select_nth_unstable`.
pub(crate) fn select<T: Elem>(
    taps: &[&[T]],
    m: usize,
    pos: &Positions,
    out: &mut Results<T>,
    buf: &mut Vec<T>,
) {
    let (pa, pb) = wanted(pos);
    // No NaN reaches here: every pair of values compares.
    let cmp = |x: &T, y: &T| x.partial_cmp(y).unwrap_or(std::cmp::Ordering::Equal);
    for j in 0..m {
        buf.clear();
        buf.extend(taps.iter().map(|t| t[j]));
        let (_, &mut a, rest) = buf.select_nth_unstable_by(pa, cmp);
        // The next position is the least of the values above.
        let b = match pb > pa {
            true => rest.iter().copied().fold(rest[0], T::min),
            false => a,
        };
        out.put(j, pos, a, b);
    }
}

/// A two-level histogram of keys ([`Elem::key`]): fine bins and their sums over blocks of
/// `1 << shift` bins.
pub(crate) struct Histogram {
    fine: Vec<u32>,
    coarse: Vec<u32>,
    shift: u32,
}

impl Histogram {
    pub fn new(bits: u32) -> Histogram {
        let shift = bits / 2;
        Histogram {
            fine: vec![0; 1 << bits],
            coarse: vec![0; 1 << (bits - shift)],
            shift,
        }
    }

    #[inline(always)]
    fn add(&mut self, k: usize) {
        self.fine[k] += 1;
        self.coarse[k >> self.shift] += 1;
    }

    #[inline(always)]
    fn remove(&mut self, k: usize) {
        self.fine[k] -= 1;
        self.coarse[k >> self.shift] -= 1;
    }

    /// The key at sorted position `r` (0-based) of the values counted.
    #[inline]
    fn at(&self, r: usize) -> usize {
        let r = r as u32;
        let (mut c, mut below) = (0, 0);
        while below + self.coarse[c] <= r {
            below += self.coarse[c];
            c += 1;
        }
        let mut k = c << self.shift;
        while below + self.fine[k] <= r {
            below += self.fine[k];
            k += 1;
        }
        k
    }
}

/// Huang's sliding histogram along `m` pixels. `ext[s]` is slot `s`'s line from the segment's
/// first pixel's leftmost tap; `chords[s]` its runs of taps `(offset, width)`: pixel `j` reads
/// `ext[s][j + offset..j + offset + width]`.
pub(crate) fn histogram<T: Elem>(
    ext: &[&[T]],
    chords: &[Vec<(usize, usize)>],
    m: usize,
    pos: &Positions,
    out: &mut Results<T>,
    hist: &mut Histogram,
) {
    let (pa, pb) = wanted(pos);
    // The histogram is empty between calls: the last window is taken out at the end (cheaper
    // than clearing 65536 bins for 16-bit types).
    let window = |hist: &mut Histogram, j: usize, add: bool| {
        for (line, chords) in ext.iter().zip(chords) {
            for &(o, w) in chords {
                for v in &line[j + o..j + o + w] {
                    match add {
                        true => hist.add(v.key()),
                        false => hist.remove(v.key()),
                    }
                }
            }
        }
    };
    window(hist, 0, true);
    for j in 0..m {
        let a = T::from_key(hist.at(pa));
        let b = match pb > pa {
            true => T::from_key(hist.at(pb)),
            false => a,
        };
        out.put(j, pos, a, b);
        if j + 1 == m {
            window(hist, j, false);
        } else {
            for (line, chords) in ext.iter().zip(chords) {
                for &(o, w) in chords {
                    hist.remove(line[j + o].key());
                    hist.add(line[j + o + w].key());
                }
            }
        }
    }
}

/// The values at positions `pa <= pb` of `v`, for the tests.
#[cfg(test)]
fn sorted_at<T: Elem>(v: &[T], pa: usize, pb: usize) -> (T, T) {
    let mut s = v.to_vec();
    s.sort_by(|x, y| x.partial_cmp(y).unwrap());
    (s[pa], s[pb])
}

#[cfg(test)]
mod tests {
    use super::super::stat::Mix;
    use super::*;

    /// Every algorithm against a full sort, on one row of 1×n windows.
    #[test]
    fn the_three_algorithms_agree_with_sorting() {
        let line: Vec<u8> = (0..300u32)
            .map(|i| ((i * 2654435761) >> 24) as u8)
            .collect();
        for n in [1, 2, 3, 8, 9, 25, 49] {
            let m = line.len() - n + 1;
            let taps: Vec<&[u8]> = (0..n).map(|t| &line[t..]).collect();
            for pos in [
                Positions::One {
                    at: n / 2,
                    plus_zero: true,
                },
                Positions::Two(n.saturating_sub(2) / 2, n / 2, Mix::Mean),
            ] {
                let (pa, pb) = wanted(&pos);
                let mut native = vec![0u8; m];
                let mut double = vec![0.0; m];
                let want: Vec<(u8, u8)> =
                    (0..m).map(|j| sorted_at(&line[j..j + n], pa, pb)).collect();
                let check = |native: &[u8], double: &[f64], how: &str| {
                    for j in 0..m {
                        let (a, b) = want[j];
                        match pos {
                            Positions::One { .. } => assert_eq!(native[j], a, "{how} n={n} j={j}"),
                            Positions::Two(..) => assert_eq!(
                                double[j],
                                (0.0 + a as f64 + b as f64) / 2.0,
                                "{how} n={n} j={j}"
                            ),
                        }
                    }
                };
                let pairs = pruned(n, &[pa, pb]);
                let mut r = Results {
                    native: &mut native,
                    double: &mut double,
                };
                network(&pairs, &taps, m, &pos, &mut r, &mut Vec::new());
                check(&native, &double, "network");
                let mut r = Results {
                    native: &mut native,
                    double: &mut double,
                };
                select(&taps, m, &pos, &mut r, &mut Vec::new());
                check(&native, &double, "select");
                let mut r = Results {
                    native: &mut native,
                    double: &mut double,
                };
                let ext: [&[u8]; 1] = [&line];
                histogram(
                    &ext,
                    &[vec![(0, n)]],
                    m,
                    &pos,
                    &mut r,
                    &mut Histogram::new(8),
                );
                check(&native, &double, "histogram");
            }
        }
    }
}
