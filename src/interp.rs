//! The reference interpreter: the executable meaning of the IR.
//!
//! Every backend is tested against it. It walks the structured IR directly, calls the same math and
//! runtime routines as the JIT ([`crate::math`], [`crate::runtime`]), and records failures in the
//! same context, so a filter run here and a filter run natively agree bit for bit.

use crate::ir::eval::{self, Val};
use crate::ir::{network, ArrKind, ArrayOp, Expr, Func, ReduceOp, SortedStat, Stmt, Ty, Var};
use crate::math::{fmax, fmin};
use crate::runtime::{self, Failure, RawContext};
use std::sync::atomic::Ordering;

/// How a block ended.
enum Flow {
    Next,
    Break,
    Continue,
    Return(f64),
    Succeed,
    Fail,
}

/// The arguments of one call, for any [`crate::ir::Sig`].
pub struct Args<'a> {
    /// The buffer, input line or quad's `xx` (empty for a transform).
    pub values: &'a [f64],
    /// A transform's output coordinates (empty otherwise).
    pub coords: &'a [i64],
    /// The output line or input coordinates the function writes (empty for filters).
    pub output: &'a mut [f64],
}

struct Machine<'a> {
    func: &'a Func,
    ctx: &'a RawContext,
    buffer: &'a [f64],
    coords: &'a [i64],
    output: &'a mut [f64],
    vars: Vec<Val>,
    /// Scratch arrays: 8-byte cells, typed by the array declaration.
    scratch: Vec<Vec<u64>>,
    /// Loop back edges left before the next interrupt poll, as in compiled code.
    countdown: u32,
}

/// A run that failed. The error itself is recorded in the context, as compiled code records it, so
/// that the interpreter and the JIT report failures through the same slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failed;

/// Runs `func` on one buffer, as the compiled callback would: `Ok(value)` on success; on failure
/// the error is recorded in `ctx` and `Err(Failed)` returned. Like compiled code, it returns `Err` at
/// once while `ctx` holds an earlier failure.
pub fn run(func: &Func, ctx: &RawContext, buffer: &[f64]) -> Result<f64, Failed> {
    match run_args(
        func,
        ctx,
        Args {
            values: buffer,
            coords: &[],
            output: &mut [],
        },
    )? {
        Some(v) => Ok(v),
        None => Err(Failed),
    }
}

/// Runs `func` with the arguments of any signature: `Ok(Some(v))` for a `Return`, `Ok(None)` for
/// a `Succeed` (the result is in `args.output`).
pub fn run_args(func: &Func, ctx: &RawContext, args: Args<'_>) -> Result<Option<f64>, Failed> {
    // As compiled code: a failed context fails at once (resuming is the caller's decision).
    if ctx.failed.load(Ordering::Acquire) != 0 {
        return Err(Failed);
    }
    let mut m = Machine {
        func,
        ctx,
        buffer: args.values,
        coords: args.coords,
        output: args.output,
        vars: func
            .vars
            .iter()
            .map(|d| match d.ty {
                Ty::F64 => Val::F(0.0),
                Ty::I64 => Val::I(0),
                Ty::Bool => Val::B(false),
            })
            .collect(),
        scratch: vec![Vec::new(); func.arrays.len()],
        countdown: crate::interrupt::POLL_INTERVAL,
    };
    match m.block(&func.body) {
        Flow::Return(v) => Ok(Some(v)),
        Flow::Succeed => Ok(None),
        Flow::Fail => Err(Failed),
        // The lowering ends every body with a failing check, so this is unreachable for valid IR.
        Flow::Next | Flow::Break | Flow::Continue => Err(Failed),
    }
}

