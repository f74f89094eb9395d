//! The public API: a compiled filter run as a GPU stencil, on host arrays (copied in and out) or on
//! device memory (no copies).

use crate::codegen::{self, DType, Kernel, KernelSpec, Mode, Target};
use crate::error::{GpuError, Result};
use crate::plan::{self, ArrayDesc, Geometry};
use crate::runtime::{DeviceBuffer, Gpu, Module};
use cudarc::driver::sys::CUstream;
use ndarray::{ArrayD, ArrayViewD, IxDyn};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The neighbourhood: a boolean footprint over the image's axes (scipy's `footprint`, or a box
/// for `size`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Footprint {
    pub shape: Vec<usize>,
    /// Row-major, `shape.iter().product()` entries.
    pub mask: Vec<bool>,
}

impl Footprint {
    /// A full box (scipy's `size=`).
    pub fn size(shape: &[usize]) -> Footprint {
        Footprint {
            shape: shape.to_vec(),
            mask: vec![true; shape.iter().product()],
        }
    }
    pub fn from_mask(shape: &[usize], mask: &[bool]) -> Result<Footprint> {
        if mask.len() != shape.iter().product::<usize>() {
            return Err(GpuError::Invalid(
                "footprint array has incorrect shape".into(),
            ));
        }
        Ok(Footprint {
            shape: shape.to_vec(),
            mask: mask.to_vec(),
        })
    }
    /// The 3×3 cross (`generate_binary_structure(2, 1)`).
    pub fn cross() -> Footprint {
        Footprint {
            shape: vec![3, 3],
            mask: vec![false, true, false, true, true, true, false, true, false],
        }
    }
    /// The number of true entries: the `filter_size` the filter is called with.
    pub fn count(&self) -> usize {
        self.mask.iter().filter(|&&b| b).count()
    }
}

/// How the filter is applied (scipy's `generic_filter` arguments).
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    pub footprint: Footprint,
    pub mode: Mode,
    pub cval: f64,
    /// One entry per axis; empty means zeros.
    pub origin: Vec<isize>,
    /// Outputs per thread (0: chosen from the filter).
    pub outputs_per_thread: u32,
    /// Rows per thread (0: chosen from the filter).
    pub rows_per_thread: u32,
    /// How median networks compare (a tuning knob; both are exact).
    pub network: crate::codegen::body::NetworkStyle,
}

impl Options {
    pub fn new(footprint: Footprint) -> Options {
        Options {
            footprint,
            mode: Mode::Reflect,
            cval: 0.0,
            origin: vec![],
            outputs_per_thread: 0,
            rows_per_thread: 0,
            network: crate::codegen::body::NetworkStyle::Select,
        }
    }
    pub fn mode(mut self, m: Mode) -> Options {
        self.mode = m;
        self
    }
    pub fn cval(mut self, c: f64) -> Options {
        self.cval = c;
        self
    }
    pub fn origin(mut self, o: &[isize]) -> Options {
        self.origin = o.to_vec();
        self
    }

    /// The kernel spec for images of `rank` axes.
    pub fn spec(
        &self,
        rank: usize,
        input: DType,
        output: DType,
        contiguous: bool,
        target: Target,
    ) -> Result<KernelSpec> {
        if self.footprint.shape.len() != rank {
            return Err(GpuError::Invalid(
                "footprint array has incorrect shape".into(),
            ));
        }
        let origin = if self.origin.is_empty() {
            vec![0; rank]
        } else {
            self.origin.clone()
        };
        let spec = KernelSpec {
            shape: self.footprint.shape.clone(),
            mask: self.footprint.mask.clone(),
            mode: self.mode,
            cval: self.cval,
            origin,
            input,
            output,
            contiguous,
            outputs_per_thread: self.outputs_per_thread,
            rows_per_thread: self.rows_per_thread,
            target,
            native_minmax: true,
            network: self.network,
        };
        spec.validate()?;
        Ok(spec)
    }
}

