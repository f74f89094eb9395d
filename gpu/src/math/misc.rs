//! cbrt (CORE-MATH's correctly rounded cube root, as ported to the `libm` crate), hypot (musl),
//! fmod (exact: shift-and-subtract), copysign, and NumPy's float floor division and remainder.

use super::dsl::*;
use crate::pir::Reg;

pub fn cbrt(a: &[Reg]) {
    let x = F(a[0]);
    let escale1 = fb(0x3ff428a2f98d728b);
    let escale2 = fb(0x3ff965fea53d6e3d);
    let c = [
        fb(0x3fe1b0babccfef9c),
        fb(0x3fe2c9a3e94d1da5),
        fb(0xbfc4dc30b1a1ddba),
        fb(0x3f97a8d3e4ec9b07),
    ];
    let u0 = fb(0x3fd5555555555555);
    let u1 = fb(0x3fcc71c71c71c71c);
    let off = fb(0x3ca0000000000000); // 2^-53
    let hx = x.bits();
    let mant = L::var(hx & 0x000F_FFFF_FFFF_FFFFu64);
    let sign = hx >> 63;
    let e = U::var((hx >> 52).lo() & 0x7ffu32);
    if_(((e + 1u32) & 0x7ffu32).lt(2u32), || {
        let ix = hx & 0x7FFF_FFFF_FFFF_FFFFu64;
        if_(e.eq(0x7ffu32) | ix.eq(0u64), || ret_f(x + x));
        let nz = ix.leading_zeros() - 11u32;
        mant.set((mant << nz) & 0x000F_FFFF_FFFF_FFFFu64);
        e.set(e - (nz - 1u32));
    });
    e.set(e + 3072u32);
    let cvt1 = mant | (0x3ffu64 << 52);
    let et = e / 3u32;
    let it = e % 3u32;
    let cvt5 = (cvt1 + (it.to_l() << 52)) | (sign << 63);
    let zz = F::from_bits(cvt5);
    let esc = F::select(it.eq(2u32), escale2, escale1);
    let esc = F::select(it.eq(0u32), 1.0, esc);
    let cvt2 = esc.bits() | (sign << 63);
    let z = F::from_bits(cvt1);
    let r = 1.0 / z;
    // rsc[(it << 1) | sign] = [1, -1, 0.5, -0.5, 0.25, -0.25]
    let mag = F::select(it.eq(2u32), 0.25, 0.5);
    let mag = F::select(it.eq(0u32), 1.0, mag);
    let rs = F::select(sign.ne(0u64), -mag, mag);
    let rr = r * rs;
    let z2 = z * z;
    let c0 = c[0] + z * c[1];
    let c2 = c[2] + z * c[3];
    let y = F::var(c0 + z2 * c2);
    let y2 = y * y;
    let h = y2 * (y * r) - 1.0;
    y.set(y - (h * y) * (u0 - u1 * h));
    y.set(y * F::from_bits(cvt2));
    let y2 = y * y;
    let y2l = y.fma(y, -y2);
    let y3 = y2 * y;
    let y3l = y.fma(y2, -y3) + y * y2l;
    let h = ((y3 - zz) + y3l) * rr;
    let dy = F::var(h * (y * u0));
    let y1 = F::var(y - dy);
    dy.set((y - y1) - dy);
    let ady = dy.abs();
    let ady0 = (ady - off).abs();
    let ady1 = (ady - (fb(0x3cb0000000000000) + off)).abs();
    let t75 = fb(0x3b40000000000000); // 2^-75
    if_(ady0.lt(t75) | ady1.lt(t75), || {
        let y2 = y1 * y1;
        let y2l = y1.fma(y1, -y2);
        let y3 = y2 * y1;
        let y3l = y1.fma(y2, -y3) + y1 * y2l;
        let h = ((y3 - zz) + y3l) * rr;
        let d = h * (y1 * u0);
        let yy = y1 - d;
        dy.set((y1 - yy) - d);
        y1.set(yy);
        let ady = dy.abs();
        let ady0 = (ady - off).abs();
        let ady1 = (ady - (fb(0x3cb0000000000000) + off)).abs();
        let t98 = fb(0x39d0000000000000); // 2^-98
        if_(ady0.lt(t98) | ady1.lt(t98), || {
            let azz = zz.abs();
            let sgn = zz.bits() & 0x8000_0000_0000_0000u64;
            if_(azz.eq(fb(0x4009b78223aa307c)), || {
                y1.set(F::from_bits(F::var(fb(0x3ff79d15d0e8d59c)).bits() | sgn))
            });
            if_(azz.eq(fb(0x401a202bfc89ddff)), || {
                y1.set(F::from_bits(F::var(fb(0x3ffde87aa837820f)).bits() | sgn))
            });
        });
    });
    let cvt3 = L::var(y1.bits() + ((et - 342u32 - 1023u32).to_l() << 52));
    let m0 = cvt3 << 30;
    let m1 = m0 >> 63;
    if_((m0 ^ m1).le(1u64 << 30), || {
        let cvt4 = (y1.bits() + (164u64 << 15)) & 0xffff_ffff_ffff_0000u64;
        if_(
            ((F::from_bits(cvt4) - y1) - dy)
                .abs()
                .lt(fb(0x3c30000000000000))
                | zz.abs().eq(1.0),
            || {
                cvt3.set((cvt3 + (1u64 << 15)) & 0xffff_ffff_ffff_0000u64);
            },
        );
    });
    ret_f(F::from_bits(cvt3));
}

