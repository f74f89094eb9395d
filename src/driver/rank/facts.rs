//! Facts about the data that the proof needs and the IR cannot give: whether, and where, a float
//! input holds NaN or `-0.0` (values the proof excludes). Vector ORs of per-element flags find
//! them; the windows that read one are recomputed by the general engine ([`super::patch`]), or,
//! where there are too many, the whole run is.

use super::super::array::RawArray;
use super::super::dtype::Dtype;
use super::super::team;
use super::simd;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::Mutex;

/// What a scan found in float data; also a set of the two kinds, the ones a search looks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Found {
    pub nan: bool,
    pub negative_zero: bool,
}

impl Found {
    /// What `v` itself is.
    pub fn of(v: f64) -> Found {
        Found {
            nan: v.is_nan(),
            negative_zero: v.to_bits() == (-0.0f64).to_bits(),
        }
    }

    fn from_flags(flags: u8) -> Found {
        Found {
            nan: flags & 1 != 0,
            negative_zero: flags & 2 != 0,
        }
    }

    /// Whether it fails the proof of a statistic for which a `-0.0` matters or not.
    pub fn excludes(self, zero_matters: bool) -> bool {
        self.nan || (self.negative_zero && zero_matters)
    }

    /// The kinds in either set.
    pub fn or(self, other: Found) -> Found {
        Found {
            nan: self.nan || other.nan,
            negative_zero: self.negative_zero || other.negative_zero,
        }
    }

    /// The kinds in both sets.
    pub fn and(self, other: Found) -> Found {
        Found {
            nan: self.nan && other.nan,
            negative_zero: self.negative_zero && other.negative_zero,
        }
    }

    /// Whether the set holds a kind.
    pub fn any(self) -> bool {
        self.nan || self.negative_zero
    }
}

/// Scans every element of a float input (nothing for other dtypes, which hold neither), its
/// lines shared out over `threads` of the driver's team: on a many-core machine a one-thread
/// scan would cost more than the rank filter it guards.
///
/// # Safety
/// `input` must describe valid memory at every element its shape and strides reach.
pub(crate) unsafe fn scan(input: &RawArray, threads: usize) -> Found {
    match input.dtype {
        Dtype::F32 => unsafe { scan_as::<u32>(input, threads) },
        Dtype::F64 => unsafe { scan_as::<u64>(input, threads) },
        _ => Found::default(),
    }
}

/// Which of the kinds `which` holds one line segment of a float input holds: `len` elements
/// from `p`, `stride` bytes apart (nothing for other dtypes).
///
/// # Safety
/// The elements must be valid for reading.
pub(crate) unsafe fn line(
    dtype: Dtype,
    p: *const u8,
    len: usize,
    stride: isize,
    which: Found,
) -> Found {
    let found = Found::from_flags(match dtype {
        Dtype::F32 => unsafe { line_flags::<u32>(p, len, stride, which.negative_zero) },
        Dtype::F64 => unsafe { line_flags::<u64>(p, len, stride, which.negative_zero) },
        _ => 0,
    });
    found.and(which)
}

/// Calls `each(a, b)` for every maximal run `a..b` of consecutive columns of a line segment (as
/// [`line`]'s) holding values of the kinds `which` holds, in order.
///
/// # Safety
/// As [`line`].
pub(crate) unsafe fn excluded_runs(
    dtype: Dtype,
    p: *const u8,
    len: usize,
    stride: isize,
    which: Found,
    each: impl FnMut(usize, usize),
) {
    match dtype {
        Dtype::F32 => unsafe { runs_as::<u32>(p, len, stride, which, each) },
        Dtype::F64 => unsafe { runs_as::<u64>(p, len, stride, which, each) },
        _ => {}
    }
}

/// What the windows reading each kind of excluded value get.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rules {
    /// Whether a `-0.0` fails the proof (the statistic's result could show its sign): its
    /// windows are recomputed by the general engine.
    pub zero_matters: bool,
    /// Whether the filter's NaN propagates ([`super::NanRule::Propagates`]): its windows are
    /// NaN, written without running the filter. Otherwise the general engine recomputes them.
    pub nan_is_result: bool,
}

