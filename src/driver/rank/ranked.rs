//! Sorted positions over footprints too large for a network, by ranks, for every type but the
//! 8-bit ones (whose 256 values Huang's histogram counts directly).
//!
//! The values of a band of input rows are ranked once: sorted by [`Elem::sort_key`], equal
//! values by where they lie, so that every value has a rank of its own. A window's values are
//! then a set of ranks, a bitset, slid along a line as Huang's histogram is: moving one pixel
//! on removes the ranks leaving each chord of the footprint and adds those entering it. A
//! position is found from counts of the ranks in blocks of [`BLOCK`], by a cursor moved from
//! where the previous pixel's position was (neighbouring windows' positions lie close), then by
//! counting the bits of the block's words. A band serves the consecutive lines whose rows it
//! holds, so each value is ranked about once however many windows read it.
//!
//! Where selection per pixel costs the whole footprint per pixel (961 values at 31×31), this
//! costs the ends of its chords (62).
//!
//! Exact: the ranks order the values by [`Elem::sort_key`], a total order that agrees with `<`
//! on the numbers, so the value with the `p`-th smallest rank of a window is the value at sorted
//! position `p` of its values. Which of equal values that is does not matter, their bits being
//! equal; `-0.0` comes before `0.0`, which shows only where the parent module's proof excludes
//! both zeros, and NaN goes to the ends, whose windows the general engine recomputes
//! ([`super::patch`]).

use super::elem::Elem;
use super::order::{wanted, Results};
use super::stat::Positions;
use std::collections::HashMap;
use std::ops::Range;

/// The values a band holds at most, unless one line's rows alone are more: its bitset (16 KiB)
/// and ranks stay in the faster caches. Measured on 1024² `f32` medians, one thread (with the
/// slide's bounds checks, since gone): 31×31 took 168–172 ms with bands of 2^16 and 2^17
/// values, 184 with 2^18 (a 32 KiB bitset); and 434 with 2^14, where a band served one line.
const BAND_VALUES: usize = 1 << 17;

/// The ranks one count covers: four words of the bitset.
const BLOCK: usize = 256;
const WORDS: usize = BLOCK / 64;

/// The bands a worker keeps (one per piece of a line, at most [`MAX_BANDS`]), and the scratch
/// they share.
pub(crate) struct Bands<T> {
    bands: Vec<Band<T>>,
    scratch: Scratch<T>,
}

/// The pieces of a line that keep a band each; a line of more pieces (a 1-d signal, an image
/// wider than 16 thousand columns under a 31-row box) ranks each piece for its line alone, so
/// that a worker's bands stay within a few megabytes.
pub(crate) const MAX_BANDS: usize = 8;

/// A band's ranks of its rows' values, and the lines it serves.
struct Band<T> {
    /// Values per row: the extended line of the segment's columns.
    len: usize,
    /// Per value (row after row), its rank; per rank, its value.
    rank: Vec<u32>,
    sorted: Vec<T>,
    /// The lines served (their segments' columns `a..a + m`), and for each the row each of its
    /// slots reads (`slots` a line).
    lines: Range<usize>,
    columns: Range<usize>,
    slots: usize,
    slot_rows: Vec<u32>,
}

/// What building a band and sliding a window need for a while only.
struct Scratch<T> {
    /// The band's rows, one after another.
    values: Vec<T>,
    /// The values' keys and indices, sorted.
    narrow: Vec<u64>,
    wide: Vec<(u64, u32)>,
    /// The row holding each source line, by the line and which of the slots reading it in a
    /// line.
    rows: HashMap<(Option<isize>, u32), u32>,
    /// A window's ranks and the counts of their blocks.
    bits: Vec<u64>,
    counts: Vec<u32>,
}

impl<T> Default for Bands<T> {
    fn default() -> Self {
        Bands {
            bands: Vec::new(),
            scratch: Scratch {
                values: Vec::new(),
                narrow: Vec::new(),
                wide: Vec::new(),
                rows: HashMap::new(),
                bits: Vec::new(),
                counts: Vec::new(),
            },
        }
    }
}

