//! The arguments of a filter run, and their validation into a [`Geometry`] in scipy's order.

use super::alloc;
use super::error::DriverError;
use super::footprint::Footprint;
use super::mode::Mode;
use std::ops::Range;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Told `(pixels done, pixels in all)` as the work progresses, from the worker threads.
pub type Progress = Arc<dyn Fn(usize, usize) + Send + Sync>;

/// How the neighbourhoods reach the filter. Every engine gives the same result, bit for bit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Engine {
    /// The fastest available: a fused row kernel that reads the neighbours straight from the
    /// input rows (see [`crate::jit::kernel`]), falling back to [`Engine::Callback`] when the
    /// filter has no specialised version.
    #[default]
    Auto,
    /// Gathers each neighbourhood into a buffer and calls the compiled C callback, in parallel.
    Callback,
    /// Gathers each neighbourhood and runs the reference interpreter (for debugging).
    Interpreter,
    /// scipy's own loop: one thread, pixels in C order, each neighbourhood read from the input
    /// memory when its pixel is computed, each result written at once. Used automatically when
    /// the output overlaps the input, where it reproduces scipy's in-place result.
    Sequential,
}

/// The scipy function a run computes, which decides the callback's signature and what it is
/// given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Function {
    /// `generic_filter`: the callback ([`crate::Sig::Filter`]) gets each pixel's neighbourhood
    /// under the footprint.
    #[default]
    GenericFilter,
    /// `generic_filter1d`: the callback ([`crate::Sig::Filter1d`]) gets each whole line along
    /// the one axis of [`Options::axes`], extended by the reach of a line footprint (a
    /// [`Footprint::from_size`] of `filter_size`, with its one origin), and fills the output
    /// line. Made by [`Options::filter1d`].
    GenericFilter1d,
}

/// Everything `generic_filter` (or, with [`Options::filter1d`], `generic_filter1d`) takes
/// besides the arrays and the function.
#[derive(Clone)]
pub struct Options {
    /// Which scipy function the run computes (`generic_filter` unless made by
    /// [`Options::filter1d`]).
    pub function: Function,
    /// `size=` ([`Footprint::from_size`]) or `footprint=`: one dimension per filtered axis.
    pub footprint: Footprint,
    pub mode: Mode,
    /// The value outside the input for [`Mode::Constant`] and [`Mode::GridConstant`].
    pub cval: f64,
    /// Per filtered axis (in the order of `axes`), or empty for all zeros. A scalar origin is
    /// the same value repeated.
    pub origin: Vec<isize>,
    /// The axes to filter (default: all); negative numbers count from the last axis (-1), as in
    /// scipy. Footprint dimensions apply to these axes in increasing order, origins in the order
    /// given.
    pub axes: Option<Vec<isize>>,
    /// Worker threads; `None` uses all cores.
    pub threads: Option<usize>,
    /// Progress reports, e.g. for a progress bar.
    pub progress: Option<Progress>,
    /// Set it (from any thread) to stop the run with [`DriverError::Cancelled`].
    pub cancel: Option<Arc<AtomicBool>>,
    pub engine: Engine,
    /// Computes only the pixels of this box (a range per axis of the input); what the output's
    /// other elements hold is unspecified (the rank executor, which runs none of the filter's
    /// code, fills them too). For a caller that filters a block holding a halo it
    /// gathered itself (the Dask face): the halo's pixels, whose windows the whole array does
    /// not have, are never passed to the filter. The CPU engines take it; other executors
    /// refuse it.
    pub region: Option<Vec<Range<usize>>>,
}

impl Options {
    /// The defaults of scipy's `generic_filter` for this footprint: `mode='reflect'`,
    /// `cval=0.0`, `origin=0`, all axes, all cores.
    pub fn new(footprint: Footprint) -> Options {
        Options {
            function: Function::GenericFilter,
            footprint,
            mode: Mode::Reflect,
            cval: 0.0,
            origin: Vec::new(),
            axes: None,
            threads: None,
            progress: None,
            cancel: None,
            engine: Engine::Auto,
            region: None,
        }
    }

    /// `Options::new(Footprint::from_size(size))`.
    pub fn size(size: &[usize]) -> Options {
        Options::new(Footprint::from_size(size))
    }

    /// `scipy.ndimage.generic_filter1d(input, filter, filter_size, axis)` with scipy's defaults
    /// (`mode='reflect'`, `cval=0.0`, `origin=0`, all cores): lines along `axis` (negative
    /// counts from the end), extended by a line footprint of `filter_size` values. Set the origin
    /// with [`Options::origin`]`(&[origin])`.
    pub fn filter1d(filter_size: usize, axis: isize) -> Options {
        Options {
            function: Function::GenericFilter1d,
            axes: Some(vec![axis]),
            ..Options::size(&[filter_size])
        }
    }

    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    pub fn cval(mut self, cval: f64) -> Self {
        self.cval = cval;
        self
    }

