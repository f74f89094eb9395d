//! The public API: a compiled filter run as a GPU stencil, on host arrays (copied in and out) or on
//! device memory (no copies).
//!
//! Every run goes through the driver ([`ndjit::driver::execute`]): it validates the arguments as
//! for the CPU, resolves the footprint, origins and axes, and specialises the filter; the GPU is
//! an [`Executor`] of that resolved run ([`OnDevice`], or [`FromHost`] for host arrays).

use crate::codegen::{self, separable, Dtype, Kernel, KernelSpec, Target, Tuning};
use crate::error::{GpuError, Result};
use crate::passes::Passes;
use crate::plan::{self, ArrayDesc, Geometry};
use crate::runtime::{DeviceBuffer, Gpu, Module};
use cudarc::driver::sys::CUstream;
use ndarray::{ArrayD, ArrayViewD, IxDyn};
use ndjit::driver::{
    self, Aliasing, Element, Executor, Lru, Options, RawArray, RawArrayMut, Resolved,
};
use std::cell::RefCell;
use std::sync::{Arc, Mutex, OnceLock};

/// The kernels kept per filter (each one is a few milliseconds of code generation and PTX
/// loading): the specs of a handful of footprints, dtypes and modes in use at once.
const KERNELS: usize = 32;

fn as_bytes<T: Element>(s: &[T]) -> &[u8] {
    // SAFETY: plain numeric types without padding.
    unsafe { std::slice::from_raw_parts(s.as_ptr() as *const u8, std::mem::size_of_val(s)) }
}

fn as_bytes_mut<T: Element>(s: &mut [T]) -> &mut [u8] {
    // SAFETY: as above; every bit pattern is a valid value of these types.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr() as *mut u8, std::mem::size_of_val(s)) }
}

/// An image in device memory, reusable across calls.
pub struct DeviceArray {
    buf: DeviceBuffer,
    desc: ArrayDesc,
}

impl DeviceArray {
    /// Uninitialised, C-contiguous.
    pub fn new(gpu: &Gpu, dtype: Dtype, shape: &[usize]) -> Result<DeviceArray> {
        let desc = ArrayDesc::contiguous(dtype, shape);
        Ok(DeviceArray {
            buf: gpu.alloc(desc.len() * dtype.itemsize())?,
            desc,
        })
    }
    /// A copy of a host array.
    pub fn from_host<T: Element>(gpu: &Gpu, a: ArrayViewD<'_, T>) -> Result<DeviceArray> {
        let mut d = DeviceArray::new(gpu, T::DTYPE, a.shape())?;
        d.upload(gpu, a)?;
        Ok(d)
    }
    /// Copies a host array of the same shape and type in (and waits).
    pub fn upload<T: Element>(&mut self, gpu: &Gpu, a: ArrayViewD<'_, T>) -> Result<()> {
        if T::DTYPE != self.desc.dtype || a.shape() != self.desc.shape.as_slice() {
            return Err(GpuError::Invalid(
                "upload: the host array's type or shape differs".into(),
            ));
        }
        let c = a.as_standard_layout();
        let s = c.as_slice().expect("standard layout");
        // SAFETY: the buffer holds exactly this many bytes; we wait before `c` is dropped.
        unsafe {
            gpu.upload(self.buf.ptr(), as_bytes(s), gpu.cu_stream())?;
        }
        gpu.synchronize_own()
    }
    /// A host copy.
    pub fn to_host<T: Element>(&self, gpu: &Gpu) -> Result<ArrayD<T>> {
        if T::DTYPE != self.desc.dtype {
            return Err(GpuError::Invalid(format!(
                "to_host: the array holds {}",
                self.desc.dtype.name()
            )));
        }
        let mut v = vec![T::default(); self.desc.len()];
        // SAFETY: the buffer holds exactly this many bytes.
        unsafe { gpu.download(as_bytes_mut(&mut v), self.buf.ptr(), gpu.cu_stream())? };
        Ok(ArrayD::from_shape_vec(IxDyn(&self.desc.shape), v).expect("shape"))
    }
    pub fn ptr(&self) -> u64 {
        self.buf.ptr()
    }
    pub fn desc(&self) -> &ArrayDesc {
        &self.desc
    }
}

/// A filter launched and not yet waited for (see [`GpuFilter::launch`]); nothing when the input
/// is empty.
pub struct Pending(Option<Launched>);

impl Pending {
    /// Waits for the kernel and reports the first failing pixel as the CPU would. A kernel that
    /// cannot fail, queued on the caller's stream, is not waited for: the caller's later work on
    /// that stream is ordered after it, as with CuPy's own calls.
    pub fn finish(self) -> Result<()> {
        self.0.map_or(Ok(()), Launched::finish)
    }
}

