//! Row kernels with lane groups (`src/jit/lanes.rs`) against the reference interpreter: every
//! output bit for bit, on rows whose lengths leave every possible remainder after the groups,
//! on data full of NaN, ±0 and ±inf; and a failing check at every pixel position reports the
//! same first failing pixel and error as the interpreter.

use ndjit::jit::kernel::{
    compile_row_kernel, compile_scalar_row_kernel, RowKernel, Taps, GROUP_PIXELS,
};
use ndjit::{Bindings, Filter, RuntimeError};

/// A k×k footprint over k padded rows: tap `r * k + c` reads row `r` at column offset `c - k/2`.
fn square_taps(k: usize) -> Taps {
    Taps {
        slot: (0..k * k).map(|t| (t / k) as u32).collect(),
        col: (0..k * k)
            .map(|t| (t % k) as i64 - (k / 2) as i64)
            .collect(),
        slots: k,
    }
}

#[path = "common/mod.rs"]
mod common;

/// The filter specialised to a k×k footprint and its row kernel.
fn compile(src: &str, k: usize) -> (Filter, RowKernel) {
    compile_with(src, &Bindings::new(), k).unwrap_or_else(|e| panic!("{src}: {e}"))
}

fn compile_with(src: &str, b: &Bindings, k: usize) -> Result<(Filter, RowKernel), ndjit::Error> {
    let f = Filter::compile(src, b).and_then(|f| f.specialize(k * k))?;
    let ir = f.specialized_ir().expect("specialised");
    let kernel = compile_row_kernel(ir, &square_taps(k), false)?;
    Ok((f, kernel))
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 11
    }

    /// Mostly values in [-1.5, 1.5] with repeats, sometimes NaN, ±0, ±inf.
    fn value(&mut self) -> f64 {
        match self.next() % 16 {
            0 => f64::NAN,
            1 => -0.0,
            2 => 0.0,
            3 => f64::INFINITY,
            4 => f64::NEG_INFINITY,
            5 => 1.0,
            _ => (self.next() % 13) as f64 / 4.0 - 1.5,
        }
    }
}

/// What the kernel does on `rows` (k padded rows of `n + k - 1` values): all `n` outputs, or
/// the first failing pixel and its error, after the outputs before it.
type Outcome = Result<Vec<u64>, (usize, Vec<u64>, RuntimeError)>;

fn run_kernel(f: &Filter, kernel: &RowKernel, rows: &[Vec<f64>], n: usize) -> Outcome {
    let h = rows.len() / 2;
    let ptrs: Vec<*const f64> = rows.iter().map(|r| r[h..].as_ptr()).collect();
    let mut out = vec![f64::from_bits(0x7ff4_dead_beef_0000); n];
    // SAFETY: every tap of every pixel 0..n is inside its row (h values of padding on each
    // side), `out` holds n values, and the context is the specialised filter's.
    let done =
        unsafe { (kernel.entry())(ptrs.as_ptr(), n as isize, out.as_mut_ptr(), f.user_data()) };
    let bits = out.iter().map(|x| x.to_bits()).collect();
    if done as usize == n {
        return Ok(bits);
    }
    let error = f.failure().expect("a failing kernel records its error");
    f.reset();
    let done = done as usize;
    Err((done, bits[..done].to_vec(), error))
}

fn run_interpreter(f: &Filter, rows: &[Vec<f64>], n: usize) -> Outcome {
    let k = rows.len();
    let mut out = Vec::with_capacity(n);
    for j in 0..n {
        let buf: Vec<f64> = (0..k * k).map(|t| rows[t / k][j + t % k]).collect();
        match f.interpret(&buf) {
            Ok(v) => out.push(v.to_bits()),
            Err(e) => return Err((j, out, e)),
        }
    }
    Ok(out)
}

/// NaN payloads may differ between the interpreter and compiled code: compare NaNs as one.
fn canonical(o: Outcome) -> Outcome {
    let fix = |v: Vec<u64>| {
        v.into_iter()
            .map(|b| {
                if f64::from_bits(b).is_nan() {
                    f64::NAN.to_bits()
                } else {
                    b
                }
            })
            .collect()
    };
    match o {
        Ok(v) => Ok(fix(v)),
        Err((j, v, e)) => Err((j, fix(v), e)),
    }
}

fn random_rows(rng: &mut Rng, k: usize, n: usize) -> Vec<Vec<f64>> {
    (0..k)
        .map(|_| (0..n + k - 1).map(|_| rng.value()).collect())
        .collect()
}

/// Row lengths that leave every remainder after whole groups, and a long row.
fn widths() -> impl Iterator<Item = usize> {
    (1..=2 * GROUP_PIXELS + 1).chain([8 * GROUP_PIXELS + 3])
}

