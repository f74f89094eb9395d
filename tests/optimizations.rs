//! The IR passes that make user loops fast: if-conversion, unrolling of counted loops, and the
//! exact rewrites of the chains they leave (`ir::chains`: running minima as trees, masked adds).
//! They must fire where they pay and must not change a single result.

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
