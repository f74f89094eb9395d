//! An emulator for [`Module`]s: runs kernels and device functions on the CPU with PTX's semantics.
//!
//! It exists so that the whole backend (stencil addressing, boundary modes, the IR translation and
//! the f64 math routines) can be tested bit for bit on machines without a GPU. Threads run one after
//! another. A kernel with barriers runs block by block, each of its threads up to the next barrier
//! in turn, with the block's shared memory (filled with a junk byte at the start of each block, as
//! the device leaves it undefined); a thread that leaves while others wait at a barrier is an
//! error. Memory is flat byte arrays (global, local and shared); every access is bounds-checked, so
//! an addressing bug is an error here rather than silent corruption.

use super::*;
use std::collections::HashMap;

pub const GLOBAL_BASE: u64 = 0x1_0000_0000;
pub const LOCAL_BASE: u64 = 0x7_0000_0000;
pub const SHARED_BASE: u64 = 0x3_0000_0000;

/// What shared memory holds before a block's threads store to it.
const SHARED_JUNK: u8 = 0xA5;

/// PTX's canonical NaNs (what `min`/`max` return when both operands are NaN).
const CANON_NAN64: u64 = 0x7fff_ffff_ffff_ffff;
const CANON_NAN32: u64 = 0x7fff_ffff;

struct Prep<'m> {
    f: &'m Func,
    labels: HashMap<u32, usize>,
    locals: HashMap<&'m str, u64>,
    local_size: u64,
    /// A kernel's shared arrays: offsets, and the bytes of all.
    shared: HashMap<&'m str, u64>,
    shared_size: u64,
    barriers: bool,
}

/// A launch's grid and block, in blocks and threads.
type Dims = ((u32, u32), (u32, u32));

/// Where a thread's run stopped.
enum Flow {
    /// It returned (these values) or exited.
    Done(Vec<u64>),
    /// At a barrier, the instruction after it next.
    Barrier,
}

#[derive(Clone, Copy, Default)]
struct Thread {
    tid: (u32, u32),
    ntid: (u32, u32),
    ctaid: (u32, u32),
    nctaid: (u32, u32),
}

/// The emulated machine: a module's functions and a global memory.
pub struct Emu<'m> {
    funcs: HashMap<&'m str, Prep<'m>>,
    pub global: Vec<u8>,
    gsyms: HashMap<String, u64>,
    local: Vec<u8>,
    /// The shared memory of the block running, and its arrays' offsets.
    shared: Vec<u8>,
    shared_syms: HashMap<String, u64>,
    /// Instructions executed so far.
    pub steps: u64,
    /// Stop with an error after this many instructions (runaway loops).
    pub step_limit: u64,
}

pub type Result<T> = std::result::Result<T, String>;

