//! Times the driver on one thread for a filter SOURCE over a K×K box on a 1024² f64 image (or
//! ROWSxCOLS) with 15% NaN: the median of REPS calls into a preallocated output (ms). For reading
//! the effect of a code-generation change on one filter without building the Python package, or
//! the driver's cost per line (the same pixels in fewer, longer lines):
//!
//!     cargo run --release --example time_filter -- "$(cat filter.py)" 3 31
//!     cargo run --release --example time_filter -- "$(cat filter.py)" 3 31 64x16384

use ndarray::Array2;
use ndjit::driver::{generic_filter_into, Footprint, Options};
use ndjit::{Bindings, Filter};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(src), Some(k)) = (args.next(), args.next()) else {
        return Err("usage: time_filter SOURCE K [REPS [ROWSxCOLS]]".into());
    };
    let k: usize = k.parse()?;
    let reps: usize = args.next().map_or(Ok(21), |r| r.parse())?;
    let (rows, cols) = match args.next() {
        Some(shape) => {
            let (r, c) = shape.split_once('x').ok_or("the shape is ROWSxCOLS")?;
            (r.parse()?, c.parse()?)
        }
        None => (1024, 1024),
    };
    let mut s = 0x2545F4914F6CDD1Du64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    let a = Array2::from_shape_simple_fn((rows, cols), || {
        let v = next();
        if next() < 0.15 {
            f64::NAN
        } else {
            v
        }
    });
    let mut out = a.clone();
    let f = Filter::compile(&src, &Bindings::new())?;
    let opts = Options::new(Footprint::from_size(&[k, k])).threads(1);
    generic_filter_into(a.view(), out.view_mut(), &f, &opts)?;
    let mut ts = Vec::with_capacity(reps);
    for _ in 0..reps {
        let start = Instant::now();
        generic_filter_into(a.view(), out.view_mut(), &f, &opts)?;
        ts.push(start.elapsed().as_secs_f64() * 1e3);
    }
    ts.sort_by(f64::total_cmp);
    let sum: f64 = out.iter().filter(|v| !v.is_nan()).sum();
    println!(
        "median {:.3} ms, min {:.3} ms (checksum {sum})",
        ts[reps / 2],
        ts[0]
    );
    Ok(())
}