impl<T: Elem> Bands<T> {
    /// The values at the sorted positions of the windows of columns `a..a + m` of `line`
    /// ([`Band::positions`]), from band `slot` if it holds them, else from it built afresh for
    /// lines `line..line + count` ([`Band::build`]: `sources`, `fill`, rows of `len` values).
    #[allow(clippy::too_many_arguments)]
    pub fn positions(
        &mut self,
        slot: usize,
        (line, count): (usize, usize),
        (a, m, len): (usize, usize, usize),
        sources: impl FnMut(usize, &mut Vec<Option<isize>>),
        fill: impl FnMut(Option<isize>, &mut [T]),
        chords: &[Vec<(usize, usize)>],
        pos: &Positions,
        out: &mut Results<T>,
    ) {
        while self.bands.len() <= slot {
            self.bands.push(Band::empty());
        }
        let band = &mut self.bands[slot];
        if !band.holds(line, a, m) {
            band.build(&mut self.scratch, (line, count), (a, m, len), sources, fill);
        }
        band.positions(&mut self.scratch, line, chords, pos, out);
    }
}

/// How many output columns a band covers at most, for `slots` slots a line and footprints
/// `span` columns wide: a whole line when twice its rows fit in [`BAND_VALUES`] (so that a band
/// serves more lines than a footprint has rows), else pieces of it (a 4096-wide image's
/// 31-row boxes, a long 1-d signal), so that the scratch stays bounded.
pub(crate) fn piece(slots: usize, span: usize) -> usize {
    Ord::max(BAND_VALUES / (2 * slots.max(1)), 2 * span)
        .saturating_sub(span)
        .max(1)
}

impl<T: Elem> Band<T> {
    fn empty() -> Band<T> {
        Band {
            len: 0,
            rank: Vec::new(),
            sorted: Vec::new(),
            lines: 0..0,
            columns: 0..0,
            slots: 0,
            slot_rows: Vec::new(),
        }
    }

    /// Whether the band serves columns `a..a + m` of `line`.
    fn holds(&self, line: usize, a: usize, m: usize) -> bool {
        self.lines.contains(&line) && self.columns == (a..a + m)
    }

    /// Ranks the rows read by columns `a..a + m` of lines `first..first + count`, taking lines
    /// while their rows fit in [`BAND_VALUES`] (at least the first line). `sources(l, out)`
    /// lists the source line of each slot of line `first + l` (the lines are taken in order);
    /// `fill(src, row)` writes its extended line, `len` values.
    fn build(
        &mut self,
        scratch: &mut Scratch<T>,
        (first, count): (usize, usize),
        (a, m, len): (usize, usize, usize),
        mut sources: impl FnMut(usize, &mut Vec<Option<isize>>),
        mut fill: impl FnMut(Option<isize>, &mut [T]),
    ) {
        let Scratch { values, rows, .. } = scratch;
        self.len = len;
        values.clear();
        self.slot_rows.clear();
        rows.clear();
        let (mut srcs, mut seen) = (Vec::new(), HashMap::new());
        let mut lines = 0;
        while lines < count {
            sources(lines, &mut srcs);
            // A row per slot reading a source line, the `k`-th slot reading the same line (a
            // mode's reflection) a row of its own: a window's ranks must all differ.
            seen.clear();
            let keys: Vec<(Option<isize>, u32)> = srcs
                .iter()
                .map(|&src| {
                    let k = seen.entry(src).or_insert(0u32);
                    *k += 1;
                    (src, *k - 1)
                })
                .collect();
            let new = keys.iter().filter(|k| !rows.contains_key(k)).count();
            if lines > 0 && (rows.len() + new) * len > BAND_VALUES {
                break;
            }
            for key in keys {
                let next = rows.len() as u32;
                let row = *rows.entry(key).or_insert_with(|| {
                    let at = values.len();
                    values.resize(at + len, T::default());
                    fill(key.0, &mut values[at..]);
                    next
                });
                self.slot_rows.push(row);
            }
            lines += 1;
        }
        self.slots = srcs.len();
        self.lines = first..first + lines;
        self.columns = a..a + m;
        self.rank(scratch);
    }

    /// Every value's rank, and the values in the order of their ranks.
    fn rank(&mut self, scratch: &mut Scratch<T>) {
        let Scratch {
            values,
            narrow,
            wide,
            ..
        } = scratch;
        let n = values.len();
        assert!(u32::try_from(n).is_ok(), "a band of {n} values");
        self.rank.resize(n, 0);
        self.sorted.resize(n, T::default());
        let (rank, sorted) = (&mut self.rank[..], &mut self.sorted[..]);
        // A stable sort of the values in index order: equal values rank by where they lie.
        if std::mem::size_of::<T>() <= 4 {
            // The key above the index: the radix sort reads only the key's bytes.
            let pack = |v: T, i: u32| v.sort_key() << 32 | u64::from(i);
            rank_by(
                values,
                narrow,
                pack,
                |k| (k >> 32) as u32,
                |k| k as u32,
                rank,
                sorted,
            );
        } else {
            let pack = |v: T, i: u32| (v.sort_key(), i);
            rank_by(values, wide, pack, |k| k.0, |k| k.1, rank, sorted);
        }
    }