/// The facts a run depends on, gathered by its workers as they go: every output line checks the
/// input line of its own index, so together they check every line. It records where the lines
/// hold an excluded value of each fate and how many there are (for NaN written as the result, runs
/// of consecutive columns, each checked segment counted apart); past a limit of either the run stops
/// (its output is then overwritten by the general engine, the arrays being disjoint).
pub(crate) struct Watch {
    pub rules: Rules,
    /// Per [`Fate`], the runs of consecutive columns holding a value of that fate
    /// ([`Fate::kinds`]) each check found: the input line (in C order over the leading axes),
    /// the segment's first column, and the runs from it. The patch reads them back
    /// ([`Watch::runs`]) instead of searching the tainted lines again.
    found: [Mutex<Vec<Segment>>; 2],
    count: [AtomicUsize; 2],
    limit: [usize; 2],
    failed: AtomicBool,
}

/// A checked segment's runs: input line, first column, runs `[a, b)` counted from it.
type Segment = (usize, usize, Vec<(usize, usize)>);

/// Which of a [`Watch`]'s two records: the values whose windows are recomputed, or NaN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fate {
    Recomputed = 0,
    Nan = 1,
}

impl Fate {
    /// The kinds of value whose windows meet this fate under `rules`.
    pub fn kinds(self, rules: Rules) -> Found {
        match self {
            Fate::Recomputed => Found {
                nan: !rules.nan_is_result,
                negative_zero: rules.zero_matters,
            },
            Fate::Nan => Found {
                nan: rules.nan_is_result,
                negative_zero: false,
            },
        }
    }
}

impl Watch {
    /// A watch that gives up past `limit[f]` values (runs, for [`Fate::Nan`]) of fate `f`.
    pub fn new(rules: Rules, limit: [usize; 2]) -> Watch {
        Watch {
            rules,
            found: [Mutex::new(Vec::new()), Mutex::new(Vec::new())],
            count: [AtomicUsize::new(0), AtomicUsize::new(0)],
            limit,
            failed: AtomicBool::new(false),
        }
    }

    /// Checks columns `a..a + len` (from `p`, which points at column `a`, `stride` bytes
    /// apart) of input line `line`.
    ///
    /// # Safety
    /// As [`line`].
    pub unsafe fn check(
        &self,
        (line, a): (usize, usize),
        dtype: Dtype,
        p: *const u8,
        len: usize,
        stride: isize,
    ) {
        // SAFETY: the caller's promise.
        let which = Fate::Recomputed
            .kinds(self.rules)
            .or(Fate::Nan.kinds(self.rules));
        let found = unsafe { self::line(dtype, p, len, stride, which) };
        for fate in [Fate::Recomputed, Fate::Nan] {
            let kinds = found.and(fate.kinds(self.rules));
            if !kinds.any() {
                continue;
            }
            let mut runs = Vec::new();
            // SAFETY: as above.
            unsafe { excluded_runs(dtype, p, len, stride, kinds, |r0, r1| runs.push((r0, r1))) };
            // Values whose windows are recomputed each cost their windows' pixels; NaN cost
            // [`super::patch::pieces`] one visit per run of consecutive columns.
            let n = match fate {
                Fate::Nan => runs.len(),
                Fate::Recomputed => runs.iter().map(|&(r0, r1)| r1 - r0).sum(),
            };
            let f = fate as usize;
            if self.count[f].fetch_add(n, Ordering::Relaxed) + n > self.limit[f] {
                self.failed.store(true, Ordering::Relaxed);
            }
            let mut segments = self.found[f].lock().unwrap_or_else(|e| e.into_inner());
            segments.push((line, a, runs));
        }
    }

    /// Whether the run must be left to the general engine.
    pub fn failed(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
    }

    /// Whether any line holds a value of fate `fate`.
    pub fn any(&self, fate: Fate) -> bool {
        self.count[fate as usize].load(Ordering::Relaxed) > 0
    }

