//! The CUDA side, through cudarc's driver API: device discovery, module loading with ptxas's
//! error log, device memory, launches, streams and events.
//!
//! libcuda is loaded at run time (cudarc's `dynamic-loading`): a machine without the NVIDIA driver
//! gets [`GpuError::NoDevice`] from [`Gpu::get`], never a panic, and nothing else in ndjit changes.

use crate::codegen::Target;
use crate::error::{GpuError, Result};
use crate::plan::PVal;
use cudarc::driver::result;
use cudarc::driver::sys;
use cudarc::driver::{CudaContext, CudaEvent, CudaStream};
use ndjit::driver::Lru;
use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::sync::{Arc, Mutex, OnceLock};

fn driver(call: &'static str) -> impl Fn(result::DriverError) -> GpuError {
    move |e| GpuError::Driver {
        call,
        code: format!("{e:?}"),
    }
}

/// One CUDA device: its context, a stream, and the modules loaded on it.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    name: String,
    capability: (i32, i32),
    driver_version: i32,
    target: Target,
    /// Its streaming multiprocessors, which a launch's blocks should keep busy.
    multiprocessors: u32,
    /// Loaded stencil modules by PTX text, the [`MODULES`] most recently used: compiling PTX is
    /// the expensive part of a first call.
    modules: Mutex<Lru<Arc<str>, Arc<Module>>>,
    /// Small buffers given back after use (the kernels' error records), so that a repeated call
    /// allocates no device memory.
    scratch: Mutex<Vec<DeviceBuffer>>,
}

/// Scratch buffers kept per device.
const SCRATCH: usize = 8;

/// Modules kept loaded per device (a module a filter, footprint and dtype; more once its
/// filters are dropped cost device memory for code no call reaches).
const MODULES: usize = 128;

/// Bytes of freed stream-ordered scratch the device's pool keeps across synchronisations (the
/// rest goes back to the system): the scratch of a float32 image of 8192² is 256 MiB per array.
const POOL_KEEP: u64 = 1 << 30;

static DEVICES: OnceLock<Mutex<HashMap<usize, Arc<Gpu>>>> = OnceLock::new();

impl Gpu {
    /// The device `ordinal` (shared by every caller in the process).
    pub fn get(ordinal: usize) -> Result<Arc<Gpu>> {
        let map = DEVICES.get_or_init(|| Mutex::new(HashMap::new()));
        let mut map = map.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(g) = map.get(&ordinal) {
            return Ok(g.clone());
        }
        let g = Arc::new(Gpu::open(ordinal)?);
        map.insert(ordinal, g.clone());
        Ok(g)
    }

    /// Whether a CUDA device can be used, with the reason when not.
    pub fn available() -> Result<()> {
        Gpu::get(0).map(|_| ())
    }

