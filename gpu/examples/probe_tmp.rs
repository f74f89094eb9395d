use ndjit_gpu::{GpuFilter, Target};
use ndjit::driver::{Dtype, Footprint, Options};
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let src = std::env::args().nth(1).unwrap_or("np.median(x)".into());
    let tag = std::env::args().nth(2).unwrap_or("a".into());
    let f = GpuFilter::compile(&src, &ndjit::Bindings::new())?;
    for k in [3usize, 5, 7, 9, 11] {
        for dt in [Dtype::F32, Dtype::F64] {
            let ptx = f.ptx(&Options::new(Footprint::from_size(&[k, k])), 2, dt, dt, Target::SM90)?;
            std::fs::write(format!("/tmp/ptxprobe/{tag}{k}_{dt}.ptx"), ptx)?;
        }
    }
    Ok(())
}
