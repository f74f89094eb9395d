//! `scalbn(x, n)` (musl's), which the cube root and fdlibm's large-argument trigonometric
//! reduction call.

use super::dsl::*;
use crate::pir::Cls;

/// `scalbn(x, n)`: x * 2^n with at most one rounding, pre-scaling so that no intermediate
/// overflows or goes subnormal.
pub fn scalbn(a: &[crate::pir::Reg]) {
    let y = F::var(F(a[0]));
    let n = I::var(I(a[1]));
    if_else(
        n.gt(1023),
        || {
            y.set(y * fb(0x7fe0000000000000));
            n.set(n - 1023);
            if_(n.gt(1023), || {
                y.set(y * fb(0x7fe0000000000000));
                n.set(n - 1023);
                if_(n.gt(1023), || n.set(1023));
            });
        },
        || {
            if_(n.lt(-1022), || {
                // 2^-1022 * 2^53: the pre-scale that keeps x normal.
                let mul = fb(0x0010000000000000) * fb(0x4340000000000000);
                y.set(y * mul);
                n.set(n + 969);
                if_(n.lt(-1022), || {
                    y.set(y * mul);
                    n.set(n + 969);
                    if_(n.lt(-1022), || n.set(-1022));
                });
            });
        },
    );
    let scale = F::from_bits((n + 0x3ff).to_l() << 52);
    ret_f(y * scale);
}

pub fn call_scalbn(x: F, n: I) -> F {
    F(call("ndjit_scalbn", &[x.0, n.0], &[Cls::F64])[0])
}
