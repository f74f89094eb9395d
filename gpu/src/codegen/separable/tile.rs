//! The column and row passes of a box as one kernel, through shared memory.
//!
//! Two pass kernels each read and write the whole image: four times its bytes through DRAM,
//! where a copy moves two, and the intermediate array between them is as large as the image.
//! Here a block computes a tile of `TY · rows` rows by `TX · v` columns. Its threads first take
//! the row extremes (the row pass's own code, [`window_extremes`]) of every row the tile's
//! column windows cover, `k - 1` more than the tile's (`k` the column window's extent), and
//! store them in shared memory; after a barrier each thread folds its `v` columns down `rows`
//! consecutive output rows, which share all but `rows - 1` of their `k + rows - 1` values
//! ([`super::fold_windows`]), and writes them as the last pass does. The intermediate values never
//! leave the SM: the image is read once (and the `k - 1` rows each tile reaches beyond its
//! own, through L2) and the output written once.
//!
//! Exactness is the passes' (see the parent module): the row extremes mark the values the
//! proof excludes as the first pass does and are stored as a pass stores them, the column fold
//! reads them back as a later pass does, and both the extremes (in the input's type) and the
//! marks (or'ed) are independent of the order they are taken in.

use super::{
    fold_loaded, immediate, kept, pass_params, raw, shared_per_chain, window_extremes, work_type,
    write_outputs, Folder, Pass, PassArgs, PassSpec, Runs, UNROLL,
};
use crate::codegen::stencil::map_fn;
use crate::codegen::Mode;
use crate::pir::{Addr, Bin, Cls, Cmp, Func, Ins, Reg, Space, Special, Src, T};

/// Threads of a block along the rows and down the columns.
pub const TX: u32 = 32;
pub const TY: u32 = 8;

/// Shared memory a block may declare statically (more needs the device's opt-in).
const SHARED_BYTES: u64 = 48 * 1024;

/// A tile: outputs per thread along the rows, rows per thread down the columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tile {
    pub outputs: u32,
    pub rows: u32,
}

impl Tile {
    /// The largest tile, from `outputs` by `rows` per thread down (halving each, the rows
    /// first), whose row extremes fit the shared memory a block declares: `chains` arrays of
    /// `rows · TY + taps - 1` rows of `outputs · TX` values of `size` bytes. Its column windows
    /// (`taps + rows - 1` values) must unroll. `None` where none fits.
    pub fn fitting(
        (outputs, rows): (u32, u32),
        taps: i64,
        size: u64,
        chains: usize,
    ) -> Option<Tile> {
        let halvings =
            |n: u32| std::iter::successors(Some(n.max(1)), |&n| (n > 1).then_some(n / 2));
        // At most `taps` rows: the rows' windows share a middle ([`super::fold_windows`]).
        let rows = rows.min(taps.clamp(1, u32::MAX as i64) as u32);
        halvings(outputs)
            .flat_map(|v| {
                halvings(rows).map(move |r| Tile {
                    outputs: v,
                    rows: r,
                })
            })
            .find(|t| {
                taps + t.rows as i64 - 1 <= UNROLL
                    && t.shared_bytes(taps, size) * chains as u64 <= SHARED_BYTES
            })
    }

    /// Rows of row extremes a tile keeps.
    fn kept_rows(&self, taps: i64) -> i64 {
        (self.rows * TY) as i64 + taps - 1
    }

    /// Bytes of one chain's row extremes.
    fn shared_bytes(&self, taps: i64, size: u64) -> u64 {
        self.kept_rows(taps) as u64 * (self.outputs * TX) as u64 * size
    }
}

