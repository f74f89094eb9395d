//! The IR passes that make user loops fast: if-conversion, unrolling of counted loops, the exact
//! rewrites of the chains they leave (`ir::chains`: running minima as trees, masked adds), and the
//! path facts of early returns and checks (`ir::facts`). They must fire where they pay and must not
//! change a single result.

mod common;

use common::{same, Inputs};
use ndjit::{Bindings, Filter};

const LOOP_MIN: &str = "def f(values):\n    result = np.inf\n    for v in values:\n        if v < result:\n            result = v\n    return result";

#[test]
fn a_data_dependent_branch_becomes_a_select_and_the_loop_unrolls() {
    let f = Filter::builder(LOOP_MIN).filter_size(5).compile().unwrap();
    let spec = f.specialized_ir().unwrap().to_string();
    assert!(
        !spec.contains("loop") && !spec.contains("if "),
        "specialised IR still branches:\n{spec}"
    );
    assert!(spec.contains("select("), "{spec}");
    // The general version keeps its loop (the trip count is not known) but loses the branch.
    let general = f.ir().to_string();
    assert!(
        general.contains("loop") && !general.contains("if Lt"),
        "{general}"
    );
}

#[test]
fn passes_keep_results_bit_identical() {
    let sources = [
        LOOP_MIN,
        "def f(v):\n    lo = np.inf\n    hi = -np.inf\n    for a in v:\n        if a < lo:\n            lo = a\n        if a > hi:\n            hi = a\n    return hi - lo",
        "def f(v):\n    s = 0.0\n    n = 0\n    for a in v:\n        if not np.isnan(a):\n            s += a\n            n += 1\n    return s / n if n else np.nan",
        "def f(v):\n    t = 0.0\n    for i in range(0, len(v), 2):\n        t = t * 0.5 + v[i]\n    return t",
        "def f(v):\n    best = 0\n    for i, a in enumerate(v):\n        if a > v[best]:\n            best = i\n        elif a == v[best]:\n            best = best\n    return best",
        // Running extrema from finite and infinite starts, zeros of both signs among them.
        "def f(v):\n    r = 0.0\n    for a in v:\n        if a < r:\n            r = a\n    return r",
        "def f(v):\n    r = -0.0\n    for a in v:\n        if r < a:\n            r = a\n    return r",
        "def f(v):\n    r = 1.5\n    for a in v:\n        if a > r:\n            r = a\n    return r",
        "def f(v):\n    r = -np.inf\n    for a in v:\n        if a >= r:\n            r = a\n    return r",
        // A running minimum from the first element (may be NaN): must stay a chain.
        "def f(v):\n    r = v[0]\n    for a in v:\n        if a < r:\n            r = a\n    return r",
        // Masked sums, float and int, with the add's operands either way round.
        "def f(v):\n    s = -0.0\n    for a in v:\n        if a > 0:\n            s = a + s\n    return s",
        "def f(v):\n    k = 0\n    for a in v:\n        if a != a:\n            k += 3\n    return k",
        // Float selects of every compare the IR makes, none of them a minimum or maximum
        // (the JIT blends these through lane masks).
        "def f(v):\n    s = 0.0\n    for a in v:\n        s += a if a > 0.5 else -0.0\n        s += 2.0 if a >= 0.25 else a\n        s += a if a < -0.5 else 1.0\n        s += 0.0 if a <= 0.0 else a\n    return s",
        "def f(v):\n    s = 0.0\n    for a in v:\n        s += 3.0 if a == 0.0 else a\n        s += a if a != 1.0 else -1.0\n        s += -0.0 if np.isnan(a) else a\n        s += a * 2.0 if not np.isnan(a) else 7.0\n        s += 1.0 if np.isinf(a) else 0.5\n        s += a if np.isfinite(a) else 9.0\n    return s",
    ];
    for src in sources {
        for n in [1usize, 4, 5, 7, 9, 16, 25, 31] {
            let plain = Filter::compile(src, &Bindings::new()).unwrap();
            let sized = Filter::builder(src).filter_size(n).compile().unwrap();
            let mut gen = Inputs::new(n as u64 + src.len() as u64);
            for _ in 0..200 {
                let buf = gen.buffer(n);
                let reference = plain.interpret(&buf);
                for got in [plain.call(&buf), sized.call(&buf), sized.interpret(&buf)] {
                    assert!(
                        same(&reference, &got),
                        "{src}\n{buf:?}: {reference:?} vs {got:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn running_extrema_become_trees_and_masked_adds_leave_the_chain() {
    let sized = |src: &str, n| {
        Filter::builder(src)
            .filter_size(n)
            .compile()
            .unwrap()
            .specialized_ir()
            .unwrap()
            .to_string()
    };
    // 25 steps: 24 nodes and 12 leaves that bring in the start (only the even positions with a
    // right neighbour become left operands), each a select of a compare.
    let tree = sized(LOOP_MIN, 25);
    assert_eq!(tree.matches(" = select(Lt(").count(), 24 + 12, "{tree}");
    assert!(!tree.contains("select(%"), "the chain is gone:\n{tree}");
    // Three steps are left as a chain (no gain).
    assert!(!sized(LOOP_MIN, 3).contains("%m"));
    // A start that may be NaN keeps the chain.
    let first = sized("def f(v):\n    r = v[0]\n    for a in v:\n        if a < r:\n            r = a\n    return r", 9);
    assert!(!first.contains("%m"), "{first}");
    // Both chains of an interleaved minimum and maximum.
    let range = sized("def f(v):\n    lo = np.inf\n    hi = -np.inf\n    for a in v:\n        if a < lo:\n            lo = a\n        if a > hi:\n            hi = a\n    return hi - lo", 9);
    assert_eq!(
        range.matches(" = select(Lt(").count(),
        2 * (8 + 4),
        "{range}"
    );
    // `if c: s += a` adds a select: `s = Add(s, select(c, a, -0.0))`.
    let nanmean = sized("def f(v):\n    s = 0.0\n    for a in v:\n        if not np.isnan(a):\n            s += a\n    return s", 9);
    assert_eq!(nanmean.matches("select(%").count(), 9, "{nanmean}");
    assert!(nanmean.contains(", -0.0))"), "{nanmean}");
    // A counter's `if c: n += 1` steps by the condition as an integer.
    let count = sized("def f(v):\n    n = 0\n    for a in v:\n        if a > 0:\n            n += 1\n    return n", 9);
    assert_eq!(count.matches("Add(%").count(), 9, "{count}");
    assert!(!count.contains("select("), "{count}");
}

#[test]
fn branches_with_checks_or_calls_stay_branches() {
    // The index check must stay under its condition; a transcendental call is not speculated.
    let f = Filter::compile("def f(v):\n    r = 0.0\n    if len(v) > 3:\n        r = v[3]\n    if v[0] > 0:\n        r = np.exp(v[0])\n    return r", &Bindings::new()).unwrap();
    let ir = f.ir().to_string();
    assert_eq!(ir.matches("if ").count(), 2, "{ir}");
    assert_eq!(
        f.call(&[1.0, 2.0]).unwrap(),
        ndjit::math::MathFn::Exp.eval(&[1.0])
    );
    assert_eq!(f.call(&[-1.0, 2.0, 3.0, 4.0]).unwrap(), 4.0);
}

/// The NaN-aware mean of the benchmarks, in the way people write it.
const NAN_MEAN: &str = "def f(values):\n    total = 0.0\n    count = 0\n    for v in values:\n        if not np.isnan(v):\n            total += v\n            count += 1\n    if count == 0:\n        return np.nan\n    return total / count";

#[test]
fn an_early_return_proves_the_later_division_safe() {
    // `if count == 0: return nan` proves `count != 0`: the ZeroDivisionError check of
    // `total / count` folds away, and with it the provenance flag that fed it on every element.
    let f = Filter::builder(NAN_MEAN).filter_size(9).compile().unwrap();
    let spec = f.specialized_ir().unwrap().to_string();
    assert!(!spec.contains("check"), "{spec}");
    assert!(
        !spec.contains("And("),
        "the provenance chain is gone:\n{spec}"
    );
    // Without the early return the check stays.
    let bare = NAN_MEAN.replace("    if count == 0:\n        return np.nan\n", "");
    let g = Filter::builder(&bare).filter_size(9).compile().unwrap();
    assert!(g.specialized_ir().unwrap().to_string().contains("check"));
    let nan = f64::NAN;
    for (buf, want) in [
        (
            vec![1.0, nan, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
            43.0 / 8.0,
        ),
        (vec![nan; 9], nan),
        (vec![-0.0; 9], 0.0),
    ] {
        for got in [f.call(&buf), f.interpret(&buf)] {
            let got = got.unwrap();
            assert!(
                got.to_bits() == want.to_bits() || got.is_nan() && want.is_nan(),
                "{buf:?}: {got} vs {want}"
            );
        }
    }
    assert!(g
        .call(&[nan; 9])
        .unwrap_err()
        .message
        .contains("division by zero"));
}

#[test]
fn a_fact_ends_where_its_variables_change() {
    // `n != 0` after the first return, but `n` is then set to 0: the second test must run.
    let reassigned = "def f(v):\n    n = 0\n    for a in v:\n        if a > 0:\n            n += 1\n    if n == 0:\n        return -1.0\n    n = n - n\n    if n == 0:\n        return 5.0\n    return 7.0";
    // `k != 0` on entry to the loop, which sets `k = 0`: from the second pass on, `k == 0`.
    let in_loop = "def f(v):\n    k = len(v)\n    if k == 0:\n        return -1.0\n    t = 0.0\n    for a in v:\n        if k == 0:\n            t += 100.0\n        k = 0\n        t += a\n    return t";
    for n in [1usize, 4, 9] {
        let buf: Vec<f64> = (0..n).map(|i| i as f64 + 0.5).collect();
        // What CPython computes.
        let mut t = 0.0;
        for (i, a) in buf.iter().enumerate() {
            if i > 0 {
                t += 100.0;
            }
            t += a;
        }
        for (src, want) in [(reassigned, 5.0), (in_loop, t)] {
            let plain = Filter::compile(src, &Bindings::new()).unwrap();
            let sized = Filter::builder(src).filter_size(n).compile().unwrap();
            for got in [
                plain.call(&buf),
                plain.interpret(&buf),
                sized.call(&buf),
                sized.interpret(&buf),
            ] {
                assert_eq!(got.unwrap(), want, "{src} on {buf:?}");
            }
        }
    }
}