    /// The maximal runs `[a, b)` of columns holding a value of fate `fate` of each of the
    /// `lines` input lines (empty where it holds none): the checked segments' runs in order,
    /// a run reaching the end of one segment joined to one starting the next.
    pub fn runs(&self, fate: Fate, lines: usize) -> Vec<Vec<(usize, usize)>> {
        let mut segments = self.found[fate as usize]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        segments.sort_unstable_by_key(|&(line, a, _)| (line, a));
        let mut out = vec![Vec::new(); lines];
        for (line, a, runs) in segments.drain(..) {
            let line_runs: &mut Vec<(usize, usize)> = &mut out[line];
            for (r0, r1) in runs {
                match line_runs.last_mut() {
                    Some((_, end)) if *end == a + r0 => *end = a + r1,
                    _ => line_runs.push((a + r0, a + r1)),
                }
            }
        }
        out
    }
}

/// A float's bits as an unsigned integer, for a branch-free scan that LLVM vectorises.
trait Bits: Copy + Send + Sync {
    /// Bit 0: a NaN among the values; bit 1: a `-0.0`, looked for only where `ZERO` (the
    /// search for NaN alone is half the instructions).
    fn flags<const ZERO: bool>(line: &[Self]) -> u8;
    /// Whether the value is of a kind `which` holds.
    fn excluded(self, which: Found) -> bool;
    unsafe fn read(p: *const u8) -> Self;
    /// Bit `j` set where element `j` of the [`BLOCK`] elements from `p` is of a kind `which`
    /// holds: a vector compare and a `movemask` per 8 (`u32`) or 4 (`u64`) elements.
    ///
    /// # Safety
    /// The CPU has AVX2; `BLOCK` elements from `p` are valid for reading.
    #[cfg(target_arch = "x86_64")]
    unsafe fn block_mask_avx2(p: *const Self, which: Found) -> u64;
}

macro_rules! bits {
    ($($u:ty, $i:ty, $sign:expr, $inf:expr, $mask:path);*) => {$(
        impl Bits for $u {
            /// Two reductions that vectorise to one min and one max a vector: the largest
            /// magnitude (the bits without the sign, as a signed integer, so the comparison is
            /// one AVX2 has), above infinity's exactly when a NaN is there (an all-ones
            /// exponent with a non-zero mantissa); and the smallest of the bits with the sign
            /// flipped, zero exactly when a `-0.0` is there.
            #[inline(always)]
            fn flags<const ZERO: bool>(line: &[Self]) -> u8 {
                let (mut top, mut low) = (0 as $i, <$u>::MAX);
                for &b in line {
                    top = top.max((b & !$sign) as $i);
                    if ZERO {
                        low = low.min(b ^ $sign);
                    }
                }
                (top > $inf as $i) as u8 | (((low == 0) as u8) << 1)
            }
            #[inline(always)]
            fn excluded(self, which: Found) -> bool {
                (which.nan & ((self & !$sign) as $i > $inf as $i))
                    | (which.negative_zero & (self == $sign))
            }
            #[inline(always)]
            unsafe fn read(p: *const u8) -> Self { unsafe { (p as *const $u).read_unaligned() } }
            #[cfg(target_arch = "x86_64")]
            #[inline(always)]
            unsafe fn block_mask_avx2(p: *const Self, which: Found) -> u64 {
                // SAFETY: the caller's promise.
                unsafe { $mask(p, which) }
            }
        }
    )*};
}
bits!(
    u32, i32, 0x8000_0000u32, 0x7f80_0000u32, masks::block_u32;
    u64, i64, 1u64 << 63, 0x7ff0_0000_0000_0000u64, masks::block_u64
);

/// [`Bits::block_mask_avx2`] with `std::arch`. The plain fold (`m | (hit as u64) << j`) that
/// LLVM vectorises shifts each flag in a 64-bit lane: a 1024² float32 3×3 `np.min` whose NaN
/// block covers a quarter of the image spent a third of its 1.2 ms there (`perf`, when the watch
/// and then the patch each searched the tainted lines; the watch now keeps the runs it finds).
#[cfg(target_arch = "x86_64")]
mod masks {
    use super::{Found, BLOCK};
    use std::arch::x86_64::*;