/// The work of a [`Pending`] run on the device.
struct Launched {
    gpu: Arc<Gpu>,
    /// The error record, for a kernel that can fail.
    record: Option<Record>,
    geometry: Geometry,
    rank: usize,
    filter: ndjit::Filter,
    params: (u64, u64),
    stream: CUstream,
    /// Whether `stream` is the caller's (else the GPU's own, which the caller cannot wait on).
    callers_stream: bool,
}

/// Where a kernel that can fail records the first failing pixel.
struct Record {
    buffer: DeviceBuffer,
    bytes: usize,
    /// The kernel writing it, whose replay reads the failure's details.
    kernel: Arc<Kernel>,
}

impl Launched {
    fn finish(mut self) -> Result<()> {
        let Some(record) = self.record.take() else {
            return match self.callers_stream {
                true => Ok(()),
                // SAFETY: the GPU's own stream.
                false => unsafe { self.gpu.synchronize(self.stream) },
            };
        };
        let r = self.check(&record);
        // The work is done (`check` waited for it): the record can serve the next call. After
        // a failure it is left to be freed, as the replay wrote it.
        if r.is_ok() {
            self.gpu.recycle(record.buffer);
        }
        r
    }

    fn check(&self, record: &Record) -> Result<()> {
        let err = &record.buffer;
        let mut key = [0u8; 8];
        // SAFETY: the error buffer holds at least 8 bytes.
        unsafe { self.gpu.download(&mut key, err.ptr(), self.stream)? };
        let Some((pixel, _)) = plan::decode_key(u64::from_le_bytes(key)) else {
            return Ok(());
        };
        let params = plan::params(
            &self.geometry,
            self.params.0,
            self.params.1,
            err.ptr(),
            Some(pixel),
        );
        let mut rec = vec![0u8; record.bytes];
        let replay = self
            .gpu
            .load(&record.kernel.replay.to_ptx(), &[codegen::REPLAY_ENTRY])?;
        // SAFETY: the replay kernel takes the same arrays plus the pixel; it writes the record.
        unsafe {
            self.gpu.launch(
                replay.function(codegen::REPLAY_ENTRY),
                ((1, 1), (1, 1), 0),
                &params,
                self.stream,
            )?;
            self.gpu.download(&mut rec, err.ptr(), self.stream)?;
        }
        let words: Vec<u64> = rec
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        Err(plan::failure(
            &self.filter,
            &self.geometry,
            self.rank,
            pixel,
            &words,
        ))
    }
}

/// A kernel loaded for one GPU and one pair of array descriptors: repeated launches on reusable
/// buffers with no per-call work besides the launch itself (what the benchmarks time).
pub struct Prepared {
    pub module: Arc<Module>,
    pub kernel: Arc<Kernel>,
    pub geometry: Geometry,
    pub grid: (u32, u32),
    pub block: (u32, u32),
}

impl Prepared {
    /// Queues one run. `err` must hold [`Prepared::err_bytes`] bytes set to 0xFF.
    ///
    /// # Safety
    /// The pointers must be valid device memory for the prepared descriptors, and must not
    /// overlap.
    pub unsafe fn launch(
        &self,
        gpu: &Gpu,
        input: u64,
        output: u64,
        err: u64,
        stream: CUstream,
    ) -> Result<()> {
        let params = plan::params(&self.geometry, input, output, err, None);
        unsafe {
            gpu.launch(
                self.module.function(codegen::ENTRY),
                (self.grid, self.block, 0),
                &params,
                stream,
            )
        }
    }
    pub fn err_bytes(&self) -> usize {
        plan::err_bytes(&self.kernel)
    }
}

/// A filter ready to run on GPUs: the CPU filter plus its kernels, generated on demand and kept
/// per [`KernelSpec`] (footprint, mode, cval, origins, dtypes, layout, target, tuning).
pub struct GpuFilter {
    filter: ndjit::Filter,
    kernels: Mutex<Lru<KernelSpec, Arc<Ready>>>,
    /// Per spec, the separable plan, or `None` where it does not apply.
    passes: Mutex<PassesCache>,
}

/// Per spec, outputs per thread, how the column and row passes join and whether the tuning forced the passes: a
/// separable plan, or `None` where it does not apply or is not chosen.
type PassesCache = Lru<(KernelSpec, (u32, separable::Joint), bool), Option<Arc<Passes>>>;

/// A generated kernel with its PTX text and the modules it is loaded as.
pub(crate) struct Ready {
    pub kernel: Arc<Kernel>,
    code: Code,
}

