//! How a kernel is launched on an image: the three-axis view of the arrays, the parameter values
//! in declaration order, and the grid. Shared by the CUDA runtime and the emulator.

use crate::codegen::{Dtype, Kernel, NO_RECORD, SITE_BITS};
use crate::error::{GpuError, Result};
use ndjit::driver::Resolved;

/// An array's description: element type, shape and strides **in bytes** (NumPy's convention).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrayDesc {
    pub dtype: Dtype,
    pub shape: Vec<usize>,
    pub strides: Vec<isize>,
}

impl ArrayDesc {
    /// The descriptions of a resolved run's input and output, without their pointers.
    pub fn of_run(run: &Resolved<'_>) -> (ArrayDesc, ArrayDesc) {
        let (i, o) = (run.input, run.output);
        let desc = |dtype, shape: &[usize], strides: &[isize]| ArrayDesc {
            dtype,
            shape: shape.to_vec(),
            strides: strides.to_vec(),
        };
        (
            desc(i.dtype, &i.shape, &i.strides),
            desc(o.dtype, &o.shape, &o.strides),
        )
    }
    /// A C-contiguous array.
    pub fn contiguous(dtype: Dtype, shape: &[usize]) -> ArrayDesc {
        ArrayDesc {
            dtype,
            shape: shape.to_vec(),
            strides: ndjit::driver::c_strides(shape, dtype),
        }
    }
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Strides in elements; an error when a stride is not a multiple of the element size.
    pub fn elem_strides(&self) -> Result<Vec<i64>> {
        let sz = self.dtype.itemsize() as isize;
        self.strides
            .iter()
            .map(|&s| {
                if s % sz == 0 {
                    Ok((s / sz) as i64)
                } else {
                    Err(GpuError::Unsupported(
                        "arrays whose strides are not multiples of the element size".into(),
                    ))
                }
            })
            .collect()
    }
    /// The byte span `[lo, hi)` the array covers relative to its base pointer.
    pub fn byte_span(&self) -> (isize, isize) {
        if self.is_empty() {
            return (0, 0);
        }
        let (mut lo, mut hi) = (0isize, 0isize);
        for (&n, &s) in self.shape.iter().zip(&self.strides) {
            let e = (n as isize - 1) * s;
            if e < 0 {
                lo += e;
            } else {
                hi += e;
            }
        }
        (lo, hi + self.dtype.itemsize() as isize)
    }
}

/// A kernel parameter value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PVal {
    U64(u64),
    S32(i32),
    S64(i64),
}

impl PVal {
    pub fn bits(self) -> u64 {
        match self {
            PVal::U64(v) => v,
            PVal::S32(v) => v as u32 as u64,
            PVal::S64(v) => v as u64,
        }
    }
}

/// The most rows (over the leading axes) or columns a kernel takes. The kernels compute
/// coordinates in 32 bits: a coordinate plus a window's reach (at most
/// [`crate::codegen::MAX_REACH`]), twice an axis's length (the reflect and mirror mappings), and a
/// row plus a grid's row step must all stay below 2^31.
pub const MAX_AXIS: usize = 1 << 30;

/// The image as three axes `(D, H, W)`, with element strides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub shape: [usize; 3],
    pub in_strides: [i64; 3],
    pub out_strides: [i64; 3],
}

impl Geometry {
    /// The arrays as the kernels index them; their shapes are equal (the driver checks it).
    /// Errors for what the GPU cannot address: more than 3 axes, more than [`MAX_AXIS`] rows or
    /// columns.
    pub fn new(input: &ArrayDesc, output: &ArrayDesc) -> Result<Geometry> {
        debug_assert_eq!(input.shape, output.shape);
        let r = input.shape.len();
        if !(1..=3).contains(&r) {
            return Err(GpuError::Unsupported(format!(
                "{r}-d images (the GPU backend handles 1 to 3 dimensions)"
            )));
        }
        let (is, os) = (input.elem_strides()?, output.elem_strides()?);
        let mut g = Geometry {
            shape: [1; 3],
            in_strides: [0; 3],
            out_strides: [0; 3],
        };
        for a in 0..r {
            g.shape[3 - r + a] = input.shape[a];
            g.in_strides[3 - r + a] = is[a];
            g.out_strides[3 - r + a] = os[a];
        }
        if g.shape.iter().any(|&n| n > MAX_AXIS)
            || (g.shape[0] as u64 * g.shape[1] as u64) > MAX_AXIS as u64
        {
            return Err(GpuError::Unsupported(
                "images with more than 2^30 rows or columns (the kernels' coordinates are 32-bit)"
                    .into(),
            ));
        }
        if g.shape.iter().product::<usize>() as u64 >= 1u64 << (64 - SITE_BITS) {
            return Err(GpuError::Unsupported(
                "images of more than 2^42 elements".into(),
            ));
        }
        Ok(g)
    }
    /// Both arrays have unit stride along the last axis.
    pub fn contiguous(&self) -> bool {
        self.in_strides[2] == 1 && self.out_strides[2] == 1
    }
    pub fn pixels(&self) -> usize {
        self.shape.iter().product()
    }
    /// The coordinates of linear pixel `p` in the original rank.
    pub fn unravel(&self, p: u64, rank: usize) -> Vec<usize> {
        let w = self.shape[2] as u64;
        let h = self.shape[1] as u64;
        let c = [
            (p / w / h) as usize,
            ((p / w) % h) as usize,
            (p % w) as usize,
        ];
        c[3 - rank..].to_vec()
    }
}

