//! Medians, quantiles and `np.sort(x)[k]` of boxes and other footprints of the last two axes
//! (disks, crosses, any mask) by bisection over ordered keys: a cost per pixel of the window's
//! values times the type's bits, with no sorting and no scratch, where a sorting network's grows
//! as the values times their logarithm squared and a merge sort's branches diverge across a
//! warp. A footprint that is not a box is counted cell by cell: its window's keys are the box's
//! ([`fill`] loads the box), and each round counts those the footprint holds.
//!
//! A block of [`TX`]` × `[`TY`] threads computes a tile of `TX` columns by `TY · rows` rows. It
//! loads the values its windows cover (scipy's boundary rules applied once per value) into
//! shared memory as *keys*: unsigned integers whose order is the values' order. Each thread then
//! finds the key of rank `r` of each of its `rows` ([`rows_per_thread`]) windows down its column
//! bit by bit, from the top: a key `m` with the bits found so far and the next one set is kept
//! when at most `r` of the window's keys are below it. After the last bit, `m` is the key of
//! rank `r`, the window's `r`-th smallest value. The rows the thread's windows share are read
//! once per round for all of its outputs. Keys of 32 and 64 bits start below the bits their
//! windows' least and largest keys share, and a 64-bit key's high word is found with 32-bit
//! comparisons.
//!
//! # Why the result is the filter's, bit for bit
//!
//! The driver recognised the filter as a statistic of the sorted window
//! (`ndjit::driver::rank_form`): the values at one or two sorted positions of the window's `n`
//! values as doubles, made one by the runtime's arithmetic (`RankStat::positions`: the middle
//! plus `0.0`, the mean of two middles, NumPy's `_lerp`, or the value itself).
//! - The keys order the values as their doubles do: `(double)` is monotone on every dtype, so
//!   the value of rank `r` converts to the double of rank `r`. Integers are keyed by their
//!   offset from the type's least value; floats by their bits, the negatives' inverted and the
//!   positives' top bit set, so that `-0.0` comes just before `+0.0`.
//! - Where `-0.0` and `+0.0` compare equal for NumPy but not as keys, the value picked may be
//!   either zero. A median adds `0.0` to it, `+0.0` for both, as is `(0.0 + a) + b` where both
//!   middles are zeros. Where the sign shows (quantiles, `np.sort(x)[k]`), a window holding a
//!   `-0.0` is flagged for the patch: the general kernel computes it with the filter's own code.
//! - Every NaN is keyed as the largest key, which no other value has. Where the filter's NaN
//!   propagates (NumPy's median and quantiles) a window whose largest key is that one gives NaN
//!   (the runtime's, `f64::NAN`); where its rule is its own (`np.sort` orders NaN last, keeping
//!   its bits), the window is flagged for the patch.
//! - The second of two consecutive positions is the first's key where more keys than its rank
//!   are at most that key, else the least key above it.
//!
//! The extremes (`np.min`, `np.max`, Python's `min` and `max`, ranges) of a footprint that is not
//! a box are this kernel's too ([`extremes`]): a window's least and largest keys are its least
//! and largest values (the keys' order is the doubles'), and a range is the difference of their
//! doubles, the IR's `Sub`. Which of two equal zeros an extreme returns depends on where each
//! sits, and a NaN's rule and bits are the filter's own: float windows holding a `-0.0` or a NaN
//! are flagged for the patch.

use super::{byte_offset, pass_params, set_flag, Pass, PassArgs, PassSpec, Runs, Stat, UNROLL};
use crate::codegen::sort;
use crate::codegen::stencil::map_fn;
use crate::codegen::{elem, Dtype, Mode};
use crate::pir::{Addr, Bin, BoolOp, Cls, Cmp, Func, Ins, Reg, Space, Special, Src, Un, T};
use ndjit::driver::{NanRule, Positions, RankStat};

/// Threads of a block along the rows and down the columns.
pub const TX: u32 = 32;
pub const TY: u32 = 8;
/// Outputs per thread down its column: 2, and 4 for 8-byte values. Measured on an H200 at
/// 8192² with a CuPy prototype of this kernel (`gpu/device-run/select_prototype.py`, its log
/// beside it; 2, 4 and 8 outputs by 8 or 4 rows of threads): 2 by 8 was the fastest or within 4%
/// from 3×3 to 31×31, float32 and float64 (float32 15×15 69.0 ms against 70.4 for 4 and 82.7 for
/// 8). This kernel with 4 (`gpu/device-run/select-h200-2026-11-30.log`): float64 13×13 101.0 →
/// 92.1 ms, 15×15 129.6 → 123.4, 31×31 540 → 534; float32 within 3% either way (13×13 42.3 →
/// 43.7).
pub fn rows_per_thread(dt: Dtype) -> u32 {
    if dt.itemsize() == 8 {
        4
    } else {
        2
    }
}

