//! Float64 dot products in the order of NumPy's BLAS (`ndjit::math::blas`): `np.dot` and `@` of
//! two vectors, and `np.linalg.norm`'s `sqrt(x.dot(x))`, as IR loops of fused multiply-adds
//! ([`MathFn::Fma`]) with the kernel's accumulators and reduction, so that every backend
//! computes NumPy's bits.

use crate::error::{ErrorKind, Exception, Result, Span};
use crate::ir::{BinOp, CmpOp, Expr, Stmt, Ty, Var};
use crate::lower::expr::{bin, cmp};
use crate::lower::value::ArrayVal;
use crate::lower::{not, Translator};
use crate::math::blas::{dot_order, DotOrder, MAX_DOT_LEN};
use crate::math::MathFn;

/// What NumPy does with one pair: `np.dot` (and the `.dot` method) treats an array of one value
/// as a scalar and multiplies (`-0.0` stays), `@` sums it like any other length (`0.0 + p`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnePair {
    Multiplied,
    Summed,
}

/// The dot product of the float64 vectors `a` and `b` (the same index variable and length).
pub(crate) fn blas_dot(
    t: &mut Translator,
    (a, b): (&ArrayVal, &ArrayVal),
    one: OnePair,
    span: Span,
) -> Result<Expr> {
    debug_assert_eq!((a.ty, b.ty), (Ty::F64, Ty::F64));
    let order = dot_order();
    if order == DotOrder::Unknown {
        return Err(t
            .err(
                ErrorKind::Unsupported,
                span,
                "a dot product of floats: this NumPy's BLAS adds it in an order ndjit does not \
                 know (ndjit reproduces OpenBLAS's AVX2 and AVX-512 kernels)",
            )
            .hint("np.sum(a * b) adds in NumPy's pairwise order, which ndjit reproduces"));
    }
    let n = t.stable(a.len.clone(), Ty::I64);
    t.check(
        cmp(CmpOp::Le, n.clone(), Expr::I64(MAX_DOT_LEN)),
        Exception::ValueError,
        "a dot product of {a} floats: past 10000 values OpenBLAS splits it among its threads, \
         in an order ndjit does not reproduce",
        span,
        n.clone(),
        Expr::I64(0),
    );
    let pair = |i: Expr| (a.at(i.clone()), b.at(i));
    let s = t.temp(Ty::F64);
    let ((), general) = t.nested(|t| {
        match order {
            DotOrder::SkylakeX => skylakex(t, &n, &pair, s),
            _ => haswell(t, &n, &pair, s),
        }
        Ok(())
    })?;
    if one == OnePair::Multiplied {
        let (x, y) = pair(Expr::I64(0));
        t.emit(Stmt::If(
            cmp(CmpOp::Eq, n, Expr::I64(1)),
            vec![Stmt::Assign(s, bin(BinOp::Mul, x, y))],
            general,
        ));
    } else {
        general.into_iter().for_each(|st| t.emit(st));
    }
    Ok(Expr::Var(s))
}

type Pair<'a> = dyn Fn(Expr) -> (Expr, Expr) + 'a;

fn fma((x, y): (Expr, Expr), acc: Var) -> Stmt {
    Stmt::Assign(acc, Expr::Call(MathFn::Fma, vec![x, y, Expr::Var(acc)]))
}

fn add(a: Var, b: Var) -> Expr {
    bin(BinOp::Add, Expr::Var(a), Expr::Var(b))
}

/// `n` rounded down to a multiple of `m` (`n >= 0`).
fn multiple(n: &Expr, m: i64) -> Expr {
    bin(
        BinOp::Mul,
        bin(BinOp::FloorDiv, n.clone(), Expr::I64(m)),
        Expr::I64(m),
    )
}

/// `for i in (from..to).step_by(step) { body(i) }`, `from` and `to` multiples of `step`.
fn blocks(t: &mut Translator, (from, to): (Expr, Expr), step: i64, body: Vec<Stmt>, i: Var) {
    t.emit(Stmt::Assign(i, from));
    let mut stmts = vec![Stmt::If(
        not(cmp(CmpOp::Lt, Expr::Var(i), to)),
        vec![Stmt::Break],
        vec![],
    )];
    stmts.extend(body);
    t.emit(Stmt::Loop {
        body: stmts,
        latch: vec![Stmt::Assign(
            i,
            bin(BinOp::Add, Expr::Var(i), Expr::I64(step)),
        )],
    });
}

