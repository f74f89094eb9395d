//! The 3×3 median of floats in one pass of 64-byte vectors (AVX-512F), for the CPUs where
//! [`super::simd`] takes that tier (Intel's).
//!
//! The portable kernel (`order::Median3x3`) sorts each column of the three rows into three rows
//! of scratch, then reads them back at three offsets for Paeth's medians: per vector of pixels
//! three loads, six comparisons and three stores, then nine loads, twelve comparisons and a
//! store. Here each vector of columns is sorted once in registers, and the sorted columns one
//! and two places to its right are the same registers shifted across it and the next vector
//! (`valignd`/`valignq`): three loads and a store per vector, nothing else through memory. The
//! line's last vectors are masked loads and stores, so that no end goes through scratch either
//! (a scratch tail written by wide stores and read back at offsets by narrow loads stalled on
//! store forwarding). Measured on an Intel Xeon, 1024² `float32`, one thread, the driver's time
//! for a preallocated output: 0.55–0.60 ms (both passes in 64-byte vectors) → 0.45–0.49.
//!
//! The values are the portable kernel's: the same comparisons in the same identity, which is
//! exact on any totally ordered values. The CPU's `min`/`max` return the second operand for
//! equal values where the portable selects may return the first, which differs only in the
//! sign of a zero: the callers either hold no `-0.0` or add `0.0` to the median (NumPy's
//! median does), as they do for the selects. NaN windows are recomputed by the caller's patch.

/// The medians `out[j]` of the columns `j..j + 3` of the three `rows` (each at least
/// `out.len() + 2` long), plus `0.0` where `plus_zero` (NumPy's median): how many were written,
/// all of them, or none (on a CPU without the tier).
pub(crate) trait Wide: Sized {
    fn medians3x3(rows: [&[Self]; 3], plus_zero: bool, out: &mut [Self]) -> usize;
}

macro_rules! wide {
    ($($t:ident: $lanes:expr, $vt:ident, $mask:ident, $align:ident, $cast:ident, $uncast:ident,
       $load:ident, $store:ident, $min:ident, $max:ident, $add:ident, $zero:ident);*) => {$(
        impl Wide for $t {
            #[inline(always)]
            fn medians3x3(rows: [&[$t]; 3], plus_zero: bool, out: &mut [$t]) -> usize {
                #[cfg(target_arch = "x86_64")]
                if super::simd::wide() {
                    // SAFETY: the CPU has AVX-512F (`wide`).
                    return unsafe { x86::$t(rows, plus_zero, out) };
                }
                let _ = (rows, plus_zero, out);
                0
            }
        }
    )*
        #[cfg(target_arch = "x86_64")]
        mod x86 {
            use std::arch::x86_64::*;
            $(
            /// # Safety
            /// The CPU must have AVX-512F.
            #[target_feature(enable = "avx512f")]
            pub(super) unsafe fn $t(rows: [&[$t]; 3], plus_zero: bool, out: &mut [$t]) -> usize {
                const L: usize = $lanes;
                let m = out.len();
                if rows.iter().any(|r| r.len() < m + 2) {
                    return 0;
                }
                let r = rows.map(<[$t]>::as_ptr);
                // The first `n` columns from `c` on (at most `L`), each sorted into (lo, mid,
                // hi); the lanes past `n` are zeros, read from no memory.
                #[inline]
                #[target_feature(enable = "avx512f")]
                unsafe fn sorted(r: [*const $t; 3], c: usize, n: usize) -> [$vt; 3] {
                    let (k, at) = (first(n), c);
                    // SAFETY: the caller's rows have `at + n` values, and masked lanes are not
                    // read (nor is any where `n` is 0 and `at` past the rows).
                    let (a, b, c) = unsafe {
                        let p = r.map(|p| p.wrapping_add(at));
                        ($load(k, p[0]), $load(k, p[1]), $load(k, p[2]))
                    };
                    let (x, y) = ($min(a, b), $max(a, b));
                    let z = $max(x, c);
                    [$min(x, c), $min(y, z), $max(y, z)]
                }
                // The mask of the first `n` lanes (at most `L`).
                #[inline]
                fn first(n: usize) -> $mask {
                    ((1u64 << n) - 1) as $mask
                }
                // `v` shifted down by one and by two lanes, `next`'s first coming in at the top.
                #[inline]
                #[target_feature(enable = "avx512f")]
                fn shifted(v: $vt, next: $vt) -> [$vt; 2] {
                    let (v, next) = ($cast(v), $cast(next));
                    [$uncast($align::<1>(next, v)), $uncast($align::<2>(next, v))]
                }
                #[inline]
                #[target_feature(enable = "avx512f")]
                fn med3(a: $vt, b: $vt, c: $vt) -> $vt {
                    $max($min(a, b), $min($max(a, b), c))
                }
                let zero = $zero();
                let ptr = out.as_mut_ptr();
                // The outputs from `i` (at most `L` of them, `n`) from the sorted columns from
                // `i` on and the next `L`.
                let step = |i: usize, n: usize, cur: &[$vt; 3], next: &[$vt; 3]| {
                    let [lo1, lo2] = shifted(cur[0], next[0]);
                    let [mid1, mid2] = shifted(cur[1], next[1]);
                    let [hi1, hi2] = shifted(cur[2], next[2]);
                    let a = $max($max(cur[0], lo1), lo2);
                    let b = med3(cur[1], mid1, mid2);
                    let c = $min($min(cur[2], hi1), hi2);
                    let mut v = med3(a, b, c);
                    if plus_zero {
                        v = $add(zero, v);
                    }
                    // SAFETY: outputs `i..i + n` exist; masked lanes are not written.
                    unsafe { $store(ptr.add(i), first(n), v) };
                };
                // The columns of a row: `m + 2`; those a vector at `c` reads.
                let cols = |c: usize| (m + 2).saturating_sub(c).min(L);
                // SAFETY (all three): `cols` counts values the rows have, and whole vectors
                // are read while `i + 2 * L <= m + 2`.
                let mut cur = unsafe { sorted(r, 0, cols(0)) };
                let mut i = 0;
                // The outputs before the first 64-byte boundary of `out` in a masked step, so
                // that every later store fills one cache line (a line's outputs start at its
                // second value where the box reaches one column left; a store split across two
                // lines costs more than the unaligned loads this makes of the rows).
                let lead = ptr.align_offset(64);
                if 0 < lead && lead < L.min(m) {
                    let next = unsafe { sorted(r, L, cols(L)) };
                    step(0, lead, &cur, &next);
                    i = lead;
                    cur = unsafe { sorted(r, i, cols(i)) };
                }
                // Outputs `i..i + L` read columns up to `i + L + 1`, in the vector at `i + L`:
                // whole vectors (a constant mask: a plain load and store), then the end.
                while i + 2 * L <= m + 2 {
                    let next = unsafe { sorted(r, i + L, L) };
                    step(i, L, &cur, &next);
                    cur = next;
                    i += L;
                }
                while i < m {
                    let next = unsafe { sorted(r, i + L, cols(i + L)) };
                    step(i, (m - i).min(L), &cur, &next);
                    cur = next;
                    i += L;
                }
                m
            }
            )*
        }
    };
}

