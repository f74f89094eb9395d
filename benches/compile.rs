//! Compile latency: source text to a callable C function pointer.
//!
//! Two parts, in one binary (`cargo bench --bench compile`):
//!
//! 1. A corpus summary (plain `main`-style, no Criterion): every program in
//!    `tests/corpus/programs.toml` is compiled `ROUNDS` times with `Filter::compile` and `ROUNDS`
//!    times with `.filter_size(9)`; the per-program median is printed, then the median over
//!    programs, p90, max and how many programs compile in <= 1 ms, beside the project's goal and the
//!    Numba / SymJit anchors. Programs that fail to compile are listed, not fatal.
//! 2. Criterion groups `compile/<program>` for a few representative programs (a one-liner, a `def`
//!    with a loop, a median, a NaN-aware one), each `general` and `filter_size_9`.
//!
//! Environment: `NDJIT_BENCH=corpus` runs only part 1, `NDJIT_BENCH=criterion` only part 2;
//! `NDJIT_COMPILE_ROUNDS=n` changes the number of rounds (default 30). Under `cargo test --benches`
//! (no `--bench` argument) part 1 does one round.

use std::hint::black_box;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use criterion::Criterion;
use ndjit::{Bindings, Filter};

const ROUNDS: usize = 30;
/// The window size used for the specialised compile (a 3x3 footprint).
const SIZE: usize = 9;

/// The programs Criterion measures: (corpus name, what it stands for).
const REPRESENTATIVE: &[(&str, &str)] = &[
    ("builtin_max_minus_min", "one-liner `max(x) - min(x)`"),
    ("kahan_mean", "`def` with a loop"),
    ("median_expr", "`np.median(x)`"),
    (
        "nan_spread",
        "NaN-aware (`np.isnan(w).all()`, nanmax - nanmin)",
    ),
];

#[path = "../tests/common/mod.rs"]
mod common;

use common::{bindings, panic_text};

fn load_corpus() -> Vec<common::Program> {
    common::corpus().programs
}

/// Source to a callable function pointer; `None` means general, `Some(n)` adds `filter_size(n)`.
fn compile(src: &str, b: &Bindings, size: Option<usize>) -> Result<Filter, ndjit::Error> {
    match size {
        None => Filter::compile(src, b),
        Some(n) => Filter::builder(src).bindings(b).filter_size(n).compile(),
    }
}