    fn open(ordinal: usize) -> Result<Gpu> {
        // cudarc panics on its first call when libcuda cannot be loaded: look first.
        // SAFETY: only tries to dlopen the library.
        if !unsafe { sys::is_culib_present() } {
            return Err(GpuError::NoDevice(
                "the NVIDIA driver library (libcuda.so) is not installed".into(),
            ));
        }
        let n = CudaContext::device_count().map_err(|e| {
            GpuError::NoDevice(format!("the CUDA driver could not be initialised ({e:?})"))
        })?;
        if n <= 0 {
            return Err(GpuError::NoDevice("the CUDA driver reports no GPU".into()));
        }
        if ordinal >= n as usize {
            return Err(GpuError::NoDevice(format!(
                "device {ordinal} requested, the driver reports {n}"
            )));
        }
        let ctx = CudaContext::new(ordinal).map_err(|e| {
            GpuError::NoDevice(format!(
                "cannot create a context on device {ordinal} ({e:?})"
            ))
        })?;
        // This crate orders its own work on its streams; cudarc's per-buffer events are not needed.
        // SAFETY: no cudarc buffers are shared across streams by this crate.
        unsafe { ctx.disable_event_tracking() };
        if ctx.has_async_alloc() {
            // Stream-ordered scratch (`Gpu::alloc_on`) is freed back to the device's pool, which
            // by default returns it to the system at every synchronisation: keep up to
            // `POOL_KEEP` of it, so that the next call's scratch costs no new mapping, without
            // holding more from other allocators (CuPy's, the legacy `cuMemAlloc`).
            let mut keep = POOL_KEEP;
            // SAFETY: the context's own device; the attribute takes a u64.
            let _ = unsafe {
                result::device::get_default_mem_pool(ctx.cu_device()).and_then(|pool| {
                    result::mem_pool::set_attribute(
                        pool,
                        sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                        &mut keep as *mut u64 as *mut c_void,
                    )
                })
            };
        }
        let capability = ctx
            .compute_capability()
            .map_err(driver("cuDeviceGetAttribute"))?;
        let mut driver_version = 0;
        // SAFETY: writes one int.
        unsafe { sys::cuDriverGetVersion(&mut driver_version) }
            .result()
            .map_err(driver("cuDriverGetVersion"))?;
        let name = ctx.name().unwrap_or_else(|_| "CUDA device".into());
        let stream = ctx.new_stream().map_err(driver("cuStreamCreate"))?;
        // The static limit where the device does not say (the attribute is from CUDA 9.0).
        let shared = ctx
            .attribute(
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            )
            .unwrap_or(0);
        let target = Target::for_device(capability.0, capability.1, driver_version, shared);
        // 0 where the device does not say: launches then size their blocks' work as the plan does.
        let multiprocessors = ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_or(0, |n| n.max(0) as u32);
        Ok(Gpu {
            ctx,
            stream,
            name,
            capability,
            driver_version,
            target,
            multiprocessors,
            modules: Mutex::new(Lru::new(MODULES)),
            scratch: Mutex::new(Vec::new()),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn compute_capability(&self) -> (i32, i32) {
        self.capability
    }
    /// The driver's CUDA version, as `cuDriverGetVersion` reports it (12080 for 12.8).
    pub fn driver_version(&self) -> i32 {
        self.driver_version
    }
    /// The PTX target this device gets.
    pub fn target(&self) -> Target {
        self.target
    }
    /// Its streaming multiprocessors (0 where the driver does not say).
    pub fn multiprocessors(&self) -> u32 {
        self.multiprocessors
    }
    /// This device's stream (kernels and copies of this crate run on it unless told otherwise).
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }
    pub fn cu_stream(&self) -> sys::CUstream {
        self.stream.cu_stream()
    }
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    pub(crate) fn bind(&self) -> Result<()> {
        self.ctx.bind_to_thread().map_err(driver("cuCtxSetCurrent"))
    }

    /// Loads a module with the kernels `entries`, cached by its text. A rejected module reports
    /// ptxas's own log.
    pub fn load(&self, ptx: &str, entries: &[&str]) -> Result<Arc<Module>> {
        if let Some(m) = self
            .modules
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(ptx)
        {
            return Ok(m.clone());
        }
        // Compile outside the lock: loads of different modules proceed in parallel (the same
        // module loaded twice at once keeps the later load).
        let m = Arc::new(self.load_entries(ptx, entries)?);
        self.modules
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(ptx.into(), m.clone());
        Ok(m)
    }

    /// Loads any module and looks up the named kernels (not cached).
    pub fn load_entries(&self, ptx: &str, entries: &[&str]) -> Result<Module> {
        self.bind()?;
        Module::load(self.ctx.clone(), ptx, entries)
    }

    /// A new stream on this device.
    pub fn new_stream(&self) -> Result<Arc<CudaStream>> {
        self.ctx.new_stream().map_err(driver("cuStreamCreate"))
    }

    /// Device memory of `bytes` bytes (uninitialised).
    pub fn alloc(&self, bytes: usize) -> Result<DeviceBuffer> {
        self.bind()?;
        // SAFETY: plain allocation; freed by DeviceBuffer's Drop.
        let ptr = if bytes == 0 {
            0
        } else {
            unsafe { result::malloc_sync(bytes) }.map_err(driver("cuMemAlloc"))?
        };
        Ok(DeviceBuffer {
            ctx: self.ctx.clone(),
            ptr,
            bytes,
        })
    }

    /// Device memory of `bytes` bytes (uninitialised) allocated in `stream`'s order and freed
    /// in it when dropped, so that work queued on `stream` before the drop may still use it;
    /// `None` where the device has no memory pools.
    ///
    /// # Safety
    /// `stream` must be a live stream of this device's context, and outlive the buffer; every
    /// use of the memory must be queued on it.
    pub unsafe fn alloc_on(
        &self,
        bytes: usize,
        stream: sys::CUstream,
    ) -> Result<Option<StreamBuffer>> {
        if !self.ctx.has_async_alloc() {
            return Ok(None);
        }
        self.bind()?;
        // SAFETY: the caller's contract; freed by StreamBuffer's Drop.
        let ptr = unsafe { result::malloc_async(stream, bytes.max(1)) }
            .map_err(driver("cuMemAllocAsync"))?;
        Ok(Some(StreamBuffer {
            ctx: self.ctx.clone(),
            ptr,
            stream,
        }))
    }

    /// A buffer of at least `bytes` bytes (uninitialised), reused from [`Gpu::recycle`] when one
    /// is there.
    pub fn scratch(&self, bytes: usize) -> Result<DeviceBuffer> {
        let mut kept = self.scratch.lock().unwrap_or_else(|p| p.into_inner());
        match kept.iter().position(|b| b.bytes >= bytes) {
            Some(k) => Ok(kept.swap_remove(k)),
            None => {
                drop(kept);
                self.alloc(bytes)
            }
        }
    }

    /// Keeps a buffer no work uses any more for [`Gpu::scratch`] (a few, the rest are freed).
    pub fn recycle(&self, buf: DeviceBuffer) {
        let mut kept = self.scratch.lock().unwrap_or_else(|p| p.into_inner());
        if kept.len() < SCRATCH {
            kept.push(buf);
        }
    }

    /// Blocks until the work queued on `stream` is done.
    ///
    /// # Safety
    /// `stream` must be a live stream of this device's context, or null (the legacy default).
    pub unsafe fn synchronize(&self, stream: sys::CUstream) -> Result<()> {
        self.bind()?;
        // SAFETY: the caller's contract.
        unsafe { result::stream::synchronize(stream) }.map_err(driver("cuStreamSynchronize"))
    }

    /// Blocks until the work queued on this device's own stream is done.
    pub fn synchronize_own(&self) -> Result<()> {
        // SAFETY: the device's own stream lives as long as `self`.
        unsafe { self.synchronize(self.cu_stream()) }
    }

    /// The ordinal of the device that owns `ptr`, checking that it is device (or managed)
    /// memory: a host pointer passed as a device array gets this error instead of a kernel fault.
    pub fn pointer_device(ptr: u64) -> Result<usize> {
        Gpu::available()?;
        let mut ordinal: i32 = -1;
        // SAFETY: writes one int; the driver is initialised (`available`).
        let r = unsafe {
            sys::cuPointerGetAttribute(
                &mut ordinal as *mut i32 as *mut c_void,
                sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                ptr,
            )
        };
        match r.result() {
            Ok(()) if ordinal >= 0 => Ok(ordinal as usize),
            _ => Err(GpuError::Invalid(format!(
                "0x{ptr:x} is not CUDA device memory (pass a NumPy array to copy host data)"
            ))),
        }
    }

    /// A timing event.
    pub fn event(&self) -> Result<CudaEvent> {
        self.ctx
            .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(driver("cuEventCreate"))
    }

    /// Launches `f` with `params` on `stream`, with `shared` bytes of dynamic shared memory a
    /// block (0 for kernels without; more than the static limit is opted into first).
    ///
    /// # Safety
    /// The parameters must match the kernel's, and every pointer among them must be valid for
    /// what the kernel accesses.
    pub unsafe fn launch(
        &self,
        f: sys::CUfunction,
        (grid, block, shared): ((u32, u32), (u32, u32), u32),
        params: &[PVal],
        stream: sys::CUstream,
    ) -> Result<()> {
        self.bind()?;
        if shared as u64 > crate::pir::STATIC_SHARED {
            // SAFETY: `f` is a loaded kernel; the attribute takes a byte count.
            unsafe {
                result::function::set_function_attribute(
                    f,
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    shared as i32,
                )
            }
            .map_err(driver("cuFuncSetAttribute"))?;
        }
        let mut slots: Vec<u64> = params.iter().map(|p| p.bits()).collect();
        let mut ptrs: Vec<*mut c_void> = slots
            .iter_mut()
            .map(|s| s as *mut u64 as *mut c_void)
            .collect();
        // SAFETY: the caller's contract; each parameter points at an 8-byte little-endian slot,
        // whose first 4 bytes are the value of a 32-bit parameter.
        unsafe {
            result::launch_kernel(
                f,
                (grid.0, grid.1, 1),
                (block.0, block.1, 1),
                shared,
                stream,
                &mut ptrs,
            )
        }
        .map_err(driver("cuLaunchKernel"))
    }

    /// Copies host bytes to device memory (asynchronously on `stream`; the host memory must stay
    /// alive until the stream reaches the copy).
    ///
    /// # Safety
    /// `dst` must be valid for `src.len()` bytes.
    pub unsafe fn upload(&self, dst: u64, src: &[u8], stream: sys::CUstream) -> Result<()> {
        self.bind()?;
        unsafe { result::memcpy_htod_async(dst, src, stream) }.map_err(driver("cuMemcpyHtoDAsync"))
    }

    /// Copies device memory to host bytes and waits for it.
    ///
    /// # Safety
    /// `src` must be valid for `dst.len()` bytes.
    pub unsafe fn download(&self, dst: &mut [u8], src: u64, stream: sys::CUstream) -> Result<()> {
        self.bind()?;
        unsafe { result::memcpy_dtoh_async(dst, src, stream) }
            .map_err(driver("cuMemcpyDtoHAsync"))?;
        // SAFETY: the caller's contract covers `stream`.
        unsafe { self.synchronize(stream) }
    }

    /// # Safety
    /// `dst` must be valid for `bytes` bytes.
    pub unsafe fn memset(
        &self,
        dst: u64,
        value: u8,
        bytes: usize,
        stream: sys::CUstream,
    ) -> Result<()> {
        self.bind()?;
        unsafe { result::memset_d8_async(dst, value, bytes, stream) }
            .map_err(driver("cuMemsetD8Async"))
    }

    /// # Safety
    /// Both ranges must be valid for `bytes` bytes.
    pub unsafe fn copy(
        &self,
        dst: u64,
        src: u64,
        bytes: usize,
        stream: sys::CUstream,
    ) -> Result<()> {
        self.bind()?;
        unsafe { result::memcpy_dtod_async(dst, src, bytes, stream) }
            .map_err(driver("cuMemcpyDtoDAsync"))
    }
}

/// A loaded module and its kernels.
pub struct Module {
    ctx: Arc<CudaContext>,
    module: sys::CUmodule,
    functions: Vec<(String, sys::CUfunction)>,
    /// Registers per thread and local memory per thread of the first kernel (ptxas's choice).
    pub registers: i32,
    pub local_bytes: i32,
}

// SAFETY: CUmodule/CUfunction handles are usable from any thread of the process once the context
// is bound; this type only reads them.
unsafe impl Send for Module {}
unsafe impl Sync for Module {}

impl Module {
    /// The kernel `name` (one of those named at load time).
    pub fn function(&self, name: &str) -> sys::CUfunction {
        self.functions
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, f)| *f)
            .expect("a kernel named at load time")
    }

