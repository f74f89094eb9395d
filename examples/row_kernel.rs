//! Prints what the driver's row kernel computes for a filter on a k×k box: the specialised IR,
//! whether it runs lane groups, and Cranelift's disassembly (to read register spills and the
//! instructions per pixel behind a benchmark's number).
//!
//!     cargo run --release --example row_kernel -- 'max(x) - min(x)' 5
//!     cargo run --release --example row_kernel -- "$(cat filter.py)" 3

use ndjit::jit::kernel::{compile_row_kernel, Taps};
use ndjit::{Bindings, Filter};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(src), Some(k)) = (args.next(), args.next()) else {
        return Err("usage: row_kernel SOURCE K (the filter and the box's side)".into());
    };
    let k: usize = k.parse()?;
    let n = k
        .checked_mul(k)
        .filter(|&n| n > 0)
        .ok_or("K must be at least 1")?;
    let sized = Filter::compile(&src, &Bindings::new())?.specialize(n)?;
    let ir = sized
        .specialized_ir()
        .ok_or("only generic_filter callbacks have a row kernel")?;
    println!("{ir}");
    // Tap `t` of the box reads row `t / k` at column offset `t % k`, as the driver lays a box out.
    let taps = Taps {
        slot: (0..n).map(|t| (t / k) as u32).collect(),
        col: (0..n).map(|t| (t % k) as i64).collect(),
        slots: k,
    };
    let kernel = compile_row_kernel(ir, &taps, true)?;
    println!("lane groups: {}", kernel.lanes());
    println!("{}", kernel.disasm().unwrap_or_default());
    Ok(())
}
