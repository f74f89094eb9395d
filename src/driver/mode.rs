//! Boundary modes: how an index outside an axis maps back into it.
//!
//! The mapping is scipy's `NI_InitFilterOffsets` (`scipy/ndimage/src/ni_support.c`) case by case,
//! including its treatment of short axes: on an axis of length 1, `reflect`, `mirror` and `wrap`
//! all read index 0. Inside filters `grid-wrap` is `wrap`, `grid-constant` is `constant` and
//! `grid-mirror` is `reflect` (GUIDE §1).

use super::error::DriverError;
use std::fmt;
use std::str::FromStr;

/// How the input is extended beyond its edges, as scipy's `mode=` argument.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Mode {
    /// `d c b a | a b c d | d c b a`: reflect about the edge of the last pixel (scipy's default).
    #[default]
    Reflect,
    /// `k k k k | a b c d | k k k k`: the constant `cval`.
    Constant,
    /// `a a a a | a b c d | d d d d`: the nearest edge pixel.
    Nearest,
    /// `d c b | a b c d | c b a`: reflect about the centre of the last pixel.
    Mirror,
    /// `a b c d | a b c d | a b c d`: wrap around to the opposite edge.
    Wrap,
    /// Inside filters, the same as [`Mode::Reflect`].
    GridMirror,
    /// Inside filters, the same as [`Mode::Constant`].
    GridConstant,
    /// Inside filters, the same as [`Mode::Wrap`].
    GridWrap,
}

impl Mode {
    /// Every mode, in scipy's documentation order.
    pub const ALL: [Mode; 8] = [
        Mode::Reflect,
        Mode::Constant,
        Mode::Nearest,
        Mode::Mirror,
        Mode::Wrap,
        Mode::GridMirror,
        Mode::GridConstant,
        Mode::GridWrap,
    ];

    /// The modes as filters apply them ([`Mode::in_filter`] of each is itself): the `grid-*`
    /// aliases left out.
    pub const APPLIED: [Mode; 5] = [
        Mode::Reflect,
        Mode::Constant,
        Mode::Nearest,
        Mode::Mirror,
        Mode::Wrap,
    ];

