//! Medians of a known number of values as sorting networks, written in the IR itself.
//!
//! `np.median(x)` lowers to `Fill` + `ArrayOp::Sort` + `Sorted { Median }`: a call to the runtime's
//! insertion sort, ~3 comparisons per element with unpredictable branches. When the length is a
//! constant (a filter specialised to its footprint), [`expand_medians`] replaces that sequence with
//! Batcher's odd–even merge network over scalar variables, each comparator being
//! `lo = b < a ? b : a; hi = b < a ? a : b`. Those are the patterns the Cranelift x86-64 backend
//! lowers to `minsd`/`maxsd`, and only the comparators the middle element depends on survive its
//! dead-code elimination, which leaves a selection network.
//!
//! The rewrite is exact: it is ordinary IR (so the interpreter and the JIT still agree bit for bit),
//! and it gives the runtime routine's result for every input:
//! - a comparator on two equal values leaves them in place, so the network permutes its inputs and,
//!   without NaN, sorts them by value;
//! - the only inputs it may order differently from the runtime's stable sort are equal values with
//!   different bits, which for non-NaN doubles means `-0.0` and `+0.0`. The mean of the two middle
//!   values (`(0.0 + a + b) / 2`) does not see the difference; a single middle value that is zero
//!   might, so the original statements run instead when it is zero;
//! - a NaN anywhere (detected as a NaN sum, which `inf - inf` can also produce) also runs the
//!   original statements, which give NumPy's NaN.

use super::{ArrKind, ArrayOp, BinOp, CmpOp, Expr, Func, SortedStat, Stmt, Ty, Var, VarDecl};

/// Longest array whose median becomes a network: 11×11 footprints (121 values; Batcher's network
/// for 128 values has 1471 comparators before pruning, and compiles in about 0.1 s).
pub const MAX_NETWORK_LEN: usize = 128;

/// The comparators `(i, j)`, `i < j`, of Batcher's odd–even merge sort on `n` values: after
/// applying `if v[j] < v[i] { swap }` for each in order, `v` is sorted.
pub fn batcher_pairs(n: usize) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    let mut p = 1;
    while p < n {
        let mut k = p;
        while k >= 1 {
            let mut j = k % p;
            while j + k < n {
                for i in 0..k.min(n - j - k) {
                    if (i + j) / (2 * p) == (i + j + k) / (2 * p) {
                        pairs.push((i + j, i + j + k));
                    }
                }
                j += 2 * k;
            }
            k /= 2;
        }
        p *= 2;
    }
    pairs
}

/// Rewrites every constant-length median over a scratch array used for nothing else (see the
/// module docs).
pub fn expand_medians(func: &mut Func) {
    let uses: Vec<usize> = (0..func.arrays.len())
        .map(|a| uses_of(func, super::Arr(a as u32)))
        .collect();
    let body = std::mem::take(&mut func.body);
    func.body = expand_block(func, &uses, body);
}

fn expand_block(func: &mut Func, uses: &[usize], stmts: Vec<Stmt>) -> Vec<Stmt> {
    let mut out = Vec::with_capacity(stmts.len());
    let mut it = stmts.into_iter().peekable();
    while let Some(s) = it.next() {
        let s = match s {
            Stmt::If(c, a, b) => {
                Stmt::If(c, expand_block(func, uses, a), expand_block(func, uses, b))
            }
            Stmt::Loop { body, latch } => Stmt::Loop {
                body: expand_block(func, uses, body),
                latch: expand_block(func, uses, latch),
            },
            s => s,
        };
        if let Stmt::Fill {
            dst,
            len: Expr::I64(n),
            keep: None,
            ..
        } = &s
        {
            let (dst, n) = (*dst, *n);
            let mut rest = it.clone();
            let (sort, stat) = (rest.next(), rest.next());
            let matches = matches!(&sort, Some(Stmt::ArrayOp(ArrayOp::Sort, a)) if *a == dst)
                && matches!(&stat, Some(Stmt::Sorted { stat: SortedStat::Median, arr, .. }) if *arr == dst);
            if matches
                && (2..=MAX_NETWORK_LEN as i64).contains(&n)
                && uses.get(dst.0 as usize) == Some(&3)
            {
                let (sort, stat) = (it.next().unwrap(), it.next().unwrap());
                if let Some(stmts) =
                    network_median(func, n as usize, [s.clone(), sort.clone(), stat.clone()])
                {
                    out.extend(stmts);
                } else {
                    out.extend([s, sort, stat]);
                }
                continue;
            }
        }
        out.push(s);
    }
    out
}