/// Bodies the lane groups compute (after unrolling and if-conversion), with their footprint.
const LANE_BODIES: &[(&str, usize)] = &[
    ("max(x) - min(x)", 5),
    ("np.var(x)", 5),
    ("np.nanmean(x)", 3),
    (
        "def f(x):\n    t = 0.0\n    c = 0\n    for v in x:\n        if not np.isnan(v):\n            t += v\n            c += 1\n    return t / c if c else np.nan\n",
        3,
    ),
    ("0.25 * x[1] + 0.25 * x[3] - x[4] + 0.5 * x[5] * x[7]", 3),
    ("np.count_nonzero(x > 0.5)", 3),
    ("(x[4] - np.mean(x)) / np.std(x)", 3),
    ("np.min(x) + np.max(x) * np.prod(x)", 3),
    ("sum(x) + float(any(x > 1.0)) - float(all(x < 1.0))", 3),
    ("min(x[0], x[1]) - max(x[2], x[3]) + abs(x[4]) + math.sqrt(abs(x[5]))", 3),
    ("math.exp(x[4]) + math.atan2(x[0], x[8]) + math.floor(x[1])", 3),
    ("float(int(x[4] * 10.0) // 3) + len(x) + round(x[2])", 3),
    ("x[4] > x[0]", 3),
    ("np.isinf(x[4]) + np.isfinite(x[3]) * 2.0 - np.isnan(x[0])", 3),
    (
        "def f(x):\n    s = np.sum(x) - x[4]\n    alive = x[4] > 0.5\n    return 1.0 if (alive and (s == 2.0 or s == 3.0)) or (not alive and s == 3.0) else 0.0\n",
        3,
    ),
    ("math.acos(x[4]) + x[0]", 3),
    ("math.acos(x[4]) + 1 // int(x[5])", 3),
    // Selects with a zero arm (an `and` of the mask, not a blend), of each type; `-0.0` is not
    // zero bits and keeps the blend.
    (
        "(x[0] if x[4] > 0.5 else 0.0) + (0.0 if x[3] < 0.5 else x[1]) * (-0.0 if x[2] > 0.5 else x[5])",
        3,
    ),
    (
        "def f(x):\n    k = 3 if x[4] > 0.5 else 0\n    j = 0 if x[0] > 0.5 else 5\n    b = (x[1] > 0.5) if x[2] > 0.5 else False\n    return float(k + j) + float(b)\n",
        3,
    ),
    // Counts of masks through a loop and through a sum of booleans.
    (
        "def f(x):\n    c = 0\n    for v in x:\n        if v > 0.5:\n            c += 1\n    return c * 1.5\n",
        3,
    ),
    ("np.sum(x < 0.25) - np.count_nonzero(x > 0.5)", 3),
    // Ints converted to float. Counts, and sums and differences of ints with bounds, take the
    // two-instruction conversion up to its edges (`-2**51` and `2**51`, reached by most rows
    // here); past them (`2**51 + 1` in half the windows), or where the bounds are unknown
    // (`int` of a float), the conversion goes lane by lane.
    (
        "def f(x):\n    c = 0\n    for v in x:\n        if v > 0.5:\n            c -= 3\n        else:\n            c += 1\n    return float(c) / 7.0\n",
        3,
    ),
    (
        "float(np.count_nonzero(x < -1.0) - 2**51) + float(np.count_nonzero(x > -1.0) + (2**51 - 9))",
        3,
    ),
    (
        "float(np.count_nonzero(x > -1.0) + (2**51 - 7)) - float(np.count_nonzero(x < -1.0) - (2**51 + 1))",
        3,
    ),
    (
        "float(int(x[4] * 1e17) + np.count_nonzero(x > 0.5)) if np.isfinite(x[4]) else -1.0",
        3,
    ),
    // Vector constants kept in registers (a group's first four: here 0.5 and then `-0.0`,
    // returned so that its sign shows, `-inf`; or a NaN and `inf`).
    (
        "def f(x):\n    z = -0.0 if x[1] > 0.5 else -x[2]\n    i = -math.inf if x[3] > 0.5 else z\n    k = -7 if x[4] > 0.5 else 9\n    return i if x[6] > 0.5 else float(k) * x[0]\n",
        3,
    ),
    (
        "def f(x):\n    z = np.nan if x[1] > 0.5 else x[2]\n    i = math.inf if x[3] > 0.5 else z\n    k = -7 if x[4] > 0.5 else 9\n    return i if x[6] > 0.5 else float(k) * x[0]\n",
        3,
    ),
    // More vector constants than the group keeps in registers (the rest are rematerialized),
    // of each type and of awkward bits: `-0.0`, infinities, a NaN, a negative int, `True`.
    (
        "def f(x):\n    m = x[4]\n    p = ((((1.5 * m + 2.5) * m - 0.75) * m + 3.25) * m - 1e300) * m\n    k = (3 if m > 0.5 else -7) * 5 + int(x[0] > 0.25 or True) * 9\n    z = -0.0 if x[1] > 0.5 else min(x[2], math.inf)\n    w = max(x[3], -math.inf) if x[5] < 0.5 else np.nan\n    return p + float(k) + z * 4.5 + w\n",
        3,
    ),
];

