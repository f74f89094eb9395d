//! pow: fdlibm's `e_pow.c` (log2 in extra precision, then 2^(y*log2 x)).

use super::dsl::*;
use super::exp::call_scalbn;
use crate::pir::Reg;

const DP_H1: f64 = 5.84962487220764160156e-01;
const DP_L1: f64 = 1.35003920212974897128e-08;
const TWO53: f64 = 9007199254740992.0;
const HUGE: f64 = 1.0e300;
const TINY: f64 = 1.0e-300;
const L1: f64 = 5.99999999999994648725e-01;
const L2: f64 = 4.28571428578550184252e-01;
const L3: f64 = 3.33333329818377432918e-01;
const L4: f64 = 2.72728123808534006489e-01;
const L5: f64 = 2.30660745775561754067e-01;
const L6: f64 = 2.06975017800338417784e-01;
const P1: f64 = 1.66666666666666019037e-01;
const P2: f64 = -2.77777777770155933842e-03;
const P3: f64 = 6.61375632143793436117e-05;
const P4: f64 = -1.65339022054652515390e-06;
const P5: f64 = 4.13813679705723846039e-08;
const LG2: f64 = 6.93147180559945286227e-01;
const LG2_H: f64 = 6.93147182464599609375e-01;
const LG2_L: f64 = -1.90465429995776804525e-09;
const OVT: f64 = 8.0085662595372944372e-017;
const CP: f64 = 9.61796693925975554329e-01;
const CP_H: f64 = 9.61796700954437255859e-01;
const CP_L: f64 = -7.02846165095275826516e-09;
const IVLN2: f64 = 1.44269504088896338700e+00;
const IVLN2_H: f64 = 1.44269502162933349609e+00;
const IVLN2_L: f64 = 1.92596299112661746887e-08;

