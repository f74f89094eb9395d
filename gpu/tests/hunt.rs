//! Randomized differential hunt: the emulated GPU kernels (the exact PTX) against the CPU's
//! general engine (`Engine::Callback`), bit for bit (NaN = any NaN), or both raising.
//!
//! Written by a review helper in stop 72 (about 75,000 cases over 8 seeds, no mismatch; see the
//! README's correctness record). Both tests are long and ignored by default:
//! `cargo test --release -p ndjit-gpu --test hunt -- --ignored --nocapture`.
//!
//! Env: HUNT_SEED (default 1), HUNT_SECS (wall budget, default 120), HUNT_CASES (max cases),
//! HUNT_ONLY (category filter substring), HUNT_VERBOSE; for `quantile_positions`, HUNT_NMAX
//! (default 70) or HUNT_NS (a list of window sizes).

mod common;

use common::{refuses_a_zero_choice, run, same_bits, Launch, ALL, MODES};
use ndjit::driver::{Dtype, Engine, Footprint, Mode, Options};
use ndjit_gpu::{GpuFilter, Target, Tuning};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Instant;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
    fn pick<T: Clone>(&mut self, v: &[T]) -> T {
        v[self.below(v.len() as u64) as usize].clone()
    }
}

fn int_range(dt: Dtype) -> (i128, i128) {
    match dt {
        Dtype::Bool => (0, 1),
        Dtype::I8 => (i8::MIN as i128, i8::MAX as i128),
        Dtype::U8 => (0, u8::MAX as i128),
        Dtype::I16 => (i16::MIN as i128, i16::MAX as i128),
        Dtype::U16 => (0, u16::MAX as i128),
        Dtype::I32 => (i32::MIN as i128, i32::MAX as i128),
        Dtype::U32 => (0, u32::MAX as i128),
        Dtype::I64 => (i64::MIN as i128, i64::MAX as i128),
        Dtype::U64 => (0, u64::MAX as i128),
        _ => unreachable!(),
    }
}

fn int_bytes(dt: Dtype, v: i128) -> Vec<u8> {
    match dt {
        Dtype::Bool => vec![(v != 0) as u8],
        Dtype::I8 => (v as i8).to_le_bytes().to_vec(),
        Dtype::U8 => (v as u8).to_le_bytes().to_vec(),
        Dtype::I16 => (v as i16).to_le_bytes().to_vec(),
        Dtype::U16 => (v as u16).to_le_bytes().to_vec(),
        Dtype::I32 => (v as i32).to_le_bytes().to_vec(),
        Dtype::U32 => (v as u32).to_le_bytes().to_vec(),
        Dtype::I64 => (v as i64).to_le_bytes().to_vec(),
        Dtype::U64 => (v as u64).to_le_bytes().to_vec(),
        _ => unreachable!(),
    }
}

/// Awkward integers of `dt`'s range.
fn int_special(r: &mut Rng, dt: Dtype) -> i128 {
    let (lo, hi) = int_range(dt);
    let p53 = 1i128 << 53;
    let p63 = 1i128 << 63;
    let cands = [
        lo,
        hi,
        lo + 1,
        hi - 1,
        0,
        1,
        -1,
        2,
        p53 - 1,
        p53,
        p53 + 1,
        -p53 - 1,
        -p53 + 1,
        p63 - 1,
        p63,
        p63 + 1,
        p63 - 1024,
        p63 - 512,
        p63 - 513,
        -p63 + 1,
        (1i128 << 32) + 1,
        (1i128 << 31),
        -(1i128 << 31),
        127,
        -128,
        255,
        256,
    ];
    loop {
        let c = r.pick(&cands);
        if c >= lo && c <= hi {
            return c;
        }
    }
}

fn int_random(r: &mut Rng, dt: Dtype) -> i128 {
    let (lo, hi) = int_range(dt);
    lo + (r.next() as u128 % (hi - lo + 1) as u128) as i128
}

const F64_SPECIAL: [f64; 22] = [
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    0.0,
    -0.0,
    5e-324,
    -5e-324,
    2.2250738585072014e-308,
    -2.2250738585072014e-308,
    2.225073858507201e-308,
    f64::MAX,
    -f64::MAX,
    f64::MIN_POSITIVE,
    1.0,
    -1.0,
    9007199254740993.0, // rounds to 2^53
    9007199254740992.0,
    9007199254740991.0,
    (1u64 << 63) as f64,
    -((1u64 << 63) as f64),
    1.8446744073709552e19,
    0.5,
];

fn nan_variant(r: &mut Rng) -> f64 {
    let bits = match r.below(4) {
        0 => f64::NAN.to_bits(),
        1 => 0xFFF8_0000_0000_0000,
        2 => 0x7FF0_0000_0000_0001,
        _ => 0x7FF0_0000_0000_0000 | (r.next() & 0x000F_FFFF_FFFF_FFFF) | 1,
    };
    f64::from_bits(bits)
}

/// A float value in `style`'s taste: 0 ties, 1 specials-heavy, 2 high-word ties, 3 random bits,
/// 4 mixed.
fn float_value(r: &mut Rng, style: u64, palette: &[f64], special_p: f64) -> f64 {
    if r.chance(special_p) {
        let v = r.pick(&F64_SPECIAL);
        return if v.is_nan() { nan_variant(r) } else { v };
    }
    match style {
        0 => r.pick(palette),
        1 => {
            let v = r.pick(&F64_SPECIAL);
            if v.is_nan() {
                nan_variant(r)
            } else {
                v
            }
        }
        2 => {
            // A base from the palette with random low words (few choices).
            let b = r.pick(palette).to_bits() & !0xFFFF_FFFF;
            let lo = match r.below(4) {
                0 => 0,
                1 => 1,
                2 => 0xFFFF_FFFF,
                _ => r.below(5),
            };
            f64::from_bits(b | lo)
        }
        3 => {
            let v = f64::from_bits(r.next());
            if r.chance(0.8) && v.is_nan() {
                1.25
            } else {
                v
            }
        }
        _ => match r.below(5) {
            0 => r.pick(palette),
            1 => (r.range(-5, 5)) as f64 * 0.5,
            2 => f64::from_bits(r.next() >> r.below(12)),
            3 => -f64::from_bits(r.next() >> r.below(12)),
            _ => r.pick(&F64_SPECIAL),
        },
    }
}