impl Ready {
    fn new(kernel: Kernel) -> Ready {
        Ready {
            kernel: Arc::new(kernel),
            code: Code::default(),
        }
    }

    pub fn ptx(&self) -> &str {
        self.code.ptx(&self.kernel.module)
    }

    /// The stencil module loaded on `gpu`.
    fn module(&self, gpu: &Gpu) -> Result<Arc<Module>> {
        self.code
            .module(gpu, &self.kernel.module, &[codegen::ENTRY])
    }
}

/// A generated module's PTX text and its loaded modules: a repeated call finds its module here
/// without printing or hashing the PTX again.
#[derive(Default)]
pub(crate) struct Code {
    ptx: OnceLock<String>,
    /// Per GPU (by its address: devices live as long as the process), the loaded module.
    loaded: Mutex<Vec<(usize, Arc<Module>)>>,
}

impl Code {
    /// The PTX of `m` (printed once: `m` must be the same module at every call).
    pub fn ptx(&self, m: &crate::pir::Module) -> &str {
        self.ptx.get_or_init(|| m.to_ptx())
    }

    /// `m` loaded on `gpu` with its kernels `entries`.
    pub fn module(
        &self,
        gpu: &Gpu,
        m: &crate::pir::Module,
        entries: &[&str],
    ) -> Result<Arc<Module>> {
        let id = gpu as *const Gpu as usize;
        let loaded = || self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, m)) = loaded().iter().find(|(g, _)| *g == id) {
            return Ok(m.clone());
        }
        let m = gpu.load(self.ptx(m), entries)?;
        loaded().push((id, m.clone()));
        Ok(m)
    }
}

impl GpuFilter {
    pub fn new(filter: &ndjit::Filter) -> GpuFilter {
        GpuFilter {
            filter: filter.clone(),
            kernels: Mutex::new(Lru::new(KERNELS)),
            passes: Mutex::new(Lru::new(KERNELS)),
        }
    }
    /// Compiles filter source (see [`ndjit::Filter::compile`]) into IR, without the CPU's native
    /// code: the kernels are PTX, and [`GpuFilter::filter`]'s first CPU call generates that code
    /// if one is made ([`ndjit::FilterBuilder::native_code`]).
    pub fn compile(source: &str, bindings: &ndjit::Bindings) -> Result<GpuFilter> {
        let filter = ndjit::Filter::builder(source)
            .bindings(bindings)
            .native_code(false)
            .compile()?;
        Ok(GpuFilter::new(&filter))
    }
    pub fn filter(&self) -> &ndjit::Filter {
        &self.filter
    }

    /// The kernel for `spec` (generated once).
    pub fn kernel(&self, spec: &KernelSpec) -> Result<Arc<Kernel>> {
        Ok(self.ready(spec)?.kernel.clone())
    }

    /// The kernel for `spec`, with its PTX and modules (generated once, kept in an LRU).
    pub(crate) fn ready(&self, spec: &KernelSpec) -> Result<Arc<Ready>> {
        let cache = || self.kernels.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(k) = cache().get(spec) {
            return Ok(k);
        }
        // The IR specialised to the footprint size with the bound values folded in, made from the
        // filter's lowered IR (no native code, no re-parsing).
        let ir = self
            .filter
            .baked_ir(spec.filter_size(), spec.buffer_values());
        let f = &self.filter;
        let k = Arc::new(Ready::new(codegen::generate(
            &ir,
            f.layout(),
            f.bound_values(),
            spec,
        )?));
        cache().insert(spec.clone(), k.clone());
        Ok(k)
    }

    /// The separable plan of a run's kernel spec ([`KernelSpec::resolved`]), where `tuning`
    /// chooses it and the proof holds (see [`codegen::separable`]); `None` runs the general
    /// kernel, [`GpuFilter::ready`] for the same spec.
    pub(crate) fn passes(&self, spec: &KernelSpec, tuning: &Tuning) -> Result<Option<Arc<Passes>>> {
        if tuning.separable == Some(false) {
            return Ok(None);
        }
        let (outputs, joint) = (tuning.pass_outputs, tuning.joint);
        // The choice is cached with the plan: it reads the specialised IR.
        let key = (spec.clone(), (outputs, joint), tuning.separable.is_some());
        let cache = || self.passes.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(found) = cache().get(&key) {
            return Ok(found);
        }
        let n = spec.filter_size();
        let form = driver::rank_form(&self.filter, n);
        let chosen = tuning.separable.is_some()
            || form.is_some_and(|f| {
                let ir = self.filter.baked_ir(n, spec.buffer_values());
                separable::chosen(spec, f.stat, ir.can_fail())
            });
        let found = match separable::plan(form.filter(|_| chosen), spec, (outputs, joint)) {
            None => None,
            Some(plan) => {
                let patch = match plan.patch {
                    true => Some(self.ready(&KernelSpec {
                        patch: true,
                        ..spec.clone()
                    })?),
                    false => None,
                };
                // The recognised statistics cannot fail, but the patch may: it runs the
                // filter's own code, guards included, on the windows holding a NaN or -0.0
                // (`OnDevice::launch_passes` reads its error record back).
                Some(Arc::new(Passes::new(plan, spec, patch)))
            }
        };
        cache().insert(key.clone(), found.clone());
        Ok(found)
    }

