//! The column and row passes of a box as one kernel whose blocks walk down strips of columns,
//! costing O(1) per pixel down the columns whatever the window's height.
//!
//! The tile kernel ([`super::tile`]) takes each tile's row extremes again for the `k - 1` rows
//! its column windows reach beyond it, and folds each column window from its `k` values; both
//! grow with `k`, and past 11 rows two kernels beat it. Here a block of `32 · lanes` threads
//! owns `32 · lanes` columns and a run of [`Strip::rows`] output rows, and walks down them a
//! segment of `k` rows at a time (van Herk/Gil-Werman down the columns):
//! 1. the threads take the segment's row extremes, each [`Strip::span`] consecutive ones of a
//!    row at a time (the row pass's own code, [`super::window_extremes`], or the block's
//!    [`Columns`] where a window reaches past the image's sides), into half of a ring in shared
//!    memory;
//! 2. after a barrier, each thread walks its own column down the segment, unrolled: a running
//!    prefix of the segment in registers, and the window ending at row `q` is the previous
//!    segment's suffix from row `q + 1` (in the ring's other half) joined with that prefix;
//! 3. it then writes the segment's suffixes over its rows, for the next segment, whose row
//!    extremes go to the other half after a barrier.
//!
//! Down a column that is two loads, three folds and one store of a suffix per pixel; along the
//! rows the group's windows share their middle ([`super::fold_windows`]), and the run reads the
//! `k - 1` rows past its own once.
//!
//! Exactness is the passes' (see the parent module): the row extremes are marked and stored as
//! the tile stores them ([`super::kept`]), the vertical walk folds the stored values as a later
//! pass does ([`super::Bits`] for floats) and stores the suffixes the same way; the extremes
//! and the marks are independent of the order and grouping they are taken in, and each window
//! is the join of exactly its `k` rows' row extremes.

use super::tile::row_extremes_by;
use super::{
    byte_offset, immediate, kept, pass_params, raw, shared_per_chain, store, window_extremes, Bits,
    Folder, Join, Pass, PassArgs, PassSpec, Plain, Runs, UNROLL,
};
use crate::codegen::stencil::map_fn;
use crate::codegen::{elem, Mode};
use crate::pir::{Addr, Bin, Cls, Cmp, Func, Ins, Reg, Space, Special, Src, T};

/// Threads of a block along the rows.
pub const TX: u32 = 32;

/// Blocks a multiprocessor should have to run where the image allows ([`Strip::run`]): what
/// the blocks of a strip of 4 lanes (128 threads and a few KiB of shared memory) fill of one.
pub const BLOCKS_PER_SM: u32 = 8;

/// The fewest output rows a run is shortened to ([`Strip::run`]): a run also takes the row
/// extremes of the `k - 1` rows past its own.
pub const RUN_MIN_ROWS: u32 = 16;

/// A strip: a block of `32 · lanes` threads covers `32 · lanes` columns, each of its threads
/// walking one of them down, up to `rows` output rows per run of a block ([`Strip::run`]: the
/// launch takes fewer where the image is too short to keep the device busy). Along the rows a
/// thread takes the row extremes of up to `group` consecutive columns at once
/// ([`Strip::group`]), and at least `lanes` of them ([`Strip::span`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Strip {
    pub lanes: u32,
    pub rows: u32,
    pub group: u32,
}

impl Strip {
    /// The strip of `rows` rows with the most lanes from `lanes` down (the power of two at most
    /// `lanes`, then halving) whose rings fit `shared` bytes, the shared memory a block may
    /// have ([`crate::codegen::Target`]): `chains` rings of [`Strip::ring_rows`] rows of
    /// `32 · lanes` values of `size` bytes, and its [`Columns`]. `None` where none fits.
    pub fn fitting(
        Strip { lanes, rows, group }: Strip,
        taps: i64,
        (size, chains): (u64, usize),
        shared: u64,
    ) -> Option<Strip> {
        // A power of two, which [`Strip::group`] divides.
        let most = 1 << lanes.max(1).ilog2();
        std::iter::successors(Some(most), |&n| (n > 1).then_some(n / 2))
            .map(|lanes| Strip {
                lanes,
                rows: rows.max(1),
                group,
            })
            .find(|s| s.shared_bytes(taps, (size, chains)) <= shared)
    }

