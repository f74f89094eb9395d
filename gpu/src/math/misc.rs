//! fmod (exact: shift-and-subtract), copysign, and NumPy's float floor division
//! and remainder.

use super::dsl::*;
use crate::pir::Reg;

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
    ret_f(F(a[0]).copysign(F(a[1])));
}

/// `a * b + c` rounded once (`MathFn::Fma`): the one `fma.rn`.
pub fn fma(a: &[Reg]) {
    ret_f(F(a[0]).fma(F(a[1]), F(a[2])));
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
