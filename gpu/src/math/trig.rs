//! tan with fdlibm's kernel (`k_tan.c`) and argument reduction (`e_rem_pio2.c`: Cody-Waite for
//! medium arguments, Payne-Hanek `k_rem_pio2.c` for large ones). sin and cos are glibc's own
//! (`glibc_trig.rs`).

use super::dsl::*;
use super::scalbn::call_scalbn;
use super::tables::IPIO2;
use crate::pir::{Cls, Reg, T};

const TT: [f64; 13] = [
    3.33333333333334091986e-01,
    1.33333333333201242699e-01,
    5.39682539762260521377e-02,
    2.18694882948595424599e-02,
    8.86323982359930005737e-03,
    3.59207910759131235356e-03,
    1.45620945432529025516e-03,
    5.88041240820264096874e-04,
    2.46463134818469906812e-04,
    7.81794442939557092300e-05,
    7.14072491382608190305e-05,
    -1.85586374855275456654e-05,
    2.59073051863633712884e-05,
];
const PIO4: f64 = 7.85398163397448278999e-01;
const PIO4_LO: f64 = 3.06161699786838301793e-17;

/// `k_tan(x, y, odd)`.
pub fn k_tan(a: &[Reg]) {
    let x = F::var(F(a[0]));
    let y = F::var(F(a[1]));
    let odd = I(a[2]);
    let hx = x.hi();
    let big = (hx & 0x7fffffffu32).ge(0x3FE59428u32);
    let neg = (hx >> 31).ne(0u32);
    if_(big, || {
        if_(neg, || {
            x.set(-x);
            y.set(-y);
        });
        x.set((PIO4 - x) + (PIO4_LO - y));
        y.set(0.0);
    });
    let t = TT;
    let z = x * x;
    let w = z * z;
    let r = t[1] + w * (t[3] + w * (t[5] + w * (t[7] + w * (t[9] + w * t[11]))));
    let v = z * (t[2] + w * (t[4] + w * (t[6] + w * (t[8] + w * (t[10] + w * t[12])))));
    let s = z * x;
    let r = y + z * (s * (r + v) + y) + s * t[0];
    let w = x + r;
    if_(big, || {
        let s = 1.0 - 2.0 * odd.to_f();
        let v = s - 2.0 * (x + (r - w * w / (w + s)));
        if_(neg, || ret_f(-v));
        ret_f(v);
    });
    if_(odd.eq(0), || ret_f(w));
    let w0 = F::from_bits(w.bits() & 0xFFFF_FFFF_0000_0000u64);
    let v = r - (w0 - x);
    let a = -1.0 / w;
    let a0 = F::from_bits(a.bits() & 0xFFFF_FFFF_0000_0000u64);
    ret_f(a0 + a * (1.0 + a0 * w0 + a0 * v));
}

const EPS: f64 = 2.2204460492503131e-16;
const TO_INT: f64 = 1.5 / EPS;
const INV_PIO2: f64 = 6.36619772367581382433e-01;
const PIO2_1: f64 = 1.57079632673412561417e+00;
const PIO2_1T: f64 = 6.07710050650619224932e-11;
const PIO2_2: f64 = 6.07710050630396597660e-11;
const PIO2_2T: f64 = 2.02226624879595063154e-21;
const PIO2_3: f64 = 2.02226624871116645580e-21;
const PIO2_3T: f64 = 8.47842766036889956997e-32;

fn ret3(n: I, y0: F, y1: F) {
    ret(&[n.0, y0.0, y1.0]);
}

