//! Row-kernel compile latency over the corpus: every program specialised to a 3×3 footprint, its
//! row kernel compiled `ROUNDS` times with lane groups where they apply
//! (`compile_row_kernel`) and without (`compile_scalar_row_kernel`). Prints the median over
//! programs of each program's median, p90 and max, for the programs in lanes and for all.
//!
//!     cargo bench --bench rowkernel_compile
//!
//! `NDJIT_COMPILE_ROUNDS=n` changes the number of rounds (default 15).

use ndjit::jit::kernel::{compile_row_kernel, compile_scalar_row_kernel, Taps};
use ndjit::Filter;
use std::time::Instant;

#[path = "../tests/common/mod.rs"]
mod common;

fn median_us(rounds: usize, mut f: impl FnMut()) -> f64 {
    let mut t: Vec<f64> = (0..rounds)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

fn summary(name: &str, mut v: Vec<f64>) {
    if v.is_empty() {
        return;
    }
    v.sort_by(f64::total_cmp);
    let at = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
    println!(
        "{name:40} {:4} programs  median {:7.1} µs  p90 {:7.1} µs  max {:7.1} µs",
        v.len(),
        at(0.5),
        at(0.9),
        at(1.0)
    );
}

fn main() {
    let rounds = std::env::var("NDJIT_COMPILE_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(15);
    let taps = Taps {
        slot: (0..9).map(|t| t / 3).collect(),
        col: (0..9).map(|t| i64::from(t % 3) - 1).collect(),
        slots: 3,
    };
    let (mut lanes, mut lanes_scalar, mut all, mut all_scalar) = (vec![], vec![], vec![], vec![]);
    for p in common::corpus().programs {
        let Ok(b) = common::bindings(&p) else {
            continue;
        };
        let Ok(f) = Filter::compile(&p.source, &b).and_then(|f| f.specialize(9)) else {
            continue;
        };
        let ir = f.specialized_ir().expect("specialised");
        let Ok(k) = compile_row_kernel(ir, &taps, false) else {
            continue;
        };
        let with = median_us(rounds, || drop(compile_row_kernel(ir, &taps, false)));
        let without = median_us(rounds, || drop(compile_scalar_row_kernel(ir, &taps, false)));
        if k.lanes() {
            lanes.push(with);
            lanes_scalar.push(without);
        }
        all.push(with);
        all_scalar.push(without);
    }
    println!("row kernels of the corpus at 3×3, medians of {rounds} compiles each");
    summary("in lanes: with lane groups", lanes);
    summary("in lanes: scalar kernel alone", lanes_scalar);
    summary("all: compile_row_kernel", all);
    summary("all: scalar kernel alone", all_scalar);
}
