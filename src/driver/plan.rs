//! The work as lines: output pixels are visited line by line along the last axis, and each line
//! reads its neighbours from a few input lines, one per *slot*.
//!
//! A slot is a distinct offset of the footprint on the leading axes; a tap (one buffer element) is
//! a slot plus a column shift along the last axis. For a 5×5 footprint there are 5 slots and each
//! tap `k` reads column `j + col[k]` of the input line of slot `slot[k]` for output column `j`.
//! Which input line a slot reads for a given output line follows the boundary mode on each leading
//! axis (or is the constant `cval` line); along the last axis the mode applies per column.

use super::alloc;
use super::array::RawArray;
use super::error::DriverError;
use super::mode::Mode;
use super::options::Geometry;

pub(crate) struct Plan {
    /// The input's shape (at least one axis).
    pub shape: Vec<usize>,
    /// The length of the last axis: pixels per line.
    pub len: usize,
    /// Number of lines: the product of the leading axes.
    pub lines: usize,
    /// Per slot, its offset on each leading axis.
    pub slots: Vec<Vec<i64>>,
    /// Per tap (buffer order): its slot and its column shift.
    pub tap_slot: Vec<u32>,
    pub tap_col: Vec<i64>,
    /// The smallest and largest column shift (0 and 0 without taps).
    pub cmin: i64,
    pub cmax: i64,
    pub mode: Mode,
    pub cval: f64,
}

impl Plan {
    /// The plan of a validated geometry; [`DriverError::OutOfMemory`] if its per-tap tables
    /// cannot be allocated.
    pub fn new(g: &Geometry, mode: Mode, cval: f64) -> Result<Plan, DriverError> {
        let last = g.shape.len() - 1;
        let mut slots: Vec<Vec<i64>> = Vec::new();
        let n = g.tap_count();
        let (mut tap_slot, mut tap_col) = (Vec::new(), Vec::new());
        tap_slot
            .try_reserve_exact(n)
            .map_err(|_| alloc::out_of_memory::<u32>(n, "the taps' rows"))?;
        tap_col
            .try_reserve_exact(n)
            .map_err(|_| alloc::out_of_memory::<i64>(n, "the taps' columns"))?;
        // The taps come in buffer (C) order, so the taps of one slot are consecutive: a tap's
        // slot is the last one or a new one. (The map this replaced hashed every tap, 0.5 µs of
        // a small image's call.)
        for t in g.taps() {
            let lead = &t[..last];
            if slots.last().is_none_or(|s| s.as_slice() != lead) {
                debug_assert!(
                    slots.last().is_none_or(|s| s.as_slice() < lead),
                    "taps out of C order"
                );
                slots.push(lead.to_vec());
            }
            tap_slot.push(slots.len() as u32 - 1);
            tap_col.push(t[last]);
        }
        let cmin = tap_col.iter().copied().min().unwrap_or(0).min(0);
        let cmax = tap_col.iter().copied().max().unwrap_or(0).max(0);
        Ok(Plan {
            shape: g.shape.clone(),
            len: g.shape[last],
            lines: g.shape[..last].iter().product(),
            slots,
            tap_slot,
            tap_col,
            cmin,
            cmax,
            mode: mode.in_filter(),
            cval,
        })
    }

    /// The columns `[jl, jr)` whose taps all fall inside the line (possibly empty).
    pub fn interior(&self) -> (usize, usize) {
        let n = self.len as i64;
        let jl = (-self.cmin).clamp(0, n);
        let jr = (n - self.cmax).clamp(jl, n);
        (jl as usize, jr as usize)
    }

    /// For the columns `lo..hi` of a line extended past its ends, the column of the line each
    /// reads under the mode along the last axis, or `None` where it reads `cval`: the same for
    /// every line.
    pub fn column_sources(&self, lo: i64, hi: i64) -> Vec<Option<usize>> {
        let n = self.len as i64;
        (lo..hi)
            .map(|c| self.mode.map(c, n).map(|i| i as usize))
            .collect()
    }

    /// The multi-index of line `line` over the leading axes (C order).
    pub fn line_index(&self, mut line: usize, idx: &mut [usize]) {
        for d in (0..idx.len()).rev() {
            let n = self.shape[d];
            idx[d] = line % n;
            line /= n;
        }
    }

    /// `idx` (the multi-index of a line, as [`Plan::line_index`] gives it) moved on to the next
    /// line's: the same as `line_index(line + 1)` without its divisions, which cost as much as
    /// the rest of a short line's bookkeeping.
    pub fn next_line_index(&self, idx: &mut [usize]) {
        super::array::next_in_c_order(idx, &self.shape[..idx.len()]);
    }

    /// For the output line at `idx`, the byte offset of each slot's input line (column 0)
    /// relative to the array's data pointer, or `None` where it lies outside under a constant mode.
    pub fn sources(&self, idx: &[usize], strides: &[isize], out: &mut Vec<Option<isize>>) {
        out.clear();
        'slots: for s in &self.slots {
            let mut off = 0isize;
            for (d, &o) in s.iter().enumerate() {
                match self.mode.map(idx[d] as i64 + o, self.shape[d] as i64) {
                    Some(i) => off += i as isize * strides[d],
                    None => {
                        out.push(None);
                        continue 'slots;
                    }
                }
            }
            out.push(Some(off));
        }
    }

    /// `buf[t]` = the value at column `col0 + t` of the input line at byte offset `src` (or
    /// `cval`), the column following the mode along the last axis.
    ///
    /// # Safety
    /// `input` must describe valid memory and `src` be an offset from [`Plan::sources`].
    pub unsafe fn fill(&self, input: &RawArray, src: Option<isize>, col0: i64, buf: &mut [f64]) {
        let dtype = input.dtype;
        unsafe {
            self.fill_as(
                input,
                src,
                col0,
                buf,
                self.cval,
                |p, stride, dst| dtype.read_line(p, stride, dst),
                |p| dtype.read(p),
            )
        }
    }

    /// [`Plan::fill`] for elements of any type: `read_line(p, stride, dst)` reads `dst.len()`
    /// elements from `p`, `read(p)` one, and `cval` is the constant in that type. The rank
    /// executor reads lines in the input's own dtype through it.
    ///
    /// # Safety
    /// As [`Plan::fill`]; `read_line` and `read` must read elements of the input's dtype.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn fill_as<T: Copy>(
        &self,
        input: &RawArray,
        src: Option<isize>,
        col0: i64,
        buf: &mut [T],
        cval: T,
        read_line: impl Fn(*const u8, isize, &mut [T]),
        read: impl Fn(*const u8) -> T,
    ) {
        let Some(src) = src else {
            buf.fill(cval);
            return;
        };
        let n = self.len as i64;
        let stride = *input.strides.last().unwrap_or(&0);
        let base = input.ptr.wrapping_offset(src);
        let end = col0 + buf.len() as i64;
        // The columns inside the line, read in one go.
        let (lo, hi) = (col0.max(0), end.min(n));
        if lo < hi {
            let dst = &mut buf[(lo - col0) as usize..(hi - col0) as usize];
            read_line(base.wrapping_offset(lo as isize * stride), stride, dst);
        }
        // Columns before the start, then past the end.
        for c in (col0..end.min(0)).chain(col0.max(n)..end) {
            buf[(c - col0) as usize] = match self.mode.map(c, n) {
                Some(i) => read(base.wrapping_offset(i as isize * stride)),
                None => cval,
            };
        }
    }
}