/// The medium case: rint(x/(pi/2)) with two or three Cody-Waite steps.
fn medium(x: F, ix: U) {
    let tmp = x * INV_PIO2 + TO_INT;
    let f_n = tmp - TO_INT;
    let n = f_n.to_i();
    let r = F::var(x - f_n * PIO2_1);
    let w = F::var(f_n * PIO2_1T);
    let y0 = F::var(r - w);
    let ex = (ix >> 20).as_i();
    let ey = (y0.hi() >> 20).as_i() & 0x7ff;
    if_((ex - ey).gt(16), || {
        let t = F::var(r);
        w.set(f_n * PIO2_2);
        r.set(t - w);
        w.set(f_n * PIO2_2T - ((t - r) - w));
        y0.set(r - w);
        let ey = (y0.hi() >> 20).as_i() & 0x7ff;
        if_((ex - ey).gt(49), || {
            let t = F::var(r);
            w.set(f_n * PIO2_3);
            r.set(t - w);
            w.set(f_n * PIO2_3T - ((t - r) - w));
            y0.set(r - w);
        });
    });
    let y1 = (r - y0) - w;
    ret3(n, y0, y1);
}

/// Returns `(n, y0, y1)` with x = n*pi/2 + y0 + y1.
pub fn rem_pio2(a: &[Reg]) {
    let x = F(a[0]);
    let hx = x.hi();
    let neg = (hx >> 31).ne(0u32);
    let ix = hx & 0x7fffffffu32;
    // The small multiples: one Cody-Waite step with the k*pi/2 constants.
    let step = |k: f64, n: i32| {
        if_else(
            !neg,
            || {
                let z = x - k * PIO2_1;
                let y0 = z - k * PIO2_1T;
                let y1 = (z - y0) - k * PIO2_1T;
                ret3(I::var(n), y0, y1);
            },
            || {
                let z = x + k * PIO2_1;
                let y0 = z + k * PIO2_1T;
                let y1 = (z - y0) + k * PIO2_1T;
                ret3(I::var(-n), y0, y1);
            },
        );
    };
    if_(ix.le(0x400f6a7au32), || {
        if_((ix & 0xfffffu32).eq(0x921fbu32), || medium(x, ix));
        if_else(ix.le(0x4002d97cu32), || step(1.0, 1), || step(2.0, 2));
    });
    if_(ix.le(0x401c463bu32), || {
        if_else(
            ix.le(0x4015fdbcu32),
            || {
                if_(ix.eq(0x4012d97cu32), || medium(x, ix));
                step(3.0, 3);
            },
            || {
                if_(ix.eq(0x401921fbu32), || medium(x, ix));
                step(4.0, 4);
            },
        );
    });
    if_(ix.lt(0x413921fbu32), || medium(x, ix));
    if_(ix.ge(0x7ff00000u32), || {
        let y0 = x - x;
        ret3(I::var(0), y0, y0);
    });
    // Large: z = scalbn(|x|, -ilogb(x) + 23), split into three 24-bit pieces.
    let z0 = F::from_bits((x.bits() & 0x000F_FFFF_FFFF_FFFFu64) | ((0x3ffu64 + 23) << 52));
    let t0 = z0.to_i().to_f();
    let z1 = (z0 - t0) * fb(0x4170000000000000);
    let t1 = z1.to_i().to_f();
    let t2 = (z1 - t1) * fb(0x4170000000000000);
    let nx = I::select(t1.eq(0.0), 1, 2);
    let nx = I::select(t2.eq(0.0), nx, 3);
    let e0 = (ix.as_i() >> 20u32) - (0x3ff + 23);
    let r = call(
        "ndjit_rem_pio2_large",
        &[t0.0, t1.0, t2.0, nx.0, e0.0],
        &[Cls::B32, Cls::F64, Cls::F64],
    );
    let (n, y0, y1) = (I(r[0]), F(r[1]), F(r[2]));
    if_(neg, || ret3(-n, -y0, -y1));
    ret3(n, y0, y1);
}

const PIO2T: [f64; 8] = [
    1.57079625129699707031e+00,
    7.54978941586159635335e-08,
    5.39030252995776476554e-15,
    3.28200341580791294123e-22,
    1.27065575308067607349e-29,
    1.22933308981111328932e-36,
    2.73370053816464559624e-44,
    2.16741683877804819444e-51,
];

