//! The stencil kernel `ndjit_stencil`: a grid-stride loop over groups of rows, each thread
//! computing `v` outputs along a row on each of `nr` rows. A group whose windows all lie inside
//! the image takes the interior path (the window loaded once, shared by the outputs); any other
//! group the boundary path (one output at a time, every coordinate mapped by the mode).
//!
//! The phases below emit their instructions in the order the kernel runs them; registers and
//! labels are numbered in that order, so the PTX text depends on it.

use super::{
    close_row_loop, element_strides, exits, gather, gather_local, grid_place, image_taps,
    load_args, load_window, median_hints, params, record_failure, wide, Args, Geo, GridPlace,
    Window,
};
use crate::codegen::body::{Body, MedianHint, Restart, Shared};
use crate::codegen::separable::PatchLayout;
use crate::codegen::taps::{TapMemory, Taps};
use crate::codegen::{elem, Dtype, KernelSpec, ENTRY};
use crate::pir::{Addr, Bin, BoolOp, Cmp, Func, Param, Reg, Space, Src, T};

/// What the interior and boundary paths share: the footprint, the arguments, the shape of a
/// thread's group of outputs and its place in the row loop.
struct Main<'g> {
    geo: &'g Geo,
    spec: &'g KernelSpec,
    a: Args,
    /// Outputs per row of the group.
    v: i64,
    /// Rows of the group.
    nr: i64,
    /// Taps read from memory rather than a register window (see `taps`).
    large: bool,
    /// The group's first row (counted over the leading axes), and how many rows the image has.
    row: Reg,
    total_rows: Reg,
    /// The group's first column.
    x0: Reg,
    /// The image's height and width in 64 bits (for linear pixel indices).
    hw: Reg,
    ww: Reg,
    /// Where both paths go when the group is done.
    next_row: u32,
}

/// Builds `ndjit_stencil` for `outputs` outputs on each of `nrows` rows per thread (taps from
/// memory when `large`); `tuned` asks for the register cap of the measured several-row shape.
pub(super) fn build(
    sh: &mut Shared,
    geo: &Geo,
    spec: &KernelSpec,
    (outputs, nrows, large): (u32, u32, bool),
    tuned: bool,
) -> std::result::Result<Func, Restart> {
    let mut k = Func::new_entry(ENTRY, main_params(spec));
    if tuned {
        k.min_blocks_per_sm = Some(2);
    }
    let nr = nrows as i64;
    let a = load_args(&mut k);
    let exit = k.new_label();
    let v = outputs as i64;
    // Patching: nothing to do unless the separable passes flagged a position (the flags'
    // header word, see `separable::PatchLayout`).
    let flags = spec.patch.then(|| any_flagged(&mut k, exit));
    // x0: the first of this thread's outputs along the last axis.
    let GridPlace {
        xg,
        x0,
        row,
        row_step,
    } = grid_place(&mut k, a.w, v, exit);
    // `row`: the first of this thread's `nrows` rows (rows counted over the leading axes).
    let (row, row_step) = if nr > 1 {
        (
            k.bin(Bin::Mul, T::U32, row, Src::I(nr)),
            k.bin(Bin::Mul, T::U32, row_step, Src::I(nr)),
        )
    } else {
        (row, row_step)
    };
    let total_rows = k.bin(Bin::Mul, T::S32, a.d, a.h);
    let row_loop = k.new_label();
    k.place(row_loop);
    let done = k.setp(Cmp::Ge, T::S32, row, total_rows);
    k.bra_if(done, false, exit);
    let next_row = k.new_label();
    if let Some(flags) = flags {
        let layout = PatchLayout {
            rows: nrows,
            outputs,
        };
        skip_unflagged(&mut k, (flags, layout), (row, a.w), xg, next_row);
    }
    let (z, y) = plane_and_row(&mut k, spec, &a, row);
    let (vec_in, vec_out) = vector_access(&mut k, spec, &a, v);
    let inside = interior_test(&mut k, geo, &a, [z, y, x0], (v, nr), vec_in);
    let boundary = k.new_label();
    let (zw, yw, xw) = (wide(&mut k, z), wide(&mut k, y), wide(&mut k, x0));
    let hw = wide(&mut k, a.h);
    let ww = wide(&mut k, a.w);
    k.bra_if(inside, true, boundary);
    let m = Main {
        geo,
        spec,
        a,
        v,
        nr,
        large,
        row,
        total_rows,
        x0,
        hw,
        ww,
        next_row,
    };
    interior(&mut k, sh, &m, (zw, yw, xw), (vec_in, vec_out))?;
    k.bra(next_row);
    k.place(boundary);
    boundary_outputs(&mut k, sh, &m)?;
    k.place(next_row);
    close_row_loop(&mut k, (row, row_step), row_loop, exit);
    Ok(k)
}