/// Where the tuning leaves it open, the kernel is chosen for a median past this many values:
/// up to it the general kernel's sorting networks were faster, past it that kernel merge-sorts
/// in local memory. Measured on an H200 at 4096² (`gpu/examples/time_joints.rs`, milliseconds per
/// call; `gpu/device-run/select-h200-2026-11-30.log`): float32 9×9 3.99 against this kernel's
/// 5.38, 11×11 6.65 against 8.93 (float64 3.87 against 13.4, 6.66 against 19.7); at 8192²,
/// 15×15, float32 61.7 ms against the merge sort's 913 (an H100's, README).
pub const MEDIAN_MIN_TAPS: usize = ndjit::ir::network::MAX_NETWORK_LEN;

/// The same for quantiles and `np.sort(x)[k]`, which have no networks of their own: past the
/// values the general kernel sorts in registers, it merge-sorts. Measured from Python at 8192²
/// (`benches/gpu_window.py`, `gpu/device-run/window-percentile-h200-2026-11-30-select.log` and
/// `-chosen.log`): the general kernel's float32 `np.percentile(x, 30)` took 121 ms at 7×7 and
/// 371 at 9×9, this kernel 12.5 and 21.5. At 3×3 and 5×5 the general kernel took 1.34 and 6.83
/// ms, where this kernel's median took 0.66 and 1.53 at 4096² (a quarter of the pixels): about
/// 2.7 and 6.1 at 8192², slower at 3×3 and close at 5×5.
pub const SORTED_MIN_TAPS: usize = crate::codegen::body::NETWORK_MAX as usize;

/// The shared array of a block's keys.
const KEYS: &str = "ndjit_keys";

/// The stage of a sorted statistic's plan.
pub fn stage(passes: &[Pass]) -> super::Stage {
    let (column, row) = extents(passes);
    super::Stage::Select { column, row }
}

/// A sorted statistic's extents along the columns and the rows: its passes', one tap where it has
/// none along an axis.
fn extents(passes: &[Pass]) -> (Pass, Pass) {
    let along = |axis: usize| {
        passes
            .iter()
            .copied()
            .find(|p| p.axis == axis)
            .unwrap_or(Pass { axis, lo: 0, hi: 0 })
    };
    (along(1), along(2))
}

/// Whether `stat` over the box of `passes` (of it, the cells of `mask` where given) runs here:
/// a box of the image's last two axes whose rows unroll (a footprint's every cell unrolls, up
/// to [`MASKED_CELLS`]) and whose tile of keys fits `shared` bytes of a block, and an extreme or
/// a statistic of sorted positions within the window.
pub fn serves(
    stat: Stat,
    dt: Dtype,
    (passes, mask): (&[Pass], Option<&[bool]>),
    shared: u64,
) -> bool {
    let tile = Tile::of(dt, extents(passes), mask);
    let n = tile.count();
    let within = match stat {
        Stat::Sorted(stat) => match stat.positions(n) {
            Some(Positions::One { at, .. }) => at < n,
            Some(Positions::Two(i, j, _)) => i < n && (j == i || j == i + 1),
            None => false,
        },
        Stat::Min | Stat::Max | Stat::Range => true,
    };
    let unrolled = match mask {
        None => tile.row_taps <= UNROLL,
        Some(_) => (tile.rows_read() * tile.row_taps) as usize <= MASKED_CELLS,
    };
    within && n > 0 && passes.iter().all(|p| p.axis > 0) && unrolled && tile.bytes() <= shared
}

/// The most keys a thread reads per round for a footprint that is not a box, every one
/// unrolled (its windows hold different cells of each row, so no row is a loop): a 31×31 disk's
/// 34 rows of 31 (float64) are 1054.
pub const MASKED_CELLS: usize = 2048;

/// A block's keys: `rows` rows of `columns` keys of `size` bytes.
struct Tile<'a> {
    /// Outputs per thread down its column ([`rows_per_thread`]).
    outputs: i64,
    column_taps: i64,
    row_taps: i64,
    columns: i64,
    rows: i64,
    size: i64,
    /// The keys' type, and their significant bits (the type's).
    kt: T,
    bits: u32,
    /// The footprint's cells over the window's `column_taps × row_taps`, row-major, where it is
    /// not the whole box.
    mask: Option<&'a [bool]>,
}