pub fn hypot(a: &[Reg]) {
    let (x0, y0) = (F(a[0]), F(a[1]));
    let ux = x0.bits() & 0x7FFF_FFFF_FFFF_FFFFu64;
    let uy = y0.bits() & 0x7FFF_FFFF_FFFF_FFFFu64;
    let swap = ux.lt(uy);
    let uxi = L::select(swap, uy, ux);
    let uyi = L::select(swap, ux, uy);
    let ex = (uxi >> 52).lo();
    let ey = (uyi >> 52).lo();
    let x = F::var(F::from_bits(uxi));
    let y = F::var(F::from_bits(uyi));
    if_(ey.eq(0x7ffu32), || ret_f(y));
    if_(ex.eq(0x7ffu32) | uyi.eq(0u64), || ret_f(x));
    if_((ex - ey).gt(64u32), || ret_f(x + y));
    let z = F::var(1.0);
    let (p700, m700) = (fb(0x6bb0000000000000), fb(0x1430000000000000));
    if_else(
        ex.gt(0x3ffu32 + 510),
        || {
            z.set(p700);
            x.set(x * m700);
            y.set(y * m700);
        },
        || {
            if_(ey.lt(0x3ffu32 - 450), || {
                z.set(m700);
                x.set(x * p700);
                y.set(y * p700);
            });
        },
    );
    let sq = |v: F| {
        let split = 134217728.0 + 1.0;
        let xc = v * split;
        let xh = v - xc + xc;
        let xl = v - xh;
        let hi = v * v;
        let lo = xh * xh - hi + 2.0 * xh * xl + xl * xl;
        (hi, lo)
    };
    let (hx, lx) = sq(x);
    let (hy, ly) = sq(y);
    ret_f(z * (ly + lx + hy + hx).sqrt());
}

/// `math.hypot`: CPython's own algorithm, step for step as `ndjit::math::py_hypot` performs it
/// (scaling by a power of two, squares split exactly with `fma.rn`, compensated sums, one
/// differential correction), so the device gives CPython's bits.
pub fn py_hypot(a: &[Reg]) {
    let (x, y) = (F(a[0]).abs(), F(a[1]).abs());
    let max = F::var(F::select(x.lt(y), y, x));
    let inf = fb(0x7ff0000000000000);
    if_(x.eq(inf) | y.eq(inf), || ret_f(inf));
    if_(x.is_nan() | y.is_nan(), || ret_f(x + y));
    if_(max.eq(0.0), || ret_f(max));
    // frexp's exponent of `max`, subnormals included.
    let bits = max.bits();
    let biased = (bits >> 52).lo().as_i();
    let e = I::select(
        biased.eq(0),
        I::var(64) - bits.leading_zeros().as_i() - 1074,
        biased - 1022,
    );
    if_(e.lt(-1023), || {
        // CPython 3.11's path for a subnormal larger operand: divide by it.
        let (csum, frac) = (F::var(1.0), F::var(0.0));
        for v in [x / max, y / max] {
            let sq = v * v;
            let sum = csum + sq;
            frac.set(frac + ((csum - sum) + sq));
            csum.set(sum);
        }
        ret_f(max * (csum - 1.0 + frac).sqrt());
    });
    let k = -e;
    let scale = F::from_bits(L::select(
        k.ge(-1022),
        (k + 1023).to_l() << 52u32,
        L::var(1u64) << (k + 1074),
    ));
    let (csum, frac1, frac2) = (F::var(1.0), F::var(0.0), F::var(0.0));
    let add_product = |a: F, b: F| {
        let hi = a * b;
        let lo = a.fma(b, -hi);
        let sum = csum + hi;
        frac2.set(frac2 + ((csum - sum) + hi));
        csum.set(sum);
        frac1.set(frac1 + lo);
    };
    let (xs, ys) = (x * scale, y * scale);
    add_product(xs, xs);
    add_product(ys, ys);
    let h = F::var((csum - 1.0 + (frac1 + frac2)).sqrt());
    add_product(-h, h);
    h.set(h + (csum - 1.0 + (frac1 + frac2)) / (2.0 * h));
    ret_f(h / scale);
}

