//! The input's own element types, as the rank executor computes in them.
//!
//! Every dtype converts to double monotonically (exactly, or rounded to nearest for 64-bit
//! integers), so the order of the values, and which one sits at a sorted position, is the same
//! in the native type as in double; only the final value is converted ([`Elem::to_f64`]).

use super::super::dtype::Dtype;

/// A native element type: `bool` is read as its byte (`u8`), as the general path reads it.
pub(crate) trait Elem: Copy + PartialOrd + Default + Send + Sync + 'static {
    /// The smaller and larger of two values, neither of them NaN (the executor runs on float
    /// data only after checking it holds no NaN).
    fn min(self, other: Self) -> Self;
    fn max(self, other: Self) -> Self;
    /// `min`/`max` as a select on `<`, for the loops over whole lines that LLVM vectorises:
    /// one vector instruction on floats, where IEEE `min` adds a NaN fix-up. The same values
    /// on NaN-free data but for the sign of zeros (for a `-0.0` and a `0.0` the pair's min and
    /// max may be the same zero), so used where the data holds no `-0.0` or the result adds
    /// `0.0` (the median); and out of place only, since a select written back in place can
    /// become a conditional (masked) store, which is slow.
    #[inline(always)]
    fn select_min(self, other: Self) -> Self {
        if other < self {
            other
        } else {
            self
        }
    }
    #[inline(always)]
    fn select_max(self, other: Self) -> Self {
        if self < other {
            other
        } else {
            self
        }
    }
    /// The comparators `(i, j)` of a network on rows of pixels ([`super::order::compare_rows`]).
    #[inline(always)]
    fn compare_rows(pairs: &[(u32, u32)], rows: &mut [Self], stride: usize, len: usize) {
        super::order::compare_rows_portable(pairs, rows, stride, len)
    }
    /// The 3×3 medians `out[j]` of the columns `j..j + 3` of three rows, plus `0.0` where
    /// `plus_zero`, in one pass of 64-byte vectors where the type and the CPU have one
    /// ([`super::median3`]): how many it wrote, all or none.
    #[inline(always)]
    fn medians3x3_wide(rows: [&[Self]; 3], plus_zero: bool, out: &mut [Self]) -> usize {
        let _ = (rows, plus_zero, out);
        0
    }
    /// The value as the general path reads it: `(double)v`.
    fn to_f64(self) -> f64;
    /// `0.0 + (double)v` in this type: the median's addition, which turns `-0.0` into `0.0`.
    fn plus_zero(self) -> Self;
    /// Whether [`Elem::range`] gives the value the general path stores for `max - min` in an
    /// output of this dtype: the C cast of `(double)hi - (double)lo`.
    const RANGE_NATIVE: bool;
    /// `hi - lo` (`hi >= lo`) as the general path stores it, where [`Elem::RANGE_NATIVE`]:
    /// - types of up to 16 bits and `u32`: the difference, exact in double and below 2**32, is
    ///   cast through a 32- or 64-bit integer and truncated to the type, which is the wrapping
    ///   difference in the type (for the signed ones the same bits);
    /// - `f64`: the same subtraction; `f32`: the difference of the doubles, rounded to `f32`.
    fn range(hi: Self, lo: Self) -> Self;
    /// The element equal to `v`, if there is one whose double is `v` bit for bit.
    fn exactly(v: f64) -> Option<Self>;
    /// Whether `(dtype)(double)v == v` for every value: then a result may be stored natively
    /// in an output of the same dtype, the general path's C cast of its double being the value.
    const ROUND_TRIPS: bool;
    /// For types of at most 16 bits, the order-preserving bin of a value, `0..1 << KEY_BITS`.
    const KEY_BITS: u32;
    /// Whether min and max compare a vector's lanes at once (AVX2 has no 64-bit integer min or
    /// max: those types compare one pair at a time), which decides where networks stop.
    const VECTOR_MIN_MAX: bool;
    fn key(self) -> usize;
    fn from_key(k: usize) -> Self;
    /// An unsigned integer in a total order that agrees with `<` on the numbers (`-0.0` before
    /// `0.0`, NaN at the ends: the floats' `total_cmp`), for sorting at an integer comparison's
    /// cost ([`super::ranked`]); it fits in 32 bits for types of at most 4 bytes.
    fn sort_key(self) -> u64;
    /// # Safety
    /// `p` must be valid for reading one element (any alignment).
    unsafe fn read(p: *const u8) -> Self;
    /// # Safety
    /// `p` must be valid for writing one element (any alignment).
    unsafe fn write(p: *mut u8, v: Self);
}

