//! Times a box extreme on the device under the ways its column and row passes can join
//! (`separable::Joint`), milliseconds around each call (median of 10 after two warm-ups).
//!
//! ```text
//! cargo run --release -p ndjit-gpu --example time_joints -- K SIDE JOINT...
//! ```
//! `JOINT` is `kernels`, `auto`, `tile:R` (R rows per thread), `L/R[/G]` (a strip of L lanes by
//! up to R rows a run, fewer where the image is too short to fill the device (`Strip::run`), its
//! threads taking up to G row extremes at once; G = L without it) or
//! `general` (the general kernel alone); `SRC` sets the filter (default `np.min(x)`:
//! `np.median(x)` times the median kernel under any other joint), `F64=1` float64 data.
use ndjit_gpu::codegen::separable::{Joint, Strip};
use ndjit_gpu::{ArrayDesc, Dtype, Footprint, Gpu, GpuFilter, OnDevice, Options, Tuning};
use std::time::Instant;

fn joint(spec: &str) -> Option<Joint> {
    Some(match spec {
        "kernels" => Joint::Kernels,
        "auto" => Joint::Auto,
        s => match s.strip_prefix("tile:") {
            Some(r) => Joint::Tile(r.parse().ok()?),
            None => {
                let mut n = s.split('/').map(|n| n.parse().ok());
                let (lanes, rows) = (n.next()??, n.next()??);
                // Without a group, the lanes' (the strip before groups could be wider).
                let group = n.next().unwrap_or(Some(lanes))?;
                Joint::Strip(Strip { lanes, rows, group })
            }
        },
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let usage =
        "usage: time_joints K SIDE JOINT... (JOINT: kernels, auto, tile:R, L/R[/G], general)";
    let (k, side): (usize, usize) = match (args.get(1), args.get(2)) {
        (Some(k), Some(s)) => (k.parse()?, s.parse()?),
        _ => return Err(usage.into()),
    };
    let source = std::env::var("SRC").unwrap_or_else(|_| "np.min(x)".into());
    let dt = match std::env::var("F64") {
        Ok(_) => Dtype::F64,
        Err(_) => Dtype::F32,
    };
    let gpu = Gpu::get(0)?;
    let f = GpuFilter::compile(&source, &ndjit::Bindings::new())?;
    // Values without NaN or -0.0: the passes' own time, no patch.
    let input: Vec<u8> = (0..side * side)
        .flat_map(|i| match dt {
            Dtype::F64 => ((i % 1013) as f64).to_le_bytes().to_vec(),
            _ => ((i % 1013) as f32).to_le_bytes().to_vec(),
        })
        .collect();
    let desc = ArrayDesc::contiguous(dt, &[side, side]);
    let stream = gpu.cu_stream();
    let (d_in, d_out) = (gpu.alloc(input.len())?, gpu.alloc(input.len())?);
    // SAFETY: our own buffer, of the input's size; waited for below.
    unsafe { gpu.upload(d_in.ptr(), &input, stream)? };
    let opts = Options::new(Footprint::from_size(&[k, k]));
    for spec in &args[3..] {
        let (separable, joint) = match spec.as_str() {
            "general" => (false, Joint::Auto),
            s => (true, joint(s).ok_or(usage)?),
        };
        let tuning = Tuning {
            separable: Some(separable),
            joint,
            ..Tuning::default()
        };
        let exec = OnDevice::new(&f, &gpu, Some(stream)).tuning(tuning);
        let mut times = Vec::new();
        for i in 0..12 {
            let t = Instant::now();
            // SAFETY: our own buffers, described by `desc`; every run is waited for.
            unsafe {
                f.launch_on(&exec, (d_in.ptr(), &desc), (d_out.ptr(), &desc), &opts)
                    .and_then(|p| p.finish())?;
                gpu.synchronize(stream)?;
            }
            if i > 1 {
                times.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        times.sort_by(f64::total_cmp);
        println!(
            "{source} {dt} {side}² k={k} {spec}: {:.3} ms",
            times[times.len() / 2]
        );
    }
    Ok(())
}
