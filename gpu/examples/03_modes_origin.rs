//! scipy's boundary modes and origins: the corner of the output of one filter in every mode.
//!
//! `cargo run -p ndjit-gpu --example 03_modes_origin`

use ndarray::Array2;
use ndjit_gpu::{Footprint, Gpu, GpuFilter, Mode, Options};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let gpu = match Gpu::get(0) {
        Ok(g) => g,
        Err(e) => {
            println!("{e}");
            return Ok(());
        }
    };
    let f = GpuFilter::compile("x[0]", &ndjit::Bindings::new())?;
    let image = Array2::<f64>::from_shape_fn((4, 5), |(i, j)| (10 * i + j) as f64);
    for mode in [
        Mode::Reflect,
        Mode::Constant,
        Mode::Nearest,
        Mode::Mirror,
        Mode::Wrap,
    ] {
        // A 3x3 window moved one step down-right: x[0] is the pixel two up and two left.
        let opts = Options::new(Footprint::from_size(&[3, 3]))
            .mode(mode)
            .cval(-1.0)
            .origin(&[-1, -1]);
        let out: ndarray::ArrayD<f64> = f.run(&gpu, image.view().into_dyn(), &opts)?;
        println!(
            "{:<9} first row: {:?}",
            mode.name(),
            out.slice(ndarray::s![0, ..]).to_vec()
        );
    }
    Ok(())
}
