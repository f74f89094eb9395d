//! exp, exp2, expm1, scalbn and the overflow-safe exp of sinh/cosh: FreeBSD msun's algorithms
//! (`e_exp.c`, `s_exp2.c`, `s_expm1.c`, `k_exp.c`), as the CPU's `libm` crate computes them.

use super::dsl::*;
use super::tables::EXP2_TBL;
use crate::pir::{Cls, T};

const LN2HI: f64 = 6.93147180369123816490e-01;
const LN2LO: f64 = 1.90821492927058770002e-10;
const INVLN2: f64 = 1.44269504088896338700e+00;
const P1: f64 = 1.66666666666666019037e-01;
const P2: f64 = -2.77777777770155933842e-03;
const P3: f64 = 6.61375632143793436117e-05;
const P4: f64 = -1.65339022054652515390e-06;
const P5: f64 = 4.13813679705723846039e-08;

/// `scalbn(x, n)`: x * 2^n with at most one rounding, pre-scaling so that no intermediate
/// overflows or goes subnormal.
pub fn scalbn(a: &[crate::pir::Reg]) {
    let y = F::var(F(a[0]));
    let n = I::var(I(a[1]));
    if_else(
        n.gt(1023),
        || {
            y.set(y * fb(0x7fe0000000000000));
            n.set(n - 1023);
            if_(n.gt(1023), || {
                y.set(y * fb(0x7fe0000000000000));
                n.set(n - 1023);
                if_(n.gt(1023), || n.set(1023));
            });
        },
        || {
            if_(n.lt(-1022), || {
                // 2^-1022 * 2^53: the pre-scale that keeps x normal.
                let mul = fb(0x0010000000000000) * fb(0x4340000000000000);
                y.set(y * mul);
                n.set(n + 969);
                if_(n.lt(-1022), || {
                    y.set(y * mul);
                    n.set(n + 969);
                    if_(n.lt(-1022), || n.set(-1022));
                });
            });
        },
    );
    let scale = F::from_bits((n + 0x3ff).to_l() << 52);
    ret_f(y * scale);
}

pub fn call_scalbn(x: F, n: I) -> F {
    F(call("ndjit_scalbn", &[x.0, n.0], &[Cls::F64])[0])
}

pub fn exp(a: &[crate::pir::Reg]) {
    let x = F::var(F(a[0]));
    let hx0 = x.hi();
    let sign = (hx0 >> 31).as_i();
    let hx = hx0 & 0x7fffffffu32;
    if_(hx.ge(0x4086232bu32), || {
        if_(x.is_nan(), || ret_f(x));
        if_(x.gt(709.782712893383973096), || {
            ret_f(x * fb(0x7fe0000000000000))
        });
        if_(x.lt(-708.39641853226410622), || {
            if_(x.lt(-745.13321910194110842), || ret_f(0.0));
        });
    });
    let hi = F::var(0.0);
    let lo = F::var(0.0);
    let k = I::var(0);
    if_else(
        hx.gt(0x3fd62e42u32),
        || {
            if_else(
                hx.ge(0x3ff0a2b2u32),
                || {
                    let half = F::select(sign.eq(0), 0.5, -0.5);
                    k.set((INVLN2 * x + half).to_i());
                },
                || k.set(I::var(1) - sign - sign),
            );
            let kf = k.to_f();
            hi.set(x - kf * LN2HI);
            lo.set(kf * LN2LO);
            x.set(hi - lo);
        },
        || {
            if_else(
                hx.gt(0x3e300000u32),
                || {
                    k.set(0);
                    hi.set(x);
                    lo.set(0.0);
                },
                || ret_f(1.0 + x),
            );
        },
    );
    let xx = x * x;
    let c = x - xx * (P1 + xx * (P2 + xx * (P3 + xx * (P4 + xx * P5))));
    let y = 1.0 + (x * c / (2.0 - c) - lo + hi);
    if_(k.eq(0), || ret_f(y));
    ret_f(call_scalbn(y, k));
}

