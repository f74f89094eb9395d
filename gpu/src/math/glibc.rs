//! exp, exp2, log, log2 and pow as glibc computes them: ARM's optimized-routines algorithms
//! (glibc's `sysdeps/ieee754/dbl-64/e_exp.c`, `e_exp2.c`, `e_log.c`, `e_log2.c`, `e_pow.c`; the
//! same code as musl's), with glibc's data (`arm_tables`). glibc's other routines that the device
//! reproduces are in `glibc_own.rs`.
//!
//! On x86-64, glibc picks at load time a build of exp, log, log2 and pow compiled with `-mfma`
//! (`__exp_fma`, ...) wherever the CPU has FMA and AVX2, which is every x86-64 CPU since 2013
//! and every CPU beside a CUDA GPU that CPython is likely to run on. That build takes the
//! algorithms' `__FP_FAST_FMA` branches, and GCC contracts their `a * b + c` into fused
//! multiply-adds. A fused and an unfused evaluation differ in the last bit about once in fifty
//! inputs, so these routines reproduce *that build's* instructions: every `fma` below stands where
//! glibc 2.36's `libm.so.6` has a `vfmadd`/`vfmsub` (read from its disassembly), and every other
//! operation is a correctly rounded `.rn` one in the same order. exp2 has no FMA build and is
//! transcribed without contraction. `tests/math_emu.rs` checks bit-identity with the CPU's C
//! library through the PTX emulator.

use super::dsl::*;
use crate::pir::{Reg, T};
use ndjit::math::arm_tables::*;

const EXP_TAB_NAME: &str = "ndjit_arm_exp_tab";
pub(super) const SIGN: u64 = 0x8000_0000_0000_0000;
pub(super) const ONE: u64 = 0x3ff0_0000_0000_0000;
pub(super) const INF: u64 = 0x7ff0_0000_0000_0000;

/// `table[i]` of a u64 table declared with [`table`], as a double.
fn at(name: &str, i: I) -> F {
    ld_table_f(name, i)
}

/// The 128-entry `2^(i/128)` table shared by exp, exp2 and pow.
fn exp_table() {
    table(EXP_TAB_NAME, T::B64, EXP_TAB.to_vec());
}

/// `scale * (1 + tmp)` where the exponent of `sbits` may have overflowed (glibc's `specialcase`
/// of exp and pow: k > 0 may overflow, k < 0 may go subnormal, where it rounds once).
/// `signed` is pow's variant, whose scale may be negative; exp2's generic build scales by 2 where
/// the FMA builds of exp and pow scale by 2^1009.
fn special_case(tmp: F, sbits: L, ki: L, signed: bool, exp2: bool) -> F {
    let out = F::var(0.0);
    if_else(
        (ki.lo() & 0x8000_0000u32).eq(0u32),
        || {
            if exp2 {
                let scale = F::from_bits(sbits - (1u64 << 52));
                // The generic build: no contraction.
                out.set(2.0 * (scale + scale * tmp));
            } else {
                let scale = F::from_bits(sbits - (1009u64 << 52));
                out.set(scale.fma(tmp, scale) * fb(0x7f00_0000_0000_0000));
            }
        },
        || {
            // The signed scale: its sign also signs a zero result (pow).
            let sbits = sbits + (1022u64 << 52);
            let scale = F::from_bits(sbits);
            // scale * tmp is used twice, so glibc computes it once, unfused.
            let st = scale * tmp;
            let y = F::var(scale + st);
            let small = if signed { y.abs().lt(1.0) } else { y.lt(1.0) };
            if_(small, || {
                let one = if signed {
                    F::select(y.lt(0.0), -1.0, 1.0)
                } else {
                    F::var(1.0)
                };
                let lo = scale - y + st;
                let hi = y + one;
                let lo = one - hi + y + lo;
                y.set(lo + hi - one);
                let zero = if signed {
                    F::from_bits(sbits & SIGN)
                } else {
                    F::var(0.0)
                };
                if_(y.eq(0.0), || y.set(zero));
            });
            out.set(y * fb(0x0010_0000_0000_0000));
        },
    );
    out
}