/// A palette of a few doubles for ties (and for high-word styles, bases).
fn float_palette(r: &mut Rng) -> Vec<f64> {
    let n = 1 + r.below(6) as usize;
    (0..n)
        .map(|_| match r.below(6) {
            0 => r.pick(&F64_SPECIAL),
            1 => r.range(-3, 3) as f64,
            2 => 1.0 + r.below(1 << 20) as f64 / (1u64 << 20) as f64,
            3 => -(1.0 + r.below(1 << 20) as f64 / (1u64 << 20) as f64),
            4 => f64::from_bits(r.next() >> 2),
            _ => -f64::from_bits(r.next() >> 2),
        })
        .collect()
}

fn data(r: &mut Rng, n: usize, dt: Dtype) -> (Vec<u8>, String) {
    let mut out = Vec::with_capacity(n * dt.itemsize());
    match dt {
        Dtype::F32 | Dtype::F64 => {
            let style = r.below(5);
            let palette = float_palette(r);
            let special_p = r.pick(&[0.0, 0.0, 0.02, 0.1, 0.3]);
            for _ in 0..n {
                let v = float_value(r, style, &palette, special_p);
                if dt == Dtype::F64 {
                    out.extend(v.to_le_bytes());
                } else {
                    let f = if r.chance(0.05) {
                        r.pick(&[
                            1e-45f32,
                            -1e-45,
                            1.1754942e-38,
                            f32::MAX,
                            -f32::MAX,
                            3.0e-39,
                        ])
                    } else if v.is_nan() && r.chance(0.5) {
                        f32::from_bits(0xFFC0_0001)
                    } else {
                        v as f32
                    };
                    out.extend(f.to_le_bytes());
                }
            }
            (out, format!("float style {style} special {special_p}"))
        }
        _ => {
            let style = r.below(4);
            let palette: Vec<i128> = (0..1 + r.below(5))
                .map(|_| {
                    if r.chance(0.5) {
                        int_special(r, dt)
                    } else {
                        int_random(r, dt)
                    }
                })
                .collect();
            for _ in 0..n {
                let v = match style {
                    0 => r.pick(&palette),
                    1 => int_special(r, dt),
                    2 => int_random(r, dt),
                    _ => match r.below(3) {
                        0 => r.pick(&palette),
                        1 => int_special(r, dt),
                        _ => int_random(r, dt),
                    },
                };
                out.extend(int_bytes(dt, v));
            }
            (out, format!("int style {style}"))
        }
    }
}

fn disk_fp(radius: usize) -> Footprint {
    Footprint::disk(radius)
}

/// A 2-D footprint and its category name.
fn footprint2(r: &mut Rng) -> (Footprint, String) {
    match r.below(12) {
        0..=3 => {
            let (h, w) = (1 + r.below(9) as usize, 1 + r.below(9) as usize);
            (Footprint::from_size(&[h, w]), format!("box {h}x{w}"))
        }
        4 | 5 => {
            let rad = r.pick(&[1usize, 2, 3, 4, 5, 5, 6, 6, 7, 7]);
            (disk_fp(rad), format!("disk r{rad}"))
        }
        6 | 7 => {
            let (h, w) = (1 + r.below(9) as usize, 1 + r.below(9) as usize);
            let p = r.pick(&[0.3, 0.6, 0.9]);
            let mut mask: Vec<bool> = (0..h * w).map(|_| r.chance(p)).collect();
            if !mask.iter().any(|&b| b) {
                let i = r.below((h * w) as u64) as usize;
                mask[i] = true;
            }
            (
                Footprint::new(vec![h, w], mask).unwrap(),
                format!("mask {h}x{w}"),
            )
        }
        8 => {
            // A single row or column, with or without holes.
            let n = 1 + r.below(15) as usize;
            let holes = r.chance(0.5);
            let mut mask: Vec<bool> = (0..n).map(|_| !holes || r.chance(0.6)).collect();
            if !mask.iter().any(|&b| b) {
                mask[0] = true;
            }
            let shape = if r.chance(0.5) {
                vec![1, n]
            } else {
                vec![n, 1]
            };
            (
                Footprint::new(shape.clone(), mask).unwrap(),
                format!("line {shape:?} holes {holes}"),
            )
        }
        9 => {
            // A box with a hole in the middle, or a ring.
            let k = 3 + r.below(7) as usize;
            let c = (k / 2) as i64;
            let ring = r.chance(0.5);
            let fp = Footprint::from_fn(&[k, k], |i| {
                let (dy, dx) = (i[0] as i64 - c, i[1] as i64 - c);
                if ring {
                    let d = dy * dy + dx * dx;
                    d >= 2 && d <= c * c + 1
                } else {
                    !(dy == 0 && dx == 0)
                }
            });
            (fp, format!("holed {k}x{k} ring {ring}"))
        }
        10 => {
            // Large footprints: > 64 and > 128 values.
            let k = r.pick(&[9usize, 10, 11, 12, 13]);
            let h = k + r.below(3) as usize;
            let p = r.pick(&[0.8, 0.95]);
            let mask: Vec<bool> = (0..h * k).map(|_| r.chance(p)).collect();
            let mut mask = mask;
            mask[0] = true;
            (
                Footprint::new(vec![h, k], mask).unwrap(),
                format!("bigmask {h}x{k}"),
            )
        }
        _ => {
            let k = r.pick(&[10usize, 11, 12]);
            if r.chance(0.5) {
                (Footprint::from_size(&[k, k]), format!("bigbox {k}x{k}"))
            } else {
                let w = r.pick(&[1usize, 3, 5]);
                (Footprint::from_size(&[k, w]), format!("bigbox {k}x{w}"))
            }
        }
    }
}