pub fn pow(a: &[Reg]) {
    let (x, y) = (F(a[0]), F(a[1]));
    let hx = x.hi().as_i();
    let lx = x.lo();
    let hy = y.hi().as_i();
    let ly = y.lo();
    let ix = I::var(hx & 0x7fffffff);
    let iy = hy & 0x7fffffff;
    if_((iy.as_u() | ly).eq(0u32), || ret_f(1.0));
    if_(hx.eq(0x3ff00000) & lx.eq(0u32), || ret_f(1.0));
    let ynan = iy.gt(0x7ff00000) | (iy.eq(0x7ff00000) & ly.ne(0u32));
    if_(
        ix.gt(0x7ff00000) | (ix.eq(0x7ff00000) & lx.ne(0u32)) | ynan,
        || ret_f(x + y),
    );
    // yisint: 0 not an integer, 1 odd, 2 even.
    let yisint = I::var(0);
    if_(hx.lt(0), || {
        if_else(
            iy.ge(0x43400000),
            || yisint.set(2),
            || {
                if_(iy.ge(0x3ff00000), || {
                    let k = (iy >> 20u32) - 0x3ff;
                    if_else(
                        k.gt(20),
                        || {
                            let sh = I::var(52) - k;
                            let j = (ly >> sh).as_i();
                            if_((j << sh).eq(ly.as_i()), || yisint.set(I::var(2) - (j & 1)));
                        },
                        || {
                            if_(ly.eq(0u32), || {
                                let sh = I::var(20) - k;
                                let j = iy >> sh;
                                if_((j << sh).eq(iy), || yisint.set(I::var(2) - (j & 1)));
                            });
                        },
                    );
                });
            },
        );
    });
    if_(ly.eq(0u32), || {
        if_(iy.eq(0x7ff00000), || {
            if_(((ix - 0x3ff00000) | lx.as_i()).eq(0), || ret_f(1.0));
            if_else(
                ix.ge(0x3ff00000),
                || {
                    if_(hy.ge(0), || ret_f(y));
                    ret_f(0.0);
                },
                || {
                    if_(hy.ge(0), || ret_f(0.0));
                    ret_f(-y);
                },
            );
        });
        if_(iy.eq(0x3ff00000), || {
            if_(hy.ge(0), || ret_f(x));
            ret_f(1.0 / x);
        });
        if_(hy.eq(0x40000000), || ret_f(x * x));
        if_(hy.eq(0x3fe00000) & hx.ge(0), || ret_f(x.sqrt()));
    });
    let ax = F::var(x.abs());
    if_(lx.eq(0u32), || {
        if_(ix.eq(0x7ff00000) | ix.eq(0) | ix.eq(0x3ff00000), || {
            let z = F::var(ax);
            if_(hy.lt(0), || z.set(1.0 / z));
            if_(hx.lt(0), || {
                if_else(
                    ((ix - 0x3ff00000) | yisint).eq(0),
                    || z.set((z - z) / (z - z)),
                    || if_(yisint.eq(1), || z.set(-z)),
                );
            });
            ret_f(z);
        });
    });
    let s = F::var(1.0);
    if_(hx.lt(0), || {
        if_(yisint.eq(0), || ret_f((x - x) / (x - x)));
        if_(yisint.eq(1), || s.set(-1.0));
    });
    let t1 = F::var(0.0);
    let t2 = F::var(0.0);
    if_else(
        iy.gt(0x41e00000),
        || {
            if_(iy.gt(0x43f00000), || {
                if_(ix.le(0x3fefffff), || {
                    if_(hy.lt(0), || ret_f(HUGE * HUGE));
                    ret_f(TINY * TINY);
                });
                if_(ix.ge(0x3ff00000), || {
                    if_(hy.gt(0), || ret_f(HUGE * HUGE));
                    ret_f(TINY * TINY);
                });
            });
            if_(ix.lt(0x3fefffff), || {
                if_(hy.lt(0), || ret_f(s * HUGE * HUGE));
                ret_f(s * TINY * TINY);
            });
            if_(ix.gt(0x3ff00000), || {
                if_(hy.gt(0), || ret_f(s * HUGE * HUGE));
                ret_f(s * TINY * TINY);
            });
            let t = ax - 1.0;
            let w = (t * t) * (0.5 - t * (0.3333333333333333333333 - t * 0.25));
            let u = IVLN2_H * t;
            let v = t * IVLN2_L - w * IVLN2;
            t1.set((u + v).with_lo(0u32));
            t2.set(v - (t1 - u));
        },
        || {
            let n = I::var(0);
            if_(ix.lt(0x00100000), || {
                ax.set(ax * TWO53);
                n.set(n - 53);
                ix.set(ax.hi().as_i());
            });
            n.set(n + ((ix >> 20u32) - 0x3ff));
            let j = ix & 0x000fffff;
            ix.set(j | 0x3ff00000);
            let k = I::var(0);
            if_else(
                j.le(0x3988E),
                || k.set(0),
                || {
                    if_else(
                        j.lt(0xBB67A),
                        || k.set(1),
                        || {
                            k.set(0);
                            n.set(n + 1);
                            ix.set(ix - 0x00100000);
                        },
                    );
                },
            );
            ax.set(ax.with_hi(ix.as_u()));
            let k1 = k.eq(1);
            let bp = F::select(k1, 1.5, 1.0);
            let dp_h = F::select(k1, DP_H1, 0.0);
            let dp_l = F::select(k1, DP_L1, 0.0);
            let u = ax - bp;
            let v = 1.0 / (ax + bp);
            let ss = u * v;
            let s_h = ss.with_lo(0u32);
            let t_h = F::from_words(
                (((ix.as_u() >> 1) | 0x20000000u32) + 0x00080000u32) + (k.as_u() << 18),
                0u32,
            );
            let t_l = ax - (t_h - bp);
            let s_l = v * ((u - s_h * t_h) - s_h * t_l);
            let s2 = ss * ss;
            let r =
                F::var(s2 * s2 * (L1 + s2 * (L2 + s2 * (L3 + s2 * (L4 + s2 * (L5 + s2 * L6))))));
            r.set(r + s_l * (s_h + ss));
            let s2 = s_h * s_h;
            let t_h = (3.0 + s2 + r).with_lo(0u32);
            let t_l = r - ((t_h - 3.0) - s2);
            let u = s_h * t_h;
            let v = s_l * t_h + t_l * ss;
            let p_h = (u + v).with_lo(0u32);
            let p_l = v - (p_h - u);
            let z_h = CP_H * p_h;
            let z_l = CP_L * p_h + p_l * CP + dp_l;
            let t = n.to_f();
            t1.set((((z_h + z_l) + dp_h) + t).with_lo(0u32));
            t2.set(z_l - (((t1 - t) - dp_h) - z_h));
        },
    );
    let y1 = y.with_lo(0u32);
    let p_l = (y - y1) * t1 + y * t2;
    let p_h = F::var(y1 * t1);
    let z = p_l + p_h;
    let j = z.hi().as_i();
    let i = z.lo().as_i();
    if_else(
        j.ge(0x40900000),
        || {
            if_(((j - 0x40900000) | i).ne(0), || ret_f(s * HUGE * HUGE));
            if_((p_l + OVT).gt(z - p_h), || ret_f(s * HUGE * HUGE));
        },
        || {
            if_((j & 0x7fffffff).ge(0x4090cc00), || {
                if_(((j.as_u() - 0xc090cc00u32) | i.as_u()).ne(0u32), || {
                    ret_f(s * TINY * TINY)
                });
                if_(p_l.le(z - p_h), || ret_f(s * TINY * TINY));
            });
        },
    );
    let i = j & 0x7fffffff;
    let k = I::var((i >> 20u32) - 0x3ff);
    let n = I::var(0);
    if_(i.gt(0x3fe00000), || {
        n.set(j + (I::var(0x00100000) >> (k + 1)));
        k.set(((n & 0x7fffffff) >> 20u32) - 0x3ff);
        let t = F::from_words((n & !(I::var(0x000fffff) >> k)).as_u(), 0u32);
        n.set(((n & 0x000fffff) | 0x00100000) >> (I::var(20) - k));
        if_(j.lt(0), || n.set(-n));
        p_h.set(p_h - t);
    });
    let t = (p_l + p_h).with_lo(0u32);
    let u = t * LG2_H;
    let v = (p_l - (t - p_h)) * LG2 + t * LG2_L;
    let z = F::var(u + v);
    let w = v - (z - u);
    let t = z * z;
    let t1 = z - t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * P5))));
    let r = (z * t1) / (t1 - 2.0) - (w + z * w);
    z.set(1.0 - (r - z));
    let jj = z.hi().as_i() + (n << 20u32);
    if_else(
        (jj >> 20u32).le(0),
        || z.set(call_scalbn(z, n)),
        || z.set(z.with_hi(jj.as_u())),
    );
    ret_f(s * z);
}
