//! Element types: reading any input dtype as `f64`, and writing `f64` results back with the C cast
//! that scipy's `CASE_FILTER_OUT` performs (`*(npy_uint8 *)po = (npy_uint8)tmp`).
//!
//! A C cast of an out-of-range `double` is undefined behaviour in C, so what scipy produces is what
//! its compiled code does on x86-64. Measured against scipy 1.17 (see `tests/driver_scipy.py`):
//! - `int8`, `uint8`, `int16`, `uint16` and `bool` go through a 32-bit `cvttsd2si` (NaN and
//!   out-of-range values become `INT32_MIN`) and keep the low bits: 300 → 44, -1 → 255,
//!   70000 → 4464 (uint16), NaN → 0. `bool` is `npy_bool`, an `unsigned char`: 2.0 stores the
//!   byte 2, 0.5 the byte 0.
//! - `int32` is that 32-bit conversion itself: NaN → `INT32_MIN`.
//! - `uint32` goes through a 64-bit `cvttsd2si` and keeps the low 32 bits: -1e10 → 2884901888.
//! - `int64` is the 64-bit conversion: NaN and out-of-range → `INT64_MIN`.
//! - `uint64` is the truncated value modulo 2^64 when `|x| < 2^64`, else 0; NaN → 2^63.
//!   (`generic_filter1d`'s line buffer stores 2^63 below -2^63: `filter1d.rs`.)
//! - `float32` rounds to nearest even; `float64` is unchanged.
//!
//! Inputs convert as C's `(double)` does: exactly, or rounded to nearest for 64-bit integers. A
//! `bool` input is read as its byte (`npy_bool` is an `unsigned char`), so a byte 2 reads as 2.0.

use super::error::DriverError;
use std::fmt;

/// The element types scipy's `generic_filter` accepts, in native byte order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dtype {
    Bool,
    U8,
    U16,
    U32,
    U64,
    I8,
    I16,
    I32,
    I64,
    F32,
    F64,
}

impl Dtype {
    pub const ALL: [Dtype; 11] = [
        Dtype::Bool,
        Dtype::U8,
        Dtype::U16,
        Dtype::U32,
        Dtype::U64,
        Dtype::I8,
        Dtype::I16,
        Dtype::I32,
        Dtype::I64,
        Dtype::F32,
        Dtype::F64,
    ];

    /// Bytes per element.
    pub fn itemsize(self) -> usize {
        match self {
            Dtype::Bool | Dtype::U8 | Dtype::I8 => 1,
            Dtype::U16 | Dtype::I16 => 2,
            Dtype::U32 | Dtype::I32 | Dtype::F32 => 4,
            Dtype::U64 | Dtype::I64 | Dtype::F64 => 8,
        }
    }

