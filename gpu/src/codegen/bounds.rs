//! Compile-time upper bounds on the lengths of scratch arrays, so that each one gets per-thread
//! storage of a fixed size.
//!
//! A flow-insensitive interval analysis over the integer variables: every assignment widens its
//! variable's interval, `Select` arms are evaluated under the comparison that guards them (which is
//! what bounds slices: `i < 0 ? max(i + len, 0) : min(i, len)`), and the length of a scratch array
//! is bounded by the lengths of every `Fill` into it. Arrays whose length cannot be bounded get a
//! default capacity and a run-time check.

use ndjit::ir::{ArrKind, BinOp, CmpOp, Expr, Func, ReduceOp, Stmt, Ty, UnOp, BUFFER};

const INF: i64 = i64::MAX;
const NINF: i64 = i64::MIN;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Iv {
    lo: i64,
    hi: i64,
}

impl Iv {
    const TOP: Iv = Iv { lo: NINF, hi: INF };
    fn c(v: i64) -> Iv {
        Iv { lo: v, hi: v }
    }
    fn empty(self) -> bool {
        self.lo > self.hi
    }
    fn join(self, o: Iv) -> Iv {
        if self.empty() {
            return o;
        }
        if o.empty() {
            return self;
        }
        Iv {
            lo: self.lo.min(o.lo),
            hi: self.hi.max(o.hi),
        }
    }
}

fn add(a: i64, b: i64) -> i64 {
    if a == NINF || b == NINF {
        if a == INF || b == INF {
            return INF;
        }
        return NINF;
    }
    if a == INF || b == INF {
        return INF;
    }
    a.saturating_add(b)
}

fn neg(a: i64) -> i64 {
    match a {
        NINF => INF,
        INF => NINF,
        v => -v,
    }
}

fn mul_c(a: i64, c: i64) -> i64 {
    if a == INF || a == NINF {
        if c == 0 {
            return 0;
        }
        return if (a == INF) == (c > 0) { INF } else { NINF };
    }
    a.saturating_mul(c)
}

struct Analysis<'a> {
    f: &'a Func,
    n: i64,
    vars: Vec<Iv>,
    caps: Vec<Iv>,
    changed: bool,
}

/// Per array slot: `Some(max length)` for scratch arrays that could be bounded, else `None`.
pub fn capacities(f: &Func) -> Vec<Option<i64>> {
    let n = f.filter_size.map_or(INF, |n| n as i64);
    let mut a = Analysis {
        f,
        n,
        vars: vec![Iv::c(0); f.vars.len()],
        caps: vec![Iv::c(0); f.arrays.len()],
        changed: true,
    };
    let mut rounds = 0;
    while a.changed && rounds < 40 {
        a.changed = false;
        a.block(&f.body);
        rounds += 1;
        if rounds == 12 {
            // Widen whatever still grows (loop counters): one more pass settles the rest.
            let snapshot = (a.vars.clone(), a.caps.clone());
            a.changed = false;
            a.block(&f.body);
            for (v, old) in a.vars.iter_mut().zip(&snapshot.0) {
                if *v != *old {
                    *v = Iv::TOP;
                }
            }
            for (c, old) in a.caps.iter_mut().zip(&snapshot.1) {
                if *c != *old {
                    c.hi = INF;
                }
            }
            a.changed = true;
        }
    }
    f.arrays
        .iter()
        .zip(&a.caps)
        .map(|(d, c)| match d.kind {
            ArrKind::Scratch { .. } if c.hi != INF && !a.changed => Some(c.hi.max(0)),
            _ => None,
        })
        .collect()
}