    /// The PTX of the kernel for images of `rank` axes (what `inspect_ptx` shows), for
    /// C-contiguous arrays: the general kernel, or a separable plan's passes and patch kernel.
    pub fn ptx(
        &self,
        opts: &Options,
        rank: usize,
        input: Dtype,
        output: Dtype,
        target: Target,
    ) -> Result<String> {
        self.ptx_tuned(opts, rank, (input, output), target, Tuning::default())
    }

    /// [`GpuFilter::ptx`] under `tuning`.
    pub fn ptx_tuned(
        &self,
        opts: &Options,
        rank: usize,
        (input, output): (Dtype, Dtype),
        target: Target,
        tuning: Tuning,
    ) -> Result<String> {
        // The driver's validation and geometry, on a unit image of that rank (the kernel does
        // not depend on the extents).
        let desc = |dtype| ArrayDesc::contiguous(dtype, &vec![1; rank]);
        let (input, output) = (desc(input), desc(output));
        let mut ptx = String::new();
        let exec = Inspect {
            filter: self,
            target,
            tuning,
            ptx: RefCell::new(&mut ptx),
        };
        // SAFETY: `Inspect` reads no memory; the null pointers describe nothing it touches.
        unsafe { execute(&exec, self, (8, &input), (8, &output), opts)? };
        Ok(ptx)
    }

    /// Generates and loads the kernel for these arrays on `gpu`, with `tuning`.
    pub fn prepare(
        &self,
        gpu: &Gpu,
        in_desc: &ArrayDesc,
        out_desc: &ArrayDesc,
        opts: &Options,
        tuning: &Tuning,
    ) -> Result<Prepared> {
        let prepared = RefCell::new(None);
        let exec = Prepare {
            filter: self,
            gpu,
            tuning: *tuning,
            prepared: &prepared,
        };
        // SAFETY: `Prepare` reads no memory; the pointers describe nothing it touches.
        unsafe { execute(&exec, self, (8, in_desc), (8, out_desc), opts)? };
        prepared
            .into_inner()
            .ok_or_else(|| GpuError::Invalid("prepare: the arrays are empty".into()))
    }

    /// Starts the filter on device arrays: `input` and `output` are device pointers to arrays
    /// described by the descriptors (strides in bytes), on `stream` (`None`: the device's own).
    /// Returns when the work is queued; [`Pending::finish`] waits and reports failures.
    ///
    /// # Safety
    /// The pointers must address device memory of this GPU covering the described arrays, and
    /// must stay valid until the work is done. The arrays may overlap (the input is then copied).
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn launch(
        &self,
        gpu: &Arc<Gpu>,
        input: u64,
        in_desc: &ArrayDesc,
        output: u64,
        out_desc: &ArrayDesc,
        opts: &Options,
        stream: Option<CUstream>,
    ) -> Result<Pending> {
        let exec = OnDevice::new(self, gpu, stream);
        // SAFETY: the caller's contract.
        unsafe { self.launch_on(&exec, (input, in_desc), (output, out_desc), opts) }
    }

    /// [`GpuFilter::launch`] through `exec` (its GPU, stream and [`Tuning`]).
    ///
    /// # Safety
    /// As [`GpuFilter::launch`].
    pub unsafe fn launch_on(
        &self,
        exec: &OnDevice<'_>,
        input: (u64, &ArrayDesc),
        output: (u64, &ArrayDesc),
        opts: &Options,
    ) -> Result<Pending> {
        // SAFETY: the caller's contract.
        unsafe { execute(exec, self, input, output, opts)? };
        Ok(Pending(exec.pending.take()))
    }

