//! The launches of a separable plan ([`crate::codegen::separable`]): its scratch arrays, its
//! passes in order, and the general kernel that patches the flagged pixels. The CUDA runtime
//! ([`crate::OnDevice`]) and the emulator ([`crate::emulate::Emulator`]) run the same steps.

use crate::codegen::separable::{self, PatchLayout, SeparablePlan, Stage};
use crate::codegen::KernelSpec;
use crate::filter::{Code, Ready};
use crate::pir::Module;
use crate::plan::{self, Geometry, PVal};
use std::sync::Arc;

/// The entry of the patch kernel in a plan's module.
const PATCH_ENTRY: &str = "ndjit_patch";

/// The patch kernel's grid has at most this many rows of blocks (its threads loop over the
/// rest): measured on an H200 (8192², float32, 15×15, no NaN), the full grid of a thread per
/// position took 386 µs for a kernel whose threads all leave at once, this one 240 µs (and 8 µs
/// since they leave at the header word, see `PatchLayout::HEADER`). With NaNs the flagged
/// positions are spread over fewer threads: 31×31 with one NaN in 8633 pixels took 20.5 ms
/// instead of 17.0.
const PATCH_GRID_ROWS: u32 = 32;

/// A separable plan ready to run: its pass kernels, and the general kernel that patches.
pub(crate) struct Passes {
    pub plan: SeparablePlan,
    /// The plan's kernels, in order.
    stages: Vec<Stage>,
    /// The passes, and the patch kernel as [`PATCH_ENTRY`]: one module, loaded once.
    pub module: Module,
    /// The kernels of `module`.
    pub entries: Vec<String>,
    pub code: Code,
    /// The general kernel with [`KernelSpec::patch`] set, for plans that patch, and where its
    /// thread positions' flags lie.
    pub patch: Option<Arc<Ready>>,
    layout: Option<PatchLayout>,
}

/// Device addresses of a run's arrays and of its scratch (0 where a plan needs none).
pub(crate) struct Buffers {
    pub input: u64,
    pub output: u64,
    /// Per chain (a range carries two: minima, maxima), the two arrays the passes alternate
    /// between: [`Scratch::arrays`] of them, chain by chain.
    pub scratch: [[u64; 2]; 2],
    pub flags: u64,
    /// The patch kernel's error record, where it can fail (a zero-sign guard's check: see
    /// `ndjit::ir::zero_signs`); 0 otherwise.
    pub err: u64,
}

/// What a plan needs besides the run's own arrays, in bytes.
pub(crate) struct Scratch {
    /// Each intermediate array (the input's type, C-contiguous).
    pub array: usize,
    /// How many intermediate arrays: per chain, one or two (the passes alternate between two).
    pub arrays: usize,
    /// The patch flags, zeroed before the passes run.
    pub flags: usize,
}

/// One launch of a kernel of [`Passes::module`], in order.
pub(crate) struct Step {
    pub entry: String,
    pub grid: (u32, u32),
    pub block: (u32, u32),
    /// Bytes of dynamic shared memory a block (see [`crate::pir::Func::shared_dynamic`]).
    pub shared: u32,
    pub params: Vec<PVal>,
}

impl Passes {
    pub fn new(plan: SeparablePlan, spec: &KernelSpec, patch: Option<Arc<Ready>>) -> Passes {
        let layout = patch.as_ref().map(|r| PatchLayout::of(&r.kernel));
        let stages = plan.stages();
        let mut module = separable::generate(&plan, &stages, spec, layout);
        if let Some(r) = &patch {
            module.merge(&r.kernel.module, |_| PATCH_ENTRY.into());
        }
        let passes = (0..stages.len()).map(separable::pass_entry);
        let entries = passes
            .chain(patch.iter().map(|_| PATCH_ENTRY.into()))
            .collect();
        Passes {
            plan,
            stages,
            module,
            entries,
            code: Code::default(),
            layout,
            patch,
        }
    }

    /// Arrays each chain alternates between: one or two.
    fn per_chain(&self) -> usize {
        (self.stages.len() - 1).min(2)
    }

    /// The buffers of a run, its scratch arrays at `arrays` ([`Scratch::arrays`] of them,
    /// chain by chain), the patch's flags and error record at `(flags, err)`.
    pub fn buffers(
        &self,
        (input, output): (u64, u64),
        arrays: &[u64],
        (flags, err): (u64, u64),
    ) -> Buffers {
        let at = |i: usize| arrays.get(i).copied().unwrap_or(0);
        let per = self.per_chain();
        Buffers {
            input,
            output,
            scratch: [[at(0), at(1)], [at(per), at(per + 1)]],
            flags,
            err,
        }
    }

    /// The patch kernel, if it can fail: its error record must then be reset and read back as
    /// the general kernel's is.
    pub fn failing_patch(&self) -> Option<&Arc<Ready>> {
        self.patch.as_ref().filter(|r| r.kernel.can_fail)
    }

    pub fn scratch(&self, g: &Geometry) -> Scratch {
        Scratch {
            array: g.pixels() * self.plan.elem.itemsize(),
            arrays: self.per_chain() * self.plan.stat.chain_count(),
            flags: self.layout.map_or(0, |l| l.flags(g.shape)),
        }
    }

