//! The filter IR as a PTX stencil kernel.
//!
//! [`generate`] takes the IR of a filter specialised to its footprint size and a [`KernelSpec`]
//! (footprint, mode, cval, origin, dtypes, rank, target) and produces a [`Module`] with two
//! kernels:
//! - `ndjit_stencil`: the filter over the whole image. Each thread computes
//!   [`Kernel::outputs_per_thread`] consecutive outputs of [`Kernel::rows_per_thread`] rows; in
//!   the interior it loads their
//!   common window once (`ld.global.nc`, constant offsets) and runs the fully unrolled filter body
//!   once per output on registers; threads near an edge take a separate path that maps every
//!   coordinate with scipy's boundary rules. A failing check records the first failing pixel (an
//!   atomic minimum on a key in the error word) and skips that output.
//! - `ndjit_replay`: one pixel through the general path, writing its neighbourhood and the failure
//!   details, so that the host can report the error exactly as the CPU does.
//!
//! The body is translated by [`body`], mirroring the interpreter operation by operation.

pub mod body;
pub mod bounds;
pub mod elem;
pub mod separable;
pub mod sort;
pub mod stencil;
pub mod taps;

use crate::error::{GpuError, Result};
use crate::pir::Module;
pub use ndjit::bind::BoundValues;
use ndjit::bind::{Layout, Value};
pub use ndjit::driver::{Dtype, Mode};
use ndjit::driver::{Geometry, Resolved};
use ndjit::ir::{self, Func};
use std::hash::{Hash, Hasher};

/// The PTX ISA version and `sm_` target to emit, and the shared memory a block may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    pub version: (u32, u32),
    pub sm: u32,
    /// Bytes of shared memory a block may have: the device's opt-in maximum (more than
    /// [`crate::pir::STATIC_SHARED`] is dynamic, see [`crate::pir::Func::shared_dynamic`]).
    pub shared: u32,
}

impl Target {
    /// `.version 7.8 / .target sm_90`: Hopper (H100/H200, 227 KiB of shared memory a block).
    pub const SM90: Target = Target {
        version: (7, 8),
        sm: 90,
        shared: 227 * 1024,
    };
    /// `.version 7.0 / .target sm_75`: any GPU from Turing on, and drivers from CUDA 11.0 on;
    /// the shared memory any block may declare.
    pub const PORTABLE: Target = Target {
        version: (7, 0),
        sm: 75,
        shared: crate::pir::STATIC_SHARED as u32,
    };

    /// Whether float32 `min`/`max` have the `.NaN` form (sm_80 on).
    pub fn has_nan_minmax(&self) -> bool {
        self.sm >= 80
    }

    /// Whether `min`/`max` take two 16-bit lanes (`.u16x2`, `.s16x2`: sm_90, PTX ISA 8.0).
    pub fn has_minmax_16x2(&self) -> bool {
        self.sm >= 90 && self.version >= (8, 0)
    }

    /// The target for a device of compute capability `major.minor` under a driver of CUDA
    /// version `driver` (as `cuDriverGetVersion` reports it, e.g. 12080): the device's own `sm_`
    /// (capped at sm_90, which is all this backend needs) with the newest PTX ISA version the
    /// driver accepts, at least the one the target requires; `shared` the device's opt-in
    /// maximum of shared memory a block may have (at least the static limit).
    pub fn for_device(major: i32, minor: i32, driver: i32, shared: i32) -> Target {
        let sm = ((major * 10 + minor) as u32).clamp(52, 90);
        // PTX ISA versions by CUDA release: 7.0 in 11.0, 7.8 in 11.8, 8.0 in 12.0 ...
        let (dmaj, dmin) = (driver / 1000, (driver % 1000) / 10);
        let by_driver = match (dmaj, dmin) {
            (v, _) if v >= 13 => (9, 0),
            (12, m) => (8, m.min(8) as u32),
            (11, m) => (7, m.min(8) as u32),
            _ => (6, 4),
        };
        let needed = match sm {
            90 => (7, 8),
            89 => (7, 8),
            86..=88 => (7, 1),
            80..=85 => (7, 0),
            75..=79 => (6, 3),
            _ => (6, 0),
        };
        let version = if by_driver >= needed {
            by_driver.min((8, 0))
        } else {
            needed
        };
        Target {
            version: version.max(needed),
            sm,
            shared: (shared.max(0) as u32).max(crate::pir::STATIC_SHARED as u32),
        }
    }
}