#[derive(Clone)]
struct Case {
    source: String,
    cat: String,
    fp: Footprint,
    fp_desc: String,
    mode: Mode,
    cval: f64,
    origin: Vec<isize>,
    axes: Option<Vec<isize>>,
    dts: (Dtype, Dtype),
    shape: Vec<usize>,
    data: Vec<u8>,
    data_desc: String,
    lin: Layout,
    lout: Layout,
}

fn variant(r: &mut Rng, n: usize) -> String {
    let n = n as i64;
    let k = r.range(-n, (n - 1).max(-n));
    let q = r.range(0, 1000) as f64 / 10.0;
    let forms: Vec<String> = vec![
        "np.nanmedian(x)".into(),
        format!("np.nanpercentile(x, {q})"),
        "np.nanmin(x)".into(),
        "np.nanmax(x)".into(),
        format!("np.nanquantile(x, {})", q / 100.0),
        "np.median(x[1:])".into(),
        "np.median(x[:-1])".into(),
        "np.median(x[::2])".into(),
        "np.min(x[1:])".into(),
        "np.max(x[:-1])".into(),
        format!("sorted(x)[{k}]"),
        format!("np.partition(x, {k})[{k}]"),
        format!("np.sort(-x)[{k}]"),
        format!("-np.sort(x)[{k}]"),
        "np.median(-x)".into(),
        "np.median(abs(x))".into(),
        "np.median(x) + 0".into(),
        "np.median(x) * 1.0".into(),
        "np.amin(x)".into(),
        "np.amax(x)".into(),
        "x.min()".into(),
        "x.max()".into(),
        "np.max(x) - min(x)".into(),
        "np.ptp(x) + 0.0".into(),
        format!("np.percentile(x, {q})"),
        format!("np.quantile(x, {})", q / 100.0),
        format!("np.percentile(x, {q}, method='lower')"),
        format!("np.percentile(x, {q}, method='higher')"),
        format!("np.percentile(x, {q}, method='nearest')"),
        format!("np.percentile(x, {q}, method='midpoint')"),
        "np.sort(x)[len(x) // 3]".into(),
        "np.sort(x)[len(x) // 2]".into(),
        "np.sort(x)[-len(x) // 3]".into(),
        "np.median(np.sort(x))".into(),
        "np.min(np.sort(x))".into(),
        "np.sort(x)[0] - np.sort(x)[-1]".into(),
        "np.sort(x)[-1] - np.sort(x)[0]".into(),
        "min(x) - max(x)".into(),
        "max(x) + min(x)".into(),
        "np.median(x.astype(np.float32))".into(),
        "float(np.median(x))".into(),
        "np.float32(np.median(x))".into(),
        "np.mean(np.sort(x)[1:2])".into(),
        "np.max(np.minimum(x, 0.0))".into(),
        "np.min(x) if len(x) > 0 else 0.0".into(),
        format!("np.percentile(x, {q}) if x[0] == x[0] else -7.0"),
        "np.median(x[x == x])".into(),
        format!("np.sort(x, kind='stable')[{k}]"),
        "np.max(x + 0.0)".into(),
        "np.min(x * 1.0)".into(),
        "np.min(x) + 0.0".into(),
        "min(min(x), 0.5)".into(),
        "np.min((x - 1.0) * 0.0)".into(),
        "np.max((x - 1.0) * 0.0)".into(),
        "np.ptp((x - 1.0) * 0.0)".into(),
        "min((x - 1.0) * 0.0)".into(),
        "np.min(-x)".into(),
        "np.max(-x)".into(),
        format!("np.sort((x - 1.0) * 0.0)[{k}]"),
        format!("np.percentile((x - 1.0) * 0.0, {q})"),
        "np.median((x - 1.0) * 0.0)".into(),
        "np.min(x * np.inf)".into(),
        "np.max(x / 0.0)".into(),
        "np.median(x * np.inf)".into(),
        format!("np.percentile(x * np.inf, {q})"),
        "np.min(x / 1e308 / 1e308)".into(),
        "max(x * np.inf)".into(),
        "np.max(x) - np.min(x * 0.0)".into(),
    ];
    r.pick(&forms)
}

fn callbacks(r: &mut Rng, n: usize) -> (String, &'static str) {
    if r.chance(0.25) {
        return (variant(r, n), "variant");
    }
    match r.below(16) {
        0..=2 => ("np.median(x)".into(), "median"),
        3..=5 => {
            let q = r.pick(&["0", "1", "30", "50", "99.9", "100", "25", "75"]);
            (format!("np.percentile(x, {q})"), "percentile")
        }
        6 => {
            let q = r.pick(&["0", "0.01", "0.3", "0.5", "0.999", "1", "0.75", "1.0"]);
            (format!("np.quantile(x, {q})"), "quantile")
        }
        7..=9 => {
            let n = n as i64;
            let k = if r.chance(0.03) {
                r.pick(&[n, -n - 1])
            } else if r.chance(0.4) {
                r.pick(&[0, n - 1, -1, -n, n / 2, -(n / 2) - 1, 1, -2])
            } else {
                r.range(-n, n - 1)
            };
            (format!("np.sort(x)[{k}]"), "sort")
        }
        10 => ("np.min(x)".into(), "extreme"),
        11 => ("np.max(x)".into(), "extreme"),
        12 => ("min(x)".into(), "extreme"),
        13 => ("max(x)".into(), "extreme"),
        14 => (
            r.pick(&["max(x) - min(x)", "np.max(x) - np.min(x)"]).into(),
            "range",
        ),
        _ => ("np.ptp(x)".into(), "range"),
    }
}

