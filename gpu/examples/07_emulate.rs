//! Run the generated kernel in ndjit-gpu's PTX emulator, on the CPU: the GPU's exact result
//! without a GPU (slowly), next to scipy's loop around the CPU JIT.
//!
//! `cargo run -p ndjit-gpu --example 07_emulate`

use ndjit_gpu::codegen::{generate, Dtype, KernelSpec, Mode};
use ndjit_gpu::{emulate, reference, ArrayDesc};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let f = ndjit::Filter::builder("np.sqrt(np.mean(x ** 2))")
        .filter_size(9)
        .compile()?;
    let mut spec = KernelSpec::boxed(2, 3);
    spec.mode = Mode::Wrap;
    let kernel = generate(
        f.specialized_ir().ok_or("no specialised IR")?,
        f.layout(),
        f.bound_values(),
        &spec,
    )?;
    let shape = [6, 8];
    let values: Vec<f64> = (0..48).map(|i| (i as f64 * 0.37).sin()).collect();
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let desc = ArrayDesc::contiguous(Dtype::F64, &shape);
    let run = emulate::run(&kernel, &f, &bytes, &desc, &desc, 0)?;
    let gpu = reference::to_f64(&run.output, Dtype::F64);
    let cpu: Vec<f64> = reference::generic_filter(&f, &values, &shape, &spec)
        .into_iter()
        .collect::<Result<_, _>>()?;
    let same = gpu
        .iter()
        .zip(&cpu)
        .all(|(a, b)| a.to_bits() == b.to_bits());
    println!(
        "RMS 3x3 (wrap), emulated PTX vs CPU JIT: bit-identical = {same}; out[0..4] = {:?}",
        &gpu[..4]
    );
    Ok(())
}