    /// `$name(p, which)` for `$u` bits, `$lanes` a vector: NaN by an unordered compare of each
    /// value with itself as a float, `-0.0` by its bits' equality with the sign bit alone.
    macro_rules! block_mask {
        ($name:ident, $u:ty, $lanes:expr, $sign:expr, $set1:ident, $eq:ident,
         $unord:ident, $to_float:ident, $to_int:ident, $movemask:ident) => {
            #[target_feature(enable = "avx2")]
            pub(super) unsafe fn $name(p: *const $u, which: Found) -> u64 {
                let all = |flag: bool| $set1(-(flag as i64) as _);
                let (sign, nan, zero) = ($set1($sign), all(which.nan), all(which.negative_zero));
                let mut mask = 0u64;
                for k in 0..BLOCK / $lanes {
                    // SAFETY: the caller's promise: `BLOCK` elements from `p`.
                    let v = unsafe { _mm256_loadu_si256(p.add($lanes * k) as *const __m256i) };
                    let is_nan = $to_int($unord::<_CMP_UNORD_Q>($to_float(v), $to_float(v)));
                    let is_zero = $eq(v, sign);
                    let hit = _mm256_or_si256(
                        _mm256_and_si256(is_nan, nan),
                        _mm256_and_si256(is_zero, zero),
                    );
                    mask |= ($movemask($to_float(hit)) as u32 as u64) << ($lanes * k);
                }
                mask
            }
        };
    }

    #[rustfmt::skip]
    block_mask!(block_u32, u32, 8, i32::MIN, _mm256_set1_epi32, _mm256_cmpeq_epi32,
        _mm256_cmp_ps, _mm256_castsi256_ps, _mm256_castps_si256, _mm256_movemask_ps);
    #[rustfmt::skip]
    block_mask!(block_u64, u64, 4, i64::MIN, _mm256_set1_epi64x, _mm256_cmpeq_epi64,
        _mm256_cmp_pd, _mm256_castsi256_pd, _mm256_castpd_si256, _mm256_movemask_pd);
}

/// Lines per item of the team: enough work to pay for handing it out.
const LINES_PER_ITEM: usize = 16;

unsafe fn scan_as<B: Bits>(input: &RawArray, threads: usize) -> Found {
    let last = input.shape.len() - 1;
    let (len, stride) = (input.shape[last], input.strides[last]);
    let lines: usize = input.shape[..last].iter().product();
    if len == 0 || lines == 0 {
        return Found::default();
    }
    let items: Vec<(usize, usize)> = (0..lines)
        .step_by(LINES_PER_ITEM)
        .map(|l0| (l0, (l0 + LINES_PER_ITEM).min(lines)))
        .collect();
    let threads = threads.clamp(1, items.len());
    let found = AtomicU8::new(0);
    let base = SendPtr(input.ptr);
    let (shape, strides) = (&input.shape, &input.strides);
    team::for_each_init(
        threads,
        &items,
        || (),
        |_, &(l0, l1)| {
            if found.load(Ordering::Relaxed) == 3 {
                return; // NaN and -0.0 both found: nothing left to learn.
            }
            let mut flags = 0u8;
            for line in l0..l1 {
                // The line's start: its index over the leading axes, in C order.
                let (mut p, mut rest) = (base.get(), line);
                for d in (0..last).rev() {
                    let i = rest % shape[d];
                    rest /= shape[d];
                    p = p.wrapping_offset(i as isize * strides[d]);
                }
                // SAFETY: the caller vouches for every element of the input.
                flags |= unsafe { line_flags::<B>(p, len, stride, true) };
            }
            found.fetch_or(flags, Ordering::Relaxed);
        },
    );
    Found::from_flags(found.into_inner())
}

