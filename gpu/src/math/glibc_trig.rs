//! sin and cos as glibc computes them: the IBM Accurate Mathematical Library's `s_sin.c` (since
//! glibc 2.28 without its slow paths) with its table (`glibc_tables`), and `branred.c` for
//! arguments past 105414350.
//!
//! glibc runs `__sin_fma` and `__cos_fma`, builds of `s_sin.c` compiled with FMA, on x86-64 CPUs
//! with FMA and AVX2; every `fma` below stands where glibc 2.36's `libm.so.6` has a fused
//! multiply-add there (read from its disassembly). `__branred` has one, generic build: nothing
//! in it is contracted.

use super::dsl::*;
use super::glibc_tables::SINCOSTAB;
use super::tables::TOVERP;
use crate::pir::{Cls, Reg, T};

const SINCOS_NAME: &str = "ndjit_glibc_sincostab";
const TOVERP_NAME: &str = "ndjit_glibc_toverp";

// s_sin.c / usncs.h.
const SN3: u64 = 0xbfc5_5555_5555_5515;
const SN5: u64 = 0x3f81_1110_e829_872f;
const CS2: f64 = 0.5;
const CS4: u64 = 0xbfa5_5555_5555_5535;
const CS6: u64 = 0x3f56_c16b_edd9_e239;
const S: [u64; 5] = [
    0xbfc5_5555_5555_5555,
    0x3f81_1111_1111_0ece,
    0xbf2a_01a0_19db_08b8,
    0x3ec7_1de2_7b9a_7ed9,
    0xbe5a_ddff_c2fc_df59,
];
const BIG: u64 = 0x42c8_0000_0000_0000; // 0x1.8p45
const HP0: u64 = 0x3ff9_21fb_5444_2d18; // pi/2, high part
const HP1: u64 = 0x3c91_a626_3314_5c07; // pi/2, low part
                                        // The reduction constants, which tan's (`glibc_tan.rs`, `utan.h`) shares.
pub(super) const TOINT: u64 = 0x4338_0000_0000_0000;
pub(super) const HPINV: u64 = 0x3fe4_5f30_6dc9_c883; // 2/pi
pub(super) const MP1: u64 = 0x3ff9_21fb_5800_0000; // pi/2 = MP1 + MP2 + PP3 + PP4
pub(super) const MP2: u64 = 0xbe4d_de97_3c00_0000;
pub(super) const PP3: u64 = 0xbc8c_b3b3_9800_0000;
pub(super) const PP4: u64 = 0xbacd_747f_23e3_2ed7;
const TAYLOR_MAX: u64 = 0x3fc0_20c4_9ba5_e354; // 0.126

// branred.c / branred.h.
const TM600: u64 = 0x1a70_0000_0000_0000;
const SPLIT: u64 = 0x41a0_0000_0200_0000; // 2^27 + 1
const TM24: u64 = 0x3e70_0000_0000_0000;
const BR_BIG: u64 = 0x4338_0000_0000_0000; // 0x1.8p52
const BR_BIG1: u64 = 0x4358_0000_0000_0000; // 0x1.8p54
const BR_MP2: u64 = 0xbe4d_de97_4000_0000;

fn c(bits: u64) -> f64 {
    fb(bits)
}

/// `{sn, ssn, cs, ccs}` of the table point of `u = |x| + big`.
fn lookup(u: F) -> (F, F, F, F) {
    table(SINCOS_NAME, T::B64, SINCOSTAB.to_vec());
    let k = (u.lo() << 2u32).as_i();
    let at = |i: i32| ld_table_f(SINCOS_NAME, k + i);
    (at(0), at(1), at(2), at(3))
}

/// `TAYLOR_SIN(a * a, a, da)`.
fn taylor_sin(a: F, da: F) -> F {
    let xx = a * a;
    let p = xx.fma(c(S[4]), c(S[3]));
    let p = xx.fma(p, c(S[2]));
    let p = xx.fma(p, c(S[1]));
    let p = xx.fma(p, c(S[0]));
    a + xx.fma(p.fma(a, -(da * 0.5)), da)
}