    /// Bytes of shared memory a block takes: its rings and its [`Columns`].
    fn shared_bytes(&self, taps: i64, (size, chains): (u64, usize)) -> u64 {
        self.ring_bytes(taps, size) * chains as u64 + self.table_bytes()
    }

    /// Row extremes a thread takes at once (the row pass's outputs per thread): at most the
    /// row window's `taps`, whose windows then share a middle ([`super::fold_windows`]), at
    /// most the strip's `group` and its columns, and a power of two. The more a thread takes,
    /// the fewer times each value is loaded and folded: about `(taps + 3·group) / group` folds
    /// a row extreme.
    pub fn group(&self, taps: i64) -> u32 {
        let most = taps.clamp(1, self.group.clamp(1, self.columns()) as i64) as u32;
        1 << most.ilog2()
    }

    /// Consecutive row extremes a thread takes in a row, in groups of [`Strip::group`]: at
    /// least its `lanes` (a power of two, so that its threads cover the strip's columns), so
    /// that `columns / span` threads take a row, and the block `span` rows at once.
    pub fn span(&self, taps: i64) -> u32 {
        self.lanes.max(self.group(taps))
    }

    /// Whether a strip serves a box of `(rows, columns)` taps: its edge groups fold their row
    /// values unrolled ([`Columns::values`]), and its walk unrolls a segment of the column's.
    pub fn serves(&self, (rows, columns): (i64, i64)) -> bool {
        rows + self.group(rows) as i64 - 1 <= UNROLL && columns <= UNROLL
    }

    /// Output rows per run of a block on an image of `shape` (planes, height, width), launched
    /// on a device of `multiprocessors`: the strip's `rows`, fewer where the image's runs would
    /// give fewer than [`BLOCKS_PER_SM`] blocks a multiprocessor (never fewer than
    /// [`RUN_MIN_ROWS`]); the strip's `rows` where the device is not known (0).
    ///
    /// A block walks its run down one segment at a time, so that a run's time grows with its
    /// rows; where the image has too few runs to fill the device, shorter runs finish sooner.
    /// By measurement (H100, `time_joints`, runs of 16, 28, 60 and 124 rows;
    /// `gpu/device-run/strip-rows-h100-2026-12-07.log`): at 1024² runs of 16 rows were the
    /// fastest or level everywhere (float64 `np.min` 9×9 42 µs against 90 with 124, float32
    /// ranges 33 against 82); at 2048² 16 or 28 (float64 `np.min` 9×9 72 µs against 117).
    /// With the run's rows a kernel parameter rather than an immediate, float64 min/max at
    /// 31×31 on 8192² (the same runs of 124 rows) took 1.215 ms against 1.150
    /// (`strip-runs-confirm-maxes-h100-2026-12-07.log`; ptxas gives 40 registers, was 50).
    pub fn run(&self, [planes, height, width]: [usize; 3], multiprocessors: u32) -> u32 {
        // A kernel parameter of 32 bits, signed.
        let most = self.rows.clamp(1, i32::MAX as u32);
        if multiprocessors == 0 {
            return most;
        }
        let across = width.div_ceil(self.columns() as usize).max(1) * planes.max(1);
        let want = BLOCKS_PER_SM as usize * multiprocessors as usize;
        // The longest run that still leaves `want` blocks: `height / need` rows give at least
        // `need` runs down each strip.
        let need = want.div_ceil(across);
        let fits = (height / need).clamp(RUN_MIN_ROWS as usize, u32::MAX as usize) as u32;
        most.min(fits)
    }

    /// Columns a block covers.
    pub fn columns(&self) -> u32 {
        TX * self.lanes
    }

    /// Rows of row extremes a ring keeps: two segments of `taps`.
    fn ring_rows(&self, taps: i64) -> i64 {
        2 * taps
    }

    /// Bytes of the block's [`Columns`] for the longest row window a strip serves.
    fn table_bytes(&self) -> u64 {
        (self.columns() as u64 + UNROLL as u64) * 4
    }

    fn ring_bytes(&self, taps: i64, size: u64) -> u64 {
        self.ring_rows(taps) as u64 * self.columns() as u64 * size
    }
}

