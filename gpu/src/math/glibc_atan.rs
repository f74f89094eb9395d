//! atan as glibc computes it: the IBM Accurate Mathematical Library's `s_atan.c` (since glibc
//! 2.34 without its multi-precision slow path), with the constants of `atnat.h` and the table
//! `cij` (`glibc_tables`). glibc runs `__atan_fma`, a build compiled with FMA, on x86-64 CPUs
//! with FMA and AVX2; every `fma` below stands where glibc 2.36's `libm.so.6` has a fused
//! multiply-add there (read from its disassembly).

use super::dsl::*;
use super::glibc_tables::CIJ;
use crate::pir::{Reg, T};

const CIJ_NAME: &str = "ndjit_glibc_cij";
/// d3, d5, ..., d13: the odd Taylor coefficients of atan near 0 (and of atan(1/w) near ∞).
const D: [u64; 6] = [
    0xbfd5_5555_5555_5555,
    0x3fc9_9999_9999_97fd,
    0xbfc2_4924_923f_7603,
    0x3fbc_71c6_e512_9a3b,
    0xbfb7_4580_22b1_3c25,
    0x3fb3_75f0_8b31_cbce,
];
const A: u64 = 0x3e4b_b67a_0000_0000; // 1.290e-8
const E: u64 = 0x4334_9ff2_0000_0000; // 5.805e15
const HPI: u64 = 0x3ff9_21fb_5444_2d18; // pi/2
const HPI1: u64 = 0x3c91_a626_3314_5c07; // pi/2 - HPI
const TWO52: f64 = 4_503_599_627_370_496.0;

/// Whether the host's glibc fuses the last two products of atan's `D <= u < E` branch: the builds
/// of glibc 2.39 (Ubuntu 24.04) and 2.41 (Debian 13) compute `((HPI1 + cor) - ww) - yy` with two
/// fused multiply-adds where glibc 2.36's (Debian 12) multiplies first; all their other routines
/// agree bit for bit (2·10⁶ inputs per function, README *GPU*). Versions between are untested and
/// taken as the older build.
fn fuses_atan_tail() -> bool {
    ndjit::math::glibc_version().is_some_and(|v| v >= (2, 39))
}

/// `d3 + v (d5 + v (... + v d13))`, by fused steps.
fn poly_d(v: F) -> F {
    let p = v.fma(fb(D[5]), fb(D[4]));
    D[..4].iter().rev().fold(p, |p, &d| v.fma(p, fb(d)))
}

/// The row of `cij` for `t` in [1/16, 1]: `c(j)` reads its j-th entry.
fn cij_row(t: F) -> impl Fn(i32) -> F {
    table(CIJ_NAME, T::B64, CIJ.to_vec());
    let i = (t.fma(256.0, TWO52) - TWO52).to_i() - 16;
    let base = i * 7;
    move |j| ld_table_f(CIJ_NAME, base + j)
}

/// `c2 + z (c3 + z (c4 + z (c5 + z c6)))` of a row, by fused steps.
fn cij_poly(c: &impl Fn(i32) -> F, z: F) -> F {
    let p = z.fma(c(6), c(5));
    let p = z.fma(p, c(4));
    let p = z.fma(p, c(3));
    z.fma(p, c(2))
}

/// glibc's `__atan` (its FMA build).
pub fn atan(a: &[Reg]) {
    let x = F(a[0]);
    if_(x.is_nan(), || ret_f(x + x));
    let u = F::select(x.lt(0.0), -x, x);
    if_(u.lt(1.0), || {
        if_(u.lt(0.0625), || {
            if_(u.lt(fb(A)), || ret_f(x));
            let v = x * x;
            ret_f((x * v).fma(poly_d(v), x));
        });
        let c = cij_row(u);
        let z = u - c(0);
        ret_f(cij_poly(&c, z).fma(z, c(1)).copysign(x));
    });
    let hpi = fb(HPI);
    if_(u.lt(16.0), || {
        let w = 1.0 / u;
        let t1 = u * w;
        let t2 = u.fma(w, -t1);
        let c = cij_row(w);
        let z = (1.0 - t1 - t2).fma(w, w - c(0));
        let yy = (-cij_poly(&c, z)).fma(z, fb(HPI1));
        ret_f((hpi - c(1) + yy).copysign(x));
    });
    if_(u.lt(fb(E)), || {
        let w = 1.0 / u;
        let t1 = u * w;
        let v = w * w;
        let t2 = u.fma(w, -t1);
        let e = 1.0 - t1 - t2;
        // ESUB(HPI, w): t3 + cor = HPI - w exactly (|w| < HPI here).
        let t3 = hpi - w;
        let cor = F::select(w.abs().lt(hpi), hpi - t3 - w, hpi - (w + t3));
        let r = if fuses_atan_tail() {
            (-(w * v)).fma(poly_d(v), (-e).fma(w, cor + fb(HPI1)))
        } else {
            cor + fb(HPI1) - e * w - w * v * poly_d(v)
        };
        ret_f((r + t3).copysign(x));
    });
    ret_f(F::select(x.gt(0.0), hpi, -hpi));
}

const OPI: u64 = 0x4009_21fb_5444_2d18; // pi
const OPI1: u64 = 0x3ca1_a626_3314_5c07; // pi - OPI
const QPI: u64 = 0x3fe9_21fb_5444_2d18; // pi/4
const TQPI: u64 = 0x4002_d97c_7f33_21d2; // 3 pi/4