/// Everything a stencil kernel is specialised to, besides the filter itself. Equal specs (`cval`
/// compared by its bits) make the same kernel: the key of [`crate::GpuFilter`]'s kernel cache.
#[derive(Clone, Debug)]
pub struct KernelSpec {
    /// The footprint's shape, one entry per image axis (1 to 3 axes).
    pub shape: Vec<usize>,
    /// The footprint, row-major, `shape.iter().product()` entries.
    pub mask: Vec<bool>,
    /// As applied inside filters: never a `grid-*` alias.
    pub mode: Mode,
    pub cval: f64,
    /// Per axis, as scipy's `origin`.
    pub origin: Vec<isize>,
    pub input: Dtype,
    pub output: Dtype,
    /// Both arrays have unit stride along the last axis (then neighbour offsets are immediates).
    pub contiguous: bool,
    /// Outputs per thread; 0 picks automatically.
    pub outputs_per_thread: u32,
    /// Rows per thread (each of `outputs_per_thread` outputs): a register window over several
    /// rows, which pays where windows overlap vertically; 0 picks automatically.
    pub rows_per_thread: u32,
    pub target: Target,
    /// Lower NumPy min/max through PTX `min.f64`/`max.f64` plus an explicit NaN test (true), or
    /// through compares and selects only (false). Both give NumPy's results; the first is faster.
    pub native_minmax: bool,
    /// How median networks compare (measured choices; all exact).
    pub network: body::NetworkStyle,
    /// The kernel patches after [`separable`] passes: it takes a `flags` parameter (one byte per
    /// thread position, see [`separable::PatchLayout`]) and its threads whose flag is clear
    /// leave without computing.
    pub patch: bool,
}

impl KernelSpec {
    /// A `size`-wide box footprint over `rank` axes, mode reflect, f64 in and out, sm_90.
    pub fn boxed(rank: usize, size: usize) -> KernelSpec {
        KernelSpec {
            shape: vec![size; rank],
            mask: vec![true; size.pow(rank as u32)],
            mode: Mode::Reflect,
            cval: 0.0,
            origin: vec![0; rank],
            input: Dtype::F64,
            output: Dtype::F64,
            contiguous: true,
            outputs_per_thread: 0,
            rows_per_thread: 0,
            target: Target::SM90,
            native_minmax: true,
            network: body::NetworkStyle::HighKey,
            patch: false,
        }
    }
    /// What the filter's buffer holds under this spec: the doubles of an integer or bool image,
    /// with a `cval` of that kind where the mode reads it, are finite and never `-0.0`, so the
    /// IR's tests of them fold ([`ir::BufferValues`]).
    pub fn buffer_values(&self) -> ir::BufferValues {
        let reads_cval = matches!(self.mode, Mode::Constant | Mode::GridConstant);
        let ordinary_cval = self.cval.is_finite() && self.cval.to_bits() != (-0.0f64).to_bits();
        if !elem::is_float(self.input) && (!reads_cval || ordinary_cval) {
            ir::BufferValues::Ordinary
        } else {
            ir::BufferValues::Any
        }
    }

