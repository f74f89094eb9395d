//! glibc's own routines beside the ARM family of `glibc.rs`, as the CPU's glibc computes them:
//! `e_log10.c`, `s_cbrt.c` and `e_hypot.c` (one generic build each, nothing contracted), and the
//! FMA builds of fdlibm's `s_expm1.c` and `s_log1p.c` (`__expm1_fma`, `__log1p_fma`: every `fma`
//! below stands where glibc 2.36's `libm.so.6` has a `vfmadd`/`vfmsub`/`vfnmadd`, read from its
//! disassembly; glibc picks these builds on x86-64 CPUs with FMA and AVX2, like those of
//! `glibc.rs`).

use super::dsl::*;
use super::glibc::{signalling, INF, ONE, SIGN};
use crate::pir::{Reg, T};

/// glibc's `e_log10.c` (fdlibm's, on 64-bit words; one generic build, nothing contracted), on
/// top of glibc's log: `log10(2^k m) = k log10(2) + log(m) / ln(10)`, with m in [1, 2) for k ≥ 0
/// and in [0.5, 1) for k < 0.
pub fn log10(a: &[Reg]) {
    const TWO54: u64 = 0x4350_0000_0000_0000;
    const IVLN10: u64 = 0x3fdb_cb7b_1526_e50e;
    const LOG10_2HI: u64 = 0x3fd3_4413_509f_6000;
    const LOG10_2LO: u64 = 0x3d59_fef3_11f1_2b36;
    let x = F::var(F(a[0]));
    let ix = L::var(x.bits());
    let k = I::var(0);
    // (int64) ix < 2^52: negative, zero or subnormal.
    if_(ix.hi().as_i().lt(0x0010_0000), || {
        if_((ix & !SIGN).eq(0u64), || ret_f(-fb(TWO54) / x.abs()));
        if_(ix.hi().as_i().lt(0), || ret_f((x - x) / (x - x)));
        x.set(x * fb(TWO54));
        k.set(-54);
        ix.set(x.bits());
    });
    if_(ix.gt(0x7fef_ffff_ffff_ffffu64), || ret_f(x + x));
    k.set(k + (ix.hi() >> 20).as_i() - 0x3ff);
    let i = (k.as_u() >> 31).as_i();
    let y = (k + i).to_f();
    let m = F::from_bits((ix & 0x000f_ffff_ffff_ffffu64) | ((I::var(0x3ff) - i).to_l() << 52));
    let z = call_f("ndjit_log", &[m]) * fb(IVLN10) + y * fb(LOG10_2LO);
    ret_f(z + y * fb(LOG10_2HI));
}

/// glibc's `s_cbrt.c` (one generic build, nothing contracted): a polynomial first guess on the
/// frexp mantissa, one Halley step, then the exponent's third.
pub fn cbrt(a: &[Reg]) {
    // 2^(-2/3) ... 2^(2/3): glibc's `factor`, indexed by 2 + e % 3.
    const FACTOR: [u64; 5] = [
        0x3fe4_28a2_f98d_728a,
        0x3fe9_65fe_a53d_6e3c,
        0x3ff0_0000_0000_0000,
        0x3ff4_28a2_f98d_728b,
        0x3ff9_65fe_a53d_6e3d,
    ];
    table("ndjit_glibc_cbrt_factor", T::B64, FACTOR.to_vec());
    let x = F(a[0]);
    let ax = F::var(x.abs());
    // Zero, infinite or NaN: x + x (frexp's exponent 0 with fpclassify <= FP_ZERO).
    if_(
        (ax.bits() << 1).eq(0u64) | ax.hi().ge(0x7ff0_0000u32),
        || ret_f(x + x),
    );
    // frexp(|x|): |x| = m 2^e with m in [0.5, 1).
    let e = I::var(0);
    if_(ax.hi().lt(0x0010_0000u32), || {
        ax.set(ax * fb(0x4350_0000_0000_0000));
        e.set(-54);
    });
    e.set(e + (ax.hi() >> 20).as_i() - 0x3fe);
    let m = ax.with_hi((ax.hi() & 0x000f_ffffu32) | 0x3fe0_0000u32);
    let c = |b: u64| fb(b);
    let u = c(0x3fe9_1e2a_6fe7_e984) - c(0x3fc2_9801_e893_366d) * m;
    let u = u * m - c(0x3ffd_5ae6_cfa2_0f0c);
    let u = u * m + c(0x4003_9350_adad_51ec);
    let u = u * m - c(0x4000_eb82_77cd_8d5d);
    let u = u * m + c(0x3ff8_218d_de90_28b4);
    let u = u * m + c(0x3fd6_b69c_ba16_8ff2);
    let t2 = u * u * u;
    let ym = (t2 + m * 2.0) * u / (t2 + t2 + m);
    let ym = ym * ld_table_f("ndjit_glibc_cbrt_factor", e % 3 + 2);
    let ym = F::select(x.gt(0.0), ym, -ym);
    ret_f(super::scalbn::call_scalbn(ym, e / 3));
}