/// Fresh float64 accumulators, each set to `0.0`.
fn zeros(t: &mut Translator, count: usize) -> Vec<Var> {
    (0..count)
        .map(|_| {
            let v = t.temp(Ty::F64);
            t.emit(Stmt::Assign(v, Expr::F64(0.0)));
            v
        })
        .collect()
}

/// The products from `n & -16` on, in order, into `s`: fused (SkylakeX) or each rounded.
fn tail(t: &mut Translator, (n16, n): (Expr, &Expr), pair: &Pair, s: Var, fused: bool) {
    let i = t.temp(Ty::I64);
    let (x, y) = pair(Expr::Var(i));
    let step = if fused {
        fma((x, y), s)
    } else {
        Stmt::Assign(s, bin(BinOp::Add, Expr::Var(s), bin(BinOp::Mul, x, y)))
    };
    blocks(t, (n16, n.clone()), 1, vec![step], i);
}

/// OpenBLAS's AVX-512 kernel (`ndjit::math::blas`): `acc[8k + l]` is zmm `k`, lane `l`.
fn skylakex(t: &mut Translator, n: &Expr, pair: &Pair, s: Var) {
    let (n16, n32) = (
        t.stable(multiple(n, 16), Ty::I64),
        t.stable(multiple(n, 32), Ty::I64),
    );
    let acc = zeros(t, 32);
    let i = t.temp(Ty::I64);
    let at = |j: i64| bin(BinOp::Add, Expr::Var(i), Expr::I64(j));
    let body = (0..32).map(|j| fma(pair(at(j)), acc[j as usize])).collect();
    blocks(t, (Expr::I64(0), n32.clone()), 32, body, i);
    t.emit(Stmt::Assign(s, Expr::F64(0.0)));
    // Only where a block of 16 ran does the kernel reduce its vectors (else its sum is 0.0).
    let ((), reduce) = t
        .nested(|t| {
            // Each zmm folded to a ymm: lane l plus lane l + 4, into acc[8k + l].
            let y = |k: usize, l: usize| acc[8 * k + l];
            for k in 0..4 {
                for l in 0..4 {
                    t.emit(Stmt::Assign(y(k, l), add(y(k, l), acc[8 * k + l + 4])));
                }
            }
            // At most one block of 16 more, into the ymm accumulators.
            let half: Vec<Stmt> = (0..16)
                .map(|j| {
                    let (k, l) = (j / 4, j % 4);
                    let idx = bin(BinOp::Add, n32.clone(), Expr::I64(j as i64));
                    fma(pair(idx), y(k, l))
                })
                .collect();
            t.emit(Stmt::If(
                cmp(CmpOp::Lt, n32.clone(), n16.clone()),
                half,
                vec![],
            ));
            // ((B0 + B1) + B2) + B3 lane by lane, then (C0 + C2) + (C1 + C3).
            for l in 0..4 {
                for k in 1..4 {
                    t.emit(Stmt::Assign(y(0, l), add(y(0, l), y(k, l))));
                }
            }
            let (c0, c1, c2, c3) = (y(0, 0), y(0, 1), y(0, 2), y(0, 3));
            t.emit(Stmt::Assign(c0, add(c0, c2)));
            t.emit(Stmt::Assign(c1, add(c1, c3)));
            t.emit(Stmt::Assign(s, add(c0, c1)));
            Ok(())
        })
        .expect("the reduction emits no error");
    t.emit(Stmt::If(
        cmp(CmpOp::Lt, Expr::I64(0), n16.clone()),
        reduce,
        vec![],
    ));
    tail(t, (n16, n), pair, s, true);
}