/// The statements replacing `original` (`Fill`, `Sort`, `Sorted { Median }`), or `None` when the
/// element is not an f64 expression.
fn network_median(func: &mut Func, n: usize, original: [Stmt; 3]) -> Option<Vec<Stmt>> {
    let Stmt::Fill {
        dst, index, elem, ..
    } = &original[0]
    else {
        return None;
    };
    let Stmt::Sorted { dst: result, .. } = &original[2] else {
        return None;
    };
    if !matches!(
        func.arrays.get(dst.0 as usize).map(|a| &a.kind),
        Some(ArrKind::Scratch { elem: Ty::F64 })
    ) || elem.ty(func) != Ty::F64
        || func.var_ty(*result) != Ty::F64
    {
        return None;
    }
    let (index, elem, result) = (*index, elem.clone(), *result);
    let mut new_var = |name: String| {
        func.vars.push(VarDecl { ty: Ty::F64, name });
        Var(func.vars.len() as u32 - 1)
    };
    let v: Vec<Var> = (0..n).map(|k| new_var(format!("%net{k}"))).collect();
    let tmp = new_var("%net_t".into());
    let sum = new_var("%net_sum".into());
    let var = |x: Var| Expr::Var(x);
    let mut out = Vec::new();
    for (k, &vk) in v.iter().enumerate() {
        out.push(Stmt::Assign(vk, subst(&elem, index, k as i64)));
    }
    // The index is left at its last value, as after the fill.
    out.push(Stmt::Assign(index, Expr::I64(n as i64 - 1)));
    out.push(Stmt::Assign(sum, sum_tree(&v)));
    let mut fast = Vec::new();
    for (i, j) in batcher_pairs(n) {
        let lt = || Expr::Cmp(CmpOp::Lt, var(v[j]).boxed(), var(v[i]).boxed());
        fast.push(Stmt::Assign(
            tmp,
            Expr::Select(lt().boxed(), var(v[j]).boxed(), var(v[i]).boxed()),
        ));
        fast.push(Stmt::Assign(
            v[j],
            Expr::Select(lt().boxed(), var(v[i]).boxed(), var(v[j]).boxed()),
        ));
        fast.push(Stmt::Assign(v[i], var(tmp)));
    }
    let add = |a: Expr, b: Expr| Expr::Binary(BinOp::Add, a.boxed(), b.boxed());
    if n % 2 == 1 {
        // ndjit_rt_median's `0.0 + middle`: which zero the network leaves in the middle (it
        // may differ from the stable sort's) does not show.
        fast.push(Stmt::Assign(result, add(Expr::F64(0.0), var(v[n / 2]))));
    } else {
        // ndjit_rt_median's `(0.0 + a + b) / 2.0`.
        let total = add(add(Expr::F64(0.0), var(v[n / 2 - 1])), var(v[n / 2]));
        fast.push(Stmt::Assign(
            result,
            Expr::Binary(BinOp::Div, total.boxed(), Expr::F64(2.0).boxed()),
        ));
    }
    let has_nan = Expr::Cmp(CmpOp::Ne, var(sum).boxed(), var(sum).boxed());
    out.push(Stmt::If(has_nan, original.to_vec(), fast));
    Some(out)
}

/// A balanced sum of the variables (any NaN among them makes it NaN).
fn sum_tree(v: &[Var]) -> Expr {
    match v {
        [x] => Expr::Var(*x),
        _ => {
            let (a, b) = v.split_at(v.len() / 2);
            Expr::Binary(BinOp::Add, sum_tree(a).boxed(), sum_tree(b).boxed())
        }
    }
}

/// `e` with the variable `index` replaced by the constant `k`.
fn subst(e: &Expr, index: Var, k: i64) -> Expr {
    match e {
        Expr::Var(v) if *v == index => Expr::I64(k),
        Expr::F64(_)
        | Expr::I64(_)
        | Expr::Bool(_)
        | Expr::Var(_)
        | Expr::Param(_)
        | Expr::IntParam(_)
        | Expr::Len(_) => e.clone(),
        Expr::Load(a, i) => Expr::Load(*a, subst(i, index, k).boxed()),
        Expr::Unary(op, x) => Expr::Unary(*op, subst(x, index, k).boxed()),
        Expr::Cast(t, x) => Expr::Cast(*t, subst(x, index, k).boxed()),
        Expr::Binary(op, a, b) => {
            Expr::Binary(*op, subst(a, index, k).boxed(), subst(b, index, k).boxed())
        }
        Expr::Cmp(op, a, b) => {
            Expr::Cmp(*op, subst(a, index, k).boxed(), subst(b, index, k).boxed())
        }
        Expr::Select(c, a, b) => Expr::Select(
            subst(c, index, k).boxed(),
            subst(a, index, k).boxed(),
            subst(b, index, k).boxed(),
        ),
        Expr::Call(f, args) => Expr::Call(*f, args.iter().map(|a| subst(a, index, k)).collect()),
    }
}

