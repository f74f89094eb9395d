//! Launch on a stream of your own with a prepared kernel and reusable buffers, and time it with
//! CUDA events.
//!
//! `cargo run -p ndjit-gpu --example 06_streams_events`

use ndjit_gpu::{ArrayDesc, Dtype, Footprint, Gpu, GpuFilter, Options, Tuning};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let gpu = match Gpu::get(0) {
        Ok(g) => g,
        Err(e) => {
            println!("{e}");
            return Ok(());
        }
    };
    let n = 4096;
    let desc = ArrayDesc::contiguous(Dtype::F64, &[n, n]);
    let f = GpuFilter::compile("np.median(x)", &ndjit::Bindings::new())?;
    let opts = Options::new(Footprint::from_size(&[3, 3]));
    let prepared = f.prepare(&gpu, &desc, &desc, &opts, &Tuning::default())?;
    let input = gpu.alloc(n * n * 8)?;
    let output = gpu.alloc(n * n * 8)?;
    let err = gpu.alloc(prepared.err_bytes())?;
    let stream = gpu.new_stream()?;
    let s = stream.cu_stream();
    let (start, stop) = (gpu.event()?, gpu.event()?);
    // SAFETY: our own buffers, sized for the prepared descriptors.
    unsafe {
        gpu.memset(input.ptr(), 0x3f, n * n * 8, s)?;
        gpu.memset(err.ptr(), 0xff, prepared.err_bytes(), s)?;
        start.record(&stream)?;
        prepared.launch(&gpu, input.ptr(), output.ptr(), err.ptr(), s)?;
        stop.record(&stream)?;
    }
    println!(
        "3x3 median of {n}x{n} f64: {:.3} ms ({} registers per thread)",
        start.elapsed_ms(&stop)?,
        prepared.module.registers
    );
    Ok(())
}