    /// Runs the filter on device arrays (zero-copy) and waits for it, except where the kernel
    /// cannot fail and runs on the caller's `stream` (see [`Pending::finish`]).
    ///
    /// # Safety
    /// As [`GpuFilter::launch`].
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn run_raw(
        &self,
        gpu: &Arc<Gpu>,
        input: u64,
        in_desc: &ArrayDesc,
        output: u64,
        out_desc: &ArrayDesc,
        opts: &Options,
        stream: Option<CUstream>,
    ) -> Result<()> {
        unsafe { self.launch(gpu, input, in_desc, output, out_desc, opts, stream)? }.finish()
    }

    /// Runs the filter on host memory: `input` and `output` point at host arrays described by the
    /// descriptors (strides in bytes); both are copied.
    ///
    /// # Safety
    /// The pointers must be valid for the described arrays.
    pub unsafe fn run_host_raw(
        &self,
        gpu: &Arc<Gpu>,
        input: *const u8,
        in_desc: &ArrayDesc,
        output: *mut u8,
        out_desc: &ArrayDesc,
        opts: &Options,
    ) -> Result<()> {
        let exec = FromHost(OnDevice::new(self, gpu, None));
        // SAFETY: the caller's contract.
        unsafe {
            execute(
                &exec,
                self,
                (input as u64, in_desc),
                (output as u64, out_desc),
                opts,
            )
        }
    }

    /// Runs the filter on a host array; the output has type `B` (scipy's `output=` dtype).
    pub fn run<A: Element, B: Element>(
        &self,
        gpu: &Arc<Gpu>,
        input: ArrayViewD<'_, A>,
        opts: &Options,
    ) -> Result<ArrayD<B>> {
        let d_in = DeviceArray::from_host(gpu, input.view())?;
        let mut d_out = DeviceArray::new(gpu, B::DTYPE, input.shape())?;
        self.run_device(gpu, &d_in, &mut d_out, opts)?;
        d_out.to_host(gpu)
    }

    /// Runs the filter from one device array into another and waits.
    pub fn run_device(
        &self,
        gpu: &Arc<Gpu>,
        input: &DeviceArray,
        output: &mut DeviceArray,
        opts: &Options,
    ) -> Result<()> {
        // SAFETY: both arrays are ours, allocated on this GPU with their descriptors.
        unsafe {
            self.run_raw(
                gpu,
                input.ptr(),
                input.desc(),
                output.ptr(),
                output.desc(),
                opts,
                None,
            )
        }
    }
}

/// [`driver::execute`] on arrays at these addresses (device or host, as `executor` reads them).
///
/// # Safety
/// As [`Executor::execute`] for `executor`.
unsafe fn execute<E: Executor<Error = GpuError>>(
    executor: &E,
    filter: &GpuFilter,
    (input, in_desc): (u64, &ArrayDesc),
    (output, out_desc): (u64, &ArrayDesc),
    opts: &Options,
) -> Result<()> {
    let input = RawArray {
        ptr: input as *const u8,
        dtype: in_desc.dtype,
        shape: in_desc.shape.clone(),
        strides: in_desc.strides.clone(),
    };
    let output = RawArrayMut {
        ptr: output as *mut u8,
        dtype: out_desc.dtype,
        shape: out_desc.shape.clone(),
        strides: out_desc.strides.clone(),
    };
    // SAFETY: the caller's contract.
    unsafe { driver::execute(executor, &input, &output, &filter.filter, opts) }
}

/// The GPU's overlap policy. An output that overlaps the input is refused: scipy's loop then
/// reads pixels it has already written, an order that threads running in parallel cannot
/// reproduce, and reading a copy instead would silently give another result. An output whose
/// elements share bytes is refused on the device, where threads writing them would race (the
/// host executor writes its copy back in scipy's order instead).
pub(crate) fn check_overlap(aliasing: Aliasing, on_host: bool) -> Result<()> {
    match aliasing {
        Aliasing::Disjoint => Ok(()),
        Aliasing::SelfOverlapping if on_host => Ok(()),
        Aliasing::OverlapsInput => Err(GpuError::Invalid(
            "the output overlaps the input: scipy's loop then reads pixels it has already \
             written, an order the GPU's parallel threads cannot reproduce; pass a separate \
             output array, or run on the CPU"
                .into(),
        )),
        Aliasing::SelfOverlapping => Err(GpuError::Unsupported(
            "outputs whose elements overlap each other (a zero stride, say)".into(),
        )),
    }
}

/// The GPU as an executor of the driver's runs on device memory, on `stream` (`None`: the
/// device's own). The work is queued; [`Pending::finish`] (or [`Executor::execute`], which
/// waits) reports failures.
pub struct OnDevice<'a> {
    pub filter: &'a GpuFilter,
    pub gpu: &'a Arc<Gpu>,
    pub stream: Option<CUstream>,
    pub tuning: Tuning,
    pending: RefCell<Option<Launched>>,
}