/// The tile kernel: `row_pass` (reading the stage's input) and `out` (the same pass as the
/// last, writing the output); `column` the column pass.
pub(super) fn build(
    (row_pass, out): (&PassSpec<'_>, &PassSpec<'_>),
    (column, tile): (Pass, Tile),
    name: &str,
) -> Func {
    let mut k = Func::new_entry(name, pass_params());
    let a = PassArgs::load(&mut k);
    let taps = column.taps();
    let (v, th) = (tile.outputs as i64, (tile.rows * TY) as i64);
    let kept = Kept::declare(&mut k, out, tile, taps);
    let tx = k.sreg(Special::TidX);
    let ty = k.sreg(Special::TidY);
    let bx = k.sreg(Special::CtaidX);
    let x0 = k.fma(T::U32, bx, Src::I(TX as i64), tx);
    let x0 = k.bin(Bin::Mul, T::S32, x0, Src::I(v));
    let inside = k.setp(Cmp::Lt, T::S32, x0, a.ext[2]);
    // Tiles down the image, counted over the leading axis; the grid's second axis loops.
    let (tiles, z, y0) = Runs::open(&mut k, a.ext, Src::I(th));
    // ---- the row extremes of the tile's rows and the `taps - 1` its windows reach ----
    // Rows `ty`, `ty + TY`, ...: at least one each, as a tile keeps at least `TY` rows.
    let skip = k.new_label();
    k.bra_if(inside, true, skip);
    let r = k.mov(T::S32, ty);
    let rows = k.new_label();
    k.place(rows);
    let at = k.bin(Bin::Add, T::S32, y0, r);
    let y = k.bin(Bin::Add, T::S32, at, Src::I(column.lo));
    let vals = row_extremes(&mut k, row_pass, &a, [z, y, x0]);
    kept.store(&mut k, (r, tx), &vals);
    let r1 = k.bin(Bin::Add, T::S32, r, Src::I(TY as i64));
    k.set(T::S32, r, r1);
    let more = k.setp(Cmp::Lt, T::S32, r, Src::I(kept.rows));
    k.bra_if(more, false, rows);
    k.place(skip);
    k.push(Ins::Bar);
    // ---- each thread's `tile.rows` output rows, folded down its columns ----
    let written = k.new_label();
    k.bra_if(inside, true, written);
    let first = k.bin(Bin::Mul, T::S32, ty, Src::I(tile.rows as i64));
    let results = kept.fold_columns(&mut k, (first, tx), taps);
    let oy = k.bin(Bin::Add, T::S32, y0, first);
    for (i, chains) in results.iter().enumerate() {
        let yo = k.bin(Bin::Add, T::S32, oy, Src::I(i as i64));
        let past = k.setp(Cmp::Ge, T::S32, yo, a.ext[1]);
        k.bra_if(past, false, written);
        write_outputs(&mut k, out, &a, [z, yo, x0], chains);
    }
    k.place(written);
    // The next tile's row extremes overwrite these once every thread has read its own.
    k.push(Ins::Bar);
    tiles.close(&mut k);
    k
}

/// Each chain's extremes of the `v` row windows from `coord`, row `coord[1]` taken through
/// scipy's mapping where it lies outside the image (a row of `cval` in constant mode).
fn row_extremes(k: &mut Func, ps: &PassSpec<'_>, a: &PassArgs, coord: [Reg; 3]) -> Vec<Vec<Reg>> {
    row_extremes_by(k, ps, a, coord, &mut |k, op, src, at| {
        window_extremes(k, ps, op, (src, &a.ss), (at, a.ext), None)
    })
}

/// How a chain's extremes of a mapped row are taken: `extremes(op, src, [z, y, x])`.
pub(super) type RowFold<'a> = dyn FnMut(&mut Func, Bin, Reg, [Reg; 3]) -> Vec<Reg> + 'a;

/// [`row_extremes`] with each chain's extremes of the mapped row taken by `extremes`.
pub(super) fn row_extremes_by(
    k: &mut Func,
    ps: &PassSpec<'_>,
    a: &PassArgs,
    coord: [Reg; 3],
    extremes: &mut RowFold<'_>,
) -> Vec<Vec<Reg>> {
    let [z, y, x] = coord;
    let h = a.ext[1];
    let wt = work_type(ps.plan.elem);
    let v = ps.outputs as usize;
    let dst: Vec<Vec<Reg>> = ps
        .plan
        .stat
        .chains()
        .iter()
        .map(|_| (0..v).map(|_| k.reg(wt.cls())).collect())
        .collect();
    let (read, have) = (k.new_label(), k.new_label());
    let mapped = k.mov(T::S32, y);
    // Unsigned: a row above the image is a large number.
    let inside = k.setp(Cmp::Lt, T::U32, y, h);
    k.bra_if(inside, false, read);
    let got = k.call(&map_fn(ps.mode), vec![y, h], &[Cls::B32, Cls::B32]);
    k.set(T::S32, mapped, got[0]);
    let fill = (ps.mode == Mode::Constant).then(|| {
        let fill = k.new_label();
        let outside = k.setp(Cmp::Eq, T::S32, got[1], Src::I(0));
        k.bra_if(outside, false, fill);
        fill
    });
    k.place(read);
    for ((&op, &src), d) in ps.plan.stat.chains().iter().zip(&a.src).zip(&dst) {
        let got = extremes(k, op, src, [z, mapped, x]);
        for (&d, g) in d.iter().zip(got) {
            k.set(raw(wt), d, g);
        }
    }
    if let Some(fill) = fill {
        k.bra(have);
        k.place(fill);
        for &d in dst.iter().flatten() {
            k.set(raw(wt), d, immediate(ps.plan.elem, ps.cval));
        }
    }
    k.place(have);
    dst
}