/// The kernel's parameters: the common ones, and the separable passes' flags when patching.
fn main_params(spec: &KernelSpec) -> Vec<Param> {
    let mut params = params(false);
    if spec.patch {
        params.push(Param {
            name: "flags".into(),
            t: T::U64,
        });
    }
    params
}

/// Loads the flags' address and leaves by `exit` when their header word says no position was
/// flagged; returns the address.
fn any_flagged(k: &mut Func, exit: u32) -> Reg {
    let flags = k.ld(Space::Param, T::U64, Addr::sym("flags", 0));
    let any = k.ld(Space::Global, T::U32, Addr::reg(flags, 0));
    let none = k.setp(Cmp::Eq, T::U32, any, Src::I(0));
    k.bra_if(none, false, exit);
    flags
}

/// Branches to `next_row` unless the separable passes flagged this thread position: only the
/// flagged positions compute (see `separable`).
fn skip_unflagged(
    k: &mut Func,
    (flags, layout): (Reg, PatchLayout),
    (row, w): (Reg, Reg),
    xg: Reg,
    next_row: u32,
) {
    let at = layout.flag_address(k, flags, (row, w), xg);
    let flag = k.ld(
        Space::Global,
        T::U8,
        Addr::reg(at, PatchLayout::HEADER as i64),
    );
    let clear = k.setp(Cmp::Eq, T::U32, flag, Src::I(0));
    k.bra_if(clear, false, next_row);
}

/// A row counted over the leading axes as its plane and its row in the plane (plane 0 below
/// three axes).
fn plane_and_row(k: &mut Func, spec: &KernelSpec, a: &Args, row: Reg) -> (Reg, Reg) {
    if spec.rank() == 3 {
        let z = k.bin(Bin::Div, T::U32, row, a.h);
        let zh = k.bin(Bin::Mul, T::S32, z, a.h);
        (z, k.bin(Bin::Sub, T::S32, row, zh))
    } else {
        (k.mov(T::S32, Src::I(0)), k.mov(T::S32, row))
    }
}

/// Whether the interior may use 16-byte vector accesses: for loads, the chunk width in elements
/// and the predicate that the input's rows are 16-byte aligned; for stores, the predicate that
/// the output's are. Alignment is a property of the whole launch, so the branch on it is
/// uniform.
fn vector_access(
    k: &mut Func,
    spec: &KernelSpec,
    a: &Args,
    v: i64,
) -> (Option<(i64, Reg)>, Option<Reg>) {
    let esize_v = spec.input.itemsize() as i64;
    let osize_v = spec.output.itemsize() as i64;
    let vw = 16 / esize_v;
    let vec_in = if spec.contiguous && (esize_v == 8 || esize_v == 4) && v % vw == 0 {
        Some((vw, aligned(k, a.inp, &[a.is[0], a.is[1]], esize_v)))
    } else {
        None
    };
    let vec_out = if spec.contiguous
        && matches!(spec.output, Dtype::F64 | Dtype::F32)
        && (v * osize_v) % 16 == 0
    {
        Some(aligned(k, a.out, &[a.os[0], a.os[1]], osize_v))
    } else {
        None
    };
    (vec_in, vec_out)
}

