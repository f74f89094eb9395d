//! Buffers of lines whose vector stores split no cache line.
//!
//! A 256-bit store that straddles two 64-byte lines costs about two. The kernels store whole
//! lines into scratch rows from some column on (past the columns the mode fills at the start),
//! so each row is placed with that column on a line boundary. Measured on this AMD EPYC: a `u8`
//! 3×3 median of 1024² took 0.135 ms a run with its three rows packed one after another from
//! column 0, 0.101 with them aligned so (a standalone loop of the same code).

use super::elem::Elem;

/// The cache line the rows are aligned to, in bytes.
const LINE: usize = 64;

/// `count` rows of `len` values in `buf` (grown, never shrunk: a buffer shrunk and grown again
/// between lines of different widths was refilled every time, a tenth of a 3×3 median's time
/// in `memset`), each with its column `first` at the start of a cache line.
pub(crate) fn rows<T: Elem>(
    buf: &mut Vec<T>,
    count: usize,
    len: usize,
    first: usize,
) -> Rows<'_, T> {
    let size = std::mem::size_of::<T>();
    debug_assert_eq!(
        std::mem::align_of::<T>(),
        size,
        "every Elem is a primitive of 1 to 8 bytes"
    );
    let per_line = LINE / size;
    let stride = len.div_ceil(per_line) * per_line;
    let need = count * stride + per_line;
    if buf.len() < need {
        buf.resize(need, T::default());
    }
    // A `Vec<T>` is aligned for `T`: the elements to skip are whole ones.
    let past = (buf.as_ptr() as usize + first * size) % LINE / size;
    let start = (per_line - past) % per_line;
    Rows {
        data: &mut buf[start..start + count * stride],
        stride,
        len,
    }
}

/// What [`rows`] gives: `count` rows of `len` values, `stride` apart.
pub(crate) struct Rows<'a, T> {
    data: &'a mut [T],
    stride: usize,
    len: usize,
}

impl<'a, T> Rows<'a, T> {
    /// The rows, each `len` long.
    pub(crate) fn split<const N: usize>(self) -> [&'a mut [T]; N] {
        let len = self.len;
        let mut chunks = self
            .data
            .chunks_exact_mut(self.stride)
            .map(|r| &mut r[..len]);
        std::array::from_fn(|_| chunks.next().expect("as many rows as were asked for"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_row_has_its_first_column_on_a_cache_line() {
        for first in 0..20 {
            for len in [1, 7, 64, 1000, 1027] {
                let mut buf: Vec<u8> = Vec::new();
                let [a, b, c] = rows(&mut buf, 3, len, first).split();
                for r in [&a, &b, &c] {
                    assert_eq!(r.len(), len);
                    assert_eq!(
                        (r.as_ptr() as usize + first) % LINE,
                        0,
                        "first {first} len {len}"
                    );
                }
                let mut wide: Vec<f64> = Vec::new();
                let [d, e] = rows(&mut wide, 2, len, first % 8).split();
                for r in [&d, &e] {
                    assert_eq!((r.as_ptr() as usize + 8 * (first % 8)) % LINE, 0);
                }
                assert!(a.as_ptr() < b.as_ptr() && b.as_ptr() < c.as_ptr());
                assert!(d.as_ptr() < e.as_ptr());
            }
        }
    }
}