wide!(f32: 16, __m512, __mmask16, _mm512_alignr_epi32, _mm512_castps_si512, _mm512_castsi512_ps,
          _mm512_maskz_loadu_ps, _mm512_mask_storeu_ps, _mm512_min_ps, _mm512_max_ps,
          _mm512_add_ps, _mm512_setzero_ps;
      f64: 8, __m512d, __mmask8, _mm512_alignr_epi64, _mm512_castpd_si512, _mm512_castsi512_pd,
          _mm512_maskz_loadu_pd, _mm512_mask_storeu_pd, _mm512_min_pd, _mm512_max_pd,
          _mm512_add_pd, _mm512_setzero_pd);

#[cfg(test)]
mod tests {
    use super::Wide;

    /// The median of nine values by sorting, plus `0.0` where asked.
    fn by_sorting<T: Copy + PartialOrd + Into<f64>>(
        rows: [&[T]; 3],
        j: usize,
        plus_zero: bool,
    ) -> f64 {
        let mut v: Vec<f64> = rows
            .iter()
            .flat_map(|r| r[j..j + 3].iter().map(|&x| x.into()))
            .collect();
        v.sort_by(f64::total_cmp);
        match plus_zero {
            true => 0.0 + v[4],
            false => v[4],
        }
    }

    /// Every output the one pass writes is the median, bit for bit (zeros of both signs with
    /// `plus_zero`, as the callers run it), for lines of every length around the vectors' ends;
    /// on a CPU with the tier it writes them all.
    fn agrees<T>(value: impl Fn(u64) -> T)
    where
        T: Wide + Copy + PartialOrd + Into<f64> + Default + std::fmt::Debug,
    {
        let mut s = 0x9E3779B97F4A7C15u64;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let lanes = 64 / std::mem::size_of::<T>();
        for m in 0..5 * lanes {
            let rows: Vec<Vec<T>> = (0..3)
                .map(|_| (0..m + 2).map(|_| value(next())).collect())
                .collect();
            let rows = [&rows[0][..], &rows[1][..], &rows[2][..]];
            // Outputs at every offset from a 64-byte boundary (the one pass aligns its stores).
            let runs = (0..lanes).flat_map(|skip| [(false, skip), (true, skip)]);
            for (plus_zero, skip) in runs {
                let mut buffer = vec![T::default(); m + lanes + skip];
                let at = buffer.as_ptr().align_offset(64) + skip;
                let out = &mut buffer[at..at + m];
                let done = T::medians3x3(rows, plus_zero, out);
                assert!(done == 0 || done == m, "m={m} done={done}");
                if crate::driver::rank::simd::wide() {
                    assert_eq!(done, m, "the tier writes every output");
                }
                for (j, &got) in out[..done].iter().enumerate() {
                    let want = by_sorting(rows, j, plus_zero);
                    let got: f64 = got.into();
                    // Without `plus_zero` the sign of a zero may differ (the callers hold no
                    // `-0.0` there); its value may not.
                    let same = got.to_bits() == want.to_bits() || (!plus_zero && got == want);
                    assert!(
                        same,
                        "m={m} j={j} plus_zero={plus_zero}: {got:?} against {want:?}"
                    );
                }
            }
        }
    }

    /// Few distinct values, so that windows hold ties, and zeros of both signs.
    fn small(bits: u64) -> f64 {
        [-0.0, 0.0, 1.0, -1.0, 2.5, -2.5, 1e-300, f64::INFINITY][(bits % 8) as usize]
    }

    #[test]
    fn one_pass_gives_each_median_of_f32() {
        agrees(|b| small(b) as f32);
        agrees(|b| (b >> 40) as f32 / 3.0 - 1e6);
    }

    #[test]
    fn one_pass_gives_each_median_of_f64() {
        agrees(small);
        agrees(|b| f64::from_bits(b >> 2) - 1.0);
    }
}
