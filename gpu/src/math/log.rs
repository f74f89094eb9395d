//! log, log2, log10, log1p: FreeBSD msun's `e_log.c`, `e_log2.c`, `e_log10.c`, `s_log1p.c`.

use super::dsl::*;
use crate::pir::Reg;

const LN2_HI: f64 = 6.93147180369123816490e-01;
const LN2_LO: f64 = 1.90821492927058770002e-10;
const LG1: f64 = 6.666666666666735130e-01;
const LG2: f64 = 3.999999999940941908e-01;
const LG3: f64 = 2.857142874366239149e-01;
const LG4: f64 = 2.222219843214978396e-01;
const LG5: f64 = 1.818357216161805012e-01;
const LG6: f64 = 1.531383769920937332e-01;
const LG7: f64 = 1.479819860511658591e-01;

/// The common reduction of log/log2/log10: special cases, then `x = 2^k * (1+f)` with
/// `1+f` in [sqrt(2)/2, sqrt(2)]. Returns `(f, k)`.
fn reduce(x0: F) -> (F, I) {
    let x = F::var(x0);
    let hx = U::var(x.hi());
    let k = I::var(0);
    if_else(
        hx.lt(0x00100000u32) | (hx >> 31).ne(0u32),
        || {
            if_((x.bits() << 1).eq(0u64), || ret_f(-1.0 / (x * x)));
            if_((hx >> 31).ne(0u32), || ret_f((x - x) / 0.0));
            k.set(k - 54);
            x.set(x * fb(0x4350000000000000));
            hx.set(x.hi());
        },
        || {
            if_(hx.ge(0x7ff00000u32), || ret_f(x));
            if_(hx.eq(0x3ff00000u32) & x.lo().eq(0u32), || ret_f(0.0));
        },
    );
    hx.set(hx + (0x3ff00000u32 - 0x3fe6a09e));
    k.set(k + ((hx >> 20).as_i() - 0x3ff));
    hx.set((hx & 0x000fffffu32) + 0x3fe6a09eu32);
    let xr = x.with_hi(hx);
    (xr - 1.0, k)
}

pub fn log(a: &[Reg]) {
    let (f, k) = reduce(F(a[0]));
    let hfsq = 0.5 * f * f;
    let s = f / (2.0 + f);
    let z = s * s;
    let w = z * z;
    let t1 = w * (LG2 + w * (LG4 + w * LG6));
    let t2 = z * (LG1 + w * (LG3 + w * (LG5 + w * LG7)));
    let r = t2 + t1;
    let dk = k.to_f();
    ret_f(s * (hfsq + r) + dk * LN2_LO - hfsq + f + dk * LN2_HI);
}

/// `(hi, lo, hfsq, s, r)` of log2/log10: hi+lo = f - hfsq + s*(hfsq+R) ~ log(1+f).
fn hi_lo(f: F) -> (F, F) {
    let hfsq = 0.5 * f * f;
    let s = f / (2.0 + f);
    let z = s * s;
    let w = z * z;
    let t1 = w * (LG2 + w * (LG4 + w * LG6));
    let t2 = z * (LG1 + w * (LG3 + w * (LG5 + w * LG7)));
    let r = t2 + t1;
    let hi = F::from_bits((f - hfsq).bits() & 0xffff_ffff_0000_0000u64);
    let lo = f - hi - hfsq + s * (hfsq + r);
    (hi, lo)
}

pub fn log2(a: &[Reg]) {
    const IVLN2HI: f64 = 1.44269504072144627571e+00;
    const IVLN2LO: f64 = 1.67517131648865118353e-10;
    let (f, k) = reduce(F(a[0]));
    let (hi, lo) = hi_lo(f);
    let val_hi = hi * IVLN2HI;
    let val_lo = (lo + hi) * IVLN2LO + lo * IVLN2HI;
    let y = k.to_f();
    let w = y + val_hi;
    let val_lo = val_lo + ((y - w) + val_hi);
    ret_f(val_lo + w);
}

pub fn log10(a: &[Reg]) {
    const IVLN10HI: f64 = 4.34294481878168880939e-01;
    const IVLN10LO: f64 = 2.50829467116452752298e-11;
    const LOG10_2HI: f64 = 3.01029995663611771306e-01;
    const LOG10_2LO: f64 = 3.69423907715893078616e-13;
    let (f, k) = reduce(F(a[0]));
    let (hi, lo) = hi_lo(f);
    let val_hi = hi * IVLN10HI;
    let dk = k.to_f();
    let y = dk * LOG10_2HI;
    let val_lo = dk * LOG10_2LO + (lo + hi) * IVLN10LO + lo * IVLN10HI;
    let w = y + val_hi;
    let val_lo = val_lo + ((y - w) + val_hi);
    ret_f(val_lo + w);
}

pub fn log1p(a: &[Reg]) {
    let x = F(a[0]);
    let hx = x.hi();
    let f = F::var(0.0);
    let c = F::var(0.0);
    let k = I::var(1);
    if_else(
        hx.lt(0x3fda827au32) | (hx >> 31).ne(0u32),
        || {
            if_(hx.ge(0xbff00000u32), || {
                if_(x.eq(-1.0), || ret_f(x / 0.0));
                ret_f((x - x) / 0.0);
            });
            if_((hx << 1).lt(0x3ca00000u32 << 1), || ret_f(x));
            if_(hx.le(0xbfd2bec4u32), || {
                k.set(0);
                c.set(0.0);
                f.set(x);
            });
        },
        || {
            if_(hx.ge(0x7ff00000u32), || ret_f(x));
        },
    );
    if_(k.gt(0), || {
        let u = 1.0 + x;
        let hu = u.hi() + (0x3ff00000u32 - 0x3fe6a09e);
        k.set((hu >> 20).as_i() - 0x3ff);
        if_else(
            k.lt(54),
            || {
                if_else(k.ge(2), || c.set(1.0 - (u - x)), || c.set(x - (u - 1.0)));
                c.set(c / u);
            },
            || c.set(0.0),
        );
        let hu = (hu & 0x000fffffu32) + 0x3fe6a09eu32;
        f.set(u.with_hi(hu) - 1.0);
    });
    let hfsq = 0.5 * f * f;
    let s = f / (2.0 + f);
    let z = s * s;
    let w = z * z;
    let t1 = w * (LG2 + w * (LG4 + w * LG6));
    let t2 = z * (LG1 + w * (LG3 + w * (LG5 + w * LG7)));
    let r = t2 + t1;
    let dk = k.to_f();
    ret_f(s * (hfsq + r) + (dk * LN2_LO + c) - hfsq + f + dk * LN2_HI);
}