impl<'a> OnDevice<'a> {
    pub fn new(filter: &'a GpuFilter, gpu: &'a Arc<Gpu>, stream: Option<CUstream>) -> Self {
        OnDevice {
            filter,
            gpu,
            stream,
            tuning: Tuning::default(),
            pending: RefCell::new(None),
        }
    }

    /// With the GPU's own knobs (none changes a result).
    pub fn tuning(mut self, tuning: Tuning) -> Self {
        self.tuning = tuning;
        self
    }

    /// Queues the run (see [`GpuFilter::launch`]).
    ///
    /// # Safety
    /// As [`GpuFilter::launch`].
    unsafe fn launch(&self, run: &Resolved<'_>) -> Result<Launched> {
        check_overlap(run.aliasing, false)?;
        let gpu = self.gpu;
        let stream = self.stream.unwrap_or_else(|| gpu.cu_stream());
        let (in_desc, out_desc) = ArrayDesc::of_run(run);
        let g = Geometry::new(&in_desc, &out_desc)?;
        let (input, output) = (run.input.ptr as u64, run.output.ptr as u64);
        let spec = KernelSpec::resolved(run, g.contiguous(), gpu.target(), &self.tuning);
        // SAFETY (both): the caller's pointers, valid for the resolved run.
        let passes = match self.filter.passes(&spec, &self.tuning)? {
            Some(p) => unsafe { self.launch_passes(&p, &g, (input, output), stream)? },
            None => None,
        };
        let record = match passes {
            Some(record) => record,
            None => unsafe { self.launch_general(&spec, &g, (input, output), stream)? },
        };
        Ok(Launched {
            gpu: gpu.clone(),
            record,
            geometry: g,
            rank: run.rank,
            filter: run.filter.clone(),
            params: (input, output),
            stream,
            callers_stream: self.stream.is_some(),
        })
    }

    /// Queues the general kernel; returns its error record if it can fail.
    ///
    /// # Safety
    /// As [`GpuFilter::launch`].
    unsafe fn launch_general(
        &self,
        spec: &KernelSpec,
        g: &Geometry,
        (input, output): (u64, u64),
        stream: CUstream,
    ) -> Result<Option<Record>> {
        let gpu = self.gpu;
        let ready = self.filter.ready(spec)?;
        let (module, kernel) = (ready.module(gpu)?, ready.kernel.clone());
        let block = plan::block(g, &kernel);
        let grid = plan::grid(g, &kernel, block);
        // A kernel that cannot fail never writes an error record: none is reset or read back.
        let record = match kernel.can_fail {
            // SAFETY: `stream` is live (the caller's promise).
            true => Some(unsafe { self.record(&kernel, stream)? }),
            false => None,
        };
        let err = record.as_ref().map_or(0, |r| r.buffer.ptr());
        let params = plan::params(g, input, output, err, None);
        // SAFETY: the parameters are the kernel's, the pointers the caller's.
        unsafe {
            gpu.launch(
                module.function(codegen::ENTRY),
                (grid, block, 0),
                &params,
                stream,
            )?
        };
        Ok(record)
    }

    /// An error record for `kernel`, reset (all bytes 0xFF) in `stream`'s order.
    ///
    /// # Safety
    /// `stream` is live.
    unsafe fn record(&self, kernel: &Arc<Kernel>, stream: CUstream) -> Result<Record> {
        let bytes = plan::err_bytes(kernel);
        let buffer = self.gpu.scratch(bytes)?;
        // SAFETY: our own buffer, on a live stream.
        unsafe { self.gpu.memset(buffer.ptr(), 0xff, bytes, stream)? };
        Ok(Record {
            buffer,
            bytes,
            kernel: kernel.clone(),
        })
    }