impl<'a> Tile<'a> {
    fn of(dt: Dtype, (column, row): (Pass, Pass), mask: Option<&'a [bool]>) -> Tile<'a> {
        let (column_taps, row_taps) = (column.taps(), row.taps());
        let size = (dt.itemsize() as i64).max(4);
        let outputs = rows_per_thread(dt) as i64;
        Tile {
            outputs,
            column_taps,
            row_taps,
            columns: TX as i64 + row_taps - 1,
            rows: TY as i64 * outputs + column_taps - 1,
            size,
            kt: if size == 8 { T::U64 } else { T::U32 },
            bits: 8 * dt.itemsize() as u32,
            mask,
        }
    }

    /// The values in a window: the filter size.
    fn count(&self) -> usize {
        match self.mask {
            Some(m) => m.iter().filter(|&&b| b).count(),
            None => (self.column_taps * self.row_taps) as usize,
        }
    }

    /// Whether a window holds its cell at row `r` and column `c` of its box.
    fn holds(&self, r: i64, c: i64) -> bool {
        self.mask
            .is_none_or(|m| m[(r * self.row_taps + c) as usize])
    }

    /// The rows of keys a thread reads: its windows' rows, from its first window's first.
    fn rows_read(&self) -> i64 {
        self.column_taps + self.outputs - 1
    }

    fn bytes(&self) -> u64 {
        (self.columns * self.rows * self.size) as u64
    }

    /// The byte offset of the key at row `r` and column `c` from a thread's first.
    fn offset(&self, r: i64, c: i64) -> i64 {
        (r * self.columns + c) * self.size
    }

    /// The raw-bits type keys are moved and selected as.
    fn bt(&self) -> T {
        if self.kt == T::U64 {
            T::B64
        } else {
            T::B32
        }
    }

    /// The largest key: a NaN's.
    fn top(&self) -> Src {
        Src::I(if self.kt == T::U64 {
            -1
        } else {
            u32::MAX as i64
        })
    }
}

/// The kernel of a sorted statistic of a box with extents `column` and `row`; `ps` is the row's pass as the
/// last ([`PassSpec::last`] holds the output dtype).
pub(super) fn build(ps: &PassSpec<'_>, (column, row): (Pass, Pass), name: &str) -> Func {
    let mut k = Func::new_entry(name, pass_params());
    let a = PassArgs::load(&mut k);
    let dt = ps.plan.elem;
    let tile = Tile::of(dt, (column, row), ps.plan.mask.as_deref());
    k.shared(KEYS, tile.bytes());
    k.shared_dynamic = tile.bytes() > crate::pir::STATIC_SHARED;
    let tx = k.sreg(Special::TidX);
    let ty = k.sreg(Special::TidY);
    let bx = k.sreg(Special::CtaidX);
    let x0 = k.bin(Bin::Mul, T::S32, bx, Src::I(TX as i64));
    let x = k.bin(Bin::Add, T::S32, x0, tx);
    let tid = k.fma(T::U32, ty, Src::I(TX as i64), tx);
    let keys = k.addr_of(KEYS);
    let (runs, z, y0) = Runs::open(&mut k, a.ext, Src::I(TY as i64 * tile.outputs));
    fill(
        &mut k,
        ps,
        &a,
        &tile,
        (keys, tid),
        ([z, y0, x0], (column.lo, row.lo)),
    );
    k.push(Ins::Bar);
    let done = k.new_label();
    let past = k.setp(Cmp::Ge, T::S32, x, a.ext[2]);
    k.bra_if(past, false, done);
    let first = k.bin(Bin::Mul, T::S32, ty, Src::I(tile.outputs));
    let at = k.fma(T::U32, first, Src::I(tile.columns), tx);
    let at = k.cvt(None, T::U64, T::U32, at);
    let base = k.fma(T::U64, at, Src::I(tile.size), keys);
    let (out, layout) = ps.last.expect("the kernel writes the output");
    let results = match ps.plan.stat {
        Stat::Sorted(stat) => {
            let excluded = Excluded {
                zeros: layout.is_some() && stat.sign_of_zero_matters(),
                nan: layout.is_some() && ps.plan.nan == NanRule::OwnCode,
            };
            results(&mut k, (stat, dt), &tile, base, excluded)
        }
        extreme => extremes(&mut k, (extreme, dt), &tile, base, layout.is_some()),
    };
    let y = k.bin(Bin::Add, T::S32, y0, first);
    for (p, &(v, patched)) in results.iter().enumerate() {
        let yp = k.bin(Bin::Add, T::S32, y, Src::I(p as i64));
        let below = k.setp(Cmp::Ge, T::S32, yp, a.ext[1]);
        k.bra_if(below, false, done);
        let off = byte_offset(&mut k, [z, yp, x], &a.ds, out.itemsize() as i64);
        let addr = k.bin(Bin::Add, T::S64, a.dst[0], off);
        elem::store(&mut k, out, Addr::reg(addr, 0), v);
        if let (Some(l), Some(patched)) = (layout, patched) {
            let clean = k.new_label();
            k.bra_if(patched, true, clean);
            set_flag(&mut k, (l, a.flags), [z, yp, x], (a.ext[1], a.ext[2]));
            k.place(clean);
        }
    }
    k.place(done);
    // The next run's keys overwrite these once every thread has read its own.
    k.push(Ins::Bar);
    runs.close(&mut k);
    k
}

/// Loads the keys of the tile whose first output is at `[z, y0, x0]`: rows from `y0 + column_lo`
/// and columns from `x0 + row_lo`, each coordinate outside the image through scipy's mapping
/// (or `cval` in constant mode). The block's threads take every `TX · TY`-th key from `tid`.
fn fill(
    k: &mut Func,
    ps: &PassSpec<'_>,
    a: &PassArgs,
    tile: &Tile,
    (keys, tid): (Reg, Reg),
    ([z, y0, x0], (column_lo, row_lo)): ([Reg; 3], (i64, i64)),
) {
    let dt = ps.plan.elem;
    let i = k.mov(T::U32, tid);
    let (top, end) = (k.new_label(), k.new_label());
    k.place(top);
    let over = k.setp(Cmp::Ge, T::U32, i, Src::I(tile.columns * tile.rows));
    k.bra_if(over, false, end);
    let r = k.bin(Bin::Div, T::U32, i, Src::I(tile.columns));
    let rc = k.bin(Bin::Mul, T::U32, r, Src::I(tile.columns));
    let c = k.bin(Bin::Sub, T::U32, i, rc);
    let y = k.bin(Bin::Add, T::S32, y0, r);
    let y = k.bin(Bin::Add, T::S32, y, Src::I(column_lo));
    let x = k.bin(Bin::Add, T::S32, x0, c);
    let x = k.bin(Bin::Add, T::S32, x, Src::I(row_lo));
    let key = k.reg(tile.kt.cls());
    let (read, have) = (k.new_label(), k.new_label());
    // Unsigned: a coordinate before the image is a large number.
    let inside_y = k.setp(Cmp::Lt, T::U32, y, a.ext[1]);
    let inside = k.setp_comb(Cmp::Lt, T::U32, x, a.ext[2], BoolOp::And, inside_y, false);
    k.bra_if(inside, false, read);
    let my = k.call(&map_fn(ps.mode), vec![y, a.ext[1]], &[Cls::B32, Cls::B32]);
    let mx = k.call(&map_fn(ps.mode), vec![x, a.ext[2]], &[Cls::B32, Cls::B32]);
    k.set(T::S32, y, my[0]);
    k.set(T::S32, x, mx[0]);
    if ps.mode == Mode::Constant {
        let fill = key_of_cval(dt, ps.cval);
        k.set(tile.bt(), key, Src::I(fill));
        let both = k.bin(Bin::And, T::B32, my[1], mx[1]);
        let outside = k.setp(Cmp::Eq, T::S32, both, Src::I(0));
        k.bra_if(outside, false, have);
    }
    k.place(read);
    let off = byte_offset(k, [z, y, x], &a.ss, dt.itemsize() as i64);
    let addr = k.bin(Bin::Add, T::S64, a.src[0], off);
    let v = k.ld(Space::GlobalNc, elem::ptx_type(dt), Addr::reg(addr, 0));
    let kv = key_of(k, dt, v);
    k.set(tile.bt(), key, kv);
    k.place(have);
    let at = k.cvt(None, T::U64, T::U32, i);
    let at = k.fma(T::U64, at, Src::I(tile.size), keys);
    k.st(Space::Shared, tile.bt(), Addr::reg(at, 0), key);
    let next = k.bin(Bin::Add, T::U32, i, Src::I((TX * TY) as i64));
    k.set(T::U32, i, next);
    k.bra(top);
    k.place(end);
}

/// The key of a loaded element `v` of `dt` (in its load register: 8- and 16-bit values widened
/// by their signedness).
fn key_of(k: &mut Func, dt: Dtype, v: Reg) -> Reg {
    let bits = 8 * dt.itemsize() as u32;
    match dt {
        Dtype::Bool | Dtype::U8 | Dtype::U16 | Dtype::U32 | Dtype::U64 => v,
        // The offset from the least value: `v + 2^(bits-1)`, wrapping in the register.
        Dtype::I8 | Dtype::I16 | Dtype::I32 => {
            k.bin(Bin::Add, T::U32, v, Src::I(1i64 << (bits - 1)))
        }
        Dtype::I64 => k.bin(Bin::Add, T::U64, v, Src::I(i64::MIN)),
        Dtype::F32 | Dtype::F64 => {
            let (bt, st, top, all) = match dt {
                Dtype::F32 => (T::B32, T::S32, Src::I(1 << 31), Src::I(u32::MAX as i64)),
                _ => (T::B64, T::S64, Src::I(i64::MIN), Src::I(-1)),
            };
            let b = k.mov(bt, v);
            let negative = k.setp(Cmp::Lt, st, b, Src::I(0));
            let inverted = k.un(Un::Not, bt, b);
            let raised = k.bin(Bin::Or, bt, b, top);
            let key = k.selp(bt, inverted, raised, negative);
            let ft = elem::ptx_type(dt);
            let nan = k.setp(Cmp::Nan, ft, v, v);
            k.selp(bt, all, key, nan)
        }
    }
}

/// The key of `cval`, a value of `dt` (checked by [`super::holds_exactly`]), as an immediate.
fn key_of_cval(dt: Dtype, cval: f64) -> i64 {
    match dt {
        Dtype::F32 => {
            let b = (cval as f32).to_bits();
            (if b >> 31 == 1 { !b } else { b | 1 << 31 }) as i64
        }
        Dtype::F64 => {
            let b = cval.to_bits();
            (if b >> 63 == 1 { !b } else { b | 1 << 63 }) as i64
        }
        Dtype::I8 | Dtype::I16 | Dtype::I32 => {
            let bits = 8 * dt.itemsize() as u32;
            (cval as i64 + (1i64 << (bits - 1))) & u32::MAX as i64
        }
        Dtype::I64 => (cval as i64).wrapping_add(i64::MIN),
        Dtype::U64 => cval as u64 as i64,
        _ => cval as i64,
    }
}

/// The value of `key` in `dt`'s load register, as a double ([`elem::to_f64`]).
fn value_of(k: &mut Func, dt: Dtype, key: Reg) -> Reg {
    let bits = 8 * dt.itemsize() as u32;
    let v = match dt {
        Dtype::I8 | Dtype::I16 | Dtype::I32 => {
            k.bin(Bin::Sub, T::U32, key, Src::I(1i64 << (bits - 1)))
        }
        Dtype::I64 => k.bin(Bin::Sub, T::U64, key, Src::I(i64::MIN)),
        Dtype::F32 | Dtype::F64 => {
            let (bt, st, top, ft) = match dt {
                Dtype::F32 => (T::B32, T::S32, Src::I(1 << 31), Cls::F32),
                _ => (T::B64, T::S64, Src::I(i64::MIN), Cls::F64),
            };
            // A key with its top bit set is a positive value's.
            let positive = k.setp(Cmp::Lt, st, key, Src::I(0));
            let lowered = k.bin(Bin::Xor, bt, key, top);
            let inverted = k.un(Un::Not, bt, key);
            let b = k.selp(bt, lowered, inverted, positive);
            let f = k.reg(ft);
            k.set(bt, f, b);
            f
        }
        _ => key,
    };
    elem::to_f64(k, dt, v)
}

/// The float values whose windows a statistic leaves to the patch (see [`Stat::patches`]).
#[derive(Clone, Copy)]
struct Excluded {
    zeros: bool,
    nan: bool,
}

/// Per output of the thread, the extreme `stat` of its window as a double (the least key's
/// value, the largest's, or their difference, the IR's `Sub` of doubles), and where floats go
/// to the patch (`patched`), whether this window does: where it holds a `-0.0` (which of two
/// equal zeros an extreme returns depends on where each sits) or a NaN (whose rule and bits are
/// the filter's own code's).
fn extremes(
    k: &mut Func,
    (stat, dt): (Stat, Dtype),
    tile: &Tile,
    base: Reg,
    patched: bool,
) -> Vec<(Reg, Option<Reg>)> {
    let float = elem::is_float(dt);
    let patched = patched && float;
    bounds(k, tile, base, patched)
        .iter()
        .map(|b| {
            let v = match stat {
                Stat::Min => value_of(k, dt, b.least),
                Stat::Max => value_of(k, dt, b.most),
                _ => {
                    let (least, most) = (value_of(k, dt, b.least), value_of(k, dt, b.most));
                    k.bin(Bin::Sub, T::F64, most, least)
                }
            };
            let flag = b.zeros.map(|zeros| {
                let nan = k.setp(Cmp::Eq, tile.kt, b.most, tile.top());
                k.setp_comb(Cmp::Ne, T::U32, zeros, Src::I(0), BoolOp::Or, nan, false)
            });
            (v, flag)
        })
        .collect()
}

/// Per output of the thread, `stat` of its window as a double, and where windows go to the
/// patch, whether this one does; from the thread's first key at `base`.
fn results(
    k: &mut Func,
    (stat, dt): (RankStat, Dtype),
    tile: &Tile,
    base: Reg,
    excluded: Excluded,
) -> Vec<(Reg, Option<Reg>)> {
    let n = tile.count();
    let float = elem::is_float(dt);
    // Types of 32 and 64 bits start below the bits their windows' keys share (8- and 16-bit
    // ones have few bits to go, and need no NaN test).
    let bounds = (tile.bits >= 32).then(|| bounds(k, tile, base, excluded.zeros));
    let keys = |b: &Option<Vec<Bounds>>| {
        b.as_ref()
            .map(|b| b.iter().map(|b| (b.least, b.most)).collect::<Vec<_>>())
    };
    let positions = stat.positions(n).expect("checked by `serves`");
    let first = match positions {
        Positions::One { at, .. } | Positions::Two(at, ..) => at,
    };
    let lower = bisect(k, tile, base, keys(&bounds).as_deref(), first as i64);
    let upper = match positions {
        Positions::Two(i, j, _) if j > i => Some(successor(k, tile, base, &lower, j as i64)),
        Positions::Two(..) => Some(lower.clone()),
        Positions::One { .. } => None,
    };
    (0..tile.outputs as usize)
        .map(|p| {
            let a = value_of(k, dt, lower[p]);
            let mut v = match (&positions, &upper) {
                (
                    Positions::One {
                        plus_zero: false, ..
                    },
                    _,
                ) => a,
                // NumPy's median of an odd count: the middle plus `0.0`.
                (
                    Positions::One {
                        plus_zero: true, ..
                    },
                    _,
                ) => k.bin(Bin::Add, T::F64, Src::f64(0.0), a),
                (&Positions::Two(_, _, mix), Some(upper)) => {
                    let b = value_of(k, dt, upper[p]);
                    sort::mix(k, mix, (a, b))
                }
                (Positions::Two(..), None) => unreachable!("the second position is selected"),
            };
            let mut patched = None;
            if let Some(b) = bounds.as_ref().filter(|_| float) {
                let nan = k.setp(Cmp::Eq, tile.kt, b[p].most, tile.top());
                match excluded.nan {
                    // NumPy's median and quantiles: NaN wherever a value is.
                    false => v = k.selp(T::F64, Src::f64(f64::NAN), v, nan),
                    true => patched = Some(nan),
                }
                if let Some(zeros) = b[p].zeros {
                    patched = Some(match patched {
                        Some(nan) => {
                            k.setp_comb(Cmp::Ne, T::U32, zeros, Src::I(0), BoolOp::Or, nan, false)
                        }
                        None => k.setp(Cmp::Ne, T::U32, zeros, Src::I(0)),
                    });
                }
            }
            (v, patched)
        })
        .collect()
}

/// Per output, the key of rank `rank` of its window: bit by bit from the top, the key with the
/// bits found so far and the next one set is kept where at most `rank` keys are below it.
/// Given the windows' least and largest keys, it starts below the highest bit where they
/// differ in any of the thread's windows, with the bits above it (every key's) found.
fn bisect(
    k: &mut Func,
    tile: &Tile,
    base: Reg,
    bounds: Option<&[(Reg, Reg)]>,
    rank: i64,
) -> Vec<Reg> {
    let (kt, bt) = (tile.kt, tile.bt());
    let (bit, found) = match bounds {
        None => (
            k.mov(bt, Src::I(1i64 << (tile.bits - 1))),
            (0..tile.outputs)
                .map(|_| k.mov(bt, Src::I(0)))
                .collect::<Vec<_>>(),
        ),
        Some(bounds) => {
            let mut differ = k.mov(bt, Src::I(0));
            for &(least, most) in bounds {
                let d = k.bin(Bin::Xor, bt, least, most);
                differ = k.bin(Bin::Or, bt, differ, d);
            }
            // The bits at and below the highest that differs: all ones shifted right by its
            // leading zeros (none where no bit differs: PTX clamps a shift by the width).
            let zeros = k.un(Un::Clz, bt, differ);
            let low = k.bin(Bin::Shr, kt, tile.top(), zeros);
            let half = k.bin(Bin::Shr, kt, low, Src::I(1));
            let bit = k.bin(Bin::Xor, bt, low, half);
            let high = k.un(Un::Not, bt, low);
            let found = bounds
                .iter()
                .map(|&(least, _)| k.bin(Bin::And, bt, least, high))
                .collect();
            (bit, found)
        }
    };
    // 64-bit keys: the rounds that find the high word compare the high words alone (the
    // trial's low word is zero, so a key is below it exactly where its high word is below the
    // trial's), a 32-bit comparison where the whole key's takes two.
    if tile.kt == T::U64 {
        rounds(k, tile, base, (&found, bit), rank, Word::High);
    }
    rounds(k, tile, base, (&found, bit), rank, Word::Whole);
    found
}

/// Which part of a key a round compares.
#[derive(Clone, Copy, PartialEq)]
enum Word {
    Whole,
    /// The high 32 bits of a 64-bit key (little-endian: 4 bytes on).
    High,
}

impl Word {
    /// The type it is loaded and compared as, and its offset in the key.
    fn load(self, tile: &Tile) -> (T, i64) {
        match self {
            Word::Whole => (tile.bt(), 0),
            Word::High => (T::B32, 4),
        }
    }
}

/// The rounds of [`bisect`] from `bit` down while it lies in `word` (for [`Word::High`], while
/// it is a bit of the high word), updating `found` and `bit`.
fn rounds(
    k: &mut Func,
    tile: &Tile,
    base: Reg,
    (found, bit): (&[Reg], Reg),
    rank: i64,
    word: Word,
) {
    let (kt, bt) = (tile.kt, tile.bt());
    let (top, end) = (k.new_label(), k.new_label());
    k.place(top);
    let past = match word {
        Word::Whole => k.setp(Cmp::Eq, bt, bit, Src::I(0)),
        Word::High => k.setp(Cmp::Lt, T::U64, bit, Src::I(1 << 32)),
    };
    k.bra_if(past, false, end);
    let trial: Vec<Reg> = found.iter().map(|&f| k.bin(Bin::Or, bt, f, bit)).collect();
    let (ct, compared) = match word {
        Word::Whole => (kt, trial.clone()),
        Word::High => {
            let high = trial.iter().map(|&t| {
                let h = k.bin(Bin::Shr, T::U64, t, Src::I(32));
                k.cvt(None, T::U32, T::U64, h)
            });
            (T::U32, high.collect())
        }
    };
    let below: Vec<Reg> = (0..tile.outputs)
        .map(|_| k.mov(T::U32, Src::I(0)))
        .collect();
    each_key(k, tile, (base, word), &mut |k, key, p| {
        let lt = k.setp(Cmp::Lt, ct, key, compared[p]);
        let one = k.selp(T::U32, Src::I(1), Src::I(0), lt);
        let c = k.bin(Bin::Add, T::U32, below[p], one);
        k.set(T::U32, below[p], c);
    });
    for p in 0..tile.outputs as usize {
        let keep = k.setp(Cmp::Le, T::U32, below[p], Src::I(rank));
        let f = k.selp(bt, trial[p], found[p], keep);
        k.set(bt, found[p], f);
    }
    let next = k.bin(Bin::Shr, kt, bit, Src::I(1));
    k.set(bt, bit, next);
    k.bra(top);
    k.place(end);
}

/// Per output, the key of rank `rank` given `prev`, the key of rank `rank - 1`: `prev` again
/// where more than `rank` keys are at most it, else the least key above it.
fn successor(k: &mut Func, tile: &Tile, base: Reg, prev: &[Reg], rank: i64) -> Vec<Reg> {
    let (kt, bt) = (tile.kt, tile.bt());
    let at_most: Vec<Reg> = (0..tile.outputs)
        .map(|_| k.mov(T::U32, Src::I(0)))
        .collect();
    let above: Vec<Reg> = (0..tile.outputs).map(|_| k.mov(bt, tile.top())).collect();
    each_key(k, tile, (base, Word::Whole), &mut |k, key, p| {
        let le = k.setp(Cmp::Le, kt, key, prev[p]);
        let one = k.selp(T::U32, Src::I(1), Src::I(0), le);
        let c = k.bin(Bin::Add, T::U32, at_most[p], one);
        k.set(T::U32, at_most[p], c);
        let candidate = k.selp(bt, tile.top(), key, le);
        let least = k.bin(Bin::Min, kt, above[p], candidate);
        k.set(bt, above[p], least);
    });
    (0..tile.outputs as usize)
        .map(|p| {
            let again = k.setp(Cmp::Gt, T::U32, at_most[p], Src::I(rank));
            k.selp(bt, prev[p], above[p], again)
        })
        .collect()
}

/// An output's least and largest keys, and (where asked) how many of its keys are `-0.0`'s.
struct Bounds {
    least: Reg,
    most: Reg,
    zeros: Option<Reg>,
}

/// Per output, the [`Bounds`] of its window; `zeros`: count the keys of `-0.0` too.
fn bounds(k: &mut Func, tile: &Tile, base: Reg, zeros: bool) -> Vec<Bounds> {
    let (kt, bt) = (tile.kt, tile.bt());
    let negative_zero = match tile.kt {
        T::U64 => Src::I(!(1u64 << 63) as i64),
        _ => Src::I(!(1u32 << 31) as i64),
    };
    let bounds: Vec<Bounds> = (0..tile.outputs)
        .map(|_| Bounds {
            least: k.mov(bt, tile.top()),
            most: k.mov(bt, Src::I(0)),
            zeros: zeros.then(|| k.mov(T::U32, Src::I(0))),
        })
        .collect();
    each_key(k, tile, (base, Word::Whole), &mut |k, key, p| {
        let b = &bounds[p];
        let l = k.bin(Bin::Min, kt, b.least, key);
        k.set(bt, b.least, l);
        let m = k.bin(Bin::Max, kt, b.most, key);
        k.set(bt, b.most, m);
        if let Some(z) = b.zeros {
            let is = k.setp(Cmp::Eq, bt, key, negative_zero);
            let one = k.selp(T::U32, Src::I(1), Src::I(0), is);
            let c = k.bin(Bin::Or, T::B32, z, one);
            k.set(T::U32, z, c);
        }
    });
    bounds
}

/// Calls `each(key, p)` for every key of output `p`'s window, for each of the thread's outputs,
/// row by row from `base`, each key loaded once for all the windows that hold it. In a box, the
/// rows every window holds run as a loop, the others unrolled; each row's keys unrolled. A
/// footprint's windows hold different cells of a row: every row unrolls.
fn each_key(
    k: &mut Func,
    tile: &Tile,
    (base, word): (Reg, Word),
    each: &mut dyn FnMut(&mut Func, Reg, usize),
) {
    let (rows, taps) = (tile.outputs, tile.column_taps);
    let (t, skip) = word.load(tile);
    let shared = match tile.mask {
        None => (rows - 1)..taps,
        Some(_) => 0..0,
    };
    let windows =
        |r: i64, c: i64| (0..rows).filter(move |&p| p <= r && r < p + taps && tile.holds(r - p, c));
    let mut row = |k: &mut Func, at: Reg, r: Option<i64>| {
        for c in 0..tile.row_taps {
            let holding: Vec<i64> = match r {
                Some(r) => windows(r, c).collect(),
                None => (0..rows).collect(),
            };
            if holding.is_empty() {
                continue;
            }
            let off = tile.offset(r.unwrap_or(0), c) + skip;
            let key = k.ld(Space::Shared, t, Addr::reg(at, off));
            holding.iter().for_each(|&p| each(k, key, p as usize));
        }
    };
    let all = 0..tile.rows_read();
    for r in all.clone().filter(|&r| r < shared.start) {
        row(k, base, Some(r));
    }
    if !shared.is_empty() {
        let at = k.bin(Bin::Add, T::U64, base, Src::I(tile.offset(shared.start, 0)));
        let r = k.mov(T::S32, Src::I(shared.start));
        let top = k.new_label();
        k.place(top);
        row(k, at, None);
        let next = k.bin(Bin::Add, T::U64, at, Src::I(tile.offset(1, 0)));
        k.set(T::U64, at, next);
        let r1 = k.bin(Bin::Add, T::S32, r, Src::I(1));
        k.set(T::S32, r, r1);
        let more = k.setp(Cmp::Lt, T::S32, r, Src::I(shared.end));
        k.bra_if(more, false, top);
    }
    for r in all.filter(|&r| r >= shared.end.max(shared.start)) {
        row(k, base, Some(r));
    }
}
