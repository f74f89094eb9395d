//! Array elements in PTX: every dtype scipy's `generic_filter` takes, read as `f64` and written
//! back with scipy's C cast, exactly as the CPU driver does (`ndjit::driver::Dtype::read` and
//! `Dtype::write`, whose docs state the measured x86-64 behaviour this reproduces).
//!
//! PTX's own float-to-integer conversions saturate (and give 0 or the most negative value for
//! NaN), where x86's `cvttsd2si` gives the "integer indefinite" value for anything out of range.
//! So each cast converts with `cvt.rzi` only where the value is in range, and selects the
//! indefinite value otherwise; the emulator (`pir::emu`) models `cvt` as the hardware does, so the
//! tests compare these sequences with the driver's casts bit for bit.

use super::Dtype;
use crate::pir::{Addr, Bin, BoolOp, Cmp, Func, Ins, Reg, Rnd, Space, Src, Un, T};

/// The PTX type an element of `dt` is loaded and stored as.
pub fn ptx_type(dt: Dtype) -> T {
    match dt {
        Dtype::Bool | Dtype::U8 => T::U8,
        Dtype::I8 => T::S8,
        Dtype::U16 => T::U16,
        Dtype::I16 => T::S16,
        Dtype::U32 => T::U32,
        Dtype::I32 => T::S32,
        Dtype::U64 => T::U64,
        Dtype::I64 => T::S64,
        Dtype::F32 => T::F32,
        Dtype::F64 => T::F64,
    }
}

/// A loaded element (in a register of [`ptx_type`]'s class; 8- and 16-bit loads extend by their
/// signedness) as f64: exact, or for 64-bit integers rounded to nearest, as C's `(double)`.
pub fn to_f64(k: &mut Func, dt: Dtype, v: Reg) -> Reg {
    match dt {
        Dtype::F64 => v,
        Dtype::F32 => k.cvt(None, T::F64, T::F32, v),
        // The narrow loads widened the value into a 32-bit register.
        Dtype::Bool | Dtype::U8 | Dtype::U16 => k.cvt(Some(Rnd::Rn), T::F64, T::U32, v),
        Dtype::I8 | Dtype::I16 => k.cvt(Some(Rnd::Rn), T::F64, T::S32, v),
        int => k.cvt(Some(Rnd::Rn), T::F64, ptx_type(int), v),
    }
}

/// Whether `dt` is a float type, whose values include NaN and `-0.0`.
pub fn is_float(dt: Dtype) -> bool {
    matches!(dt, Dtype::F32 | Dtype::F64)
}

/// Whether float32 holds every value of `dt` exactly (float32, bool, 8- and 16-bit integers):
/// then the kernels may compare an image's values as float32s, in half the registers of
/// doubles and with float32 instructions, for the same order and the same results.
pub fn exact_in_f32(dt: Dtype) -> bool {
    matches!(
        dt,
        Dtype::F32 | Dtype::Bool | Dtype::U8 | Dtype::I8 | Dtype::U16 | Dtype::I16
    )
}

/// The two-lane type ([`T::U16x2`], [`T::S16x2`]) whose lanes hold the values of `dt` and order
/// them as they compare: bool, 8- and 16-bit integers.
pub fn lanes16(dt: Dtype) -> Option<T> {
    match dt {
        Dtype::Bool | Dtype::U8 | Dtype::U16 => Some(T::U16x2),
        Dtype::I8 | Dtype::I16 => Some(T::S16x2),
        _ => None,
    }
}

/// Two integers (in 32-bit registers, within the lanes' type `t`) as the lanes of one register:
/// `lo` in the low half.
pub fn pack16(k: &mut Func, t: T, lo: Reg, hi: Reg) -> Reg {
    let lo = if t == T::S16x2 {
        k.bin(Bin::And, T::B32, lo, Src::I(0xffff))
    } else {
        lo
    };
    k.fma(T::U32, hi, Src::I(1 << 16), lo)
}

/// The lanes of `p` (of type `t`) as doubles, the low lane first.
pub fn unpack16(k: &mut Func, t: T, p: Reg) -> (Reg, Reg) {
    let (lo, hi, st) = if t == T::S16x2 {
        let up = k.bin(Bin::Shl, T::B32, p, Src::I(16));
        let lo = k.bin(Bin::Shr, T::S32, up, Src::I(16));
        (lo, k.bin(Bin::Shr, T::S32, p, Src::I(16)), T::S32)
    } else {
        let lo = k.bin(Bin::And, T::B32, p, Src::I(0xffff));
        (lo, k.bin(Bin::Shr, T::U32, p, Src::I(16)), T::U32)
    };
    (
        k.cvt(Some(Rnd::Rn), T::F64, st, lo),
        k.cvt(Some(Rnd::Rn), T::F64, st, hi),
    )
}

/// A loaded element as float32 (as [`to_f64`] reads it): exact where [`exact_in_f32`] says so,
/// which is where the kernels use it.
pub fn to_f32(k: &mut Func, dt: Dtype, v: Reg) -> Reg {
    match dt {
        Dtype::F32 => v,
        Dtype::F64 => k.cvt(Some(Rnd::Rn), T::F32, T::F64, v),
        Dtype::Bool | Dtype::U8 | Dtype::U16 => k.cvt(Some(Rnd::Rn), T::F32, T::U32, v),
        Dtype::I8 | Dtype::I16 => k.cvt(Some(Rnd::Rn), T::F32, T::S32, v),
        int => k.cvt(Some(Rnd::Rn), T::F32, ptx_type(int), v),
    }
}