/// glibc's `e_hypot.c` (since 2.35: Borges' "An improved algorithm for hypot(a, b)"; one generic
/// build, nothing contracted): `ax >= ay >= 0`, scaled by 2^±600 when the squares could
/// overflow or underflow, then a square root with one correction step.
pub fn hypot(a: &[Reg]) {
    const LARGE: u64 = 0x5fe0_0000_0000_0000; // 2^511
    const TINY: u64 = 0x2340_0000_0000_0000; // 2^-511
    const EPS: u64 = 0x3c90_0000_0000_0000; // 2^-54
    const SCALE: u64 = 0x1a70_0000_0000_0000; // 2^-600
    const UNSCALE: u64 = 0x6570_0000_0000_0000; // 2^600
    let (x, y) = (F(a[0]), F(a[1]));
    let (absx, absy) = (x.abs(), y.abs());
    let finite = |v: F| v.bits().lt(INF);
    if_(!(finite(absx) & finite(absy)), || {
        let inf = absx.bits().eq(INF) | absy.bits().eq(INF);
        let quiet = !(signalling(x.bits()) | signalling(y.bits()));
        ret_f(F::select(inf & quiet, f64::INFINITY, x + y));
    });
    let swap = absx.lt(absy);
    let ax = F::select(swap, absy, absx);
    let ay = F::select(swap, absx, absy);
    if_(ax.gt(fb(LARGE)), || {
        if_(ay.le(ax * fb(EPS)), || ret_f(ax + ay));
        ret_f(hypot_kernel(ax * fb(SCALE), ay * fb(SCALE)) * fb(UNSCALE));
    });
    if_(ay.lt(fb(TINY)), || {
        if_(ax.ge(ay * fb(0x4350_0000_0000_0000)), || ret_f(ax + ay));
        ret_f(hypot_kernel(ax * fb(UNSCALE), ay * fb(UNSCALE)) * fb(SCALE));
    });
    if_(ay.le(ax * fb(EPS)), || ret_f(ax + ay));
    ret_f(hypot_kernel(ax, ay));
}

/// glibc's hypot `kernel` without FMA: `sqrt(ax² + ay²)` corrected by one Newton step on the
/// exactly computed residual.
fn hypot_kernel(ax: F, ay: F) -> F {
    let h = (ax * ax + ay * ay).sqrt();
    let (t1, t2) = (F::var(0.0), F::var(0.0));
    if_else(
        h.le(ay + ay),
        || {
            let delta = h - ay;
            t1.set(ax * (delta + delta - ax));
            let d = ax - ay;
            t2.set((delta - (d + d)) * delta);
        },
        || {
            let delta = h - ax;
            t1.set((delta + delta) * (ax - (ay + ay)));
            t2.set((4.0 * delta - ay) * ay + delta * delta);
        },
    );
    h - (t1 + t2) / (h + h)
}

