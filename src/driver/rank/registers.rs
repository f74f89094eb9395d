//! The 5×5 median's networks on pixels held in AVX2 registers. A network known only at run time
//! runs comparator by comparator over rows of pixels in memory ([`super::order::network`]): two
//! loads and two stores a comparator. These are known when ndjit is compiled, so they are
//! straight-line code on vector registers (and the stack slots LLVM spills them to), as OpenCV's
//! `medianBlur` is. Two jobs ([`Job`]):
//! - **one line** from its boxes' sorted columns: 74 comparators a pixel on 25 registers;
//! - **two neighbouring lines**, whose boxes share four rows: those rows' columns arrive sorted,
//!   their 20 values are merged once for both lines, kept to the six ranks (7 to 12) that can be
//!   either median (the line's own row of five has 0 to 5 values below any shared one), and each
//!   line merges its own row into those six: 60 comparators for the pair, then 19 a line.
//!   Measured on 1024², one thread, `u8`: 1.03–1.06 ms a run one line at a time, 0.34 two at a
//!   time (OpenCV 0.87); `f32` 4.6–4.7 and 1.9–2.0 (OpenCV 3.75).
//!
//! The comparators are those [`super::columns`] builds (a test checks the code against them), so
//! the exactness argument there holds; the pair's reduction to six ranks is checked on every 0-1
//! input, which by the 0-1 principle is every input. The vector `min`/`max` give their second
//! operand for equal values, so a `-0.0` and a `0.0` may come out as one zero twice: only the
//! median, which adds `0.0` to its value, or data without `-0.0` (the parent module's proof) come
//! here. The rest of a line past its last register, and the types without a vector min (the
//! 64-bit integers) or CPUs without AVX2, run the same code one pixel at a time ([`One`]).

use super::elem::Elem;
use super::stat::Positions;

/// Comparators on an array of wires, as straight-line code: each `(i, j)` leaves the minimum on
/// wire `i`, the maximum on `j`.
macro_rules! comparators {
    ($w:ident, $min:expr, $max:expr; $(($i:literal, $j:literal))*) => {{
        $(
            let (a, b) = ($w[$i], $w[$j]);
            $w[$i] = $min(a, b);
            $w[$j] = $max(a, b);
        )*
    }};
}

/// The 5×5 median's merge of five sorted columns of five (wire `c * 5 + r`: rank `r` of column
/// `c`): [`super::columns::merge`] for position 12, which ends on wire [`OUT`].
macro_rules! merge_5x5 {
    ($w:ident, $min:expr, $max:expr) => {
        comparators!($w, $min, $max;
            (0, 5) (4, 9) (4, 5) (2, 7) (2, 4) (7, 5) (1, 6) (3, 8) (3, 6) (1, 2) (3, 4) (6, 7)
            (8, 5) (10, 15) (14, 19) (14, 15) (12, 17) (12, 14) (17, 15) (11, 16) (13, 18)
            (13, 16) (11, 12) (13, 14) (16, 17) (18, 15) (20, 0) (5, 0) (24, 4) (24, 5) (4, 0)
            (22, 2) (7, 2) (22, 24) (7, 5) (2, 4) (21, 1) (9, 1) (6, 9) (23, 3) (8, 3) (23, 6)
            (8, 9) (3, 1) (21, 22) (23, 24) (6, 7) (8, 5) (9, 2) (3, 4) (1, 0) (10, 20) (15, 5)
            (15, 20) (14, 24) (4, 24) (4, 20) (12, 22) (2, 22) (17, 7) (17, 2) (2, 4) (11, 21)
            (19, 9) (19, 21) (16, 6) (1, 6) (1, 21) (13, 23) (3, 23) (18, 8) (18, 3) (3, 1)
            (3, 4))
    };
}

/// The wire the median ends on.
const OUT: usize = 4;