/// The minimum or the maximum, as a type: the folds over lines are written once for both, and
/// the vector kernels ([`super::lanes`]) know which instruction to use.
pub(crate) trait Extreme: Copy + 'static {
    const MAX: bool;
    /// [`Elem::select_min`] or [`Elem::select_max`]: for loops written out of place.
    fn pick<T: Elem>(a: T, b: T) -> T;
    /// [`Elem::min`] or [`Elem::max`]: for values read and written back in place.
    fn in_place<T: Elem>(a: T, b: T) -> T;
}

#[derive(Clone, Copy)]
pub(crate) struct Min;
#[derive(Clone, Copy)]
pub(crate) struct Max;

impl Extreme for Min {
    const MAX: bool = false;
    #[inline(always)]
    fn pick<T: Elem>(a: T, b: T) -> T {
        a.select_min(b)
    }
    #[inline(always)]
    fn in_place<T: Elem>(a: T, b: T) -> T {
        a.min(b)
    }
}

impl Extreme for Max {
    const MAX: bool = true;
    #[inline(always)]
    fn pick<T: Elem>(a: T, b: T) -> T {
        a.select_max(b)
    }
    #[inline(always)]
    fn in_place<T: Elem>(a: T, b: T) -> T {
        a.max(b)
    }
}

/// `$body` with `$E` bound to [`Min`] or [`Max`], as `max` says.
macro_rules! with_extreme {
    ($max:expr, $E:ident => $body:expr) => {
        match $max {
            true => {
                type $E = $crate::driver::rank::elem::Max;
                $body
            }
            false => {
                type $E = $crate::driver::rank::elem::Min;
                $body
            }
        }
    };
}
pub(crate) use with_extreme;

macro_rules! int_elem {
    ($($t:ty: $bits:expr, $flip:expr, $trips:expr, $range:expr, $vector:expr);*) => {$(
        impl Elem for $t {
            #[inline(always)]
            fn min(self, o: Self) -> Self { Ord::min(self, o) }
            #[inline(always)]
            fn max(self, o: Self) -> Self { Ord::max(self, o) }
            #[inline(always)]
            fn to_f64(self) -> f64 { self as f64 }
            #[inline(always)]
            fn plus_zero(self) -> Self { self }
            fn exactly(v: f64) -> Option<Self> {
                let t = v as $t;
                (t as f64 == v && (v != 0.0 || v.is_sign_positive())).then_some(t)
            }
            const ROUND_TRIPS: bool = $trips;
            const RANGE_NATIVE: bool = $range;
            #[inline(always)]
            fn range(hi: Self, lo: Self) -> Self { hi.wrapping_sub(lo) }
            const KEY_BITS: u32 = $bits;
            const VECTOR_MIN_MAX: bool = $vector;
            #[inline(always)]
            fn key(self) -> usize { ((self as u64) ^ $flip) as usize & ((1usize << $bits) - 1) }
            #[inline(always)]
            fn from_key(k: usize) -> Self { ((k as u64) ^ $flip) as $t }
            #[inline(always)]
            fn sort_key(self) -> u64 {
                // The sign bit flipped for signed types, so that they order as unsigned.
                let mask = u64::MAX >> (64 - 8 * std::mem::size_of::<$t>());
                (self as u64 ^ <$t>::MIN as u64) & mask
            }
            #[inline(always)]
            unsafe fn read(p: *const u8) -> Self { unsafe { (p as *const $t).read_unaligned() } }
            #[inline(always)]
            unsafe fn write(p: *mut u8, v: Self) { unsafe { (p as *mut $t).write_unaligned(v) } }
        }
    )*};
}
// Keys of signed types flip the sign bit, so that they sort as unsigned. Wider types have no
// keys (0 bits): they never use a histogram.
// `i32` and the 64-bit types are not range-native: a difference past `i32::MAX` (or 2**63) is
// cast to the integer indefinite value, not wrapped.
int_elem!(u8: 8, 0, true, true, true; i8: 8, 0x80, true, true, true;
          u16: 16, 0, true, true, true; i16: 16, 0x8000, true, true, true;
          u32: 0, 0, true, true, true; i32: 0, 0, true, false, true;
          u64: 0, 0, false, false, false; i64: 0, 0, false, false, false);