const CVALS: [f64; 31] = [
    0.1,
    16777217.0,
    1e-40,
    1.401298464324817e-45,
    -2.5,
    0.0,
    1.0,
    -1.5,
    0.5,
    f64::NAN,
    -0.0,
    f64::INFINITY,
    f64::NEG_INFINITY,
    255.0,
    256.0,
    -129.0,
    -128.0,
    127.0,
    65535.0,
    4294967295.0,
    4294967296.0,
    (1u64 << 63) as f64,
    -((1u64 << 63) as f64),
    1.8446744073709552e19,
    9007199254740993.0,
    1e300,
    3.4028234663852886e38,
    1e-320,
    -3.0,
    2.0,
    1e20,
];

fn make_case(r: &mut Rng) -> Case {
    let rank = match r.below(20) {
        0..=2 => 1,
        3..=16 => 2,
        _ => 3,
    };
    let mut axes = None;
    let (fp, fp_desc) = match rank {
        1 => {
            let n = 1 + r.below(15) as usize;
            if r.chance(0.5) {
                (Footprint::from_size(&[n]), format!("1d box {n}"))
            } else {
                let mut mask: Vec<bool> = (0..n).map(|_| r.chance(0.6)).collect();
                mask[r.below(n as u64) as usize] = true;
                (
                    Footprint::new(vec![n], mask).unwrap(),
                    format!("1d mask {n}"),
                )
            }
        }
        2 => footprint2(r),
        _ => match r.below(4) {
            0 => {
                let (f, d) = footprint2(r);
                let s = f.shape().to_vec();
                let mask = (0..s[0] * s[1]).map(|i| f.contains_flat(i)).collect();
                (
                    Footprint::new(vec![1, s[0], s[1]], mask).unwrap(),
                    format!("3d [1,{d}]"),
                )
            }
            1 => {
                let (f, d) = footprint2(r);
                axes = Some(r.pick(&[
                    vec![1, 2],
                    vec![-2, -1],
                    vec![2, 1],
                    vec![-1, -2],
                    vec![0, 2],
                    vec![0, 1],
                    vec![2, 0],
                ]));
                (f, format!("3d axes {d}"))
            }
            2 => {
                let d = 1 + r.below(3) as usize;
                let (h, w) = (1 + r.below(4) as usize, 1 + r.below(4) as usize);
                (
                    Footprint::from_size(&[d, h, w]),
                    format!("3d box {d}x{h}x{w}"),
                )
            }
            _ => {
                let s = [
                    1 + r.below(3) as usize,
                    1 + r.below(4) as usize,
                    1 + r.below(4) as usize,
                ];
                let n = s.iter().product::<usize>();
                let mut mask: Vec<bool> = (0..n).map(|_| r.chance(0.6)).collect();
                mask[0] = true;
                (
                    Footprint::new(s.to_vec(), mask).unwrap(),
                    format!("3d mask {s:?}"),
                )
            }
        },
    };
    let n = fp_count(&fp);
    let (source, cat) = callbacks(r, n);
    let fshape = fp.shape().to_vec();
    // Image shape.
    let shape: Vec<usize> = match rank {
        1 => {
            let m = if r.chance(0.3) { 6 } else { 60 };
            vec![1 + r.below(m) as usize]
        }
        2 => {
            let tiny = r.chance(0.25);
            let mut dim = |k: usize| -> usize {
                if tiny {
                    1 + r.below(k.max(2) as u64) as usize
                } else {
                    match r.below(8) {
                        0 => 1,
                        1 => 41 + r.below(50) as usize,
                        _ => 1 + r.below(40) as usize,
                    }
                }
            };
            let mut s = vec![dim(fshape[0]), dim(fshape[1])];
            // Keep the work bounded: big footprints on small images.
            while s[0] * s[1] * n > 80_000 {
                if s[0] > s[1] {
                    s[0] = s[0] / 2 + 1;
                } else {
                    s[1] = s[1] / 2 + 1;
                }
                if s[0] * s[1] <= 4 {
                    break;
                }
            }
            s
        }
        _ => {
            let mut s = vec![
                1 + r.below(4) as usize,
                1 + r.below(15) as usize,
                1 + r.below(20) as usize,
            ];
            while s.iter().product::<usize>() * n > 40_000 {
                s[2] = s[2] / 2 + 1;
                s[1] = s[1] / 2 + 1;
            }
            s
        }
    };
    let fdims: Vec<usize> = fshape.clone();
    let origin: Vec<isize> = fdims
        .iter()
        .map(|&k| {
            let lo = -((k / 2) as isize);
            let hi = ((k as isize) - 1) / 2;
            if r.chance(0.01) {
                r.pick(&[lo - 1, hi + 1])
            } else if r.chance(0.5) {
                r.pick(&[lo, hi, 0])
            } else {
                r.range(lo as i64, hi as i64) as isize
            }
        })
        .collect();
    let origin = if origin.iter().all(|&o| o == 0) && r.chance(0.5) {
        vec![]
    } else {
        origin
    };
    let mode = r.pick(&MODES);
    let cval = if r.chance(0.3) { 0.0 } else { r.pick(&CVALS) };
    let din = r.pick(&ALL);
    let dout = if r.chance(0.5) {
        din
    } else if r.chance(0.5) {
        Dtype::F64
    } else {
        r.pick(&ALL)
    };
    let total: usize = shape.iter().product();
    let (data, data_desc) = data(r, total, din);
    Case {
        source,
        cat: cat.into(),
        fp,
        fp_desc,
        mode,
        cval,
        origin,
        axes,
        dts: (din, dout),
        shape,
        lin: Layout::c(0),
        lout: Layout::c(0),
        data,
        data_desc,
    }
}

