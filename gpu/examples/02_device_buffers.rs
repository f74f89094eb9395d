//! Keep images on the GPU: upload once, run several filters between device buffers (no copies),
//! download once.
//!
//! `cargo run -p ndjit-gpu --example 02_device_buffers`

use ndarray::Array2;
use ndjit_gpu::{DeviceArray, Dtype, Footprint, Gpu, GpuFilter, Options};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let gpu = match Gpu::get(0) {
        Ok(g) => g,
        Err(e) => {
            println!("{e}");
            return Ok(());
        }
    };
    let image = Array2::<f32>::from_shape_fn((1024, 1024), |(i, j)| ((i ^ j) % 255) as f32);
    let input = DeviceArray::from_host(&gpu, image.view().into_dyn())?;
    let mut smooth = DeviceArray::new(&gpu, Dtype::F32, &[1024, 1024])?;
    let mut edges = DeviceArray::new(&gpu, Dtype::F32, &[1024, 1024])?;
    let mean = GpuFilter::compile("np.mean(x)", &ndjit::Bindings::new())?;
    let range = GpuFilter::compile("max(x) - min(x)", &ndjit::Bindings::new())?;
    let opts = Options::new(Footprint::from_size(&[5, 5]));
    mean.run_device(&gpu, &input, &mut smooth, &opts)?;
    // The output of one filter is the input of the next; the buffers are reused.
    range.run_device(&gpu, &smooth, &mut edges, &opts)?;
    let host = edges.to_host::<f32>(&gpu)?;
    println!(
        "range of the 5x5 mean, row 512: {:?}",
        &host.as_slice().unwrap()[512 * 1024..512 * 1024 + 6]
    );
    Ok(())
}
