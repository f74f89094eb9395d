//! asin, acos, atan, atan2: fdlibm's `e_asin.c`, `e_acos.c`, `s_atan.c`, `e_atan2.c`.

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

const ATANHI: [f64; 4] = [
    4.63647609000806093515e-01,
    7.85398163397448278999e-01,
    9.82793723247329054082e-01,
    1.57079632679489655800e+00,
];
const ATANLO: [f64; 4] = [
    2.26987774529616870924e-17,
    3.06161699786838301793e-17,
    1.39033110312309984516e-17,
    6.12323399573676603587e-17,
];
const AT: [f64; 11] = [
    3.33333333333329318027e-01,
    -1.99999999998764832476e-01,
    1.42857142725034663711e-01,
    -1.11111104054623557880e-01,
    9.09088713343650656196e-02,
    -7.69187620504482999495e-02,
    6.66107313738753120669e-02,
    -5.83357013379057348645e-02,
    4.97687799461593236017e-02,
    -3.65315727442169155270e-02,
    1.62858201153657823623e-02,
];

pub fn atan(a: &[Reg]) {
    let x0 = F(a[0]);
    let x = F::var(x0);
    let hx = x0.hi();
    let neg = (hx >> 31).ne(0u32);
    let ix = hx & 0x7fffffffu32;
    if_(ix.ge(0x44100000u32), || {
        if_(x.is_nan(), || ret_f(x));
        let z = ATANHI[3] + fb(0x0380_0000);
        if_(neg, || ret_f(-z));
        ret_f(z);
    });
    let id = I::var(-1);
    if_else(
        ix.lt(0x3fdc0000u32),
        || {
            if_(ix.lt(0x3e400000u32), || ret_f(x));
        },
        || {
            x.set(x.abs());
            if_else(
                ix.lt(0x3ff30000u32),
                || {
                    if_else(
                        ix.lt(0x3fe60000u32),
                        || {
                            x.set((2.0 * x - 1.0) / (2.0 + x));
                            id.set(0);
                        },
                        || {
                            x.set((x - 1.0) / (x + 1.0));
                            id.set(1);
                        },
                    );
                },
                || {
                    if_else(
                        ix.lt(0x40038000u32),
                        || {
                            x.set((x - 1.5) / (1.0 + 1.5 * x));
                            id.set(2);
                        },
                        || {
                            x.set(-1.0 / x);
                            id.set(3);
                        },
                    );
                },
            );
        },
    );
    let z = x * x;
    let w = z * z;
    let s1 = z * (AT[0] + w * (AT[2] + w * (AT[4] + w * (AT[6] + w * (AT[8] + w * AT[10])))));
    let s2 = w * (AT[1] + w * (AT[3] + w * (AT[5] + w * (AT[7] + w * AT[9]))));
    if_(id.lt(0), || ret_f(x - x * (s1 + s2)));
    // The four-entry tables by selection.
    let pick = |t: &[f64; 4]| {
        let v = F::select(id.eq(2), t[2], t[3]);
        let v = F::select(id.eq(1), t[1], v);
        F::select(id.eq(0), t[0], v)
    };
    let (hi, lo) = (pick(&ATANHI), pick(&ATANLO));
    let z = hi - (x * (s1 + s2) - lo - x);
    if_(neg, || ret_f(-z));
    ret_f(z);
}

const PI: f64 = 3.1415926535897931160E+00;
const PI_LO: f64 = 1.2246467991473531772E-16;

pub fn atan2(a: &[Reg]) {
    let (y, x) = (F(a[0]), F(a[1]));
    if_(x.is_nan() | y.is_nan(), || ret_f(x + y));
    let ix0 = x.hi();
    let lx = x.lo();
    let iy0 = y.hi();
    let ly = y.lo();
    if_(((ix0 - 0x3ff00000u32) | lx).eq(0u32), || {
        ret_f(call_f("ndjit_atan", &[y]))
    });
    let m = ((iy0 >> 31) & 1u32) | ((ix0 >> 30) & 2u32);
    let ix = ix0 & 0x7fffffffu32;
    let iy = iy0 & 0x7fffffffu32;
    if_((iy | ly).eq(0u32), || {
        if_(m.le(1u32), || ret_f(y));
        if_(m.eq(2u32), || ret_f(PI));
        ret_f(-PI);
    });
    let odd = (m & 1u32).ne(0u32);
    if_((ix | lx).eq(0u32), || {
        if_(odd, || ret_f(-PI / 2.0));
        ret_f(PI / 2.0);
    });
    if_(ix.eq(0x7ff00000u32), || {
        if_else(
            iy.eq(0x7ff00000u32),
            || {
                if_(m.eq(0u32), || ret_f(PI / 4.0));
                if_(m.eq(1u32), || ret_f(-PI / 4.0));
                if_(m.eq(2u32), || ret_f(3.0 * PI / 4.0));
                ret_f(-3.0 * PI / 4.0);
            },
            || {
                if_(m.eq(0u32), || ret_f(0.0));
                if_(m.eq(1u32), || ret_f(-0.0));
                if_(m.eq(2u32), || ret_f(PI));
                ret_f(-PI);
            },
        );
    });
    if_((ix + (64u32 << 20)).lt(iy) | iy.eq(0x7ff00000u32), || {
        if_(odd, || ret_f(-PI / 2.0));
        ret_f(PI / 2.0);
    });
    let z = F::var(0.0);
    if_else(
        (m & 2u32).ne(0u32) & (iy + (64u32 << 20)).lt(ix),
        || z.set(0.0),
        || z.set(call_f("ndjit_atan", &[(y / x).abs()])),
    );
    if_(m.eq(0u32), || ret_f(z));
    if_(m.eq(1u32), || ret_f(-z));
    if_(m.eq(2u32), || ret_f(PI - (z - PI_LO)));
    ret_f((z - PI_LO) - PI);
}