/// The merge of the 20 values two vertically neighbouring 5×5 boxes share, five sorted columns
/// of four (wire `c * 4 + r`: rank `r` of column `c`), kept to what ranks 7 to 12 need:
/// [`super::columns::merge_keeping`], 60 comparators; the ranks end on [`SHARED_OUT`].
macro_rules! shared_5x4 {
    ($w:ident, $min:expr, $max:expr) => {
        comparators!($w, $min, $max;
            (0, 4) (2, 6) (2, 4) (1, 5) (3, 7) (3, 5) (1, 2) (3, 4) (5, 6) (8, 12) (10, 14)
            (10, 12) (9, 13) (11, 15) (11, 13) (9, 10) (11, 12) (13, 14) (16, 0) (4, 0) (18, 2)
            (6, 2) (18, 4) (6, 0) (17, 1) (5, 1) (19, 3) (7, 3) (19, 5) (7, 1) (17, 18) (19, 4)
            (5, 6) (7, 0) (1, 2) (8, 16) (0, 16) (12, 4) (12, 0) (4, 16) (10, 18) (2, 18) (14, 6)
            (14, 2) (14, 0) (2, 4) (9, 17) (1, 17) (13, 5) (13, 1) (5, 17) (11, 19) (3, 19)
            (15, 7) (15, 3) (15, 1) (3, 5) (15, 0) (1, 2) (3, 4))
    };
}

/// The wires of ranks 7 to 12 after [`shared_5x4!`].
const SHARED_OUT: [usize; 6] = [15, 0, 1, 2, 3, 4];

/// One box's median from its shared ranks 7 to 12 (wires 0 to 5, sorted) and its own row of five
/// (wires 6 to 10, in any order): [`super::columns::merge_loose`] for position 5, 19
/// comparators, ending on wire [`LOOSE_OUT`].
macro_rules! merge_row {
    ($w:ident, $min:expr, $max:expr) => {
        comparators!($w, $min, $max;
            (6, 7) (8, 9) (6, 8) (7, 9) (7, 8) (6, 10) (8, 10) (7, 8) (9, 10) (0, 6) (4, 10)
            (4, 6) (2, 8) (8, 6) (1, 7) (5, 7) (3, 9) (3, 5) (5, 8))
    };
}

/// The wire [`merge_row!`]'s result ends on.
const LOOSE_OUT: usize = 5;

/// Whether a box of `rows` slots of `width` columns, read at `pos`, is a 5×5 median (or
/// `np.sort(x)[12]`), which this module computes.
pub(crate) fn is_5x5_median(rows: usize, width: usize, pos: &Positions) -> bool {
    rows == 5 && width == 5 && matches!(pos, Positions::One { at: 12, .. })
}