/// The block: the kernel's 2-d shape when the image has rows enough for it, else one row of
/// 256 threads (kernels assume at most 256 threads per block).
pub fn block(g: &Geometry, kernel: &Kernel) -> (u32, u32) {
    if g.shape[0] * g.shape[1] >= kernel.block.1 as usize {
        kernel.block
    } else {
        (256, 1)
    }
}

/// The grid for `kernel`'s outputs and rows per thread.
pub fn grid(g: &Geometry, kernel: &Kernel, block: (u32, u32)) -> (u32, u32) {
    let groups = g.shape[2].div_ceil(kernel.outputs_per_thread as usize);
    let gx = groups.div_ceil(block.0 as usize).max(1) as u32;
    let rows = (g.shape[0] * g.shape[1]).div_ceil(kernel.rows_per_thread.max(1) as usize);
    let gy = rows.div_ceil(block.1 as usize).clamp(1, 65535) as u32;
    (gx, gy)
}

/// Parameter values of `ndjit_stencil` (and `ndjit_replay` with `pixel`).
pub fn params(g: &Geometry, input: u64, output: u64, err: u64, pixel: Option<u64>) -> Vec<PVal> {
    let mut p = vec![PVal::U64(input), PVal::U64(output), PVal::U64(err)];
    p.extend(g.shape.iter().map(|&n| PVal::S32(n as i32)));
    p.extend(g.in_strides.iter().map(|&s| PVal::S64(s)));
    p.extend(g.out_strides.iter().map(|&s| PVal::S64(s)));
    if let Some(px) = pixel {
        p.push(PVal::U64(px));
    }
    p
}

/// Bytes of the error record: the key word, three detail words and the neighbourhood.
pub fn err_bytes(k: &Kernel) -> usize {
    8 * (4 + k.filter_size)
}

/// A decoded failure key: `(pixel, code)`, or `None` when nothing failed.
pub fn decode_key(key: u64) -> Option<(u64, u64)> {
    if key == u64::MAX {
        None
    } else {
        Some((key >> SITE_BITS, key & ((1 << SITE_BITS) - 1)))
    }
}

/// Turns a replay record into the error the CPU would raise for that neighbourhood.
pub fn failure(
    filter: &ndjit::Filter,
    g: &Geometry,
    rank: usize,
    pixel: u64,
    record: &[u64],
) -> GpuError {
    let coords = g.unravel(pixel, rank);
    let taps: Vec<f64> = record[4..].iter().map(|&b| f64::from_bits(b)).collect();
    // The reference interpreter, not the native code: the CUDA path never generates that
    // (`FilterBuilder::native_code`), and both raise the same error, bit for bit.
    if let Err(e) = filter.interpret(&taps) {
        return GpuError::Filter {
            pixel: coords,
            error: Box::new(e),
        };
    }
    let code = record[1];
    let message = if code == NO_RECORD || code == crate::codegen::REPLAY_OK {
        "the filter failed without recording why".to_string()
    } else {
        match filter.ir().errors.get(code as usize) {
            Some(site) => {
                let m = site
                    .message
                    .replace("{a}", &(record[2] as i64).to_string())
                    .replace("{b}", &(record[3] as i64).to_string());
                if code == crate::codegen::body::SITE_SCRATCH {
                    // The CPU grows its scratch arrays; a GPU thread's local memory is fixed.
                    format!("{m} on the GPU (a thread's local memory is smaller): run this filter on the CPU")
                } else {
                    m
                }
            }
            None => format!("the filter failed (error site {code})"),
        }
    };
    GpuError::FilterGpuOnly {
        pixel: coords,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_past_what_32_bit_coordinates_hold_are_refused() {
        let g = |shape: &[usize]| {
            let d = ArrayDesc::contiguous(Dtype::U8, shape);
            Geometry::new(&d, &d)
        };
        assert!(g(&[MAX_AXIS]).is_ok());
        assert!(g(&[2, MAX_AXIS / 2]).is_ok());
        for shape in [
            &[MAX_AXIS + 1][..],
            &[2, MAX_AXIS / 2 + 1, 1],
            &[MAX_AXIS + 1, 1],
        ] {
            match g(shape) {
                Err(GpuError::Unsupported(m)) => assert!(m.contains("2^30"), "{m}"),
                other => panic!("{shape:?}: {:?}", other.map(|g| g.shape)),
            }
        }
    }
}
