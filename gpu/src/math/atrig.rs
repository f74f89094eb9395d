//! asin and acos: fdlibm's `e_asin.c` and `e_acos.c`. atan and atan2 are glibc's own
//! (`glibc_atan.rs`).

use super::dsl::*;
use crate::pir::Reg;

const PIO2_HI: f64 = 1.57079632679489655800e+00;
const PIO2_LO: f64 = 6.12323399573676603587e-17;
const PS0: f64 = 1.66666666666666657415e-01;
const PS1: f64 = -3.25565818622400915405e-01;
const PS2: f64 = 2.01212532134862925881e-01;
const PS3: f64 = -4.00555345006794114027e-02;
const PS4: f64 = 7.91534994289814532176e-04;
const PS5: f64 = 3.47933107596021167570e-05;
const QS1: f64 = -2.40339491173441421878e+00;
const QS2: f64 = 2.02094576023350569471e+00;
const QS3: f64 = -6.88283971605453293030e-01;
const QS4: f64 = 7.70381505559019352791e-02;

/// The rational approximation R(z) of asin/acos.
fn rr(z: F) -> F {
    let p = z * (PS0 + z * (PS1 + z * (PS2 + z * (PS3 + z * (PS4 + z * PS5)))));
    let q = 1.0 + z * (QS1 + z * (QS2 + z * (QS3 + z * QS4)));
    p / q
}

pub fn asin(a: &[Reg]) {
    let x = F(a[0]);
    let hx = x.hi();
    let ix = hx & 0x7fffffffu32;
    if_(ix.ge(0x3ff00000u32), || {
        let lx = x.lo();
        if_(((ix - 0x3ff00000u32) | lx).eq(0u32), || {
            ret_f(x * PIO2_HI + fb(0x3870000000000000))
        });
        ret_f(0.0 / (x - x));
    });
    if_(ix.lt(0x3fe00000u32), || {
        if_(ix.ge(0x00100000u32) & ix.lt(0x3e500000u32), || ret_f(x));
        ret_f(x + x * rr(x * x));
    });
    let z = (1.0 - x.abs()) * 0.5;
    let s = z.sqrt();
    let r = rr(z);
    let res = F::var(0.0);
    if_else(
        ix.ge(0x3fef3333u32),
        || res.set(PIO2_HI - (2.0 * (s + s * r) - PIO2_LO)),
        || {
            let f = s.with_lo(0u32);
            let c = (z - f * f) / (s + f);
            res.set(
                0.5 * PIO2_HI - (2.0 * s * r - (PIO2_LO - 2.0 * c) - (0.5 * PIO2_HI - 2.0 * f)),
            );
        },
    );
    if_((hx >> 31).ne(0u32), || ret_f(-res));
    ret_f(res);
}

pub fn acos(a: &[Reg]) {
    let x = F(a[0]);
    let x1p_120f = fb(0x3870000000000000);
    let hx = x.hi();
    let ix = hx & 0x7fffffffu32;
    let neg = (hx >> 31).ne(0u32);
    if_(ix.ge(0x3ff00000u32), || {
        let lx = x.lo();
        if_(((ix - 0x3ff00000u32) | lx).eq(0u32), || {
            if_(neg, || ret_f(2.0 * PIO2_HI + x1p_120f));
            ret_f(0.0);
        });
        ret_f(0.0 / (x - x));
    });
    if_(ix.lt(0x3fe00000u32), || {
        if_(ix.le(0x3c600000u32), || ret_f(PIO2_HI + x1p_120f));
        ret_f(PIO2_HI - (x - (PIO2_LO - x * rr(x * x))));
    });
    if_(neg, || {
        let z = (1.0 + x) * 0.5;
        let s = z.sqrt();
        let w = rr(z) * s - PIO2_LO;
        ret_f(2.0 * (PIO2_HI - (s + w)));
    });
    let z = (1.0 - x) * 0.5;
    let s = z.sqrt();
    let df = F::from_bits(s.bits() & 0xff_ff_ff_ff_00_00_00_00u64);
    let c = (z - df * df) / (s + df);
    let w = rr(z) * s + c;
    ret_f(2.0 * (df + w));
}
