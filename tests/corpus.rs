//! The data-driven corpus: every program in `tests/corpus/programs.toml`, on every input listed there.
//!
//! For each program and case this checks, once for a filter compiled without knowing the window size
//! and once for a filter compiled with `filter_size(input.len())`:
//!   1. the JIT (`Filter::call`) and the reference interpreter (`Filter::interpret`) agree bit for bit
//!      (any NaN equals any NaN), and both fail or both succeed;
//!   2. the result matches CPython + NumPy, recorded by `tests/corpus/generate.py`: NaN where NumPy gave
//!      NaN, otherwise |got - want| <= 1e-10 * max(1, |want|); `expect = "error"` means Python raised,
//!      so the filter must return a `RuntimeError`.
//!
//! Failures are collected and reported together at the end.
//!
//! Run one program (substring match on the name) with `NDJIT_CORPUS=median cargo test --test corpus`.
//! Regenerate the expectations with `python3 tests/corpus/generate.py`.

mod common;

use common::{bindings, panic_text, Expect, Program};
use std::collections::HashMap;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// What one call produced.
enum Outcome {
    Value(f64),
    Error(String),
    Panic(String),
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Value(v) => write!(f, "{v:?}"),
            Outcome::Error(e) => write!(f, "Err({})", first_line(e)),
            Outcome::Panic(p) => write!(f, "PANIC({})", first_line(p)),
        }
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

fn outcome(r: std::thread::Result<Result<f64, ndjit::RuntimeError>>) -> Outcome {
    match r {
        Ok(Ok(v)) => Outcome::Value(v),
        Ok(Err(e)) => Outcome::Error(e.to_string()),
        Err(p) => Outcome::Panic(panic_text(p)),
    }
}

/// Rule 1: the JIT and the interpreter agree exactly.
fn same_bits(a: &Outcome, b: &Outcome) -> bool {
    match (a, b) {
        (Outcome::Value(x), Outcome::Value(y)) => {
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
        }
        (Outcome::Error(_), Outcome::Error(_)) => true,
        _ => false,
    }
}

/// Rule 2: the result matches NumPy's.
fn matches_numpy(got: &Outcome, want: &Expect) -> bool {
    match (got, want) {
        (Outcome::Value(g), Expect::Value(w)) => {
            if w.is_nan() || g.is_nan() {
                return w.is_nan() && g.is_nan();
            }
            *g == *w || (g - w).abs() <= 1e-10 * w.abs().max(1.0)
        }
        (Outcome::Error(_), Expect::Text(t)) => t == "error",
        _ => false,
    }
}

/// Rule 3: where the values hold both `0.0` and `-0.0`, NumPy's `min`, `max`, `sort` and
/// quantiles choose between them by their SIMD code, which ndjit refuses to guess
/// (`src/ir/zero_signs.rs`): the refusal stands for NumPy's value there, and only there.
fn refuses_a_zero_choice(got: &Outcome, input: &[f64]) -> bool {
    let zeros = |negative: bool| {
        input
            .iter()
            .any(|&v| v == 0.0 && v.is_sign_negative() == negative)
    };
    matches!(got, Outcome::Error(e) if e.contains("both 0.0 and -0.0"))
        && zeros(true)
        && zeros(false)
}

fn compile_plain(p: &Program, b: &ndjit::Bindings) -> Result<ndjit::Filter, String> {
    match catch_unwind(AssertUnwindSafe(|| {
        ndjit::Filter::compile(p.source.as_str(), b)
    })) {
        Ok(Ok(f)) => Ok(f),
        Ok(Err(e)) => Err(format!("compile error: {e}")),
        Err(payload) => Err(format!("compile PANIC: {}", panic_text(payload))),
    }
}

fn compile_sized(p: &Program, b: &ndjit::Bindings, n: usize) -> Result<ndjit::Filter, String> {
    let r = catch_unwind(AssertUnwindSafe(|| {
        ndjit::Filter::builder(p.source.as_str())
            .bindings(b)
            .filter_size(n)
            .compile()
    }));
    match r {
        Ok(Ok(f)) => Ok(f),
        Ok(Err(e)) => Err(format!("compile error: {e}")),
        Err(payload) => Err(format!("compile PANIC: {}", panic_text(payload))),
    }
}