impl<'m> Emu<'m> {
    pub fn new(m: &'m Module) -> Emu<'m> {
        let mut e = Emu {
            funcs: HashMap::new(),
            global: Vec::new(),
            gsyms: HashMap::new(),
            local: Vec::new(),
            shared: Vec::new(),
            shared_syms: HashMap::new(),
            steps: 0,
            step_limit: u64::MAX,
        };
        for g in &m.globals {
            let size = (g.t.bits() / 8).max(1) as usize;
            let addr = e.alloc((g.data.len() * size) as u64);
            for (i, v) in g.data.iter().enumerate() {
                let bytes = v.to_le_bytes();
                let at = (addr - GLOBAL_BASE) as usize + i * size;
                e.global[at..at + size].copy_from_slice(&bytes[..size]);
            }
            e.gsyms.insert(g.name.clone(), addr);
        }
        for f in &m.funcs {
            let mut labels = HashMap::new();
            for (pc, i) in f.body.iter().enumerate() {
                if let Ins::Label(l) = i {
                    labels.insert(*l, pc);
                }
            }
            let (locals, local_size) = layout(&f.locals);
            let (shared, shared_size) = layout(&f.shared);
            e.funcs.insert(
                f.name.as_str(),
                Prep {
                    f,
                    labels,
                    locals,
                    local_size,
                    shared,
                    shared_size,
                    barriers: f.body.contains(&Ins::Bar),
                },
            );
        }
        e
    }

    /// Allocates zeroed global memory (16-byte aligned); returns its address.
    pub fn alloc(&mut self, bytes: u64) -> u64 {
        let at = (self.global.len() as u64 + 15) & !15;
        self.global.resize((at + bytes.max(1)) as usize, 0);
        GLOBAL_BASE + at
    }
    pub fn write(&mut self, addr: u64, data: &[u8]) {
        let at = (addr - GLOBAL_BASE) as usize;
        self.global[at..at + data.len()].copy_from_slice(data);
    }
    pub fn read(&self, addr: u64, len: usize) -> &[u8] {
        let at = (addr - GLOBAL_BASE) as usize;
        &self.global[at..at + len]
    }

    /// Calls a `.func` with raw argument bits; returns the raw result bits.
    pub fn call(&mut self, name: &str, args: &[u64]) -> Result<Vec<u64>> {
        self.run(name, args, &[], Thread::default())
    }

    /// Runs a kernel over a 2-d grid of 2-d blocks, thread after thread. `params` are the raw
    /// parameter values in declaration order.
    pub fn launch(
        &mut self,
        name: &str,
        grid: (u32, u32),
        block: (u32, u32),
        params: &[u64],
    ) -> Result<()> {
        let p = self
            .funcs
            .get(name)
            .ok_or_else(|| format!("no function {name}"))?;
        if p.barriers {
            return self.launch_blocks(name, (grid, block), params);
        }
        for by in 0..grid.1 {
            for bx in 0..grid.0 {
                for ty in 0..block.1 {
                    for tx in 0..block.0 {
                        let t = Thread {
                            tid: (tx, ty),
                            ntid: block,
                            ctaid: (bx, by),
                            nctaid: grid,
                        };
                        self.run(name, &[], params, t)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// A kernel with barriers: block by block, each thread run up to its next barrier in turn
    /// until all have left, each with a local frame of its own.
    fn launch_blocks(&mut self, name: &str, (grid, block): Dims, params: &[u64]) -> Result<()> {
        let (f, labels, locals, local_size) = self.prepared(name)?;
        let p = &self.funcs[name];
        let (shared_size, syms) = (p.shared_size, p.shared.clone());
        self.shared_syms = syms.into_iter().map(|(n, o)| (n.to_string(), o)).collect();
        let n = (block.0 * block.1) as usize;
        let base = self.local.len() as u64;
        for (bx, by) in (0..grid.1).flat_map(|by| (0..grid.0).map(move |bx| (bx, by))) {
            self.shared = vec![SHARED_JUNK; shared_size as usize];
            self.local
                .resize(base as usize + n * local_size as usize, 0);
            let mut threads: Vec<(Vec<u64>, usize, bool)> =
                vec![(vec![0u64; f.next_reg as usize], 0, false); n];
            loop {
                let (mut left, mut waiting) = (0, 0);
                for (i, (regs, pc, done)) in threads.iter_mut().enumerate().filter(|t| !t.1 .2) {
                    let th = Thread {
                        tid: (i as u32 % block.0, i as u32 / block.0),
                        ntid: block,
                        ctaid: (bx, by),
                        nctaid: grid,
                    };
                    let frame = base + i as u64 * local_size;
                    match self.exec(f, (labels, locals), frame, regs, params, th, pc)? {
                        Flow::Done(_) => (*done, left) = (true, left + 1),
                        Flow::Barrier => waiting += 1,
                    }
                }
                match (left, waiting) {
                    (_, 0) => break,
                    (0, _) => continue,
                    _ => {
                        return Err(format!(
                            "{name}: {left} threads of block ({bx}, {by}) left while {waiting} wait at a barrier"
                        ))
                    }
                }
            }
        }
        self.local.truncate(base as usize);
        Ok(())
    }

    /// A function's body and prepared tables.
    #[allow(clippy::type_complexity)]
    fn prepared(
        &self,
        name: &str,
    ) -> Result<(
        &'m Func,
        &'m HashMap<u32, usize>,
        &'m HashMap<&'m str, u64>,
        u64,
    )> {
        let p = self
            .funcs
            .get(name)
            .ok_or_else(|| format!("no function {name}"))?;
        let (labels, locals) = (
            &p.labels as *const HashMap<u32, usize>,
            &p.locals as *const HashMap<&str, u64>,
        );
        // SAFETY: the prepared tables live in `self.funcs`, which is filled once, by `new`, and
        // neither modified nor dropped while the emulator runs.
        Ok((p.f, unsafe { &*labels }, unsafe { &*locals }, p.local_size))
    }

    fn run(&mut self, name: &str, args: &[u64], params: &[u64], th: Thread) -> Result<Vec<u64>> {
        let (f, labels, locals, local_size) = self.prepared(name)?;
        let frame = self.local.len() as u64;
        self.local.resize((frame + local_size) as usize, 0);
        let mut regs = vec![0u64; f.next_reg as usize];
        for (r, v) in f.args.iter().zip(args) {
            regs[r.id as usize] = fit(r.cls, *v);
        }
        let result = self.exec(f, (labels, locals), frame, &mut regs, params, th, &mut 0);
        self.local.truncate(frame as usize);
        match result? {
            Flow::Done(v) => Ok(v),
            Flow::Barrier => Err(format!("{name}: a barrier outside a launch by blocks")),
        }
    }

    /// Runs `f` from instruction `*at` until it returns, exits or reaches a barrier (then `*at`
    /// is the instruction after it). Register and memory instructions go to their families'
    /// helpers; control flow stays here, where the program counter is.
    #[allow(clippy::too_many_arguments)]
    fn exec(
        &mut self,
        f: &Func,
        (labels, locals): (&HashMap<u32, usize>, &HashMap<&str, u64>),
        frame: u64,
        regs: &mut [u64],
        params: &[u64],
        th: Thread,
        at: &mut usize,
    ) -> Result<Flow> {
        let mut pc = *at;
        while pc < f.body.len() {
            self.steps += 1;
            if self.steps > self.step_limit {
                return Err(format!("step limit exceeded in {}", f.name));
            }
            let ins = &f.body[pc];
            pc += 1;
            match ins {
                Ins::Label(_) | Ins::Comment(_) | Ins::NoUnroll => {}
                Ins::Mov { .. } | Ins::Bin { .. } | Ins::Un { .. } | Ins::Fma { .. } => {
                    arithmetic(regs, ins)?
                }
                Ins::Guarded { p, neg, ins } => {
                    if (regs[p.id as usize] != 0) ^ neg {
                        arithmetic(regs, ins)?
                    }
                }
                Ins::Cvt { .. }
                | Ins::Setp { .. }
                | Ins::Selp { .. }
                | Ins::Pack { .. }
                | Ins::Unpack { .. } => compare_convert(regs, ins)?,
                Ins::Ld { .. }
                | Ins::LdV { .. }
                | Ins::St { .. }
                | Ins::StV { .. }
                | Ins::Atom { .. } => self.access(f, (locals, frame), regs, params, ins)?,
                Ins::Bra { target, pred } => {
                    let take = match pred {
                        None => true,
                        Some((p, neg)) => (regs[p.id as usize] != 0) ^ neg,
                    };
                    if take {
                        pc = *labels
                            .get(target)
                            .ok_or_else(|| format!("no label {target} in {}", f.name))?;
                    }
                }
                Ins::Call { func, args, rets } => self.call_from(regs, th, func, args, rets)?,
                Ins::Ret(vals) => {
                    return Ok(Flow::Done(
                        vals.iter().map(|r| regs[r.id as usize]).collect(),
                    ))
                }
                Ins::Exit => return Ok(Flow::Done(vec![])),
                Ins::Bar => {
                    *at = pc;
                    return Ok(Flow::Barrier);
                }
                Ins::Sreg { d, s } => regs[d.id as usize] = special(th, *s) as u64,
                Ins::AddrOf { d, sym } => {
                    regs[d.id as usize] = self.symbol_address(locals, frame, sym)?
                }
            }
        }
        if f.entry {
            Ok(Flow::Done(vec![]))
        } else {
            Err(format!("{} ran off its end", f.name))
        }
    }

    /// A load, store or atomic of `f` (run with `params`, its locals at `frame`).
    fn access(
        &mut self,
        f: &Func,
        (locals, frame): (&HashMap<&str, u64>, u64),
        regs: &mut [u64],
        params: &[u64],
        ins: &Ins,
    ) -> Result<()> {
        match ins {
            Ins::Ld { sp, t, d, addr } => {
                let v = if *sp == Space::Param {
                    let Base::Sym(name) = &addr.base else {
                        return Err("ld.param needs a name".into());
                    };
                    let k = f
                        .params
                        .iter()
                        .position(|p| &p.name == name)
                        .ok_or_else(|| format!("no param {name}"))?;
                    *params
                        .get(k)
                        .ok_or_else(|| format!("param {name} not given"))?
                } else {
                    let at = self.address(regs, locals, frame, *sp, addr)?;
                    self.load(*sp, at, *t)?
                };
                let v = extend(*t, v);
                regs[d.id as usize] = fit(d.cls, v);
            }
            Ins::LdV { sp, t, d, addr } => {
                let at = self.address(regs, locals, frame, *sp, addr)?;
                let size = (t.bits() / 8) as u64;
                if at % (size * d.len() as u64) != 0 {
                    return Err(format!("misaligned vector load at {at:#x}"));
                }
                for (k, r) in d.iter().enumerate() {
                    let v = self.load(*sp, at + k as u64 * size, *t)?;
                    regs[r.id as usize] = fit(r.cls, extend(*t, v));
                }
            }
            Ins::StV { sp, t, addr, a } => {
                let at = self.address(regs, locals, frame, *sp, addr)?;
                let size = (t.bits() / 8) as u64;
                if at % (size * a.len() as u64) != 0 {
                    return Err(format!("misaligned vector store at {at:#x}"));
                }
                for (k, r) in a.iter().enumerate() {
                    let v = regs[r.id as usize];
                    self.store(*sp, at + k as u64 * size, *t, v)?;
                }
            }
            Ins::St { sp, t, addr, a } => {
                let at = self.address(regs, locals, frame, *sp, addr)?;
                let v = operand(regs, *a, *t);
                self.store(*sp, at, *t, v)?;
            }
            Ins::Atom { op, t, d, addr, a } => {
                let at = self.address(regs, locals, frame, Space::Global, addr)?;
                let old = self.load(Space::Global, at, *t)?;
                let v = operand(regs, *a, *t);
                let new = match op {
                    AtomOp::Exch => v,
                    AtomOp::Add => old.wrapping_add(v),
                    AtomOp::Min => match t {
                        T::S64 => (old as i64).min(v as i64) as u64,
                        T::S32 => (old as i32).min(v as i32) as u32 as u64,
                        _ => old.min(v),
                    },
                };
                self.store(Space::Global, at, *t, new)?;
                regs[d.id as usize] = fit(d.cls, old);
            }
            _ => unreachable!("not a memory access: {ins:?}"),
        }
        Ok(())
    }

    /// A call of `func` with the values of `args`, its results into `rets`.
    fn call_from(
        &mut self,
        regs: &mut [u64],
        th: Thread,
        func: &str,
        args: &[Reg],
        rets: &[Reg],
    ) -> Result<()> {
        let vals: Vec<u64> = args.iter().map(|r| regs[r.id as usize]).collect();
        let out = self.run(func, &vals, &[], th)?;
        if out.len() != rets.len() {
            return Err(format!(
                "{func} returned {} values, expected {}",
                out.len(),
                rets.len()
            ));
        }
        for (r, v) in rets.iter().zip(out) {
            regs[r.id as usize] = fit(r.cls, v);
        }
        Ok(())
    }

    /// The address `mov.u64 d, sym` gives: a local of the frame at `frame`, a shared array of
    /// the block running, or a global.
    fn symbol_address(&self, locals: &HashMap<&str, u64>, frame: u64, sym: &str) -> Result<u64> {
        Ok(if let Some(off) = locals.get(sym) {
            LOCAL_BASE + frame + off
        } else if let Some(off) = self.shared_syms.get(sym) {
            SHARED_BASE + off
        } else {
            *self
                .gsyms
                .get(sym)
                .ok_or_else(|| format!("no symbol {sym}"))?
        })
    }

    fn address(
        &self,
        regs: &[u64],
        locals: &HashMap<&str, u64>,
        frame: u64,
        sp: Space,
        a: &Addr,
    ) -> Result<u64> {
        let base = match &a.base {
            Base::R(r) => regs[r.id as usize],
            Base::Sym(s) => match sp {
                Space::Local => {
                    LOCAL_BASE
                        + frame
                        + locals
                            .get(s.as_str())
                            .ok_or_else(|| format!("no local {s}"))?
                }
                Space::Shared => {
                    SHARED_BASE
                        + self
                            .shared_syms
                            .get(s)
                            .ok_or_else(|| format!("no shared {s}"))?
                }
                _ => *self.gsyms.get(s).ok_or_else(|| format!("no global {s}"))?,
            },
        };
        Ok(base.wrapping_add(a.off as u64))
    }

    fn mem(&mut self, sp: Space, at: u64, n: usize) -> Result<&mut [u8]> {
        let (buf, base) = match sp {
            Space::Local => (&mut self.local, LOCAL_BASE),
            Space::Shared => (&mut self.shared, SHARED_BASE),
            _ => (&mut self.global, GLOBAL_BASE),
        };
        let i = at.wrapping_sub(base) as usize;
        if at < base || i + n > buf.len() {
            return Err(format!(
                "{sp:?} access of {n} bytes at {at:#x} is out of bounds"
            ));
        }
        if !at.is_multiple_of(n as u64) {
            return Err(format!("misaligned {sp:?} access of {n} bytes at {at:#x}"));
        }
        Ok(&mut buf[i..i + n])
    }

    fn load(&mut self, sp: Space, at: u64, t: T) -> Result<u64> {
        let n = (t.bits() / 8).max(1) as usize;
        let m = self.mem(sp, at, n)?;
        let mut b = [0u8; 8];
        b[..n].copy_from_slice(m);
        Ok(u64::from_le_bytes(b))
    }

    fn store(&mut self, sp: Space, at: u64, t: T, v: u64) -> Result<()> {
        let n = (t.bits() / 8).max(1) as usize;
        let m = self.mem(sp, at, n)?;
        m.copy_from_slice(&v.to_le_bytes()[..n]);
        Ok(())
    }
}

/// A value as a register of class `c` holds it.
/// The value of operand `s` read as type `t`: a register's bits, or an immediate in `t`'s
/// representation (double immediates narrowed to float32 for `.f32` instructions).
fn operand(regs: &[u64], s: Src, t: T) -> u64 {
    match s {
        Src::R(r) => regs[r.id as usize],
        Src::D(b) => match t {
            T::F32 => (f64::from_bits(b) as f32).to_bits() as u64,
            _ => b,
        },
        Src::S(b) => b as u64,
        Src::I(v) => match t {
            T::F64 => (v as f64).to_bits(),
            T::F32 => (v as f32).to_bits() as u64,
            _ => v as u64,
        },
    }
}

/// A special register's value for thread `th`.
fn special(th: Thread, s: Special) -> u32 {
    match s {
        Special::TidX => th.tid.0,
        Special::TidY => th.tid.1,
        Special::NtidX => th.ntid.0,
        Special::NtidY => th.ntid.1,
        Special::CtaidX => th.ctaid.0,
        Special::CtaidY => th.ctaid.1,
        Special::NctaidX => th.nctaid.0,
        Special::NctaidY => th.nctaid.1,
    }
}

/// Moves, binary and unary operations and multiply-adds on registers.
fn arithmetic(regs: &mut [u64], ins: &Ins) -> Result<()> {
    match ins {
        Ins::Mov { t, d, a } => {
            let v = operand(regs, *a, *t);
            regs[d.id as usize] = fit(d.cls, if *t == T::Pred { (v != 0) as u64 } else { v });
        }
        Ins::Bin { op, t, d, a, b } => {
            // Shift amounts are `.u32` whatever the shifted type.
            let bt = if matches!(op, Bin::Shl | Bin::Shr) {
                T::U32
            } else {
                *t
            };
            let (x, y) = (operand(regs, *a, *t), operand(regs, *b, bt));
            regs[d.id as usize] = fit(d.cls, bin(*op, *t, x, y)?);
        }
        Ins::Un { op, t, d, a } => {
            let x = operand(regs, *a, *t);
            regs[d.id as usize] = fit(d.cls, un(*op, *t, x));
        }
        Ins::Fma { t, d, a, b, c } => {
            let (x, y, z) = (
                operand(regs, *a, *t),
                operand(regs, *b, *t),
                operand(regs, *c, *t),
            );
            let v = match t {
                T::F64 => f64::from_bits(x)
                    .mul_add(f64::from_bits(y), f64::from_bits(z))
                    .to_bits(),
                T::F32 => (f32::from_bits(x as u32)
                    .mul_add(f32::from_bits(y as u32), f32::from_bits(z as u32)))
                .to_bits() as u64,
                _ => x.wrapping_mul(y).wrapping_add(z),
            };
            regs[d.id as usize] = fit(d.cls, v);
        }
        _ => unreachable!("not arithmetic: {ins:?}"),
    }
    Ok(())
}

/// Conversions, comparisons (optionally combined with a predicate), selects, and 64-bit
/// registers packed from and unpacked to halves.
fn compare_convert(regs: &mut [u64], ins: &Ins) -> Result<()> {
    match ins {
        Ins::Cvt { rnd, dt, st, d, a } => {
            let x = operand(regs, *a, *st);
            regs[d.id as usize] = fit(d.cls, cvt(*rnd, *dt, *st, x)?);
        }
        Ins::Setp {
            cmp,
            t,
            d,
            a,
            b,
            comb,
        } => {
            let (x, y) = (operand(regs, *a, *t), operand(regs, *b, *t));
            let mut p = compare(*cmp, *t, x, y);
            if let Some((bop, c, neg)) = comb {
                let c = (regs[c.id as usize] != 0) ^ neg;
                p = match bop {
                    BoolOp::And => p && c,
                    BoolOp::Or => p || c,
                    BoolOp::Xor => p ^ c,
                };
            }
            regs[d.id as usize] = p as u64;
        }
        Ins::Selp { t, d, a, b, p } => {
            let v = if regs[p.id as usize] != 0 {
                operand(regs, *a, *t)
            } else {
                operand(regs, *b, *t)
            };
            regs[d.id as usize] = fit(d.cls, v);
        }
        Ins::Pack { d, lo, hi } => {
            let (l, h) = (
                operand(regs, *lo, T::B32) & 0xffff_ffff,
                operand(regs, *hi, T::B32) & 0xffff_ffff,
            );
            regs[d.id as usize] = l | (h << 32);
        }
        Ins::Unpack { lo, hi, a } => {
            let v = regs[a.id as usize];
            regs[lo.id as usize] = v & 0xffff_ffff;
            regs[hi.id as usize] = v >> 32;
        }
        _ => unreachable!("not a comparison or conversion: {ins:?}"),
    }
    Ok(())
}

fn fit(c: Cls, v: u64) -> u64 {
    match c {
        Cls::Pred => (v != 0) as u64,
        Cls::B32 | Cls::F32 => v & 0xffff_ffff,
        _ => v,
    }
}

fn mask(v: u64, bits: u32) -> u64 {
    if bits >= 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    }
}

/// Sign- or zero-extends the low `t.bits()` of `v` to 64 bits, as PTX does for sub-word loads and
/// signed operands.
fn extend(t: T, v: u64) -> u64 {
    let b = t.bits();
    if b >= 64 || t == T::Pred {
        return v;
    }
    if t.is_signed() {
        let sh = 64 - b;
        (((v << sh) as i64) >> sh) as u64
    } else {
        mask(v, b)
    }
}

fn sval(t: T, v: u64) -> i64 {
    extend(t, v) as i64 // sign-extended for signed types, zero-extended otherwise
}

fn f64_min_max(op: Bin, x: f64, y: f64) -> u64 {
    match (x.is_nan(), y.is_nan()) {
        (true, true) => CANON_NAN64,
        (true, false) => y.to_bits(),
        (false, true) => x.to_bits(),
        _ => {
            if x == y {
                // -0.0 below +0.0 (IEEE 754-2019 minimumNumber/maximumNumber).
                if op == Bin::Min {
                    x.to_bits() | y.to_bits()
                } else {
                    x.to_bits() & y.to_bits()
                }
            } else if (x < y) == (op == Bin::Min) {
                x.to_bits()
            } else {
                y.to_bits()
            }
        }
    }
}

fn f32_min_max(op: Bin, x: f32, y: f32) -> u64 {
    match (x.is_nan(), y.is_nan()) {
        (true, true) => CANON_NAN32,
        (true, false) => y.to_bits() as u64,
        (false, true) => x.to_bits() as u64,
        _ => {
            if x == y {
                (if op == Bin::Min {
                    x.to_bits() | y.to_bits()
                } else {
                    x.to_bits() & y.to_bits()
                }) as u64
            } else if (x < y) == (op == Bin::Min) {
                x.to_bits() as u64
            } else {
                y.to_bits() as u64
            }
        }
    }
}

fn bin(op: Bin, t: T, x: u64, y: u64) -> Result<u64> {
    if t == T::F64 {
        let (a, b) = (f64::from_bits(x), f64::from_bits(y));
        return Ok(match op {
            Bin::Add => (a + b).to_bits(),
            Bin::Sub => (a - b).to_bits(),
            Bin::Mul => (a * b).to_bits(),
            Bin::Div => (a / b).to_bits(),
            Bin::Min | Bin::Max => f64_min_max(op, a, b),
            _ => return Err(format!("{op:?} on f64")),
        });
    }
    if t == T::F32 {
        let (a, b) = (f32::from_bits(x as u32), f32::from_bits(y as u32));
        return Ok(match op {
            Bin::Add => (a + b).to_bits() as u64,
            Bin::Sub => (a - b).to_bits() as u64,
            Bin::Mul => (a * b).to_bits() as u64,
            Bin::Div => (a / b).to_bits() as u64,
            Bin::Min | Bin::Max => f32_min_max(op, a, b),
            Bin::MinNan | Bin::MaxNan if a.is_nan() || b.is_nan() => CANON_NAN32,
            Bin::MinNan => f32_min_max(Bin::Min, a, b),
            Bin::MaxNan => f32_min_max(Bin::Max, a, b),
            _ => return Err(format!("{op:?} on f32")),
        });
    }
    if matches!(t, T::U16x2 | T::S16x2) {
        return lanes16(op, t, x, y);
    }
    if t == T::Pred {
        let (a, b) = (x != 0, y != 0);
        return Ok(match op {
            Bin::And => a & b,
            Bin::Or => a | b,
            Bin::Xor => a ^ b,
            _ => return Err(format!("{op:?} on pred")),
        } as u64);
    }
    let bits = t.bits();
    let signed = t.is_signed();
    let (sx, sy) = (sval(t, x), sval(t, y));
    let (ux, uy) = (mask(x, bits), mask(y, bits));
    let r: u64 = match op {
        Bin::Add => ux.wrapping_add(uy),
        Bin::Sub => ux.wrapping_sub(uy),
        Bin::Mul => ux.wrapping_mul(uy),
        Bin::MulHi => {
            if signed {
                ((sx as i128 * sy as i128) >> bits) as u64
            } else {
                ((ux as u128 * uy as u128) >> bits) as u64
            }
        }
        Bin::Div | Bin::Rem => {
            if uy == 0 {
                return Err("integer division by zero".into());
            }
            if signed {
                if op == Bin::Div {
                    sx.wrapping_div(sy) as u64
                } else {
                    sx.wrapping_rem(sy) as u64
                }
            } else if op == Bin::Div {
                ux / uy
            } else {
                ux % uy
            }
        }
        Bin::Min => {
            if signed {
                sx.min(sy) as u64
            } else {
                ux.min(uy)
            }
        }
        Bin::Max => {
            if signed {
                sx.max(sy) as u64
            } else {
                ux.max(uy)
            }
        }
        Bin::And => ux & uy,
        Bin::Or => ux | uy,
        Bin::Xor => ux ^ uy,
        Bin::Shl => {
            let n = (y & 0xffff_ffff) as u32;
            if n >= bits {
                0
            } else {
                ux << n
            }
        }
        Bin::Shr => {
            let n = ((y & 0xffff_ffff) as u32).min(bits);
            if signed {
                if n >= bits {
                    (sx >> (bits - 1).min(63)) as u64
                } else {
                    (sx >> n) as u64
                }
            } else if n >= bits {
                0
            } else {
                ux >> n
            }
        }
        Bin::MinNan | Bin::MaxNan => return Err(format!("{op:?} on {t:?} (f32 only)")),
    };
    Ok(mask(r, bits))
}

/// `min`/`max` of two 16-bit lanes, each on its own.
fn lanes16(op: Bin, t: T, x: u64, y: u64) -> Result<u64> {
    let lane = |v: u64, i: u32| (v >> (16 * i)) & 0xffff;
    let mut r = 0;
    for i in 0..2 {
        let (a, b) = (lane(x, i), lane(y, i));
        let a_first = if t == T::S16x2 {
            (a as u16 as i16) < (b as u16 as i16)
        } else {
            a < b
        };
        let pick = match op {
            Bin::Min => {
                if a_first {
                    a
                } else {
                    b
                }
            }
            Bin::Max => {
                if a_first {
                    b
                } else {
                    a
                }
            }
            _ => return Err(format!("{op:?} on {t:?}")),
        };
        r |= pick << (16 * i);
    }
    Ok(r)
}

fn un(op: Un, t: T, x: u64) -> u64 {
    match (op, t) {
        (Un::Neg, T::F64) => x ^ (1 << 63),
        (Un::Abs, T::F64) => x & !(1 << 63),
        (Un::Neg, T::F32) => (x ^ (1 << 31)) & 0xffff_ffff,
        (Un::Abs, T::F32) => x & 0x7fff_ffff,
        (Un::Sqrt, T::F64) => f64::from_bits(x).sqrt().to_bits(),
        (Un::Sqrt, T::F32) => f32::from_bits(x as u32).sqrt().to_bits() as u64,
        (Un::Not, T::Pred) => (x == 0) as u64,
        (Un::Not, t) => mask(!x, t.bits()),
        (Un::Neg, t) => mask((sval(t, x)).wrapping_neg() as u64, t.bits()),
        (Un::Abs, t) => mask((sval(t, x)).wrapping_abs() as u64, t.bits()),
        (Un::Clz, t) => {
            let b = t.bits();
            (mask(x, b).leading_zeros() - (64 - b)) as u64
        }
        (Un::Sqrt, _) => x,
    }
}

fn round(r: Rnd, v: f64) -> f64 {
    match r {
        Rnd::Rni => v.round_ties_even(),
        Rnd::Rzi => v.trunc(),
        Rnd::Rmi => v.floor(),
        Rnd::Rpi => v.ceil(),
        Rnd::Rn => v,
    }
}

fn cvt(rnd: Option<Rnd>, dt: T, st: T, x: u64) -> Result<u64> {
    // Source value as f64 when the source is a float.
    let fsrc = match st {
        T::F64 => Some(f64::from_bits(x)),
        T::F32 => Some(f32::from_bits(x as u32) as f64),
        _ => None,
    };
    match (dt, fsrc) {
        (T::F64, Some(v)) => Ok(match (st, rnd) {
            (T::F64, Some(r)) => round(r, v).to_bits(),
            _ => v.to_bits(),
        }),
        (T::F32, Some(v)) => {
            if st == T::F32 {
                let v = match rnd {
                    Some(r) => round(r, v),
                    None => v,
                };
                return Ok((v as f32).to_bits() as u64);
            }
            // f64 -> f32, round to nearest even.
            Ok((v as f32).to_bits() as u64)
        }
        (_, Some(v)) => {
            // Float to integer: round, then saturate; NaN gives 0.
            let v = round(rnd.unwrap_or(Rnd::Rzi), v);
            let bits = dt.bits();
            // As the hardware does (seen on sm_90): NaN gives the most negative value of a signed
            // type, 0 for an unsigned one; other values saturate.
            let r = if v.is_nan() {
                if dt.is_signed() {
                    1u64 << (bits - 1)
                } else {
                    0
                }
            } else if dt.is_signed() {
                let (lo, hi) = (
                    -(2f64.powi(bits as i32 - 1)),
                    2f64.powi(bits as i32 - 1) - 1.0,
                );
                let c = v.clamp(lo, hi);
                (c as i64) as u64
            } else {
                let hi = if bits == 64 {
                    u64::MAX as f64
                } else {
                    ((1u64 << bits) - 1) as f64
                };
                if v <= 0.0 {
                    0
                } else if v >= hi {
                    if bits == 64 {
                        u64::MAX
                    } else {
                        (1u64 << bits) - 1
                    }
                } else {
                    v as u64
                }
            };
            Ok(mask(r, bits))
        }
        (T::F64, None) => Ok(if st.is_signed() {
            (sval(st, x) as f64).to_bits()
        } else {
            (mask(x, st.bits()) as f64).to_bits()
        }),
        (T::F32, None) => Ok(if st.is_signed() {
            (sval(st, x) as f32).to_bits() as u64
        } else {
            (mask(x, st.bits()) as f32).to_bits() as u64
        }),
        (_, None) => {
            // Integer to integer: extend the source by its signedness, truncate to the destination.
            let v = extend(st, x);
            Ok(mask(v, dt.bits()))
        }
    }
}

fn compare(c: Cmp, t: T, x: u64, y: u64) -> bool {
    if t.is_float() {
        let (a, b) = if t == T::F64 {
            (f64::from_bits(x), f64::from_bits(y))
        } else {
            (
                f32::from_bits(x as u32) as f64,
                f32::from_bits(y as u32) as f64,
            )
        };
        let un = a.is_nan() || b.is_nan();
        return match c {
            Cmp::Eq => a == b,
            Cmp::Ne => !un && a != b,
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
            Cmp::Equ => un || a == b,
            Cmp::Neu => un || a != b,
            Cmp::Ltu => un || a < b,
            Cmp::Leu => un || a <= b,
            Cmp::Gtu => un || a > b,
            Cmp::Geu => un || a >= b,
            Cmp::Num => !un,
            Cmp::Nan => un,
        };
    }
    let bits = t.bits();
    let ord = if t.is_signed() {
        sval(t, x).cmp(&sval(t, y))
    } else {
        mask(x, bits).cmp(&mask(y, bits))
    };
    use std::cmp::Ordering::*;
    match c {
        Cmp::Eq => ord == Equal,
        Cmp::Ne => ord != Equal,
        Cmp::Lt => ord == Less,
        Cmp::Le => ord != Greater,
        Cmp::Gt => ord == Greater,
        Cmp::Ge => ord != Less,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel whose threads each store their index to shared memory, wait at a barrier and
    /// read their neighbour's; with `leave` thread 0 exits before the barrier.
    fn neighbours(leave: bool) -> Module {
        let mut m = Module::new((7, 8), 90);
        let mut k = Func::new_entry(
            "k",
            vec![Param {
                name: "out".into(),
                t: T::U64,
            }],
        );
        k.shared("s", 4 * 8);
        let out = k.ld(Space::Param, T::U64, Addr::sym("out", 0));
        let tid = k.sreg(Special::TidX);
        let bid = k.sreg(Special::CtaidX);
        if leave {
            let (stay, first) = (k.new_label(), k.setp(Cmp::Eq, T::U32, tid, Src::I(0)));
            k.bra_if(first, true, stay);
            k.push(Ins::Exit);
            k.place(stay);
        }
        let s = k.addr_of("s");
        let at = |k: &mut Func, i: Reg| {
            let w = k.cvt(None, T::U64, T::U32, i);
            k.fma(T::U64, w, Src::I(4), s)
        };
        let mine = at(&mut k, tid);
        k.st(Space::Shared, T::U32, Addr::reg(mine, 0), tid);
        k.push(Ins::Bar);
        let next = k.bin(Bin::Add, T::U32, tid, Src::I(1));
        let next = k.bin(Bin::Rem, T::U32, next, Src::I(8));
        let theirs = at(&mut k, next);
        let got = k.ld(Space::Shared, T::U32, Addr::reg(theirs, 0));
        let i = k.fma(T::U32, bid, Src::I(8), tid);
        let i = k.cvt(None, T::U64, T::U32, i);
        let dst = k.fma(T::U64, i, Src::I(4), out);
        k.st(Space::Global, T::U32, Addr::reg(dst, 0), got);
        k.push(Ins::Exit);
        m.funcs.push(k);
        m
    }

    #[test]
    fn a_barrier_lets_each_thread_read_what_the_others_stored_before_it() {
        let m = neighbours(false);
        let mut emu = Emu::new(&m);
        let out = emu.alloc(4 * 16);
        emu.launch("k", (2, 1), (8, 1), &[out]).unwrap();
        let got: Vec<u32> = emu
            .read(out, 64)
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let want: Vec<u32> = (0..16).map(|i| (i % 8 + 1) % 8).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_thread_leaving_while_others_wait_at_a_barrier_is_an_error() {
        let m = neighbours(true);
        let mut emu = Emu::new(&m);
        let out = emu.alloc(4 * 8);
        let e = emu.launch("k", (1, 1), (8, 1), &[out]).unwrap_err();
        assert!(
            e.contains("1 threads of block (0, 0) left while 7 wait"),
            "{e}"
        );
    }

    /// The PTX ISA's definitions: `min.NaN`/`max.NaN` give the canonical NaN where either
    /// operand is NaN (plain `min` the other operand); 16-bit lanes compare on their own, signed
    /// or not.
    #[test]
    fn nan_minmax_and_16_bit_lanes_follow_the_isa() {
        let f = |v: f32| v.to_bits() as u64;
        let nan = f32::from_bits(0x7fc0_0001);
        assert_eq!(bin(Bin::MinNan, T::F32, f(nan), f(1.0)), Ok(CANON_NAN32));
        assert_eq!(bin(Bin::MaxNan, T::F32, f(1.0), f(nan)), Ok(CANON_NAN32));
        assert_eq!(bin(Bin::Min, T::F32, f(nan), f(1.0)), Ok(f(1.0)));
        assert_eq!(bin(Bin::MinNan, T::F32, f(2.0), f(-1.0)), Ok(f(-1.0)));
        assert_eq!(bin(Bin::MaxNan, T::F32, f(-0.0), f(0.0)), Ok(f(0.0)));
        assert!(bin(Bin::MinNan, T::F64, 0, 0).is_err());
        let (a, b) = (0x8000_7fff, 0x0001_0001);
        assert_eq!(bin(Bin::Min, T::S16x2, a, b), Ok(0x8000_0001));
        assert_eq!(bin(Bin::Max, T::S16x2, a, b), Ok(0x0001_7fff));
        assert_eq!(bin(Bin::Min, T::U16x2, a, b), Ok(0x0001_0001));
        assert_eq!(bin(Bin::Max, T::U16x2, a, b), Ok(0x8000_7fff));
        assert!(bin(Bin::Add, T::U16x2, a, b).is_err());
    }
}