    pub fn origin(mut self, origin: &[isize]) -> Self {
        self.origin = origin.to_vec();
        self
    }

    pub fn axes(mut self, axes: &[isize]) -> Self {
        self.axes = Some(axes.to_vec());
        self
    }

    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = Some(threads);
        self
    }

    pub fn engine(mut self, engine: Engine) -> Self {
        self.engine = engine;
        self
    }

    pub fn progress(mut self, f: impl Fn(usize, usize) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }

    pub fn region(mut self, region: &[Range<usize>]) -> Self {
        self.region = Some(region.to_vec());
        self
    }

    /// The C-order pixel ranges `[p0, p1)` of [`Options::region`] in an input of `shape` (one
    /// per line of the box), or `None` for every pixel; [`DriverError::BadArray`] for a box
    /// that is not inside the input.
    pub(crate) fn region_pieces(
        &self,
        shape: &[usize],
    ) -> Result<Option<Vec<(usize, usize)>>, DriverError> {
        let Some(region) = &self.region else {
            return Ok(None);
        };
        let inside = region.len() == shape.len()
            && region
                .iter()
                .zip(shape)
                .all(|(r, &n)| r.start <= r.end && r.end <= n);
        if !inside {
            return Err(DriverError::BadArray(format!(
                "the region {region:?} is not a box inside the input's shape {shape:?}"
            )));
        }
        let Some((last, outer)) = region.split_last() else {
            return Ok(Some(vec![(0, 1)])); // a 0-d input: its one pixel
        };
        let mut pieces = vec![];
        if last.is_empty() || outer.iter().any(|r| r.is_empty()) {
            return Ok(Some(pieces));
        }
        let mut idx: Vec<usize> = outer.iter().map(|r| r.start).collect();
        loop {
            let line = idx.iter().zip(shape).fold(0, |a, (&i, &n)| a * n + i);
            let p0 = line * shape[shape.len() - 1];
            pieces.push((p0 + last.start, p0 + last.end));
            let Some(d) = (0..outer.len()).rev().find(|&d| idx[d] + 1 < outer[d].end) else {
                return Ok(Some(pieces));
            };
            idx[d] += 1;
            idx[d + 1..]
                .iter_mut()
                .zip(&outer[d + 1..])
                .for_each(|(i, r)| *i = r.start);
        }
    }
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("function", &self.function)
            .field("footprint", &self.footprint)
            .field("mode", &self.mode)
            .field("cval", &self.cval)
            .field("origin", &self.origin)
            .field("axes", &self.axes)
            .field("threads", &self.threads)
            .field("engine", &self.engine)
            .field("region", &self.region)
            .finish_non_exhaustive()
    }
}

/// The footprint and origins over every axis of the input, validated: what every executor reads
/// the neighbourhood from.
#[derive(Clone, Debug, PartialEq)]
pub struct Geometry {
    /// The input's shape; a 0-d input is treated as shape `[1]`.
    pub shape: Vec<usize>,
    /// The footprint's shape over all axes (1 on the axes not filtered).
    pub fshape: Vec<usize>,
    /// scipy's origin on every axis (0 on the axes not filtered).
    pub origins: Vec<isize>,
    /// Per tap, in buffer order (row-major over the footprint, `true` entries only): the offset of
    /// the neighbour from the pixel along each axis, `shape.len()` values per tap.
    taps: Vec<i64>,
}

