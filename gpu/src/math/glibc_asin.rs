//! asin and acos as glibc computes them: the IBM Accurate Mathematical Library's `e_asin.c`
//! (since glibc 2.33 without its multi-precision slow paths), with the constants of `uasncs.h` and
//! the tables `asncs` and `inroot` (`glibc_tables`). glibc runs `__ieee754_asin_fma` and
//! `__ieee754_acos_fma`, builds compiled with FMA, on x86-64 CPUs with FMA and AVX2; every `fma`
//! below stands where glibc 2.36's `libm.so.6` has a fused multiply-add there (read from its
//! disassembly).

use super::dsl::*;
use super::glibc_tables::{ASNCS, INROOT};
use crate::pir::{Reg, T};

const ASNCS_NAME: &str = "ndjit_glibc_asncs";
const INROOT_NAME: &str = "ndjit_glibc_inroot";
/// f1..f6: the Taylor coefficients of asin near 0.
const FS: [f64; 6] = [
    1.666_666_666_666_641_105_905_065_779_966_62E-01,
    7.500_000_000_261_226_868_144_317_847_226_23E-02,
    4.464_285_614_210_597_509_785_173_500_069_40E-02,
    3.038_212_685_821_193_199_111_934_106_252_35E-02,
    2.235_512_110_265_256_107_427_863_003_345_57E-02,
    1.813_829_034_045_650_562_803_725_319_636_13E-02,
];
/// rt0..rt3: the correction polynomial of the 1/sqrt guess.
const RT: [f64; 4] = [
    9.999_999_998_599_907_258_553_652_131_346_18E-01,
    4.999_999_994_959_554_259_178_568_142_027_39E-01,
    3.750_175_008_673_451_825_814_530_261_308_50E-01,
    3.125_236_265_545_186_563_091_725_087_695_31E-01,
];
const HP0: u64 = 0x3ff9_21fb_5444_2d18; // pi/2
const HP1: u64 = 0x3c91_a626_3314_5c07; // pi/2 - HP0
const T24: f64 = 16_777_216.0;
const T27: f64 = 134_217_728.0;

/// `f1 + v (f2 + ... + v f6)`, by fused steps.
fn poly_f(v: F) -> F {
    let p = v.fma(FS[5], FS[4]);
    FS[..4].iter().rev().fold(p, |p, &f| v.fma(p, f))
}

/// For 0.125 <= |x| < 0.96875: `(t, a)` with asin|x| = a + t, `a` asin of the subinterval's point
/// and `t` the Taylor expansion there (`k` is |x|'s high word).
fn segment(ax: F, k: U) -> (F, F) {
    table(ASNCS_NAME, T::B64, ASNCS.to_vec());
    let (t, a) = (F::var(0.0), F::var(0.0));
    let bits = |mask: u32, shift: u32| ((k & mask) >> shift).as_i();
    // The subinterval's first entry and the index of its last Taylor coefficient.
    let expand = |n: I, last: i32| {
        let c = |j: i32| ld_table_f(ASNCS_NAME, n + j);
        let xx = ax - c(0);
        let p = xx.fma(c(last), c(last - 1));
        let p = (2..last - 1).rev().fold(p, |p, j| xx.fma(p, c(j)));
        let p = (xx * xx).fma(p, c(last + 1));
        t.set(xx.fma(c(1), p));
        a.set(c(last + 2));
    };
    if_else(
        k.lt(0x3fe0_0000u32),
        || {
            let n = I::select(
                k.lt(0x3fd0_0000u32),
                bits(0xf_ffff, 15) * 11,
                bits(0xf_ffff, 14) * 11 + 352,
            );
            expand(n, 6);
        },
        || {
            if_else(
                k.lt(0x3fe8_0000u32),
                || expand(bits(0xf_e000, 11) * 3 + 1056, 7),
                || {
                    if_else(
                        k.lt(0x3fed_8000u32),
                        || expand(bits(0xf_e000, 13) * 13 + 992, 8),
                        || {
                            if_else(
                                k.lt(0x3fee_8000u32),
                                || expand(bits(0xf_e000, 13) * 14 + 884, 9),
                                || expand(bits(0xf_e000, 13) * 15 + 768, 10),
                            )
                        },
                    )
                },
            )
        },
    );
    (t, a)
}