    /// Queues a separable plan's steps, with its scratch allocated and freed in the stream's
    /// order; returns the patch kernel's error record where it can fail, or `None` (nothing
    /// queued) where the device cannot allocate that way.
    ///
    /// # Safety
    /// As [`GpuFilter::launch`]; `stream` is live.
    unsafe fn launch_passes(
        &self,
        p: &Passes,
        g: &Geometry,
        (input, output): (u64, u64),
        stream: CUstream,
    ) -> Result<Option<Option<Record>>> {
        let gpu = self.gpu;
        let need = p.scratch(g);
        // SAFETY: every use of these buffers is queued on `stream` below, before they drop.
        // Where the scratch cannot be had (no memory pools, or not enough memory for it), the
        // general kernel, which needs none, runs instead.
        let alloc = |bytes: usize| unsafe { gpu.alloc_on(bytes, stream) }.ok().flatten();
        let mut arrays = Vec::new();
        for _ in 0..need.arrays {
            match alloc(need.array) {
                Some(b) => arrays.push(b),
                None => return Ok(None),
            }
        }
        let flags = match need.flags {
            0 => None,
            n => match alloc(n) {
                // SAFETY: our own buffer, on its stream.
                Some(f) => unsafe { gpu.memset(f.ptr(), 0, n, stream).map(|_| Some(f))? },
                None => return Ok(None),
            },
        };
        let record = match p.failing_patch() {
            // SAFETY: `stream` is live.
            Some(r) => Some(unsafe { self.record(&r.kernel, stream)? }),
            None => None,
        };
        let ptrs: Vec<u64> = arrays.iter().map(|b| b.ptr()).collect();
        let bufs = p.buffers(
            (input, output),
            &ptrs,
            (
                flags.as_ref().map_or(0, |f| f.ptr()),
                record.as_ref().map_or(0, |r| r.buffer.ptr()),
            ),
        );
        let names: Vec<&str> = p.entries.iter().map(String::as_str).collect();
        let module = p.code.module(gpu, &p.module, &names)?;
        for step in p.steps(g, &bufs, gpu.multiprocessors()) {
            let f = module.function(&step.entry);
            // SAFETY: the parameters are the step's kernel's; the pointers the caller's or ours.
            let dims = (step.grid, step.block, step.shared);
            unsafe { gpu.launch(f, dims, &step.params, stream)? };
        }
        Ok(Some(record))
    }
}

impl Executor for OnDevice<'_> {
    type Error = GpuError;

    /// The kernels are made from the filter's IR ([`GpuFilter::kernel`]).
    fn runs_native_code(&self) -> bool {
        false
    }

    /// Queues the run and keeps it pending; [`GpuFilter::launch`] hands it over.
    unsafe fn execute(&self, run: &Resolved<'_>) -> Result<()> {
        let launched = unsafe { self.launch(run)? };
        *self.pending.borrow_mut() = Some(launched);
        Ok(())
    }
}

/// The GPU on host arrays: the input copied to the device (C-contiguous), the output copied
/// back, and waited for. Like scipy, the output holds what was computed even when a pixel fails.
pub struct FromHost<'a>(pub OnDevice<'a>);

impl Executor for FromHost<'_> {
    type Error = GpuError;

    /// The kernels are made from the filter's IR ([`GpuFilter::kernel`]).
    fn runs_native_code(&self) -> bool {
        false
    }

    unsafe fn execute(&self, run: &Resolved<'_>) -> Result<()> {
        check_overlap(run.aliasing, true)?;
        let gpu = self.0.gpu;
        // The output is written back one element at a time in C order, so where output elements
        // share memory the last pixel wins, as in scipy's loop.
        let (in_desc, out_desc) = ArrayDesc::of_run(run);
        let ci = ArrayDesc::contiguous(in_desc.dtype, &in_desc.shape);
        let co = ArrayDesc::contiguous(out_desc.dtype, &out_desc.shape);
        // SAFETY: the caller's contract.
        let host_in = unsafe { gather_bytes(run.input.ptr, &in_desc) };
        let d_in = DeviceArray::new(gpu, ci.dtype, &ci.shape)?;
        let d_out = DeviceArray::new(gpu, co.dtype, &co.shape)?;
        // SAFETY: sizes match the contiguous descriptors; we wait before `host_in` is dropped.
        unsafe { gpu.upload(d_in.ptr(), &host_in, gpu.cu_stream())? };
        let (input, output) = (
            RawArray {
                ptr: d_in.ptr() as *const u8,
                strides: ci.strides.clone(),
                ..run.input.clone()
            },
            RawArrayMut {
                ptr: d_out.ptr() as *mut u8,
                strides: co.strides.clone(),
                ..run.output.clone()
            },
        );
        // The device arrays are fresh: disjoint.
        let on_device = Resolved {
            input: &input,
            output: &output,
            aliasing: Aliasing::Disjoint,
            ..*run
        };
        let r = unsafe { self.0.launch(&on_device) }.and_then(Launched::finish);
        let mut host_out = vec![0u8; co.len() * co.dtype.itemsize()];
        // SAFETY: the output buffer's size.
        unsafe { gpu.download(&mut host_out, d_out.ptr(), gpu.cu_stream())? };
        unsafe { scatter_bytes(&host_out, run.output.ptr, &out_desc) };
        r
    }
}