/// `EADD(x, y)`/`ESUB(x, y)` for `s` = ±1: `(z, zz)` with `z + zz = x + s y` exactly.
pub(super) fn eadd(x: F, y: F, s: f64) -> (F, F) {
    let sy = if s > 0.0 { y } else { -y };
    let z = x + sy;
    let big_x = x.abs().gt(y.abs());
    let zz = if s > 0.0 {
        F::select(big_x, x - z + y, y - z + x)
    } else {
        F::select(big_x, x - z - y, x - (y + z))
    };
    (z, zz)
}

/// glibc's `__ieee754_atan2(y, x)` (its FMA build).
pub fn atan2(a: &[Reg]) {
    let (y, x) = (F(a[0]), F(a[1]));
    let (ux, dx, uy, dy) = (x.hi(), x.lo(), y.hi(), y.lo());
    let is_nan =
        |u: U, d: U| (u & 0x7ff0_0000u32).eq(0x7ff0_0000u32) & ((u & 0xf_ffffu32) | d).ne(0u32);
    if_(is_nan(ux, dx), || ret_f(x + y));
    if_(is_nan(uy, dy), || ret_f(y + y));
    let (hpi, opi) = (fb(HPI), fb(OPI));
    let x_pos = (ux & 0x8000_0000u32).eq(0u32);
    let y_pos = (uy & 0x8000_0000u32).eq(0u32);
    let pick = |p: P, a: f64, b: f64| F::select(p, a, b);
    // y = ±0.
    if_((uy & 0x7fff_ffffu32).eq(0u32) & dy.eq(0u32), || {
        ret_f(F::select(
            y_pos,
            pick(x_pos, 0.0, opi),
            pick(x_pos, -0.0, -opi),
        ))
    });
    if_(x.eq(0.0), || ret_f(pick(y_pos, hpi, -hpi)));
    let inf = |u: U, d: U| (u & 0x7fff_ffffu32).eq(0x7ff0_0000u32) & d.eq(0u32);
    if_(inf(ux, dx), || {
        let (q, t) = (fb(QPI), fb(TQPI));
        let at_inf = F::select(x_pos, pick(y_pos, q, -q), pick(y_pos, t, -t));
        let finite = F::select(x_pos, pick(y_pos, 0.0, -0.0), pick(y_pos, opi, -opi));
        ret_f(F::select(inf(uy, dy), at_inf, finite));
    });
    if_(inf(uy, dy), || ret_f(pick(y_pos, hpi, -hpi)));
    let ax = F::var(F::select(x.lt(0.0), -x, x));
    let ay = F::var(F::select(y.lt(0.0), -y, y));
    let de = (uy & 0x7ff0_0000u32).as_i() - (ux & 0x7ff0_0000u32).as_i();
    if_(de.ge(59_768_832), || ret_f(pick(y.gt(0.0), hpi, -hpi)));
    if_(de.le(-59_768_832), || {
        if_(x.gt(0.0), || ret_f((ay / ax).copysign(y)));
        ret_f(pick(y.gt(0.0), opi, -opi));
    });
    let (small, large) = (fb(0x20b0_0000_0000_0000), fb(0x5f30_0000_0000_0000));
    if_(ax.lt(small) | ay.lt(small), || {
        ax.set(ax * large);
        ay.set(ay * large);
    });
    if_(ax.gt(large) | ay.gt(large), || {
        ax.set(ax * small);
        ay.set(ay * small);
    });
    // u = min/max, du its correction, by EMULV.
    let y_smaller = ay.lt(ax);
    let (num, den) = (F::select(y_smaller, ay, ax), F::select(y_smaller, ax, ay));
    let u = num / den;
    let v = den * u;
    let du = (num - v - den.fma(u, -v)) / den;
    let signed = |z: F| ret_f(z.copysign(y));
    // u < 1/16: the odd polynomial; then z = base ± (u + du) with base 0, pi/2 or pi.
    let near = |base: u64, base1: u64, sign: f64| {
        let v = u * u;
        let zz = u * v * poly_d(v);
        let (t2, cor) = eadd(F::var(fb(base)), u, sign);
        let t3 = if sign > 0.0 {
            cor + fb(base1) + du + zz
        } else {
            cor + fb(base1) - du - zz
        };
        signed(t2 + t3);
    };
    // u >= 1/16: the Taylor expansion at the table point, around base ± atan(x0).
    let far = |base: u64, base1: u64, sign: f64| {
        let c = cij_row(u);
        let v = u - c(0) + du;
        let zz = if sign > 0.0 {
            v.fma(cij_poly(&c, v), fb(base1))
        } else {
            (-v).fma(cij_poly(&c, v), fb(base1))
        };
        let t1 = if sign > 0.0 {
            fb(base) + c(1)
        } else {
            fb(base) - c(1)
        };
        signed(t1 + zz);
    };
    if_(x.gt(0.0), || {
        if_(y_smaller, || {
            if_(u.lt(0.0625), || {
                let v = u * u;
                signed(u + (u * v).fma(poly_d(v), du));
            });
            let c = cij_row(u);
            let (v, dv) = eadd(u - c(0), du, 1.0);
            let q = v.fma(v.fma(v.fma(c(6), c(5)), c(4)), c(3));
            signed(v.fma(c(2), dv.fma(c(2), v * v * q)) + c(1));
        });
        if_(u.lt(0.0625), || near(HPI, HPI1, -1.0));
        far(HPI, HPI1, -1.0);
    });
    if_(ax.lt(ay), || {
        if_(u.lt(0.0625), || near(HPI, HPI1, 1.0));
        far(HPI, HPI1, 1.0);
    });
    if_(u.lt(0.0625), || near(OPI, OPI1, -1.0));
    far(OPI, OPI1, -1.0);
}