/// One timed compile (the drop of the filter is not timed); the error text on failure.
fn timed_compile(src: &str, b: &Bindings, size: Option<usize>) -> Result<Duration, String> {
    let r = catch_unwind(AssertUnwindSafe(|| {
        let t0 = Instant::now();
        let f = compile(black_box(src), b, size);
        let f = f.inspect(|f| {
            black_box(f.callback().unwrap());
        });
        let dt = t0.elapsed();
        (dt, f)
    }));
    match r {
        Ok((dt, Ok(f))) => {
            drop(f);
            Ok(dt)
        }
        Ok((_, Err(e))) => Err(format!(
            "compile error: {}",
            e.to_string().lines().next().unwrap_or("")
        )),
        Err(p) => Err(format!(
            "compile PANIC: {}",
            panic_text(p).lines().next().unwrap_or("")
        )),
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_unstable_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// Nearest-rank percentile of sorted data.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

struct Column {
    title: &'static str,
    medians: Vec<f64>,
}

fn corpus_summary(rounds: usize) {
    let programs = load_corpus();
    println!();
    if cfg!(debug_assertions) || rounds < 5 {
        println!("(smoke run: {} build, {rounds} round(s); not a measurement, use `cargo bench --bench compile`)", if cfg!(debug_assertions) { "debug" } else { "release" });
    }
    println!("== ndjit compile latency over the corpus: {} programs, {rounds} compiles each, median per program ==", programs.len());

    // The first compile in the process pays one-time setup (host ISA detection, allocator warm-up).
    if let Some(p) = programs.first() {
        if let Ok(b) = bindings(p) {
            if let Ok(dt) = timed_compile(&p.source, &b, None) {
                println!(
                    "first compile in the process (cold, `{}`): {:.1} µs",
                    p.name,
                    us(dt)
                );
            }
        }
    }

    let sizes: [(&str, Option<usize>); 2] = [("general", None), ("filter_size(9)", Some(SIZE))];
    let mut cols: Vec<Column> = sizes
        .iter()
        .map(|(t, _)| Column {
            title: t,
            medians: Vec::new(),
        })
        .collect();
    let mut failures: Vec<(String, &str, String)> = Vec::new();
    let width = programs
        .iter()
        .map(|p| p.name.len())
        .max()
        .unwrap_or(10)
        .max(7);

    println!();
    println!(
        "{:<width$}  {:>14}  {:>14}",
        "program", "general µs", "size=9 µs"
    );
    for p in &programs {
        let b = match bindings(p) {
            Ok(b) => b,
            Err(e) => {
                failures.push((p.name.clone(), "bindings", e));
                println!("{:<width$}  {:>14}  {:>14}", p.name, "bad bindings", "");
                continue;
            }
        };
        let mut cells = Vec::new();
        for (k, (title, size)) in sizes.iter().enumerate() {
            let mut samples = Vec::with_capacity(rounds);
            let mut err = None;
            for _ in 0..rounds {
                match timed_compile(&p.source, &b, *size) {
                    Ok(dt) => samples.push(us(dt)),
                    Err(e) => {
                        err = Some(e);
                        break;
                    }
                }
            }
            match err {
                Some(e) => {
                    failures.push((p.name.clone(), title, e));
                    cells.push("FAILED".to_string());
                }
                None => {
                    let m = median(&mut samples);
                    cols[k].medians.push(m);
                    cells.push(format!("{m:.1}"));
                }
            }
        }
        println!("{:<width$}  {:>14}  {:>14}", p.name, cells[0], cells[1]);
    }

    println!();
    println!(
        "-- summary over programs (each value is that program's median of {rounds} compiles) --"
    );
    println!(
        "{:<16} {:>9} {:>12} {:>10} {:>10} {:>10} {:>14}",
        "variant", "programs", "median µs", "p90 µs", "max µs", "mean µs", "<= 1 ms"
    );
    for c in &mut cols {
        if c.medians.is_empty() {
            println!("{:<16} {:>9}", c.title, 0);
            continue;
        }
        c.medians.sort_unstable_by(|a, b| a.partial_cmp(b).unwrap());
        let n = c.medians.len();
        let med = median(&mut c.medians.clone());
        let p90 = percentile(&c.medians, 90.0);
        let max = *c.medians.last().unwrap();
        let mean = c.medians.iter().sum::<f64>() / n as f64;
        let under = c.medians.iter().filter(|&&m| m <= 1000.0).count();
        println!(
            "{:<16} {:>9} {:>12.1} {:>10.1} {:>10.1} {:>10.1} {:>14}",
            c.title,
            n,
            med,
            p90,
            max,
            mean,
            format!("{under}/{n}")
        );
    }
    println!();
    println!("anchors: goal median <= 1000 µs (1 ms) | SymJit ~3700 µs (3.7 ms) | Numba ~300000 µs (~300 ms)");
    if let Some(c) = cols.first().filter(|c| !c.medians.is_empty()) {
        let med = median(&mut c.medians.clone());
        println!(
            "general median {med:.1} µs: {} the 1 ms goal; {:.1}x faster than SymJit, {:.0}x faster than Numba",
            if med <= 1000.0 { "meets" } else { "MISSES" },
            3700.0 / med,
            300_000.0 / med
        );
    }
    println!();
    if failures.is_empty() {
        println!("compile failures: none");
    } else {
        println!("compile failures: {}", failures.len());
        for (name, variant, e) in &failures {
            println!("  {name} [{variant}]: {e}");
        }
    }
    println!();
}

fn criterion_groups(c: &mut Criterion) {
    let programs = load_corpus();
    for (name, what) in REPRESENTATIVE {
        let Some(p) = programs.iter().find(|p| p.name == *name) else {
            eprintln!("representative program `{name}` is not in the corpus; skipped");
            continue;
        };
        let b = match bindings(p) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("`{name}`: {e}; skipped");
                continue;
            }
        };
        let src = p.source.as_str();
        println!("compile/{name}: {what}");
        let mut g = c.benchmark_group(format!("compile/{name}"));
        for (label, size) in [("general", None), ("filter_size_9", Some(SIZE))] {
            if let Err(e) = timed_compile(src, &b, size) {
                eprintln!("compile/{name}/{label}: {e}; skipped");
                continue;
            }
            // Each compile is timed on its own and its filter dropped (untimed) at once, as the
            // corpus pass does: keeping a batch of JIT modules alive would add mapping costs.
            g.bench_function(label, |bench| {
                bench.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let t0 = Instant::now();
                        let f = compile(black_box(src), &b, size).unwrap();
                        black_box(f.callback().unwrap());
                        total += t0.elapsed();
                        drop(f);
                    }
                    total
                })
            });
        }
        g.finish();
    }
}

fn main() {
    let which = std::env::var("NDJIT_BENCH").unwrap_or_default();
    let bench_mode = std::env::args().any(|a| a == "--bench");
    let rounds = std::env::var("NDJIT_COMPILE_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(if bench_mode { ROUNDS } else { 1 })
        .max(1);
    if which != "criterion" {
        corpus_summary(rounds);
    }
    if which != "corpus" {
        let mut c = Criterion::default()
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(3))
            .sample_size(30)
            .configure_from_args();
        criterion_groups(&mut c);
        c.final_summary();
    }
}