/// The 5×5 medians of whole lines. Row slices are extended lines: pixel `j` of an output reads
/// their columns `j..j + 5`, so each holds at least the output's length plus 4.
pub(crate) enum Job<'a, T> {
    /// One line, from its boxes' sorted columns (`cols[r][x]`: the `r`-th smallest of column
    /// `x`).
    Sorted {
        cols: [&'a [T]; 5],
        out: &'a mut [T],
    },
    /// Two vertically neighbouring lines, from the columns of the four rows their boxes share,
    /// sorted (`shared[r][x]`), and the row each has alone: `top` for `first`, `bottom` for
    /// `second`. Without `second`, the first line alone.
    Pair {
        shared: [&'a [T]; 4],
        top: &'a [T],
        bottom: &'a [T],
        first: &'a mut [T],
        second: Option<&'a mut [T]>,
    },
}

impl<T: Elem> Job<'_, T> {
    /// The length of the output lines.
    fn len(&self) -> usize {
        match self {
            Job::Sorted { out, .. } => out.len(),
            Job::Pair { first, .. } => first.len(),
        }
    }

    /// Panics unless every row holds the output's length plus 4 and the second output is as
    /// long as the first: the kernels read and write unchecked.
    fn check(&self) {
        let need = self.len() + 4;
        let short = |rows: &[&[T]]| rows.iter().any(|r| r.len() < need);
        let fits = match self {
            Job::Sorted { cols, .. } => !short(cols),
            Job::Pair {
                shared,
                top,
                bottom,
                second,
                ..
            } => {
                !short(shared)
                    && !short(&[top, bottom])
                    && second.as_ref().is_none_or(|s| s.len() == need - 4)
            }
        };
        assert!(fits, "a 5×5 median's rows or outputs of the wrong length");
    }

    /// Computes every pixel, each plus `0.0` where `plus_zero`: a register of pixels at a time
    /// where the CPU has AVX2 and the type a vector min (not the 64-bit integers), then the rest
    /// one at a time, by the same networks.
    pub(crate) fn run(&mut self, plus_zero: bool) {
        self.check();
        let mut done = 0;
        #[cfg(target_arch = "x86_64")]
        {
            use std::any::TypeId;
            macro_rules! each {
                ($($t:ident),*) => {$(
                    if TypeId::of::<T>() == TypeId::of::<$t>()
                        && std::arch::is_x86_feature_detected!("avx2")
                    {
                        // SAFETY: `T` is `$t` (the same type id): the job is what it is.
                        let job = unsafe { &mut *(self as *mut Job<T> as *mut Job<$t>) };
                        // SAFETY: the CPU has AVX2; the lengths are checked above.
                        done = unsafe { avx2::$t(job, plus_zero) };
                    }
                )*};
            }
            each!(u8, i8, u16, i16, u32, i32, f32, f64);
        }
        // SAFETY: the lengths are checked above.
        unsafe { self.lanes::<One<T>>(done, plus_zero) };
    }

    /// The pixels from `from` on, `W::LANES` at a time, while a whole register's worth is left;
    /// returns where it stopped. No closures: a closure is a function of its own, compiled
    /// without the kernel's AVX2, so `W`'s methods did not inline into it (every `min` a call).
    ///
    /// # Safety
    /// The lengths must be as [`Job::check`] requires, and `W`'s instructions available.
    #[inline(always)]
    unsafe fn lanes<W: Lane<T = T>>(&mut self, from: usize, plus_zero: bool) -> usize {
        let m = self.len();
        let mut j = from;
        // SAFETY (every load, store and method, `finish!` used within `unsafe` only): `j + c + LANES <= m + 4` values of each row,
        // and `j + LANES <= m` of each output (the caller's promise); `W`'s instructions are
        // available (the caller's promise).
        macro_rules! at {
            ($rows:expr, $c:literal, $r:literal) => {
                unsafe { W::load($rows[$r].as_ptr().add(j + $c)) }
            };
        }
        macro_rules! finish {
            ($v:expr) => {
                match plus_zero {
                    true => $v.plus_zero(),
                    false => $v,
                }
            };
        }
        while j + W::LANES <= m {
            match self {
                Job::Sorted { cols, out } => {
                    // Wire `c * 5 + r`. Written out: `array::from_fn` left a loop of 25 loads,
                    // each stored to the stack and read back, two thirds of the kernel's time.
                    #[rustfmt::skip]
                    let mut w: [W; 25] = [
                        at!(cols, 0, 0), at!(cols, 0, 1), at!(cols, 0, 2), at!(cols, 0, 3), at!(cols, 0, 4),
                        at!(cols, 1, 0), at!(cols, 1, 1), at!(cols, 1, 2), at!(cols, 1, 3), at!(cols, 1, 4),
                        at!(cols, 2, 0), at!(cols, 2, 1), at!(cols, 2, 2), at!(cols, 2, 3), at!(cols, 2, 4),
                        at!(cols, 3, 0), at!(cols, 3, 1), at!(cols, 3, 2), at!(cols, 3, 3), at!(cols, 3, 4),
                        at!(cols, 4, 0), at!(cols, 4, 1), at!(cols, 4, 2), at!(cols, 4, 3), at!(cols, 4, 4),
                    ];
                    unsafe { merge_5x5!(w, W::min, W::max) };
                    unsafe { finish!(w[OUT]).store(out.as_mut_ptr().add(j)) };
                }
                Job::Pair {
                    shared,
                    top,
                    bottom,
                    first,
                    second,
                } => {
                    // Wire `c * 4 + r`.
                    #[rustfmt::skip]
                    let mut w: [W; 20] = [
                        at!(shared, 0, 0), at!(shared, 0, 1), at!(shared, 0, 2), at!(shared, 0, 3),
                        at!(shared, 1, 0), at!(shared, 1, 1), at!(shared, 1, 2), at!(shared, 1, 3),
                        at!(shared, 2, 0), at!(shared, 2, 1), at!(shared, 2, 2), at!(shared, 2, 3),
                        at!(shared, 3, 0), at!(shared, 3, 1), at!(shared, 3, 2), at!(shared, 3, 3),
                        at!(shared, 4, 0), at!(shared, 4, 1), at!(shared, 4, 2), at!(shared, 4, 3),
                    ];
                    unsafe { shared_5x4!(w, W::min, W::max) };
                    let [a, b, c, d, e, f] = SHARED_OUT;
                    let ranks = [w[a], w[b], w[c], w[d], w[e], w[f]];
                    let outs = [Some((top, first)), second.as_mut().map(|s| (bottom, s))];
                    for (row, out) in outs.into_iter().flatten() {
                        let row = [&row[..]];
                        #[rustfmt::skip]
                        let mut v: [W; 11] = [
                            ranks[0], ranks[1], ranks[2], ranks[3], ranks[4], ranks[5],
                            at!(row, 0, 0), at!(row, 1, 0), at!(row, 2, 0), at!(row, 3, 0), at!(row, 4, 0),
                        ];
                        unsafe { merge_row!(v, W::min, W::max) };
                        unsafe { finish!(v[LOOSE_OUT]).store(out.as_mut_ptr().add(j)) };
                    }
                }
            }
            j += W::LANES;
        }
        j
    }
}

