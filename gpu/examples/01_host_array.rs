//! Run a filter on a host `ndarray` image: the input is copied to the GPU, the result back.
//!
//! `cargo run -p ndjit-gpu --example 01_host_array`

use ndarray::Array2;
use ndjit_gpu::{Footprint, Gpu, GpuFilter, Options};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let gpu = match Gpu::get(0) {
        Ok(g) => g,
        Err(e) => {
            println!("{e}");
            return Ok(());
        }
    };
    // The same source the CPU compiler takes: a local range filter.
    let f = GpuFilter::compile("np.max(x) - np.min(x)", &ndjit::Bindings::new())?;
    let image = Array2::<f64>::from_shape_fn((480, 640), |(i, j)| ((i * 7 + j * 13) % 29) as f64);
    let out: ndarray::ArrayD<f64> = f.run(
        &gpu,
        image.view().into_dyn(),
        &Options::new(Footprint::from_size(&[3, 3])),
    )?;
    println!(
        "{} on {}: out[10, 10..15] = {:?}",
        f.filter().source(),
        gpu.name(),
        out.slice(ndarray::s![10, 10..15]).to_vec()
    );
    Ok(())
}