/// A keyed-median case: a box median of doubles (or of wide integers), 5×5/7×7, NaN-free
/// mostly, values agreeing in their high words.
fn keyed_case(r: &mut Rng) -> Case {
    let k = r.pick(&[5usize, 5, 7, 7, 3, 9]);
    let (h, w) = if r.chance(0.8) {
        (k, k)
    } else {
        (k, r.pick(&[3usize, 5, 7]))
    };
    let shape = vec![1 + r.below(30) as usize, 1 + r.below(36) as usize];
    let total: usize = shape.iter().product();
    let din = if r.chance(0.8) {
        Dtype::F64
    } else {
        r.pick(&[Dtype::I64, Dtype::U64, Dtype::I32, Dtype::U32])
    };
    let (data, desc) = if din == Dtype::F64 {
        let palette = float_palette(r);
        let mut extra = vec![];
        for &p in &palette {
            extra.push(-p);
        }
        let mut palette = palette;
        palette.extend(extra);
        palette.retain(|v| !v.is_nan());
        if palette.is_empty() {
            palette.push(1.0);
        }
        let nan_p = r.pick(&[0.0, 0.0, 0.0, 0.01]);
        let special_p = r.pick(&[0.0, 0.02, 0.1]);
        let mut out = vec![];
        for _ in 0..total {
            let v = if r.chance(nan_p) {
                f64::NAN
            } else if r.chance(special_p) {
                let v = r.pick(&F64_SPECIAL);
                if v.is_nan() {
                    0.0
                } else {
                    v
                }
            } else {
                let b = r.pick(&palette).to_bits() & !0xFFFF_FFFF;
                let lo = match r.below(6) {
                    0 | 1 => 0,
                    2 => 1,
                    3 => 0xFFFF_FFFF,
                    4 => 0x8000_0000,
                    _ => r.below(4),
                };
                f64::from_bits(b | lo)
            };
            out.extend(v.to_le_bytes());
        }
        (
            out,
            format!("keyed high-word nan_p {nan_p} special {special_p}"),
        )
    } else {
        data(r, total, din)
    };
    let mode = r.pick(&MODES);
    let cval = if r.chance(0.5) { 0.0 } else { r.pick(&CVALS) };
    let any = r.pick(&ALL);
    let dout = r.pick(&[Dtype::F64, Dtype::F64, Dtype::F32, din, any]);
    let origin = if r.chance(0.5) {
        vec![]
    } else {
        [h, w]
            .iter()
            .map(|&k| r.range(-((k / 2) as i64), ((k as i64) - 1) / 2) as isize)
            .collect()
    };
    Case {
        source: "np.median(x)".into(),
        cat: "keyed".into(),
        fp: Footprint::from_size(&[h, w]),
        fp_desc: format!("box {h}x{w}"),
        mode,
        cval,
        origin,
        axes: None,
        dts: (din, dout),
        shape,
        lin: Layout::c(0),
        lout: Layout::c(0),
        data,
        data_desc: desc,
    }
}

fn fp_count(fp: &Footprint) -> usize {
    let n: usize = fp.shape().iter().product();
    (0..n).filter(|&i| fp.contains_flat(i)).count()
}

trait Flat {
    fn contains_flat(&self, i: usize) -> bool;
    fn entries(&self) -> Vec<bool>;
}
impl Flat for Footprint {
    fn contains_flat(&self, i: usize) -> bool {
        self.entry(i)
    }
    fn entries(&self) -> Vec<bool> {
        let n: usize = self.shape().iter().product();
        (0..n).map(|i| self.entry(i)).collect()
    }
}

/// The launches a case runs under, with their description: the default, and one or two with a
/// random tuning, rows of blocks and multiprocessors (0 for a device of unknown size, whose
/// strips keep their own runs of rows).
fn tunings(r: &mut Rng, cat: &str) -> Vec<(Launch, String)> {
    use ndjit_gpu::codegen::body::NetworkStyle;
    let h100 = ndjit_gpu::emulate::H100_MULTIPROCESSORS;
    let mut out = vec![(Launch::new(Tuning::default(), 65535), "default".to_string())];
    let styles = [
        NetworkStyle::HighKey,
        NetworkStyle::Select,
        NetworkStyle::IntKey,
    ];
    let extra = if cat == "keyed" { 2 } else { 1 + r.below(2) };
    for _ in 0..extra {
        let mut t = Tuning::default();
        let mut desc = String::new();
        match r.below(3) {
            0 => {
                t.separable = Some(true);
                desc += "sep=on ";
            }
            1 => {
                t.separable = Some(false);
                desc += "sep=off ";
            }
            _ => {}
        }
        if cat == "keyed" || r.chance(0.5) {
            t.network = r.pick(&styles);
            t.outputs_per_thread = r.pick(&[0, 1, 2, 4]);
            t.rows_per_thread = r.pick(&[0, 0, 1, 2]);
            desc += &format!(
                "net={:?} opt={} rpt={} ",
                t.network, t.outputs_per_thread, t.rows_per_thread
            );
        }
        if r.chance(0.3) {
            t.pass_outputs = r.pick(&[1, 2, 4]);
            let joints = [
                ndjit_gpu::codegen::separable::Joint::Kernels,
                ndjit_gpu::codegen::separable::Joint::Tile(2),
                ndjit_gpu::codegen::separable::Joint::Auto,
            ];
            t.joint = r.pick(&joints);
            desc += &format!("po={} joint={:?} ", t.pass_outputs, t.joint);
        }
        let gr = r.pick(&[65535u32, 1, 2]);
        desc += &format!("grid_rows={gr}");
        let multiprocessors = r.pick(&[h100, 0]);
        desc += &format!(" sms={multiprocessors}");
        let launch = Launch {
            multiprocessors,
            ..Launch::new(t, gr)
        };
        out.push((launch, desc));
    }
    out
}

