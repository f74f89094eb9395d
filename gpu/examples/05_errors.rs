//! Errors: no GPU is a plain `NoDevice` error; a filter that fails on some pixel reports the
//! CPU's error for the first failing pixel, and where it is.
//!
//! `cargo run -p ndjit-gpu --example 05_errors`

use ndarray::Array2;
use ndjit_gpu::{Footprint, Gpu, GpuError, GpuFilter, Options};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let gpu = match Gpu::get(0) {
        Ok(g) => g,
        Err(GpuError::NoDevice(why)) => {
            println!("no GPU here ({why}); the CPU compiler still works:");
            let f = ndjit::Filter::compile("np.min(x)", &ndjit::Bindings::new())?;
            println!("np.min([3, 1, 2]) = {}", f.call(&[3.0, 1.0, 2.0])?);
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    // `int()` of a NaN raises in Python; the GPU records the first failing pixel.
    let f = GpuFilter::compile(
        "def f(x):\n    return int(x[4]) % 7",
        &ndjit::Bindings::new(),
    )?;
    let mut image = Array2::<f64>::from_elem((64, 64), 3.0);
    image[[40, 7]] = f64::NAN;
    image[[50, 2]] = f64::NAN;
    match f.run::<f64, f64>(
        &gpu,
        image.view().into_dyn(),
        &Options::new(Footprint::from_size(&[3, 3])),
    ) {
        Err(GpuError::Filter { pixel, error }) => {
            println!("failed at {pixel:?}: {}", error.message)
        }
        other => println!("unexpected: {:?}", other.map(|_| ())),
    }
    Ok(())
}