    /// NumPy's name (`"uint8"`, `"float64"`, `"bool"`).
    pub fn name(self) -> &'static str {
        match self {
            Dtype::Bool => "bool",
            Dtype::U8 => "uint8",
            Dtype::U16 => "uint16",
            Dtype::U32 => "uint32",
            Dtype::U64 => "uint64",
            Dtype::I8 => "int8",
            Dtype::I16 => "int16",
            Dtype::I32 => "int32",
            Dtype::I64 => "int64",
            Dtype::F32 => "float32",
            Dtype::F64 => "float64",
        }
    }

    /// The dtype of a NumPy kind character (`dtype.kind`: `b`, `u`, `i`, `f`, `c`, ...) and item
    /// size, with scipy's errors for the others: complex is `TypeError('Complex type not
    /// supported')`, anything else (float16, longdouble, object, datetime ...) is
    /// `RuntimeError('array type not supported')`.
    ///
    /// scipy raises the latter only when it reads or writes an element, so a caller should ignore
    /// it for an empty array, as scipy does; the complex check comes first and always applies.
    pub fn from_kind(kind: char, itemsize: usize) -> Result<Dtype, DriverError> {
        let found = match (kind, itemsize) {
            ('b', 1) => Some(Dtype::Bool),
            ('u', 1) => Some(Dtype::U8),
            ('u', 2) => Some(Dtype::U16),
            ('u', 4) => Some(Dtype::U32),
            ('u', 8) => Some(Dtype::U64),
            ('i', 1) => Some(Dtype::I8),
            ('i', 2) => Some(Dtype::I16),
            ('i', 4) => Some(Dtype::I32),
            ('i', 8) => Some(Dtype::I64),
            ('f', 4) => Some(Dtype::F32),
            ('f', 8) => Some(Dtype::F64),
            _ => None,
        };
        found.ok_or_else(|| DriverError::UnsupportedDtype {
            dtype: format!("{kind}{itemsize}"),
            complex: kind == 'c',
        })
    }

    /// The dtype of a NumPy array-interface type string such as `"<f8"`, `"|u1"` or `"|b1"`. A
    /// byte order other than the host's is refused (convert the array first, as scipy does).
    pub fn from_typestr(s: &str) -> Result<Dtype, DriverError> {
        let mut chars = s.chars();
        let (order, kind) = (chars.next(), chars.next());
        let size: Option<usize> = chars.as_str().parse().ok();
        let (Some(order), Some(kind), Some(size)) = (order, kind, size) else {
            return Err(DriverError::UnsupportedDtype {
                dtype: s.to_string(),
                complex: false,
            });
        };
        let native = if cfg!(target_endian = "little") {
            '<'
        } else {
            '>'
        };
        if order != '|' && order != '=' && order != native && size > 1 {
            return Err(DriverError::UnsupportedDtype {
                dtype: format!("{s} (non-native byte order)"),
                complex: kind == 'c',
            });
        }
        Dtype::from_kind(kind, size)
    }

    /// Reads one element at `p` as f64 (`(double)*(type *)p`).
    ///
    /// # Safety
    /// `p` must be valid for reading `self.itemsize()` bytes (any alignment).
    #[inline]
    pub unsafe fn read(self, p: *const u8) -> f64 {
        unsafe {
            match self {
                Dtype::Bool | Dtype::U8 => f64::from(*p),
                Dtype::I8 => f64::from(*p as i8),
                Dtype::U16 => f64::from((p as *const u16).read_unaligned()),
                Dtype::I16 => f64::from((p as *const i16).read_unaligned()),
                Dtype::U32 => f64::from((p as *const u32).read_unaligned()),
                Dtype::I32 => f64::from((p as *const i32).read_unaligned()),
                Dtype::U64 => (p as *const u64).read_unaligned() as f64,
                Dtype::I64 => (p as *const i64).read_unaligned() as f64,
                Dtype::F32 => f64::from((p as *const f32).read_unaligned()),
                Dtype::F64 => (p as *const f64).read_unaligned(),
            }
        }
    }

    /// Writes `v` at `p` with scipy's C cast (see the module docs).
    ///
    /// # Safety
    /// `p` must be valid for writing `self.itemsize()` bytes (any alignment).
    #[inline]
    pub unsafe fn write(self, p: *mut u8, v: f64) {
        unsafe {
            match self {
                Dtype::Bool | Dtype::U8 => *p = cvt_i32(v) as u8,
                Dtype::I8 => *p = cvt_i32(v) as u8,
                Dtype::U16 | Dtype::I16 => (p as *mut u16).write_unaligned(cvt_i32(v) as u16),
                Dtype::I32 => (p as *mut i32).write_unaligned(cvt_i32(v)),
                Dtype::U32 => (p as *mut u32).write_unaligned(cvt_i64(v) as u32),
                Dtype::I64 => (p as *mut i64).write_unaligned(cvt_i64(v)),
                Dtype::U64 => (p as *mut u64).write_unaligned(cvt_u64(v)),
                Dtype::F32 => (p as *mut f32).write_unaligned(v as f32),
                Dtype::F64 => (p as *mut f64).write_unaligned(v),
            }
        }
    }

    /// Writes `v` with [`Dtype::write`]'s cast at `n` elements from `p`, `stride` bytes apart:
    /// the cast once, then its bytes stored as one unsigned integer each.
    ///
    /// # Safety
    /// Every element written must be valid, writable memory of this dtype.
    pub unsafe fn fill_line(self, p: *mut u8, stride: isize, n: usize, v: f64) {
        let mut one = [0u8; 8];
        // SAFETY: `one` holds any dtype's element.
        unsafe { self.write(one.as_mut_ptr(), v) };
        macro_rules! each {
            ($u:ty) => {{
                const SIZE: usize = std::mem::size_of::<$u>();
                let bits = <$u>::from_ne_bytes(one[..SIZE].try_into().expect("one element"));
                // SAFETY (both): the caller's promise; contiguous, a loop LLVM vectorises.
                if stride == SIZE as isize {
                    let q = p as *mut $u;
                    (0..n).for_each(|i| unsafe { q.add(i).write_unaligned(bits) });
                } else {
                    let at = |i: usize| p.wrapping_offset(i as isize * stride) as *mut $u;
                    (0..n).for_each(|i| unsafe { at(i).write_unaligned(bits) });
                }
            }};
        }
        match self.itemsize() {
            1 => each!(u8),
            2 => each!(u16),
            4 => each!(u32),
            _ => each!(u64),
        }
    }

    /// Reads `out.len()` elements starting at `p`, `stride` bytes apart.
    ///
    /// # Safety
    /// Every element read must be valid memory of this dtype.
    pub unsafe fn read_line(self, p: *const u8, stride: isize, out: &mut [f64]) {
        macro_rules! each {
            ($ty:ty, $cast:expr) => {{
                if stride == std::mem::size_of::<$ty>() as isize {
                    // Contiguous: a loop LLVM vectorises (a strided one converts one by one).
                    let q = p as *const $ty;
                    for (i, o) in out.iter_mut().enumerate() {
                        *o = $cast(q.add(i).read_unaligned());
                    }
                } else {
                    let mut q = p;
                    for o in out.iter_mut() {
                        *o = $cast((q as *const $ty).read_unaligned());
                        q = q.wrapping_offset(stride);
                    }
                }
            }};
        }
        unsafe {
            match self {
                Dtype::Bool | Dtype::U8 => each!(u8, f64::from),
                Dtype::I8 => each!(i8, f64::from),
                Dtype::U16 => each!(u16, f64::from),
                Dtype::I16 => each!(i16, f64::from),
                Dtype::U32 => each!(u32, f64::from),
                Dtype::I32 => each!(i32, f64::from),
                Dtype::U64 => each!(u64, |v| v as f64),
                Dtype::I64 => each!(i64, |v| v as f64),
                Dtype::F32 => each!(f32, f64::from),
                Dtype::F64 => {
                    if stride == 8 {
                        std::ptr::copy_nonoverlapping(
                            p,
                            out.as_mut_ptr() as *mut u8,
                            out.len() * 8,
                        );
                    } else {
                        each!(f64, |v| v)
                    }
                }
            }
        }
    }

    /// Writes `vals` starting at `p`, `stride` bytes apart, each with [`Dtype::write`]'s cast.
    ///
    /// # Safety
    /// Every element written must be valid, writable memory of this dtype.
    pub unsafe fn write_line(self, p: *mut u8, stride: isize, vals: &[f64]) {
        macro_rules! each {
            ($ty:ty, $cast:expr) => {{
                if stride == std::mem::size_of::<$ty>() as isize {
                    // Contiguous: a loop LLVM vectorises (the casts a vector at a time).
                    let q = p as *mut $ty;
                    for (i, &v) in vals.iter().enumerate() {
                        q.add(i).write_unaligned($cast(v));
                    }
                } else {
                    let mut q = p;
                    for &v in vals {
                        (q as *mut $ty).write_unaligned($cast(v));
                        q = q.wrapping_offset(stride);
                    }
                }
            }};
        }
        unsafe {
            match self {
                Dtype::Bool | Dtype::U8 | Dtype::I8 => each!(u8, |v| cvt_i32(v) as u8),
                Dtype::U16 | Dtype::I16 => each!(u16, |v| cvt_i32(v) as u16),
                Dtype::I32 => each!(i32, cvt_i32),
                Dtype::U32 => each!(u32, |v| cvt_i64(v) as u32),
                Dtype::I64 => each!(i64, cvt_i64),
                Dtype::U64 => each!(u64, cvt_u64),
                Dtype::F32 => each!(f32, |v| v as f32),
                Dtype::F64 => {
                    if stride == 8 {
                        std::ptr::copy_nonoverlapping(
                            vals.as_ptr() as *const u8,
                            p,
                            vals.len() * 8,
                        );
                    } else {
                        each!(f64, |v| v)
                    }
                }
            }
        }
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// x86-64 `cvttsd2si` to a 32-bit register: truncation, `i32::MIN` for NaN and out of range.
///
/// On x86-64 it is that instruction (SSE2, always there); elsewhere [`cvt_i32_portable`]. The
/// portable form compiles to a clamp, a conversion and three compares (Rust's `as` saturates),
/// which made writing a line of `uint8` outputs cost three quarters of Game of Life's kernel.
#[inline]
pub fn cvt_i32(x: f64) -> i32 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_cvttsd_si32, _mm_set_sd};
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe { _mm_cvttsd_si32(_mm_set_sd(x)) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    cvt_i32_portable(x)
}