/// `do_sin(x, dx)`: sin(x + dx).
pub fn do_sin(r: &[Reg]) {
    let (x, dx) = (F(r[0]), F(r[1]));
    if_(x.abs().lt(c(TAYLOR_MAX)), || ret_f(taylor_sin(x, dx)));
    let dx = F::select(x.le(0.0), -dx, dx);
    let ax = x.abs();
    let u = ax + c(BIG);
    let xr = ax - (u - c(BIG));
    let (sn, ssn, cs, ccs) = lookup(u);
    let xx = xr * xr;
    let s = xr + (xr * xx).fma(xx.fma(c(SN5), c(SN3)), dx);
    let cc = xr.fma(dx, xx * xx.fma(xx.fma(c(CS6), c(CS4)), CS2));
    let cor = s.fma(cs, (-cc).fma(sn, s.fma(ccs, ssn)));
    ret_f((sn + cor).copysign(x));
}

/// `do_cos(x, dx)`: cos(x + dx).
pub fn do_cos(r: &[Reg]) {
    let (x, dx) = (F(r[0]), F(r[1]));
    let dx = F::select(x.lt(0.0), -dx, dx);
    let ax = x.abs();
    let u = ax + c(BIG);
    let xr = ax - (u - c(BIG)) + dx;
    let (sn, ssn, cs, ccs) = lookup(u);
    let xx = xr * xr;
    let s = (xr * xx).fma(xx.fma(c(SN5), c(SN3)), xr);
    let cc = xx * xx.fma(xx.fma(c(CS6), c(CS4)), CS2);
    let cor = (-s).fma(sn, (-cc).fma(cs, (-s).fma(ssn, ccs)));
    ret_f(cs + cor);
}

fn call_sin(x: F, dx: F) -> F {
    call_f("ndjit_glibc_do_sin", &[x, dx])
}

fn call_cos(x: F, dx: F) -> F {
    call_f("ndjit_glibc_do_cos", &[x, dx])
}

/// `reduce_sincos`: `x = n pi/2 + a + da` for |x| < 105414350, to 136 bits.
fn reduce_sincos(x: F) -> (I, F, F) {
    let t = x.fma(c(HPINV), c(TOINT));
    let xn = t - c(TOINT);
    let n = (t.lo() & 3u32).as_i();
    let y = (-xn).fma(c(MP2), (-xn).fma(c(MP1), x));
    let t2 = (-xn).fma(c(PP3), y);
    let db = (-xn).fma(c(PP3), y - t2);
    let b = (-xn).fma(c(PP4), t2);
    let db = db + (-xn).fma(c(PP4), t2 - b);
    (n, b, db)
}

/// `do_sincos(a, da, n)`: sin(a + da + n pi/2).
fn do_sincos(a: F, da: F, n: I) -> F {
    let r = F::var(0.0);
    if_else(
        (n & 1).ne(0),
        || r.set(call_cos(a, da)),
        || r.set(call_sin(a, da)),
    );
    F::select((n & 2).ne(0), -r, r)
}

/// One half of `__branred`: `x * 2/pi` from six 24-bit chunks of 2/pi, as `(b, bb, sum)`.
fn branred_half(x: F) -> (F, F, F) {
    let e = ((x.hi() >> 20u32) & 0x7ffu32).as_i();
    let k = I::var(0);
    if_(e.gt(426), || k.set((e - 450) / 24));
    let gor = F::var(F::from_words(
        U::var(0x63f0_0000u32) - ((k * 24).as_u() << 20u32),
        0u32,
    ));
    let mut r = Vec::with_capacity(6);
    for i in 0..6 {
        r.push(ld_table_f(TOVERP_NAME, k + i) * x * gor);
        gor.set(gor * c(TM24));
    }
    let big = c(BR_BIG);
    let sum = F::var(0.0);
    for ri in r.iter_mut().take(3) {
        let s = *ri + big - big;
        sum.set(sum + s);
        *ri = *ri - s;
    }
    let t = r.iter().rev().fold(F::var(0.0), |t, &ri| ri + t);
    let bb = r[1..].iter().fold(r[0] - t, |bb, &ri| bb + ri);
    let s = t + big - big;
    sum.set(sum + s);
    let t = t - s;
    let b = bb + t;
    let bb = t - b + bb;
    let s = sum + c(BR_BIG1) - c(BR_BIG1);
    (b, bb, sum - s)
}

