//! tan as glibc computes it: the IBM Accurate Mathematical Library's `s_tan.c` (since glibc 2.35
//! without its multi-precision slow paths), with the constants of `utan.h`, the table `xfg`
//! (`glibc_tables`) and `__branred` (`glibc_trig`) for |x| > 1e8. glibc runs `__tan_fma`, a build
//! compiled with FMA, on x86-64 CPUs with FMA and AVX2; every `fma` below stands where glibc
//! 2.36's `libm.so.6` has a fused multiply-add there (read from its disassembly).

use super::dsl::*;
use super::glibc_atan::eadd;
use super::glibc_tables::XFG;
use super::glibc_trig::{HPINV, MP1, MP2, PP3, PP4, TOINT};
use crate::pir::{Cls, Reg, T};

const XFG_NAME: &str = "ndjit_glibc_xfg";
/// d3, d5, ..., d11: the odd Taylor coefficients of tan near 0.
const D: [u64; 5] = [
    0x3fd5_5555_5555_5555,
    0x3fc1_1111_1111_07c6,
    0x3fab_a1ba_1cdb_8745,
    0x3f96_64ed_49cf_c666,
    0x3f82_385a_3cf2_e4ea,
];
const E0: u64 = 0x3fd5_5555_5555_4dbd;
const E1: u64 = 0x3fc1_1112_e0a6_b45f;
const G1: u64 = 0x3e4b_096c_0000_0000; // 1.259e-8
const G2: u64 = 0x3faf_212d_0000_0000; // 0.0608 (also gy2)
const G3: u64 = 0x3fe9_2f1a_0000_0000; // 0.787
const G5: u64 = 0x4197_d784_0000_0000; // 1e8
const MP3: u64 = 0xbc8c_b3b3_99d7_47f2; // pi/2 - MP1 - MP2, rounded

/// `d3 + a2 (d5 + ... + a2 d11)`, by fused steps.
fn poly_d(a2: F) -> F {
    let p = a2.fma(fb(D[4]), fb(D[3]));
    D[..3].iter().rev().fold(p, |p, &d| a2.fma(p, fb(d)))
}

/// The table point of `w` in (0.0608, 0.787]: `(pz, tan(x0), 1/tan(x0))` with `pz ≈ tan(z)` of
/// `z = w - x0 + dw`.
fn table_point(w: F, dw: Option<F>) -> (F, F, F) {
    table(XFG_NAME, T::B64, XFG.to_vec());
    let i = w.fma(256.0, -15.5).to_i() * 4;
    let z0 = w - ld_table_f(XFG_NAME, i);
    let z = match dw {
        Some(d) => z0 + d,
        None => z0,
    };
    let z2 = z * z;
    let pz = (z * z2).fma(z2.fma(fb(E1), fb(E0)), z);
    (pz, ld_table_f(XFG_NAME, i + 1), ld_table_f(XFG_NAME, i + 2))
}

/// tan(a + da) for odd `n == 0`, -cot(a + da) for `n == 1`: the common tail after a reduction.
fn tan_reduced(a: F, da: F, n: I) {
    let neg = a.lt(0.0);
    let (ya, yya) = (F::select(neg, -a, a), F::select(neg, -da, da));
    let sy = F::select(neg, -1.0, 1.0);
    let odd = n.ne(0);
    if_(ya.le(fb(G2)), || {
        let a2 = a * a;
        let t2 = (a * a2).fma(poly_d(a2), da);
        let y = a + t2;
        if_(!odd, || ret_f(y));
        // -1 / (a + t2) in double length: EADD, then DIV2(1, 0, b, db).
        let (b, db) = eadd(a, t2, 1.0);
        let c = 1.0 / b;
        let u = c * b;
        let uu = c.fma(b, -u);
        let cc = (-db).fma(c, 1.0 - u - uu + 0.0) / b;
        let z = c + cc;
        ret_f(-(c - z + cc + z));
    });
    let (pz, fi, gi) = table_point(ya, Some(yya));
    let num = (fi + gi) * pz;
    if_(odd, || ret_f((gi - num / (pz + fi)) * -sy));
    ret_f((num / (gi - pz) + fi) * sy);
}

/// glibc's `__tan` (its FMA build).
pub fn tan(a: &[Reg]) {
    let x = F(a[0]);
    if_((x.hi() & 0x7ff0_0000u32).eq(0x7ff0_0000u32), || {
        ret_f(x - x)
    });
    let w = F::select(x.lt(0.0), -x, x);
    if_(w.le(fb(G1)), || ret_f(x));
    if_(w.le(fb(G2)), || {
        let x2 = x * x;
        ret_f((x * x2).fma(poly_d(x2), x));
    });
    if_(w.le(fb(G3)), || {
        let (pz, fi, gi) = table_point(w, None);
        let s = F::select(x.lt(0.0), -1.0, 1.0);
        ret_f(((fi + gi) * pz / (gi - pz) + fi) * s);
    });
    // The reductions to |a| <= pi/4 of s_tan.c: t = x * 2/pi rounded, n = its parity.
    let t = x.fma(fb(HPINV), fb(TOINT));
    let xn = t - fb(TOINT);
    let n = (t.lo() & 1u32).as_i();
    let t1 = (-xn).fma(fb(MP2), (-xn).fma(fb(MP1), x));
    if_(w.le(25.0), || {
        let a = (-xn).fma(fb(MP3), t1);
        tan_reduced(a, (-xn).fma(fb(MP3), t1 - a), n);
    });
    if_(w.le(fb(G5)), || {
        let t = (-xn).fma(fb(PP3), t1);
        let da = (-xn).fma(fb(PP3), t1 - t);
        let a = (-xn).fma(fb(PP4), t);
        let (a, da) = eadd(a, da + (-xn).fma(fb(PP4), t - a), 1.0);
        tan_reduced(a, da, n);
    });
    let r = call(
        "ndjit_glibc_branred",
        &[x.0],
        &[Cls::B32, Cls::F64, Cls::F64],
    );
    let (a, da) = eadd(F(r[1]), F(r[2]), 1.0);
    tan_reduced(a, da, I(r[0]) & 1);
}