/// For 0.96875 <= |x| < 1, with `z = (1 - |x|) / 2`: `(c, w)` with `c ≈ sqrt(z)` and `c w` its
/// Newton-corrected value, from the table guess of 1/sqrt(z).
fn sqrt_guess(z: F) -> (F, F) {
    table(INROOT_NAME, T::B64, INROOT.to_vec());
    let hz = z.hi();
    let guess = ld_table_f(INROOT_NAME, ((hz & 0x1f_ffffu32) >> 14u32).as_i());
    // powtwo[511 - (k >> 21)]: a power of two, built from its exponent.
    let scale = F::from_bits((I::var(1023 + 511) - (hz >> 21u32).as_i()).to_l() << 52);
    let t = guess * scale;
    let r = (-(t * t)).fma(z, 1.0);
    let q = r.fma(RT[3], RT[2]);
    let q = r.fma(q, RT[1]);
    let t = r.fma(q, RT[0]) * t;
    let c = z * t;
    (c, (-(t * 0.5)).fma(c, 1.5))
}

/// `(hi, lo)` words' tests shared by asin and acos past the table: |x| == 1, or NaN.
fn is_one(k: U, lo: U) -> P {
    k.eq(0x3ff0_0000u32) & lo.eq(0u32)
}
fn is_nan(k: U, lo: U) -> P {
    k.gt(0x7ff0_0000u32) | (k.eq(0x7ff0_0000u32) & lo.ne(0u32))
}

/// glibc's `__ieee754_asin` (its FMA build).
pub fn asin(a: &[Reg]) {
    let x = F(a[0]);
    let m = x.hi().as_i();
    let k = x.hi() & 0x7fff_ffffu32;
    let pos = m.gt(0);
    let signed = |r: F| F::select(pos, r, -r);
    if_(k.lt(0x3e50_0000u32), || ret_f(x));
    if_(k.lt(0x3fc0_0000u32), || {
        let x2 = x * x;
        ret_f(poly_f(x2).fma(x * x2, x));
    });
    let ax = x.abs();
    if_(k.lt(0x3fef_0000u32), || {
        let (t, a) = segment(ax, k);
        ret_f(signed(t + a));
    });
    if_(k.lt(0x3ff0_0000u32), || {
        let z = F::select(pos, 1.0 - x, x + 1.0) * 0.5;
        let (c, w) = sqrt_guess(z);
        let y = c + T24 - T24;
        let cc = (-y).fma(y, z) / w.fma(c, y);
        let p = poly_f(z) * z;
        let yc = y + cc;
        // hp1 - 2 cc and hp0 - 2 y: one rounding each, as glibc's fused forms (2 cc is exact).
        let cor = (-(yc + yc)).fma(p, fb(HP1) - (cc + cc));
        ret_f(signed(cor + (fb(HP0) - (y + y))));
    });
    let lo = x.lo();
    if_(is_one(k, lo), || ret_f(signed(F::var(fb(HP0)))));
    if_(is_nan(k, lo), || ret_f(x + x));
    ret_f(F::var(f64::INFINITY) / f64::INFINITY);
}

/// glibc's `__ieee754_acos` (its FMA build).
pub fn acos(a: &[Reg]) {
    let x = F(a[0]);
    let m = x.hi().as_i();
    let k = x.hi() & 0x7fff_ffffu32;
    let pos = m.gt(0);
    let (hp0, hp1) = (fb(HP0), fb(HP1));
    if_(k.lt(0x3c88_0000u32), || ret_f(hp0));
    if_(k.lt(0x3fc0_0000u32), || {
        let x2 = x * x;
        let r = hp0 - x;
        ret_f(r + (-poly_f(x2)).fma(x * x2, hp0 - r - x + hp1));
    });
    let ax = x.abs();
    if_(k.lt(0x3fef_0000u32), || {
        let (t, a) = segment(ax, k);
        ret_f(F::select(pos, hp1 - t + (hp0 - a), t + hp1 + (a + hp0)));
    });
    if_(k.lt(0x3ff0_0000u32), || {
        let z = F::select(pos, 1.0 - x, x + 1.0) * 0.5;
        let (c, w) = sqrt_guess(z);
        let y = (-c).fma(T27, c.fma(T27, c));
        let cc = (-y).fma(y, z) / w.fma(c, y);
        let pp = poly_f(z) * z * (y + cc);
        let res = F::select(m.lt(0), hp1 - cc - pp + (hp0 - y), cc + pp + y);
        ret_f(res + res);
    });
    let lo = x.lo();
    if_(is_one(k, lo), || ret_f(F::select(pos, 0.0, 2.0 * hp0)));
    if_(is_nan(k, lo), || ret_f(x + x));
    ret_f(F::var(f64::INFINITY) / f64::INFINITY);
}