const LN2_HI: u64 = 0x3fe6_2e42_fee0_0000;
const LN2_LO: u64 = 0x3dea_39ef_3579_3c76;

/// glibc's FMA build of fdlibm's `s_expm1.c`: `x = k ln2 + r`, a rational approximation of
/// `expm1(r)` with a correction term, and `2^k (expm1(r) + 1) - 1` assembled per range of k.
pub fn expm1(a: &[Reg]) {
    const INVLN2: u64 = 0x3ff7_1547_652b_82fe;
    const O_THRESHOLD: u64 = 0x4086_2e42_fefa_39ef;
    const Q: [u64; 5] = [
        0xbfa1_1111_1111_10f4,
        0x3f5a_01a0_19fe_5585,
        0xbf14_ce19_9eaa_dbb7,
        0x3ed0_cfca_86e6_5239,
        0xbe8a_fdb7_6e09_c32d,
    ];
    let q = |i: usize| fb(Q[i - 1]);
    let x0 = F(a[0]);
    let neg = (x0.hi() >> 31).ne(0u32);
    let hx = x0.hi() & 0x7fff_ffffu32;
    if_(hx.ge(0x4043_687au32), || {
        if_(hx.ge(0x4086_2e42u32), || {
            if_(hx.ge(0x7ff0_0000u32), || {
                let nan = ((hx & 0xf_ffffu32) | x0.lo()).ne(0u32);
                ret_f(F::select(nan, x0 + x0, F::select(neg, -1.0, x0)));
            });
            if_(x0.gt(fb(O_THRESHOLD)), || ret_f(f64::INFINITY));
        });
        // x < -56 ln2: tiny - 1.
        if_(neg, || ret_f(-1.0));
    });
    let x = F::var(x0);
    let c = F::var(0.0);
    let k = I::var(0);
    if_else(
        hx.gt(0x3fd6_2e42u32),
        || {
            let (hi, lo) = (F::var(0.0), F::var(0.0));
            if_else(
                hx.lt(0x3ff0_a2b2u32),
                || {
                    let sign = F::select(neg, -1.0, 1.0);
                    hi.set(x0 - sign * fb(LN2_HI));
                    lo.set(sign * fb(LN2_LO));
                    k.set(I::select(neg, -1, 1));
                },
                || {
                    // Not contracted: the addend is a select.
                    k.set((F::select(neg, -0.5, 0.5) + x0 * fb(INVLN2)).to_i());
                    let t = k.to_f();
                    hi.set((-t).fma(fb(LN2_HI), x0));
                    lo.set(t * fb(LN2_LO));
                },
            );
            x.set(hi - lo);
            c.set(hi - x - lo);
        },
        // |x| < 2^-54: x itself.
        || if_(hx.lt(0x3c90_0000u32), || ret_f(x0)),
    );
    let hfx = x * 0.5;
    let hxs = x * hfx;
    let h2 = hxs * hxs;
    let r1 = h2.fma(hxs.fma(q(3), q(2)), hxs.fma(q(1), 1.0));
    let r1 = (h2 * h2).fma(hxs.fma(q(5), q(4)), r1);
    let t = (-r1).fma(hfx, 3.0);
    let e = (r1 - t) / (-x).fma(t, 6.0) * hxs;
    if_(k.eq(0), || ret_f(x - e.fma(x, -hxs)));
    let e = (e - c).fma(x, -c) - hxs;
    if_(k.eq(-1), || ret_f((x - e).fma(0.5, -0.5)));
    if_(k.eq(1), || {
        if_(x.lt(-0.25), || ret_f((e - (x + 0.5)) * -2.0));
        ret_f((x - e).fma(2.0, 1.0));
    });
    // y with k added to its exponent (wrapping, as glibc's SET_HIGH_WORD).
    let scaled = |y: F| y.with_hi(y.hi() + (k.as_u() << 20u32));
    // k <= -2 or k > 56.
    if_((k + 1).as_u().gt(57u32), || {
        ret_f(scaled(1.0 - (e - x)) - 1.0)
    });
    if_(k.gt(19), || {
        let t = F::from_words((I::var(0x3ff) - k).as_u() << 20u32, 0u32);
        ret_f(scaled(x - (e + t) + 1.0));
    });
    let t = F::from_words(U::var(0x3ff0_0000u32) - (U::var(0x20_0000u32) >> k), 0u32);
    ret_f(scaled(t - (e - x)));
}

