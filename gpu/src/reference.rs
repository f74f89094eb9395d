//! The CPU reference: scipy's `generic_filter` loop with ndjit's CPU JIT as the callback.
//!
//! It gathers every neighbourhood exactly as scipy's `NI_InitFilterOffsets` maps coordinates,
//! calls [`ndjit::Filter::call`] on it, and casts as C does. The tests compare the GPU (or the
//! emulator) with it bit for bit.

use crate::codegen::{DType, KernelSpec, Mode};

/// scipy's mapping of coordinate `c` on an axis of length `n` (`NI_InitFilterOffsets`); `None` is
/// "outside" in constant mode.
pub fn map_coord(mode: Mode, c: i64, n: i64) -> Option<i64> {
    if (0..n).contains(&c) {
        return Some(c);
    }
    if mode == Mode::Constant {
        return None;
    }
    if n <= 1 {
        return Some(0);
    }
    let mut cc = c;
    Some(match mode {
        Mode::Nearest => cc.clamp(0, n - 1),
        Mode::Wrap => {
            if cc < 0 {
                cc += n * (-cc / n);
                if cc < 0 {
                    cc += n;
                }
            } else {
                cc -= n * (cc / n);
            }
            cc
        }
        Mode::Reflect => {
            let sz2 = 2 * n;
            if cc < 0 {
                if cc < -sz2 {
                    cc += sz2 * (-cc / sz2);
                }
                if cc < -n {
                    cc + sz2
                } else {
                    -cc - 1
                }
            } else {
                cc -= sz2 * (cc / sz2);
                if cc >= n {
                    sz2 - cc - 1
                } else {
                    cc
                }
            }
        }
        Mode::Mirror => {
            let sz2 = 2 * n - 2;
            if cc < 0 {
                cc += sz2 * (-cc / sz2);
                if cc <= 1 - n {
                    cc + sz2
                } else {
                    -cc
                }
            } else {
                cc -= sz2 * (cc / sz2);
                if cc >= n {
                    sz2 - cc
                } else {
                    cc
                }
            }
        }
        Mode::Constant => unreachable!(),
    })
}

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
                match map_coord(spec.mode, c, shape[a] as i64) {
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

/// Elements of `dt` (little-endian bytes) as f64, exactly.
pub fn to_f64(bytes: &[u8], dt: DType) -> Vec<f64> {
    bytes
        .chunks_exact(dt.size())
        .map(|c| match dt {
            DType::F64 => f64::from_le_bytes(c.try_into().unwrap()),
            DType::F32 => f32::from_le_bytes(c.try_into().unwrap()) as f64,
            DType::U8 => c[0] as f64,
            DType::U16 => u16::from_le_bytes(c.try_into().unwrap()) as f64,
            DType::I32 => i32::from_le_bytes(c.try_into().unwrap()) as f64,
        })
        .collect()
}

/// C's conversion of a double to `dt` as on x86-64 (what scipy's loop does): floats round to
/// nearest; integers go through `cvttsd2si` to int32 (NaN and out-of-range give INT_MIN) and keep
/// the low bits.
pub fn cast(v: f64, dt: DType) -> Vec<u8> {
    let i32v = if v > -2147483649.0 && v < 2147483648.0 {
        v as i32
    } else {
        i32::MIN
    };
    match dt {
        DType::F64 => v.to_le_bytes().to_vec(),
        DType::F32 => (v as f32).to_le_bytes().to_vec(),
        DType::U8 => vec![i32v as u8],
        DType::U16 => (i32v as u16).to_le_bytes().to_vec(),
        DType::I32 => i32v.to_le_bytes().to_vec(),
    }
}
