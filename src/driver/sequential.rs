//! scipy's own loop (`NI_GenericFilter`), for when the output overlaps the input.
//!
//! scipy visits the pixels in C order on one thread, reads each neighbourhood from the input's
//! memory when it gets to the pixel, and writes the result at once. When `output` shares memory
//! with `input` (`generic_filter(a, f, output=a)`), later pixels therefore see the results written
//! before them. This reproduces that, and is otherwise just a slow, simple engine.

use super::alloc::try_vec;
use super::array::next_in_c_order;
use super::error::DriverError;
use super::executor::Resolved;
use crate::interrupt;
use std::sync::atomic::{AtomicBool, Ordering};

/// Each value is computed by the C callback, or by the interpreter when `interpret` is set.
pub(crate) fn run(run: &Resolved<'_>, interpret: bool) -> Result<(), DriverError> {
    let (geom, input, output, filter) = (run.geometry, run.input, run.output, run.filter);
    let shape = &geom.shape;
    let total: usize = shape.iter().product();
    let (mode, cval) = (run.mode, run.cval);
    let cancel: Option<&AtomicBool> = run.options.cancel.as_deref();
    // The cancel scope of interrupts seen inside the filter's loops.
    let interrupted = AtomicBool::new(false);
    let ctx = filter.new_context()?;
    let (cb, ud) = (ctx.callback(), ctx.user_data());
    let mut buf = try_vec(geom.tap_count(), 0.0, "the filter's buffer")?;
    let mut idx = vec![0usize; shape.len()];
    let region = run.options.region.as_deref().filter(|_| run.rank > 0);
    for p in 0..total {
        if p % 4096 == 0
            && (cancel.is_some_and(|c| c.load(Ordering::Relaxed))
                || interrupt::with_cancel(&interrupted, interrupt::poll))
        {
            return Err(DriverError::Cancelled);
        }
        let outside = region.is_some_and(|r| idx.iter().zip(r).any(|(i, r)| !r.contains(i)));
        if outside {
            next_in_c_order(&mut idx, shape);
            continue;
        }
        'taps: for (k, t) in geom.taps().enumerate() {
            let mut at = input.ptr;
            for d in 0..shape.len() {
                match mode.map(idx[d] as i64 + t[d], shape[d] as i64) {
                    Some(i) => at = at.wrapping_offset(i as isize * input.strides[d]),
                    None => {
                        buf[k] = cval;
                        continue 'taps;
                    }
                }
            }
            // SAFETY: an element of the input (the caller's contract).
            buf[k] = unsafe { input.dtype.read(at) };
        }
        let result = interrupt::with_cancel(&interrupted, || {
            if interpret {
                filter.interpret(&buf)
            } else {
                let mut v = 0.0;
                // SAFETY: the buffer holds `taps.len()` doubles; the context is the filter's.
                let ok = unsafe { cb(buf.as_mut_ptr(), buf.len() as isize, &mut v, ud) };
                if ok == 1 {
                    Ok(v)
                } else {
                    Err(ctx.failure().unwrap_or_else(|| filter.describe(None)))
                }
            }
        });
        match result {
            Err(error) if error.is_interrupt() => return Err(DriverError::Cancelled),
            Ok(v) => {
                let mut at = output.ptr;
                for (&i, &s) in idx.iter().zip(&output.strides) {
                    at = at.wrapping_offset(i as isize * s);
                }
                // SAFETY: an element of the output (the caller's contract).
                unsafe { output.dtype.write(at, v) };
            }
            Err(error) => {
                return Err(DriverError::Filter {
                    error,
                    position: idx,
                })
            }
        }
        next_in_c_order(&mut idx, shape);
    }
    Ok(())
}