/// Rust element types of images on the GPU.
pub trait Element: Copy + Default + 'static {
    const DTYPE: DType;
}
impl Element for f64 {
    const DTYPE: DType = DType::F64;
}
impl Element for f32 {
    const DTYPE: DType = DType::F32;
}
impl Element for u8 {
    const DTYPE: DType = DType::U8;
}
impl Element for u16 {
    const DTYPE: DType = DType::U16;
}
impl Element for i32 {
    const DTYPE: DType = DType::I32;
}

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
    pub fn new(gpu: &Gpu, dtype: DType, shape: &[usize]) -> Result<DeviceArray> {
        let desc = ArrayDesc::contiguous(dtype, shape);
        Ok(DeviceArray {
            buf: gpu.alloc(desc.len() * dtype.size())?,
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

/// A filter launched and not yet waited for (see [`GpuFilter::launch`]).
pub struct Pending {
    gpu: Arc<Gpu>,
    kernel: Arc<Kernel>,
    err: DeviceBuffer,
    err_bytes: usize,
    geometry: Geometry,
    rank: usize,
    filter: ndjit::Filter,
    params: (u64, u64),
    stream: CUstream,
    /// A copy of an overlapping input, read by the kernels.
    _copy: Option<DeviceBuffer>,
}

impl Pending {
    /// Waits for the kernel and reports the first failing pixel as the CPU would.
    pub fn finish(self) -> Result<()> {
        let r = self.check();
        // Freeing memory the stream may still read must wait for it.
        if self._copy.is_some() {
            // SAFETY: the stream the work was launched on, alive for the call.
            unsafe { self.gpu.synchronize(self.stream)? };
        }
        r
    }

    fn check(&self) -> Result<()> {
        let mut key = [0u8; 8];
        // SAFETY: the error buffer holds at least 8 bytes.
        unsafe { self.gpu.download(&mut key, self.err.ptr(), self.stream)? };
        let Some((pixel, _)) = plan::decode_key(u64::from_le_bytes(key)) else {
            return Ok(());
        };
        let params = plan::params(
            &self.geometry,
            self.params.0,
            self.params.1,
            self.err.ptr(),
            Some(pixel),
        );
        let mut rec = vec![0u8; self.err_bytes];
        let replay = self
            .gpu
            .load(&self.kernel.replay.to_ptx(), codegen::REPLAY_ENTRY)?;
        // SAFETY: the replay kernel takes the same arrays plus the pixel; it writes the record.
        unsafe {
            self.gpu.launch(
                replay.function(codegen::REPLAY_ENTRY),
                (1, 1),
                (1, 1),
                &params,
                self.stream,
            )?;
            self.gpu.download(&mut rec, self.err.ptr(), self.stream)?;
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
                self.grid,
                self.block,
                &params,
                stream,
            )
        }
    }
    pub fn err_bytes(&self) -> usize {
        plan::err_bytes(&self.kernel)
    }
}

/// A filter ready to run on GPUs: the CPU filter plus its kernels, generated on demand and
/// cached per (footprint, mode, cval, origin, dtypes, rank, layout, target).
pub struct GpuFilter {
    filter: ndjit::Filter,
    kernels: Mutex<HashMap<String, Arc<Kernel>>>,
}

impl GpuFilter {
    pub fn new(filter: &ndjit::Filter) -> GpuFilter {
        GpuFilter {
            filter: filter.clone(),
            kernels: Mutex::new(HashMap::new()),
        }
    }
    /// Compiles filter source (see [`ndjit::Filter::compile`]).
    pub fn compile(source: &str, bindings: &ndjit::Bindings) -> Result<GpuFilter> {
        Ok(GpuFilter::new(&ndjit::Filter::compile(source, bindings)?))
    }
    pub fn filter(&self) -> &ndjit::Filter {
        &self.filter
    }

    /// The kernel for `spec` (generated once).
    pub fn kernel(&self, spec: &KernelSpec) -> Result<Arc<Kernel>> {
        let key = format!("{spec:?}|{:016x}", spec.cval.to_bits());
        if let Some(k) = self
            .kernels
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
        {
            return Ok(k.clone());
        }
        // The IR specialised to the footprint size with the bound values folded in, made from the
        // filter's lowered IR (no native code, no re-parsing).
        let ir = self.filter.baked_ir(spec.filter_size());
        let f = &self.filter;
        let k = Arc::new(codegen::generate(&ir, f.layout(), f.bound_values(), spec)?);
        self.kernels
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, k.clone());
        Ok(k)
    }

    /// The PTX of the kernel for images of `rank` axes (what `inspect_ptx` shows).
    pub fn ptx(
        &self,
        opts: &Options,
        rank: usize,
        input: DType,
        output: DType,
        target: Target,
    ) -> Result<String> {
        let spec = opts.spec(rank, input, output, true, target)?;
        Ok(self.kernel(&spec)?.module.to_ptx())
    }

    /// Generates and loads the kernel for these arrays on `gpu`.
    pub fn prepare(
        &self,
        gpu: &Gpu,
        in_desc: &ArrayDesc,
        out_desc: &ArrayDesc,
        opts: &Options,
    ) -> Result<Prepared> {
        let g = Geometry::new(in_desc, out_desc)?;
        let spec = opts.spec(
            in_desc.shape.len(),
            in_desc.dtype,
            out_desc.dtype,
            g.contiguous(),
            gpu.target(),
        )?;
        let kernel = self.kernel(&spec)?;
        let module = gpu.load(&kernel.module.to_ptx(), codegen::ENTRY)?;
        let block = plan::block(&g, &kernel);
        let grid = plan::grid(&g, &kernel, block);
        Ok(Prepared {
            module,
            kernel,
            geometry: g,
            grid,
            block,
        })
    }

    /// Starts the filter on device arrays: `input` and `output` are device pointers to arrays
    /// described by the descriptors (strides in bytes), on `stream` (`None`: the device's own).
    /// Returns when the work is queued; [`Pending::finish`] waits and reports failures.
    ///
    /// # Safety
    /// The pointers must address device memory of this GPU covering the described arrays, and
    /// must stay valid until the work is done. The arrays may overlap (the input is then copied).
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
        let stream = stream.unwrap_or_else(|| gpu.cu_stream());
        let Prepared {
            module,
            kernel,
            geometry: g,
            grid,
            block,
        } = self.prepare(gpu, in_desc, out_desc, opts)?;
        let err_bytes = plan::err_bytes(&kernel);
        let err = gpu.alloc(err_bytes)?;
        // SAFETY: our own buffer.
        unsafe { gpu.memset(err.ptr(), 0xff, err_bytes, stream)? };
        // In-place (or overlapping) calls read a copy of the input, as scipy does.
        let (ilo, ihi) = in_desc.byte_span();
        let (olo, ohi) = out_desc.byte_span();
        let (a0, a1) = (input as i128 + ilo as i128, input as i128 + ihi as i128);
        let (b0, b1) = (output as i128 + olo as i128, output as i128 + ohi as i128);
        let mut keep = None;
        let mut input = input;
        if a0 < b1 && b0 < a1 && g.pixels() > 0 {
            let bytes = (ihi - ilo) as usize;
            let tmp = gpu.alloc(bytes)?;
            // SAFETY: the caller guarantees the input span is valid.
            unsafe { gpu.copy(tmp.ptr(), (input as i64 + ilo as i64) as u64, bytes, stream)? };
            input = (tmp.ptr() as i64 - ilo as i64) as u64;
            keep = Some(tmp);
        }
        if g.pixels() > 0 {
            let params = plan::params(&g, input, output, err.ptr(), None);
            // SAFETY: the parameters are the kernel's, the pointers the caller's.
            unsafe {
                gpu.launch(
                    module.function(codegen::ENTRY),
                    grid,
                    block,
                    &params,
                    stream,
                )?
            };
        }
        // A failure is replayed on the CPU, where any version of the filter gives its error.
        let filter = self.filter.clone();
        drop(module);
        Ok(Pending {
            gpu: gpu.clone(),
            kernel,
            err,
            err_bytes,
            geometry: g,
            rank: in_desc.shape.len(),
            filter,
            params: (input, output),
            stream,
            _copy: keep,
        })
    }

    /// Runs the filter on device arrays and waits (zero-copy).
    ///
    /// # Safety
    /// As [`GpuFilter::launch`].
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
        let ci = ArrayDesc::contiguous(in_desc.dtype, &in_desc.shape);
        let co = ArrayDesc::contiguous(out_desc.dtype, &out_desc.shape);
        // SAFETY: the caller's contract.
        let host_in = unsafe { gather_bytes(input, in_desc) };
        let d_in = DeviceArray::new(gpu, ci.dtype, &ci.shape)?;
        let d_out = DeviceArray::new(gpu, co.dtype, &co.shape)?;
        // SAFETY: sizes match the contiguous descriptors; we wait before `host_in` is dropped.
        unsafe {
            gpu.upload(d_in.ptr(), &host_in, gpu.cu_stream())?;
        }
        let r = unsafe { self.run_raw(gpu, d_in.ptr(), &ci, d_out.ptr(), &co, opts, None) };
        let mut host_out = vec![0u8; co.len() * co.dtype.size()];
        // SAFETY: the output buffer's size.
        unsafe { gpu.download(&mut host_out, d_out.ptr(), gpu.cu_stream())? };
        // Like scipy, the output holds what was computed even when a pixel failed.
        unsafe { scatter_bytes(&host_out, output, out_desc) };
        r
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

/// A C-contiguous copy of a strided host array.
///
/// # Safety
/// `base` must be valid for the described array.
unsafe fn gather_bytes(base: *const u8, d: &ArrayDesc) -> Vec<u8> {
    let es = d.dtype.size();
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
unsafe fn scatter_bytes(src: &[u8], base: *mut u8, d: &ArrayDesc) {
    let es = d.dtype.size();
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