impl Geometry {
    /// Validates `opts` for an input of this shape, raising scipy's errors in scipy's order:
    /// axes, size length, footprint rank, origin length, empty footprint dimensions, origins.
    pub fn resolve(shape: &[usize], opts: &Options) -> Result<Geometry, DriverError> {
        let ndim = shape.len();
        let axes = Geometry::axes(opts.axes.as_deref(), ndim)?;
        let num_axes = axes.len();
        let fp = &opts.footprint;
        if fp.is_from_size() && fp.ndim() != num_axes {
            return Err(DriverError::SequenceLength {
                what: "size",
                len: fp.ndim(),
                expected: num_axes,
            });
        }
        // The footprint's dimensions go to the filtered axes in increasing order.
        let fshape: Vec<usize> = if num_axes < ndim {
            if fp.ndim() != num_axes {
                return Err(DriverError::FootprintRank {
                    footprint_ndim: fp.ndim(),
                    num_axes,
                });
            }
            let mut sorted = axes.clone();
            sorted.sort_unstable();
            let mut fshape = vec![1; ndim];
            for (k, &ax) in sorted.iter().enumerate() {
                fshape[ax] = fp.shape()[k];
            }
            fshape
        } else {
            fp.shape().to_vec()
        };
        // Origins go to the axes in the order given (all axes: in axis order).
        let origin: Vec<isize> = match opts.origin.len() {
            0 => vec![0; num_axes],
            n if n == num_axes => opts.origin.clone(),
            n => {
                return Err(DriverError::SequenceLength {
                    what: "origin",
                    len: n,
                    expected: num_axes,
                })
            }
        };
        let origins: Vec<isize> = if num_axes < ndim {
            let mut full = vec![0; ndim];
            for (k, &ax) in axes.iter().enumerate() {
                full[ax] = origin[k];
            }
            full
        } else {
            origin
        };
        if fshape.iter().filter(|&&s| s > 0).count() != ndim {
            return Err(DriverError::FootprintRank {
                footprint_ndim: fshape.len(),
                num_axes,
            });
        }
        for (axis, (&o, &n)) in origins.iter().zip(&fshape).enumerate() {
            let c = (n / 2) as i64 + o as i64;
            if c < 0 || c >= n as i64 {
                return Err(DriverError::InvalidOrigin {
                    axis,
                    origin: o,
                    size: n,
                });
            }
        }
        // A 0-d input is a single pixel: one axis of length 1 with a footprint of size 1.
        let (shape, fshape, origins) = if ndim == 0 {
            (vec![1], vec![1], vec![0])
        } else {
            (shape.to_vec(), fshape, origins)
        };
        let centre: Vec<i64> = fshape
            .iter()
            .zip(&origins)
            .map(|(&n, &o)| (n / 2) as i64 + o as i64)
            .collect();
        let taps = Geometry::taps_of(fp, &fshape, &centre)?;
        Ok(Geometry {
            shape,
            fshape,
            origins,
            taps,
        })
    }

    /// scipy's `_check_axes`: every axis in `-ndim..ndim`, negative ones counted from the end,
    /// none repeated (after normalisation, so `(0, -2)` on a 2-d input is a repeat).
    fn axes(axes: Option<&[isize]>, ndim: usize) -> Result<Vec<usize>, DriverError> {
        let Some(axes) = axes else {
            return Ok((0..ndim).collect());
        };
        let n = ndim as isize;
        let normalised: Vec<usize> = axes
            .iter()
            .map(|&axis| match axis {
                a if (0..n).contains(&a) => Ok(a as usize),
                a if (-n..0).contains(&a) => Ok((a + n) as usize),
                axis => Err(DriverError::AxisOutOfRange { axis, ndim }),
            })
            .collect::<Result<_, _>>()?;
        let mut sorted = normalised.clone();
        sorted.sort_unstable();
        sorted.dedup();
        if sorted.len() != normalised.len() {
            return Err(DriverError::DuplicateAxes);
        }
        Ok(normalised)
    }

    /// The footprint over all axes ([`Geometry::fshape`]), row-major: the entries the taps read.
    pub fn mask(&self) -> Vec<bool> {
        let mut mask = vec![false; self.fshape.iter().product()];
        for tap in self.taps() {
            let flat = tap
                .iter()
                .zip(&self.fshape)
                .zip(&self.origins)
                .fold(0usize, |flat, ((&t, &n), &o)| {
                    flat * n + (t + (n / 2) as i64 + o as i64) as usize
                });
            mask[flat] = true;
        }
        mask
    }

    /// The number of taps: the filter's `filter_size`.
    pub fn tap_count(&self) -> usize {
        self.taps.len() / self.shape.len()
    }