/// The strip kernel: `row_pass` (reading the stage's input, [`Strip::group`] outputs per
/// thread at once) and `out` (the same pass as the last, writing the output); `column` the
/// column pass.
pub(super) fn build(
    (row_pass, out): (&PassSpec<'_>, &PassSpec<'_>),
    (column, strip): (Pass, Strip),
    name: &str,
) -> Func {
    debug_assert!(out.last.is_some(), "a strip runs the last two passes");
    // The run's rows come with the launch ([`Strip::run`]).
    let mut params = pass_params();
    params.push(crate::pir::Param {
        name: "run".into(),
        t: T::S32,
    });
    let mut k = Func::new_entry(name, params);
    let a = PassArgs::load(&mut k);
    let taps = column.taps();
    let ring = Ring::declare(&mut k, out, strip, taps);
    let tx = k.sreg(Special::TidX);
    let ty = k.sreg(Special::TidY);
    let bx = k.sreg(Special::CtaidX);
    let xs = k.bin(Bin::Mul, T::S32, bx, Src::I(strip.columns() as i64));
    // The column this thread walks down.
    let mine = k.fma(T::U32, ty, Src::I(TX as i64), tx);
    let col = k.bin(Bin::Add, T::S32, xs, mine);
    // The row pass: `per_row` threads take a row, `span` consecutive values each (thread
    // `chunk` of the row from the strip's column `chunk · span`), the block `span` rows at once
    // (both powers of two).
    let span = strip.span(row_pass.pass.taps()) as i64;
    let per_row = strip.columns() as i64 / span;
    let chunk = k.bin(Bin::And, T::B32, mine, Src::I(per_row - 1));
    let first_row = k.bin(Bin::Shr, T::U32, mine, Src::I(per_row.ilog2() as i64));
    let first = k.bin(Bin::Mul, T::U32, chunk, Src::I(span));
    let x0 = k.bin(Bin::Add, T::S32, xs, first);
    let (w, h) = (a.ext[2], a.ext[1]);
    let reads = k.setp(Cmp::Lt, T::S32, x0, w);
    let table = Columns::fill(&mut k, row_pass, strip, (xs, w), mine);
    // Past what a block may declare statically, the arrays are the launch's dynamic memory.
    k.shared_dynamic = crate::pir::layout(&k.shared).1 > crate::pir::STATIC_SHARED;
    // Runs of `run` rows, counted over the leading axis; the grid's second axis loops.
    let run = k.ld(Space::Param, T::S32, Addr::sym("run", 0));
    let (runs, z, y0) = Runs::open(&mut k, a.ext, Src::R(run));
    // Rows of row extremes the run takes: its output rows' and the `taps - 1` they reach past.
    let left = k.bin(Bin::Sub, T::S32, h, y0);
    let outputs = k.bin(Bin::Min, T::S32, left, run);
    let total = k.bin(Bin::Add, T::S32, outputs, Src::I(taps - 1));
    // `seg`: the segment's first row (counted from the run's first row of row extremes);
    // `half`: the half of the ring it fills (0 or 1).
    let seg = k.mov(T::S32, Src::I(0));
    let half = k.mov(T::U32, Src::I(0));
    let walk = Walk {
        prefix: ring.folds.iter().map(|f| f.carried(&mut k)).collect(),
        taps,
    };
    let (step, next_run) = (k.new_label(), k.new_label());
    k.place(step);
    let finished = k.setp(Cmp::Ge, T::S32, seg, total);
    k.bra_if(finished, false, next_run);
    // ---- the row pass: rows `first_row`, `first_row + span`, ... of the segment ----
    let q = k.mov(T::S32, first_row);
    let (rows, stored) = (k.new_label(), k.new_label());
    k.bra_if(reads, true, stored);
    k.place(rows);
    let r = k.bin(Bin::Add, T::S32, seg, q);
    let past = k.setp(Cmp::Ge, T::S32, r, total);
    let beyond = k.setp_comb(
        Cmp::Ge,
        T::S32,
        q,
        Src::I(taps),
        crate::pir::BoolOp::Or,
        past,
        false,
    );
    k.bra_if(beyond, false, stored);
    let yr = k.bin(Bin::Add, T::S32, y0, r);
    let y = k.bin(Bin::Add, T::S32, yr, Src::I(column.lo));
    // Per chain, the thread's `span` row extremes, taken a group at a time.
    let group = row_pass.outputs as i64;
    let mut vals: Vec<Vec<Reg>> = vec![Vec::new(); ring.folds.len()];
    for g in 0..span / group {
        let x = k.bin(Bin::Add, T::S32, x0, Src::I(g * group));
        let got = row_extremes_by(&mut k, row_pass, &a, [z, y, x], &mut |k, op, src, at| {
            window_extremes(k, row_pass, op, (src, &a.ss), (at, a.ext), Some(&table))
        });
        for (all, got) in vals.iter_mut().zip(got) {
            all.extend(got);
        }
    }
    let slot = k.fma(T::U32, half, Src::I(taps), q);
    ring.store_row(&mut k, (slot, first), &vals);
    let q1 = k.bin(Bin::Add, T::S32, q, Src::I(span));
    k.set(T::S32, q, q1);
    k.bra(rows);
    k.place(stored);
    k.push(Ins::Bar);
    // ---- the vertical pass: this thread's column down the segment ----
    let place = Place {
        seg,
        half,
        total,
        mine,
    };
    // The output of the segment's first row, `y0 + seg - (taps - 1)` (written from the run's
    // row `taps - 1` on), and the bytes from one output row to the next.
    let ys = k.bin(Bin::Add, T::S32, y0, seg);
    let ys = k.bin(Bin::Add, T::S32, ys, Src::I(1 - taps));
    let (at, row_step) = output_address(&mut k, out, &a, [z, ys, col]);
    let inside = k.setp(Cmp::Lt, T::S32, col, w);
    walk.segment(&mut k, &ring, &place, |k, q, chains| {
        let skip = k.new_label();
        k.bra_if(inside, true, skip);
        let yo = k.bin(Bin::Add, T::S32, ys, Src::I(q));
        let addr = k.fma(T::S64, row_step, Src::I(q), at);
        let vals: Vec<Reg> = chains.iter().map(|c| c[0]).collect();
        store(
            k,
            out,
            (&[Addr::reg(addr, 0)], a.flags),
            [z, yo, col],
            (h, w),
            &vals,
        );
        k.place(skip);
    });
    // The next segment's row pass overwrites the half this one read once every thread has.
    k.push(Ins::Bar);
    let s = k.bin(Bin::Add, T::S32, seg, Src::I(taps));
    k.set(T::S32, seg, s);
    let other = k.bin(Bin::Xor, T::B32, half, Src::I(1));
    k.set(T::U32, half, other);
    k.bra(step);
    k.place(next_run);
    runs.close(&mut k);
    k
}