/// Bodies that keep the scalar kernel: loops, sorts and medians.
const SCALAR_BODIES: &[(&str, usize)] = &[
    ("np.median(x)", 3),
    ("np.sort(x)[2]", 3),
    ("np.argmax(x) * 1.0", 3),
];

#[test]
fn lane_groups_agree_with_the_interpreter_bit_for_bit() {
    let mut rng = Rng(17);
    for &(src, k) in LANE_BODIES.iter().chain(SCALAR_BODIES) {
        let (f, kernel) = compile(src, k);
        let lanes = LANE_BODIES.iter().any(|&(s, _)| s == src);
        assert_eq!(kernel.lanes(), lanes, "{src}: lane groups");
        for n in widths() {
            for _ in 0..4 {
                let rows = random_rows(&mut rng, k, n);
                let want = canonical(run_interpreter(&f, &rows, n));
                let got = canonical(run_kernel(&f, &kernel, &rows, n));
                assert_eq!(got, want, "{src} on a row of {n}: {rows:?}");
            }
        }
    }
}

#[test]
fn a_failing_check_in_any_lane_reports_the_first_failing_pixel() {
    // `math.acos` raises ValueError outside [-1, 1].
    let (f, kernel) = compile("math.acos(x[4]) + x[0]", 3);
    assert!(kernel.lanes());
    let mut rng = Rng(5);
    for n in widths() {
        for first in 0..n {
            // Inside [-1, 1] everywhere, except the centre of pixel `first` and of a later one.
            let mut rows: Vec<Vec<f64>> = (0..3)
                .map(|_| {
                    (0..n + 2)
                        .map(|_| (rng.next() % 9) as f64 / 4.0 - 1.0)
                        .collect()
                })
                .collect();
            rows[1][first + 1] = 1.5;
            if first + 3 < n {
                rows[1][first + 3] = -2.0;
            }
            let want = run_interpreter(&f, &rows, n);
            assert!(matches!(want, Err((j, _, _)) if j == first));
            assert_eq!(run_kernel(&f, &kernel, &rows, n), want, "row of {n}");
        }
    }
}

#[test]
fn every_corpus_program_in_lanes_agrees_with_the_scalar_kernel() {
    let mut rng = Rng(99);
    let mut in_lanes = 0;
    for p in common::corpus().programs {
        let Ok(b) = common::bindings(&p) else {
            continue;
        };
        // Programs that do not compile for a 3×3 footprint are the other tests' business.
        let Ok((f, kernel)) = compile_with(&p.source, &b, 3) else {
            continue;
        };
        if !kernel.lanes() {
            continue;
        }
        in_lanes += 1;
        let ir = f.specialized_ir().expect("specialised");
        let scalar = compile_scalar_row_kernel(ir, &square_taps(3), false).expect("scalar kernel");
        assert!(!scalar.lanes());
        for n in widths() {
            let rows = random_rows(&mut rng, 3, n);
            let want = canonical(run_kernel(&f, &scalar, &rows, n));
            let got = canonical(run_kernel(&f, &kernel, &rows, n));
            assert_eq!(
                got, want,
                "{}: {} on a row of {n}: {rows:?}",
                p.name, p.source
            );
        }
    }
    // More than half of the corpus (69 of the 119 programs that compile for 3×3 when this was
    // written) is straight-line once specialised; the rest has loops, fills or early returns.
    assert!(in_lanes > 50, "only {in_lanes} corpus programs in lanes");
}

