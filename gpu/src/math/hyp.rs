//! Hyperbolic functions and their inverses: musl's `sinh.c`, `cosh.c`, `tanh.c`, `asinh.c`,
//! `acosh.c` (returning NaN below 1, as C99 and glibc do, where musl's formulas would give numbers
//! for large negative x), `atanh.c` (built on expm1, exp, log, log1p).

use super::dsl::*;
use super::exp::expo2;
use crate::pir::Reg;

fn expm1(x: F) -> F {
    call_f("ndjit_expm1", &[x])
}
fn log(x: F) -> F {
    call_f("ndjit_log", &[x])
}
fn log1p(x: F) -> F {
    call_f("ndjit_log1p", &[x])
}

pub fn sinh(a: &[Reg]) {
    let x = F(a[0]);
    let h = F::select((x.hi() >> 31).ne(0u32), -0.5, 0.5);
    let absx = x.abs();
    let w = absx.hi();
    if_(w.lt(0x40862e42u32), || {
        let t = expm1(absx);
        if_(w.lt(0x3ff00000u32), || {
            if_(w.lt(0x3ff00000u32 - (26 << 20)), || ret_f(x));
            ret_f(h * (2.0 * t - t * t / (t + 1.0)));
        });
        ret_f(h * (t + t / (t + 1.0)));
    });
    ret_f(2.0 * h * expo2(absx));
}

pub fn cosh(a: &[Reg]) {
    let x = F(a[0]).abs();
    let w = x.hi();
    if_(w.lt(0x3fe62e42u32), || {
        if_(w.lt(0x3ff00000u32 - (26 << 20)), || ret_f(1.0));
        let t = expm1(x);
        ret_f(1.0 + t * t / (2.0 * (1.0 + t)));
    });
    if_(w.lt(0x40862e42u32), || {
        let t = call_f("ndjit_exp", &[x]);
        ret_f(0.5 * (t + 1.0 / t));
    });
    ret_f(expo2(x));
}

pub fn tanh(a: &[Reg]) {
    let x0 = F(a[0]);
    let neg = (x0.hi() >> 31).ne(0u32);
    let x = x0.abs();
    let w = x.hi();
    let t = F::var(0.0);
    if_else(
        w.gt(0x3fe193eau32),
        || {
            if_else(
                w.gt(0x40340000u32),
                || t.set(1.0 - 0.0 / x),
                || {
                    let e = expm1(2.0 * x);
                    t.set(1.0 - 2.0 / (e + 2.0));
                },
            );
        },
        || {
            if_else(
                w.gt(0x3fd058aeu32),
                || {
                    let e = expm1(2.0 * x);
                    t.set(e / (e + 2.0));
                },
                || {
                    if_else(
                        w.ge(0x00100000u32),
                        || {
                            let e = expm1(-2.0 * x);
                            t.set(-e / (e + 2.0));
                        },
                        || t.set(x),
                    );
                },
            );
        },
    );
    if_(neg, || ret_f(-t));
    ret_f(t);
}

const LN2: f64 = 0.693147180559945309417232121458176568;

/// The biased exponent field of x.
fn expo(x: F) -> U {
    (x.hi() >> 20) & 0x7ffu32
}

pub fn asinh(a: &[Reg]) {
    let x0 = F(a[0]);
    let e = expo(x0);
    let neg = (x0.hi() >> 31).ne(0u32);
    let x = F::var(x0.abs());
    if_else(
        e.ge(0x3ffu32 + 26),
        || x.set(log(x) + LN2),
        || {
            if_else(
                e.ge(0x3ffu32 + 1),
                || x.set(log(2.0 * x + 1.0 / ((x * x + 1.0).sqrt() + x))),
                || {
                    if_(e.ge(0x3ffu32 - 26), || {
                        x.set(log1p(x + x * x / ((x * x + 1.0).sqrt() + 1.0)))
                    });
                },
            );
        },
    );
    if_(neg, || ret_f(-x));
    ret_f(x);
}

pub fn acosh(a: &[Reg]) {
    let x = F(a[0]);
    // Below 1 (negative numbers included) the result is NaN, as in glibc and C99; musl's formulas
    // below would return numbers for large negative x.
    if_(x.lt(1.0), || ret_f((x - x) / (x - x)));
    let e = expo(x);
    if_(e.lt(0x3ffu32 + 1), || {
        let xm1 = x - 1.0;
        ret_f(log1p(xm1 + (xm1 * xm1 + 2.0 * xm1).sqrt()));
    });
    if_(e.lt(0x3ffu32 + 26), || {
        ret_f(log(2.0 * x - 1.0 / (x + (x * x - 1.0).sqrt())))
    });
    ret_f(log(x) + LN2);
}

pub fn atanh(a: &[Reg]) {
    let x = F(a[0]);
    let e = expo(x);
    let neg = (x.hi() >> 31).ne(0u32);
    let y = F::var(x.abs());
    if_else(
        e.lt(0x3ffu32 - 1),
        || {
            if_(e.ge(0x3ffu32 - 32), || {
                y.set(0.5 * log1p(2.0 * y + 2.0 * y * y / (1.0 - y)))
            });
        },
        || y.set(0.5 * log1p(2.0 * (y / (1.0 - y)))),
    );
    if_(neg, || ret_f(-y));
    ret_f(y);
}