/// `sign * exp(x + xtail)`: glibc's exp (`xtail` = 0, `sign_bias` = 0) and the tail of pow.
/// Returns through `ret_f`.
fn exp_core(x: F, xtail: Option<F>, sign_bias: L) {
    let abstop = U::var((x.hi() >> 20) & 0x7ffu32);
    let neg_result = sign_bias.ne(0u64);
    if_((abstop - 0x3c9u32).ge(0x3fu32), || {
        if_((abstop - 0x3c9u32).ge(0x8000_0000u32), || {
            let one = 1.0 + x;
            ret_f(F::select(neg_result, -one, one));
        });
        if_(abstop.ge(0x409u32), || {
            if xtail.is_none() {
                if_(x.bits().eq(0xfff0_0000_0000_0000u64), || ret_f(0.0));
                if_(abstop.ge(0x7ffu32), || ret_f(1.0 + x));
            }
            // __math_uflow / __math_oflow: a signed zero or infinity.
            let under = (x.hi() >> 31).ne(0u32);
            let mag = F::select(under, 0.0, f64::INFINITY);
            ret_f(F::select(neg_result, -mag, mag));
        });
        abstop.set(0u32);
    });
    let (sbits, tmp, ki) = exp_reduce(x, xtail, sign_bias);
    if_(abstop.eq(0u32), || {
        ret_f(special_case(tmp, sbits, ki, xtail.is_some(), false))
    });
    let scale = F::from_bits(sbits);
    ret_f(scale.fma(tmp, scale));
}

/// exp's reduction and polynomial, for `|x| < 1024`: `(the bits of scale, tmp, k)` with
/// `sign * exp(x + xtail) = scale * (1 + tmp)` (`ndjit::math::accurate::exp_dd` on the CPU).
pub(super) fn exp_reduce(x: F, xtail: Option<F>, sign_bias: L) -> (L, F, L) {
    exp_table();
    let kd = x.fma(fb(EXP_INVLN2N), fb(EXP_SHIFT));
    let ki = kd.bits();
    let kd = kd - fb(EXP_SHIFT);
    let r = kd.fma(fb(EXP_NEGLN2HIN), x);
    let r = kd.fma(fb(EXP_NEGLN2LON), r);
    let r = match xtail {
        Some(t) => t + r,
        None => r,
    };
    let idx = (ki.lo() & 127u32).as_i() * 2;
    let tail = at(EXP_TAB_NAME, idx);
    let sbits = at(EXP_TAB_NAME, idx + 1).bits() + ((ki + sign_bias) << 45);
    let c = |i: usize| fb(EXP_POLY[i]);
    let r2 = r * r;
    let tmp = r.fma(c(1), c(0)).fma(r2, r + tail);
    let tmp = r.fma(c(3), c(2)).fma(r2 * r2, tmp);
    (sbits, tmp, ki)
}

pub fn exp(a: &[Reg]) {
    exp_core(F(a[0]), None, L::var(0u64));
}

/// exp2 has no FMA build in glibc: this is the generic one, nothing contracted.
pub fn exp2(a: &[Reg]) {
    exp_table();
    let x = F(a[0]);
    let abstop = U::var((x.hi() >> 20) & 0x7ffu32);
    if_((abstop - 0x3c9u32).ge(0x3fu32), || {
        if_((abstop - 0x3c9u32).ge(0x8000_0000u32), || ret_f(1.0 + x));
        if_(abstop.ge(0x409u32), || {
            if_(x.bits().eq(0xfff0_0000_0000_0000u64), || ret_f(0.0));
            if_(abstop.ge(0x7ffu32), || ret_f(1.0 + x));
            if_((x.hi() >> 31).eq(0u32), || ret_f(f64::INFINITY));
            // x <= -1075 (as unsigned bits of a negative number).
            if_(x.bits().ge((-1075.0f64).to_bits()), || ret_f(0.0));
        });
        if_((x.bits() << 1).gt((928.0f64).to_bits() << 1), || {
            abstop.set(0u32)
        });
    });
    let shift = fb(EXP2_SHIFT);
    let kd = x + shift;
    let ki = kd.bits();
    let kd = kd - shift;
    let r = x - kd;
    let idx = (ki.lo() & 127u32).as_i() * 2;
    let tail = at(EXP_TAB_NAME, idx);
    let sbits = at(EXP_TAB_NAME, idx + 1).bits() + (ki << 45);
    let c = |i: usize| fb(EXP2_POLY[i]);
    let r2 = r * r;
    let tmp = tail + r * c(0) + r2 * (c(1) + r * c(2)) + r2 * r2 * (c(3) + r * c(4));
    if_(abstop.eq(0u32), || {
        ret_f(special_case(tmp, sbits, ki, false, true))
    });
    let scale = F::from_bits(sbits);
    ret_f(scale + scale * tmp);
}

