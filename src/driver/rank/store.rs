//! How the rank executor stores its output lines: through the caches, or streamed past them.
//!
//! A store through the caches first reads the line it writes into the cache, so a byte of
//! output costs three trips through memory (the read, the write-back, and the input's read) where
//! a streaming (non-temporal) store costs two. That pays only where nothing would have kept the
//! output cached anyway, and where the output's pages are already mapped: a page the kernel maps
//! on the first write is zeroed through the cache, and streaming over those dirty lines writes
//! the page twice.

use super::super::array::RawArrayMut;

/// How a kernel stores its results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Store {
    /// Through the caches, as any store: for scratch lines read again at once, outputs small
    /// enough to stay cached for whoever reads them next, and pages not yet mapped.
    Cached,
    /// Non-temporal stores past the caches. The writer must [`fence`] before another thread
    /// reads the output.
    Streamed,
}

/// Outputs of at least this many bytes, all of whose pages are mapped, are
/// [`Store::Streamed`]. Measured, minimum and maximum, one thread, cached → streamed (ms):
/// with `output=` preallocated (its pages mapped, and warm in the cache where it fits), 4096²
/// `f32` 9×9 20.5 → 16.1, 15×15 22.6 → 18.6, 3×3 17.1 → 13.9; `u16` 9×9 9.7 → 7.5; 2048²
/// `f64` 9×9 10.1 → 8.0 (all 32 MiB and more); but 4096² `u8` 3×3 1.8 → 2.8 and 9×9 3.3 →
/// 4.2, 1024² `f32` 9×9 0.85 → 1.05 (16 and 4 MiB: outputs a core's share of the last-level
/// cache keeps, 32 MiB on this AMD EPYC); 2048² `f32` (16 MiB) gained, 5.1 → 4.3, but the line
/// is drawn where every measurement agrees. Into a fresh output (its pages mapped by the
/// writes), streaming lost: 4096² `f32` 3×3 22.3 → 25.7, 9×9 25.0 → 26.8, `f64` 3×3 49.1 → 54.4.
pub(crate) const STREAM_BYTES: usize = 32 << 20;

impl Store {
    /// The store for `out`: [`Store::Streamed`] where it holds [`STREAM_BYTES`] or more and
    /// every page it spans is mapped ([`mapped`]).
    pub fn for_output(out: &RawArrayMut) -> Store {
        let size = out.dtype.itemsize();
        let bytes = out.shape.iter().fold(size, |b, &n| b.saturating_mul(n));
        if bytes < STREAM_BYTES {
            return Store::Cached;
        }
        // The lowest and highest addresses of the output's elements (strides may be negative).
        let (mut lo, mut hi) = (0isize, size as isize);
        for (&n, &s) in out.shape.iter().zip(&out.strides) {
            let reach = (n as isize - 1).saturating_mul(s);
            match reach < 0 {
                true => lo = lo.saturating_add(reach),
                false => hi = hi.saturating_add(reach),
            }
        }
        let start = out.ptr.wrapping_offset(lo) as usize;
        match mapped(start, hi.saturating_sub(lo) as usize) {
            true => Store::Streamed,
            false => Store::Cached,
        }
    }
}

/// Whether every page of the `len` bytes from address `start` is mapped in memory (`mincore`);
/// false where that cannot be told.
fn mapped(start: usize, len: usize) -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `sysconf` has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        let Ok(page) = usize::try_from(page) else {
            return false;
        };
        if page == 0 || len == 0 {
            return false;
        }
        let first = start / page * page;
        let span = start + len - first;
        let mut resident = vec![0u8; span.div_ceil(page)];
        // SAFETY: `resident` holds a byte for each page of the span; `mincore` only reads the
        // process's page tables (the span is the caller's own memory).
        let rc = unsafe { libc::mincore(first as *mut libc::c_void, span, resident.as_mut_ptr()) };
        rc == 0 && resident.iter().all(|&r| r & 1 == 1)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (start, len);
        false
    }
}

/// Orders this thread's [`Store::Streamed`] stores before its later stores (an `sfence`):
/// streaming stores are not ordered by the release that hands a finished chunk to another
/// thread.
pub(crate) fn fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `sfence` is SSE, part of x86-64's baseline.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::Dtype;

    fn output(buf: &mut [f32], shape: Vec<usize>, strides: Vec<isize>, at: usize) -> RawArrayMut {
        RawArrayMut {
            ptr: buf[at..].as_mut_ptr() as *mut u8,
            dtype: Dtype::F32,
            shape,
            strides,
        }
    }

    /// Streamed only from [`STREAM_BYTES`]: a buffer written once (its pages mapped) streams,
    /// one just smaller does not; a reversed view spans the same pages as the buffer. (Where
    /// `mincore` cannot tell, nothing streams.)
    #[test]
    fn outputs_stream_from_the_threshold_where_their_pages_are_mapped() {
        let streamed = match cfg!(target_os = "linux") {
            true => Store::Streamed,
            false => Store::Cached,
        };
        let n = STREAM_BYTES / 4;
        let mut touched = vec![1.0f32; n];
        let shape = vec![n / 1024, 1024];
        let c = output(&mut touched, shape.clone(), vec![4096, 4], 0);
        let smaller = output(&mut touched, vec![n / 1024 - 1, 1024], vec![4096, 4], 0);
        let reversed = output(&mut touched, shape.clone(), vec![-4096, -4], n - 1);
        assert_eq!(Store::for_output(&c), streamed);
        assert_eq!(Store::for_output(&smaller), Store::Cached);
        assert_eq!(Store::for_output(&reversed), streamed);
    }

    /// Memory the kernel has not mapped yet (fresh anonymous pages, never written) is stored
    /// through the caches; once written, the same memory streams.
    #[cfg(target_os = "linux")]
    #[test]
    fn fresh_pages_are_stored_cached_until_mapped() {
        let n = STREAM_BYTES / 4;
        // SAFETY: a private anonymous mapping of our own, unmapped below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                n * 4,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        // SAFETY: the mapping holds `n` f32s; untouched, only its address is used.
        let buf = unsafe { std::slice::from_raw_parts_mut(p as *mut f32, n) };
        let out = output(buf, vec![n / 1024, 1024], vec![4096, 4], 0);
        assert_eq!(Store::for_output(&out), Store::Cached);
        buf[..n / 2].fill(2.0);
        assert_eq!(
            Store::for_output(&out),
            Store::Cached,
            "half its pages mapped"
        );
        buf.fill(2.0);
        assert_eq!(Store::for_output(&out), Store::Streamed);
        // SAFETY: the mapping made above, no reference to it used after.
        assert_eq!(unsafe { libc::munmap(p, n * 4) }, 0);
    }
}
