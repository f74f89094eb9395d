//! Per-call cost of the compiled callback, called the way scipy.ndimage calls it: through the raw
//! C function pointer, with the filter's `user_data`, one neighbourhood per call.
//!
//! For min (`min(x)`), range (`max(x) - min(x)`), weighted sum (`np.sum(x * w)` with a bound
//! weights array) and median (`np.median(x)`), over 9 and 25 values, three variants each:
//!   * `jit_general`     — `Filter::compile` (code for any window size),
//!   * `jit_specialised` — `Filter::builder(..).filter_size(n)` (straight-line code for size n),
//!   * `rust`            — a hand-written Rust loop with the same C signature, called through a
//!     function pointer too (median: copy + `sort_unstable_by(partial_cmp)` + middle).
//!
//! Criterion groups are named `call/<kernel>/<n>`. Before Criterion, a quick summary table in ns/call
//! (median of 31 batches) is printed. `NDJIT_BENCH=table` runs only the table,
//! `NDJIT_BENCH=criterion` only Criterion.

use std::ffi::c_void;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use ndjit::{Bindings, Filter, FilterFn};

const SIZES: [usize; 2] = [9, 25];
const KERNELS: [&str; 4] = ["min", "range", "wsum", "median"];

// ---- hand-written baselines, same C ABI as the compiled callback ----

/// NaN-propagating like `np.min`.
unsafe extern "C" fn rust_min(buf: *mut f64, n: isize, out: *mut f64, _ud: *mut c_void) -> i32 {
    let x = std::slice::from_raw_parts(buf, n as usize);
    let mut m = x[0];
    for &v in &x[1..] {
        if v < m || v.is_nan() {
            m = v;
        }
    }
    *out = m;
    1
}

unsafe extern "C" fn rust_range(buf: *mut f64, n: isize, out: *mut f64, _ud: *mut c_void) -> i32 {
    let x = std::slice::from_raw_parts(buf, n as usize);
    let (mut lo, mut hi) = (x[0], x[0]);
    for &v in &x[1..] {
        if v < lo || v.is_nan() {
            lo = v;
        }
        if v > hi || v.is_nan() {
            hi = v;
        }
    }
    *out = hi - lo;
    1
}

/// `user_data` points at the weights (`Vec<f64>` of the same length).
unsafe extern "C" fn rust_wsum(buf: *mut f64, n: isize, out: *mut f64, ud: *mut c_void) -> i32 {
    let x = std::slice::from_raw_parts(buf, n as usize);
    let w = &*(ud as *const Vec<f64>);
    if w.len() != x.len() {
        return 0;
    }
    let mut s = 0.0;
    for (a, b) in x.iter().zip(w.iter()) {
        s += a * b;
    }
    *out = s;
    1
}

unsafe extern "C" fn rust_median(buf: *mut f64, n: isize, out: *mut f64, _ud: *mut c_void) -> i32 {
    let x = std::slice::from_raw_parts(buf, n as usize);
    let mut v = x.to_vec();
    v.sort_unstable_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let k = v.len();
    *out = if k % 2 == 1 {
        v[k / 2]
    } else {
        0.5 * (v[k / 2 - 1] + v[k / 2])
    };
    1
}

// ---- setup ----

/// Deterministic pseudo-random values in [-1, 1) (no NaNs).
fn input(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect()
}

fn weights(n: usize) -> Vec<f64> {
    (0..n).map(|i| 1.0 + (i % 3) as f64 * 0.5).collect()
}

fn source(kernel: &str) -> &'static str {
    match kernel {
        "min" => "min(x)",
        "range" => "max(x) - min(x)",
        "wsum" => "np.sum(x * w)",
        "median" => "np.median(x)",
        _ => unreachable!(),
    }
}

/// A callable: the function pointer and its `user_data`, plus whatever keeps them alive.
struct Target {
    label: &'static str,
    f: FilterFn,
    ud: *mut c_void,
    _filter: Option<Filter>,
    // Boxed: `ud` points at the Vec itself, which must not move with the Target.
    #[allow(clippy::box_collection)]
    _weights: Option<Box<Vec<f64>>>,
}

fn targets(kernel: &str, n: usize) -> Vec<Target> {
    let mut b = Bindings::new();
    if kernel == "wsum" {
        b.set_array("w", weights(n));
    }
    let src = source(kernel);
    let general = Filter::compile(src, &b).unwrap_or_else(|e| panic!("compiling `{src}`: {e}"));
    let special = Filter::builder(src)
        .bindings(&b)
        .filter_size(n)
        .compile()
        .unwrap_or_else(|e| panic!("compiling `{src}` (n={n}): {e}"));
    let (rf, wbox): (FilterFn, Option<Box<Vec<f64>>>) = match kernel {
        "min" => (rust_min, None),
        "range" => (rust_range, None),
        "wsum" => (rust_wsum, Some(Box::new(weights(n)))),
        "median" => (rust_median, None),
        _ => unreachable!(),
    };
    let rud = wbox.as_ref().map_or(std::ptr::null_mut(), |w| {
        &**w as *const Vec<f64> as *mut c_void
    });
    vec![
        Target {
            label: "jit_general",
            f: general.callback().unwrap(),
            ud: general.user_data(),
            _filter: Some(general),
            _weights: None,
        },
        Target {
            label: "jit_specialised",
            f: special.callback().unwrap(),
            ud: special.user_data(),
            _filter: Some(special),
            _weights: None,
        },
        Target {
            label: "rust",
            f: rf,
            ud: rud,
            _filter: None,
            _weights: wbox,
        },
    ]
}