/// [`cvt_i32`] in portable Rust.
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline]
pub fn cvt_i32_portable(x: f64) -> i32 {
    if x > -2147483649.0 && x < 2147483648.0 {
        x as i32
    } else {
        i32::MIN
    }
}

/// x86-64 `cvttsd2si` to a 64-bit register: truncation, `i64::MIN` for NaN and out of range
/// (that instruction on x86-64, as [`cvt_i32`]).
#[inline]
pub fn cvt_i64(x: f64) -> i64 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_cvttsd_si64, _mm_set_sd};
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe { _mm_cvttsd_si64(_mm_set_sd(x)) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    cvt_i64_portable(x)
}

/// [`cvt_i64`] in portable Rust.
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline]
pub fn cvt_i64_portable(x: f64) -> i64 {
    if (-9223372036854775808.0..9223372036854775808.0).contains(&x) {
        x as i64
    } else {
        i64::MIN
    }
}

/// `(npy_uint64)x` as scipy's build computes it: the truncated value modulo 2^64 while
/// `|x| < 2^64`, 0 beyond, 2^63 for NaN.
#[inline]
pub fn cvt_u64(x: f64) -> u64 {
    const TWO64: f64 = 18446744073709551616.0;
    if x.is_nan() {
        1 << 63
    } else if x >= 0.0 {
        if x < TWO64 {
            x as u64
        } else {
            0
        }
    } else if x > -TWO64 {
        ((-x) as u64).wrapping_neg()
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cast(d: Dtype, v: f64) -> u64 {
        let mut b = [0u8; 8];
        unsafe { d.write(b.as_mut_ptr(), v) };
        u64::from_le_bytes(b)
    }

    #[test]
    fn casts_match_scipy_on_x86_64() {
        // Values measured with scipy 1.17.1 (generic_filter returning v, output=dtype).
        let nan = f64::NAN;
        assert_eq!(cast(Dtype::U8, 300.0), 44);
        assert_eq!(cast(Dtype::U8, -1.0), 255);
        assert_eq!(cast(Dtype::U8, nan), 0);
        assert_eq!(cast(Dtype::U8, 70000.0), 112);
        assert_eq!(cast(Dtype::U8, -2.5), 254);
        assert_eq!(cast(Dtype::Bool, 2.0), 2);
        assert_eq!(cast(Dtype::Bool, 0.5), 0);
        assert_eq!(cast(Dtype::U16, 70000.0), 4464);
        assert_eq!(cast(Dtype::U16, 1e10), 0);
        assert_eq!(cast(Dtype::I32, nan), 0x8000_0000);
        assert_eq!(cast(Dtype::I32, 2.0f64.powi(31)), 0x8000_0000);
        assert_eq!(cast(Dtype::U32, 1e10), 1410065408);
        assert_eq!(cast(Dtype::U32, -1e10), 2884901888);
        assert_eq!(cast(Dtype::U32, 2.0f64.powi(32) + 5.0), 5);
        assert_eq!(cast(Dtype::U32, nan), 0);
        assert_eq!(cast(Dtype::I64, nan), 1 << 63);
        assert_eq!(cast(Dtype::I64, 1e20), 1 << 63);
        assert_eq!(cast(Dtype::U64, nan), 1 << 63);
        assert_eq!(cast(Dtype::U64, f64::INFINITY), 0);
        assert_eq!(cast(Dtype::U64, f64::NEG_INFINITY), 0);
        assert_eq!(cast(Dtype::U64, -1e20), 0);
        assert_eq!(cast(Dtype::U64, -1e19), 0x7538dcfb76180000);
        assert_eq!(cast(Dtype::U64, -9223372036854777856.0), 0x7ffffffffffff800);
        assert_eq!(cast(Dtype::U64, -(2.0f64.powi(63))), 1 << 63);
        assert_eq!(
            cast(Dtype::U64, 2.0f64.powi(63) + 2048.0),
            0x8000000000000800
        );
        assert_eq!(cast(Dtype::U64, 2.0f64.powi(64)), 0);
        assert_eq!(cast(Dtype::U64, -1.0), u64::MAX);
        assert_eq!(cast(Dtype::U64, -0.5), 0);
        assert_eq!(cast(Dtype::F32, 0.1) as u32, 0.1f32.to_bits());
    }

    /// On x86-64 the casts are the instruction; its results are the portable functions' on the
    /// values where the two could part: both sides of each limit, NaN, infinities, `-0.0`.
    #[test]
    fn the_instruction_casts_are_the_portable_ones() {
        let mut vals = vec![
            f64::NAN,
            -f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -0.0,
            0.0,
        ];
        for limit in [2.0f64.powi(31), 2.0f64.powi(63)] {
            for v in [limit, -limit] {
                vals.extend([v, v.next_up(), v.next_down(), v - 1.0, v + 1.0, v - 0.5]);
            }
        }
        vals.extend([0.5, -0.5, 0.999, -0.999, 255.9, -1.5, 1e300, -1e300, 5e-324]);
        for v in vals {
            assert_eq!(cvt_i32(v), cvt_i32_portable(v), "{v:e}");
            assert_eq!(cvt_i64(v), cvt_i64_portable(v), "{v:e}");
        }
    }

    #[test]
    fn reads_convert_as_c_does() {
        let b = [2u8];
        assert_eq!(unsafe { Dtype::Bool.read(b.as_ptr()) }, 2.0);
        let v = u64::MAX.to_le_bytes();
        assert_eq!(
            unsafe { Dtype::U64.read(v.as_ptr()) },
            18446744073709551616.0
        );
        assert_eq!(unsafe { Dtype::I64.read(v.as_ptr()) }, -1.0);
        let h = [0xffu8];
        assert_eq!(unsafe { Dtype::I8.read(h.as_ptr()) }, -1.0);
    }

    #[test]
    fn line_conversions_agree_with_elementwise_ones() {
        let vals = [
            0.0,
            -0.0,
            1.5,
            -7.9,
            255.0,
            256.0,
            1e10,
            -1e10,
            f64::NAN,
            f64::INFINITY,
            3e19,
            -3e19,
        ];
        for d in Dtype::ALL {
            let n = vals.len();
            let sz = d.itemsize();
            for stride in [sz as isize, 3 * sz as isize] {
                let mut buf = vec![0u8; n * 3 * sz + 8];
                unsafe { d.write_line(buf.as_mut_ptr().add(1), stride, &vals) };
                let mut back = vec![0.0; n];
                unsafe { d.read_line(buf.as_ptr().add(1), stride, &mut back) };
                for (i, &v) in vals.iter().enumerate() {
                    let mut one = [0u8; 8];
                    unsafe { d.write(one.as_mut_ptr(), v) };
                    let got = unsafe { d.read(buf.as_ptr().add(1).offset(i as isize * stride)) };
                    assert_eq!(
                        got.to_bits(),
                        unsafe { d.read(one.as_ptr()) }.to_bits(),
                        "{d} {v}"
                    );
                    assert_eq!(back[i].to_bits(), got.to_bits());
                }
            }
        }
    }

    /// `fill_line` stores each element exactly as `write` would, contiguous and strided, at an
    /// unaligned address, and leaves the bytes between strided elements alone.
    #[test]
    fn fill_line_stores_the_cast_of_one_value_and_nothing_between() {
        for d in Dtype::ALL {
            let sz = d.itemsize();
            for v in [f64::NAN, -0.0, 1.5, -7.9, 300.0, 1e10, -3e19, f64::INFINITY] {
                let want = cast(d, v).to_le_bytes();
                for stride in [sz, 3 * sz] {
                    let n = 37;
                    let mut buf = vec![0xa5u8; n * stride + 8];
                    unsafe { d.fill_line(buf.as_mut_ptr().add(1), stride as isize, n, v) };
                    for (i, &byte) in buf.iter().enumerate() {
                        let at = i.wrapping_sub(1);
                        let inside = i >= 1 && at < n * stride && at % stride < sz;
                        let expected = if inside { want[at % stride] } else { 0xa5 };
                        assert_eq!(byte, expected, "{d} {v} stride {stride} byte {i}");
                    }
                }
            }
        }
    }

    #[test]
    fn typestrs_and_kinds() {
        assert_eq!(Dtype::from_typestr("<f8").unwrap(), Dtype::F64);
        assert_eq!(Dtype::from_typestr("|b1").unwrap(), Dtype::Bool);
        assert_eq!(Dtype::from_typestr("|u1").unwrap(), Dtype::U8);
        assert_eq!(
            Dtype::from_typestr("<c16").unwrap_err().python_type(),
            "TypeError"
        );
        assert_eq!(
            Dtype::from_typestr("<f2").unwrap_err().python_type(),
            "RuntimeError"
        );
        assert_eq!(
            Dtype::from_typestr("<f2").unwrap_err().to_string(),
            "array type not supported"
        );
        assert!(Dtype::from_typestr(">f8").is_err());
        assert!(Dtype::from_typestr("").is_err());
        assert_eq!(
            Dtype::from_kind('c', 8).unwrap_err().to_string(),
            "Complex type not supported"
        );
    }
}
