//! Dtype-erased array descriptions, as NumPy and C callers hold them.

use super::dtype::Dtype;
use super::error::DriverError;

/// A read-only n-d array: `ptr` points at element `[0, 0, ...]`, `strides` are in bytes and may
/// be negative or zero. A 0-d array has empty `shape` and `strides`.
#[derive(Clone, Debug)]
pub struct RawArray {
    pub ptr: *const u8,
    pub dtype: Dtype,
    pub shape: Vec<usize>,
    pub strides: Vec<isize>,
}

/// A writable n-d array, as [`RawArray`].
#[derive(Clone, Debug)]
pub struct RawArrayMut {
    pub ptr: *mut u8,
    pub dtype: Dtype,
    pub shape: Vec<usize>,
    pub strides: Vec<isize>,
}

impl RawArray {
    /// Describes a C-contiguous slice of `T` with the given shape.
    pub fn from_slice<T: super::Element>(
        data: &[T],
        shape: &[usize],
    ) -> Result<RawArray, DriverError> {
        Ok(RawArray {
            ptr: data.as_ptr() as *const u8,
            dtype: T::DTYPE,
            shape: shape.to_vec(),
            strides: slice_strides(data.len(), shape, T::DTYPE)?,
        })
    }
}

impl RawArrayMut {
    /// Describes a C-contiguous mutable slice of `T` with the given shape.
    pub fn from_slice<T: super::Element>(
        data: &mut [T],
        shape: &[usize],
    ) -> Result<RawArrayMut, DriverError> {
        Ok(RawArrayMut {
            ptr: data.as_mut_ptr() as *mut u8,
            dtype: T::DTYPE,
            shape: shape.to_vec(),
            strides: slice_strides(data.len(), shape, T::DTYPE)?,
        })
    }
}

impl RawArrayMut {
    /// Whether no two elements share a byte, by a simple sufficient test: sorted by |stride|,
    /// each stride steps over everything the smaller ones reach. An output that fails it (a zero
    /// stride, say) cannot be written by parallel workers without racing on the shared bytes.
    pub fn elements_disjoint(&self) -> bool {
        let mut spans: Vec<(usize, usize)> = self
            .shape
            .iter()
            .zip(&self.strides)
            .filter(|(&n, _)| n > 1)
            .map(|(&n, &s)| (s.unsigned_abs(), n))
            .collect();
        spans.sort_unstable();
        let mut reach = self.dtype.itemsize();
        for (s, n) in spans {
            if s < reach {
                return false;
            }
            reach += s * (n - 1);
        }
        true
    }
}

/// What both kinds of description answer alike (they differ only in the pointer's mutability).
macro_rules! describe {
    ($t:ty) => {
        impl $t {
            /// The number of elements.
            pub fn len(&self) -> usize {
                self.shape.iter().product()
            }

            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            pub(crate) fn check(&self, what: &str) -> Result<(), DriverError> {
                check_desc(
                    what,
                    self.ptr.is_null(),
                    self.dtype,
                    &self.shape,
                    &self.strides,
                )
            }

            pub(crate) fn extent(&self) -> Option<(usize, usize)> {
                extent(self.ptr as usize, self.dtype, &self.shape, &self.strides)
            }

            /// NumPy's `ALIGNED` flag: the data pointer and the strides of the axes longer
            /// than one are multiples of the element's alignment (its size, for these types);
            /// an empty array is aligned.
            pub(crate) fn is_aligned(&self) -> bool {
                if self.is_empty() {
                    return true;
                }
                let used = self.shape.iter().zip(&self.strides).filter(|(&n, _)| n > 1);
                let bits = used.fold(self.ptr as usize, |b, (_, &s)| b | s as usize);
                bits % self.dtype.itemsize() == 0
            }
        }
    };
}

