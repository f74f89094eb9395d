//! Facts about the data that the proof needs and the IR cannot give: whether a float input holds
//! NaN or `-0.0`. One pass over the input, a few instructions per element; when a fact fails the
//! general engine runs instead.

use super::super::array::RawArray;
use super::super::dtype::Dtype;

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

    pub fn or(self, o: Found) -> Found {
        Found {
            nan: self.nan || o.nan,
            negative_zero: self.negative_zero || o.negative_zero,
        }
    }
}

/// Scans every element of a float input (nothing for other dtypes, which hold neither).
///
/// # Safety
/// `input` must describe valid memory at every element its shape and strides reach.
pub(crate) unsafe fn scan(input: &RawArray) -> Found {
    match input.dtype {
        Dtype::F32 => unsafe { scan_as::<u32>(input, 0x8000_0000, 0x7f80_0000) },
        Dtype::F64 => unsafe { scan_as::<u64>(input, 1 << 63, 0x7ff0_0000_0000_0000) },
        _ => Found::default(),
    }
}

/// A float's bits as an unsigned integer, for a branch-free scan that LLVM vectorises.
trait Bits:
    Copy + Eq + PartialOrd + std::ops::BitAnd<Output = Self> + std::ops::Not<Output = Self>
{
    unsafe fn read(p: *const u8) -> Self;
}
impl Bits for u32 {
    unsafe fn read(p: *const u8) -> u32 {
        unsafe { (p as *const u32).read_unaligned() }
    }
}
impl Bits for u64 {
    unsafe fn read(p: *const u8) -> u64 {
        unsafe { (p as *const u64).read_unaligned() }
    }
}

/// NaN is an all-ones exponent with a non-zero mantissa, that is `bits & !sign > inf`.
unsafe fn scan_as<B: Bits>(input: &RawArray, sign: B, inf: B) -> Found {
    let last = input.shape.len() - 1;
    let (len, stride) = (input.shape[last], input.strides[last]);
    let lines: usize = input.shape[..last].iter().product();
    let mut idx = vec![0usize; last];
    let mut found = Found::default();
    for _ in 0..lines {
        let mut p = input.ptr;
        for (d, &i) in idx.iter().enumerate() {
            p = p.wrapping_offset(i as isize * input.strides[d]);
        }
        let size = std::mem::size_of::<B>();
        let flags = if stride == size as isize && (p as usize).is_multiple_of(size) {
            // SAFETY: a contiguous, aligned line of `len` elements.
            let line = unsafe { std::slice::from_raw_parts(p as *const B, len) };
            line.iter().fold(0u8, |f, &b| f | flags(b, sign, inf))
        } else {
            (0..len).fold(0u8, |f, j| {
                f | flags(
                    unsafe { B::read(p.wrapping_offset(j as isize * stride)) },
                    sign,
                    inf,
                )
            })
        };
        let (nan, nz) = (flags & 1 != 0, flags & 2 != 0);
        found = found.or(Found {
            nan,
            negative_zero: nz,
        });
        if found.nan && found.negative_zero {
            break;
        }
        for d in (0..last).rev() {
            idx[d] += 1;
            if idx[d] < input.shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    found
}

/// Bit 0: `b` is a NaN; bit 1: `b` is `-0.0`. Branch-free, so that the fold over a line becomes
/// vector ORs.
#[inline(always)]
fn flags<B: Bits>(b: B, sign: B, inf: B) -> u8 {
    ((b & !sign) > inf) as u8 | (((b == sign) as u8) << 1)
}