/// Whether `base` and every row stride in `strides` (in elements of `size` bytes) are multiples
/// of 16 bytes.
fn aligned(k: &mut Func, base: Reg, strides: &[Reg], size: i64) -> Reg {
    let m = k.bin(Bin::And, T::B64, base, Src::I(15));
    let mut p = k.setp(Cmp::Eq, T::B64, m, Src::I(0));
    for &st in strides {
        let bytes = k.bin(Bin::Mul, T::S64, st, Src::I(size));
        let m = k.bin(Bin::And, T::B64, bytes, Src::I(15));
        p = k.setp_comb(Cmp::Eq, T::B64, m, Src::I(0), BoolOp::And, p, false);
    }
    p
}

/// The interior test: every window of this thread's outputs lies inside the image (and its rows
/// lie in one plane, which `y + nrows - 1 < h` implies); with vector loads, the last chunk of
/// each window row too.
fn interior_test(
    k: &mut Func,
    geo: &Geo,
    a: &Args,
    [z, y, x0]: [Reg; 3],
    (v, nr): (i64, i64),
    vec_in: Option<(i64, Reg)>,
) -> Reg {
    let mut inside: Option<Reg> = None;
    let mut and = |k: &mut Func, p: Reg| {
        inside = Some(match inside {
            None => p,
            Some(q) => k.bin(Bin::And, T::Pred, q, p),
        });
    };
    for (ax, c, n) in [(0usize, z, a.d), (1, y, a.h), (2, x0, a.w)] {
        let mut reach_hi = geo.hi[ax]
            + match ax {
                2 => v - 1,
                1 => nr - 1,
                _ => 0,
            };
        if let (2, Some((vw, _))) = (ax, vec_in) {
            // The last vector chunk must end inside the row too.
            reach_hi = ((reach_hi).div_euclid(vw) + 1) * vw - 1;
        }
        if geo.lo[ax] > 0 {
            let p = k.setp(Cmp::Ge, T::S32, c, Src::I(geo.lo[ax]));
            and(k, p);
        }
        let top = k.bin(Bin::Add, T::S32, c, Src::I(reach_hi));
        let p = k.setp(Cmp::Lt, T::S32, top, n);
        and(k, p);
    }
    inside.expect("at least one test")
}

/// Where the interior path of a group reads and writes.
struct Interior {
    /// The input element of the group's first output.
    pin: Reg,
    /// The group's first output element, and the bytes between outputs along the row when the
    /// output is not contiguous.
    pout: Reg,
    ox: Option<Reg>,
    /// The linear index of the first output, for failure records.
    pix0: Reg,
    /// The register window (f64, and float32 where the image's values fit; empty when `large`).
    window: Window,
    window32: Window,
    /// Whether the output's rows are 16-byte aligned (see [`vector_access`]).
    vec_out: Option<Reg>,
}

/// The address of element `(zw, yw, xw)` of an array at `base` with element strides `strides`
/// and elements of `size` bytes, and its byte stride along a row where the array is not
/// contiguous.
fn element_address(
    k: &mut Func,
    (zw, yw, xw): (Reg, Reg, Reg),
    (base, strides, size): (Reg, [Reg; 3], i64),
    contiguous: bool,
) -> (Reg, Option<Reg>) {
    let e = k.bin(Bin::Mul, T::S64, zw, strides[0]);
    let e = k.fma(T::S64, yw, strides[1], e);
    let e = k.fma(T::S64, xw, strides[2], e);
    let e = k.bin(Bin::Mul, T::S64, e, Src::I(size));
    let at = k.bin(Bin::Add, T::S64, base, e);
    let stride = match contiguous {
        true => None,
        false => Some(k.bin(Bin::Mul, T::S64, strides[2], Src::I(size))),
    };
    (at, stride)
}