/// A register of `LANES` pixels of type `T`, and the comparator's halves on it.
trait Lane: Copy {
    type T;
    const LANES: usize;
    /// # Safety
    /// `LANES` values at `p`.
    unsafe fn load(p: *const Self::T) -> Self;
    /// # Safety
    /// Room for `LANES` values at `p`.
    unsafe fn store(self, p: *mut Self::T);
    /// # Safety (these three, and the two above)
    /// The CPU must have the instructions `Self`'s code is compiled for: the vector types'
    /// methods are compiled for AVX2, so that the intrinsics inline into them and they into the
    /// kernels compiled for AVX2 (methods without the feature left every `min` a call).
    unsafe fn min(self, other: Self) -> Self;
    unsafe fn max(self, other: Self) -> Self;
    unsafe fn plus_zero(self) -> Self;
}

/// One pixel: the rest of a line past its last register, and every pixel where there is no
/// vector code.
#[derive(Clone, Copy)]
struct One<T>(T);

impl<T: Elem> Lane for One<T> {
    type T = T;
    const LANES: usize = 1;
    #[inline(always)]
    unsafe fn load(p: *const T) -> Self {
        One(unsafe { *p })
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut T) {
        unsafe { *p = self.0 }
    }
    #[inline(always)]
    unsafe fn min(self, o: Self) -> Self {
        One(self.0.select_min(o.0))
    }
    #[inline(always)]
    unsafe fn max(self, o: Self) -> Self {
        One(self.0.select_max(o.0))
    }
    #[inline(always)]
    unsafe fn plus_zero(self) -> Self {
        One(self.0.plus_zero())
    }
}