#[inline(always)]
fn call(f: FilterFn, buf: &mut [f64], ud: *mut c_void) -> f64 {
    let mut out = 0.0;
    // SAFETY: `buf` is valid for `buf.len()` values; `ud` is the matching user_data, kept alive
    // by the `Target`.
    let rc = unsafe {
        black_box(f)(
            black_box(buf.as_mut_ptr()),
            black_box(buf.len() as isize),
            &mut out,
            black_box(ud),
        )
    };
    debug_assert_eq!(rc, 1);
    black_box(rc);
    black_box(out)
}

/// Checks that the three variants agree on the input before timing them.
fn check(kernel: &str, n: usize, ts: &[Target], buf: &mut [f64]) {
    let vals: Vec<f64> = ts
        .iter()
        .map(|t| {
            let mut out = f64::NAN;
            let rc = unsafe { (t.f)(buf.as_mut_ptr(), buf.len() as isize, &mut out, t.ud) };
            assert_eq!(rc, 1, "call/{kernel}/{n}/{} failed", t.label);
            out
        })
        .collect();
    for (t, v) in ts.iter().zip(&vals) {
        assert!(
            (v - vals[2]).abs() <= 1e-12 * vals[2].abs().max(1.0),
            "call/{kernel}/{n}/{}: {v} != rust {}",
            t.label,
            vals[2]
        );
    }
}

/// ns/call: median over 31 batches, batch sized to about 2 ms.
fn ns_per_call(t: &Target, buf: &mut [f64]) -> f64 {
    let t0 = Instant::now();
    let mut calib = 0u64;
    while t0.elapsed() < Duration::from_millis(20) {
        for _ in 0..1000 {
            call(t.f, buf, t.ud);
        }
        calib += 1000;
    }
    let per = t0.elapsed().as_secs_f64() / calib as f64;
    let batch = ((2e-3 / per) as u64).max(100);
    let mut samples: Vec<f64> = (0..31)
        .map(|_| {
            let s = Instant::now();
            for _ in 0..batch {
                call(t.f, buf, t.ud);
            }
            s.elapsed().as_secs_f64() * 1e9 / batch as f64
        })
        .collect();
    samples.sort_unstable_by(|a, b| a.partial_cmp(b).unwrap());
    samples[15]
}

fn summary_table() {
    println!();
    println!(
        "== ndjit per-call cost through the C function pointer (ns/call, median of 31 batches) =="
    );
    println!(
        "{:<14} {:>13} {:>16} {:>10} {:>13} {:>16}",
        "group", "jit_general", "jit_specialised", "rust", "general/rust", "specialised/rust"
    );
    for kernel in KERNELS {
        for n in SIZES {
            let ts = targets(kernel, n);
            let mut buf = input(n, n as u64);
            check(kernel, n, &ts, &mut buf);
            let ns: Vec<f64> = ts.iter().map(|t| ns_per_call(t, &mut buf)).collect();
            println!(
                "{:<14} {:>13.2} {:>16.2} {:>10.2} {:>12.2}x {:>15.2}x",
                format!("call/{kernel}/{n}"),
                ns[0],
                ns[1],
                ns[2],
                ns[0] / ns[2],
                ns[1] / ns[2]
            );
        }
    }
    println!("sources: min `min(x)`, range `max(x) - min(x)`, wsum `np.sum(x * w)` (w bound), median `np.median(x)`");
    println!();
}

fn criterion_groups(c: &mut Criterion) {
    for kernel in KERNELS {
        for n in SIZES {
            let ts = targets(kernel, n);
            let mut buf = input(n, n as u64);
            check(kernel, n, &ts, &mut buf);
            let mut g = c.benchmark_group(format!("call/{kernel}/{n}"));
            for t in &ts {
                g.bench_function(t.label, |b| b.iter(|| call(t.f, &mut buf, t.ud)));
            }
            g.finish();
        }
    }
}

fn main() {
    let which = std::env::var("NDJIT_BENCH").unwrap_or_default();
    let bench_mode = std::env::args().any(|a| a == "--bench");
    if which != "criterion" && bench_mode {
        summary_table();
    }
    if which != "table" {
        let mut c = Criterion::default()
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(2))
            .sample_size(30)
            .configure_from_args();
        criterion_groups(&mut c);
        c.final_summary();
    }
}