/// glibc's FMA build of fdlibm's `s_log1p.c`: `1 + x = 2^k (1 + f)` with a correction term c
/// for the rounding of `1 + x`, then fdlibm's log polynomial in `s = f / (2 + f)`.
pub fn log1p(a: &[Reg]) {
    const LP: [u64; 7] = [
        0x3fe5_5555_5555_5593,
        0x3fd9_9999_9997_fa04,
        0x3fd2_4924_9422_9359,
        0x3fcc_71c5_1d8e_78af,
        0x3fc7_4664_96cb_03de,
        0x3fc3_9a09_d078_c69f,
        0x3fc2_f112_df3e_5244,
    ];
    let lp = |i: usize| fb(LP[i - 1]);
    let (ln2_hi, ln2_lo) = (fb(LN2_HI), fb(LN2_LO));
    let x = F(a[0]);
    let hx = x.hi();
    let (f, c, hfsq) = (F::var(x), F::var(0.0), F::var(0.0));
    let k = I::var(0);
    // Whether 1 + x is reduced (k may be non-zero), rather than f = x.
    let reduce = I::var(1);
    if_else(
        hx.as_i().gt(0x3fda_8279),
        || if_(hx.as_i().gt(0x7fef_ffff), || ret_f(x + x)),
        || {
            let ax = hx & 0x7fff_ffffu32;
            if_(ax.gt(0x3fef_ffffu32), || {
                if_(x.eq(-1.0), || ret_f(f64::NEG_INFINITY));
                ret_f((x - x) / (x - x));
            });
            if_(ax.le(0x3e1f_ffffu32), || {
                if_(ax.le(0x3c8f_ffffu32), || ret_f(x));
                ret_f((-(x * x)).fma(0.5, x));
            });
            // -0.2929 < x < 0.41422: f = x, k = 0.
            if_((hx + 0x402d_413cu32).gt(0x402d_413cu32), || reduce.set(0));
        },
    );
    if_else(
        reduce.eq(1),
        || {
            let u = F::var(x);
            if_else(
                hx.as_i().lt(0x4340_0000),
                || {
                    u.set(x + 1.0);
                    k.set((u.hi().as_i() >> 20u32) - 0x3ff);
                    if_else(
                        k.gt(0),
                        || c.set((1.0 - (u - x)) / u),
                        || c.set((x - (u - 1.0)) / u),
                    );
                },
                || k.set((hx.as_i() >> 20u32) - 0x3ff),
            );
            let hu = U::var(u.hi() & 0xf_ffffu32);
            if_else(
                hu.as_i().gt(0x6a09d),
                || {
                    k.set(k + 1);
                    f.set(u.with_hi(hu | 0x3fe0_0000u32) - 1.0);
                    hu.set((U::var(0x10_0000u32) - hu) >> 2u32);
                },
                || f.set(u.with_hi(hu | 0x3ff0_0000u32) - 1.0),
            );
            hfsq.set(f * 0.5 * f);
            // |f| < 2^-20.
            if_(hu.eq(0u32), || {
                if_(f.eq(0.0), || {
                    if_(k.eq(0), || ret_f(0.0));
                    let kf = k.to_f();
                    ret_f(kf.fma(ln2_hi, kf.fma(ln2_lo, c)));
                });
                let r = (-f).fma(fb(0x3fe5_5555_5555_5555), 1.0) * hfsq;
                if_(k.eq(0), || ret_f(f - r));
                let kf = k.to_f();
                ret_f(kf.fma(ln2_hi, -(r - kf.fma(ln2_lo, c) - f)));
            });
        },
        || hfsq.set(x * 0.5 * x),
    );
    let s = f / (f + 2.0);
    let z = s * s;
    let (z2, z4) = (z * z, z * z * (z * z));
    let r = z.fma(lp(1), z2 * z.fma(lp(3), lp(2)));
    let r = z4.fma(z.fma(lp(5), lp(4)), r);
    let r = (z2 * z4).fma(z.fma(lp(7), lp(6)), r);
    let sr = (r + hfsq) * s;
    if_(k.eq(0), || ret_f(f - (hfsq - sr)));
    let kf = k.to_f();
    ret_f(kf.fma(ln2_hi, -(hfsq - (kf.fma(ln2_lo, c) + sr) - f)));
}