    /// scipy's name for the mode (`"grid-mirror"` ...).
    pub fn name(self) -> &'static str {
        match self {
            Mode::Reflect => "reflect",
            Mode::Constant => "constant",
            Mode::Nearest => "nearest",
            Mode::Mirror => "mirror",
            Mode::Wrap => "wrap",
            Mode::GridMirror => "grid-mirror",
            Mode::GridConstant => "grid-constant",
            Mode::GridWrap => "grid-wrap",
        }
    }

    /// The mode a filter actually applies: the `grid-*` names are aliases inside filters.
    pub fn in_filter(self) -> Mode {
        match self {
            Mode::GridMirror => Mode::Reflect,
            Mode::GridConstant => Mode::Constant,
            Mode::GridWrap => Mode::Wrap,
            m => m,
        }
    }

    /// Maps index `i` (possibly outside) onto an axis of length `len >= 1`: `Some(index)` in
    /// `0..len`, or `None` where the constant `cval` is read instead.
    ///
    /// scipy computes this with C `int` arithmetic; this uses `i64`, which agrees for every axis
    /// and footprint that fits in memory, with one exception: scipy's `reflect` maps an index of
    /// `-4·len` or `-6·len` … (a footprint reaching four times the axis length past the start)
    /// to `-1`, outside the array, and then reads whatever memory precedes the line. Here such an
    /// index follows the mode's period like every other one.
    #[inline(always)]
    pub fn map(self, i: i64, len: i64) -> Option<i64> {
        debug_assert!(len >= 1);
        // Inside, the common case, inline at every caller; the modes' arithmetic out of line.
        match (0..len).contains(&i) {
            true => Some(i),
            false => self.map_outside(i, len),
        }
    }

    /// [`Mode::map`] for an index outside `0..len`.
    #[inline(never)]
    fn map_outside(self, i: i64, len: i64) -> Option<i64> {
        Some(match self.in_filter() {
            Mode::Constant => return None,
            Mode::Nearest => i.clamp(0, len - 1),
            _ if len == 1 => 0,
            Mode::Mirror => {
                let period = 2 * len - 2;
                let r = i.rem_euclid(period);
                if r >= len {
                    period - r
                } else {
                    r
                }
            }
            Mode::Wrap => i.rem_euclid(len),
            // Reflect.
            _ => {
                let period = 2 * len;
                let r = i.rem_euclid(period);
                if r >= len {
                    period - r - 1
                } else {
                    r
                }
            }
        })
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Mode {
    type Err = DriverError;

    /// scipy's names, exactly (case-sensitive); anything else is scipy's
    /// `RuntimeError('boundary mode not supported')`.
    fn from_str(s: &str) -> Result<Mode, DriverError> {
        Mode::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| DriverError::BadMode(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// scipy's C code, transcribed literally (with `int` arithmetic), for the comparison.
    fn scipy_map(mode: Mode, mut cc: i64, len: i64) -> Option<i64> {
        match mode.in_filter() {
            Mode::Mirror => {
                if cc < 0 {
                    if len <= 1 {
                        cc = 0;
                    } else {
                        let sz2 = 2 * len - 2;
                        cc += sz2 * (-cc / sz2);
                        cc = if cc <= 1 - len { cc + sz2 } else { -cc };
                    }
                } else if cc >= len {
                    if len <= 1 {
                        cc = 0;
                    } else {
                        let sz2 = 2 * len - 2;
                        cc -= sz2 * (cc / sz2);
                        if cc >= len {
                            cc = sz2 - cc;
                        }
                    }
                }
            }
            Mode::Reflect => {
                if cc < 0 {
                    if len <= 1 {
                        cc = 0;
                    } else {
                        let sz2 = 2 * len;
                        if cc < -sz2 {
                            cc += sz2 * (-cc / sz2);
                        }
                        cc = if cc < -len { cc + sz2 } else { -cc - 1 };
                    }
                } else if cc >= len {
                    if len <= 1 {
                        cc = 0;
                    } else {
                        let sz2 = 2 * len;
                        cc -= sz2 * (cc / sz2);
                        if cc >= len {
                            cc = sz2 - cc - 1;
                        }
                    }
                }
            }
            Mode::Wrap => {
                if cc < 0 {
                    if len <= 1 {
                        cc = 0;
                    } else {
                        cc += len * (-cc / len);
                        if cc < 0 {
                            cc += len;
                        }
                    }
                } else if cc >= len {
                    cc = if len <= 1 { 0 } else { cc - len * (cc / len) };
                }
            }
            Mode::Nearest => cc = cc.clamp(0, len - 1),
            _ => {
                if cc < 0 || cc >= len {
                    return None;
                }
            }
        }
        Some(cc)
    }

    #[test]
    fn map_agrees_with_scipy_c_code() {
        for mode in Mode::ALL {
            for len in 1..9 {
                for i in -40..40 {
                    // scipy's reflect leaves the array at -4·len, -6·len, ... (see `Mode::map`).
                    if mode.in_filter() == Mode::Reflect
                        && len > 1
                        && i <= -4 * len
                        && i % (2 * len) == 0
                    {
                        assert_eq!(scipy_map(mode, i, len), Some(-1));
                        assert_eq!(mode.map(i, len), Some(0));
                        continue;
                    }
                    assert_eq!(
                        mode.map(i, len),
                        scipy_map(mode, i, len),
                        "{mode} i={i} len={len}"
                    );
                }
            }
        }
    }

    #[test]
    fn names_round_trip_and_unknown_names_are_runtime_errors() {
        for m in Mode::ALL {
            assert_eq!(m.name().parse::<Mode>().unwrap(), m);
        }
        let e = "Reflect".parse::<Mode>().unwrap_err();
        assert_eq!(e.python_type(), "RuntimeError");
        assert_eq!(e.to_string(), "boundary mode not supported");
    }

    #[test]
    fn documented_examples() {
        // scipy's docs, for input `a b c d` (indices 0..4).
        let ext = |m: Mode| (-3..7).map(|i| m.map(i, 4)).collect::<Vec<_>>();
        let s = |v: &[i64]| v.iter().map(|&i| Some(i)).collect::<Vec<_>>();
        assert_eq!(ext(Mode::Reflect), s(&[2, 1, 0, 0, 1, 2, 3, 3, 2, 1]));
        assert_eq!(ext(Mode::Mirror), s(&[3, 2, 1, 0, 1, 2, 3, 2, 1, 0]));
        assert_eq!(ext(Mode::Wrap), s(&[1, 2, 3, 0, 1, 2, 3, 0, 1, 2]));
        assert_eq!(ext(Mode::Nearest), s(&[0, 0, 0, 0, 1, 2, 3, 3, 3, 3]));
        assert_eq!(ext(Mode::GridConstant)[..3], [None, None, None]);
    }
}