/// The types with AVX2 min and max.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{Job, Lane};
    use std::arch::x86_64::*;

    macro_rules! kernel {
        ($($t:ident, $lane:ident, $v:ty, $lanes:expr, $load:expr, $store:expr, $min:ident, $max:ident, $zero:expr);*) => {$(
            /// A register of `$t`.
            #[derive(Clone, Copy)]
            struct $lane($v);

            impl Lane for $lane {
                type T = $t;
                const LANES: usize = $lanes;
                #[inline]
                #[target_feature(enable = "avx2")]
                unsafe fn load(p: *const $t) -> Self {
                    $lane(unsafe { $load(p) })
                }
                #[inline]
                #[target_feature(enable = "avx2")]
                unsafe fn store(self, p: *mut $t) {
                    unsafe { $store(p, self.0) }
                }
                #[inline]
                #[target_feature(enable = "avx2")]
                unsafe fn min(self, o: Self) -> Self {
                    $lane($min(self.0, o.0))
                }
                #[inline]
                #[target_feature(enable = "avx2")]
                unsafe fn max(self, o: Self) -> Self {
                    $lane($max(self.0, o.0))
                }
                #[inline]
                #[target_feature(enable = "avx2")]
                unsafe fn plus_zero(self) -> Self {
                    $lane($zero(self.0))
                }
            }

            /// The job's whole registers; returns how many pixels that is.
            ///
            /// # Safety
            /// The CPU must have AVX2, and the job's lengths be as `Job::check` requires.
            #[target_feature(enable = "avx2")]
            pub(super) unsafe fn $t(job: &mut Job<$t>, plus_zero: bool) -> usize {
                unsafe { job.lanes::<$lane>(0, plus_zero) }
            }
        )*};
    }

    /// Integers: the median is the value itself.
    fn same(v: __m256i) -> __m256i {
        v
    }

    kernel!(
        u8, U8, __m256i, 32, |p: *const u8| _mm256_loadu_si256(p as *const __m256i),
            |p: *mut u8, v| _mm256_storeu_si256(p as *mut __m256i, v), _mm256_min_epu8, _mm256_max_epu8, same;
        i8, I8, __m256i, 32, |p: *const i8| _mm256_loadu_si256(p as *const __m256i),
            |p: *mut i8, v| _mm256_storeu_si256(p as *mut __m256i, v), _mm256_min_epi8, _mm256_max_epi8, same;
        u16, U16, __m256i, 16, |p: *const u16| _mm256_loadu_si256(p as *const __m256i),
            |p: *mut u16, v| _mm256_storeu_si256(p as *mut __m256i, v), _mm256_min_epu16, _mm256_max_epu16, same;
        i16, I16, __m256i, 16, |p: *const i16| _mm256_loadu_si256(p as *const __m256i),
            |p: *mut i16, v| _mm256_storeu_si256(p as *mut __m256i, v), _mm256_min_epi16, _mm256_max_epi16, same;
        u32, U32, __m256i, 8, |p: *const u32| _mm256_loadu_si256(p as *const __m256i),
            |p: *mut u32, v| _mm256_storeu_si256(p as *mut __m256i, v), _mm256_min_epu32, _mm256_max_epu32, same;
        i32, I32, __m256i, 8, |p: *const i32| _mm256_loadu_si256(p as *const __m256i),
            |p: *mut i32, v| _mm256_storeu_si256(p as *mut __m256i, v), _mm256_min_epi32, _mm256_max_epi32, same;
        f32, F32, __m256, 8, |p: *const f32| _mm256_loadu_ps(p),
            |p: *mut f32, v| _mm256_storeu_ps(p, v), _mm256_min_ps, _mm256_max_ps,
            |v| _mm256_add_ps(_mm256_setzero_ps(), v);
        f64, F64, __m256d, 4, |p: *const f64| _mm256_loadu_pd(p),
            |p: *mut f64, v| _mm256_storeu_pd(p, v), _mm256_min_pd, _mm256_max_pd,
            |v| _mm256_add_pd(_mm256_setzero_pd(), v)
    );
}

#[cfg(test)]
mod tests {
    use super::super::columns::{merge, merge_keeping, merge_loose};
    use super::*;

    /// The comparators a network macro writes, collected by running it on labels: the "min"
    /// records its operands and gives back the first, the "max" the second, so the labels never
    /// move and each record is a comparator's pair of wires.
    macro_rules! recorded {
        ($net:ident, $n:expr) => {{
            let mut pairs: Vec<(u32, u32)> = Vec::new();
            let mut w: [u32; $n] = std::array::from_fn(|k| k as u32);
            let record = std::cell::RefCell::new(&mut pairs);
            $net!(
                w,
                |a: u32, b: u32| {
                    record.borrow_mut().push((a, b));
                    a
                },
                |_a: u32, b: u32| b
            );
            let _ = w;
            pairs
        }};
    }

    /// Each network written in code is the one [`super::super::columns`] generates, so the
    /// exactness argument there holds for it.
    #[test]
    fn the_code_is_the_generated_networks() {
        let m = merge(5, 5, 12, 12);
        assert_eq!(recorded!(merge_5x5, 25), m.pairs);
        assert_eq!(m.out, (OUT, OUT));
        let (pairs, out) = merge_keeping(5, 4, &[7, 8, 9, 10, 11, 12]);
        assert_eq!(recorded!(shared_5x4, 20), pairs);
        assert_eq!(out, SHARED_OUT);
        let (pairs, out) = merge_loose(6, 5, 5);
        assert_eq!(recorded!(merge_row, 11), pairs);
        assert_eq!(out, [LOOSE_OUT]);
    }

    /// The median of `rows[r][j..j + 5]` over `r`, by sorting.
    fn sorted_median<T: Copy + Ord>(rows: &[Vec<T>], j: usize) -> T {
        let mut v: Vec<T> = rows.iter().flat_map(|r| r[j..j + 5].to_vec()).collect();
        v.sort_unstable();
        v[12]
    }