/// OpenBLAS's AVX2 kernel (`ndjit::math::blas`): `acc[4k + l]` is ymm `k`, lane `l`.
fn haswell(t: &mut Translator, n: &Expr, pair: &Pair, s: Var) {
    let n16 = t.stable(multiple(n, 16), Ty::I64);
    let acc = zeros(t, 16);
    let i = t.temp(Ty::I64);
    let at = |j: i64| bin(BinOp::Add, Expr::Var(i), Expr::I64(j));
    let body = (0..16).map(|j| fma(pair(at(j)), acc[j as usize])).collect();
    blocks(t, (Expr::I64(0), n16.clone()), 16, body, i);
    t.emit(Stmt::Assign(s, Expr::F64(0.0)));
    let v = |k: usize, l: usize| acc[4 * k + l];
    let mut reduce = Vec::new();
    // Each ymm to its two 128-bit lanes: [a0 + a2, a1 + a3].
    for k in 0..4 {
        reduce.push(Stmt::Assign(v(k, 0), add(v(k, 0), v(k, 2))));
        reduce.push(Stmt::Assign(v(k, 1), add(v(k, 1), v(k, 3))));
    }
    // (A0 + A1) + (A2 + A3) lane by lane, then the two lanes.
    for l in 0..2 {
        reduce.push(Stmt::Assign(v(0, l), add(v(0, l), v(1, l))));
        reduce.push(Stmt::Assign(v(2, l), add(v(2, l), v(3, l))));
        reduce.push(Stmt::Assign(v(0, l), add(v(0, l), v(2, l))));
    }
    reduce.push(Stmt::Assign(s, add(v(0, 0), v(0, 1))));
    t.emit(Stmt::If(
        cmp(CmpOp::Lt, Expr::I64(0), n16.clone()),
        reduce,
        vec![],
    ));
    tail(t, (n16, n), pair, s, false);
}

#[cfg(test)]
mod tests {
    use crate::math::blas::{with_dot_order, DotOrder};
    use crate::{Bindings, Filter};

    /// OpenBLAS's kernels written out plainly from the docs of `ndjit::math::blas`: the
    /// reference the lowering's IR must equal bit for bit.
    fn reference(order: DotOrder, x: &[f64], y: &[f64]) -> f64 {
        let n = x.len();
        let (n16, n32) = (n & !15, n & !31);
        let mut s = 0.0;
        match order {
            DotOrder::SkylakeX => {
                let mut a = [[0.0f64; 8]; 4];
                for b in (0..n32).step_by(32) {
                    for (k, acc) in a.iter_mut().enumerate() {
                        for (l, v) in acc.iter_mut().enumerate() {
                            *v = x[b + 8 * k + l].mul_add(y[b + 8 * k + l], *v);
                        }
                    }
                }
                if n16 > 0 {
                    let mut c = [[0.0f64; 4]; 4];
                    for k in 0..4 {
                        for l in 0..4 {
                            c[k][l] = a[k][l] + a[k][l + 4];
                            if n16 > n32 {
                                let i = n32 + 4 * k + l;
                                c[k][l] = x[i].mul_add(y[i], c[k][l]);
                            }
                        }
                    }
                    let d: Vec<f64> = (0..4)
                        .map(|l| ((c[0][l] + c[1][l]) + c[2][l]) + c[3][l])
                        .collect();
                    s = (d[0] + d[2]) + (d[1] + d[3]);
                }
                for i in n16..n {
                    s = x[i].mul_add(y[i], s);
                }
            }
            DotOrder::Haswell => {
                let mut a = [[0.0f64; 4]; 4];
                for b in (0..n16).step_by(16) {
                    for (k, acc) in a.iter_mut().enumerate() {
                        for (l, v) in acc.iter_mut().enumerate() {
                            *v = x[b + 4 * k + l].mul_add(y[b + 4 * k + l], *v);
                        }
                    }
                }
                if n16 > 0 {
                    let p: Vec<[f64; 2]> = a.iter().map(|v| [v[0] + v[2], v[1] + v[3]]).collect();
                    let lane = |l: usize| (p[0][l] + p[1][l]) + (p[2][l] + p[3][l]);
                    s = lane(0) + lane(1);
                }
                for i in n16..n {
                    s += x[i] * y[i];
                }
            }
            DotOrder::Unknown => unreachable!(),
        }
        s
    }

    /// Deterministic vectors whose products cancel and span many magnitudes.
    fn window(n: usize, seed: u64) -> Vec<f64> {
        let mut z = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..2 * n)
            .map(|_| {
                z ^= z << 13;
                z ^= z >> 7;
                z ^= z << 17;
                let unit = (z >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
                unit * 2f64.powi((z % 41) as i32 - 20)
            })
            .collect()
    }