/// Subnormal, zero, negative, infinite and NaN inputs of log and log2; returns the bits of a
/// normal(ised) input to go on with.
fn log_special(x: F, ix: L) -> L {
    let top = ix.hi() >> 16;
    let out = L::var(ix);
    if_((top - 0x10u32).ge(0x7fe0u32), || {
        if_((ix << 1).eq(0u64), || ret_f(f64::NEG_INFINITY));
        if_(ix.eq(INF), || ret_f(x));
        if_(
            (top & 0x8000u32).ne(0u32) | (top & 0x7ff0u32).eq(0x7ff0u32),
            || ret_f((x - x) / (x - x)),
        );
        out.set((x * fb(0x4330_0000_0000_0000)).bits() - (52u64 << 52));
    });
    out
}

/// `x = 2^k z` with z in `[OFF, 2 OFF)`: `(k, the subinterval's index, z)`.
fn log_reduce(ix: L, off: u64, bits: u32) -> (F, I, F) {
    let tmp = ix - off;
    let i = ((tmp >> (52 - bits)).lo() & ((1u32 << bits) - 1)).as_i();
    // (int64) tmp >> 52, from the high word.
    let k = tmp.hi().as_i() >> 20u32;
    let z = F::from_bits(ix - (tmp & 0xfff0_0000_0000_0000u64));
    (k.to_f(), i, z)
}

pub fn log(a: &[Reg]) {
    const LO: u64 = 0x3fee_0000_0000_0000; // 1 - 2^-4
    const HI: u64 = 0x3ff1_0900_0000_0000; // 1 + 0x1.09p-4
    let tab = "ndjit_arm_log_tab";
    table(tab, T::B64, LOG_TAB.to_vec());
    let x = F(a[0]);
    let ix = x.bits();
    if_((ix - LO).lt(HI - LO), || {
        if_(ix.eq(ONE), || ret_f(0.0));
        let b = |i: usize| fb(LOG_POLY1[i]);
        let r = x - 1.0;
        let r2 = r * r;
        let r3 = r * r2;
        let c = r2.fma(b(9), r.fma(b(8), b(7)));
        let c = r3.fma(b(10), c);
        let d = c.fma(r3, r2.fma(b(6), r.fma(b(5), b(4))));
        let e = d.fma(r3, r2.fma(b(3), r.fma(b(2), b(1))));
        // w = r * 2^27; rhi = r + w - w, both contracted.
        let rhi = (-r).fma(
            fb(0x41a0_0000_0000_0000),
            r.fma(fb(0x41a0_0000_0000_0000), r),
        );
        let rlo = r - rhi;
        let rr = rhi * rhi;
        let hi = rr.fma(b(0), r);
        let lo = rr.fma(b(0), r - hi);
        let lo = (b(0) * rlo).fma(rhi + r, lo);
        ret_f(hi + e.fma(r3, lo));
    });
    let ix = log_special(x, ix);
    let (kd, i, z) = log_reduce(ix, 0x3fe6_0000_0000_0000, 7);
    let invc = at(tab, i * 2);
    let logc = at(tab, i * 2 + 1);
    let p = |i: usize| fb(LOG_POLY[i]);
    let r = z.fma(invc, -1.0);
    let w = kd.fma(fb(LOG_LN2HI), logc);
    let hi = w + r;
    let lo = kd.fma(fb(LOG_LN2LO), w - hi + r);
    let r2 = r * r;
    let q = r.fma(p(4), p(3)).fma(r2, r.fma(p(2), p(1)));
    ret_f((r * r2).fma(q, r2.fma(p(0), lo)) + hi);
}