/// `__branred(x)`: `(n mod 4, a, aa)` with `x = n pi/2 + a + aa`, for |x| ≥ 105414350.
pub fn branred(a: &[Reg]) {
    let toverp = TOVERP.iter().map(|&v| f64::from(v).to_bits()).collect();
    table(TOVERP_NAME, T::B64, toverp);
    let x = F(a[0]) * c(TM600);
    let t = x * c(SPLIT);
    let x1 = t - (t - x);
    let x2 = x - x1;
    let (b1, bb1, sum1) = branred_half(x1);
    let (b2, bb2, sum2) = branred_half(x2);
    let sum = F::var(sum2 + sum1);
    let b = F::var(b1 + b2);
    let bb = F::select(b1.abs().gt(b2.abs()), b1 - b + b2, b2 - b + b1);
    if_else(
        b.gt(0.5),
        || {
            b.set(b - 1.0);
            sum.set(sum + 1.0);
        },
        || {
            if_(b.lt(-0.5), || {
                b.set(b + 1.0);
                sum.set(sum - 1.0);
            })
        },
    );
    let n = sum.to_i() & 3;
    let s = bb + bb1 + bb2 + b;
    let t = b - s + bb + (bb1 + bb2);
    let bs = s * c(SPLIT);
    let t1 = bs - (bs - s);
    let t2 = s - t1;
    let b = s * c(HP0);
    let lo = t2 * c(BR_MP2) + s * c(HP1) + t * c(HP0);
    let bb = t1 * c(MP1) - b + t1 * c(BR_MP2) + t2 * c(MP1) + lo;
    let a = b + bb;
    ret(&[n.0, a.0, (b - a + bb).0]);
}

fn call_branred(x: F) -> (I, F, F) {
    let r = call(
        "ndjit_glibc_branred",
        &[x.0],
        &[Cls::B32, Cls::F64, Cls::F64],
    );
    (I(r[0]), F(r[1]), F(r[2]))
}

/// glibc's `__sin` (its FMA build).
pub fn sin(a: &[Reg]) {
    let x = F(a[0]);
    let k = x.hi() & 0x7fff_ffffu32;
    if_(k.lt(0x3e50_0000u32), || ret_f(x));
    if_(k.lt(0x3feb_6000u32), || ret_f(call_sin(x, F::var(0.0))));
    if_(k.lt(0x4003_68fdu32), || {
        let t = c(HP0) - x.abs();
        ret_f(call_cos(t, F::var(c(HP1))).copysign(x));
    });
    if_(k.lt(0x4199_21fbu32), || {
        let (n, a, da) = reduce_sincos(x);
        ret_f(do_sincos(a, da, n));
    });
    if_(k.lt(0x7ff0_0000u32), || {
        let (n, a, da) = call_branred(x);
        ret_f(do_sincos(a, da, n));
    });
    ret_f(x / x);
}

/// glibc's `__cos` (its FMA build).
pub fn cos(a: &[Reg]) {
    let x = F(a[0]);
    let k = x.hi() & 0x7fff_ffffu32;
    if_(k.lt(0x3e40_0000u32), || ret_f(1.0));
    if_(k.lt(0x3feb_6000u32), || ret_f(call_cos(x, F::var(0.0))));
    if_(k.lt(0x4003_68fdu32), || {
        let y = c(HP0) - x.abs();
        let a = y + c(HP1);
        ret_f(call_sin(a, y - a + c(HP1)));
    });
    if_(k.lt(0x4199_21fbu32), || {
        let (n, a, da) = reduce_sincos(x);
        ret_f(do_sincos(a, da, n + 1));
    });
    if_(k.lt(0x7ff0_0000u32), || {
        let (n, a, da) = call_branred(x);
        ret_f(do_sincos(a, da, n + 1));
    });
    ret_f(x / x);
}
