//! Running generated kernels in the PTX emulator: the GPU path, on the CPU, for tests and for
//! debugging without a GPU. Slow (an interpreter), but it executes the very module that would be
//! loaded on the device.

use crate::codegen::{Kernel, ENTRY, REPLAY_ENTRY};
use crate::error::{GpuError, Result};
use crate::pir::emu::Emu;
use crate::plan::{self, ArrayDesc, Geometry};

/// What an emulated run produced: the output bytes (C-contiguous), and the error if a pixel failed.
pub struct Emulated {
    pub output: Vec<u8>,
    pub error: Option<GpuError>,
}

/// Runs `kernel` on a C-contiguous `input` image (little-endian bytes of `input_desc.dtype`),
/// producing an array described by `output_desc` (C-contiguous). `poison` fills the output first
/// so that unwritten elements show.
pub fn run(
    kernel: &Kernel,
    filter: &ndjit::Filter,
    input: &[u8],
    input_desc: &ArrayDesc,
    output_desc: &ArrayDesc,
    poison: u8,
) -> Result<Emulated> {
    let g = Geometry::new(input_desc, output_desc)?;
    let mut emu = Emu::new(&kernel.module);
    let mut remu = Emu::new(&kernel.replay);
    emu.step_limit = 2_000_000_000;
    let in_addr = emu.alloc(input.len() as u64);
    emu.write(in_addr, input);
    let out_len = output_desc.len() * output_desc.dtype.size();
    let out_addr = emu.alloc(out_len as u64);
    emu.write(out_addr, &vec![poison; out_len]);
    let err_len = plan::err_bytes(kernel);
    let err_addr = emu.alloc(err_len as u64);
    emu.write(err_addr, &vec![0xff; err_len]);
    let block = plan::block(&g, kernel);
    let grid = plan::grid(&g, kernel, block);
    let params: Vec<u64> = plan::params(&g, in_addr, out_addr, err_addr, None)
        .iter()
        .map(|p| p.bits())
        .collect();
    if g.pixels() > 0 {
        emu.launch(ENTRY, grid, block, &params)
            .map_err(|e| GpuError::Unsupported(format!("emulator: {e}")))?;
    }
    let key = u64::from_le_bytes(emu.read(err_addr, 8).try_into().unwrap());
    let error = match plan::decode_key(key) {
        None => None,
        Some((pixel, _code)) => {
            // The replay module has a memory of its own: copy the input in.
            let rin = remu.alloc(input.len() as u64);
            remu.write(rin, input);
            let rerr = remu.alloc(err_len as u64);
            let params: Vec<u64> = plan::params(&g, rin, 0, rerr, Some(pixel))
                .iter()
                .map(|p| p.bits())
                .collect();
            remu.launch(REPLAY_ENTRY, (1, 1), (1, 1), &params)
                .map_err(|e| GpuError::Unsupported(format!("emulator: {e}")))?;
            let rec: Vec<u64> = remu
                .read(rerr, err_len)
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
                .collect();
            Some(plan::failure(
                filter,
                &g,
                input_desc.shape.len(),
                pixel,
                &rec,
            ))
        }
    };
    Ok(Emulated {
        output: emu.read(out_addr, out_len).to_vec(),
        error,
    })
}
