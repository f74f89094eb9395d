//! The GPU backend for the differential fuzzer (tests/fuzz/emulator.py): reads requests on
//! stdin, one a line, runs each filter's kernel in the PTX emulator and answers one line each.
//!
//! Request: `MODE ROWS COLS BITS SOURCE`, space-separated: BITS are the image's f64 bit patterns in
//! hex, comma-separated (C order); SOURCE is the filter's UTF-8 source in hex. The footprint is a
//! 3 x 3 box (`size=3`), cval 0. Answers:
//! - `ok BITS`: the output image, as the request's BITS;
//! - `raise EXCEPTION MESSAGE`: the filter failed (the Python class its CPU twin raises);
//! - `gpu-only MESSAGE`: it failed on the GPU only (a last-bit transcendental difference);
//! - `unsupported MESSAGE`: not compiled for the GPU (a refusal, not a result).
//!
//! `cargo build --release -p ndjit-gpu --example fuzz_emulate`

use ndjit_gpu::codegen::{generate, Dtype, KernelSpec, Mode};
use ndjit_gpu::{emulate, reference, ArrayDesc, GpuError};
use std::io::{self, BufRead, Write};

fn unhex(s: &str) -> Option<Vec<u8>> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

fn answer(line: &str) -> String {
    let parts: Vec<&str> = line.split(' ').collect();
    let [mode, rows, cols, bits, source] = parts[..] else {
        return "bad-request wrong field count".into();
    };
    let parsed = (|| {
        let shape = [rows.parse::<usize>().ok()?, cols.parse::<usize>().ok()?];
        let values: Vec<f64> = bits
            .split(',')
            .map(|b| u64::from_str_radix(b, 16).ok().map(f64::from_bits))
            .collect::<Option<_>>()?;
        let source = String::from_utf8(unhex(source)?).ok()?;
        Some((shape, values, source))
    })();
    let Some((shape, values, source)) = parsed else {
        return "bad-request unparsable field".into();
    };
    match run(mode, &shape, &values, &source) {
        Ok(out) => {
            let hex: Vec<String> = out.iter().map(|v| format!("{:x}", v.to_bits())).collect();
            format!("ok {}", hex.join(","))
        }
        Err(GpuError::Filter { error, .. }) => {
            format!("raise {} {}", error.exception, one_line(&error.message))
        }
        Err(GpuError::FilterGpuOnly { message, .. }) => format!("gpu-only {}", one_line(&message)),
        Err(e) => format!("unsupported {}", one_line(&e.to_string())),
    }
}

fn one_line(s: &str) -> String {
    s.replace('\n', " | ")
}

fn run(mode: &str, shape: &[usize; 2], values: &[f64], source: &str) -> Result<Vec<f64>, GpuError> {
    let f = ndjit::Filter::builder(source).filter_size(9).compile()?;
    let mut spec = KernelSpec::boxed(2, 3);
    spec.mode = mode.parse::<Mode>()?.in_filter();
    let ir = f
        .specialized_ir()
        .ok_or_else(|| GpuError::Unsupported("no specialised IR".into()))?;
    let kernel = generate(ir, f.layout(), f.bound_values(), &spec)?;
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let desc = ArrayDesc::contiguous(Dtype::F64, shape);
    let run = emulate::run(&kernel, &f, &bytes, &desc, &desc, 0)?;
    match run.error {
        Some(e) => Err(e),
        None => Ok(reference::to_f64(&run.output, Dtype::F64)),
    }
}

fn main() {
    let stdin = io::stdin();
    let mut out = io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = line.expect("read a request");
        // A panic is an answer too (the fuzzer reports it as a crash), not the end of the server.
        let reply = std::panic::catch_unwind(|| answer(line.trim_end()))
            .unwrap_or_else(|_| "crash panic in the emulator (see stderr)".into());
        writeln!(out, "{reply}").expect("write the answer");
        out.flush().expect("flush the answer");
    }
}