/// fmod is exact, so any correct algorithm gives the CPU's bits; this is the classic binary
/// long division on the significands.
pub fn fmod(a: &[Reg]) {
    let (x, y) = (F(a[0]), F(a[1]));
    let uxi = L::var(x.bits());
    let uyi = L::var(y.bits());
    let ex = I::var((uxi >> 52).lo().as_i() & 0x7ff);
    let ey = I::var((uyi >> 52).lo().as_i() & 0x7ff);
    let sx = uxi >> 63;
    if_((uyi << 1).eq(0u64) | y.is_nan() | ex.eq(0x7ff), || {
        let p = x * y;
        ret_f(p / p);
    });
    let (ax2, ay2) = (uxi << 1, uyi << 1);
    if_(ax2.le(ay2), || {
        if_(ax2.eq(ay2), || ret_f(0.0 * x));
        ret_f(x);
    });
    let normalize = |u: L, e: I| {
        if_else(
            e.eq(0),
            || {
                let i = L::var(u << 12);
                loop_(|| {
                    break_if((i >> 63).ne(0u64));
                    e.set(e - 1);
                    i.set(i << 1);
                });
                u.set(u << (I::var(1) - e));
            },
            || {
                u.set(u & (u64::MAX >> 12));
                u.set(u | (1u64 << 52));
            },
        );
    };
    normalize(uxi, ex);
    normalize(uyi, ey);
    loop_(|| {
        break_if(ex.le(ey));
        let i = uxi - uyi;
        if_((i >> 63).eq(0u64), || {
            if_(i.eq(0u64), || ret_f(0.0 * x));
            uxi.set(i);
        });
        uxi.set(uxi << 1);
        ex.set(ex - 1);
    });
    let i = uxi - uyi;
    if_((i >> 63).eq(0u64), || {
        if_(i.eq(0u64), || ret_f(0.0 * x));
        uxi.set(i);
    });
    loop_(|| {
        break_if((uxi >> 52).ne(0u64));
        uxi.set(uxi << 1);
        ex.set(ex - 1);
    });
    if_else(
        ex.gt(0),
        || {
            uxi.set(uxi - (1u64 << 52));
            uxi.set(uxi | (ex.to_l() << 52));
        },
        || uxi.set(uxi >> (I::var(1) - ex)),
    );
    ret_f(F::from_bits(uxi | (sx << 63)));
}

pub fn copysign(a: &[Reg]) {
    let (x, y) = (F(a[0]), F(a[1]));
    ret_f(F::from_bits(
        (x.bits() & 0x7FFF_FFFF_FFFF_FFFFu64) | (y.bits() & 0x8000_0000_0000_0000u64),
    ));
}

fn copysign0(v: F) -> F {
    F::from_bits(v.bits() & 0x8000_0000_0000_0000u64)
}

/// NumPy's `npy_divmod`, as `ndjit::math` computes it: `(floor quotient, remainder)`.
fn divmod(a: F, b: F) -> (F, F) {
    let m = F::var(call_f("ndjit_fmod", &[a, b]));
    let q = F::var(a / b);
    let out_q = F::var(0.0);
    if_else(
        b.eq(0.0),
        || out_q.set(q),
        || {
            let div = F::var((a - m) / b);
            if_else(
                m.ne(0.0),
                || {
                    if_(b.lt(0.0) ^ m.lt(0.0), || {
                        m.set(m + b);
                        div.set(div - 1.0);
                    });
                },
                || m.set(copysign0(b)),
            );
            if_else(
                div.ne(0.0),
                || {
                    let f = F::var(div.floor());
                    if_((div - f).gt(0.5), || f.set(f + 1.0));
                    out_q.set(f);
                },
                || out_q.set(copysign0(q)),
            );
        },
    );
    (out_q, m)
}

pub fn floordiv(a: &[Reg]) {
    let (q, _) = divmod(F(a[0]), F(a[1]));
    ret_f(q);
}

pub fn remainder(a: &[Reg]) {
    let (_, m) = divmod(F(a[0]), F(a[1]));
    ret_f(m);
}
