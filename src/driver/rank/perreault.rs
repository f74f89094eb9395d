//! Perreault and Hébert's constant-time median (IEEE TIP 2007) for 8-bit boxes: a histogram of
//! each column of the box's rows, kept from one output line to the next by removing the row
//! that left and adding the row that came in (two counts a column), and the box's histogram
//! slid along the line by adding the column that enters and removing the one that leaves. A
//! position is found in two levels, 16 coarse bins then 16 fine ones; the coarse counts are
//! slid every pixel (one vector), the fine ones only for the coarse bin a position falls in,
//! when it is read ([`Fine`]). The cost per pixel does not grow with the box, where Huang's
//! histogram ([`super::order::histogram`]) adds and removes a whole column of values per pixel.
//!
//! Exact: the box's histogram counts exactly its values (by key, an order-preserving bijection
//! of the 8-bit values), so the value at a sorted position is the one counted there.

use super::elem::Elem;
use super::order::Results;
use super::stat::Positions;

/// Bins of a column's and the box's histograms; coarse bins of 16 fine ones each.
const BINS: usize = 256;
const COARSE: usize = 16;

/// The columns' histograms of a segment's extended line.
#[derive(Default)]
pub(crate) struct Columns {
    fine: Vec<u16>,
    coarse: Vec<u16>,
    /// The keys of the first slot's line of the last segment: the row that leaves next.
    first: Vec<u8>,
}

impl Columns {
    /// Brings the histograms to the segment whose slots' extended lines are `ext` (every line
    /// `len` long): by one row out and one in when `continues` (the segment is the whole line
    /// after the last one, on the axis the box's slots stack along), else counted afresh.
    pub fn update<T: Elem>(&mut self, ext: &[&[T]], len: usize, continues: bool) {
        let k = ext.len();
        if continues && self.first.len() == len {
            let (gone, new) = (&self.first, &ext[k - 1][..len]);
            for (x, (&g, n)) in gone.iter().zip(new).enumerate() {
                let (g, n) = (g as usize, n.key());
                self.fine[x * BINS + g] -= 1;
                self.fine[x * BINS + n] += 1;
                self.coarse[x * COARSE + g / COARSE] -= 1;
                self.coarse[x * COARSE + n / COARSE] += 1;
            }
        } else {
            self.fine.clear();
            self.fine.resize(len * BINS, 0);
            self.coarse.clear();
            self.coarse.resize(len * COARSE, 0);
            for line in ext {
                for (x, v) in line[..len].iter().enumerate() {
                    let key = v.key();
                    self.fine[x * BINS + key] += 1;
                    self.coarse[x * COARSE + key / COARSE] += 1;
                }
            }
        }
        self.first.clear();
        self.first
            .extend(ext[0][..len].iter().map(|v| v.key() as u8));
    }

    /// The values at the sorted positions of each of the `m` pixels' boxes, the box of pixel
    /// `j` being columns `j + offset..j + offset + width`.
    pub fn positions<T: Elem>(
        &self,
        offset: usize,
        width: usize,
        m: usize,
        pos: &Positions,
        out: &mut Results<T>,
    ) {
        let (pa, pb) = match *pos {
            Positions::One { at, .. } => (at, at),
            Positions::Two(a, b, _) => (a, b),
        };
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // The whole loop compiled for AVX2 (the slides inlined into it, not dispatched per
            // pixel).
            #[target_feature(enable = "avx2")]
            unsafe fn avx2<T: Elem>(
                c: &Columns,
                o: usize,
                w: usize,
                m: usize,
                ab: (usize, usize),
                pos: &Positions,
                out: &mut Results<T>,
            ) {
                c.slide_along::<T, true>(o, w, m, ab, pos, out)
            }
            // SAFETY: the CPU has AVX2.
            return unsafe { avx2(self, offset, width, m, (pa, pb), pos, out) };
        }
        self.slide_along::<T, false>(offset, width, m, (pa, pb), pos, out)
    }

    /// [`Columns::positions`]; `AVX2`: the CPU has it.
    #[inline(always)]
    fn slide_along<T: Elem, const AVX2: bool>(
        &self,
        offset: usize,
        width: usize,
        m: usize,
        (pa, pb): (usize, usize),
        pos: &Positions,
        out: &mut Results<T>,
    ) {
        let mut coarse = [0u16; COARSE];
        for c in offset..offset + width {
            slide(&mut coarse, &self.coarse[c * COARSE..][..COARSE], None);
        }
        let mut fine = Fine::default();
        for j in 0..m {
            if j > 0 {
                let (gone, new) = (j - 1 + offset, j - 1 + offset + width);
                let col = |c: usize| self.coarse[c * COARSE..][..COARSE].as_ptr();
                // SAFETY: both columns are in the line's histograms, `COARSE` counts each.
                unsafe { slide_raw(&mut coarse, col(new), col(gone)) };
            }
            let box_ = (j, offset, width);
            let a = T::from_key(fine.find::<AVX2>(&coarse, pa, box_, &self.fine));
            let b = match pb > pa {
                true => T::from_key(fine.find::<AVX2>(&coarse, pb, box_, &self.fine)),
                false => a,
            };
            out.put(j, pos, a, b);
        }
    }
}

