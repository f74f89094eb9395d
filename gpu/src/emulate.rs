//! Running generated kernels in the PTX emulator: the GPU path, on the CPU, for tests and for
//! debugging without a GPU. Slow (an interpreter), but it executes the very module that would be
//! loaded on the device.

use crate::codegen::separable::PatchLayout;
use crate::codegen::{Kernel, KernelSpec, Target, Tuning, ENTRY, REPLAY_ENTRY};
use crate::error::{GpuError, Result};
use crate::filter::{check_overlap, gather_bytes, scatter_bytes, GpuFilter};
use crate::passes::Passes;
use crate::pir::emu::Emu;
use crate::plan::{self, ArrayDesc, Geometry};
use ndjit::driver::{Executor, Resolved};
use std::sync::atomic::{AtomicUsize, Ordering};

/// What an emulated run produced: the output bytes (C-contiguous), and the error if a pixel failed.
pub struct Emulated {
    pub output: Vec<u8>,
    pub error: Option<GpuError>,
    /// For a separable plan: how many thread positions of its patch kernel the passes flagged
    /// (their windows held a value the proof excludes).
    pub flagged: usize,
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
    let rank = input_desc.shape.len();
    run_ranked(
        kernel,
        filter,
        input,
        (input_desc, output_desc),
        poison,
        rank,
    )
}

/// [`run`], the failing pixel reported with `rank` coordinates (none for a 0-d input).
fn run_ranked(
    kernel: &Kernel,
    filter: &ndjit::Filter,
    input: &[u8],
    (input_desc, output_desc): (&ArrayDesc, &ArrayDesc),
    poison: u8,
    rank: usize,
) -> Result<Emulated> {
    let g = Geometry::new(input_desc, output_desc)?;
    let mut emu = Emu::new(&kernel.module);
    emu.step_limit = 2_000_000_000;
    let in_addr = emu.alloc(input.len() as u64);
    emu.write(in_addr, input);
    let out_len = output_desc.len() * output_desc.dtype.itemsize();
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
    Ok(Emulated {
        output: emu.read(out_addr, out_len).to_vec(),
        error: failure(kernel, (filter, rank), input, &g, key)?,
        flagged: 0,
    })
}

/// The error `kernel` recorded under `key` (none if nothing failed), its details from the
/// failing pixel replayed on `input`.
fn failure(
    kernel: &Kernel,
    (filter, rank): (&ndjit::Filter, usize),
    input: &[u8],
    g: &Geometry,
    key: u64,
) -> Result<Option<GpuError>> {
    let Some((pixel, _code)) = plan::decode_key(key) else {
        return Ok(None);
    };
    // The replay module has a memory of its own: copy the input in.
    let mut remu = Emu::new(&kernel.replay);
    let err_len = plan::err_bytes(kernel);
    let rin = remu.alloc(input.len() as u64);
    remu.write(rin, input);
    let rerr = remu.alloc(err_len as u64);
    let params: Vec<u64> = plan::params(g, rin, 0, rerr, Some(pixel))
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
    Ok(Some(plan::failure(filter, g, rank, pixel, &rec)))
}