impl RawArray {
    /// A C-contiguous copy of the elements in a buffer aligned for any element type, and its
    /// description (valid while the buffer lives and is not moved).
    ///
    /// # Safety
    /// The array must be valid for reads at every element its shape and strides reach.
    pub(crate) unsafe fn snapshot(&self) -> Result<(Vec<u64>, RawArray), DriverError> {
        let size = self.dtype.itemsize();
        let words = (self.len() * size).div_ceil(8);
        let mut buf = super::alloc::try_vec(words, 0u64, "a copy of the input")?;
        let dst = buf.as_mut_ptr() as *mut u8;
        let mut index = vec![0usize; self.shape.len()];
        for k in 0..self.len() {
            let offset: isize = index
                .iter()
                .zip(&self.strides)
                .map(|(&i, &s)| i as isize * s)
                .sum();
            // SAFETY: `offset` reaches an element of the array (the caller's contract); `dst`
            // holds `len` elements.
            unsafe {
                std::ptr::copy_nonoverlapping(self.ptr.offset(offset), dst.add(k * size), size)
            };
            next_in_c_order(&mut index, &self.shape);
        }
        let desc = RawArray {
            ptr: dst as *const u8,
            dtype: self.dtype,
            shape: self.shape.clone(),
            strides: c_strides(&self.shape, self.dtype),
        };
        Ok((buf, desc))
    }
}
describe!(RawArray);
describe!(RawArrayMut);

/// `idx` moved on to the next position of an array of `shape` in C order (back to all zeros
/// after the last).
#[inline]
pub(crate) fn next_in_c_order(idx: &mut [usize], shape: &[usize]) {
    for d in (0..shape.len()).rev() {
        idx[d] += 1;
        if idx[d] < shape[d] {
            return;
        }
        idx[d] = 0;
    }
}

/// Byte strides of a C-contiguous array of an array's shape (one that fits in memory).
pub fn c_strides(shape: &[usize], dtype: Dtype) -> Vec<isize> {
    checked_c_strides(shape, dtype).expect("the strides of an array that fits in memory")
}

/// Byte strides of a C-contiguous array (an axis of length 0 counted as 1, as NumPy does);
/// `None` where they overflow.
pub fn checked_c_strides(shape: &[usize], dtype: Dtype) -> Option<Vec<isize>> {
    let mut strides = vec![0isize; shape.len()];
    let mut step = isize::try_from(dtype.itemsize()).ok()?;
    for (s, &n) in strides.iter_mut().zip(shape).rev() {
        *s = step;
        step = step.checked_mul(isize::try_from(n.max(1)).ok()?)?;
    }
    Some(strides)
}

/// The C-order strides of a slice of `len` elements viewed with `shape`: an error where the
/// counts differ, or where the strides overflow (an empty shape with huge axes, whose product
/// is 0 but whose strides count each empty axis as 1).
fn slice_strides(len: usize, shape: &[usize], dtype: Dtype) -> Result<Vec<isize>, DriverError> {
    let n = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    if n != Some(len) {
        return Err(DriverError::BadArray(format!(
            "{len} elements do not make an array of shape {shape:?}"
        )));
    }
    checked_c_strides(shape, dtype)
        .ok_or_else(|| DriverError::BadArray(format!("the strides of shape {shape:?} overflow")))
}

fn check_desc(
    what: &str,
    null: bool,
    dtype: Dtype,
    shape: &[usize],
    strides: &[isize],
) -> Result<(), DriverError> {
    if shape.len() != strides.len() {
        return Err(DriverError::BadArray(format!(
            "the {what} has {} dimensions but {} strides",
            shape.len(),
            strides.len()
        )));
    }
    let n = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    match n {
        None => Err(DriverError::TooLarge(format!(
            "the {what}'s shape {shape:?} has more elements than fit in memory"
        ))),
        Some(n) if n > 0 && null => Err(DriverError::BadArray(format!(
            "the {what} has a null data pointer"
        ))),
        Some(n) if n > 0 && byte_span(dtype, shape, strides).is_none() => {
            Err(DriverError::TooLarge(format!(
                "the {what}'s shape {shape:?} and strides {strides:?} reach past the address space"
            )))
        }
        _ => Ok(()),
    }
}

/// The bytes from the lowest to the end of the highest element of a non-empty array, `None` if
/// that overflows `isize` (no array in memory spans that much).
fn byte_span(dtype: Dtype, shape: &[usize], strides: &[isize]) -> Option<isize> {
    shape
        .iter()
        .zip(strides)
        .try_fold(dtype.itemsize() as isize, |acc, (&n, &s)| {
            let n = isize::try_from(n).ok()?;
            acc.checked_add((n - 1).checked_mul(s)?.checked_abs()?)
        })
}

/// The bytes `[lo, hi)` an array's elements occupy, `None` when it is empty.
fn extent(base: usize, dtype: Dtype, shape: &[usize], strides: &[isize]) -> Option<(usize, usize)> {
    if shape.contains(&0) {
        return None;
    }
    let (mut lo, mut hi) = (base as isize, base as isize);
    for (&n, &s) in shape.iter().zip(strides) {
        let span = (n as isize - 1) * s;
        if span < 0 {
            lo += span;
        } else {
            hi += span;
        }
    }
    Some((lo as usize, hi as usize + dtype.itemsize()))
}