/// The address of the output at `coord` and the bytes between output rows (64-bit: an output
/// row may lie more than 2^31 bytes from the array's start, and coordinates may be negative in
/// rows the walk does not write).
fn output_address(k: &mut Func, out: &PassSpec<'_>, a: &PassArgs, coord: [Reg; 3]) -> (Reg, Reg) {
    let osize = out.last.map_or(out.plan.elem, |(o, _)| o).itemsize() as i64;
    let off = byte_offset(k, coord, &a.ds, osize);
    let at = k.bin(Bin::Add, T::S64, a.dst[0], off);
    let step = k.bin(Bin::Mul, T::S64, a.ds[1], Src::I(osize));
    (at, step)
}

/// A block's columns through scipy's mapping, for the groups of row windows that reach past
/// the image's sides: entry `i` the column read for `xs + lo + i` (`xs` the strip's first
/// column, `lo` the row window's first offset), or -1 where constant mode reads `cval`. Taken
/// once per block: the mapping divides, and a strip's edge threads would otherwise map every
/// value of every row they walk (a block at the image's side then took 5× the others' time).
pub(super) struct Columns {
    name: &'static str,
    /// The strip's first column.
    xs: Reg,
    /// The row pass's window: its first offset and its extent.
    lo: i64,
    taps: i64,
}