    /// The values at the sorted positions of the windows of the `m` pixels of `line` (one the
    /// band serves): pixel `j`'s window reads, in the row of each slot `s`, columns `j + o..j +
    /// o + w` for each chord `(o, w)` of `chords[s]`.
    fn positions(
        &self,
        scratch: &mut Scratch<T>,
        line: usize,
        chords: &[Vec<(usize, usize)>],
        pos: &Positions,
        out: &mut Results<T>,
    ) {
        debug_assert!(self.holds(line, self.columns.start, self.columns.len()));
        let l = line - self.lines.start;
        let rows = &self.slot_rows[l * self.slots..(l + 1) * self.slots];
        // Each chord's ranks from its first column, and its width: pixel `j` reads `j..j + w`.
        let chords: Vec<(&[u32], usize)> = (rows.iter().zip(chords))
            .flat_map(|(&r, chords)| {
                let row = &self.rank[r as usize * self.len..][..self.len];
                chords.iter().map(move |&(o, w)| (&row[o..], w))
            })
            .collect();
        let blocks = self.rank.len().div_ceil(BLOCK);
        let Scratch { bits, counts, .. } = scratch;
        counts.clear();
        counts.resize(blocks, 0);
        bits.clear();
        bits.resize(blocks * WORDS, 0);
        let mut window = Window {
            bits,
            counts,
            block: 0,
            below: 0,
        };
        let slide = Slide {
            chords: &chords,
            sorted: &self.sorted,
            m: self.columns.len(),
        };
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("popcnt") {
            // The whole slide compiled with POPCNT: the baseline counts a word's bits in a
            // dozen instructions.
            #[target_feature(enable = "popcnt")]
            unsafe fn popcnt<T: Elem>(
                slide: &Slide<T>,
                window: &mut Window,
                pos: &Positions,
                out: &mut Results<T>,
            ) {
                slide.run(window, pos, out)
            }
            // SAFETY: the CPU has POPCNT.
            return unsafe { popcnt(&slide, &mut window, pos, out) };
        }
        slide.run(&mut window, pos, out)
    }
}

/// Sorts the values by key, stably (`pack(value, index)`, then ordered by `key`), then writes
/// each value's rank and the values in rank order.
fn rank_by<T: Copy, P: Copy, K: radsort::Key>(
    values: &[T],
    packed: &mut Vec<P>,
    pack: impl Fn(T, u32) -> P,
    key: impl FnMut(&P) -> K,
    index: impl Fn(P) -> u32,
    rank: &mut [u32],
    sorted: &mut [T],
) {
    packed.clear();
    packed.extend(values.iter().zip(0u32..).map(|(&v, i)| pack(v, i)));
    radsort::sort_by_key(packed, key);
    for (q, &p) in (0u32..).zip(packed.iter()) {
        let i = index(p) as usize;
        rank[i] = q;
        sorted[q as usize] = values[i];
    }
}

/// One line's windows: each chord's ranks and width, and the values by rank.
struct Slide<'a, T> {
    chords: &'a [(&'a [u32], usize)],
    sorted: &'a [T],
    m: usize,
}

impl<T: Elem> Slide<'_, T> {
    #[inline(always)]
    fn run(&self, window: &mut Window, pos: &Positions, out: &mut Results<T>) {
        let (pa, pb) = wanted(pos);
        let (pa, pb) = (pa as u32, pb as u32);
        let (m, chords) = (self.m, self.chords);
        assert!(
            chords.iter().all(|(c, w)| w + m - 1 <= c.len()),
            "chords past the line"
        );
        assert!(
            self.sorted.len() <= window.bits.len() * 64,
            "ranks past the bitset"
        );
        for &(c, w) in chords {
            // SAFETY (all): every rank is below `sorted.len()`, which the bitset covers.
            c[..w].iter().for_each(|&r| unsafe { window.add(r) });
        }
        for j in 0..m {
            let ra = window.find(pa);
            // The next positions are the next ranks present.
            let rb = (pa..pb).fold(ra, |r, _| window.after(r));
            out.put(j, pos, self.sorted[ra], self.sorted[rb]);
            if j + 1 < m {
                for &(c, w) in chords {
                    // SAFETY: `j + w < w + m - 1 <= c.len()` (asserted); ranks as above.
                    unsafe {
                        window.remove(*c.get_unchecked(j));
                        window.add(*c.get_unchecked(j + w));
                    }
                }
            }
        }
    }
}