/// Runs one case through one compiled filter; `None` if everything agrees, else what went wrong.
fn check_case(filter: &mut ndjit::Filter, input: &[f64], want: &Expect) -> Option<String> {
    let interp = outcome(catch_unwind(AssertUnwindSafe(|| filter.interpret(input))));
    let jit = outcome(catch_unwind(AssertUnwindSafe(|| filter.call(input))));
    let mut problems = Vec::new();
    if !same_bits(&jit, &interp) {
        problems.push(format!("jit {jit} != interpreter {interp}"));
    }
    if !matches_numpy(&interp, want) && !refuses_a_zero_choice(&interp, input) {
        problems.push(format!("interpreter got {interp}, numpy want {want}"));
    }
    // When the two agree bit for bit, the interpreter's line already says it.
    if !same_bits(&jit, &interp)
        && !matches_numpy(&jit, want)
        && !refuses_a_zero_choice(&jit, input)
    {
        problems.push(format!("jit got {jit}, numpy want {want}"));
    }
    if problems.is_empty() {
        None
    } else {
        Some(problems.join("; "))
    }
}

fn show_input(v: &[f64]) -> String {
    let items: Vec<String> = v.iter().map(|x| format!("{x:?}")).collect();
    format!("[{}]", items.join(", "))
}

#[test]
fn corpus_matches_numpy() {
    let corpus = common::corpus();
    let only = std::env::var("NDJIT_CORPUS").ok().filter(|s| !s.is_empty());

    // ndjit panics are caught and reported as failures; keep their default messages out of the way.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));

    let mut failures: Vec<String> = Vec::new();
    let mut failed_programs: Vec<&str> = Vec::new();
    let (mut n_programs, mut n_cases, mut n_checks, mut n_refused) =
        (0usize, 0usize, 0usize, 0usize);

    for p in &corpus.programs {
        if let Some(only) = &only {
            if !p.name.contains(only.as_str()) {
                continue;
            }
        }
        n_programs += 1;
        n_cases += p.cases.len();
        let before = failures.len();
        let b = match bindings(p) {
            Ok(b) => b,
            Err(e) => {
                failures.push(format!("{}: corpus error: {e}", p.name));
                failed_programs.push(&p.name);
                continue;
            }
        };
        for (i, c) in p.cases.iter().enumerate() {
            if let Expect::Text(t) = &c.expect {
                if t != "error" {
                    failures.push(format!("{} case {i}: corpus error: expect = {t:?}", p.name));
                }
            }
        }

        // Not knowing the window size.
        match compile_plain(p, &b) {
            Err(e) => failures.push(format!(
                "{}: {} ({} cases not run)",
                p.name,
                first_line(&e),
                p.cases.len()
            )),
            Ok(mut f) => {
                for (i, c) in p.cases.iter().enumerate() {
                    n_checks += 1;
                    if let Some(what) = check_case(&mut f, &c.input, &c.expect) {
                        failures.push(format!(
                            "{} case {i} input {}: {what}",
                            p.name,
                            show_input(&c.input)
                        ));
                    }
                }
            }
        }

        // Knowing it: one filter per window size (scipy never calls with an empty window, so 0 is skipped).
        // Refusing to compile for a size is accepted only when NumPy raises on every case of that size
        // (e.g. `x[4]` with size 1, or 25 values times 9 weights): the compiler may prove it always fails.
        let mut sized: HashMap<usize, Result<ndjit::Filter, String>> = HashMap::new();
        for (i, c) in p.cases.iter().enumerate() {
            let n = c.input.len();
            if n == 0 {
                continue;
            }
            let entry = sized.entry(n).or_insert_with(|| {
                let r = compile_sized(p, &b, n);
                if let Err(e) = &r {
                    let always_raises = p
                        .cases
                        .iter()
                        .filter(|c| c.input.len() == n)
                        .all(|c| matches!(&c.expect, Expect::Text(t) if t == "error"));
                    if always_raises && !e.contains("PANIC") {
                        n_refused += 1;
                    } else {
                        failures.push(format!("{} [filter_size={n}]: {}", p.name, first_line(e)));
                    }
                }
                r
            });
            if let Ok(f) = entry {
                n_checks += 1;
                if let Some(what) = check_case(f, &c.input, &c.expect) {
                    failures.push(format!(
                        "{} [filter_size={n}] case {i} input {}: {what}",
                        p.name,
                        show_input(&c.input)
                    ));
                }
            }
        }
        if failures.len() > before {
            failed_programs.push(&p.name);
        }
    }

    std::panic::set_hook(default_hook);
    assert!(
        n_programs > 0,
        "no corpus program matched NDJIT_CORPUS={only:?}"
    );
    eprintln!(
        "corpus: {n_programs} programs, {n_cases} cases, {n_checks} checks, {n_refused} sized compiles refused \
         (accepted: NumPy raises for every case of that size), {} failures",
        failures.len()
    );
    if !failures.is_empty() {
        panic!(
            "corpus: {} failures in {} of {} programs ({} cases, {} checks)\nfailing programs: {}\n\n{}\n",
            failures.len(),
            failed_programs.len(),
            n_programs,
            n_cases,
            n_checks,
            failed_programs.join(", "),
            failures.join("\n")
        );
    }
}