impl Columns {
    fn fill(
        k: &mut Func,
        ps: &PassSpec<'_>,
        strip: Strip,
        (xs, w): (Reg, Reg),
        mine: Reg,
    ) -> Columns {
        let t = Columns {
            name: "ndjit_columns",
            xs,
            lo: ps.pass.lo,
            taps: ps.pass.taps(),
        };
        let len = strip.columns() as i64 + t.taps - 1;
        k.shared(t.name, len as u64 * 4);
        let i = k.mov(T::S32, mine);
        let (top, done) = (k.new_label(), k.new_label());
        k.place(top);
        let end = k.setp(Cmp::Ge, T::S32, i, Src::I(len));
        k.bra_if(end, false, done);
        let x = k.bin(Bin::Add, T::S32, xs, i);
        let x = k.bin(Bin::Add, T::S32, x, Src::I(t.lo));
        let m = k.mov(T::S32, x);
        let stored = k.new_label();
        // Unsigned: a column left of the image is a large number.
        let inside = k.setp(Cmp::Lt, T::U32, x, w);
        k.bra_if(inside, false, stored);
        let got = k.call(&map_fn(ps.mode), vec![x, w], &[Cls::B32, Cls::B32]);
        let mapped = match ps.mode {
            Mode::Constant => {
                let outside = k.setp(Cmp::Eq, T::S32, got[1], Src::I(0));
                k.selp(T::S32, Src::I(-1), got[0], outside)
            }
            _ => got[0],
        };
        k.set(T::S32, m, mapped);
        k.place(stored);
        let off = k.cvt(None, T::U64, T::U32, i);
        let base = k.addr_of(t.name);
        let at = k.fma(T::U64, off, Src::I(4), base);
        k.st(Space::Shared, T::S32, Addr::reg(at, 0), m);
        let next = k.bin(Bin::Add, T::S32, i, Src::I(strip.columns() as i64));
        k.set(T::S32, i, next);
        k.bra(top);
        k.place(done);
        k.push(Ins::Bar);
        t
    }

    /// The values a pass's thread reads for its windows from column `x` on, through the table:
    /// the row's (from `base`, `step` bytes a column) or, where constant mode reads outside the
    /// image, `cval`. The table covers every column a strip's thread reads.
    pub(super) fn values(
        &self,
        k: &mut Func,
        ps: &PassSpec<'_>,
        (base, step): (Reg, Reg),
        x: Reg,
    ) -> Vec<Reg> {
        let dt = ps.plan.elem;
        let rt = raw(super::work_type(dt));
        let i0 = k.bin(Bin::Sub, T::S32, x, self.xs);
        let i0 = k.cvt(None, T::U64, T::U32, i0);
        let cols = k.addr_of(self.name);
        let at = k.fma(T::U64, i0, Src::I(4), cols);
        (0..self.taps + ps.outputs as i64 - 1)
            .map(|t| {
                let m = k.ld(Space::Shared, T::S32, Addr::reg(at, 4 * t));
                let outside =
                    (ps.mode == Mode::Constant).then(|| k.setp(Cmp::Lt, T::S32, m, Src::I(0)));
                let m = k.bin(Bin::Max, T::S32, m, Src::I(0));
                let m = k.cvt(None, T::S64, T::S32, m);
                let addr = k.fma(T::S64, m, step, base);
                let v = k.ld(Space::GlobalNc, elem::ptx_type(dt), Addr::reg(addr, 0));
                match outside {
                    Some(o) => k.selp(rt, immediate(dt, ps.cval), v, o),
                    None => v,
                }
            })
            .collect()
    }
}

/// A block's rings of row extremes in shared memory: per chain, `rows` rows of the strip's
/// columns in order (so that a warp walking 32 consecutive columns reads 32 banks).
struct Ring<'a> {
    names: Vec<String>,
    folds: Vec<Fold<'a>>,
    strip: Strip,
    /// The type values are moved as, and its size in bytes.
    rt: T,
    size: i64,
}

