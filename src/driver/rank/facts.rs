//! Facts about the data that the proof needs and the IR cannot give: whether a float input holds
//! NaN or `-0.0`. One pass over the input, vector ORs of per-element flags; when a fact fails the
//! general engine runs instead.

use super::super::array::RawArray;
use super::super::dtype::Dtype;
use super::super::team;
use super::simd;
use std::sync::atomic::{AtomicU8, Ordering};

/// What a scan found in float data.
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

/// What one line segment of a float input holds: `len` elements from `p`, `stride` bytes apart
/// (nothing for other dtypes). The rank executor checks each line as it computes the output line
/// of the same index ([`Watch`]), while the line is in cache, instead of a pass of its own.
///
/// # Safety
/// The elements must be valid for reading.
pub(crate) unsafe fn line(dtype: Dtype, p: *const u8, len: usize, stride: isize) -> Found {
    let flags = match dtype {
        Dtype::F32 => unsafe { line_flags::<u32>(p, len, stride) },
        Dtype::F64 => unsafe { line_flags::<u64>(p, len, stride) },
        _ => 0,
    };
    Found {
        nan: flags & 1 != 0,
        negative_zero: flags & 2 != 0,
    }
}

/// The facts a run depends on, gathered by its workers as they go: every output line checks the
/// input line of its own index, so together they check every line. A run that finds a fact
/// failing stops (its output is then overwritten by the general engine, the arrays being
/// disjoint).
pub(crate) struct Watch {
    /// Whether a `-0.0` fails the proof (the statistic's result could show its sign).
    pub zero_matters: bool,
    pub failed: std::sync::atomic::AtomicBool,
}

impl Watch {
    pub fn new(zero_matters: bool) -> Watch {
        Watch {
            zero_matters,
            failed: Default::default(),
        }
    }

    /// Records what a line holds.
    pub fn see(&self, found: Found) {
        if found.nan || (found.negative_zero && self.zero_matters) {
            self.failed.store(true, Ordering::Relaxed);
        }
    }

    pub fn failed(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
    }
}

/// A float's bits as an unsigned integer, for a branch-free scan that LLVM vectorises.
trait Bits: Copy + Send + Sync {
    /// Bit 0: a NaN among the values; bit 1: a `-0.0`.
    fn flags(line: &[Self]) -> u8;
    unsafe fn read(p: *const u8) -> Self;
}

macro_rules! bits {
    ($($u:ty, $i:ty, $sign:expr, $inf:expr);*) => {$(
        impl Bits for $u {
            /// Two reductions that vectorise to one min and one max a vector: the largest
            /// magnitude (the bits without the sign, as a signed integer, so the comparison is
            /// one AVX2 has), above infinity's exactly when a NaN is there (an all-ones
            /// exponent with a non-zero mantissa); and the smallest of the bits with the sign
            /// flipped, zero exactly when a `-0.0` is there.
            #[inline(always)]
            fn flags(line: &[Self]) -> u8 {
                let (mut top, mut low) = (0 as $i, <$u>::MAX);
                for &b in line {
                    top = top.max((b & !$sign) as $i);
                    low = low.min(b ^ $sign);
                }
                (top > $inf as $i) as u8 | (((low == 0) as u8) << 1)
            }
            #[inline(always)]
            unsafe fn read(p: *const u8) -> Self { unsafe { (p as *const $u).read_unaligned() } }
        }
    )*};
}
bits!(u32, i32, 0x8000_0000u32, 0x7f80_0000u32; u64, i64, 1u64 << 63, 0x7ff0_0000_0000_0000u64);

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
                flags |= unsafe { line_flags::<B>(p, len, stride) };
            }
            found.fetch_or(flags, Ordering::Relaxed);
        },
    );
    let flags = found.into_inner();
    Found {
        nan: flags & 1 != 0,
        negative_zero: flags & 2 != 0,
    }
}

/// The flags of the `len` elements from `p`, `stride` bytes apart.
///
/// # Safety
/// The elements must be valid for reading.
unsafe fn line_flags<B: Bits>(p: *const u8, len: usize, stride: isize) -> u8 {
    let size = std::mem::size_of::<B>();
    if stride == size as isize && (p as usize).is_multiple_of(size) {
        // SAFETY: a contiguous, aligned line of `len` elements.
        let line = unsafe { std::slice::from_raw_parts(p as *const B, len) };
        return simd::fast(|| B::flags(line));
    }
    (0..len).fold(0u8, |f, j| {
        f | B::flags(&[unsafe { B::read(p.wrapping_offset(j as isize * stride)) }])
    })
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
}