/// Loads one element at `addr` as f64 ([`to_f64`]).
pub fn load(k: &mut Func, dt: Dtype, addr: Addr) -> Reg {
    let v = k.ld(Space::GlobalNc, ptx_type(dt), addr);
    to_f64(k, dt, v)
}

/// Stores `v` (f64) at `addr` as `dt`, with scipy's C cast on x86-64 (`Dtype::write`).
pub fn store(k: &mut Func, dt: Dtype, addr: Addr, v: Reg) {
    let (t, r) = match dt {
        Dtype::F64 => (T::F64, v),
        Dtype::F32 => (T::F32, k.cvt(Some(Rnd::Rn), T::F32, T::F64, v)),
        // A 32-bit `cvttsd2si`, keeping the low bits.
        Dtype::Bool | Dtype::U8 | Dtype::I8 | Dtype::U16 | Dtype::I16 | Dtype::I32 => {
            let narrow = match dt {
                Dtype::U16 | Dtype::I16 => T::U16,
                Dtype::I32 => T::S32,
                _ => T::U8,
            };
            (narrow, truncate(k, v, T::S32))
        }
        // A 64-bit `cvttsd2si`; uint32 keeps its low 32 bits.
        Dtype::I64 => (T::S64, truncate(k, v, T::S64)),
        Dtype::U32 => {
            let wide = truncate(k, v, T::S64);
            (T::U32, k.cvt(None, T::U32, T::U64, wide))
        }
        Dtype::U64 => (T::U64, to_u64(k, v)),
    };
    k.st(Space::Global, t, addr, r);
}

/// Stores the doubles `vals` as consecutive elements of the float type `dt` from `at`, 16 bytes
/// a store (`at` 16-byte aligned; `vals` a whole number of 16-byte chunks).
pub fn store_vectors(k: &mut Func, dt: Dtype, at: Reg, vals: &[Reg]) {
    let (t, vals): (T, Vec<Reg>) = match dt {
        Dtype::F64 => (T::F64, vals.to_vec()),
        Dtype::F32 => (
            T::F32,
            vals.iter()
                .map(|&r| k.cvt(Some(Rnd::Rn), T::F32, T::F64, r))
                .collect(),
        ),
        _ => unreachable!("16-byte stores hold float outputs only"),
    };
    for (q, chunk) in vals.chunks(16 / dt.itemsize()).enumerate() {
        k.push(Ins::StV {
            sp: Space::Global,
            t,
            addr: Addr::reg(at, 16 * q as i64),
            a: chunk.to_vec(),
        });
    }
}

/// x86-64 `cvttsd2si` into a signed register of type `t` (`S32` or `S64`): truncation toward
/// zero, the most negative value for NaN and out of range (`cvt_i32`, `cvt_i64` of the driver).
fn truncate(k: &mut Func, v: Reg, t: T) -> Reg {
    let bits = t.bits() as i32;
    // The range that truncates into the type: (-2^(b-1) - 1, 2^(b-1)). Both bounds are exact
    // doubles for 32 bits; for 64 bits -2^63 - 1 rounds to -2^63, so the lower test is `>=`.
    let top = 2f64.powi(bits - 1);
    let lo = if bits == 32 {
        k.setp(Cmp::Gt, T::F64, v, Src::f64(-top - 1.0))
    } else {
        k.setp(Cmp::Ge, T::F64, v, Src::f64(-top))
    };
    let ok = k.setp_comb(Cmp::Lt, T::F64, v, Src::f64(top), BoolOp::And, lo, false);
    let r = k.cvt(Some(Rnd::Rzi), t, T::F64, v);
    // Selected as raw bits: the most negative value printed as an unsigned literal.
    let (bt, min) = if bits == 32 {
        (T::B32, i64::from(i32::MIN))
    } else {
        (T::B64, i64::MIN)
    };
    k.selp(bt, r, Src::I(min), ok)
}

/// `(npy_uint64)x` as scipy's build computes it (`cvt_u64` of the driver): the truncated value
/// modulo 2^64 while `|x| < 2^64`, 0 beyond, 2^63 for NaN.
fn to_u64(k: &mut Func, v: Reg) -> Reg {
    let a = k.un(Un::Abs, T::F64, v);
    // |x| truncated: exact below 2^64 (larger values and NaN are replaced below).
    let t = k.cvt(Some(Rnd::Rzi), T::U64, T::F64, a);
    let neg = k.setp(Cmp::Lt, T::F64, v, Src::f64(0.0));
    let nt = k.un(Un::Neg, T::S64, t);
    let r = k.selp(T::B64, nt, t, neg);
    let inside = k.setp(Cmp::Lt, T::F64, a, Src::f64(18446744073709551616.0));
    let r = k.selp(T::B64, r, Src::I(0), inside);
    let nan = k.setp(Cmp::Nan, T::F64, v, v);
    k.selp(T::B64, Src::I(i64::MIN), r, nan)
}