/// The flags of the `len` elements from `p`, `stride` bytes apart. A contiguous line is looked
/// at for `-0.0` only where `zero`; a strided one, read an element at a time, always is.
///
/// # Safety
/// The elements must be valid for reading.
unsafe fn line_flags<B: Bits>(p: *const u8, len: usize, stride: isize, zero: bool) -> u8 {
    let size = std::mem::size_of::<B>();
    if stride == size as isize && (p as usize).is_multiple_of(size) {
        // SAFETY: a contiguous, aligned line of `len` elements.
        let line = unsafe { std::slice::from_raw_parts(p as *const B, len) };
        return simd::run_wide(Flags { line, zero });
    }
    (0..len).fold(0u8, |f, j| {
        f | B::flags::<true>(&[unsafe { B::read(p.wrapping_offset(j as isize * stride)) }])
    })
}

/// [`Bits::flags`] of a contiguous line as one kernel.
struct Flags<'a, B> {
    line: &'a [B],
    zero: bool,
}

impl<B: Bits> simd::Kernel for Flags<'_, B> {
    type Output = u8;

    #[inline(always)]
    fn run(self) -> u8 {
        match self.zero {
            true => B::flags::<true>(self.line),
            false => B::flags::<false>(self.line),
        }
    }
}

/// Elements per block of [`runs_as`]: a block's excluded elements are found as a bit mask in one
/// vectorised pass, and its runs read off the mask.
const BLOCK: usize = 64;

unsafe fn runs_as<B: Bits>(
    p: *const u8,
    len: usize,
    stride: isize,
    which: Found,
    each: impl FnMut(usize, usize),
) {
    let mut runs = Runs { start: None, each };
    let size = std::mem::size_of::<B>();
    if stride == size as isize && (p as usize).is_multiple_of(size) {
        // SAFETY: a contiguous, aligned line of `len` elements.
        let line = unsafe { std::slice::from_raw_parts(p as *const B, len) };
        #[cfg(target_arch = "x86_64")]
        let avx2 = std::arch::is_x86_feature_detected!("avx2");
        #[cfg(not(target_arch = "x86_64"))]
        let avx2 = false;
        for (k, block) in line.chunks(BLOCK).enumerate() {
            let mask = match block.len() == BLOCK && avx2 {
                // SAFETY: the CPU has AVX2 and the block is whole.
                #[cfg(target_arch = "x86_64")]
                true => unsafe { B::block_mask_avx2(block.as_ptr(), which) },
                _ => block
                    .iter()
                    .enumerate()
                    .fold(0u64, |m, (j, &b)| m | ((b.excluded(which) as u64) << j)),
            };
            runs.block(k * BLOCK, mask, block.len());
        }
    } else {
        for j in 0..len {
            // SAFETY: element `j` is valid (the caller's promise).
            let b = unsafe { B::read(p.wrapping_offset(j as isize * stride)) };
            runs.block(j, b.excluded(which) as u64, 1);
        }
    }
    runs.finish(len);
}

/// Maximal runs of set bits over a line's blocks, reported as column ranges `[a, b)`.
struct Runs<F: FnMut(usize, usize)> {
    /// The first column of the run reaching the columns seen so far.
    start: Option<usize>,
    each: F,
}

impl<F: FnMut(usize, usize)> Runs<F> {
    /// The `n <= 64` columns from `from`, bit `j` of `mask` set where column `from + j` is
    /// excluded.
    fn block(&mut self, from: usize, mask: u64, n: usize) {
        if mask == 0 {
            if let Some(a) = self.start.take() {
                (self.each)(a, from);
            }
            return;
        }
        let mut j = 0;
        while j < n {
            let m = mask >> j;
            if m & 1 == 1 {
                self.start.get_or_insert(from + j);
                j += ((!m).trailing_zeros() as usize).min(n - j);
            } else {
                if let Some(a) = self.start.take() {
                    (self.each)(a, from + j);
                }
                j += (m.trailing_zeros() as usize).min(n - j);
            }
        }
    }

    /// Ends the line at column `len`.
    fn finish(mut self, len: usize) {
        if let Some(a) = self.start.take() {
            (self.each)(a, len);
        }
    }
}