/// A set of ranks: a bitset and the count of each block of [`BLOCK`] ranks, with a cursor at
/// `block`, `below` being the count of the ranks in the blocks before it.
struct Window<'a> {
    bits: &'a mut [u64],
    counts: &'a mut [u32],
    block: usize,
    below: u32,
}

impl Window<'_> {
    /// # Safety
    /// `r` must be below the bitset's length in bits.
    #[inline(always)]
    unsafe fn add(&mut self, r: u32) {
        let r = r as usize;
        // SAFETY: the caller's promise; a count covers a block of the bitset's words.
        unsafe {
            *self.bits.get_unchecked_mut(r / 64) |= 1 << (r % 64);
            *self.counts.get_unchecked_mut(r / BLOCK) += 1;
        }
        self.below += u32::from(r / BLOCK < self.block);
    }

    /// # Safety
    /// As [`Window::add`].
    #[inline(always)]
    unsafe fn remove(&mut self, r: u32) {
        let r = r as usize;
        // SAFETY: as in `add`.
        unsafe {
            *self.bits.get_unchecked_mut(r / 64) &= !(1 << (r % 64));
            *self.counts.get_unchecked_mut(r / BLOCK) -= 1;
        }
        self.below -= u32::from(r / BLOCK < self.block);
    }

    /// The rank at sorted position `p` of the set (which holds more than `p`).
    #[inline(always)]
    fn find(&mut self, p: u32) -> usize {
        while self.below > p {
            self.block -= 1;
            self.below -= self.counts[self.block];
        }
        while self.below + self.counts[self.block] <= p {
            self.below += self.counts[self.block];
            self.block += 1;
        }
        let mut r = p - self.below;
        for w in self.block * WORDS..(self.block + 1) * WORDS {
            let word = self.bits[w];
            let c = word.count_ones();
            if r < c {
                return w * 64 + nth_bit(word, r);
            }
            r -= c;
        }
        unreachable!("a block's count is the number of its bits set")
    }

    /// The next rank of the set after `r` (there is one).
    #[inline(always)]
    fn after(&self, r: usize) -> usize {
        let mut w = r / 64;
        let mut word = self.bits[w] & (!1u64 << (r % 64));
        while word == 0 {
            w += 1;
            word = self.bits[w];
        }
        w * 64 + word.trailing_zeros() as usize
    }
}

