//! Footprints: which neighbours of a pixel the filter sees.

use super::error::DriverError;

/// A boolean mask over a box of neighbours (scipy's `footprint=`), row-major. The filter's buffer
/// holds the neighbours under the `true` entries, in row-major order, so its length is
/// [`Footprint::count`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Footprint {
    shape: Vec<usize>,
    mask: Mask,
    /// Made by [`Footprint::from_size`]: scipy's `size=`, whose length errors differ from a
    /// footprint's.
    from_size: bool,
}

/// The entries of a footprint's box.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Mask {
    /// All true (`size=`): nothing stored, so that any extents can be described, and their
    /// product checked when the footprint is used.
    Full,
    /// Row-major, one per entry of the box.
    Entries(Vec<bool>),
}

/// The side `2r + 1` of the box around a radius, or the error where it overflows.
fn side(radius: usize) -> Result<usize, DriverError> {
    radius
        .checked_mul(2)
        .and_then(|d| d.checked_add(1))
        .ok_or_else(|| {
            DriverError::TooLarge(format!(
                "a footprint of radius {radius} has more entries than fit in memory"
            ))
        })
}

impl Footprint {
    /// The all-true box of scipy's `size=`: one size per filtered axis (a scalar `size` is the
    /// same value repeated). A size of 0 makes scipy fail later with its footprint-rank error;
    /// sizes whose product overflows fail when the footprint is used
    /// ([`DriverError::TooLarge`]).
    pub fn from_size(size: &[usize]) -> Footprint {
        Footprint {
            shape: size.to_vec(),
            mask: Mask::Full,
            from_size: true,
        }
    }

    /// A footprint of the given shape and row-major mask.
    pub fn new(shape: Vec<usize>, mask: Vec<bool>) -> Result<Footprint, DriverError> {
        let n = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
        if n != Some(mask.len()) {
            return Err(DriverError::BadFootprint(format!(
                "a footprint of shape {shape:?} needs {} mask entries, not {}",
                n.map_or("too many".to_string(), |n| n.to_string()),
                mask.len()
            )));
        }
        Ok(Footprint {
            shape,
            mask: Mask::Entries(mask),
            from_size: false,
        })
    }

    /// The footprint whose entry at each index (row-major over `shape`) is `f(index)`.
    ///
    /// # Panics
    /// If the mask cannot be allocated ([`Footprint::try_from_fn`] returns the error).
    pub fn from_fn(shape: &[usize], f: impl FnMut(&[usize]) -> bool) -> Footprint {
        Footprint::try_from_fn(shape, f).expect("the footprint's mask fits in memory")
    }

    /// [`Footprint::from_fn`], or [`DriverError::TooLarge`] / [`DriverError::OutOfMemory`]
    /// where the mask's size overflows or cannot be allocated.
    pub fn try_from_fn(
        shape: &[usize],
        mut f: impl FnMut(&[usize]) -> bool,
    ) -> Result<Footprint, DriverError> {
        let n = shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .ok_or_else(|| {
                DriverError::TooLarge(format!(
                    "a footprint of shape {shape:?} has more entries than fit in memory"
                ))
            })?;
        let mut mask = super::alloc::try_vec(n, false, "the footprint")?;
        let mut idx = vec![0usize; shape.len()];
        for entry in mask.iter_mut() {
            *entry = f(&idx);
            super::array::next_in_c_order(&mut idx, shape);
        }
        Ok(Footprint {
            shape: shape.to_vec(),
            mask: Mask::Entries(mask),
            from_size: false,
        })
    }

    /// A 2-D disk of the given radius: the `(2r+1)²` box entries with `dy² + dx² <= r²`.
    ///
    /// # Panics
    /// Where [`Footprint::try_disk`] fails.
    pub fn disk(radius: usize) -> Footprint {
        Footprint::try_disk(radius).expect("a disk that fits in memory")
    }

    /// [`Footprint::disk`], or the error for a radius whose box cannot be had.
    pub fn try_disk(radius: usize) -> Result<Footprint, DriverError> {
        let n = side(radius)?;
        let r = radius as i128; // squares of offsets up to 2**64 fit
        Footprint::try_from_fn(&[n, n], |i| {
            let (dy, dx) = (i[0] as i128 - r, i[1] as i128 - r);
            dy * dy + dx * dx <= r * r
        })
    }

    /// An `ndim`-dimensional cross whose arms reach `radius` pixels from the centre: the entries
    /// of the `(2r+1)^ndim` box with at most one non-zero offset. `cross(2, 1)` is scipy's
    /// `generate_binary_structure(2, 1)`.
    ///
    /// # Panics
    /// Where [`Footprint::try_cross`] fails.
    pub fn cross(ndim: usize, radius: usize) -> Footprint {
        Footprint::try_cross(ndim, radius).expect("a cross that fits in memory")
    }

    /// [`Footprint::cross`], or the error for a radius whose box cannot be had.
    pub fn try_cross(ndim: usize, radius: usize) -> Result<Footprint, DriverError> {
        let n = side(radius)?;
        Footprint::try_from_fn(&vec![n; ndim], |i| {
            i.iter().filter(|&&c| c != radius).count() <= 1
        })
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// The number of entries of the box, `None` when it overflows `usize`.
    pub fn len(&self) -> Option<usize> {
        self.shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))
    }

    /// Whether the box has no entries (some extent is 0).
    pub fn is_empty(&self) -> bool {
        self.shape.contains(&0)
    }

    /// Entry `i` of the box, row-major (`i` below [`Footprint::len`]).
    pub fn entry(&self, i: usize) -> bool {
        match &self.mask {
            Mask::Full => true,
            Mask::Entries(m) => m[i],
        }
    }

    /// The number of `true` entries: the filter's `filter_size`; `None` when the box's size
    /// overflows `usize`.
    pub fn count(&self) -> Option<usize> {
        match &self.mask {
            Mask::Full => self.len(),
            Mask::Entries(m) => Some(m.iter().filter(|&&b| b).count()),
        }
    }

    /// Whether this footprint came from [`Footprint::from_size`].
    pub fn is_from_size(&self) -> bool {
        self.from_size
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_and_counts() {
        assert_eq!(Footprint::from_size(&[3, 5]).count(), Some(15));
        assert_eq!(Footprint::from_size(&[]).count(), Some(1));
        assert_eq!(Footprint::from_size(&[0, 3]).count(), Some(0));
        // Sizes whose product overflows are described, and counted as `None`.
        assert_eq!(Footprint::from_size(&[1 << 32, 1 << 32]).count(), None);
        assert_eq!(Footprint::from_size(&[3, 1 << 62]).count(), Some(3 << 62));
        let cross = Footprint::cross(2, 1);
        assert_eq!(
            (0..9).map(|i| cross.entry(i)).collect::<Vec<_>>(),
            [false, true, false, true, true, true, false, true, false]
        );
        assert_eq!(Footprint::cross(3, 1).count(), Some(7));
        assert_eq!(Footprint::cross(2, 2).count(), Some(9));
        assert_eq!(Footprint::disk(1).count(), Some(5));
        assert_eq!(Footprint::disk(3).count(), Some(29));
        assert!(Footprint::new(vec![2, 2], vec![true; 3]).is_err());
        assert_eq!(
            Footprint::new(vec![2, 2], vec![true; 3])
                .unwrap_err()
                .python_type(),
            "ValueError"
        );
        assert!(Footprint::new(vec![], vec![true]).is_ok());
    }
}