fn call1(name: &str, x: F) -> F {
    call_f(name, &[x])
}

/// glibc's `e_sinh.c` (fdlibm's; one generic build) on glibc's expm1 and exp.
pub fn sinh(a: &[Reg]) {
    let x = F(a[0]);
    let ix = x.hi() & 0x7fff_ffffu32;
    if_(ix.gt(0x7fef_ffffu32), || ret_f(x + x));
    let h = F::select((x.hi() >> 31).ne(0u32), -0.5, 0.5);
    let ax = x.abs();
    if_(ix.lt(0x4036_0000u32), || {
        // |x| < 2^-28: x (shuge + x > 1 always holds).
        if_(ix.lt(0x3e30_0000u32), || ret_f(x));
        let t = call1("ndjit_expm1", ax);
        if_(ix.lt(0x3ff0_0000u32), || {
            ret_f(h * (t + t - t * t / (t + 1.0)))
        });
        ret_f(h * (t / (1.0 + t) + t));
    });
    if_(ix.lt(0x4086_2e42u32), || ret_f(call1("ndjit_exp", ax) * h));
    if_(ax.bits().le(0x4086_33ce_8fb9_f87du64), || {
        let w = call1("ndjit_exp", ax * 0.5);
        ret_f(w * (h * w));
    });
    ret_f(x * fb(0x7fac_7b1f_3cac_7433)); // 1e307: overflows to ±inf
}

/// glibc's `e_cosh.c` (fdlibm's; one generic build) on glibc's expm1 and exp.
pub fn cosh(a: &[Reg]) {
    let x = F(a[0]);
    let ix = x.hi() & 0x7fff_ffffu32;
    let ax = x.abs();
    if_(ix.lt(0x4036_0000u32), || {
        if_(ix.gt(0x3fd6_2e42u32), || {
            let t = call1("ndjit_exp", ax);
            ret_f(t * 0.5 + 0.5 / t);
        });
        if_(ix.lt(0x3c80_0000u32), || ret_f(1.0));
        let t = call1("ndjit_expm1", ax);
        let w = t + 1.0;
        ret_f(1.0 + t * t / (w + w));
    });
    if_(ix.lt(0x4086_2e42u32), || {
        ret_f(0.5 * call1("ndjit_exp", ax))
    });
    if_(ax.bits().le(0x4086_33ce_8fb9_f87du64), || {
        let w = call1("ndjit_exp", ax * 0.5);
        ret_f(0.5 * w * w);
    });
    // Infinite or NaN: x * x; otherwise an overflow to +inf.
    ret_f(F::select(
        ix.gt(0x7fef_ffffu32),
        x * x,
        F::var(f64::INFINITY),
    ));
}