/// The input's base pointer, shared with the team (the scan only reads).
#[derive(Clone, Copy)]
struct SendPtr(*const u8);
impl SendPtr {
    /// The pointer (a method, so that closures capture the whole `SendPtr`, not its field).
    fn get(self) -> *const u8 {
        self.0
    }
}
// SAFETY: the pointer is only read through, for the duration of the scan.
unsafe impl Send for SendPtr {}
unsafe impl Sync for SendPtr {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs of NaN and `-0.0` of every length, across the 64-column blocks and to the line's
    /// end, contiguous (whole blocks take the AVX2 masks where the CPU has them) and strided,
    /// float64 and float32, against runs found one element at a time.
    #[test]
    fn runs_are_the_maximal_runs_of_the_kinds_asked_for() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for case in 0..300 {
            let len = 1 + (next() % 300) as usize;
            // Stretches of one kind, each up to 130 long: runs that cross blocks.
            let mut v = Vec::with_capacity(2 * len);
            while v.len() < 2 * len {
                let x = [f64::NAN, -0.0, 0.0, 1.5, -f64::NAN][(next() % 5) as usize];
                let n = 1 + (next() % [1, 3, 130][(next() % 3) as usize]) as usize;
                v.extend(std::iter::repeat_n(x, n));
            }
            v.truncate(2 * len);
            for which in [
                Found {
                    nan: true,
                    negative_zero: false,
                },
                Found {
                    nan: false,
                    negative_zero: true,
                },
                Found {
                    nan: true,
                    negative_zero: true,
                },
            ] {
                let hit = |x: f64| {
                    (which.nan && x.is_nan())
                        || (which.negative_zero && x.to_bits() == (-0.0f64).to_bits())
                };
                for strided in [false, true] {
                    let step = 1 + strided as usize;
                    let line: Vec<f64> = (0..len).map(|j| v[j * step]).collect();
                    let mut want = Vec::new();
                    for (j, &x) in line.iter().enumerate() {
                        match want.last_mut() {
                            Some((_, b)) if hit(x) && *b == j => *b = j + 1,
                            _ if hit(x) => want.push((j, j + 1)),
                            _ => {}
                        }
                    }
                    // The same values as float64 and float32 (a cast keeps NaN and -0.0).
                    let v32: Vec<f32> = v.iter().map(|&x| x as f32).collect();
                    let lines = [
                        (Dtype::F64, v.as_ptr() as *const u8, 8),
                        (Dtype::F32, v32.as_ptr() as *const u8, 4),
                    ];
                    for (dtype, p, size) in lines {
                        let mut got = Vec::new();
                        let stride = size * step as isize;
                        unsafe {
                            excluded_runs(dtype, p, len, stride, which, |a, b| got.push((a, b)))
                        };
                        assert_eq!(
                            got, want,
                            "case {case}, {dtype:?} {which:?}, strided {strided}"
                        );
                    }
                }
            }
        }
    }

    /// A watch's runs are each line's maximal runs whatever the segments the lines were checked
    /// in and their order: a run crossing a segment's end is joined, the lines kept apart, and
    /// the count against the limit is of runs per segment.
    #[test]
    fn runs_join_across_the_segments_a_line_was_checked_in() {
        let rules = Rules {
            zero_matters: false,
            nan_is_result: true,
        };
        let mut line = vec![1.0f64; 300];
        line[50..130].fill(f64::NAN); // across the segments' ends at 64 and 100
        line[299] = f64::NAN;
        let watch = Watch::new(rules, [usize::MAX, 6]);
        let p = line.as_ptr() as *const u8;
        for (l, a, b) in [(2, 100, 300), (2, 0, 64), (0, 0, 300), (2, 64, 100)] {
            let at = p.wrapping_add(8 * a);
            unsafe { watch.check((l, a), Dtype::F64, at, b - a, 8) };
        }
        assert!(!watch.failed() && watch.any(Fate::Nan) && !watch.any(Fate::Recomputed));
        let want = vec![(50, 130), (299, 300)];
        assert_eq!(watch.runs(Fate::Nan, 3), [want.clone(), vec![], want]);
        // Six runs counted (two, one, one and two segments apart): one more passes the limit.
        unsafe { watch.check((1, 0), Dtype::F64, p.wrapping_add(8 * 60), 1, 8) };
        assert!(watch.failed());
    }

    /// Every placement of a NaN and a `-0.0` (first, last, a line of their own, past the first
    /// item of lines), contiguous and strided, on one thread and several.
    #[test]
    fn finds_nan_and_negative_zero_wherever_they_are() {
        let shape = [37usize, 5, 9];
        let n: usize = shape.iter().product();
        let plain: Vec<f64> = (0..n).map(|i| i as f64 * 0.25 + 1.0).collect();
        let places = [0, 1, n / 2, n - 9, n - 1];
        for threads in [1, 3] {
            let scan64 =
                |v: &[f64]| unsafe { scan(&RawArray::from_slice(v, &shape).unwrap(), threads) };
            assert_eq!(scan64(&plain), Found::default());
            for &at in &places {
                for (value, want) in [
                    (
                        f64::NAN,
                        Found {
                            nan: true,
                            negative_zero: false,
                        },
                    ),
                    (
                        -f64::NAN,
                        Found {
                            nan: true,
                            negative_zero: false,
                        },
                    ),
                    (
                        -0.0,
                        Found {
                            nan: false,
                            negative_zero: true,
                        },
                    ),
                    (0.0, Found::default()),
                    (f64::NEG_INFINITY, Found::default()),
                ] {
                    let mut v = plain.clone();
                    v[at] = value;
                    assert_eq!(scan64(&v), want, "{value} at {at}, {threads} threads");
                    let v32: Vec<f32> = v.iter().map(|&x| x as f32).collect();
                    let a = RawArray::from_slice(&v32, &shape).unwrap();
                    assert_eq!(unsafe { scan(&a, threads) }, want, "f32 {value} at {at}");
                }
            }
            // A strided view: every other column of a wider array; a NaN in a skipped column
            // is not the view's.
            let wide: Vec<f64> = (0..2 * n)
                .map(|i| if i % 2 == 1 { f64::NAN } else { 1.0 })
                .collect();
            let mut view = RawArray::from_slice(&wide, &[37, 5, 18]).unwrap();
            view.shape[2] = 9;
            view.strides[2] *= 2;
            assert_eq!(unsafe { scan(&view, threads) }, Found::default());
            view.ptr = view.ptr.wrapping_add(8);
            assert!(unsafe { scan(&view, threads) }.nan);
        }
    }

    /// A line segment's check finds exactly the kinds asked for that it holds: a NaN or a
    /// `-0.0` (either sign of NaN, a `0.0` and infinities are not `-0.0`) at every position of
    /// lines of 1 to 140 elements (past two of the widest unrolled loops and their ends),
    /// contiguous and strided, float64 and float32, for each set of kinds asked for.
    #[test]
    fn a_line_check_finds_the_kinds_asked_for_and_only_those() {
        let kinds = [(true, false), (false, true), (true, true), (false, false)]
            .map(|(nan, negative_zero)| Found { nan, negative_zero });
        let specials = [
            f64::NAN,
            -f64::NAN,
            -0.0,
            0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        for len in 1..=140usize {
            for at in 0..len {
                for value in specials {
                    let mut v: Vec<f64> = (0..2 * len).map(|i| 1.0 + i as f64).collect();
                    v[2 * at] = value;
                    let v32: Vec<f32> = v.iter().map(|&x| x as f32).collect();
                    for which in kinds {
                        let want = Found::of(value).and(which);
                        let lines = [
                            (Dtype::F64, v.as_ptr() as *const u8, 8isize),
                            (Dtype::F32, v32.as_ptr() as *const u8, 4),
                        ];
                        for (dtype, p, size) in lines {
                            for step in [1isize, 2] {
                                // Contiguous: the first `len` values (the special one among
                                // them only where `2 * at < len`); strided: every other one.
                                let held = match step {
                                    1 if 2 * at >= len => Found::default(),
                                    _ => want,
                                };
                                let got = unsafe { line(dtype, p, len, size * step, which) };
                                assert_eq!(
                                    got, held,
                                    "{dtype:?} {value} at {at} of {len}, step {step}, {which:?}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}