impl Analysis<'_> {
    fn widen_var(&mut self, v: usize, iv: Iv) {
        let j = self.vars[v].join(iv);
        if j != self.vars[v] {
            self.vars[v] = j;
            self.changed = true;
        }
    }
    fn widen_cap(&mut self, a: usize, hi: i64) {
        let j = self.caps[a].join(Iv {
            lo: 0,
            hi: hi.max(0),
        });
        if j != self.caps[a] {
            self.caps[a] = j;
            self.changed = true;
        }
    }

    fn block(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Assign(v, e) => {
                let iv = self.eval(e, &[]);
                self.widen_var(v.0 as usize, iv);
            }
            Stmt::If(_, t, e) => {
                self.block(t);
                self.block(e);
            }
            Stmt::Loop { body, latch } => {
                self.block(body);
                self.block(latch);
            }
            Stmt::Reduce {
                dst,
                op,
                len,
                index,
                ..
            } => {
                let l = self.eval(len, &[]);
                let hi = l.hi;
                self.widen_var(
                    index.0 as usize,
                    Iv {
                        lo: 0,
                        hi: add(hi, -1).max(0),
                    },
                );
                let r = match op {
                    ReduceOp::Count => Iv {
                        lo: 0,
                        hi: hi.max(0),
                    },
                    ReduceOp::ArgMin | ReduceOp::ArgMax => Iv {
                        lo: 0,
                        hi: add(hi, -1).max(0),
                    },
                    ReduceOp::SumInt => Iv::TOP,
                    _ => Iv { lo: 0, hi: 1 },
                };
                self.widen_var(dst.0 as usize, r);
            }
            Stmt::Fill {
                dst, len, index, ..
            } => {
                let l = self.eval(len, &[]);
                self.widen_var(
                    index.0 as usize,
                    Iv {
                        lo: 0,
                        hi: add(l.hi, -1).max(0),
                    },
                );
                self.widen_cap(dst.0 as usize, l.hi);
            }
            Stmt::Sorted { dst, .. } => self.widen_var(dst.0 as usize, Iv { lo: 0, hi: 1 }),
            Stmt::MedianNetwork { dst, fallback, .. } => {
                self.block(fallback);
                self.widen_var(dst.0 as usize, Iv { lo: 0, hi: 1 });
            }
            Stmt::Succeed
            | Stmt::Store(..)
            | Stmt::Break
            | Stmt::Continue
            | Stmt::Check { .. }
            | Stmt::Return(_)
            | Stmt::ArrayOp(..) => {}
        }
    }

    /// The interval of an integer (or bool) expression, with `refined` overriding variables.
    fn eval(&self, e: &Expr, refined: &[(usize, Iv)]) -> Iv {
        let var = |v: usize| {
            refined
                .iter()
                .rev()
                .find(|(k, _)| *k == v)
                .map(|(_, iv)| *iv)
                .unwrap_or(self.vars[v])
        };
        match e {
            Expr::I64(c) => Iv::c(*c),
            Expr::Bool(b) => Iv::c(*b as i64),
            Expr::Var(v) => match self.f.var_ty(*v) {
                Ty::F64 => Iv::TOP,
                _ => var(v.0 as usize),
            },
            Expr::Len(a) => {
                if *a == BUFFER {
                    return Iv { lo: 0, hi: self.n };
                }
                match self.f.arrays.get(a.0 as usize).map(|d| &d.kind) {
                    Some(ArrKind::Scratch { .. }) => self.caps[a.0 as usize],
                    _ => Iv { lo: 0, hi: INF },
                }
            }
            Expr::Cmp(..)
            | Expr::Unary(
                UnOp::IsNan | UnOp::IsInf | UnOp::IsFinite | UnOp::SignBit | UnOp::Not,
                _,
            ) => Iv { lo: 0, hi: 1 },
            Expr::Cast(Ty::Bool, _) => Iv { lo: 0, hi: 1 },
            Expr::Cast(Ty::I64, x) => match x.ty(self.f) {
                Ty::Bool => Iv { lo: 0, hi: 1 },
                Ty::I64 => self.eval(x, refined),
                Ty::F64 => Iv::TOP,
            },
            Expr::Unary(UnOp::Neg, x) if x.ty(self.f) == Ty::I64 => {
                let i = self.eval(x, refined);
                Iv {
                    lo: neg(i.hi),
                    hi: neg(i.lo),
                }
            }
            Expr::Binary(op, a, b) if a.ty(self.f) != Ty::F64 => {
                let (x, y) = (self.eval(a, refined), self.eval(b, refined));
                if x.empty() || y.empty() {
                    return Iv { lo: 1, hi: 0 };
                }
                match op {
                    BinOp::Add => Iv {
                        lo: add(x.lo, y.lo),
                        hi: add(x.hi, y.hi),
                    },
                    BinOp::Sub => Iv {
                        lo: add(x.lo, neg(y.hi)),
                        hi: add(x.hi, neg(y.lo)),
                    },
                    BinOp::Min | BinOp::PyMin => Iv {
                        lo: x.lo.min(y.lo),
                        hi: x.hi.min(y.hi),
                    },
                    BinOp::Max | BinOp::PyMax => Iv {
                        lo: x.lo.max(y.lo),
                        hi: x.hi.max(y.hi),
                    },
                    BinOp::Mul if y.lo == y.hi => {
                        let (p, q) = (mul_c(x.lo, y.lo), mul_c(x.hi, y.lo));
                        Iv {
                            lo: p.min(q),
                            hi: p.max(q),
                        }
                    }
                    BinOp::Mul if x.lo == x.hi => {
                        let (p, q) = (mul_c(y.lo, x.lo), mul_c(y.hi, x.lo));
                        Iv {
                            lo: p.min(q),
                            hi: p.max(q),
                        }
                    }
                    BinOp::FloorDiv if y.lo == y.hi && y.lo > 0 => {
                        let d = |v: i64| {
                            if v == INF || v == NINF {
                                v
                            } else {
                                v.div_euclid(y.lo)
                            }
                        };
                        Iv {
                            lo: d(x.lo),
                            hi: d(x.hi),
                        }
                    }
                    BinOp::Mod if y.lo == y.hi && y.lo > 0 => Iv {
                        lo: 0,
                        hi: y.lo - 1,
                    },
                    BinOp::And if y.lo == y.hi && y.lo >= 0 => Iv { lo: 0, hi: y.lo },
                    BinOp::And | BinOp::Or | BinOp::Xor if a.ty(self.f) == Ty::Bool => {
                        Iv { lo: 0, hi: 1 }
                    }
                    _ => Iv::TOP,
                }
            }
            Expr::Select(c, a, b) => {
                let (t, f) = (
                    self.refine(c, true, refined),
                    self.refine(c, false, refined),
                );
                let x = match &t {
                    Some(r) => self.eval(a, r),
                    None => Iv { lo: 1, hi: 0 },
                };
                let y = match &f {
                    Some(r) => self.eval(b, r),
                    None => Iv { lo: 1, hi: 0 },
                };
                x.join(y)
            }
            _ => Iv::TOP,
        }
    }

    /// The variable intervals under `c == truth`, or `None` if that cannot hold.
    fn refine(&self, c: &Expr, truth: bool, base: &[(usize, Iv)]) -> Option<Vec<(usize, Iv)>> {
        let mut out = base.to_vec();
        match c {
            Expr::Cmp(op, a, b) if a.ty(self.f) == Ty::I64 && b.ty(self.f) == Ty::I64 => {
                let op = if truth { *op } else { negate(*op) };
                let (v, other, op) = match (&**a, &**b) {
                    (Expr::Var(v), o) => (v.0 as usize, o, op),
                    (o, Expr::Var(v)) => (v.0 as usize, o, flip(op)),
                    _ => return Some(out),
                };
                let o = self.eval(other, base);
                let cur = self.eval(&Expr::Var(ndjit::ir::Var(v as u32)), base);
                let r = match op {
                    CmpOp::Lt => Iv {
                        lo: cur.lo,
                        hi: cur.hi.min(add(o.hi, -1)),
                    },
                    CmpOp::Le => Iv {
                        lo: cur.lo,
                        hi: cur.hi.min(o.hi),
                    },
                    CmpOp::Gt => Iv {
                        lo: cur.lo.max(add(o.lo, 1)),
                        hi: cur.hi,
                    },
                    CmpOp::Ge => Iv {
                        lo: cur.lo.max(o.lo),
                        hi: cur.hi,
                    },
                    CmpOp::Eq => Iv {
                        lo: cur.lo.max(o.lo),
                        hi: cur.hi.min(o.hi),
                    },
                    CmpOp::Ne => cur,
                };
                if r.empty() {
                    return None;
                }
                out.push((v, r));
                Some(out)
            }
            Expr::Binary(BinOp::And, a, b) if truth && a.ty(self.f) == Ty::Bool => {
                let r = self.refine(a, true, base)?;
                self.refine(b, true, &r)
            }
            _ => Some(out),
        }
    }
}

fn negate(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Lt => CmpOp::Ge,
        CmpOp::Le => CmpOp::Gt,
        CmpOp::Gt => CmpOp::Le,
        CmpOp::Ge => CmpOp::Lt,
        CmpOp::Eq => CmpOp::Ne,
        CmpOp::Ne => CmpOp::Eq,
    }
}

fn flip(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::Le => CmpOp::Ge,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::Ge => CmpOp::Le,
        o => o,
    }
}