    /// Each tap's offsets, in buffer order.
    pub fn taps(&self) -> std::slice::ChunksExact<'_, i64> {
        self.taps.chunks_exact(self.shape.len())
    }

    /// The offsets of the footprint's `true` entries from the centre, row-major, flattened. The
    /// footprint's size is checked here, where every face (Python, C, CLI) passes: a box whose
    /// size overflows is [`DriverError::TooLarge`], one whose taps do not fit in memory
    /// [`DriverError::OutOfMemory`].
    fn taps_of(fp: &Footprint, fshape: &[usize], centre: &[i64]) -> Result<Vec<i64>, DriverError> {
        let too_large = || {
            DriverError::TooLarge(format!(
                "a footprint of shape {:?} has more entries than fit in memory",
                fp.shape()
            ))
        };
        let (len, count) = fp.len().zip(fp.count()).ok_or_else(too_large)?;
        let values = count.checked_mul(fshape.len()).ok_or_else(too_large)?;
        let mut taps = Vec::new();
        taps.try_reserve_exact(values)
            .map_err(|_| alloc::out_of_memory::<i64>(values, "the footprint's taps"))?;
        let mut idx = vec![0usize; fshape.len()];
        for k in 0..len {
            if fp.entry(k) {
                taps.extend(idx.iter().zip(centre).map(|(&i, &c)| i as i64 - c));
            }
            super::array::next_in_c_order(&mut idx, fshape);
        }
        Ok(taps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(shape: &[usize], o: Options) -> String {
        let e = Geometry::resolve(shape, &o).unwrap_err();
        format!("{}: {e}", e.python_type())
    }

    #[test]
    fn scipy_errors_in_scipy_order() {
        assert_eq!(
            err(&[3, 4], Options::size(&[3]).axes(&[2])),
            "ValueError: specified axis: 2 is out of range"
        );
        assert_eq!(
            err(&[3, 4], Options::size(&[3]).axes(&[-3])),
            "ValueError: specified axis: -3 is out of range"
        );
        assert_eq!(
            err(&[3, 4], Options::size(&[3, 3]).axes(&[0, -2])),
            "ValueError: axes must be unique"
        );
        assert_eq!(
            err(&[3, 4], Options::size(&[3, 3]).axes(&[1, 1])),
            "ValueError: axes must be unique"
        );
        assert_eq!(
            err(&[3, 4], Options::size(&[3, 3, 3])),
            "RuntimeError: sequence argument must have length equal to input rank"
        );
        assert_eq!(
            err(&[3, 4], Options::new(Footprint::from_fn(&[3], |_| true))),
            "RuntimeError: footprint.ndim (1) must match len(axes) (2)"
        );
        assert_eq!(
            err(
                &[3, 4],
                Options::new(Footprint::from_fn(&[3, 3], |_| true)).axes(&[1])
            ),
            "RuntimeError: footprint.ndim (2) must match len(axes) (1)"
        );
        assert_eq!(
            err(&[3, 4], Options::size(&[0, 3])),
            "RuntimeError: footprint.ndim (2) must match len(axes) (2)"
        );
        assert_eq!(
            err(&[3, 4], Options::size(&[3, 3]).origin(&[0, 0, 0])),
            "RuntimeError: sequence argument must have length equal to input rank"
        );
        assert_eq!(
            err(&[3, 4], Options::size(&[3, 3]).origin(&[2, 0])),
            "ValueError: invalid origin"
        );
        assert_eq!(
            err(&[3, 4], Options::size(&[3, 3]).origin(&[0, -2])),
            "ValueError: invalid origin"
        );
        assert_eq!(
            err(&[], Options::new(Footprint::from_fn(&[1], |_| true))),
            "RuntimeError: footprint.ndim (1) must match len(axes) (0)"
        );
    }

    #[test]
    fn taps_follow_the_footprint_axes_and_origins() {
        // 2x3x4 input, size (1, 3) over axes (2, 1), origin (1, 0): the size-3 dimension goes to
        // axis 2 (the larger of the two axes) and origin 1 to axis 2 as well.
        let g = Geometry::resolve(
            &[2, 3, 4],
            &Options::size(&[1, 3]).axes(&[2, 1]).origin(&[1, 0]),
        )
        .unwrap();
        assert_eq!(g.fshape, vec![1, 1, 3]);
        assert_eq!(g.taps, vec![0, 0, -2, 0, 0, -1, 0, 0, 0]);
        assert_eq!(g.tap_count(), 3);
        assert_eq!(g.origins, vec![0, 0, 1]);
        // Negative axes count from the end: (-1, -2) is (2, 1).
        let neg = Geometry::resolve(
            &[2, 3, 4],
            &Options::size(&[1, 3]).axes(&[-1, -2]).origin(&[1, 0]),
        )
        .unwrap();
        assert_eq!(neg, g);
        // Even sizes centre at n // 2.
        let g = Geometry::resolve(&[5], &Options::size(&[2])).unwrap();
        assert_eq!(g.taps, vec![-1, 0]);
        let g = Geometry::resolve(&[5], &Options::size(&[2]).origin(&[-1])).unwrap();
        assert_eq!(g.taps, vec![0, 1]);
        // 0-d input: one tap at offset 0 on a unit axis.
        let g = Geometry::resolve(&[], &Options::size(&[])).unwrap();
        assert_eq!((g.shape, g.taps), (vec![1], vec![0]));
        let g = Geometry::resolve(
            &[4, 4],
            &Options::new(Footprint::from_fn(&[3, 3], |_| false)),
        )
        .unwrap();
        assert!(g.taps.is_empty());
        assert_eq!(g.mask(), vec![false; 9]);
    }

    #[test]
    fn the_mask_is_the_footprint_over_all_axes() {
        let fp = Footprint::cross(2, 1);
        let g = Geometry::resolve(&[5, 6, 7], &Options::new(fp).axes(&[2, 0]).origin(&[1, -1]))
            .unwrap();
        assert_eq!(g.fshape, vec![3, 1, 3]);
        assert_eq!(g.origins, vec![-1, 0, 1]);
        let cross = [false, true, false, true, true, true, false, true, false];
        assert_eq!(g.mask(), cross.to_vec());
    }
}
