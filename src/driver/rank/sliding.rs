//! The extreme of every window of `w` consecutive values of a line, for all windows at once.
//!
//! Doubling (a sparse table built a level at a time): after the level of span `s`, `t[i]` is the
//! extreme of `e[i..i + s]`; the window of `w` is then the extreme of the two overlapping spans
//! `t[i]` and `t[i + w - s]` with `s` the largest power of two `<= w` (min and max are
//! idempotent, so the overlap does not matter). That is `log2(w) + 1` passes, each a plain
//! loop of `min`s over two slices that LLVM vectorises (32 `u8` lanes a instruction with AVX2),
//! which for the windows of rank filters (up to a few dozen) costs less than van Herk/Gil-Werman's
//! three dependent scalar comparisons per value.

use super::elem::Elem;
use super::simd;

/// `out[i]` = the minimum (or maximum) of `e[i..i + w]` for `i in 0..out.len()`; `e` holds at
/// least `out.len() + w - 1` values, `w >= 1`. `tmp` is scratch.
pub(crate) fn extremes<T: Elem>(e: &[T], w: usize, max: bool, out: &mut [T], tmp: &mut Scratch<T>) {
    simd::fast(|| match max {
        true => extremes_by(e, w, out, tmp, T::max),
        false => extremes_by(e, w, out, tmp, T::min),
    })
}

/// Two level buffers, reused between calls.
pub(crate) type Scratch<T> = (Vec<T>, Vec<T>);

#[inline(always)]
fn extremes_by<T: Elem, F: Fn(T, T) -> T + Copy>(
    e: &[T],
    w: usize,
    out: &mut [T],
    tmp: &mut Scratch<T>,
    op: F,
) {
    let m = out.len();
    debug_assert!(w >= 1 && e.len() >= m + w - 1);
    let (a, b) = tmp;
    let mut len = m + w - 1;
    if a.len() < len {
        a.resize(len, T::default());
        b.resize(len, T::default());
    }
    let mut span = 1;
    // `level[i]` is the extreme of `span` values from `i`: `e` itself, then `a`; each pass
    // doubles `span` into `b` (separate slices, so the loop vectorises).
    let mut first = true;
    while 2 * span <= w {
        len -= span;
        let level: &[T] = if first { e } else { a };
        pair(&level[..len], &level[span..span + len], &mut b[..len], op);
        std::mem::swap(a, b);
        first = false;
        span *= 2;
    }
    let level: &[T] = if first { e } else { a };
    pair(&level[..m], &level[w - span..w - span + m], out, op);
}

/// `out[i] = op(x[i], y[i])`.
#[inline(always)]
fn pair<T: Elem>(x: &[T], y: &[T], out: &mut [T], op: impl Fn(T, T) -> T) {
    for ((o, &x), &y) in out.iter_mut().zip(x).zip(y) {
        *o = op(x, y);
    }
}

/// `acc[i] = op(acc[i], v[i])`: one chord's extremes into the pixel's.
#[inline]
pub(crate) fn merge<T: Elem>(acc: &mut [T], v: &[T], max: bool) {
    simd::fast(|| match max {
        true => acc.iter_mut().zip(v).for_each(|(a, &x)| *a = T::max(*a, x)),
        false => acc.iter_mut().zip(v).for_each(|(a, &x)| *a = T::min(*a, x)),
    })
}

/// `out[i] = op(a[i], b[i])`: the first two chords' extremes into the pixel's, in one pass.
#[inline]
pub(crate) fn merge2<T: Elem>(out: &mut [T], a: &[T], b: &[T], max: bool) {
    simd::fast(|| match max {
        true => pair(a, b, out, T::max),
        false => pair(a, b, out, T::min),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_window_and_length_against_brute_force() {
        let e: Vec<i16> = (0..97)
            .map(|i: i32| ((i * 7919) % 113 - 50) as i16)
            .collect();
        let mut tmp = (Vec::new(), Vec::new());
        for w in 1..40 {
            for m in [1, 2, 5, 33, 97 - w + 1] {
                for max in [false, true] {
                    let mut out = vec![0; m];
                    extremes(&e, w, max, &mut out, &mut tmp);
                    for i in 0..m {
                        let win = &e[i..i + w];
                        let want = if max {
                            win.iter().max()
                        } else {
                            win.iter().min()
                        };
                        assert_eq!(out[i], *want.unwrap(), "w={w} m={m} i={i} max={max}");
                    }
                }
            }
        }
    }
}
