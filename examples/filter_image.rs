//! The core's main job: compile a filter from Python source and apply it to an 8-bit PGM image
//! with a square window (scipy's `mode='reflect'`), printing compile and run times.
//!
//!     cargo run --release --example filter_image -- data/sample.pgm out.pgm 'np.median(x)' [size]
//!
//! (The full n-d driver with every scipy mode lives in the driver; this example keeps to one loop
//! so that the core's API is easy to see.)

use ndjit::{Bindings, Filter};
use std::error::Error;
use std::time::Instant;

fn read_pgm(path: &str) -> Result<(usize, usize, Vec<u8>), Box<dyn Error>> {
    let bytes = std::fs::read(path)?;
    // Header: "P5" width height maxval, whitespace-separated, then one byte per pixel.
    let mut fields = Vec::new();
    let mut i = 0;
    while fields.len() < 4 {
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        let start = i;
        while i < bytes.len() && !bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if start == i {
            return Err(format!("{path}: truncated PGM header").into());
        }
        fields.push(String::from_utf8_lossy(&bytes[start..i]).to_string());
    }
    if fields[0] != "P5" || fields[3] != "255" {
        return Err(format!("{path}: only 8-bit binary PGM (P5, maxval 255) is supported").into());
    }
    let (w, h): (usize, usize) = (fields[1].parse()?, fields[2].parse()?);
    let data = bytes
        .get(i + 1..i + 1 + w * h)
        .ok_or(format!("{path}: truncated pixel data"))?;
    Ok((w, h, data.to_vec()))
}

/// scipy's 'reflect' (half-sample symmetric) index for a window reaching outside `0..n`.
fn reflect(i: isize, n: isize) -> usize {
    let period = 2 * n;
    let mut k = i.rem_euclid(period);
    if k >= n {
        k = period - 1 - k;
    }
    k as usize
}

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: filter_image IN.pgm OUT.pgm SOURCE [SIZE]");
        std::process::exit(2);
    }
    let size: usize = args.get(4).map(|s| s.parse()).transpose()?.unwrap_or(3);
    let (w, h, pixels) = read_pgm(&args[1])?;
    let image: Vec<f64> = pixels.iter().map(|&p| p as f64 / 255.0).collect();

    let t = Instant::now();
    let filter = match Filter::builder(&args[3])
        .bindings(&Bindings::new())
        .filter_size(size * size)
        .compile()
    {
        Ok(f) => f,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let compile = t.elapsed();

    let r = (size / 2) as isize;
    let mut window = vec![0.0; size * size];
    let mut out = vec![0.0; w * h];
    let t = Instant::now();
    for y in 0..h as isize {
        for x in 0..w as isize {
            let mut k = 0;
            for dy in -r..=r {
                for dx in -r..=r {
                    window[k] =
                        image[reflect(y + dy, h as isize) * w + reflect(x + dx, w as isize)];
                    k += 1;
                }
            }
            out[y as usize * w + x as usize] = filter.call(&window)?;
        }
    }
    let run = t.elapsed();

    let (lo, hi) = out
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    let scale = if hi > lo { 255.0 / (hi - lo) } else { 0.0 };
    let mut bytes = format!("P5\n{w} {h}\n255\n").into_bytes();
    bytes.extend(out.iter().map(|v| ((v - lo) * scale).round() as u8));
    std::fs::write(&args[2], bytes)?;
    println!(
        "{}x{} image, {size}x{size} window: compiled in {:.3} ms, filtered in {:.1} ms ({:.1} ns/pixel); output range [{lo:.4}, {hi:.4}] written to {}",
        w,
        h,
        compile.as_secs_f64() * 1e3,
        run.as_secs_f64() * 1e3,
        run.as_secs_f64() * 1e9 / (w * h) as f64,
        args[2]
    );
    Ok(())
}