/// The box's fine counts, brought up to date lazily (Perreault and Hébert's §III-C): only the
/// coarse bin a position falls in is read, so only its 16 fine counts are slid, from the pixel
/// they were last slid to. Sliding all 256 for every pixel read two whole column histograms
/// (1 KiB, from L2: a line's histograms are 512 KiB) a pixel.
struct Fine {
    counts: [u16; BINS],
    /// Per coarse bin, the pixel its fine counts are the box's of (`None`: not counted yet).
    at: [Option<usize>; COARSE],
}

impl Default for Fine {
    fn default() -> Fine {
        Fine {
            counts: [0; BINS],
            at: [None; COARSE],
        }
    }
}

impl Fine {
    /// The key at sorted position `r` (0-based) of the box of pixel `j`, whose columns are `j +
    /// offset..j + offset + width` of the columns' histograms `cols` and whose coarse counts
    /// are `coarse`: the coarse bin first, then the fine bin inside it.
    ///
    /// The coarse bin is found by a loop that stops at it (predicted: a position's coarse bin
    /// rarely changes from one pixel to the next), the fine bin, which changes as often as the
    /// value, without a branch where the CPU has AVX2 ([`holding_avx2`]). Measured on the `u8`
    /// 15×15 median, 1024², one thread (an AMD EPYC): 32 ms → 16–17 with the fine bin's search
    /// in a vector and its counts summed in a register; the coarse bin's search in a vector too
    /// was slower (17.8–18.6 ms).
    #[inline(always)]
    fn find<const AVX2: bool>(
        &mut self,
        coarse: &[u16; COARSE],
        r: usize,
        (j, offset, width): (usize, usize, usize),
        cols: &[u16],
    ) -> usize {
        let (bin, below) = holding(coarse, r);
        let counts = self.bin(bin, j, (offset, width), cols);
        #[cfg(target_arch = "x86_64")]
        if AVX2 {
            // SAFETY: `AVX2` is set only where the CPU has it (`Columns::positions`).
            return bin * COARSE + unsafe { holding_avx2(counts, r - below) };
        }
        bin * COARSE + holding(counts, r - below).0
    }

