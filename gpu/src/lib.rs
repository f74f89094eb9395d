//! # ndjit-gpu: ndjit filters as CUDA stencil kernels
//!
//! The same IR that ndjit's CPU JIT compiles is lowered here to PTX text (by Rust code, no NVRTC,
//! no toolkit) and run through the CUDA driver with scipy's `generic_filter` semantics: every
//! boundary mode and origin, any footprint, 1-d to 3-d images, every dtype scipy takes (bool,
//! int8–int64, uint8–uint64, float32, float64) converted to double and cast back as scipy's C
//! casts do.
//!
//! ```no_run
//! use ndjit_gpu::{Footprint, Gpu, GpuFilter, Mode, Options};
//! let gpu = Gpu::get(0)?;                      // GpuError::NoDevice without a GPU
//! let f = GpuFilter::compile("np.median(x)", &ndjit::Bindings::new())?;
//! let image = ndarray::Array2::<f64>::from_shape_fn((512, 512), |(i, j)| ((i * j) % 17) as f64);
//! let opts = Options::new(Footprint::from_size(&[5, 5])).mode(Mode::Nearest);
//! let out: ndarray::ArrayD<f64> = f.run(&gpu, image.view().into_dyn(), &opts)?;
//! # Ok::<(), ndjit_gpu::GpuError>(())
//! ```
//!
//! Layers, bottom up:
//! - [`pir`]: a PTX-level IR, its printer and a CPU emulator of it;
//! - [`math`]: the f64 math routines written in PTX (bit-identical to the CPU's `libm`);
//! - [`codegen`]: filter IR → stencil kernel ([`codegen::generate`]);
//! - [`plan`], [`runtime`]: launching through cudarc's driver API;
//! - [`filter`]: the API on host `ndarray`s and device memory, the GPU as an executor of the
//!   driver's resolved runs ([`ndjit::driver::execute`] validates and resolves the arguments);
//! - [`reference`], [`emulate`]: scipy's loop on the CPU, and kernels run in the emulator.

pub mod codegen;
pub mod emulate;
pub mod error;
pub mod filter;
pub mod math;
mod passes;
pub mod pir;
pub mod plan;
pub mod reference;
pub mod runtime;

pub use codegen::{Dtype, KernelSpec, Mode, Target, Tuning};
/// A CUDA stream handle (for launching on a stream the caller owns, e.g. CuPy's).
pub use cudarc::driver::sys::CUstream;
pub use error::{GpuError, Result};
pub use filter::{DeviceArray, FromHost, GpuFilter, OnDevice, Pending};
/// The driver's arguments and element types: the GPU takes the same as the CPU.
pub use ndjit::driver::{Element, Footprint, Options};
pub use plan::ArrayDesc;
pub use runtime::Gpu;