/// How many statements and expressions name the array `a`.
fn uses_of(func: &Func, a: super::Arr) -> usize {
    fn in_expr(e: &Expr, a: super::Arr) -> usize {
        let own = matches!(e, Expr::Load(x, _) | Expr::Len(x) if *x == a) as usize;
        let mut n = own;
        e.for_each_child(|c| n += in_expr(c, a));
        n
    }
    fn in_block(stmts: &[Stmt], a: super::Arr) -> usize {
        let mut n = 0;
        for s in stmts {
            n += match s {
                Stmt::Store(x, ..)
                | Stmt::Fill { dst: x, .. }
                | Stmt::ArrayOp(_, x)
                | Stmt::Sorted { arr: x, .. } => (*x == a) as usize,
                _ => 0,
            };
            super::stmt_exprs(s, |e| n += in_expr(e, a));
            super::stmt_blocks(s, |b| n += in_block(b, a));
        }
        n
    }
    in_block(&func.body, a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorts(n: usize, pairs: &[(usize, usize)], v: &mut [u32]) -> bool {
        for &(i, j) in pairs {
            if v[j] < v[i] {
                v.swap(i, j);
            }
        }
        v.windows(2).all(|w| w[0] <= w[1]) && v.len() == n
    }

    #[test]
    fn batcher_networks_sort_every_zero_one_input() {
        // The 0-1 principle: a network sorts everything iff it sorts every 0/1 sequence.
        for n in 0..=18 {
            let pairs = batcher_pairs(n);
            assert!(pairs.iter().all(|&(i, j)| i < j && j < n));
            for bits in 0u32..(1 << n) {
                let mut v: Vec<u32> = (0..n).map(|k| (bits >> k) & 1).collect();
                assert!(sorts(n, &pairs, &mut v), "n = {n}, input {bits:b}");
            }
        }
    }

    #[test]
    fn batcher_networks_sort_random_inputs_up_to_the_limit() {
        let mut state = 0x2545F4914F6CDD1Du64;
        let mut rand = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for n in 19..=MAX_NETWORK_LEN {
            let pairs = batcher_pairs(n);
            for _ in 0..2000 {
                let mut v: Vec<u32> = (0..n)
                    .map(|_| (rand() % 2 + if rand() % 3 == 0 { rand() % 7 } else { 0 }) as u32)
                    .collect();
                assert!(sorts(n, &pairs, &mut v), "n = {n}");
            }
        }
        assert_eq!(batcher_pairs(25).len(), 140);
    }
}

#[cfg(test)]
mod lowering_tests {
    /// The network gives the runtime sort's median bit for bit, zeros of both signs and NaN
    /// included, in the interpreter and in compiled code.
    #[test]
    fn network_medians_equal_the_runtime_median_bit_for_bit() {
        let general = crate::Filter::compile("np.median(x)", &crate::Bindings::new()).unwrap();
        let pool = [
            -0.0,
            0.0,
            0.0,
            -0.0,
            1.0,
            -1.0,
            2.5,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            3.0,
            -0.0,
        ];
        let mut state = 0x9E3779B97F4A7C15u64;
        for n in (2..=30).chain([49, 64, 81, 121, super::MAX_NETWORK_LEN]) {
            let sized = crate::Filter::builder("np.median(x)")
                .filter_size(n)
                .compile()
                .unwrap();
            assert!(sized
                .specialized_ir()
                .unwrap()
                .to_string()
                .contains("%net0"));
            for _ in 0..200 {
                let buf: Vec<f64> = (0..n)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        pool[(state % pool.len() as u64) as usize]
                    })
                    .collect();
                let want = general.interpret(&buf).unwrap();
                for got in [sized.interpret(&buf).unwrap(), sized.call(&buf).unwrap()] {
                    assert!(
                        want.to_bits() == got.to_bits() || (want.is_nan() && got.is_nan()),
                        "n={n} {buf:?}: {want} vs {got}"
                    );
                }
            }
        }
    }

    #[test]
    fn median_of_a_known_length_becomes_a_network() {
        let f = crate::Filter::builder("np.median(x)")
            .filter_size(25)
            .compile()
            .unwrap();
        let ir = f.specialized_ir().unwrap();
        let text = ir.to_string();
        assert!(
            !text.starts_with("Sort(") && text.contains("%net0"),
            "{text}"
        );
    }
}