impl Machine<'_> {
    fn block(&mut self, stmts: &[Stmt]) -> Flow {
        for s in stmts {
            match self.stmt(s) {
                Flow::Next => {}
                other => return other,
            }
        }
        Flow::Next
    }

    fn fail(&self, site: u32, a: i64, b: i64) -> Flow {
        self.ctx.record(Failure { site, a, b });
        Flow::Fail
    }

    /// Counts a loop's back edge and polls for an interrupt every `POLL_INTERVAL` of them
    /// (`runtime::ndjit_rt_poll`, which records the failure), as compiled code does.
    fn back_edge_interrupted(&mut self) -> bool {
        self.countdown -= 1;
        if self.countdown > 0 {
            return false;
        }
        self.countdown = crate::interrupt::POLL_INTERVAL;
        unsafe { crate::runtime::ndjit_rt_poll(self.ctx) != 0 }
    }

    fn set(&mut self, v: Var, val: Val) {
        self.vars[v.0 as usize] = val;
    }

    fn stmt(&mut self, s: &Stmt) -> Flow {
        match s {
            Stmt::Assign(v, e) => {
                let val = self.eval(e);
                self.set(*v, val);
            }
            Stmt::Store(arr, i, v) => {
                let (i, v) = (self.eval(i).i(), self.eval(v));
                if self.func.arrays[arr.0 as usize].kind == ArrKind::Output {
                    self.output[i as usize] = v.f();
                } else {
                    self.scratch[arr.0 as usize][i as usize] = v.to_bits();
                }
            }
            Stmt::If(c, then, els) => {
                let flow = if self.eval(c).b() {
                    self.block(then)
                } else {
                    self.block(els)
                };
                return flow;
            }
            Stmt::Loop { body, latch } => loop {
                match self.block(body) {
                    Flow::Next | Flow::Continue => {}
                    Flow::Break => break,
                    other => return other,
                }
                match self.block(latch) {
                    Flow::Next => {}
                    Flow::Break => break,
                    other => return other,
                }
                if self.back_edge_interrupted() {
                    return Flow::Fail;
                }
            },
            Stmt::Break => return Flow::Break,
            Stmt::Continue => return Flow::Continue,
            Stmt::Check { cond, err, a, b } => {
                if !self.eval(cond).b() {
                    let (a, b) = (self.eval(a).i(), self.eval(b).i());
                    return self.fail(err.0, a, b);
                }
            }
            Stmt::Return(e) => return Flow::Return(self.eval(e).f()),
            Stmt::Succeed => return Flow::Succeed,
            Stmt::Reduce {
                dst,
                op,
                len,
                index,
                elem,
                on_empty,
            } => {
                let n = self.eval(len).i().max(0);
                if n == 0 && op.needs_nonempty() {
                    let site = on_empty.expect("validated IR: on_empty present").0;
                    return self.fail(site, 0, 0);
                }
                let r = self.reduce(*op, n, *index, elem);
                self.set(*dst, r);
            }
            Stmt::Fill {
                dst,
                len,
                index,
                elem,
                keep: None,
            } if self.func.arrays[dst.0 as usize].kind == ArrKind::Output => {
                let n = self.eval(len).i().max(0);
                for i in 0..n {
                    self.set(*index, Val::I(i));
                    let v = self.eval(elem).f();
                    self.output[i as usize] = v;
                }
            }
            Stmt::Fill {
                dst,
                len,
                index,
                elem,
                keep,
            } => {
                let n = self.eval(len).i().max(0);
                let mut out = std::mem::take(&mut self.scratch[dst.0 as usize]);
                out.clear();
                for i in 0..n {
                    self.set(*index, Val::I(i));
                    if keep.as_ref().is_none_or(|k| self.eval(k).b()) {
                        out.push(self.eval(elem).to_bits());
                    }
                }
                self.scratch[dst.0 as usize] = out;
            }
            Stmt::ArrayOp(ArrayOp::Sort { of_taps }, arr) => {
                let a = &mut self.scratch[arr.0 as usize];
                // `Pass::SortsOfTaps`'s claim, which the GPU trusts (it sorts the taps instead),
                // checked by the reference in debug builds.
                debug_assert!(
                    !of_taps
                        || (a.len() <= self.buffer.len()
                            && a.iter().zip(self.buffer).all(|(v, x)| *v == x.to_bits())),
                    "a sort marked of taps sorts an array that does not hold them"
                );
                // SAFETY: f64 and u64 have the same size and alignment; the slice is ours.
                unsafe { runtime::ndjit_rt_sort(a.as_mut_ptr() as *mut f64, a.len() as i64) };
            }
            Stmt::Sorted { dst, stat, arr, q } => {
                let q = self.eval(q).f();
                let a = &self.scratch[arr.0 as usize];
                let (p, n) = (a.as_ptr() as *const f64, a.len() as i64);
                // SAFETY: as above; the array was sorted by a preceding ArrayOp::Sort.
                let r = unsafe {
                    match stat {
                        SortedStat::Median => runtime::ndjit_rt_median(p, n),
                        SortedStat::Quantile => runtime::ndjit_rt_quantile(p, n, q),
                    }
                };
                self.set(*dst, Val::F(r));
            }
            Stmt::MedianNetwork {
                dst,
                elems,
                fallback,
            } => {
                let mut v: Vec<f64> = elems.iter().map(|e| self.eval(e).f()).collect();
                let sum = network::balanced_sum(0, v.len(), &mut |k| v[k], &mut |a, b| a + b);
                if sum.is_nan() {
                    return self.block(fallback);
                }
                self.set(*dst, Val::F(network::median_by_network(&mut v)));
            }
        }
        Flow::Next
    }

    fn reduce(&mut self, op: ReduceOp, n: i64, index: Var, elem: &Expr) -> Val {
        let at = |m: &mut Self, i: i64| {
            m.set(index, Val::I(i));
            m.eval(elem)
        };
        match op {
            ReduceOp::Sum => {
                let xs: Vec<f64> = (0..n).map(|i| at(self, i).f()).collect();
                Val::F(runtime::pairwise_sum(&xs))
            }
            ReduceOp::SumSeq => Val::F((0..n).fold(0.0, |acc, i| acc + at(self, i).f())),
            ReduceOp::SumInt => {
                Val::I((0..n).fold(0i64, |acc, i| acc.wrapping_add(at(self, i).i())))
            }
            ReduceOp::Prod => Val::F((0..n).fold(1.0, |acc, i| acc * at(self, i).f())),
            ReduceOp::Min | ReduceOp::Max => {
                let mut acc = at(self, 0).f();
                for i in 1..n {
                    let v = at(self, i).f();
                    acc = if op == ReduceOp::Min {
                        fmin(acc, v)
                    } else {
                        fmax(acc, v)
                    };
                }
                Val::F(acc)
            }
            ReduceOp::PyMin | ReduceOp::PyMax => {
                let mut acc = at(self, 0).f();
                for i in 1..n {
                    let v = at(self, i).f();
                    if (op == ReduceOp::PyMin && v < acc) || (op == ReduceOp::PyMax && v > acc) {
                        acc = v;
                    }
                }
                Val::F(acc)
            }
            ReduceOp::ArgMin | ReduceOp::ArgMax => {
                // NumPy: the first NaN wins; otherwise the first extreme value.
                let mut best = at(self, 0).f();
                let mut arg = 0;
                if !best.is_nan() {
                    for i in 1..n {
                        let v = at(self, i).f();
                        if v.is_nan() {
                            arg = i;
                            break;
                        }
                        if (op == ReduceOp::ArgMin && v < best)
                            || (op == ReduceOp::ArgMax && v > best)
                        {
                            best = v;
                            arg = i;
                        }
                    }
                }
                Val::I(arg)
            }
            ReduceOp::Any => Val::B((0..n).any(|i| at(self, i).b())),
            ReduceOp::All => Val::B((0..n).all(|i| at(self, i).b())),
            ReduceOp::Count => Val::I((0..n).filter(|&i| at(self, i).b()).count() as i64),
        }
    }

    fn array_len(&self, a: crate::ir::Arr) -> i64 {
        match self.func.arrays[a.0 as usize].kind {
            ArrKind::Buffer => self.buffer.len() as i64,
            ArrKind::Coords => self.coords.len() as i64,
            ArrKind::Output => self.output.len() as i64,
            // SAFETY: the context's array table has an entry for every bound array of the layout.
            ArrKind::Bound(k) => unsafe { (*self.ctx.arrays.add(k as usize)).len },
            ArrKind::Scratch { .. } => self.scratch[a.0 as usize].len() as i64,
        }
    }

    fn eval(&mut self, e: &Expr) -> Val {
        crate::with_stack(|| self.eval_inner(e))
    }

    fn eval_inner(&mut self, e: &Expr) -> Val {
        match e {
            Expr::F64(v) => Val::F(*v),
            Expr::I64(v) => Val::I(*v),
            Expr::Bool(v) => Val::B(*v),
            Expr::Var(v) => self.vars[v.0 as usize],
            // SAFETY: the layout guarantees one scalar/int per parameter index.
            Expr::Param(k) => Val::F(unsafe { *self.ctx.scalars.add(*k as usize) }),
            Expr::IntParam(k) => Val::I(unsafe { *self.ctx.ints.add(*k as usize) }),
            Expr::Len(a) => Val::I(match self.func.filter_size {
                Some(n) if *a == crate::ir::BUFFER => n as i64,
                _ => self.array_len(*a),
            }),
            Expr::Load(a, i) => {
                let i = self.eval(i).i();
                let len = self.array_len(*a);
                // The IR guarantees the index is in range; a violation is an ndjit bug, and the
                // interpreter, being the debugging engine, says so loudly instead of reading past.
                assert!(
                    (0..len).contains(&i),
                    "IR invariant broken: load index {i} outside 0..{len}"
                );
                let i = i as usize;
                match self.func.arrays[a.0 as usize].kind {
                    ArrKind::Buffer => Val::F(self.buffer[i]),
                    ArrKind::Coords => Val::I(self.coords[i]),
                    ArrKind::Output => Val::F(self.output[i]),
                    ArrKind::Bound(k) => Val::F(unsafe {
                        let r = *self.ctx.arrays.add(k as usize);
                        *r.ptr.add(i)
                    }),
                    ArrKind::Scratch { elem } => {
                        Val::from_bits(elem, self.scratch[a.0 as usize][i])
                    }
                }
            }
            Expr::Unary(op, x) => {
                let x = self.eval(x);
                eval::unary(*op, x)
            }
            Expr::Binary(op, a, b) => {
                let (a, b) = (self.eval(a), self.eval(b));
                eval::binary(*op, a, b)
            }
            Expr::Cmp(op, a, b) => {
                let (a, b) = (self.eval(a), self.eval(b));
                Val::B(eval::cmp(*op, a, b))
            }
            Expr::Select(c, a, b) => {
                let (c, a, b) = (self.eval(c), self.eval(a), self.eval(b));
                if c.b() {
                    a
                } else {
                    b
                }
            }
            Expr::Call(f, args) => {
                let xs: Vec<f64> = args.iter().map(|a| self.eval(a).f()).collect();
                Val::F(eval::call(*f, &xs))
            }
            Expr::Cast(ty, x) => {
                let x = self.eval(x);
                eval::cast(*ty, x)
            }
        }
    }
}
