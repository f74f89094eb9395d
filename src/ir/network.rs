//! Medians of a known number of values as sorting networks: an optimisation pass and the one
//! Batcher network every backend emits.
//!
//! `np.median(x)` lowers to `Fill` + `ArrayOp::Sort` + `Sorted { Median }`: a call to the runtime's
//! insertion sort, ~3 comparisons per element with unpredictable branches. When the length is a
//! constant (a filter specialised to its footprint), [`expand_medians`] replaces that sequence with
//! a [`Stmt::MedianNetwork`]: Batcher's odd–even merge network ([`batcher_pairs`]) over the values,
//! each comparator being `lo = b < a ? b : a; hi = b < a ? a : b`. Those are the patterns the
//! Cranelift x86-64 backend lowers to `minsd`/`maxsd`, and only the comparators the middle element
//! depends on survive its dead-code elimination, which leaves a selection network; the GPU prunes
//! them the same way (`ndjit_gpu::codegen::sort`).
//!
//! The construct is exact (the interpreter, the JIT and the GPU agree bit for bit), and it gives
//! the runtime routine's result for every input:
//! - a comparator on two equal values leaves them in place, so the network permutes its inputs and,
//!   without NaN, sorts them by value;
//! - the only inputs it may order differently from the runtime's stable sort are equal values with
//!   different bits, which for non-NaN doubles means `-0.0` and `+0.0`. The median adds `0.0`
//!   first (`0.0 + middle`, `(0.0 + a + b) / 2`), as the runtime does, so which zero lands in the
//!   middle does not show;
//! - a NaN anywhere (detected as a NaN sum, which `inf - inf` can also produce) runs the fallback:
//!   the runtime's NaN if a value is NaN, else the original statements.
//!
//! The pass runs after folding: folding never sees a network (refolding expanded networks was
//! exponential), and values known at compile time are substituted before it
//! ([`super::substitute`]).

use super::{ArrKind, ArrayOp, BinOp, Expr, Func, SortedStat, Stmt, Ty, UnOp, Var};

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

/// A comparator on positions `(i, j)` of a pruned network: afterwards `i` holds the smaller
/// value (`i < j` in Batcher's networks; the rank executor's merges also put the minimum on the
/// higher wire).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Comparator {
    pub i: usize,
    pub j: usize,
    /// Which outputs are needed: the minimum (at `i`) and/or the maximum (at `j`).
    pub want_min: bool,
    pub want_max: bool,
}