    fn bits(v: f64) -> u64 {
        v.to_bits()
    }

    /// Every length through both blocks and the tail, both orders, the interpreter and the JIT:
    /// the reference's bits. The orders differ from each other (and from a plain sum) on most.
    #[test]
    fn dot_products_follow_each_kernels_order_bit_for_bit() {
        for order in [DotOrder::SkylakeX, DotOrder::Haswell] {
            let src = "lambda w: np.dot(w[:len(w) // 2], w[len(w) // 2:])";
            let f = with_dot_order(order, || Filter::compile(src, &Bindings::new())).unwrap();
            let mut differ = 0;
            for n in (1..=100).chain([127, 128, 129, 300]) {
                let w = window(n, n as u64 + 7);
                let (x, y) = w.split_at(n);
                let want = if n == 1 {
                    x[0] * y[0]
                } else {
                    reference(order, x, y)
                };
                assert_eq!(bits(f.call(&w).unwrap()), bits(want), "{order:?} n={n}");
                assert_eq!(
                    bits(f.interpret(&w).unwrap()),
                    bits(want),
                    "{order:?} n={n}"
                );
                let other = match order {
                    DotOrder::SkylakeX => DotOrder::Haswell,
                    _ => DotOrder::SkylakeX,
                };
                differ += (n > 1 && bits(reference(other, x, y)) != bits(want)) as usize;
            }
            assert!(
                differ > 40,
                "{order:?}: the probe vectors tell the orders apart ({differ})"
            );
        }
    }

    /// `@` of two vectors and the norm take the same order; `np.dot` of one pair is its
    /// product (`-0.0` kept), `@` of one pair a sum (`0.0`).
    #[test]
    fn matmul_and_norm_share_the_order_and_one_pair_follows_numpy() {
        let order = DotOrder::SkylakeX;
        let compile =
            |src: &str| with_dot_order(order, || Filter::compile(src, &Bindings::new())).unwrap();
        let matmul = compile("lambda w: w[:len(w) // 2] @ w[len(w) // 2:]");
        let norm = compile("lambda w: np.linalg.norm(w)");
        for n in [2, 17, 33, 50] {
            let w = window(n, 3);
            let (x, y) = w.split_at(n);
            assert_eq!(bits(matmul.call(&w).unwrap()), bits(reference(order, x, y)));
            assert_eq!(
                bits(norm.call(&w).unwrap()),
                bits(reference(order, &w, &w).sqrt())
            );
        }
        let dot = compile("lambda w: np.dot(w[:len(w) // 2], w[len(w) // 2:])");
        assert_eq!(bits(dot.call(&[-0.0, 1.0]).unwrap()), bits(-0.0));
        assert_eq!(bits(matmul.call(&[-0.0, 1.0]).unwrap()), bits(0.0));
    }

    /// An order ndjit does not know refuses float dot products at compile time (ints are
    /// exact in any order); past 10000 values they raise at run time.
    #[test]
    fn unknown_orders_and_threaded_lengths_are_refused() {
        let e = with_dot_order(DotOrder::Unknown, || {
            Filter::compile("lambda x: np.dot(x, x)", &Bindings::new())
        })
        .unwrap_err();
        assert!(e.to_string().contains("order ndjit does not know"), "{e}");
        assert!(e.to_string().contains("np.sum(a * b)"), "{e}");
        let ints = with_dot_order(DotOrder::Unknown, || {
            Filter::compile(
                "lambda x: np.dot(x.astype(int), x.astype(int))",
                &Bindings::new(),
            )
        })
        .unwrap();
        assert_eq!(ints.call(&[1.0, 2.0, 3.0]).unwrap(), 14.0);
        let f = with_dot_order(DotOrder::SkylakeX, || {
            Filter::compile("lambda x: np.dot(x, x)", &Bindings::new())
        })
        .unwrap();
        assert!(f.call(&vec![1.0; 10_000]).is_ok());
        let e = f.call(&vec![1.0; 10_001]).unwrap_err();
        assert_eq!(e.exception, crate::error::Exception::ValueError, "{e}");
    }
}