/// The place of the `r`-th set bit (from 0) of `word`, which has more than `r`: the half
/// holding it, six times.
#[inline(always)]
fn nth_bit(mut word: u64, mut r: u32) -> usize {
    let mut at = 0;
    for half in [32, 16, 8, 4, 2, 1] {
        let low = (word & ((1u64 << half) - 1)).count_ones();
        if r >= low {
            r -= low;
            word >>= half;
            at += half;
        }
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::rank::stat::Mix;

    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33) % n
        }
    }

    #[test]
    fn nth_bit_finds_every_set_bit() {
        let mut rng = Rng(3);
        for _ in 0..2000 {
            let word = rng.below(u64::MAX) ^ (rng.below(u64::MAX) << 17);
            let set: Vec<usize> = (0..64).filter(|b| word >> b & 1 == 1).collect();
            for (r, &b) in set.iter().enumerate() {
                assert_eq!(nth_bit(word, r as u32), b, "{word:#x} {r}");
            }
        }
    }

    /// Sort keys order every element type as the numbers, floats as `total_cmp`, and fit in
    /// 32 bits for the narrow types.
    #[test]
    fn sort_keys_order_as_the_numbers() {
        fn check<T: Elem + std::fmt::Debug>(
            values: &[T],
            cmp: impl Fn(&T, &T) -> std::cmp::Ordering,
        ) {
            for a in values {
                assert!(std::mem::size_of::<T>() > 4 || a.sort_key() >> 32 == 0);
                for b in values {
                    assert_eq!(a.sort_key().cmp(&b.sort_key()), cmp(a, b), "{a:?} {b:?}");
                }
            }
        }
        let f = [
            f64::NEG_INFINITY,
            -2.5,
            -1e-300,
            -0.0,
            0.0,
            1e-300,
            3.0,
            f64::INFINITY,
        ];
        check(&f, f64::total_cmp);
        check(&f.map(|v| v as f32), f32::total_cmp);
        check(&[-f64::NAN, f64::NAN, 1.0, -1.0], f64::total_cmp);
        check(&[-f32::NAN, f32::NAN, 1.0, -1.0], f32::total_cmp);
        check(&[i32::MIN, -1, 0, 1, i32::MAX], Ord::cmp);
        check(&[i64::MIN, -1, 0, 1, i64::MAX], Ord::cmp);
        check(&[0u32, 1, u32::MAX], Ord::cmp);
        check(&[0u64, 1, u64::MAX], Ord::cmp);
        check(&[i8::MIN, -1, 0, 1, i8::MAX], Ord::cmp);
        check(&[i16::MIN, -1, 0, 1, i16::MAX], Ord::cmp);
        check(&[0u8, 1, u8::MAX], Ord::cmp);
    }

    /// Lines of random values (with repeats) through bands of several lines, against sorting
    /// each window: positions one and two, chords of every width, lines shorter and longer
    /// than a block.
    #[test]
    fn bands_give_the_sorted_positions_of_every_window() {
        let mut rng = Rng(11);
        for case in 0..300 {
            let (rows, m) = (1 + rng.below(6) as usize, 1 + rng.below(700) as usize);
            let chords: Vec<Vec<(usize, usize)>> = (0..rows)
                .map(|_| {
                    let w = 1 + rng.below(9) as usize;
                    vec![
                        (rng.below(3) as usize, w),
                        (w + 3, 1 + rng.below(2) as usize),
                    ]
                })
                .collect();
            let len = m + 14;
            let spread = [3, 50, 1 << 30][case % 3];
            let lines = 1 + rng.below(4) as usize;
            let data: Vec<Vec<i32>> = (0..rows + lines)
                .map(|_| (0..len).map(|_| rng.below(spread) as i32 - 20).collect())
                .collect();
            let n: usize = chords.iter().flatten().map(|c| c.1).sum();
            let two = case % 2 == 1 && n > 1;
            let pos = match two {
                true => Positions::Two(n / 2 - 1, n / 2, Mix::Mean),
                false => Positions::One {
                    at: rng.below(n as u64) as usize,
                    plus_zero: false,
                },
            };
            let mut bands = Bands::default();
            // Line `l` reads rows `l..l + rows`, or, as a mode's reflection may, row `l`
            // for every slot but the last.
            let source = |l: usize, s: usize| match case % 4 < 2 || s + 1 == rows {
                true => l + s,
                false => l,
            };
            let mut filled = 0;
            for l in 0..lines {
                let (mut native, mut double) = (vec![0; m], vec![0.0; m]);
                let mut out = Results {
                    native: &mut native,
                    double: &mut double,
                };
                bands.positions(
                    0,
                    (100 + l, lines - l),
                    (0, m, len),
                    |k, out| {
                        out.clear();
                        out.extend((0..rows).map(|s| Some(source(l + k, s) as isize)));
                    },
                    |src, row| {
                        filled += 1;
                        row.copy_from_slice(&data[src.unwrap() as usize])
                    },
                    &chords,
                    &pos,
                    &mut out,
                );
                // One band for all the lines, each row filled once.
                assert_eq!(bands.bands[0].lines, 100..100 + lines);
                assert_eq!(filled, bands.bands[0].rank.len() / len);
                for j in 0..m {
                    let mut v: Vec<i32> = (0..rows)
                        .flat_map(|s| {
                            let row = &data[source(l, s)];
                            chords[s]
                                .iter()
                                .flat_map(move |&(o, w)| &row[j + o..j + o + w])
                        })
                        .copied()
                        .collect();
                    v.sort();
                    match pos {
                        Positions::One { at, .. } => assert_eq!(native[j], v[at], "{case} {j}"),
                        Positions::Two(a, b, _) => {
                            let want = (0.0 + v[a] as f64 + v[b] as f64) / 2.0;
                            assert_eq!(double[j], want, "{case} {j}")
                        }
                    }
                }
            }
        }
    }

    /// A band takes lines while their rows fit, at least one.
    #[test]
    fn bands_stop_at_their_budget() {
        let (mut band, mut scratch) = (Band::<f32>::empty(), Bands::default().scratch);
        let len = BAND_VALUES / 10;
        let sources = |l: usize, out: &mut Vec<Option<isize>>| {
            out.clear();
            out.extend((l..l + 4).map(|r| Some(r as isize)));
        };
        let fill = |_, row: &mut [f32]| row.fill(1.0);
        band.build(&mut scratch, (0, 50), (0, len - 2, len), sources, fill);
        // 4 rows for the first line, one more for each next: 10 rows fit.
        assert_eq!(band.lines, 0..7);
        band.build(&mut scratch, (0, 50), (0, 3 * len, 3 * len), sources, fill);
        assert_eq!(band.lines, 0..1);
    }
}