/// The comparators of `net` (in order) that the positions `needed` depend on, with which of their
/// outputs are needed: every backend's pruning (the GPU's median networks, the CPU rank
/// executor's selections).
pub fn pruned(net: &[(usize, usize)], needed: &[usize]) -> Vec<Comparator> {
    let n = net
        .iter()
        .map(|&(i, j)| i.max(j) + 1)
        .chain(needed.iter().map(|&p| p + 1))
        .max()
        .unwrap_or(0);
    let mut live = vec![false; n];
    for &p in needed {
        live[p] = true;
    }
    let mut out = Vec::new();
    for &(i, j) in net.iter().rev() {
        let (want_min, want_max) = (live[i], live[j]);
        if !want_min && !want_max {
            continue;
        }
        live[i] = true;
        live[j] = true;
        out.push(Comparator {
            i,
            j,
            want_min,
            want_max,
        });
    }
    out.reverse();
    out
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
            let matches = matches!(&sort, Some(Stmt::ArrayOp(ArrayOp::Sort { .. }, a)) if *a == dst)
                && matches!(&stat, Some(Stmt::Sorted { stat: SortedStat::Median, arr, .. }) if *arr == dst);
            if matches
                && (2..=MAX_NETWORK_LEN as i64).contains(&n)
                && uses.get(dst.0 as usize) == Some(&3)
            {
                let (sort, stat) = (it.next().unwrap(), it.next().unwrap());
                if let Some(stmts) =
                    expand_one(func, n as usize, [s.clone(), sort.clone(), stat.clone()])
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
fn expand_one(func: &mut Func, n: usize, original: [Stmt; 3]) -> Option<Vec<Stmt>> {
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
    let (index, elem, dst) = (*index, elem.clone(), *result);
    let elems: Vec<Expr> = (0..n)
        .map(|k| elem.clone().replacing_var(index, &Expr::I64(k as i64)))
        .collect();
    // With a NaN among the values the runtime's median is its NaN (it sorts NaN last and
    // checks the last value), so the fallback tests for one before sorting: a window holding a
    // NaN then costs n tests instead of an insertion sort (a quarter of a microsecond at 25
    // values). The fallback also runs on `inf - inf` without a NaN, and then sorts.
    let fallback = vec![Stmt::If(
        any_nan(&elems),
        vec![Stmt::Assign(dst, Expr::F64(crate::runtime::MEDIAN_OF_NAN))],
        original.to_vec(),
    )];
    Some(vec![
        // The index is left at its last value, as after the fill.
        Stmt::Assign(index, Expr::I64(n as i64 - 1)),
        Stmt::MedianNetwork {
            dst,
            elems,
            fallback,
        },
    ])
}

/// Whether any of `elems` is NaN, as a network's fallback tests it.
fn any_nan(elems: &[Expr]) -> Expr {
    balanced_sum(
        0,
        elems.len(),
        &mut |k| Expr::Unary(UnOp::IsNan, Box::new(elems[k].clone())),
        &mut |a, b| Expr::Binary(BinOp::Or, Box::new(a), Box::new(b)),
    )
}

/// What the fallback of a [`Stmt::MedianNetwork`] over `elems` into `dst` assigns when one of
/// `elems` is NaN, where it is the fallback this pass builds (`if any NaN { dst = constant }
/// else { ... }`): a backend that tests for NaN itself may assign it without the fallback's
/// other statements. `None` for any other fallback.
pub fn nan_result(fallback: &[Stmt], elems: &[Expr], dst: Var) -> Option<f64> {
    let [Stmt::If(cond, then, _)] = fallback else {
        return None;
    };
    match then.as_slice() {
        [Stmt::Assign(d, Expr::F64(c))] if *d == dst && *cond == any_nan(elems) => Some(*c),
        _ => None,
    }
}

/// The order in which backends add the network's values to detect a NaN: a balanced tree, `f`
/// called on each half's sum (`add(lo_half, hi_half)`); `leaf(k)` gives value `k`. A NaN among
/// the values makes the sum NaN (so does `inf - inf`, which just takes the slower branch).
pub fn balanced_sum<T>(
    lo: usize,
    hi: usize,
    leaf: &mut impl FnMut(usize) -> T,
    add: &mut impl FnMut(T, T) -> T,
) -> T {
    if hi - lo == 1 {
        return leaf(lo);
    }
    let mid = lo + (hi - lo) / 2;
    let a = balanced_sum(lo, mid, leaf, add);
    let b = balanced_sum(mid, hi, leaf, add);
    add(a, b)
}

/// The [`Stmt::MedianNetwork`] result for NaN-free values (the interpreter's definition): the
/// values sorted in place by the network, then the runtime median's arithmetic.
pub fn median_by_network(v: &mut [f64]) -> f64 {
    for (i, j) in batcher_pairs(v.len()) {
        if v[j] < v[i] {
            v.swap(i, j);
        }
    }
    crate::runtime::middle_mean(v)
}

/// Whether a network's values are the buffer in order (`elems[k]` is `x[k]`): the median of the
/// whole footprint.
pub fn is_footprint(elems: &[Expr]) -> bool {
    elems
        .iter()
        .enumerate()
        .all(|(k, e)| matches!(e, Expr::Load(super::BUFFER, i) if **i == Expr::I64(k as i64)))
}

/// The positions of the sorted values the median reads: `[n/2]`, or `[n/2 - 1, n/2]`.
pub fn median_positions(n: usize) -> Vec<usize> {
    if n % 2 == 1 {
        vec![n / 2]
    } else {
        vec![n / 2 - 1, n / 2]
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
    use super::nan_result;
    use crate::ir::{Expr, Stmt, UnOp, Var};

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
                .contains("median network"));
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
        // The sort left is the fallback's, nested in the network.
        let sorts = |s: &Stmt| matches!(s, Stmt::ArrayOp(..));
        assert!(!ir.body.iter().any(sorts), "{ir}");
        assert!(ir.to_string().contains("median network"), "{ir}");
    }

    /// The NaN result is read from the fallback this pass builds, and from nothing else.
    #[test]
    fn the_nan_result_is_read_from_this_passes_fallback_only() {
        let f = crate::Filter::builder("np.median(x)")
            .filter_size(9)
            .compile()
            .unwrap();
        let ir = f.specialized_ir().unwrap();
        let Some(Stmt::MedianNetwork {
            dst,
            elems,
            fallback,
        }) = ir
            .body
            .iter()
            .find(|s| matches!(s, Stmt::MedianNetwork { .. }))
        else {
            panic!("no network in {ir}");
        };
        assert_eq!(
            nan_result(fallback, elems, *dst).map(f64::to_bits),
            Some(crate::runtime::MEDIAN_OF_NAN.to_bits())
        );
        // Another destination, other values, another shape: no result.
        assert_eq!(nan_result(fallback, elems, Var(dst.0 + 1)), None);
        assert_eq!(nan_result(fallback, &elems[1..], *dst), None);
        let Stmt::If(cond, then, other) = &fallback[0] else {
            panic!("{fallback:?}");
        };
        let negated = Stmt::If(
            Expr::Unary(UnOp::Not, Box::new(cond.clone())),
            then.clone(),
            other.clone(),
        );
        assert_eq!(nan_result(&[negated], elems, *dst), None);
        assert_eq!(nan_result(&fallback[..0], elems, *dst), None);
    }
}