    /// The number of true footprint entries: the filter size scipy passes.
    pub fn filter_size(&self) -> usize {
        self.mask.iter().filter(|&&b| b).count()
    }
    pub fn rank(&self) -> usize {
        self.shape.len()
    }
    /// The kernel for a run the driver resolved: its footprint and origins over every axis (the
    /// filtered axes and the others alike), its mode and cval, the arrays' dtypes.
    pub fn resolved(
        run: &Resolved<'_>,
        contiguous: bool,
        target: Target,
        tuning: &Tuning,
    ) -> KernelSpec {
        let g: &Geometry = run.geometry;
        KernelSpec {
            shape: g.fshape.clone(),
            mask: g.mask(),
            mode: run.mode,
            cval: run.cval,
            origin: g.origins.clone(),
            input: run.input.dtype,
            output: run.output.dtype,
            contiguous,
            outputs_per_thread: tuning.outputs_per_thread,
            rows_per_thread: tuning.rows_per_thread,
            target,
            native_minmax: true,
            network: tuning.network,
            patch: false,
        }
    }

    /// Checks what the kernels support. The arguments themselves (footprint, origins, axes) are
    /// the driver's to validate ([`ndjit::driver::execute`]); a spec made by hand that breaks
    /// their invariants is reported here rather than generating a wrong kernel.
    pub fn validate(&self) -> Result<()> {
        let r = self.shape.len();
        if !(1..=3).contains(&r) {
            return Err(GpuError::Unsupported(format!(
                "{r}-d images (the GPU backend handles 1 to 3 dimensions)"
            )));
        }
        // What indexing the footprint needs. The origins' range is the driver's to check (scipy's
        // `invalid origin`); any origin makes a well-defined kernel, one whose window is shifted.
        if self.mask.len() != self.shape.iter().product::<usize>() || self.origin.len() != r {
            return Err(GpuError::Invalid(format!(
                "a kernel spec whose footprint or origins do not match its rank: {self:?}"
            )));
        }
        if self.mode != self.mode.in_filter() {
            return Err(GpuError::Invalid(format!(
                "a kernel spec with the alias mode {:?} (resolve it with Mode::in_filter)",
                self.mode
            )));
        }
        if self.filter_size() == 0 {
            return Err(GpuError::Invalid("no footprint elements".into()));
        }
        let reach = |a: usize| self.shape[a] + self.origin[a].unsigned_abs();
        if (0..r).any(|a| reach(a) > MAX_REACH) {
            return Err(GpuError::Unsupported(
                "footprints (with their origins) longer than 2^24 along an axis (the kernels' coordinates are 32-bit)"
                    .into(),
            ));
        }
        Ok(())
    }

    /// Everything but `cval`, which is compared and hashed by its bits.
    #[allow(clippy::type_complexity)]
    fn key(
        &self,
    ) -> (
        (&[usize], &[bool], Mode, u64, &[isize]),
        (
            Dtype,
            Dtype,
            bool,
            u32,
            u32,
            Target,
            bool,
            body::NetworkStyle,
            bool,
        ),
    ) {
        (
            (
                &self.shape,
                &self.mask,
                self.mode,
                self.cval.to_bits(),
                &self.origin,
            ),
            (
                self.input,
                self.output,
                self.contiguous,
                self.outputs_per_thread,
                self.rows_per_thread,
                self.target,
                self.native_minmax,
                self.network,
                self.patch,
            ),
        )
    }
}

impl PartialEq for KernelSpec {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for KernelSpec {}

impl Hash for KernelSpec {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

/// The GPU's own knobs: how the kernel spreads the work over threads and compares in median
/// networks. None of them changes a result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tuning {
    /// Outputs per thread (0: chosen from the filter).
    pub outputs_per_thread: u32,
    /// Rows per thread (0: chosen from the filter).
    pub rows_per_thread: u32,
    /// How median networks compare (a measured choice; every style is exact).
    pub network: body::NetworkStyle,
    /// Whether box minima and maxima run as one pass per axis ([`separable`]) where the proof
    /// allows: `None` chooses by the window's size ([`separable::chosen`]).
    pub separable: Option<bool>,
    /// Outputs per thread along each axis in those passes (0: [`separable::AUTO_OUTPUTS`]).
    pub pass_outputs: u32,
    /// How those passes run a box's column and row passes: a kernel each, or one kernel
    /// ([`separable::Stage::Tile`], [`separable::Stage::Strip`]).
    pub joint: separable::Joint,
}

impl Default for Tuning {
    fn default() -> Tuning {
        Tuning {
            outputs_per_thread: 0,
            rows_per_thread: 0,
            network: body::NetworkStyle::HighKey,
            separable: None,
            pass_outputs: 0,
            joint: separable::Joint::Auto,
        }
    }
}

/// A generated module and how to launch it.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// The stencil kernel `ndjit_stencil`.
    pub module: Module,
    /// `ndjit_replay`, loaded only when a pixel fails.
    pub replay: Module,
    pub outputs_per_thread: u32,
    /// Consecutive rows per thread (1 for 1-d images).
    pub rows_per_thread: u32,
    pub block: (u32, u32),
    /// Number of values in the replay record after its 4 header words.
    pub filter_size: usize,
    /// Whether the stencil kernel has a failure branch at all. One without cannot fail: it is
    /// launched without an error record, and on the caller's stream not waited for.
    pub can_fail: bool,
}