/// Runs a separable plan's steps on a C-contiguous `input` (see [`run`]). Its statistics cannot
/// fail; its patch kernel may (reported as [`run_ranked`] reports the general kernel's).
fn run_passes(
    p: &Passes,
    (filter, rank): (&ndjit::Filter, usize),
    input: &[u8],
    (input_desc, output_desc): (&ArrayDesc, &ArrayDesc),
    (grid_rows, multiprocessors): (u32, u32),
) -> Result<Emulated> {
    let g = Geometry::new(input_desc, output_desc)?;
    let mut emu = Emu::new(&p.module);
    emu.step_limit = 2_000_000_000;
    let mut filled = |bytes: usize, byte: u8| {
        let at = emu.alloc(bytes as u64);
        emu.write(at, &vec![byte; bytes]);
        at
    };
    let out_len = output_desc.len() * output_desc.dtype.itemsize();
    let need = p.scratch(&g);
    // The output poisoned, so that an element the passes fail to write shows.
    let (inp, out) = (filled(input.len(), 0), filled(out_len, 0xA5));
    let arrays: Vec<u64> = (0..need.arrays).map(|_| filled(need.array, 0)).collect();
    let flags = match need.flags {
        0 => 0,
        n => filled(n, 0),
    };
    let err = match p.failing_patch() {
        Some(r) => filled(plan::err_bytes(&r.kernel), 0xff),
        None => 0,
    };
    let bufs = p.buffers((inp, out), &arrays, (flags, err));
    emu.write(bufs.input, input);
    if g.pixels() > 0 {
        for step in p.steps(&g, &bufs, multiprocessors) {
            let params: Vec<u64> = step.params.iter().map(|v| v.bits()).collect();
            let grid = (step.grid.0, step.grid.1.min(grid_rows.max(1)));
            emu.launch(&step.entry, grid, step.block, &params)
                .map_err(|e| GpuError::Unsupported(format!("emulator: {e}")))?;
        }
    }
    let error = match p.failing_patch() {
        Some(r) => {
            let key = u64::from_le_bytes(emu.read(err, 8).try_into().unwrap());
            failure(&r.kernel, (filter, rank), input, &g, key)?
        }
        None => None,
    };
    let flagged = match need.flags {
        0 => 0,
        n => emu.read(flags, n)[PatchLayout::HEADER..]
            .iter()
            .filter(|&&f| f != 0)
            .count(),
    };
    Ok(Emulated {
        output: emu.read(bufs.output, out_len).to_vec(),
        error,
        flagged,
    })
}

/// An H100's streaming multiprocessors (SXM).
pub const H100_MULTIPROCESSORS: u32 = 132;

/// The emulator as an executor of the driver's runs on host arrays, as [`crate::FromHost`]: the
/// kernel the GPU would run for that run, executed here. With it the GPU
/// path, from the driver's validation to the kernel's result, is tested without a GPU.
pub struct Emulator<'a> {
    pub filter: &'a GpuFilter,
    pub target: Target,
    pub tuning: Tuning,
    /// [`Emulated::flagged`] of the last run (0 where the general kernel ran alone).
    pub flagged: AtomicUsize,
    /// The most rows of blocks a separable plan's kernel is launched with (the device's limit
    /// by default): lower, each block loops over more of the image, as on large images.
    pub grid_rows: u32,
    /// The multiprocessors a launch keeps busy ([`crate::codegen::separable::Strip::run`]): an
    /// H100's by default, as the device would launch; 0 for runs of the strip's own rows.
    pub multiprocessors: u32,
}

impl<'a> Emulator<'a> {
    pub fn new(filter: &'a GpuFilter) -> Self {
        Emulator {
            filter,
            target: Target::SM90,
            tuning: Tuning::default(),
            flagged: AtomicUsize::new(0),
            grid_rows: 65535,
            multiprocessors: H100_MULTIPROCESSORS,
        }
    }
}

impl Executor for Emulator<'_> {
    type Error = GpuError;

    /// The kernels are made from the filter's IR ([`GpuFilter::kernel`]).
    fn runs_native_code(&self) -> bool {
        false
    }

    unsafe fn execute(&self, run: &Resolved<'_>) -> Result<()> {
        // As `FromHost`: its overlap policy, the input read into a copy, the output written back
        // in C order.
        check_overlap(run.aliasing, true)?;
        let (in_desc, out_desc) = ArrayDesc::of_run(run);
        let ci = ArrayDesc::contiguous(in_desc.dtype, &in_desc.shape);
        let co = ArrayDesc::contiguous(out_desc.dtype, &out_desc.shape);
        Geometry::new(&ci, &co)?;
        // SAFETY: the caller's contract.
        let input = unsafe { gather_bytes(run.input.ptr, &in_desc) };
        let spec = KernelSpec::resolved(run, true, self.target, &self.tuning);
        let done = match self.filter.passes(&spec, &self.tuning)? {
            Some(p) => run_passes(
                &p,
                (run.filter, run.rank),
                &input,
                (&ci, &co),
                (self.grid_rows, self.multiprocessors),
            )?,
            None => {
                let ready = self.filter.ready(&spec)?;
                run_ranked(&ready.kernel, run.filter, &input, (&ci, &co), 0, run.rank)?
            }
        };
        self.flagged.store(done.flagged, Ordering::Relaxed);
        // SAFETY: the caller's contract; `done.output` is the C-contiguous output.
        unsafe { scatter_bytes(&done.output, run.output.ptr, &out_desc) };
        done.error.map_or(Ok(()), Err)
    }
}