fn describe(c: &Case) -> String {
    format!(
        "{} | fp {} {:?} mask {:?} | mode {:?} cval {:?} origin {:?} axes {:?} | {:?}->{:?} | shape {:?} | {} | in {:?} out {:?}",
        c.source,
        c.fp_desc,
        c.fp.shape(),
        if fp_count(&c.fp) == c.fp.shape().iter().product::<usize>() {
            "full".to_string()
        } else {
            c.fp.entries().iter().map(|&b| if b { '1' } else { '0' }).collect::<String>()
        },
        c.mode,
        c.cval,
        c.origin,
        c.axes,
        c.dts.0,
        c.dts.1,
        c.shape,
        c.data_desc,
        c.lin,
        c.lout
    )
}

fn elem_str(b: &[u8], dt: Dtype) -> String {
    let v = ndjit_gpu::reference::to_f64(b, dt)[0];
    match dt {
        Dtype::F64 => format!(
            "{v:?} ({:#018x})",
            u64::from_le_bytes(b.try_into().unwrap())
        ),
        Dtype::F32 => format!(
            "{v:?} ({:#010x})",
            u32::from_le_bytes(b.try_into().unwrap())
        ),
        Dtype::I64 => format!("{}", i64::from_le_bytes(b.try_into().unwrap())),
        Dtype::U64 => format!("{}", u64::from_le_bytes(b.try_into().unwrap())),
        _ => format!("{v:?}"),
    }
}

/// The window values (as elements of the input) of output `i`, for a report: the input as a
/// list when small.
fn input_dump(c: &Case) -> String {
    let sz = c.dts.0.itemsize();
    let n = c.data.len() / sz;
    if n > 400 {
        return format!("<{n} values>");
    }
    let vals: Vec<String> = c.data.chunks(sz).map(|b| elem_str(b, c.dts.0)).collect();
    format!("[{}]", vals.join(", "))
}

/// A memory layout of a view: per axis a step (1 or 2) and a flip, and the memory order of
/// the axes (last fastest).
#[derive(Clone, Debug)]
struct Layout {
    step: Vec<usize>,
    flip: Vec<bool>,
    perm: Vec<usize>,
}

impl Layout {
    fn c(rank: usize) -> Layout {
        Layout {
            step: vec![1; rank],
            flip: vec![false; rank],
            perm: (0..rank).collect(),
        }
    }
    fn random(r: &mut Rng, rank: usize) -> Layout {
        let mut l = Layout::c(rank);
        if r.chance(0.7) {
            return l;
        }
        for a in 0..rank {
            if r.chance(0.4) {
                l.step[a] = 2;
            }
            if r.chance(0.3) {
                l.flip[a] = true;
            }
        }
        if rank > 1 && r.chance(0.4) {
            l.perm.reverse();
        }
        l
    }
    fn is_c(&self) -> bool {
        self.step.iter().all(|&s| s == 1)
            && self.flip.iter().all(|&f| !f)
            && self.perm.iter().enumerate().all(|(i, &p)| i == p)
    }
    /// (buffer bytes, base offset, strides) for `shape` of `size`-byte elements.
    fn geometry(&self, shape: &[usize], size: usize) -> (usize, isize, Vec<isize>) {
        let rank = shape.len();
        let phys: Vec<usize> = (0..rank).map(|a| shape[a].max(1) * self.step[a]).collect();
        let mut sp = vec![0isize; rank];
        let mut acc = size as isize;
        for &a in self.perm.iter().rev() {
            sp[a] = acc;
            acc *= phys[a] as isize;
        }
        let total = acc as usize;
        let mut base = 0isize;
        let strides: Vec<isize> = (0..rank)
            .map(|a| {
                let st = sp[a] * self.step[a] as isize;
                if self.flip[a] {
                    base += (shape[a] as isize - 1).max(0) * st;
                    -st
                } else {
                    st
                }
            })
            .collect();
        (total, base, strides)
    }
    fn offsets(&self, shape: &[usize], size: usize) -> (usize, isize, Vec<isize>, Vec<usize>) {
        let (total, base, strides) = self.geometry(shape, size);
        let n: usize = shape.iter().product();
        let mut offs = Vec::with_capacity(n);
        let mut idx = vec![0usize; shape.len()];
        for _ in 0..n {
            let o = base
                + idx
                    .iter()
                    .zip(&strides)
                    .map(|(&i, &s)| i as isize * s)
                    .sum::<isize>();
            offs.push(o as usize);
            for a in (0..shape.len()).rev() {
                idx[a] += 1;
                if idx[a] < shape[a] {
                    break;
                }
                idx[a] = 0;
            }
        }
        (total, base, strides, offs)
    }
}

/// `exec` on `input` laid out as `lin`, into an output laid out as `lout`; the output read back
/// in C order.
fn run_view<E: ndjit::driver::Executor>(
    exec: &E,
    filter: &ndjit::Filter,
    (input, dt): (&[u8], Dtype),
    shape: &[usize],
    out: Dtype,
    opts: &Options,
    (lin, lout): (&Layout, &Layout),
) -> Result<Vec<u8>, E::Error> {
    use ndjit::driver::{self, RawArray, RawArrayMut};
    let (isz, osz) = (dt.itemsize(), out.itemsize());
    let (itotal, ibase, istrides, ioffs) = lin.offsets(shape, isz);
    let mut ibuf = vec![0x5Au8; itotal];
    for (i, &o) in ioffs.iter().enumerate() {
        ibuf[o..o + isz].copy_from_slice(&input[i * isz..(i + 1) * isz]);
    }
    let (ototal, obase, ostrides, ooffs) = lout.offsets(shape, osz);
    let mut obuf = vec![0xA5u8; ototal];
    let input = RawArray {
        ptr: unsafe { ibuf.as_ptr().offset(ibase) },
        dtype: dt,
        shape: shape.to_vec(),
        strides: istrides,
    };
    let output = RawArrayMut {
        ptr: unsafe { obuf.as_mut_ptr().offset(obase) },
        dtype: out,
        shape: shape.to_vec(),
        strides: ostrides,
    };
    unsafe { driver::execute(exec, &input, &output, filter, opts) }?;
    let mut res = Vec::with_capacity(ooffs.len() * osz);
    for &o in &ooffs {
        res.extend_from_slice(&obuf[o..o + osz]);
    }
    Ok(res)
}