/// Generates the kernel of a run and keeps its PTX (for [`GpuFilter::ptx`]).
struct Inspect<'a, 's> {
    filter: &'a GpuFilter,
    target: Target,
    tuning: Tuning,
    ptx: RefCell<&'s mut String>,
}

impl Executor for Inspect<'_, '_> {
    type Error = GpuError;

    /// The kernels are made from the filter's IR ([`GpuFilter::kernel`]).
    fn runs_native_code(&self) -> bool {
        false
    }

    unsafe fn execute(&self, run: &Resolved<'_>) -> Result<()> {
        let spec = KernelSpec::resolved(run, true, self.target, &self.tuning);
        let ptx = match self.filter.passes(&spec, &self.tuning)? {
            // The passes and the patch kernel, one module.
            Some(p) => p.code.ptx(&p.module).to_string(),
            None => self.filter.ready(&spec)?.ptx().to_string(),
        };
        **self.ptx.borrow_mut() = ptx;
        Ok(())
    }
}

/// Generates and loads the kernel of a run (for [`GpuFilter::prepare`]).
struct Prepare<'a> {
    filter: &'a GpuFilter,
    gpu: &'a Gpu,
    tuning: Tuning,
    prepared: &'a RefCell<Option<Prepared>>,
}

impl Executor for Prepare<'_> {
    type Error = GpuError;

    /// The kernels are made from the filter's IR ([`GpuFilter::kernel`]).
    fn runs_native_code(&self) -> bool {
        false
    }

    unsafe fn execute(&self, run: &Resolved<'_>) -> Result<()> {
        let (in_desc, out_desc) = ArrayDesc::of_run(run);
        let g = Geometry::new(&in_desc, &out_desc)?;
        let spec = KernelSpec::resolved(run, g.contiguous(), self.gpu.target(), &self.tuning);
        let ready = self.filter.ready(&spec)?;
        let (module, kernel) = (ready.module(self.gpu)?, ready.kernel.clone());
        let block = plan::block(&g, &kernel);
        let grid = plan::grid(&g, &kernel, block);
        *self.prepared.borrow_mut() = Some(Prepared {
            module,
            kernel,
            geometry: g,
            grid,
            block,
        });
        Ok(())
    }
}

/// A C-contiguous copy of a strided host array.
///
/// # Safety
/// `base` must be valid for the described array.
pub(crate) unsafe fn gather_bytes(base: *const u8, d: &ArrayDesc) -> Vec<u8> {
    let es = d.dtype.itemsize();
    let mut out = Vec::with_capacity(d.len() * es);
    let n = d.len();
    let mut idx = vec![0usize; d.shape.len()];
    for _ in 0..n {
        let off: isize = idx
            .iter()
            .zip(&d.strides)
            .map(|(&i, &s)| i as isize * s)
            .sum();
        // SAFETY: the caller's contract.
        out.extend_from_slice(unsafe { std::slice::from_raw_parts(base.offset(off), es) });
        for a in (0..idx.len()).rev() {
            idx[a] += 1;
            if idx[a] < d.shape[a] {
                break;
            }
            idx[a] = 0;
        }
    }
    out
}

/// Writes C-contiguous bytes into a strided host array.
///
/// # Safety
/// `base` must be valid for the described array.
pub(crate) unsafe fn scatter_bytes(src: &[u8], base: *mut u8, d: &ArrayDesc) {
    let es = d.dtype.itemsize();
    let mut idx = vec![0usize; d.shape.len()];
    for k in 0..d.len() {
        let off: isize = idx
            .iter()
            .zip(&d.strides)
            .map(|(&i, &s)| i as isize * s)
            .sum();
        // SAFETY: the caller's contract.
        unsafe { std::ptr::copy_nonoverlapping(src[k * es..].as_ptr(), base.offset(off), es) };
        for a in (0..idx.len()).rev() {
            idx[a] += 1;
            if idx[a] < d.shape[a] {
                break;
            }
            idx[a] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_overlapping_the_input_are_refused_and_shared_outputs_on_the_device() {
        for on_host in [false, true] {
            assert!(check_overlap(Aliasing::Disjoint, on_host).is_ok());
            let refused = check_overlap(Aliasing::OverlapsInput, on_host).unwrap_err();
            assert!(matches!(&refused, GpuError::Invalid(m) if m.contains("overlaps the input")));
        }
        assert!(check_overlap(Aliasing::SelfOverlapping, true).is_ok());
        let refused = check_overlap(Aliasing::SelfOverlapping, false).unwrap_err();
        assert!(matches!(&refused, GpuError::Unsupported(m) if m.contains("overlap each other")));
    }
}