/// A block's row extremes in shared memory: per chain, `rows` rows of `TX · v` values.
struct Kept<'a> {
    /// Per chain, the array, and how its values fold.
    names: Vec<String>,
    folders: Vec<Folder<'a>>,
    rows: i64,
    tile: Tile,
    /// The type values are moved as, and its size in bytes.
    rt: T,
    size: i64,
}

impl<'a> Kept<'a> {
    fn declare(k: &mut Func, out: &'a PassSpec<'a>, tile: Tile, taps: i64) -> Kept<'a> {
        let ops = out.plan.stat.chains();
        let folders: Vec<Folder<'a>> = ops.iter().map(|&op| Folder::new(out, op)).collect();
        let wt = folders[0].wt;
        let size = (wt.bits() / 8) as u64;
        let names = shared_per_chain(k, "ndjit_rows", ops.len(), tile.shared_bytes(taps, size));
        Kept {
            names,
            folders,
            rows: tile.kept_rows(taps),
            tile,
            rt: raw(wt),
            size: size as i64,
        }
    }

    /// The address of thread `tx`'s first value in row `r` of chain `c`. A row holds its
    /// values lane by lane: the first of each thread's `v` outputs, then the second, ...; so
    /// that a warp's 32 threads reading or writing the same lane of a row touch 32 consecutive
    /// values, each in a bank of its own.
    fn at(&self, k: &mut Func, c: usize, (r, tx): (Reg, Reg)) -> Reg {
        let v = self.tile.outputs as i64;
        let i = k.fma(T::U32, r, Src::I(v * TX as i64), tx);
        let off = k.cvt(None, T::U64, T::U32, i);
        let base = k.addr_of(&self.names[c]);
        k.fma(T::U64, off, Src::I(self.size), base)
    }

    /// The byte offset of lane `j` of row `q` from a thread's first value of row 0.
    fn offset(&self, q: i64, j: usize) -> i64 {
        (q * self.tile.outputs as i64 + j as i64) * TX as i64 * self.size
    }

    /// Stores a row's extremes as a pass stores them for the next ([`super::kept`]).
    fn store(&self, k: &mut Func, (r, tx): (Reg, Reg), vals: &[Vec<Reg>]) {
        for (c, vals) in vals.iter().enumerate() {
            let at = self.at(k, c, (r, tx));
            for (j, &x) in vals.iter().enumerate() {
                let x = kept(k, &self.folders[c], x);
                k.st(Space::Shared, self.rt, Addr::reg(at, self.offset(0, j)), x);
            }
        }
    }

    /// The thread's `tile.rows` outputs from row `first` down, per output row per chain its
    /// `v` values: each column's `taps + rows - 1` row extremes, folded as the passes fold a
    /// thread's windows, one column after another (so that only one column's values are live).
    fn fold_columns(&self, k: &mut Func, (first, tx): (Reg, Reg), taps: i64) -> Vec<Vec<Vec<Reg>>> {
        let (v, rows) = (self.tile.outputs as usize, self.tile.rows as usize);
        let n = taps + rows as i64 - 1;
        let mut out = vec![vec![Vec::with_capacity(v); self.folders.len()]; rows];
        for (c, fo) in self.folders.iter().enumerate() {
            let at = self.at(k, c, (first, tx));
            for j in 0..v {
                let res: Vec<Reg> = (0..rows).map(|_| k.reg(self.rt.cls())).collect();
                let col: Vec<Reg> = (0..n)
                    .map(|q| k.ld(Space::Shared, self.rt, Addr::reg(at, self.offset(q, j))))
                    .collect();
                fold_loaded(k, fo, &col, (rows as i64, taps), &res);
                for (i, &r) in res.iter().enumerate() {
                    out[i][c].push(r);
                }
            }
        }
        out
    }
}