    /// `rows` with each column sorted.
    fn columns_sorted<T: Copy + Ord>(rows: &[Vec<T>]) -> Vec<Vec<T>> {
        let mut cols = rows.to_vec();
        for x in 0..rows[0].len() {
            let mut c: Vec<T> = rows.iter().map(|r| r[x]).collect();
            c.sort_unstable();
            for (r, v) in c.into_iter().enumerate() {
                cols[r][x] = v;
            }
        }
        cols
    }

    /// Every 0-1 pair of boxes whose shared columns are sorted (a column is its count of ones),
    /// with every top row: the pair's network gives the sorted median, so (by the 0-1
    /// principle, the shared columns' sort being a network too) it does for any values. The
    /// second line's median is the same code on the bottom row.
    #[test]
    fn pairs_select_the_median_of_every_0_1_box() {
        for code in 0..5usize.pow(5) {
            let mut shared = vec![vec![0u8; 5]; 4];
            let mut rest = code;
            for c in 0..5 {
                let ones = rest % 5;
                rest /= 5;
                for row in &mut shared[4 - ones..] {
                    row[c] = 1;
                }
            }
            for bits in 0..32u32 {
                let top: Vec<u8> = (0..5).map(|c| (bits >> c & 1) as u8).collect();
                let mut first = [9u8];
                let shared_rows = [&shared[0][..], &shared[1], &shared[2], &shared[3]];
                Job::Pair {
                    shared: shared_rows,
                    top: &top,
                    bottom: &top,
                    first: &mut first,
                    second: None,
                }
                .run(false);
                let mut all = shared.clone();
                all.push(top);
                assert_eq!(first[0], sorted_median(&all, 0), "code {code} bits {bits}");
            }
        }
    }

    /// Random lines of few distinct values (many ties), against sorting, for every type: both
    /// jobs, each with whole registers and a rest, and a pair's first line alone.
    #[test]
    fn medians_equal_sorting() {
        fn check<T: Elem + Ord + std::fmt::Debug>(of: impl Fn(i64) -> T) {
            let mut seed = 0x1234_5678_u64;
            let mut next = || {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed % 11) as i64 - 5
            };
            let m = 77;
            let raw: Vec<Vec<T>> = (0..6)
                .map(|_| (0..m + 4).map(|_| of(next())).collect())
                .collect();
            let want =
                |rows: &[Vec<T>]| -> Vec<T> { (0..m).map(|j| sorted_median(rows, j)).collect() };
            let (upper, lower) = (want(&raw[..5]), want(&raw[1..]));

            let cols = columns_sorted(&raw[..5]);
            let mut out = vec![T::default(); m];
            let sorted = [&cols[0][..], &cols[1], &cols[2], &cols[3], &cols[4]];
            Job::Sorted {
                cols: sorted,
                out: &mut out,
            }
            .run(true);
            assert_eq!(out, upper, "one line from sorted columns");

            let cols = columns_sorted(&raw[1..5]);
            let shared = [&cols[0][..], &cols[1], &cols[2], &cols[3]];
            let (mut first, mut second) = (vec![T::default(); m], vec![T::default(); m]);
            let pair = |first: &mut [T], second: Option<&mut [T]>| {
                Job::Pair {
                    shared,
                    top: &raw[0],
                    bottom: &raw[5],
                    first,
                    second,
                }
                .run(true)
            };
            pair(&mut first, Some(&mut second));
            assert_eq!((&first, &second), (&upper, &lower), "a pair of lines");
            let mut alone = vec![T::default(); m];
            pair(&mut alone, None);
            assert_eq!(alone, upper, "a pair's first line alone");
        }
        check(|v| (v + 5) as u8);
        check(|v| v as i8 * 20);
        check(|v| (v + 5) as u16 * 6000);
        check(|v| v as i16 * 3000);
        check(|v| (v + 5) as u32 * 400_000_000);
        check(|v| v as i32 * 400_000_000);
        check(|v| v * 1_000_000_000_000);
        check(|v| (v + 5) as u64 * 1_500_000_000_000_000_000);
    }

    /// Rows shorter than the output plus the box's reach are refused, not read past.
    #[test]
    #[should_panic(expected = "wrong length")]
    fn short_rows_are_refused() {
        let rows = vec![0u8; 8];
        let mut out = vec![0u8; 5];
        let cols = [&rows[..], &rows, &rows, &rows, &rows];
        Job::Sorted {
            cols,
            out: &mut out,
        }
        .run(false);
    }
}