    /// The launches on an image of geometry `g`, in order, on a device of `multiprocessors`
    /// (0 where not known: [`separable::Strip::run`]).
    pub fn steps(&self, g: &Geometry, b: &Buffers, multiprocessors: u32) -> Vec<Step> {
        let [_, h, w] = g.shape;
        let packed = [(h * w) as i64, w as i64, 1];
        let n = self.stages.len();
        let mut steps = Vec::with_capacity(n + 1);
        for (i, stage) in self.stages.iter().enumerate() {
            // The strip's run of rows, a parameter of its kernel alone.
            let mut run = None;
            let (block, grid) = match *stage {
                Stage::One(pass) => {
                    // Thread positions: the pass's axis in groups of its outputs per thread.
                    let mut groups = g.shape;
                    let v = pass.outputs(&self.plan) as usize;
                    groups[pass.axis] = groups[pass.axis].div_ceil(v);
                    let rows = groups[0] * groups[1];
                    let block = if rows >= 8 { (32, 8) } else { (256, 1) };
                    (block, (groups[2], rows))
                }
                // A block per tile; its second axis loops over the rows of tiles.
                Stage::Tile { tile, .. } => {
                    let (tx, ty) = (separable::tile::TX, separable::tile::TY);
                    let cols = g.shape[2].div_ceil((tx * tile.outputs) as usize);
                    let rows = g.shape[1].div_ceil((ty * tile.rows) as usize) * g.shape[0];
                    ((tx, ty), (cols * tx as usize, rows * ty as usize))
                }
                // A block per strip of columns and run of rows; its second axis loops over the
                // runs.
                Stage::Strip { strip, .. } => {
                    let (tx, ty) = (separable::strip::TX, strip.lanes);
                    let cols = g.shape[2].div_ceil(strip.columns() as usize);
                    let rows = strip.run(g.shape, multiprocessors);
                    run = Some(rows);
                    let runs = g.shape[1].div_ceil(rows as usize) * g.shape[0];
                    ((tx, ty), (cols * tx as usize, runs * ty as usize))
                }
                // A block per tile of outputs; its second axis loops over the rows of tiles.
                Stage::Select { .. } => {
                    use separable::select::{rows_per_thread, TX, TY};
                    let cols = g.shape[2].div_ceil(TX as usize);
                    let tile_rows = TY * rows_per_thread(self.plan.elem);
                    let rows = g.shape[1].div_ceil(tile_rows as usize) * g.shape[0];
                    ((TX, TY), (cols * TX as usize, rows * TY as usize))
                }
            };
            // Threads along the last axis and rows of threads, in blocks.
            let grid = (
                grid.0.div_ceil(block.0 as usize).max(1) as u32,
                grid.1.div_ceil(block.1 as usize).clamp(1, 65535) as u32,
            );
            // Chain `c` reads the input first, then its own scratch; the last pass writes the
            // output (a range's difference), the others each chain's scratch.
            let chains = self.plan.stat.chain_count();
            let src = |c: usize| {
                if c >= chains {
                    0
                } else if i == 0 {
                    b.input
                } else {
                    b.scratch[c][(i - 1) % 2]
                }
            };
            let dst = |c: usize| {
                if i + 1 == n {
                    if c == 0 {
                        b.output
                    } else {
                        0
                    }
                } else if c >= chains {
                    0
                } else {
                    b.scratch[c][i % 2]
                }
            };
            let ss = if i == 0 { g.in_strides } else { packed };
            let (ds, flags) = match i + 1 == n {
                true => (g.out_strides, b.flags),
                false => (packed, 0),
            };
            let mut params = vec![PVal::U64(src(0)), PVal::U64(dst(0)), PVal::U64(flags)];
            params.extend(g.shape.iter().map(|&e| PVal::S32(e as i32)));
            params.extend(ss.iter().chain(&ds).map(|&s| PVal::S64(s)));
            params.extend([PVal::U64(src(1)), PVal::U64(dst(1))]);
            params.extend(run.map(|r| PVal::S32(r as i32)));
            let entry = separable::pass_entry(i);
            let shared = self
                .module
                .funcs
                .iter()
                .find(|f| f.name == entry)
                .map_or(0, |f| f.dynamic_shared_bytes());
            steps.push(Step {
                entry,
                grid,
                block,
                shared,
                params,
            });
        }
        if let Some(r) = &self.patch {
            let block = plan::block(g, &r.kernel);
            let mut params = plan::params(g, b.input, b.output, b.err, None);
            params.push(PVal::U64(b.flags));
            // Few rows of blocks, each thread looping down the image: most positions are
            // clear, and a grid of a block per position costs more to launch than to run.
            let (gx, gy) = plan::grid(g, &r.kernel, block);
            steps.push(Step {
                entry: PATCH_ENTRY.into(),
                grid: (gx, gy.min(PATCH_GRID_ROWS)),
                block,
                shared: 0,
                params,
            });
        }
        steps
    }
}