    /// The fine counts of coarse bin `bin` in the box of pixel `j`, whose columns are `j +
    /// offset..j + offset + width` of the columns' histograms `cols`.
    #[inline(always)]
    fn bin(
        &mut self,
        bin: usize,
        j: usize,
        (offset, width): (usize, usize),
        cols: &[u16],
    ) -> &[u16; COARSE] {
        let kept: &mut [u16; COARSE] = (&mut self.counts[bin * COARSE..][..COARSE])
            .try_into()
            .expect("a coarse bin's fine counts");
        // Summed in a local, one register: summed in place, each column's sum waited for the
        // store of the last one to reach the next load.
        let mut counts = *kept;
        let col = |c: usize| -> &[u16; COARSE] {
            cols[c * BINS + bin * COARSE..][..COARSE]
                .try_into()
                .expect("a coarse bin's fine counts")
        };
        // Whole arrays, added lane by lane: one vector each (LLVM left the loop over slices
        // scalar).
        match self.at[bin] {
            // Slid column by column (none at `j` itself) while that reads fewer columns than
            // counting afresh.
            Some(at) if j - at < width => {
                for t in at..j {
                    let (add, sub) = (col(t + offset + width), col(t + offset));
                    counts = std::array::from_fn(|i| {
                        counts[i].wrapping_add(add[i]).wrapping_sub(sub[i])
                    });
                }
            }
            _ => {
                counts = [0; COARSE];
                for c in j + offset..j + offset + width {
                    let add = col(c);
                    counts = std::array::from_fn(|i| counts[i].wrapping_add(add[i]));
                }
            }
        }
        self.at[bin] = Some(j);
        *kept = counts;
        kept
    }
}

/// `h += add - sub` bin by bin (`sub` absent: `h += add`), one vector pass.
#[inline(always)]
fn slide<const N: usize>(h: &mut [u16; N], add: &[u16], sub: Option<&[u16]>) {
    match sub {
        Some(sub) => {
            for ((h, &a), &s) in h.iter_mut().zip(add).zip(sub) {
                *h = h.wrapping_add(a).wrapping_sub(s);
            }
        }
        None => h
            .iter_mut()
            .zip(add)
            .for_each(|(h, &a)| *h = h.wrapping_add(a)),
    }
}

/// [`slide`] from raw columns.
///
/// # Safety
/// Each pointer must be valid for reading `N` counts.
#[inline(always)]
unsafe fn slide_raw<const N: usize>(h: &mut [u16; N], add: *const u16, sub: *const u16) {
    // SAFETY: the caller's promise.
    let (add, sub) = unsafe {
        (
            std::slice::from_raw_parts(add, N),
            std::slice::from_raw_parts(sub, N),
        )
    };
    slide(h, add, Some(sub));
}

/// The bin of `counts` (16 coarse bins, or the 16 fine bins of one) holding sorted position `r`
/// (0-based) of the values they count, and how many values lie in the bins below it. A loop
/// that stops at the bin: one that visits all 16 without a branch was slower (`u8` 15×15
/// median, 1024²: 31 → 52 ms), as a position's bin rarely changes from one pixel to the next
/// and the branch is predicted.
#[inline(always)]
fn holding(counts: &[u16; COARSE], r: usize) -> (usize, usize) {
    let (mut b, mut below) = (0, 0usize);
    while below + counts[b] as usize <= r {
        below += counts[b] as usize;
        b += 1;
    }
    (b, below)
}

/// The bin of `counts` holding sorted position `r`, as [`holding`] finds it, without a branch:
/// the counts' running sums in one vector, and the bin is how many of them are at most `r`
/// (the sums only grow, so those are the bins wholly below `r`). Counts and sums fit 16 bits:
/// a box has at most [`super::order::PERREAULT_MAX`] values.
///
/// # Safety
/// The CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn holding_avx2(counts: &[u16; COARSE], r: usize) -> usize {
    use std::arch::x86_64::*;
    // SAFETY: `counts` is 32 bytes.
    let c = unsafe { _mm256_loadu_si256(counts.as_ptr().cast()) };
    // Running sums within each 16-byte half...
    let mut sums = _mm256_add_epi16(c, _mm256_slli_si256::<2>(c));
    sums = _mm256_add_epi16(sums, _mm256_slli_si256::<4>(sums));
    sums = _mm256_add_epi16(sums, _mm256_slli_si256::<8>(sums));
    // ... then the low half's total (its last count, broadcast) added to the high half.
    let last = _mm256_set1_epi16(0x0f0e);
    let totals = _mm256_shuffle_epi8(sums, last);
    sums = _mm256_add_epi16(sums, _mm256_permute2x128_si256::<0x08>(totals, totals));
    // Unsigned: `r < 2^16`, and a sum is at most `r` where the larger of the two is `r`.
    let r = _mm256_set1_epi16(r as u16 as i16);
    let at_most = _mm256_cmpeq_epi16(_mm256_max_epu16(sums, r), r);
    // Those bins are the first ones (two mask bits each): no popcount, which AVX2 does not imply.
    (_mm256_movemask_epi8(at_most).trailing_ones() / 2) as usize
}

