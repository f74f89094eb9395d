//! Python numbers versus NumPy scalars.
//!
//! Inside a callback, buffer elements and NumPy results are `np.float64`/`np.int64`, for which
//! `1.0 / 0` is `inf` (with a warning); but plain Python numbers (literals, `len()`, loop counters,
//! `float()`, `math.*` results) raise `ZeroDivisionError`. A loop such as
//! `total = 0.0; n = 0; for v in x: ...; return total / n` raises under scipy exactly when no element
//! was added, because `total` is then still a Python float. To match, each scalar's provenance is
//! known statically where possible; a variable assigned both kinds gets a boolean shadow variable
//! that records, at run time, whether it currently holds a Python number.

use super::value::{ArrayVal, Value};
use super::Translator;
use crate::bind::{Origin, Slot};
use crate::error::{ErrorKind, Span};
use crate::ir::{ArrKind, BinOp, Expr, Stmt, Ty, UnOp, Var};

/// Whether a scalar is a plain Python number.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Prov {
    Py,
    Np,
    /// Known at run time: the expression is true for a Python number.
    Dyn(Expr),
}

/// What the assignments to a name have stored so far (kept across type-inference passes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ProvHint {
    Py,
    Np,
    Mixed,
}

impl Prov {
    fn hint(&self) -> ProvHint {
        match self {
            Prov::Py => ProvHint::Py,
            Prov::Np => ProvHint::Np,
            Prov::Dyn(_) => ProvHint::Mixed,
        }
    }
    /// The run-time flag "is a Python number".
    pub(crate) fn flag(&self) -> Expr {
        match self {
            Prov::Py => Expr::Bool(true),
            Prov::Np => Expr::Bool(false),
            Prov::Dyn(e) => e.clone(),
        }
    }
    /// The kind of item `i` (an i64 expression) of a sequence whose items have `provs`: known
    /// when they all agree, else chosen at run time by the index.
    pub(crate) fn at(provs: &[Prov], i: &Expr) -> Prov {
        match provs.first() {
            Some(first) if provs.iter().all(|p| p == first) => first.clone(),
            _ => {
                let mut flag = Expr::Bool(false);
                for (k, p) in provs.iter().enumerate().rev() {
                    let here = Expr::Cmp(
                        crate::ir::CmpOp::Eq,
                        i.clone().boxed(),
                        Expr::I64(k as i64).boxed(),
                    );
                    flag = Expr::Select(here.boxed(), p.flag().boxed(), flag.boxed());
                }
                Prov::Dyn(flag)
            }
        }
    }

    /// Both operands Python numbers (the only case in which Python's own arithmetic runs).
    pub(crate) fn both(a: Prov, b: Prov) -> Prov {
        match (a, b) {
            (Prov::Np, _) | (_, Prov::Np) => Prov::Np,
            (Prov::Py, Prov::Py) => Prov::Py,
            (a, b) => Prov::Dyn(Expr::Binary(BinOp::And, a.flag().boxed(), b.flag().boxed())),
        }
    }
}