/// The interior path of a group at `(zw, yw, xw)`: the window loaded once, then each row's
/// outputs computed, stored and their failures recorded.
fn interior(
    k: &mut Func,
    sh: &mut Shared,
    m: &Main,
    (zw, yw, xw): (Reg, Reg, Reg),
    (vec_in, vec_out): (Option<(i64, Reg)>, Option<Reg>),
) -> std::result::Result<(), Restart> {
    let (a, spec) = (&m.a, m.spec);
    let esize = spec.input.itemsize() as i64;
    let osize = spec.output.itemsize() as i64;
    let (pin, sx) = element_address(k, (zw, yw, xw), (a.inp, a.is, esize), spec.contiguous);
    let (window, window32) = if m.large {
        Default::default()
    } else {
        load_window(k, spec, m.geo, a, (pin, sx), (m.v, m.nr), vec_in)
    };
    let (pout, ox) = element_address(k, (zw, yw, xw), (a.out, a.os, osize), spec.contiguous);
    let pix0 = k.fma(T::S64, zw, m.hw, yw);
    let pix0 = k.fma(T::S64, pix0, m.ww, xw);
    let mut hints = median_hints(k, sh, m.geo, spec, (m.v, m.nr), (&window, &window32));
    let at = Interior {
        pin,
        pout,
        ox,
        pix0,
        window,
        window32,
        vec_out,
    };
    for r in 0..m.nr {
        interior_row(k, sh, m, &at, r, &mut hints)?;
    }
    Ok(())
}

/// Row `r` of an interior group: its outputs start `r` output rows down. Each output's body
/// stores its result unless the row is stored by vectors at the end.
fn interior_row(
    k: &mut Func,
    sh: &mut Shared,
    m: &Main,
    at: &Interior,
    r: i64,
    hints: &mut [Option<MedianHint>],
) -> std::result::Result<(), Restart> {
    let (a, spec, geo) = (&m.a, m.spec, m.geo);
    let osize = spec.output.itemsize() as i64;
    let pout_r = if r == 0 {
        at.pout
    } else {
        let step = k.bin(Bin::Mul, T::S64, a.os[1], Src::I(r * osize));
        k.bin(Bin::Add, T::S64, at.pout, step)
    };
    let pix_r = if r == 0 {
        at.pix0
    } else {
        k.fma(T::S64, m.ww, Src::I(r), at.pix0)
    };
    let mut results = Vec::new();
    for vv in 0..m.v {
        let cell = |t: &[i64; 3]| (t[0], t[1] + r, t[2] + vv);
        let taps = if m.large {
            Taps::Memory(image_taps(sh, spec, geo, a, at.pin))
        } else {
            Taps::Regs(geo.taps.iter().map(|t| at.window[&cell(t)]).collect())
        };
        let cols: Vec<[i64; 3]> = geo
            .taps
            .iter()
            .map(|t| [t[0], t[1] + r, t[2] + vv])
            .collect();
        let taps32: Option<Vec<Reg>> = if at.window32.is_empty() {
            None
        } else {
            Some(geo.taps.iter().map(|t| at.window32[&cell(t)]).collect())
        };
        // The body's cold branches read this output's taps from the image (no code until they
        // do), so that the register window dies with the hot code: measured by ptxas, a 7×7
        // disk's `np.max(x) - np.min(x)` on float32 spilled 2064 bytes with the branch reading
        // registers and 28 this way, on uint8 1568 and 0. Images of doubles keep the registers:
        // their window fills the registers either way, and spilled more this way at some sizes.
        let cold = (taps32.is_some() && !m.large)
            .then(|| TapMemory::image(at.pin, element_strides(spec, a), spec.input, None, &cols));
        let ex = exits(k, false);
        let (ok, fail, ret, site) = (ex.ok, ex.fail, ex.ret, ex.site);
        let hint = if r == 0 {
            hints[vv as usize].take()
        } else {
            None
        };
        Body::translate_at(
            sh,
            k,
            (taps, cold),
            Some(&cols),
            taps32,
            hint,
            ex,
            &format!("b{r}_{vv}"),
        )?;
        let next = k.new_label();
        k.place(ok);
        if at.vec_out.is_none() {
            let addr = match at.ox {
                None => Addr::reg(pout_r, vv * osize),
                Some(ox) => {
                    let off = k.bin(Bin::Mul, T::S64, ox, Src::I(vv));
                    Addr::reg(k.bin(Bin::Add, T::S64, pout_r, off), 0)
                }
            };
            elem::store(k, spec.output, addr, ret);
        }
        k.bra(next);
        k.place(fail);
        let pix = k.bin(Bin::Add, T::S64, pix_r, Src::I(vv));
        record_failure(k, a.err, pix, site);
        k.place(next);
        results.push(ret);
    }
    if let Some(vec_ok) = at.vec_out {
        store_row_vectors(k, spec.output, (pout_r, vec_ok), &results);
    }
    Ok(())
}