struct Outcome {
    mismatch: Option<String>,
    selected: bool,
    raised: Option<String>,
    keyed: bool,
}

fn check(c: &Case, runs: &[(Launch, String)]) -> Outcome {
    let gpu = match GpuFilter::compile(&c.source, &ndjit::Bindings::new()) {
        Ok(g) => g,
        Err(e) => {
            return Outcome {
                mismatch: None,
                selected: false,
                raised: Some(format!("compile: {e}")),
                keyed: false,
            }
        }
    };
    let opts = Options {
        mode: c.mode,
        cval: c.cval,
        origin: c.origin.clone(),
        axes: c.axes.clone(),
        threads: Some(1),
        ..Options::new(c.fp.clone())
    };
    let cpu_opts = Options {
        engine: Engine::Callback,
        ..opts.clone()
    };
    let cpu = run(
        &Engine::Callback,
        gpu.filter(),
        (&c.data, c.dts.0),
        &c.shape,
        c.dts.1,
        &cpu_opts,
    );
    let mut selected = false;
    let mut keyed = false;
    for (launch, tdesc) in runs {
        if let Ok(ptx) = gpu.ptx_tuned(&opts, c.shape.len(), c.dts, Target::SM90, launch.tuning) {
            selected |= ptx.contains("ndjit_keys");
            keyed |= ptx
                .lines()
                .any(|l| l.trim_start().starts_with("@%p") && l.contains("min.u32"));
        }
        let emu = launch.emulator(&gpu);
        let got = if c.lin.is_c() && c.lout.is_c() {
            run(
                &emu,
                gpu.filter(),
                (&c.data, c.dts.0),
                &c.shape,
                c.dts.1,
                &opts,
            )
        } else {
            run_view(
                &emu,
                gpu.filter(),
                (&c.data, c.dts.0),
                &c.shape,
                c.dts.1,
                &opts,
                (&c.lin, &c.lout),
            )
        };
        let mismatch = match (&cpu, got) {
            (Ok(cb), Ok(gb)) => {
                let size = c.dts.1.itemsize();
                let differ = |(x, y): &(&[u8], &[u8])| !same_bits(x, y, c.dts.1);
                let pairs = || cb.chunks(size).zip(gb.chunks(size));
                pairs().position(|p| differ(&p)).map(|i| {
                    let (x, y) = pairs().nth(i).expect("a differing element");
                    format!(
                        "[{tdesc}] element {i} (of {} differing): cpu {} gpu {}",
                        pairs().filter(differ).count(),
                        elem_str(x, c.dts.1),
                        elem_str(y, c.dts.1)
                    )
                })
            }
            (Err(ce), Err(ge)) => {
                let (cs, gs) = (ce.to_string(), ge.to_string());
                (refuses_a_zero_choice(&cs) != refuses_a_zero_choice(&gs))
                    .then(|| format!("[{tdesc}] both raise, differently: cpu {cs} | gpu {gs}"))
            }
            (Ok(_), Err(ge)) => Some(format!("[{tdesc}] cpu ok, gpu raises: {ge}")),
            (Err(ce), Ok(_)) => Some(format!("[{tdesc}] cpu raises ({ce}), gpu ok")),
        };
        if mismatch.is_some() {
            return Outcome {
                mismatch,
                selected,
                raised: None,
                keyed,
            };
        }
    }
    Outcome {
        mismatch: None,
        selected,
        raised: cpu.err().map(|e| e.to_string()),
        keyed,
    }
}

/// The environment variable `name` parsed, or `default`.
fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

#[test]
#[ignore = "a randomized hunt of minutes: run with --ignored"]
fn hunt() {
    let seed: u64 = env_or("HUNT_SEED", 1);
    let secs: f64 = env_or("HUNT_SECS", 120.0);
    let max_cases: usize = env_or("HUNT_CASES", usize::MAX);
    let only = std::env::var("HUNT_ONLY").unwrap_or_default();
    let verbose = std::env::var("HUNT_VERBOSE").is_ok();
    let mut r = Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D));
    let start = Instant::now();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures: Vec<String> = vec![];
    let mut case_no = 0usize;
    while start.elapsed().as_secs_f64() < secs && case_no < max_cases {
        case_no += 1;
        let mut c = if r.chance(0.15) {
            keyed_case(&mut r)
        } else {
            make_case(&mut r)
        };
        c.lin = Layout::random(&mut r, c.shape.len());
        c.lout = Layout::random(&mut r, c.shape.len());
        if !c.lin.is_c() || !c.lout.is_c() {
            *counts.entry("strided views".to_string()).or_default() += 1;
        }
        let runs = tunings(&mut r, &c.cat);
        let key = format!("{}|{}", c.cat, c.fp_desc.split(' ').next().unwrap_or(""));
        if !only.is_empty() && !key.contains(&only) && !c.source.contains(&only) {
            continue;
        }
        let t0 = Instant::now();
        let desc = describe(&c);
        if verbose {
            eprintln!("case {case_no}: {desc}");
        }
        let out = check(&c, &runs);
        let dt = t0.elapsed().as_secs_f64();
        *counts.entry(format!("cat {}", c.cat)).or_default() += 1;
        *counts
            .entry(format!("fp {}", c.fp_desc.split(' ').next().unwrap()))
            .or_default() += 1;
        *counts.entry(format!("mode {:?}", c.mode)).or_default() += 1;
        *counts.entry(format!("in {:?}", c.dts.0)).or_default() += 1;
        *counts.entry(format!("out {:?}", c.dts.1)).or_default() += 1;
        *counts.entry(format!("rank {}", c.shape.len())).or_default() += 1;
        match &out.raised {
            Some(e) => {
                let short: String = e.chars().take(50).collect();
                *counts.entry(format!("raised {short}")).or_default() += 1;
            }
            None => *counts.entry("ok (compared)".to_string()).or_default() += 1,
        }
        if out.keyed {
            *counts
                .entry(format!("keyed-median-kernel {}", c.cat))
                .or_default() += 1;
        }
        if out.selected {
            *counts
                .entry(format!("select-kernel {}", c.cat))
                .or_default() += 1;
        }
        if dt > 20.0 {
            eprintln!("slow case {case_no} ({dt:.1}s): {desc}");
        }
        if let Some(m) = out.mismatch {
            let mut s = String::new();
            let _ = write!(
                s,
                "MISMATCH case {case_no} seed {seed}: {desc}\n   {m}\n   select={}\n   input {}",
                out.selected,
                input_dump(&c)
            );
            eprintln!("{s}");
            failures.push(s);
        }
    }
    eprintln!(
        "seed {seed}: {case_no} cases in {:.0}s",
        start.elapsed().as_secs_f64()
    );
    for (k, v) in &counts {
        eprintln!("  {k}: {v}");
    }
    eprintln!("{} mismatches", failures.len());
    for f in &failures {
        eprintln!("{}", f.lines().next().unwrap());
        eprintln!("{}", f.lines().nth(1).unwrap_or(""));
    }
    assert!(failures.is_empty(), "{} mismatches", failures.len());
}