pub fn exp2(a: &[crate::pir::Reg]) {
    table("ndjit_exp2_tbl", T::B64, EXP2_TBL.to_vec());
    let x = F(a[0]);
    let redux = fb(0x4338000000000000) / 256.0;
    let p1 = fb(0x3fe62e42fefa39ef);
    let p2 = fb(0x3fcebfbdff82c575);
    let p3 = fb(0x3fac6b08d704a0a6);
    let p4 = fb(0x3f83b2ab88f70400);
    let p5 = fb(0x3f55d88003875c74);
    let hx = x.hi();
    let neg = (hx >> 31).ne(0u32);
    let ix = hx & 0x7fffffffu32;
    if_else(
        ix.ge(0x408ff000u32),
        || {
            if_(ix.ge(0x40900000u32) & !neg, || {
                ret_f(x * fb(0x7fe0000000000000))
            });
            if_(ix.ge(0x7ff00000u32), || ret_f(-1.0 / x));
            if_(neg, || {
                if_(x.le(-1075.0), || ret_f(0.0));
            });
        },
        || {
            if_(ix.lt(0x3c900000u32), || ret_f(1.0 + x));
        },
    );
    let t0 = x + redux;
    let i0 = t0.lo() + 128u32;
    let ku = i0 / 256u32 * 256u32;
    let ki = ku.as_i() / 256;
    let i0 = i0 % 256u32;
    let uf = t0 - redux;
    let z = F::var(x - uf);
    let idx = i0.as_i() * 2;
    let t = ld_table_f("ndjit_exp2_tbl", idx);
    z.set(z - ld_table_f("ndjit_exp2_tbl", idx + 1));
    let r = t + t * z * (p1 + z * (p2 + z * (p3 + z * (p4 + z * p5))));
    ret_f(call_scalbn(r, ki));
}

const O_THRESHOLD: f64 = 7.09782712893383973096e+02;
const Q1: f64 = -3.33333333333331316428e-02;
const Q2: f64 = 1.58730158725481460165e-03;
const Q3: f64 = -7.93650757867487942473e-05;
const Q4: f64 = 4.00821782732936239552e-06;
const Q5: f64 = -2.01099218183624371326e-07;

pub fn expm1(a: &[crate::pir::Reg]) {
    let x = F::var(F(a[0]));
    let h = x.hi();
    let hx = h & 0x7fffffffu32;
    let neg = (h >> 31).ne(0u32);
    if_(hx.ge(0x4043687Au32), || {
        if_(x.is_nan(), || ret_f(x));
        if_(neg, || ret_f(-1.0));
        if_(x.gt(O_THRESHOLD), || ret_f(x * fb(0x7fe0000000000000)));
    });
    let hi = F::var(0.0);
    let lo = F::var(0.0);
    let c = F::var(0.0);
    let k = I::var(0);
    if_else(
        hx.gt(0x3fd62e42u32),
        || {
            if_else(
                hx.lt(0x3FF0A2B2u32),
                || {
                    if_else(
                        !neg,
                        || {
                            hi.set(x - LN2HI);
                            lo.set(LN2LO);
                            k.set(1);
                        },
                        || {
                            hi.set(x + LN2HI);
                            lo.set(-LN2LO);
                            k.set(-1);
                        },
                    );
                },
                || {
                    let half = F::select(neg, -0.5, 0.5);
                    k.set((INVLN2 * x + half).to_i());
                    let t = k.to_f();
                    hi.set(x - t * LN2HI);
                    lo.set(t * LN2LO);
                },
            );
            x.set(hi - lo);
            c.set((hi - x) - lo);
        },
        || {
            if_(hx.lt(0x3c900000u32), || ret_f(x));
            c.set(0.0);
            k.set(0);
        },
    );
    let hfx = 0.5 * x;
    let hxs = x * hfx;
    let r1 = 1.0 + hxs * (Q1 + hxs * (Q2 + hxs * (Q3 + hxs * (Q4 + hxs * Q5))));
    let t = 3.0 - r1 * hfx;
    let e = F::var(hxs * ((r1 - t) / (6.0 - x * t)));
    if_(k.eq(0), || ret_f(x - (x * e - hxs)));
    e.set(x * (e - c) - c);
    e.set(e - hxs);
    if_(k.eq(-1), || ret_f(0.5 * (x - e) - 0.5));
    if_(k.eq(1), || {
        if_(x.lt(-0.25), || ret_f(-2.0 * (e - (x + 0.5))));
        ret_f(1.0 + 2.0 * (x - e));
    });
    let twopk = F::from_bits((k + 0x3ff).to_l() << 52);
    if_(k.lt(0) | k.gt(56), || {
        let y = F::var(x - e + 1.0);
        if_else(
            k.eq(1024),
            || y.set(y * 2.0 * fb(0x7fe0000000000000)),
            || y.set(y * twopk),
        );
        ret_f(y - 1.0);
    });
    let uf = F::from_bits((I::var(0x3ff) - k).to_l() << 52);
    if_(k.lt(20), || ret_f((x - e + (1.0 - uf)) * twopk));
    ret_f((x - (e + uf) + 1.0) * twopk);
}

/// `exp(x - k ln2) * 2^(k-1)` with k = 2043, for sinh/cosh near overflow (`k_expo2`).
pub fn expo2(x: F) -> F {
    let kln2 = fb(0x40962066151add8b);
    let scale = F::from_words((0x3ffu32 + 2043 / 2) << 20, 0u32);
    call_f("ndjit_exp", &[x - kln2]) * scale * scale
}