macro_rules! float_elem {
    ($($t:ident),*) => {$(
        impl Elem for $t {
            // IEEE minNum/maxNum: the same as `<` on NaN-free data but for which of two
            // zeros comes out, and never a conditional store (which LLVM makes of a `<` select
            // written back in place, as the networks' comparators are).
            #[inline(always)]
            fn min(self, o: Self) -> Self { <$t>::min(self, o) }
            #[inline(always)]
            fn max(self, o: Self) -> Self { <$t>::max(self, o) }
            #[inline(always)]
            fn to_f64(self) -> f64 { self as f64 }
            #[inline(always)]
            fn plus_zero(self) -> Self { 0.0 + self }
            fn exactly(v: f64) -> Option<Self> {
                let t = v as $t;
                ((t as f64).to_bits() == v.to_bits()).then_some(t)
            }
            /// With AVX, the CPU's vector min and max: one instruction each where IEEE `min`
            /// takes three. They return the second operand for equal values, so a `-0.0` and a
            /// `0.0` may come out as the same zero twice: the statistics whose result could
            /// show a zero's sign never run on data holding `-0.0` (the median adds `0.0`).
            fn compare_rows(pairs: &[(u32, u32)], rows: &mut [Self], stride: usize, len: usize) {
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("avx") {
                    // SAFETY: the CPU has AVX.
                    return unsafe { avx::$t(pairs, rows, stride, len) };
                }
                super::order::compare_rows_portable(pairs, rows, stride, len)
            }
            #[inline(always)]
            fn medians3x3_wide(rows: [&[Self]; 3], plus_zero: bool, out: &mut [Self]) -> usize {
                <$t as super::median3::Wide>::medians3x3(rows, plus_zero, out)
            }
            const ROUND_TRIPS: bool = true;
            const RANGE_NATIVE: bool = true;
            #[inline(always)]
            fn range(hi: Self, lo: Self) -> Self { (hi as f64 - lo as f64) as $t }
            const KEY_BITS: u32 = 0;
            const VECTOR_MIN_MAX: bool = true;
            fn key(self) -> usize { unreachable!("floats have no histogram keys") }
            fn from_key(_: usize) -> Self { unreachable!("floats have no histogram keys") }
            #[inline(always)]
            fn sort_key(self) -> u64 {
                // `total_cmp`'s order: a negative float's bits are flipped whole (larger
                // magnitudes come first), a positive one's sign bit set (after every negative).
                let bits = self.to_bits() as u64;
                let sign = 1u64 << (8 * std::mem::size_of::<$t>() - 1);
                match bits & sign {
                    0 => bits | sign,
                    _ => !bits & (sign | (sign - 1)),
                }
            }
            #[inline(always)]
            unsafe fn read(p: *const u8) -> Self { unsafe { (p as *const $t).read_unaligned() } }
            #[inline(always)]
            unsafe fn write(p: *mut u8, v: Self) { unsafe { (p as *mut $t).write_unaligned(v) } }
        }
    )*};
}
float_elem!(f32, f64);

/// The floats' network comparators in AVX registers.
#[cfg(target_arch = "x86_64")]
mod avx {
    use super::super::order::two_rows;
    use std::arch::x86_64::*;

    macro_rules! comparators {
        ($($t:ident, $lanes:expr, $load:ident, $store:ident, $min:ident, $max:ident);*) => {$(
            /// # Safety
            /// The CPU must have AVX.
            #[target_feature(enable = "avx")]
            pub(super) unsafe fn $t(pairs: &[(u32, u32)], rows: &mut [$t], stride: usize, len: usize) {
                let whole = len / $lanes * $lanes;
                for &(i, j) in pairs {
                    let (a, b) = two_rows(rows, i as usize * stride, j as usize * stride, len);
                    let (pa, pb) = (a.as_mut_ptr(), b.as_mut_ptr());
                    for x in (0..whole).step_by($lanes) {
                        // SAFETY: `x + lanes <= len` values of each row.
                        unsafe {
                            let (u, v) = ($load(pa.add(x)), $load(pb.add(x)));
                            $store(pa.add(x), $min(u, v));
                            $store(pb.add(x), $max(u, v));
                        }
                    }
                    for x in whole..len {
                        let (u, v) = (a[x], b[x]);
                        // As the vector instructions: the second operand unless the first
                        // is strictly smaller (larger).
                        a[x] = if u < v { u } else { v };
                        b[x] = if u > v { u } else { v };
                    }
                }
            }
        )*};
    }
    comparators!(f32, 8, _mm256_loadu_ps, _mm256_storeu_ps, _mm256_min_ps, _mm256_max_ps;
                 f64, 4, _mm256_loadu_pd, _mm256_storeu_pd, _mm256_min_pd, _mm256_max_pd);
}

/// Calls `$body` with `$T` bound to the element type of `$dtype` (`bool` as `u8`).
macro_rules! with_elem {
    ($dtype:expr, $T:ident => $body:expr) => {
        with_elem!(@arms $dtype, $T, $body, [Bool u8] [U8 u8] [I8 i8] [U16 u16] [I16 i16]
                   [U32 u32] [I32 i32] [U64 u64] [I64 i64] [F32 f32] [F64 f64])
    };
    (@arms $dtype:expr, $T:ident, $body:expr, $([$d:ident $t:ty])*) => {
        match $dtype {
            $(Dtype::$d => {
                type $T = $t;
                $body
            })*
        }
    };
}
pub(crate) use with_elem;

/// Whether a float dtype's data can hold NaN or `-0.0` (integers cannot).
pub(crate) fn is_float(d: Dtype) -> bool {
    matches!(d, Dtype::F32 | Dtype::F64)
}