/// The longest footprint (plus its origin) along an axis that the kernels take: see
/// [`crate::plan::MAX_AXIS`].
pub const MAX_REACH: usize = 1 << 24;

pub const ENTRY: &str = "ndjit_stencil";
pub const REPLAY_ENTRY: &str = "ndjit_replay";

/// Bits of the error key below the pixel index: the failure code.
pub const SITE_BITS: u32 = 22;
/// Failure code for "the filter failed without recording why" (a `break` outside any loop, or
/// falling off the end of the body).
pub const NO_RECORD: u64 = (1 << SITE_BITS) - 1;
/// What the replay kernel writes as the failure code when the pixel did not fail.
pub const REPLAY_OK: u64 = u64::MAX;

/// Generates the stencil kernels of `func` (the IR specialised to `spec.filter_size()`, best
/// `ndjit::Filter::baked_ir`, which has also folded what the bound values decide), with the bound
/// values `values` (laid out by `layout`) baked in.
pub fn generate(
    func: &Func,
    layout: &Layout,
    values: &[(String, Value)],
    spec: &KernelSpec,
) -> Result<Kernel> {
    spec.validate()?;
    if func.sig != ir::Sig::Filter {
        return Err(GpuError::Unsupported(format!(
            "{:?} functions (the GPU runs generic_filter callbacks)",
            func.sig
        )));
    }
    if func.filter_size != Some(spec.filter_size()) {
        return Err(GpuError::Unsupported(format!(
            "the IR must be specialised to the filter size {} (got {:?})",
            spec.filter_size(),
            func.filter_size
        )));
    }
    let bound = BoundValues::new(layout, values);
    // Bound values become constants (already so in `ndjit::Filter::baked_ir`, which has also
    // folded what they decide; IR from elsewhere is taken as it is, not refolded).
    let known = ir::Known {
        filter_size: None,
        bound: Some(&bound),
        ..Default::default()
    };
    let func = ir::substitute(func.clone(), known);
    stencil::generate(&func, &bound, spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footprints_past_what_32_bit_coordinates_hold_are_refused() {
        let mut spec = KernelSpec::boxed(1, 3);
        assert!(spec.validate().is_ok());
        spec.origin = vec![-(MAX_REACH as isize)];
        match spec.validate() {
            Err(GpuError::Unsupported(m)) => assert!(m.contains("2^24"), "{m}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_devices_target_keeps_its_opt_in_shared_memory_and_at_least_the_static_limit() {
        let h200 = Target::for_device(9, 0, 13000, 232_448);
        assert_eq!((h200.sm, h200.shared), (90, 232_448));
        assert_eq!(h200.shared, Target::SM90.shared);
        // A device that reports less, or nothing (the attribute unread), gets the static limit.
        let static_limit = crate::pir::STATIC_SHARED as u32;
        assert_eq!(Target::for_device(7, 5, 11000, 0).shared, static_limit);
        assert_eq!(Target::for_device(7, 5, 11000, -1).shared, static_limit);
        assert_eq!(Target::for_device(8, 6, 12080, 101_376).shared, 101_376);
    }
}