    fn load(ctx: Arc<CudaContext>, ptx: &str, entries: &[&str]) -> Result<Module> {
        let text = CString::new(ptx)
            .map_err(|_| GpuError::Unsupported("PTX text with a NUL byte".into()))?;
        let mut error_log = vec![0u8; 1 << 16];
        let mut info_log = vec![0u8; 1 << 12];
        let mut options = [
            sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
            sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
            sys::CUjit_option::CU_JIT_INFO_LOG_BUFFER,
            sys::CUjit_option::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
        ];
        let mut values = [
            error_log.as_mut_ptr() as *mut c_void,
            error_log.len() as *mut c_void,
            info_log.as_mut_ptr() as *mut c_void,
            info_log.len() as *mut c_void,
        ];
        let mut module = std::ptr::null_mut();
        // SAFETY: the option arrays have matching lengths; the log buffers outlive the call and
        // their sizes are passed by value in the pointer-sized slots, as the driver API wants.
        let r = unsafe {
            sys::cuModuleLoadDataEx(
                &mut module,
                text.as_ptr() as *const c_void,
                options.len() as u32,
                options.as_mut_ptr(),
                values.as_mut_ptr(),
            )
        };
        if r != sys::CUresult::CUDA_SUCCESS {
            let log = String::from_utf8_lossy(
                &error_log[..error_log.iter().position(|&b| b == 0).unwrap_or(0)],
            )
            .into_owned();
            let log = if log.trim().is_empty() {
                format!("{:?} (the driver gave no log)", result::DriverError(r))
            } else {
                log
            };
            return Err(GpuError::PtxLoad { log });
        }
        let get = |name: &str| -> Result<sys::CUfunction> {
            let c = CString::new(name).expect("no NUL");
            let mut f = std::ptr::null_mut();
            // SAFETY: a loaded module and a NUL-terminated name.
            unsafe { sys::cuModuleGetFunction(&mut f, module, c.as_ptr()) }
                .result()
                .map_err(driver("cuModuleGetFunction"))?;
            Ok(f)
        };
        let mut functions = Vec::new();
        for e in entries {
            match get(e) {
                Ok(f) => functions.push((e.to_string(), f)),
                Err(err) => {
                    // SAFETY: loaded above, unloaded once.
                    let _ = unsafe { sys::cuModuleUnload(module) };
                    return Err(err);
                }
            }
        }
        let first = functions.first().map(|(_, f)| *f);
        let attr = |a: sys::CUfunction_attribute| {
            let mut v = 0;
            if let Some(f) = first {
                // SAFETY: reads one attribute of a valid function.
                let _ = unsafe { sys::cuFuncGetAttribute(&mut v, a, f) };
            }
            v
        };
        let registers = attr(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS);
        let local_bytes = attr(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
        Ok(Module {
            ctx,
            module,
            functions,
            registers,
            local_bytes,
        })
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        // SAFETY: the module was loaded by us and is unloaded once.
        let _ = unsafe { sys::cuModuleUnload(self.module) };
    }
}

/// Device memory in a stream's order (see [`Gpu::alloc_on`]).
pub struct StreamBuffer {
    ctx: Arc<CudaContext>,
    ptr: u64,
    stream: sys::CUstream,
}

impl StreamBuffer {
    pub fn ptr(&self) -> u64 {
        self.ptr
    }
}

impl Drop for StreamBuffer {
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        // SAFETY: allocated on `stream` by `Gpu::alloc_on`, freed once, in its order.
        let _ = unsafe { result::free_async(self.ptr, self.stream) };
    }
}

/// Owned device memory.
pub struct DeviceBuffer {
    ctx: Arc<CudaContext>,
    ptr: u64,
    bytes: usize,
}

// SAFETY: a device address; the memory is only touched through the driver.
unsafe impl Send for DeviceBuffer {}
unsafe impl Sync for DeviceBuffer {}

impl DeviceBuffer {
    pub fn ptr(&self) -> u64 {
        self.ptr
    }
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        if self.ptr != 0 {
            let _ = self.ctx.bind_to_thread();
            // SAFETY: allocated by `Gpu::alloc`, freed once.
            let _ = unsafe { result::free_sync(self.ptr) };
        }
    }
}
