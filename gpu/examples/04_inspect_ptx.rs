//! The PTX a filter becomes (no GPU needed): what `filter.inspect_ptx()` shows in Python.
//!
//! `cargo run -p ndjit-gpu --example 04_inspect_ptx`

use ndjit_gpu::{Dtype, Footprint, GpuFilter, Options, Target};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let f = GpuFilter::compile(
        "np.sum(x * w)",
        ndjit::Bindings::new().set_array("w", vec![0.25, 0.5, 0.25]),
    )?;
    let ptx = f.ptx(
        &Options::new(Footprint::from_size(&[3])),
        1,
        Dtype::F32,
        Dtype::F32,
        Target::SM90,
    )?;
    // The weights are baked in as immediates; every add and multiply carries `.rn`.
    for line in ptx
        .lines()
        .filter(|l| l.contains("mul.rn.f64") || l.contains("add.rn.f64"))
        .take(6)
    {
        println!("{line}");
    }
    println!("... {} lines in all", ptx.lines().count());
    Ok(())
}