/// glibc's `s_tanh.c` (fdlibm's; one generic build) on glibc's expm1.
pub fn tanh(a: &[Reg]) {
    let x = F(a[0]);
    let ix = x.hi() & 0x7fff_ffffu32;
    let neg = (x.hi() >> 31).ne(0u32);
    if_(ix.gt(0x7fef_ffffu32), || {
        let r = 1.0 / x;
        ret_f(F::select(neg, r - 1.0, r + 1.0));
    });
    let z = F::var(0.0);
    if_else(
        ix.lt(0x4036_0000u32),
        || {
            // ±0.
            if_((ix | x.lo()).eq(0u32), || ret_f(x));
            let ax = x.abs();
            if_(ix.lt(0x3c80_0000u32), || ret_f((1.0 + x) * x));
            if_else(
                ix.ge(0x3ff0_0000u32),
                || {
                    let t = call1("ndjit_expm1", ax + ax);
                    z.set(1.0 - 2.0 / (t + 2.0));
                },
                || {
                    let t = call1("ndjit_expm1", ax * -2.0);
                    z.set(-t / (t + 2.0));
                },
            );
        },
        // 1 - tiny.
        || z.set(1.0),
    );
    ret_f(F::select(neg, -z, z));
}

/// glibc's `s_asinh.c` (fdlibm's; one generic build) on glibc's log and log1p.
pub fn asinh(a: &[Reg]) {
    let x = F(a[0]);
    let ix = x.hi() & 0x7fff_ffffu32;
    if_(ix.lt(0x3e30_0000u32), || ret_f(x));
    let ax = x.abs();
    let w = F::var(0.0);
    if_else(
        ix.gt(0x41b0_0000u32),
        || {
            if_(ix.gt(0x7fef_ffffu32), || ret_f(x + x));
            w.set(call1("ndjit_log", ax) + fb(0x3fe6_2e42_fefa_39ef));
        },
        || {
            let t = x * x;
            if_else(
                ix.gt(0x4000_0000u32),
                || {
                    w.set(call1(
                        "ndjit_log",
                        1.0 / ((t + 1.0).sqrt() + ax) + (ax + ax),
                    ))
                },
                || w.set(call1("ndjit_log1p", t / ((t + 1.0).sqrt() + 1.0) + ax)),
            );
        },
    );
    ret_f(w.copysign(x));
}

/// glibc's `e_acosh.c` (fdlibm's on 64-bit words; one generic build) on glibc's log and log1p.
pub fn acosh(a: &[Reg]) {
    let x = F(a[0]);
    let ix = x.bits();
    // (int64) ix <= c.
    let signed = |c: u64| ix.le(c) | (ix >> 63).ne(0u64);
    if_(signed(0x4000_0000_0000_0000), || {
        if_(signed(ONE), || {
            if_(ix.eq(ONE), || ret_f(0.0));
            ret_f((x - x) / (x - x));
        });
        let t = x - 1.0;
        ret_f(call1("ndjit_log1p", t + (t + t + t * t).sqrt()));
    });
    if_(!signed(0x41af_ffff_ffff_ffff), || {
        if_(!signed(0x7fef_ffff_ffff_ffff), || ret_f(x + x));
        ret_f(call1("ndjit_log", x) + fb(0x3fe6_2e42_fefa_39ef));
    });
    let t = x * x;
    ret_f(call1("ndjit_log", x + x - 1.0 / ((t - 1.0).sqrt() + x)));
}

/// glibc's `e_atanh.c` (one generic build) on glibc's log1p.
pub fn atanh(a: &[Reg]) {
    let x = F(a[0]);
    let ax = x.abs();
    let t = F::var(0.0);
    if_else(
        ax.lt(0.5),
        || {
            if_(ax.lt(fb(0x3e30_0000_0000_0000)), || ret_f(x));
            let t2 = ax + ax;
            t.set(0.5 * call1("ndjit_log1p", ax * t2 / (1.0 - ax) + t2));
        },
        || {
            if_else(
                ax.lt(1.0),
                || t.set(0.5 * call1("ndjit_log1p", (ax + ax) / (1.0 - ax))),
                // |x| > 1: NaN; ±1: ±inf; NaN: NaN.
                || ret_f(F::select(ax.gt(1.0), (x - x) / (x - x), x / 0.0)),
            );
        },
    );
    ret_f(t.copysign(x));
}