impl<'a> Ring<'a> {
    fn declare(k: &mut Func, out: &'a PassSpec<'a>, strip: Strip, taps: i64) -> Ring<'a> {
        let folds: Vec<Fold<'a>> = out
            .plan
            .stat
            .chains()
            .iter()
            .map(|&op| Fold(Folder::new(out, op)))
            .collect();
        let wt = folds[0].0.wt;
        let size = (wt.bits() / 8) as u64;
        let names = shared_per_chain(k, "ndjit_ring", folds.len(), strip.ring_bytes(taps, size));
        Ring {
            names,
            folds,
            strip,
            rt: raw(wt),
            size: size as i64,
        }
    }

    /// Bytes from one row of a ring to the next.
    fn row_bytes(&self) -> i64 {
        self.strip.columns() as i64 * self.size
    }

    /// The address of value `i` (a column of the strip) in slot `s` of chain `c`.
    fn at(&self, k: &mut Func, c: usize, (s, i): (Reg, Reg)) -> Reg {
        let at = k.fma(T::U32, s, Src::I(self.strip.columns() as i64), i);
        let off = k.cvt(None, T::U64, T::U32, at);
        let base = k.addr_of(&self.names[c]);
        k.fma(T::U64, off, Src::I(self.size), base)
    }

    /// Stores a thread's row extremes in slot `s` from the strip's column `first`, as a pass
    /// stores them for the next: per chain its values are consecutive (a power of two of them),
    /// in 16- or 8-byte vectors where they fill them.
    fn store_row(&self, k: &mut Func, (s, first): (Reg, Reg), vals: &[Vec<Reg>]) {
        let bytes = vals[0].len() as i64 * self.size;
        let per = match bytes {
            b if b % 16 == 0 => 16 / self.size,
            8 => 8 / self.size,
            _ => 1,
        } as usize;
        for (c, vals) in vals.iter().enumerate() {
            let at = self.at(k, c, (s, first));
            let vals: Vec<Reg> = vals.iter().map(|&x| kept(k, &self.folds[c].0, x)).collect();
            for (q, chunk) in vals.chunks(per).enumerate() {
                let addr = Addr::reg(at, (q * per) as i64 * self.size);
                match chunk {
                    [x] => k.st(Space::Shared, self.rt, addr, *x),
                    _ => k.push(Ins::StV {
                        sp: Space::Shared,
                        t: self.rt,
                        addr,
                        a: chunk.to_vec(),
                    }),
                }
            }
        }
    }
}

/// How the vertical pass folds stored values: floats by their values and bits ([`Bits`]),
/// integers by their values.
struct Fold<'a>(Folder<'a>);

/// A stored value as folded: its value, and a float's bits.
#[derive(Clone, Copy)]
struct Val {
    v: Reg,
    bits: Option<Reg>,
}

impl Fold<'_> {
    fn float(&self) -> bool {
        self.0.wt.is_float()
    }

    fn load(&self, k: &mut Func, ring: &Ring<'_>, at: Addr) -> Val {
        let v = k.ld(Space::Shared, ring.rt, at);
        let bits = self
            .float()
            .then(|| k.mov(super::mark_bits(self.0.wt).0, v));
        Val { v, bits }
    }

    fn join(&self, k: &mut Func, a: Val, b: Val) -> Val {
        match (a.bits, b.bits) {
            (Some(x), Some(y)) => {
                let (v, bits) = Bits { fo: &self.0 }.join(k, (a.v, x), (b.v, y));
                Val {
                    v,
                    bits: Some(bits),
                }
            }
            _ => Val {
                v: Plain { fo: &self.0 }.join(k, a.v, b.v),
                bits: None,
            },
        }
    }

    /// `dst` = the fold `x` as a pass's result ([`super::Folder::settle`]).
    fn settle(&self, k: &mut Func, dst: Reg, x: Val) {
        match x.bits {
            Some(bits) => Bits { fo: &self.0 }.settle(k, dst, (x.v, bits)),
            None => Plain { fo: &self.0 }.settle(k, dst, x.v),
        }
    }

    /// Registers to carry a fold across rows.
    fn carried(&self, k: &mut Func) -> Val {
        let bt = super::mark_bits(self.0.wt).0;
        Val {
            v: k.reg(self.0.wt.cls()),
            bits: self.float().then(|| k.reg(bt.cls())),
        }
    }

    fn assign(&self, k: &mut Func, dst: Val, src: Val) {
        k.set(raw(self.0.wt), dst.v, src.v);
        if let (Some(d), Some(s)) = (dst.bits, src.bits) {
            k.set(super::mark_bits(self.0.wt).0, d, s);
        }
    }
}