#[cfg(test)]
mod tests {
    use super::super::stat::Mix;
    use super::*;

    /// Xorshift32 from `seed`: the tests' inputs.
    fn xorshift(mut seed: u32) -> impl FnMut() -> u32 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        }
    }

    /// The branchless search finds the bin the loop finds, for every position of counts with
    /// empty bins, full ones and sums up to the 16-bit limit. On a CPU without AVX2 (which never
    /// runs the search) it says SKIPPED, and fails under `CI`, as the ptxas tests do: there a
    /// pass must mean the search was checked.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_vector_search_finds_the_bin_the_loop_finds() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            let why = "the CPU has no AVX2";
            assert!(std::env::var_os("CI").is_none(), "CI is set and {why}");
            println!("SKIPPED: {why}");
            return;
        }
        let mut next = xorshift(0x2545_f491);
        let mut cases: Vec<[u16; COARSE]> = vec![
            [1; COARSE],
            std::array::from_fn(|i| (i == 0) as u16 * u16::MAX),
            std::array::from_fn(|i| (i == 15) as u16 * u16::MAX),
            std::array::from_fn(|i| (i == 7 || i == 8) as u16 * 30_000),
        ];
        for _ in 0..300 {
            let scale = [1, 4, 40, 4095][next() as usize % 4];
            cases.push(std::array::from_fn(|_| match next() % 3 {
                0 => 0,
                _ => (next() % (scale + 1)) as u16,
            }));
        }
        for counts in cases {
            let total: usize = counts.iter().map(|&c| c as usize).sum();
            assert!(total <= super::super::order::PERREAULT_MAX);
            for r in (0..total).step_by(1 + total / 500) {
                // SAFETY: the CPU has AVX2.
                let got = unsafe { holding_avx2(&counts, r) };
                assert_eq!(got, holding(&counts, r).0, "{counts:?} r={r}");
            }
        }
    }

    /// Boxes of 4 rows and widths 1..7, line after line (continuing and afresh), against sorting.
    #[test]
    fn positions_equal_sorting_line_after_line() {
        let (rows, len) = (4, 40);
        let mut next = xorshift(0x9e37_79b9);
        let lines: Vec<Vec<u8>> = (0..12)
            .map(|_| (0..len).map(|_| (next() >> 24) as u8 & 0x3f).collect())
            .collect();
        for width in 1..8 {
            let m = len - width + 1;
            let n = rows * width;
            for pos in [
                Positions::One {
                    at: n / 2,
                    plus_zero: true,
                },
                Positions::Two(0, n - 1, Mix::Mean),
            ] {
                let mut cols = Columns::default();
                for y in 0..lines.len() - rows + 1 {
                    let ext: Vec<&[u8]> = lines[y..y + rows].iter().map(|l| &l[..]).collect();
                    cols.update(&ext, len, y % 5 != 0);
                    let (mut native, mut double) = (vec![0u8; m], vec![0.0; m]);
                    let mut out = Results {
                        native: &mut native,
                        double: &mut double,
                    };
                    cols.positions(0, width, m, &pos, &mut out);
                    for j in 0..m {
                        let mut v: Vec<u8> =
                            ext.iter().flat_map(|l| l[j..j + width].to_vec()).collect();
                        v.sort_unstable();
                        match pos {
                            Positions::One { at, .. } => {
                                assert_eq!(native[j], v[at], "w={width} y={y} j={j}")
                            }
                            Positions::Two(a, b, _) => assert_eq!(
                                double[j],
                                (0.0 + v[a] as f64 + v[b] as f64) / 2.0,
                                "w={width} y={y} j={j}"
                            ),
                        }
                    }
                }
            }
        }
    }
}