impl Translator<'_> {
    /// The provenance of a lowered scalar expression. When unsure it answers NumPy, whose
    /// arithmetic never raises: a wrong guess can only miss an error, never invent one.
    pub(crate) fn prov(&self, e: &Expr) -> Prov {
        match e {
            Expr::F64(_) | Expr::I64(_) | Expr::Bool(_) | Expr::Len(_) => Prov::Py,
            // Bound numbers: Python's, or NumPy scalars (`np.float64`, `np.int64`).
            Expr::Param(k) | Expr::IntParam(k) => {
                let numpy = match e {
                    Expr::Param(_) => Slot::Float(*k, Origin::NumPy),
                    _ => Slot::Int(*k, Origin::NumPy),
                };
                if self.layout.has(numpy) {
                    Prov::Np
                } else {
                    Prov::Py
                }
            }
            // A transform's coordinates are a tuple of Python ints; array elements are NumPy scalars.
            Expr::Load(a, _)
                if self.func.arrays[a.0 as usize].kind == crate::ir::ArrKind::Coords =>
            {
                Prov::Py
            }
            Expr::Load(..) | Expr::Call(..) => Prov::Np,
            Expr::Var(v) => self.var_prov.get(v).cloned().unwrap_or(Prov::Np),
            Expr::Unary(UnOp::Neg | UnOp::Abs | UnOp::Not | UnOp::BitNot, x) | Expr::Cast(_, x) => {
                self.prov(x)
            }
            Expr::Unary(..) => Prov::Np,
            // Comparing NumPy scalars gives a np.bool_ (`1.0 / (x[0] > 0)` is inf, not an error).
            Expr::Binary(_, a, b) | Expr::Cmp(_, a, b) => Prov::both(self.prov(a), self.prov(b)),
            Expr::Select(c, a, b) => match (self.prov(a), self.prov(b)) {
                (pa, pb) if pa == pb => pa,
                (pa, pb) => Prov::Dyn(Expr::Select(
                    c.clone(),
                    pa.flag().boxed(),
                    pb.flag().boxed(),
                )),
            },
        }
    }

    /// Gives a scalar result a known provenance (e.g. `np.sqrt(2.0)` is NumPy, `math.sqrt(x[0])`
    /// is Python), through a temporary when its expression says otherwise.
    pub(crate) fn with_prov(&mut self, e: Expr, ty: Ty, p: Prov) -> Expr {
        if self.prov(&e) == p || self.in_elementwise > 0 {
            return e;
        }
        let holds_int = self.int_flag(&e);
        let t = self.temp(ty);
        self.emit(Stmt::Assign(t, e));
        self.var_prov.insert(t, p);
        self.keep_flag(t, holds_int);
        Expr::Var(t)
    }

    /// The type of a value that is one of two (`a or b`, `a if c else b`, Python's `max(a, b)`).
    /// A bool joined with a number takes that number's type, and so would compute as one
    /// (NumPy's `b + b` is an or, `-b` raises; NumPy's functions keep a Python bool a bool):
    /// refused (see [`Self::refuse_bool_join`]).
    pub(crate) fn joined_type(&mut self, ta: Ty, tb: Ty, span: Span) -> Ty {
        let ty = ta.max(tb);
        if ty != Ty::Bool && (ta == Ty::Bool || tb == Ty::Bool) {
            self.refuse_bool_join(span);
        }
        ty
    }

    /// Whether a scalar of type `ty` may be a NumPy bool (its provenance not surely Python's).
    pub(crate) fn is_numpy_bool(&self, e: &Expr, ty: Ty) -> bool {
        ty == Ty::Bool && self.prov(e) != Prov::Py
    }

    /// Refuses a bool stored where a number is too (a choice, a variable; a NumPy bool in a
    /// sequence): one IR type holds both, so the bool would compute as a number.
    pub(crate) fn refuse_bool_join(&mut self, span: Span) {
        let refusal = self
            .err(
                ErrorKind::Unsupported,
                span,
                "a value that is either a bool or a number: bools compute otherwise (NumPy's \
                 `b + b` is an or, `-b` raises; `np.add(True, True)` is True)",
            )
            .hint("convert the bool: int(b) or float(b)");
        self.refuse_by_type(refusal, ());
    }

    /// A value handed to a NumPy function: NumPy converts a Python number to a NumPy scalar
    /// (`np.float64`, `np.int64`, `np.bool_`) before it computes, so `np.divide(1.0, 0.0)` is
    /// `inf`, `np.multiply(2**62, 4)` wraps and `np.add(True, True)` is `True`, where the
    /// operators of the same Python numbers raise or give 2.
    pub(crate) fn as_numpy(&mut self, v: Value) -> Value {
        match v {
            Value::Scalar(e, ty) => Value::Scalar(self.with_prov(e, ty, Prov::Np), ty),
            v => v,
        }
    }

    /// Element `i` of an array value, as a NumPy scalar whatever expression computes it: the
    /// `0.1` of `np.where(c, x, 0.1)` is stored into a float64 array and reads back as
    /// `np.float64` (it counted as a Python float, and a division by it raised).
    /// (A transform's coordinates are a tuple of Python ints, and keep that kind.)
    pub(crate) fn element(&mut self, arr: &ArrayVal, i: Expr) -> Expr {
        let e = arr.at(i);
        if self.is_coords(arr) {
            return e;
        }
        self.with_prov(e, arr.ty, Prov::Np)
    }

    /// Item `i` of a Python list of `kind` (Python numbers or NumPy scalars, not mixed).
    pub(crate) fn list_item(&mut self, list: &ArrayVal, kind: super::ElemKind, i: Expr) -> Expr {
        let p = match kind {
            super::ElemKind::Python => Prov::Py,
            _ => Prov::Np,
        };
        self.with_prov(list.at(i), list.ty, p)
    }

    /// Whether `arr` is a transform's output coordinates (Python ints, not NumPy scalars).
    pub(crate) fn is_coords(&self, arr: &ArrayVal) -> bool {
        arr.slot()
            .is_some_and(|a| self.func.arrays[a.0 as usize].kind == ArrKind::Coords)
    }

    /// `r = a` in `then`, `r = b` in `els` (a conditional expression or `and`/`or` lowered to an
    /// `if`): `r` gets the provenance of the branch that ran, through a flag assigned alongside
    /// when the two differ. Without it `r` would count as NumPy and, say, `0.5 // (0.0 if c else
    /// x[0])` would miss Python's ZeroDivisionError.
    pub(crate) fn branch_prov(
        &mut self,
        r: Var,
        (a, then): (&Expr, &mut Vec<Stmt>),
        (b, els): (&Expr, &mut Vec<Stmt>),
    ) {
        let (pa, pb) = (self.prov(a), self.prov(b));
        // (A flag known at run time is copied in each branch too: it may be a user variable's
        // shadow, reassigned before `r` is read.)
        if pa == pb && !matches!(pa, Prov::Dyn(_)) {
            self.var_prov.insert(r, pa);
            return;
        }
        let flag = self.temp(Ty::Bool);
        then.push(Stmt::Assign(flag, pa.flag()));
        els.push(Stmt::Assign(flag, pb.flag()));
        self.var_prov.insert(r, Prov::Dyn(Expr::Var(flag)));
    }

    /// Records the provenance of an assignment to a user variable, and keeps its shadow flag.
    pub(crate) fn assign_prov(&mut self, name: &str, var: Var, p: Prov) {
        let seen = self.prov_hints.get(name).copied();
        let joined = match seen {
            None => p.hint(),
            Some(h) if h == p.hint() => h,
            Some(_) => ProvHint::Mixed,
        };
        if seen != Some(joined) {
            self.prov_hints.insert(name.to_string(), joined);
            if joined == ProvHint::Mixed || seen.is_some() {
                self.changed = true; // the variable needs (or has changed) its shadow
            }
        }
        match self.var_prov.get(&var).cloned() {
            Some(Prov::Dyn(Expr::Var(shadow))) => self.emit(Stmt::Assign(shadow, p.flag())),
            _ => {
                self.var_prov.insert(var, p);
            }
        }
    }

    /// Declares the provenance of a new user variable from what earlier passes learned.
    pub(crate) fn declare_prov(&mut self, name: &str, var: Var) {
        match self.prov_hints.get(name) {
            Some(ProvHint::Mixed) => {
                let shadow = self.new_var(Ty::Bool, &format!("{name}.is_python"));
                self.var_prov.insert(var, Prov::Dyn(Expr::Var(shadow)));
            }
            Some(ProvHint::Py) => {
                self.var_prov.insert(var, Prov::Py);
            }
            _ => {}
        }
    }
}