pub fn log2(a: &[Reg]) {
    const LO: u64 = 0x3fee_a4af_0000_0000; // 1 - 0x1.5b51p-5
    const HI: u64 = 0x3ff0_b559_0000_0000; // 1 + 0x1.6ab2p-5
    let tab = "ndjit_arm_log2_tab";
    table(tab, T::B64, LOG2_TAB.to_vec());
    let x = F(a[0]);
    let ix = x.bits();
    let (ivhi, ivlo) = (fb(LOG2_INVLN2HI), fb(LOG2_INVLN2LO));
    if_((ix - LO).lt(HI - LO), || {
        if_(ix.eq(ONE), || ret_f(0.0));
        let b = |i: usize| fb(LOG2_POLY1[i]);
        let r = x - 1.0;
        let hi = r * ivhi;
        let r2 = r * r;
        let lo = r.fma(ivlo, r.fma(ivhi, -hi));
        let r4 = r2 * r2;
        let b01 = r.fma(b(1), b(0));
        let y = b01.fma(r2, hi);
        let lo = b01.fma(r2, hi - y) + lo;
        let q1 = r.fma(b(5), b(4)).fma(r2, r.fma(b(3), b(2)));
        let q2 = r.fma(b(9), b(8)).fma(r2, r.fma(b(7), b(6)));
        ret_f(y + q2.fma(r4, q1).fma(r4, lo));
    });
    let ix = log_special(x, ix);
    let (kd, i, z) = log_reduce(ix, 0x3fe6_0000_0000_0000, 6);
    let invc = at(tab, i * 2);
    let logc = at(tab, i * 2 + 1);
    let p = |i: usize| fb(LOG2_POLY[i]);
    let t3 = kd + logc;
    let r = z.fma(invc, -1.0);
    let t1 = r * ivhi;
    let t2 = r.fma(ivlo, r.fma(ivhi, -t1));
    let hi = t1 + t3;
    let lo = t3 - hi + t1 + t2;
    let r2 = r * r;
    let r4 = r2 * r2;
    let q = r.fma(p(3), p(2)).fma(r2, r.fma(p(1), p(0)));
    let q = r.fma(p(5), p(4)).fma(r4, q);
    ret_f(r2.fma(q, lo) + hi);
}

/// glibc's `checkint` of y's bits (non-zero finite): 0 not an integer, 1 odd, 2 even.
fn checkint(iy: L) -> I {
    let out = I::var(2);
    let e = (iy.hi() >> 20 & 0x7ffu32).as_i();
    if_else(
        e.lt(0x3ff),
        || out.set(0),
        || {
            if_(e.le(0x3ff + 52), || {
                let bit = (I::var(0x3ff + 52) - e).as_u();
                let one = L::var(1u64) << bit;
                if_else(
                    (iy & (one - 1u64)).ne(0u64),
                    || out.set(0),
                    || if_((iy & one).ne(0u64), || out.set(1)),
                );
            });
        },
    );
    out
}

/// 0, ±inf or NaN, from the bits.
fn zeroinfnan(i: L) -> P {
    ((i << 1) - 1u64).ge((INF << 1) - 1)
}

/// A signalling NaN, from the bits.
pub(super) fn signalling(i: L) -> P {
    ((i ^ (1u64 << 51)) << 1).gt(0xfff0_0000_0000_0000u64)
}