/// A footprint over many axes has a row per tap (`m` rows of one column here): the kernel loads
/// the rows its body reads only (compiling code per row and tap took seconds at 2**14 rows), and
/// computes what the interpreter computes, whether the body reads a few taps at constant indices
/// or every tap at run-time ones.
#[test]
fn a_kernel_over_many_rows_reads_the_taps_its_body_reads() {
    let m = 4096;
    let taps = Taps {
        slot: (0..m as u32).collect(),
        col: vec![0; m],
        slots: m,
    };
    let mut rng = Rng(7);
    let n = 2 * GROUP_PIXELS + 3;
    let rows: Vec<Vec<f64>> = (0..m)
        .map(|_| (0..n).map(|_| rng.value()).collect())
        .collect();
    for src in [
        "x[5] - x[4000]",
        "x[len(x) - 1 - int(x[1] > 0) * 9]",
        "np.sum(x)",
    ] {
        let f = Filter::compile(src, &Bindings::new())
            .and_then(|f| f.specialize(m))
            .unwrap_or_else(|e| panic!("{src}: {e}"));
        let kernel = compile_row_kernel(f.specialized_ir().expect("specialised"), &taps, false)
            .unwrap_or_else(|e| panic!("{src}: {e}"));
        let ptrs: Vec<*const f64> = rows.iter().map(|r| r.as_ptr()).collect();
        let mut out = vec![0.0; n];
        // SAFETY: every tap (column 0 of its row) of every pixel 0..n is inside its row of n
        // values, `out` holds n values, and the context is the specialised filter's.
        let done =
            unsafe { (kernel.entry())(ptrs.as_ptr(), n as isize, out.as_mut_ptr(), f.user_data()) };
        assert_eq!(done as usize, n, "{src}");
        for (j, got) in out.iter().enumerate() {
            let buf: Vec<f64> = rows.iter().map(|r| r[j]).collect();
            let want = f.interpret(&buf).unwrap();
            assert!(
                want.to_bits() == got.to_bits() || (want.is_nan() && got.is_nan()),
                "{src} at {j}: {want} vs {got}"
            );
        }
    }
}

/// The disassembly of the 3×3 row kernel of `src`, which must compute lane groups.
#[cfg(target_arch = "x86_64")]
fn lane_disasm(src: &str) -> String {
    let f = Filter::compile(src, &Bindings::new())
        .and_then(|f| f.specialize(9))
        .unwrap_or_else(|e| panic!("{src}: {e}"));
    let ir = f.specialized_ir().expect("specialised");
    let kernel = compile_row_kernel(ir, &square_taps(3), true).expect("compiles");
    assert!(kernel.lanes(), "{src}: lane groups");
    kernel.disasm().expect("disassembly").to_string()
}

/// The two-instruction int-to-float conversion is taken exactly where the bounds prove it exact:
/// a count plus `2**51 - 9` (at most `2**51`) converts without the scalar `cvtsi2sd` lane by
/// lane, a count plus `2**51 - 8` (up to `2**51 + 1`) with it. (The results are compared
/// bit for bit with the interpreter's in `lane_groups_agree_with_the_interpreter_bit_for_bit`.)
#[cfg(target_arch = "x86_64")]
#[test]
fn ints_convert_in_two_instructions_only_within_their_proved_bounds() {
    let conversions = |src: &str| lane_disasm(src).matches("cvtsi2sd").count();
    let within = conversions("float(np.count_nonzero(x > 0.5) + (2**51 - 9))");
    let past = conversions("float(np.count_nonzero(x > 0.5) + (2**51 - 8))");
    // The scalar kernel (row ends) converts its one pixel either way; the group, lane by lane,
    // each of its pixels.
    assert_eq!(within, 1, "{within} conversions");
    assert_eq!(
        past,
        within + GROUP_PIXELS,
        "{within} and {past} conversions"
    );
}

/// A group keeps its first vector constants in registers across the loop, made once before it
/// (`lanes::Group::constant`), instead of reloading them from the constant pool every
/// iteration: the Game-of-Life rule's four (0.5, 2.0, 3.0, 1.0) are never loaded as vectors
/// from the pool, while a body with more keeps loading the rest.
#[cfg(target_arch = "x86_64")]
#[test]
fn a_groups_first_constants_stay_in_registers() {
    // Vector loads from the constant pool, as separate moves or as operands.
    let pool_loads = |src: &str| {
        lane_disasm(src)
            .lines()
            .filter(|l| l.contains("(%rip)") && l.contains("pd ") && !l.contains("sd "))
            .count()
    };
    let life = "def f(x):\n    s = np.sum(x) - x[4]\n    alive = x[4] > 0.5\n    return 1.0 if (alive and (s == 2.0 or s == 3.0)) or (not alive and s == 3.0) else 0.0\n";
    assert_eq!(pool_loads(life), 0, "Life's constants");
    let many = "((((((1.1 * x[4] + 2.2) * x[4] + 3.3) * x[4] + 4.4) * x[4] + 5.5) * x[4] + 6.6) * x[4] + 7.7)";
    assert!(
        pool_loads(many) >= 3,
        "seven coefficients, four in registers"
    );
}