/// Where a segment of a thread's walk lies: its first row (counted from the run's first row of
/// row extremes), the half of the ring it fills, the run's rows of row extremes, and the
/// thread's column (in the strip, and in the image).
struct Place {
    seg: Reg,
    half: Reg,
    total: Reg,
    mine: Reg,
}

/// A thread's walk down its column: per chain, the running prefix of the segment.
struct Walk {
    prefix: Vec<Val>,
    taps: i64,
}

impl Walk {
    /// The segment's rows, unrolled: each folded into the prefix, and the window ending there
    /// (from row `taps - 1` of the run on) handed to `emit(q, chains)`, `q` the row in the
    /// segment; then, where a segment follows, the segment's suffixes written over its rows.
    fn segment(
        &self,
        k: &mut Func,
        ring: &Ring<'_>,
        p: &Place,
        mut emit: impl FnMut(&mut Func, i64, &[Vec<Reg>]),
    ) {
        let taps = self.taps;
        let rb = ring.row_bytes();
        // Per chain, the thread's value in row 0 of this segment's half and of the other's.
        let other = k.bin(Bin::Xor, T::B32, p.half, Src::I(1));
        let (this, other) = (
            k.bin(Bin::Mul, T::U32, p.half, Src::I(taps)),
            k.bin(Bin::Mul, T::U32, other, Src::I(taps)),
        );
        let here: Vec<Reg> = (0..ring.folds.len())
            .map(|c| ring.at(k, c, (this, p.mine)))
            .collect();
        let before: Vec<Reg> = (0..ring.folds.len())
            .map(|c| ring.at(k, c, (other, p.mine)))
            .collect();
        // Rows of the segment the run takes (at most `taps`), and whether it is the first.
        let rows = k.bin(Bin::Sub, T::S32, p.total, p.seg);
        let first = k.setp(Cmp::Eq, T::S32, p.seg, Src::I(0));
        let (walked, ended) = (k.new_label(), k.new_label());
        let mut last = Vec::new();
        for q in 0..taps {
            if q > 0 {
                let beyond = k.setp(Cmp::Le, T::S32, rows, Src::I(q));
                k.bra_if(beyond, false, walked);
            }
            last.clear();
            for ((f, &pre), &at) in ring.folds.iter().zip(&self.prefix).zip(&here) {
                let x = f.load(k, ring, Addr::reg(at, q * rb));
                let m = if q == 0 { x } else { f.join(k, pre, x) };
                f.assign(k, pre, m);
                last.push(x);
            }
            // The window ending here: the suffix of the previous segment from row `q + 1`
            // joined with the prefix; the prefix alone at the segment's last row. The first
            // segment has no windows before its last row.
            let skip = k.new_label();
            if q < taps - 1 {
                k.bra_if(first, false, skip);
            }
            let chains: Vec<Vec<Reg>> = ring
                .folds
                .iter()
                .zip(&self.prefix)
                .zip(&before)
                .map(|((f, &pre), &at)| {
                    let m = match q < taps - 1 {
                        true => {
                            let s = f.load(k, ring, Addr::reg(at, (q + 1) * rb));
                            f.join(k, s, pre)
                        }
                        false => pre,
                    };
                    let d = k.reg(ring.rt.cls());
                    f.settle(k, d, m);
                    vec![d]
                })
                .collect();
            emit(k, q, &chains);
            k.place(skip);
        }
        // A whole segment: its suffixes, from its last row back, for the next segment's
        // windows (none follows where the run ends with it).
        let more = k.setp(Cmp::Gt, T::S32, rows, Src::I(taps));
        k.bra_if(more, true, ended);
        for ((f, &at), &x) in ring.folds.iter().zip(&here).zip(&last) {
            let mut acc = x;
            for q in (0..taps - 1).rev() {
                let addr = Addr::reg(at, q * rb);
                let y = f.load(k, ring, addr.clone());
                acc = f.join(k, y, acc);
                let d = k.reg(ring.rt.cls());
                f.settle(k, d, acc);
                let d = kept(k, &f.0, d);
                k.st(Space::Shared, ring.rt, addr, d);
            }
        }
        k.bra(ended);
        k.place(walked);
        k.place(ended);
    }
}