/// Whether two extents overlap (conservatively: interleaved arrays count as overlapping).
pub(crate) fn overlaps(a: Option<(usize, usize)>, b: Option<(usize, usize)>) -> bool {
    match (a, b) {
        (Some((a0, a1)), Some((b0, b1))) => a0 < b1 && b0 < a1,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn self_overlapping_outputs_are_recognised() {
        let out = |shape: Vec<usize>, strides: Vec<isize>| RawArrayMut {
            ptr: 8 as *mut u8,
            dtype: Dtype::F64,
            shape,
            strides,
        };
        assert!(out(vec![2, 3], vec![24, 8]).elements_disjoint());
        assert!(out(vec![2, 3], vec![-8, 16]).elements_disjoint());
        assert!(out(vec![1, 3], vec![0, 8]).elements_disjoint());
        assert!(!out(vec![2, 3], vec![0, 8]).elements_disjoint());
        assert!(!out(vec![2, 3], vec![8, 8]).elements_disjoint());
        assert!(!out(vec![3], vec![4]).elements_disjoint());
    }

    #[test]
    fn slices_whose_strides_overflow_are_refused() {
        let e = RawArray::from_slice::<f64>(&[], &[0, 1 << 40, 1 << 40]).unwrap_err();
        assert!(
            matches!(&e, DriverError::BadArray(m) if m.contains("overflow")),
            "{e}"
        );
        let e = RawArrayMut::from_slice::<f64>(&mut [], &[3, 0, 1 << 62]).unwrap_err();
        assert!(
            matches!(&e, DriverError::BadArray(m) if m.contains("overflow")),
            "{e}"
        );
        assert!(RawArray::from_slice::<f64>(&[], &[0, 3]).is_ok());
    }

    #[test]
    fn extents_and_overlap() {
        let a = RawArray {
            ptr: 1000 as *const u8,
            dtype: Dtype::F64,
            shape: vec![2, 3],
            strides: vec![24, 8],
        };
        assert_eq!(a.extent(), Some((1000, 1048)));
        let r = RawArray {
            ptr: 1040 as *const u8,
            dtype: Dtype::F64,
            shape: vec![2, 3],
            strides: vec![-24, -8],
        };
        assert_eq!(r.extent(), Some((1000, 1048)));
        let e = RawArray {
            ptr: 1000 as *const u8,
            dtype: Dtype::F64,
            shape: vec![0, 3],
            strides: vec![24, 8],
        };
        assert_eq!(e.extent(), None);
        assert!(overlaps(a.extent(), r.extent()));
        assert!(!overlaps(a.extent(), Some((1048, 1100))));
        assert!(!overlaps(a.extent(), e.extent()));
        assert_eq!(c_strides(&[2, 3, 4], Dtype::U16), vec![24, 8, 2]);
        assert!(RawArray {
            ptr: std::ptr::null(),
            dtype: Dtype::F64,
            shape: vec![2],
            strides: vec![8]
        }
        .check("input")
        .is_err());
        assert!(RawArray {
            ptr: std::ptr::null(),
            dtype: Dtype::F64,
            shape: vec![0],
            strides: vec![8]
        }
        .check("input")
        .is_ok());
        assert!(RawArray {
            ptr: 8 as *const u8,
            dtype: Dtype::F64,
            shape: vec![2],
            strides: vec![]
        }
        .check("input")
        .is_err());
        // Products that overflow are errors, not wrapped sizes.
        let huge = |shape: Vec<usize>, strides: Vec<isize>| {
            RawArray {
                ptr: 8 as *const u8,
                dtype: Dtype::F64,
                shape,
                strides,
            }
            .check("input")
            .map_err(|e| e.python_type())
        };
        assert_eq!(huge(vec![1 << 32, 1 << 32], vec![8, 8]), Err("ValueError"));
        assert_eq!(huge(vec![3, 1 << 62], vec![8, 8]), Err("ValueError"));
        assert_eq!(huge(vec![2, 2], vec![isize::MAX, 8]), Err("ValueError"));
        assert_eq!(huge(vec![2, 2], vec![isize::MIN, 8]), Err("ValueError"));
        assert_eq!(huge(vec![2, 3], vec![-24, 8]), Ok(()));
        assert_eq!(huge(vec![0, 3], vec![isize::MAX, 8]), Ok(()));
    }
}