/// fdlibm's `__kernel_rem_pio2` for prec = 1 (two doubles out): `(n & 7, y0, y1)` from the
/// 24-bit pieces `x[0..nx]` of the argument and its exponent `e0`.
pub fn rem_pio2_large(a: &[Reg]) {
    table(
        "ndjit_ipio2",
        T::S32,
        IPIO2.iter().map(|&v| v as u32 as u64).collect(),
    );
    table(
        "ndjit_pio2",
        T::F64,
        PIO2T.iter().map(|v| v.to_bits()).collect(),
    );
    let xs = Local::new("rp_x", 3);
    let f = Local::new("rp_f", 20);
    let fq = Local::new("rp_fq", 20);
    let q = Local::new("rp_q", 20);
    let iq = Local::new("rp_iq", 20);
    xs.set_f(I::var(0), F(a[0]));
    xs.set_f(I::var(1), F(a[1]));
    xs.set_f(I::var(2), F(a[2]));
    let nx = I(a[3]);
    let e0 = I(a[4]);
    let x1p24 = fb(0x4170000000000000);
    let x1p_24 = fb(0x3e70000000000000);
    let jk = 4i32;
    let jp = jk;
    let jx = nx - 1;
    let jv = I::var((e0 - 3) / 24);
    if_(jv.lt(0), || jv.set(0));
    let q0 = I::var(e0 - (jv + 1) * 24);
    let j = I::var(jv - jx);
    let m = jx + jk;
    for_range(0, m + 1, |i| {
        let v = F::var(0.0);
        if_(j.ge(0), || v.set(ld_table_i("ndjit_ipio2", j).to_f()));
        f.set_f(i, v);
        j.set(j + 1);
    });
    // q[i] = sum_j x[j] * f[jx + i - j]
    let fill_q = |i: I| {
        let fw = F::var(0.0);
        for_range(0, jx + 1, |j| {
            fw.set(fw + xs.get_f(j) * f.get_f(jx + i - j));
        });
        q.set_f(i, fw);
    };
    for_range(0, jk + 1, fill_q);
    let jz = I::var(jk);
    let z = F::var(0.0);
    let n = I::var(0);
    let ih = I::var(0);
    loop_(|| {
        // Distill q[] into iq[] in reverse.
        let i = I::var(0);
        z.set(q.get_f(jz));
        for_rev_incl(1, jz, |j| {
            let fw = (x1p_24 * z).to_i().to_f();
            iq.set_i(i, (z - x1p24 * fw).to_i());
            z.set(q.get_f(j - 1) + fw);
            i.set(i + 1);
        });
        z.set(call_scalbn(z, q0));
        z.set(z - 8.0 * (z * 0.125).floor());
        n.set(z.to_i());
        z.set(z - n.to_f());
        ih.set(0);
        if_else(
            q0.gt(0),
            || {
                let k = jz - 1;
                let sh = I::var(24) - q0;
                let iv = iq.get_i(k) >> sh;
                n.set(n + iv);
                iq.set_i(k, iq.get_i(k) - (iv << sh));
                ih.set(iq.get_i(k) >> (I::var(23) - q0));
            },
            || {
                if_else(
                    q0.eq(0),
                    || ih.set(iq.get_i(jz - 1) >> 23u32),
                    || if_(z.ge(0.5), || ih.set(2)),
                );
            },
        );
        if_(ih.gt(0), || {
            n.set(n + 1);
            let carry = I::var(0);
            for_range(0, jz, |i| {
                let jv2 = iq.get_i(i);
                if_else(
                    carry.eq(0),
                    || {
                        if_(jv2.ne(0), || {
                            carry.set(1);
                            iq.set_i(i, I::var(0x1000000) - jv2);
                        });
                    },
                    || iq.set_i(i, I::var(0xffffff) - jv2),
                );
            });
            if_(q0.eq(1), || iq.set_i(jz - 1, iq.get_i(jz - 1) & 0x7fffff));
            if_(q0.eq(2), || iq.set_i(jz - 1, iq.get_i(jz - 1) & 0x3fffff));
            if_(ih.eq(2), || {
                z.set(1.0 - z);
                if_(carry.ne(0), || z.set(z - call_scalbn(F::var(1.0), q0)));
            });
        });
        // Recompute with more terms when the result cancelled to zero.
        let again = I::var(0);
        if_(z.eq(0.0), || {
            let jj = I::var(0);
            for_rev_incl(jk, jz - 1, |i| jj.set(jj | iq.get_i(i)));
            if_(jj.eq(0), || {
                let k = I::var(1);
                loop_(|| {
                    break_if(iq.get_i(I::var(jk) - k).ne(0));
                    k.set(k + 1);
                });
                for_range(jz + 1, jz + k + 1, |i| {
                    f.set_f(jx + i, ld_table_i("ndjit_ipio2", jv + i).to_f());
                    fill_q(i);
                });
                jz.set(jz + k);
                again.set(1);
            });
        });
        break_if(again.eq(0));
    });
    // Chop off zero terms, or break z into 24-bit pieces.
    if_else(
        z.eq(0.0),
        || {
            jz.set(jz - 1);
            q0.set(q0 - 24);
            loop_(|| {
                break_if(iq.get_i(jz).ne(0));
                jz.set(jz - 1);
                q0.set(q0 - 24);
            });
        },
        || {
            z.set(call_scalbn(z, -q0));
            if_else(
                z.ge(x1p24),
                || {
                    let fw = (x1p_24 * z).to_i().to_f();
                    iq.set_i(jz, (z - x1p24 * fw).to_i());
                    jz.set(jz + 1);
                    q0.set(q0 + 24);
                    iq.set_i(jz, fw.to_i());
                },
                || iq.set_i(jz, z.to_i()),
            );
        },
    );
    let fw = F::var(call_scalbn(F::var(1.0), q0));
    for_rev_incl(0, jz, |i| {
        q.set_f(i, fw * iq.get_i(i).to_f());
        fw.set(fw * x1p_24);
    });
    for_rev_incl(0, jz, |i| {
        let acc = F::var(0.0);
        let k = I::var(0);
        loop_(|| {
            break_if(k.gt(jp) | k.gt(jz - i));
            acc.set(acc + ld_table_f("ndjit_pio2", k) * q.get_f(i + k));
            k.set(k + 1);
        });
        fq.set_f(jz - i, acc);
    });
    let fw = F::var(0.0);
    for_rev_incl(0, jz, |i| fw.set(fw + fq.get_f(i)));
    let pos = ih.eq(0);
    let y0 = F::select(pos, fw, -fw);
    fw.set(fq.get_f(I::var(0)) - fw);
    for_range(1, jz + 1, |i| fw.set(fw + fq.get_f(i)));
    let y1 = F::select(pos, fw, -fw);
    ret(&[(n & 7).0, y0.0, y1.0]);
}

fn rem(x: F) -> (I, F, F) {
    let r = call("ndjit_rem_pio2", &[x.0], &[Cls::B32, Cls::F64, Cls::F64]);
    (I(r[0]), F(r[1]), F(r[2]))
}

pub fn tan(a: &[Reg]) {
    let x = F(a[0]);
    let ix = x.hi() & 0x7fffffffu32;
    let k_tan = |x: F, y: F, odd: I| F(call("ndjit_k_tan", &[x.0, y.0, odd.0], &[Cls::F64])[0]);
    if_(ix.le(0x3fe921fbu32), || {
        if_(ix.lt(0x3e400000u32), || ret_f(x));
        ret_f(k_tan(x, F::var(0.0), I::var(0)));
    });
    if_(ix.ge(0x7ff00000u32), || ret_f(x - x));
    let (n, y0, y1) = rem(x);
    ret_f(k_tan(y0, y1, n & 1));
}
