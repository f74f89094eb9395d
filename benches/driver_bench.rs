//! Timings of the native n-d driver, one tab-separated line per case, for `benches/driver_bench.py`
//! (which runs the scipy/Numba anchors in the same session and prints the table):
//!
//! ```text
//! cargo bench --bench driver_bench -- [--quick] [--only SUBSTRING] [--threads 1,2]
//! ```
//! `--threads` gives the thread counts of the 1024² goal cases (default one and two).
//! Each line: `case  footprint  N  threads  median_ms  min_ms  reps`. The image is N×N float64,
//! uniform in [0, 1) (as the anchors' `rng.random`). Compiled code is cached by the driver, so the
//! timed calls measure the run; `compile` lines give the first (cold) call.

use ndarray::Array2;
use ndjit::driver::{generic_filter, generic_filter_into, Footprint, Options};
use ndjit::{Bindings, Filter};
use std::time::Instant;

fn image(n: usize, seed: u64) -> Array2<f64> {
    let mut s = seed;
    Array2::from_shape_simple_fn((n, n), || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    })
}

fn footprint(name: &str) -> Footprint {
    match name {
        "cross" => Footprint::cross(2, 1),
        k => {
            let n: usize = k
                .split('x')
                .next()
                .and_then(|v| v.parse().ok())
                .expect("footprint like 5x5");
            Footprint::from_size(&[n, n])
        }
    }
}

fn filter(case: &str) -> Filter {
    let mut b = Bindings::new();
    b.set_array("w", vec![0.1, 0.2, 0.4, 0.2, 0.1]);
    let src = match case {
        "min" => "min(x)",
        "range" => "max(x) - min(x)",
        "median" => "np.median(x)",
        "wsum" => "np.sum(x * w)",
        "mean" => "np.mean(x)",
        other => panic!("unknown case {other}"),
    };
    Filter::compile(src, &b).expect("compile")
}

/// Median and minimum (ms) of `reps` timed runs of each of `fs`, after one warm-up run each. The
/// runs alternate, one round after another, so that a burst of load on this noisy machine hits
/// every contender of a round alike: what makes a ratio of two of them trustworthy.
fn time_together(reps: usize, fs: &mut [Box<dyn FnMut() + '_>]) -> Vec<(f64, f64)> {
    for f in fs.iter_mut() {
        f();
    }
    let mut ts = vec![Vec::with_capacity(reps); fs.len()];
    for _ in 0..reps {
        for (f, t) in fs.iter_mut().zip(&mut ts) {
            let start = Instant::now();
            f();
            t.push(start.elapsed().as_secs_f64() * 1e3);
        }
    }
    ts.into_iter()
        .map(|mut t| {
            t.sort_by(|a, b| a.total_cmp(b));
            (t[t.len() / 2], t[0])
        })
        .collect()
}

/// The `--only` argument, if given.
fn only() -> Option<String> {
    std::env::args().skip_while(|a| a != "--only").nth(1)
}

/// The `--threads` argument: the thread counts of the goal cases.
fn goal_threads() -> Vec<usize> {
    std::env::args()
        .skip_while(|a| a != "--threads")
        .nth(1)
        .map_or(vec![1, 2], |v| {
            v.split(',')
                .map(|t| t.parse().expect("--threads like 1,2,4"))
                .collect()
        })
}

/// Times `case` over footprint `fp` on an N×N image with each thread count in `threads`, in
/// alternating rounds; one line per count.
fn run(case: &str, fp: &str, n: usize, threads: &[usize], reps: usize) {
    measure(case, fp, n, threads, reps, false)
}

/// As [`run`], into one output array allocated once: without the fresh output's page faults and
/// the kernel's zeroing of its pages, which a new 8 MB array costs on every call.
fn run_into(case: &str, fp: &str, n: usize, threads: &[usize], reps: usize) {
    measure(case, fp, n, threads, reps, true)
}

fn measure(case: &str, fp: &str, n: usize, threads: &[usize], reps: usize, reuse: bool) {
    let label = if reuse {
        format!("{case}/into")
    } else {
        case.to_string()
    };
    if only().is_some_and(|o| !format!("{label} {fp} {n}").contains(o.as_str())) {
        return;
    }
    let a = image(n, 0x2545F4914F6CDD1D);
    let f = filter(case);
    let mut outs: Vec<Array2<f64>> = threads.iter().map(|_| a.clone()).collect();
    let mut runs: Vec<Box<dyn FnMut() + '_>> = threads
        .iter()
        .zip(&mut outs)
        .map(|(&t, out)| {
            let (a, f) = (&a, &f);
            let opts = Options::new(footprint(fp)).threads(t);
            Box::new(move || {
                if reuse {
                    generic_filter_into(a.view(), out.view_mut(), f, &opts).expect("filter");
                    std::hint::black_box(&*out);
                } else {
                    std::hint::black_box(generic_filter(a.view(), f, &opts).expect("filter"));
                }
            }) as Box<dyn FnMut() + '_>
        })
        .collect();
    for (t, (med, min)) in threads.iter().zip(time_together(reps, &mut runs)) {
        println!("{label}\t{fp}\t{n}\t{t}\t{med:.3}\t{min:.3}\t{reps}");
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let reps = |slow: bool| {
        if quick {
            3
        } else if slow {
            5
        } else {
            11
        }
    };
    // The first call of a new filter and footprint: specialisation and row-kernel compilation.
    let compile_cases = if only().is_none_or(|o| o == "compile") {
        5
    } else {
        0
    };
    for (case, fp) in [
        ("min", "cross"),
        ("median", "5x5"),
        ("median", "7x7"),
        ("median", "9x9"),
        ("median", "11x11"),
    ]
    .into_iter()
    .take(compile_cases)
    {
        let a = image(8, 1);
        let f = filter(case);
        let t = Instant::now();
        generic_filter(a.view(), &f, &Options::new(footprint(fp)).threads(1)).expect("filter");
        let cold = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        generic_filter(a.view(), &f, &Options::new(footprint(fp)).threads(1)).expect("filter");
        let warm = t.elapsed().as_secs_f64() * 1e3;
        println!("compile\t{case} {fp}\t8\t1\t{cold:.3}\t{warm:.3}\t1");
    }
    // The goal cases at 1024², one and two threads.
    let goals = [
        ("min", "cross", false),
        ("min", "5x5", false),
        ("range", "5x5", false),
        ("wsum", "cross", false),
        ("mean", "5x5", false),
        ("median", "5x5", true),
    ];
    let threads = goal_threads();
    for (case, fp, slow) in goals {
        run(case, fp, 1024, &threads, reps(slow));
    }
    for (case, fp, slow) in goals {
        run_into(case, fp, 1024, &threads, reps(slow));
    }
    // Footprint size, one thread.
    for k in [3, 5, 7, 9, 11, 15] {
        let fp = format!("{k}x{k}");
        run("min", &fp, 1024, &[1], reps(k > 9));
        run(
            "median",
            &fp,
            1024,
            &[1],
            reps(true).min(if k > 9 { 3 } else { 5 }),
        );
    }
    // Image size, one and two threads.
    for n in [256, 512, 1024, 2048, 4096] {
        run("min", "cross", n, &[1, 2], reps(n >= 2048));
        run(
            "median",
            "5x5",
            n,
            &[1, 2],
            if n >= 2048 { 3 } else { reps(true) },
        );
    }
}