/// A row's outputs stored by 16-byte stores when `vec_ok` says the rows are aligned, one by one
/// otherwise (a failed output's element is then written with an unspecified value; the call
/// reports the failure).
fn store_row_vectors(k: &mut Func, output: Dtype, (pout_r, vec_ok): (Reg, Reg), results: &[Reg]) {
    let osize = output.itemsize() as i64;
    let (scalar, done) = (k.new_label(), k.new_label());
    k.bra_if(vec_ok, true, scalar);
    elem::store_vectors(k, output, pout_r, results);
    k.bra(done);
    k.place(scalar);
    for (vv, r) in results.iter().enumerate() {
        elem::store(k, output, Addr::reg(pout_r, vv as i64 * osize), *r);
    }
    k.place(done);
}

/// The boundary path: one output per iteration, every coordinate mapped, row by row over the
/// group (a group may run past the last row, or into the next plane).
fn boundary_outputs(k: &mut Func, sh: &mut Shared, m: &Main) -> std::result::Result<(), Restart> {
    let (a, spec, geo) = (&m.a, m.spec, m.geo);
    let osize = spec.output.itemsize() as i64;
    let ri = k.mov(T::S32, Src::I(0));
    let sub_row = k.new_label();
    let next_sub = k.new_label();
    k.place(sub_row);
    let rowi = k.bin(Bin::Add, T::S32, m.row, ri);
    let stop_r = k.setp(Cmp::Ge, T::S32, ri, Src::I(m.nr));
    let stop_r = k.setp_comb(
        Cmp::Ge,
        T::S32,
        rowi,
        m.total_rows,
        BoolOp::Or,
        stop_r,
        false,
    );
    k.bra_if(stop_r, false, m.next_row);
    let (z, y) = plane_and_row(k, spec, a, rowi);
    let (zw, yw) = (wide(k, z), wide(k, y));
    let vi = k.mov(T::S32, Src::I(0));
    let bl = k.new_label();
    k.place(bl);
    let stop_v = k.setp(Cmp::Ge, T::S32, vi, Src::I(m.v));
    let x = k.bin(Bin::Add, T::S32, m.x0, vi);
    let stop = k.setp_comb(Cmp::Ge, T::S32, x, a.w, BoolOp::Or, stop_v, false);
    k.bra_if(stop, false, next_sub);
    let taps = if m.large {
        Taps::Memory(gather_local(k, sh, a, geo, spec, [z, y, x]))
    } else {
        Taps::Regs(gather(k, a, geo, spec, [z, y, x]))
    };
    let xw = wide(k, x);
    let ex = exits(k, false);
    let (ok, fail, ret, site) = (ex.ok, ex.fail, ex.ret, ex.site);
    Body::translate(sh, k, taps, ex, "bb")?;
    let next = k.new_label();
    k.place(ok);
    let o = k.bin(Bin::Mul, T::S64, zw, a.os[0]);
    let o = k.fma(T::S64, yw, a.os[1], o);
    let o = k.fma(T::S64, xw, a.os[2], o);
    let o = k.bin(Bin::Mul, T::S64, o, Src::I(osize));
    let oa = k.bin(Bin::Add, T::S64, a.out, o);
    elem::store(k, spec.output, Addr::reg(oa, 0), ret);
    k.bra(next);
    k.place(fail);
    let pix = k.fma(T::S64, zw, m.hw, yw);
    let pix = k.fma(T::S64, pix, m.ww, xw);
    record_failure(k, a.err, pix, site);
    k.place(next);
    let nv = k.bin(Bin::Add, T::S32, vi, Src::I(1));
    k.set(T::S32, vi, nv);
    k.bra(bl);
    k.place(next_sub);
    let nri = k.bin(Bin::Add, T::S32, ri, Src::I(1));
    k.set(T::S32, ri, nri);
    k.bra(sub_row);
    Ok(())
}
