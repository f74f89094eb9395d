//! The CPU reference: scipy's `generic_filter` loop with ndjit's CPU JIT as the callback.
//!
//! It gathers every neighbourhood with the driver's boundary mapping ([`ndjit::driver::Mode::map`],
//! scipy's `NI_InitFilterOffsets`), calls [`ndjit::Filter::call`] on it, and casts as C does. The tests compare the GPU (or the
//! emulator) with it bit for bit.

use crate::codegen::{Dtype, KernelSpec};

/// The neighbourhood of `pixel` (coordinates in the image's rank) of a C-contiguous image, in
/// scipy's buffer order.
pub fn gather(input: &[f64], shape: &[usize], spec: &KernelSpec, pixel: &[usize]) -> Vec<f64> {
    let r = shape.len();
    let mut out = Vec::with_capacity(spec.filter_size());
    let total: usize = spec.shape.iter().product();
    let mut k = vec![0usize; r];
    for flat in 0..total {
        if spec.mask[flat] {
            let mut idx = 0usize;
            let mut outside = false;
            for a in 0..r {
                let shift = (spec.shape[a] / 2) as i64 + spec.origin[a] as i64;
                let c = pixel[a] as i64 + k[a] as i64 - shift;
                match spec.mode.map(c, shape[a] as i64) {
                    Some(m) => idx = idx * shape[a] + m as usize,
                    None => outside = true,
                }
            }
            out.push(if outside { spec.cval } else { input[idx] });
        }
        // Next footprint position, last axis fastest.
        for a in (0..r).rev() {
            k[a] += 1;
            if k[a] < spec.shape[a] {
                break;
            }
            k[a] = 0;
        }
    }
    out
}

/// Runs `filter` over every pixel (C order); per pixel, the result or the error.
pub fn generic_filter(
    filter: &ndjit::Filter,
    input: &[f64],
    shape: &[usize],
    spec: &KernelSpec,
) -> Vec<std::result::Result<f64, ndjit::RuntimeError>> {
    let n: usize = shape.iter().product();
    let mut out = Vec::with_capacity(n);
    let mut pixel = vec![0usize; shape.len()];
    for _ in 0..n {
        out.push(filter.call(&gather(input, shape, spec, &pixel)));
        for a in (0..shape.len()).rev() {
            pixel[a] += 1;
            if pixel[a] < shape[a] {
                break;
            }
            pixel[a] = 0;
        }
    }
    out
}

/// Elements of `dt` (native bytes) as f64, exactly: the driver's conversion ([`Dtype::read`]).
pub fn to_f64(bytes: &[u8], dt: Dtype) -> Vec<f64> {
    bytes
        .chunks_exact(dt.itemsize())
        // SAFETY: each chunk holds one element.
        .map(|c| unsafe { dt.read(c.as_ptr()) })
        .collect()
}

/// A double as `dt` with scipy's C cast on x86-64: the driver's conversion ([`Dtype::write`]).
pub fn cast(v: f64, dt: Dtype) -> Vec<u8> {
    let mut out = vec![0u8; dt.itemsize()];
    // SAFETY: `out` holds one element.
    unsafe { dt.write(out.as_mut_ptr(), v) };
    out
}