/// Quantile positions: for window sizes n, the q whose virtual index (n-1)·q lands on or near an
/// integer, on distinct values (any wrong position shows), the select kernel forced.
#[test]
#[ignore = "a randomized hunt of minutes: run with --ignored"]
fn quantile_positions() {
    let nmax: usize = env_or("HUNT_NMAX", 70);
    let mut r = Rng(77);
    let shape = [2usize, 33];
    let total = shape[0] * shape[1];
    let mut cases = 0;
    let mut failures = vec![];
    let mut selected_count = 0;
    let ns: Vec<usize> = match std::env::var("HUNT_NS") {
        Ok(v) => v.split(',').filter_map(|t| t.parse().ok()).collect(),
        Err(_) => (1..=nmax).collect(),
    };
    for n in ns {
        let (fp, desc) = if n <= 64 {
            (Footprint::from_size(&[1, n]), format!("box 1x{n}"))
        } else {
            // A 12x12 box's first n cells.
            (
                Footprint::new(vec![12, 12], (0..144).map(|i| i < n).collect()).unwrap(),
                format!("mask 12x12 first {n}"),
            )
        };
        let mut qs: Vec<String> = vec![];
        for j in 0..n.max(2) {
            let d = (n.max(2) - 1) as f64;
            qs.push(format!("np.percentile(x, {:?})", 100.0 * j as f64 / d));
            qs.push(format!("np.quantile(x, {:?})", j as f64 / d));
            if r.chance(0.3) {
                let f = (j as f64 + 0.5) / d;
                qs.push(format!("np.quantile(x, {:?})", f));
                qs.push(format!("np.percentile(x, {:?})", f * 100.0));
            }
        }
        for q in [
            "0.1", "1", "33.3", "66.7", "99.9", "12.5", "87.5", "2.5", "97.5",
        ] {
            qs.push(format!("np.percentile(x, {q})"));
        }
        let dt = if r.chance(0.5) {
            Dtype::F64
        } else {
            r.pick(&[Dtype::F32, Dtype::I32, Dtype::U16, Dtype::I64])
        };
        // Distinct values: a shuffled ramp with random gaps.
        let mut vals: Vec<f64> = (0..total)
            .map(|i| i as f64 * 3.0 + r.below(3) as f64 - 50.0)
            .collect();
        for i in (1..total).rev() {
            let j = r.below(i as u64 + 1) as usize;
            vals.swap(i, j);
        }
        let data: Vec<u8> = vals
            .iter()
            .flat_map(|&v| match dt {
                Dtype::F64 => v.to_le_bytes().to_vec(),
                Dtype::F32 => (v as f32).to_le_bytes().to_vec(),
                Dtype::I32 => (v as i32).to_le_bytes().to_vec(),
                Dtype::I64 => (v as i64).to_le_bytes().to_vec(),
                _ => ((v + 100.0) as u16).to_le_bytes().to_vec(),
            })
            .collect();
        eprintln!(
            "n {n}: {} sources, {cases} cases so far, {} mismatches",
            qs.len(),
            failures.len()
        );
        for src in qs {
            let c = Case {
                source: src.clone(),
                cat: "positions".into(),
                fp: fp.clone(),
                fp_desc: desc.clone(),
                mode: Mode::Reflect,
                cval: 0.0,
                origin: vec![],
                axes: None,
                dts: (dt, Dtype::F64),
                shape: shape.to_vec(),
                data: data.clone(),
                data_desc: "distinct".into(),
                lin: Layout::c(2),
                lout: Layout::c(2),
            };
            let runs = vec![(
                Launch::new(common::forced(true), 65535),
                "sep=on".to_string(),
            )];
            let out = check(&c, &runs);
            cases += 1;
            selected_count += out.selected as usize;
            if let Some(m) = out.mismatch {
                let s = format!("MISMATCH {}\n   {m}", describe(&c));
                eprintln!("{s}");
                failures.push(s);
            }
        }
    }
    eprintln!(
        "positions: {cases} cases, {selected_count} on the select kernel, {} mismatches",
        failures.len()
    );
    assert!(failures.is_empty(), "{} mismatches", failures.len());
}