/// pow's special inputs (zero, infinite or NaN x or y; negative x; |y| tiny or huge; subnormal
/// x). Returns `(|x|'s bits, normalised; the sign bias of an odd power of a negative x)`.
fn pow_special(x: F, y: F) -> (L, L) {
    let (ix, iy) = (L::var(x.bits()), y.bits());
    let topx = U::var(ix.hi() >> 20);
    let topy = iy.hi() >> 20;
    let sign_bias = L::var(0u64);
    let huge_or_tiny_y = ((topy & 0x7ffu32) - 0x3beu32).ge(0x80u32);
    if_((topx - 1u32).ge(0x7feu32) | huge_or_tiny_y, || {
        if_(zeroinfnan(iy), || {
            if_((iy << 1).eq(0u64), || {
                ret_f(F::select(signalling(ix), x + y, F::var(1.0)))
            });
            if_(ix.eq(ONE), || {
                ret_f(F::select(signalling(iy), x + y, F::var(1.0)))
            });
            if_((ix << 1).gt(INF << 1) | (iy << 1).gt(INF << 1), || {
                ret_f(x + y)
            });
            if_((ix << 1).eq(ONE << 1), || ret_f(1.0));
            let below_one = (ix << 1).lt(ONE << 1);
            let y_pos = (iy >> 63).eq(0u64);
            if_(!(below_one ^ y_pos), || ret_f(0.0));
            ret_f(y * y);
        });
        if_(zeroinfnan(ix), || {
            let x2 = F::var(x * x);
            if_((ix >> 63).ne(0u64) & checkint(iy).eq(1), || x2.set(-x2));
            ret_f(F::select((iy >> 63).ne(0u64), 1.0 / x2, x2));
        });
        if_((ix >> 63).ne(0u64), || {
            let yint = checkint(iy);
            if_(yint.eq(0), || ret_f((x - x) / (x - x)));
            if_(yint.eq(1), || sign_bias.set(0x800u64 << 7));
            ix.set(ix & !SIGN);
            topx.set(topx & 0x7ffu32);
        });
        if_(huge_or_tiny_y, || {
            if_(ix.eq(ONE), || ret_f(1.0));
            let above_one = ix.gt(ONE);
            if_((topy & 0x7ffu32).lt(0x3beu32), || {
                ret_f(F::select(above_one, 1.0 + y, 1.0 - y))
            });
            let y_pos = topy.lt(0x800u32);
            ret_f(F::select(!(above_one ^ y_pos), f64::INFINITY, 0.0));
        });
        if_(topx.eq(0u32), || {
            ix.set(((x * fb(0x4330_0000_0000_0000)).bits() & !SIGN) - (52u64 << 52));
        });
    });
    (ix, sign_bias)
}

/// log(x) as `hi + lo`, about 15 bits past a double (glibc's `log_inline` of pow;
/// `ndjit::math::accurate::log_dd` on the CPU). `ix`: the bits of a positive x, normalised.
pub(super) fn pow_log(ix: L) -> (F, F) {
    let tab = "ndjit_arm_pow_log_tab";
    table(tab, T::B64, POW_TAB.to_vec());
    let (kd, i, z) = log_reduce(ix, 0x3fe6_9555_0000_0000, 7);
    let invc = at(tab, i * 4);
    let logc = at(tab, i * 4 + 2);
    let logctail = at(tab, i * 4 + 3);
    let a = |i: usize| fb(POW_POLY[i]);
    let r = z.fma(invc, -1.0);
    let t1 = kd.fma(fb(POW_LN2HI), logc);
    let lo1 = kd.fma(fb(POW_LN2LO), logctail);
    let ar = r * a(0);
    let t2 = r + t1;
    let ar2 = r * ar;
    let lo2 = t1 - t2 + r;
    let ar3 = r * ar2;
    let lo3 = ar.fma(r, -ar2);
    let hi = t2 + ar2;
    let lo4 = t2 - hi + ar2;
    let q = r.fma(a(6), a(5)).fma(ar2, r.fma(a(4), a(3)));
    let q = ar2.fma(q, r.fma(a(2), a(1)));
    let lo = ar3.fma(q, lo1 + lo2 + lo3 + lo4);
    let y = hi + lo;
    (y, hi - y + lo)
}

pub fn pow(a: &[Reg]) {
    let (x, y) = (F(a[0]), F(a[1]));
    let (ix, sign_bias) = pow_special(x, y);
    let (hi, lo) = pow_log(ix);
    let ehi = y * hi;
    let elo = y.fma(lo, hi.fma(y, -ehi));
    exp_core(ehi, Some(elo), sign_bias);
}
