//! `np.tanh`, `np.sinh`, `np.log10`, `np.arccosh` and `np.cbrt` within 0.51 ulp: operation for
//! operation what `ndjit::math::accurate` performs on the CPU (one `fma.rn` for each of its
//! `mul_add`s, its constants), on glibc's exp and log cores (`glibc.rs`) and glibc's cbrt, so the
//! device gives the CPU's bits. Used where NumPy runs kernels of its own for these
//! (`ndjit::math::numpy_kernels`); elsewhere `np.*` is glibc's routine.

use super::dsl::*;
use super::glibc::{exp_reduce, pow_log};
use crate::pir::Reg;
use ndjit::math::accurate::{
    ACOSH_LOG2X, INVLN10, LN2, SINH_HALVES, SINH_OVERFLOWS, SINH_TAIL, TANH_SATURATES, TINY,
};

/// A double-double: the unevaluated sum of two doubles.
type Dd = (F, F);

fn two_sum(a: F, b: F) -> Dd {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

fn fast_two_sum(a: F, b: F) -> Dd {
    let s = a + b;
    (s, b - (s - a))
}

fn two_prod(a: F, b: F) -> Dd {
    let p = a * b;
    (p, a.fma(b, -p))
}

fn dd_div(h: F, l: F, dh: F, dl: F) -> Dd {
    let q = h / dh;
    let r = (-q).fma(dh, h) + (l - q * dl);
    (q, r / dh)
}

fn dd_sqrt(h: F, l: F) -> Dd {
    let s = h.sqrt();
    (s, ((-s).fma(s, h) + l) / (2.0 * s))
}

fn exp_dd(x: F) -> Dd {
    let (sbits, tmp, _) = exp_reduce(x, None, L::var(0u64));
    let scale = F::from_bits(sbits);
    let (p, pe) = two_prod(scale, tmp);
    let (h, e) = fast_two_sum(scale, p);
    (h, e + pe)
}

fn log_dd(x: F) -> Dd {
    let ix = L::var(x.bits());
    if_((ix >> 52).eq(0u64), || {
        ix.set((x * fb(0x4330_0000_0000_0000)).bits() - (52u64 << 52));
    });
    pow_log(ix)
}

fn sinh_series(a: F) -> Dd {
    let (t, te) = two_prod(a, a);
    let (c, ce) = two_prod(a, t);
    let ce = a.fma(te, ce);
    let s3 = c / 6.0;
    let s3e = ((-s3).fma(6.0, c) + ce) / 6.0;
    let mut p = F::var(SINH_TAIL[7]);
    for k in SINH_TAIL[..7].iter().rev() {
        p = p.fma(t, *k);
    }
    let tail = c * t * p;
    let (h, l) = fast_two_sum(a, s3);
    fast_two_sum(h, l + (s3e + tail))
}

/// `h + l` into the pair of variables `out`.
fn assign(out: Dd, (h, l): Dd) {
    out.0.set(h);
    out.1.set(l);
}

fn new_dd() -> Dd {
    (F::var(0.0), F::var(0.0))
}

pub fn log10(a: &[Reg]) {
    let x = F(a[0]);
    if_(x.is_nan(), || ret_f(x + x));
    if_(x.lt(0.0), || ret_f(f64::NAN));
    if_(x.eq(0.0), || ret_f(f64::NEG_INFINITY));
    if_(x.eq(f64::INFINITY), || ret_f(x));
    let (h, l) = log_dd(x);
    let (p, pe) = two_prod(h, F::var(INVLN10.0));
    ret_f(p + (pe + h.fma(INVLN10.1, l * INVLN10.0)));
}

pub fn cbrt(a: &[Reg]) {
    let x = F(a[0]);
    let y = call_f("ndjit_cbrt", &[x]);
    if_(y.eq(0.0) | y.abs().eq(f64::INFINITY) | y.is_nan(), || {
        ret_f(y)
    });
    let e = ((y.bits() >> 52) & 0x7ffu64).lo().as_i() - 1023;
    let down = F::from_bits((I::var(1023) - e).to_l() << 52);
    let up = F::from_bits((e + 1023).to_l() << 52);
    let xs = x * down * down * down;
    let ys = y * down;
    let (t, te) = two_prod(ys, ys);
    let (u, ue) = two_prod(t, ys);
    let d = (u - xs) + te.fma(ys, ue);
    ret_f((ys - d / (3.0 * t)) * up);
}

pub fn acosh(a: &[Reg]) {
    let x = F(a[0]);
    if_(x.is_nan(), || ret_f(x + x));
    if_(x.lt(1.0), || ret_f(f64::NAN));
    if_(x.eq(1.0), || ret_f(0.0));
    if_(x.ge(ACOSH_LOG2X), || {
        if_(x.eq(f64::INFINITY), || ret_f(x));
        let (h, l) = log_dd(x);
        let (s, se) = two_sum(h, F::var(LN2.0));
        ret_f(s + (se + (l + LN2.1)));
    });
    let w = new_dd();
    if_else(
        x.lt(2.0),
        || {
            let a = x - 1.0;
            let (b, be) = two_sum(x, F::var(1.0));
            let (p, pe) = two_prod(a, b);
            let (q, qe) = dd_sqrt(p, a.fma(be, pe));
            let (v, ve) = two_sum(a, q);
            let (s, se) = two_sum(F::var(1.0), v);
            assign(w, (s, se + (ve + qe)));
        },
        || {
            let (p, pe) = two_prod(x, x);
            let (s, se) = two_sum(p, F::var(-1.0));
            let (q, qe) = dd_sqrt(s, se + pe);
            let (s, se) = two_sum(x, q);
            assign(w, (s, se + qe));
        },
    );
    let (h, l) = log_dd(w.0);
    ret_f(h + (l + w.1 / w.0));
}

pub fn sinh(a: &[Reg]) {
    let x = F(a[0]);
    let ax = x.abs();
    if_(ax.is_nan(), || ret_f(x + x));
    if_(ax.lt(TINY), || ret_f(x));
    if_(ax.ge(SINH_OVERFLOWS), || {
        ret_f(F::var(f64::INFINITY).copysign(x))
    });
    let r = new_dd();
    if_else(
        ax.lt(0.5),
        || assign(r, sinh_series(ax)),
        || {
            if_else(
                ax.lt(TANH_SATURATES),
                || {
                    let (e, el) = exp_dd(ax);
                    let (q, ql) = dd_div(F::var(1.0), F::var(0.0), e, el);
                    let (d, de) = two_sum(e, -q);
                    assign(r, (d * 0.5, (de + (el - ql)) * 0.5));
                },
                || {
                    if_else(
                        ax.lt(SINH_HALVES),
                        || {
                            let (e, el) = exp_dd(ax);
                            assign(r, (e * 0.5, el * 0.5));
                        },
                        || {
                            let (e, el) = exp_dd(ax * 0.5);
                            let (p, pe) = two_prod(e, e * 0.5);
                            if_(p.eq(f64::INFINITY), || ret_f(p.copysign(x)));
                            assign(r, (p, e.fma(el, pe)));
                        },
                    )
                },
            )
        },
    );
    ret_f((r.0 + r.1).copysign(x));
}

pub fn tanh(a: &[Reg]) {
    let x = F(a[0]);
    let ax = x.abs();
    if_(ax.is_nan(), || ret_f(x + x));
    if_(ax.lt(TINY), || ret_f(x));
    if_(ax.ge(TANH_SATURATES), || ret_f(F::var(1.0).copysign(x)));
    let r = new_dd();
    if_else(
        ax.lt(0.5),
        || {
            let (s, sl) = sinh_series(ax);
            let (p, pe) = two_prod(s, s);
            let (c2, c2e) = fast_two_sum(F::var(1.0), p);
            let (c, ce) = dd_sqrt(c2, c2e + (2.0 * s).fma(sl, pe));
            assign(r, dd_div(s, sl, c, ce));
        },
        || {
            let (e, el) = exp_dd(2.0 * ax);
            let (n, ne) = fast_two_sum(e, F::var(-1.0));
            let (d, de) = fast_two_sum(e, F::var(1.0));
            assign(r, dd_div(n, ne + el, d, de + el));
        },
    );
    ret_f((r.0 + r.1).copysign(x));
}
