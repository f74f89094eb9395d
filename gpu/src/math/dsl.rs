//! A tiny embedded language for writing PTX device functions as straight Rust.
//!
//! Values are handles to virtual registers: [`F`] (f64), [`U`] (u32), [`I`] (i32), [`L`] (u64)
//! and [`P`] (predicate). Operators emit one PTX instruction each into the function being defined
//! (a thread-local builder), with `.rn` rounding on every floating-point operation and nothing
//! fused, so that an algorithm written here performs exactly the operations of the same algorithm
//! written in Rust: `(a * b) + c` is `mul.rn` then `add.rn`, never an FMA.
//!
//! A handle names a register, not a value: a variable that is reassigned is made with `var` and
//! updated with `set` (a `mov` into its register), and everything else is used once assigned.

use crate::pir::{Addr, Bin, Cls, Cmp, Func, Global, Ins, Module, Reg, Rnd, Space, Src, Un, T};
use std::cell::RefCell;
use std::ops::{Add, BitAnd, BitOr, BitXor, Div, Mul, Neg, Not, Rem, Shl, Shr, Sub};

struct Ctx {
    f: Func,
    deps: Vec<String>,
    globals: Vec<Global>,
    /// Innermost loop last: (continue label, break label).
    loops: Vec<(u32, u32)>,
}

thread_local! {
    static CTX: RefCell<Option<Ctx>> = const { RefCell::new(None) };
}

fn with<R>(f: impl FnOnce(&mut Ctx) -> R) -> R {
    CTX.with(|c| {
        f(c.borrow_mut()
            .as_mut()
            .expect("math DSL used outside define()"))
    })
}

fn emit<R>(f: impl FnOnce(&mut Func) -> R) -> R {
    with(|c| f(&mut c.f))
}

/// Defines device function `name` in `m` (with whatever it calls, through `resolve`), unless
/// already there. `body` receives the argument registers.
pub fn define(
    m: &mut Module,
    name: &str,
    args: &[Cls],
    rets: &[Cls],
    body: impl FnOnce(&[Reg]),
    resolve: &dyn Fn(&mut Module, &str),
) {
    if m.has_func(name) {
        return;
    }
    let f = Func::new_func(name, args, rets);
    let regs = f.args.clone();
    CTX.with(|c| {
        let prev = c.borrow_mut().replace(Ctx {
            f,
            deps: vec![],
            globals: vec![],
            loops: vec![],
        });
        assert!(prev.is_none(), "define() is not reentrant");
    });
    body(&regs);
    let ctx = CTX.with(|c| c.borrow_mut().take()).expect("context");
    let mut f = ctx.f;
    // A body that falls off its end is a bug in the definition; make it visible.
    if !matches!(f.body.last(), Some(Ins::Ret(_))) {
        f.body.push(Ins::Comment("unreachable end".into()));
        let vals: Vec<Reg> = rets.iter().map(|&c| f.reg(c)).collect();
        f.body.push(Ins::Ret(vals));
    }
    m.funcs.push(f);
    for g in ctx.globals {
        m.add_global(g);
    }
    for d in ctx.deps {
        resolve(m, &d);
    }
}

// ---- value handles ------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
pub struct F(pub Reg);
#[derive(Clone, Copy, Debug)]
pub struct U(pub Reg);
#[derive(Clone, Copy, Debug)]
pub struct I(pub Reg);
#[derive(Clone, Copy, Debug)]
pub struct L(pub Reg);
#[derive(Clone, Copy, Debug)]
pub struct P(pub Reg);

/// Operands that can stand for an f64.
pub trait Fv: Copy {
    fn src(self) -> Src;
}
impl Fv for F {
    fn src(self) -> Src {
        Src::R(self.0)
    }
}
impl Fv for f64 {
    fn src(self) -> Src {
        Src::D(self.to_bits())
    }
}

pub trait Uv: Copy {
    fn src(self) -> Src;
}
impl Uv for U {
    fn src(self) -> Src {
        Src::R(self.0)
    }
}
impl Uv for u32 {
    fn src(self) -> Src {
        Src::I(self as i64)
    }
}

pub trait Iv: Copy {
    fn src(self) -> Src;
}
impl Iv for I {
    fn src(self) -> Src {
        Src::R(self.0)
    }
}
impl Iv for i32 {
    fn src(self) -> Src {
        Src::I(self as i64)
    }
}

pub trait Lv: Copy {
    fn src(self) -> Src;
}
impl Lv for L {
    fn src(self) -> Src {
        Src::R(self.0)
    }
}
impl Lv for u64 {
    fn src(self) -> Src {
        Src::I(self as i64)
    }
}

fn fbin(op: Bin, a: Src, b: Src) -> F {
    F(emit(|f| f.bin(op, T::F64, a, b)))
}

macro_rules! float_ops {
    ($($tr:ident $m:ident $op:ident),*) => {$(
        impl<R: Fv> $tr<R> for F {
            type Output = F;
            fn $m(self, r: R) -> F { fbin(Bin::$op, self.src(), r.src()) }
        }
        impl $tr<F> for f64 {
            type Output = F;
            fn $m(self, r: F) -> F { fbin(Bin::$op, Fv::src(self), r.src()) }
        }
    )*};
}
float_ops!(Add add Add, Sub sub Sub, Mul mul Mul, Div div Div);

impl Neg for F {
    type Output = F;
    /// Flips the sign bit, as Rust's `-x` does (NaNs included).
    fn neg(self) -> F {
        fbits(Bin::Xor, self.0, Src::I(i64::MIN))
    }
}

impl F {
    /// A new variable holding `v`.
    pub fn var(v: impl Fv) -> F {
        F(emit(|f| f.mov(T::F64, v.src())))
    }
    /// Assigns `v` to this variable.
    pub fn set(self, v: impl Fv) {
        emit(|f| f.set(T::F64, self.0, v.src()))
    }
    pub fn bits(self) -> L {
        L(emit(|f| f.mov(T::B64, self.0)))
    }
    pub fn from_bits(l: impl Lv) -> F {
        F(emit(|f| {
            let d = f.reg(Cls::F64);
            f.push(Ins::Mov {
                t: T::B64,
                d,
                a: l.src(),
            });
            d
        }))
    }
    /// The high 32 bits.
    pub fn hi(self) -> U {
        U(emit(|f| f.unpack(self.0).1))
    }
    /// The low 32 bits.
    pub fn lo(self) -> U {
        U(emit(|f| f.unpack(self.0).0))
    }
    pub fn from_words(hi: impl Uv, lo: impl Uv) -> F {
        F(emit(|f| f.pack(Cls::F64, lo.src(), hi.src())))
    }
    /// This value with its high word replaced.
    pub fn with_hi(self, hi: impl Uv) -> F {
        let lo = self.lo();
        F::from_words(hi, lo)
    }
    /// This value with its low word replaced.
    pub fn with_lo(self, lo: impl Uv) -> F {
        let hi = self.hi();
        F::from_words(hi, lo)
    }
    /// `copysign(self, sign)`: |self| with the sign bit of `sign` (bits, NaNs included).
    pub fn copysign(self, sign: F) -> F {
        F::from_bits(
            (self.bits() & 0x7FFF_FFFF_FFFF_FFFFu64) | (sign.bits() & 0x8000_0000_0000_0000u64),
        )
    }
    pub fn abs(self) -> F {
        fbits(Bin::And, self.0, Src::I(i64::MAX))
    }
    pub fn sqrt(self) -> F {
        F(emit(|f| f.un(Un::Sqrt, T::F64, self.0)))
    }
    pub fn floor(self) -> F {
        F(emit(|f| f.cvt(Some(Rnd::Rmi), T::F64, T::F64, self.0)))
    }
    pub fn trunc(self) -> F {
        F(emit(|f| f.cvt(Some(Rnd::Rzi), T::F64, T::F64, self.0)))
    }
    /// `fma.rn`: only where the transcribed algorithm itself calls fma.
    pub fn fma(self, b: impl Fv, c: impl Fv) -> F {
        F(emit(|f| f.fma(T::F64, self.0, b.src(), c.src())))
    }
    /// `x as i32` for a non-NaN x: truncation, saturating (NaN would give i32::MIN, not Rust's 0;
    /// the algorithms here convert only numbers).
    pub fn to_i(self) -> I {
        I(emit(|f| f.cvt(Some(Rnd::Rzi), T::S32, T::F64, self.0)))
    }
    fn cmp(self, c: Cmp, o: impl Fv) -> P {
        P(emit(|f| f.setp(c, T::F64, self.0, o.src())))
    }
    pub fn lt(self, o: impl Fv) -> P {
        self.cmp(Cmp::Lt, o)
    }
    pub fn le(self, o: impl Fv) -> P {
        self.cmp(Cmp::Le, o)
    }
    pub fn gt(self, o: impl Fv) -> P {
        self.cmp(Cmp::Gt, o)
    }
    pub fn ge(self, o: impl Fv) -> P {
        self.cmp(Cmp::Ge, o)
    }
    pub fn eq(self, o: impl Fv) -> P {
        self.cmp(Cmp::Eq, o)
    }
    /// Rust's `!=` (true when either is NaN).
    pub fn ne(self, o: impl Fv) -> P {
        self.cmp(Cmp::Neu, o)
    }
    pub fn is_nan(self) -> P {
        self.cmp(Cmp::Nan, self)
    }
    /// `p ? a : b`.
    pub fn select(p: P, a: impl Fv, b: impl Fv) -> F {
        F(emit(|f| f.selp(T::F64, a.src(), b.src(), p.0)))
    }
}

/// A bitwise operation on the bits of an f64, into an f64 register.
fn fbits(op: Bin, a: Reg, b: Src) -> F {
    F(emit(|f| {
        let d = f.reg(Cls::F64);
        f.push(Ins::Bin {
            op,
            t: T::B64,
            d,
            a: Src::R(a),
            b,
        });
        d
    }))
}

// ---- u32 ----------------------------------------------------------------------------------------

fn ubin(op: Bin, t: T, a: Src, b: Src) -> Reg {
    emit(|f| f.bin(op, t, a, b))
}

macro_rules! int_ops {
    ($ty:ident, $tr_v:ident, $t:expr, $($tr:ident $m:ident $op:ident),*) => {$(
        impl<R: $tr_v> $tr<R> for $ty {
            type Output = $ty;
            fn $m(self, r: R) -> $ty { $ty(ubin(Bin::$op, $t, Src::R(self.0), r.src())) }
        }
    )*};
}
int_ops!(U, Uv, T::U32, Add add Add, Sub sub Sub, Mul mul Mul, Div div Div, Rem rem Rem, BitAnd bitand And, BitOr bitor Or, BitXor bitxor Xor);
int_ops!(I, Iv, T::S32, Add add Add, Sub sub Sub, Mul mul Mul, Div div Div, Rem rem Rem, BitAnd bitand And, BitOr bitor Or, BitXor bitxor Xor);
int_ops!(L, Lv, T::U64, Add add Add, Sub sub Sub, Mul mul Mul, Div div Div, Rem rem Rem, BitAnd bitand And, BitOr bitor Or, BitXor bitxor Xor);

macro_rules! shifts {
    ($ty:ident, $t:expr) => {
        impl Shl<u32> for $ty {
            type Output = $ty;
            fn shl(self, n: u32) -> $ty {
                $ty(ubin(Bin::Shl, $t, Src::R(self.0), Src::I(n as i64)))
            }
        }
        impl Shr<u32> for $ty {
            type Output = $ty;
            fn shr(self, n: u32) -> $ty {
                $ty(ubin(Bin::Shr, $t, Src::R(self.0), Src::I(n as i64)))
            }
        }
        impl Shl<U> for $ty {
            type Output = $ty;
            fn shl(self, n: U) -> $ty {
                $ty(ubin(Bin::Shl, $t, Src::R(self.0), Src::R(n.0)))
            }
        }
        impl Shr<U> for $ty {
            type Output = $ty;
            fn shr(self, n: U) -> $ty {
                $ty(ubin(Bin::Shr, $t, Src::R(self.0), Src::R(n.0)))
            }
        }
        impl Shl<I> for $ty {
            type Output = $ty;
            fn shl(self, n: I) -> $ty {
                $ty(ubin(Bin::Shl, $t, Src::R(self.0), Src::R(n.0)))
            }
        }
        impl Shr<I> for $ty {
            type Output = $ty;
            fn shr(self, n: I) -> $ty {
                $ty(ubin(Bin::Shr, $t, Src::R(self.0), Src::R(n.0)))
            }
        }
    };
}
shifts!(U, T::U32);
shifts!(I, T::S32);
shifts!(L, T::U64);

macro_rules! int_common {
    ($ty:ident, $tr_v:ident, $t:expr, $mt:expr) => {
        impl $ty {
            pub fn var(v: impl $tr_v) -> $ty {
                $ty(emit(|f| f.mov($mt, v.src())))
            }
            pub fn set(self, v: impl $tr_v) {
                emit(|f| f.set($mt, self.0, v.src()))
            }
            fn cmp(self, c: Cmp, o: impl $tr_v) -> P {
                P(emit(|f| f.setp(c, $t, self.0, o.src())))
            }
            pub fn lt(self, o: impl $tr_v) -> P {
                self.cmp(Cmp::Lt, o)
            }
            pub fn le(self, o: impl $tr_v) -> P {
                self.cmp(Cmp::Le, o)
            }
            pub fn gt(self, o: impl $tr_v) -> P {
                self.cmp(Cmp::Gt, o)
            }
            pub fn ge(self, o: impl $tr_v) -> P {
                self.cmp(Cmp::Ge, o)
            }
            pub fn eq(self, o: impl $tr_v) -> P {
                self.cmp(Cmp::Eq, o)
            }
            pub fn ne(self, o: impl $tr_v) -> P {
                self.cmp(Cmp::Ne, o)
            }
            pub fn select(p: P, a: impl $tr_v, b: impl $tr_v) -> $ty {
                $ty(emit(|f| f.selp($mt, a.src(), b.src(), p.0)))
            }
        }
    };
}
int_common!(U, Uv, T::U32, T::B32);
int_common!(I, Iv, T::S32, T::B32);
int_common!(L, Lv, T::U64, T::B64);

impl U {
    pub fn as_i(self) -> I {
        I(self.0)
    }
    pub fn to_l(self) -> L {
        L(emit(|f| f.cvt(None, T::U64, T::U32, self.0)))
    }
    /// `x as f64`.
    pub fn to_f(self) -> F {
        F(emit(|f| f.cvt(Some(Rnd::Rn), T::F64, T::U32, self.0)))
    }
}

impl I {
    pub fn as_u(self) -> U {
        U(self.0)
    }
    /// `x as f64` (exact).
    pub fn to_f(self) -> F {
        F(emit(|f| f.cvt(Some(Rnd::Rn), T::F64, T::S32, self.0)))
    }
    /// Sign-extended to 64 bits.
    pub fn to_l(self) -> L {
        L(emit(|f| f.cvt(None, T::S64, T::S32, self.0)))
    }
}

impl Neg for I {
    type Output = I;
    fn neg(self) -> I {
        I(emit(|f| f.un(Un::Neg, T::S32, self.0)))
    }
}

impl L {
    pub fn lo(self) -> U {
        U(emit(|f| f.cvt(None, T::U32, T::U64, self.0)))
    }
    pub fn hi(self) -> U {
        (self >> 32).lo()
    }
    pub fn to_f_bits(self) -> F {
        F::from_bits(self)
    }
    /// Leading zeros (`clz.b64`), as a u32.
    pub fn leading_zeros(self) -> U {
        U(emit(|f| f.un(Un::Clz, T::B64, self.0)))
    }
}

// ---- predicates ---------------------------------------------------------------------------------

impl BitAnd for P {
    type Output = P;
    fn bitand(self, o: P) -> P {
        P(emit(|f| f.bin(Bin::And, T::Pred, self.0, o.0)))
    }
}
impl BitOr for P {
    type Output = P;
    fn bitor(self, o: P) -> P {
        P(emit(|f| f.bin(Bin::Or, T::Pred, self.0, o.0)))
    }
}
impl BitXor for P {
    type Output = P;
    fn bitxor(self, o: P) -> P {
        P(emit(|f| f.bin(Bin::Xor, T::Pred, self.0, o.0)))
    }
}
impl Not for I {
    type Output = I;
    fn not(self) -> I {
        self ^ -1i32
    }
}
impl Not for P {
    type Output = P;
    fn not(self) -> P {
        P(emit(|f| f.un(Un::Not, T::Pred, self.0)))
    }
}

// ---- control flow -------------------------------------------------------------------------------

/// `if p { then() }`.
pub fn if_(p: P, then: impl FnOnce()) {
    let skip = emit(|f| {
        let l = f.new_label();
        f.bra_if(p.0, true, l);
        l
    });
    then();
    emit(|f| f.place(skip));
}

/// `if p { then() } else { els() }`.
pub fn if_else(p: P, then: impl FnOnce(), els: impl FnOnce()) {
    let (l_else, l_end) = emit(|f| {
        let (a, b) = (f.new_label(), f.new_label());
        f.bra_if(p.0, true, a);
        (a, b)
    });
    then();
    emit(|f| {
        f.bra(l_end);
        f.place(l_else);
    });
    els();
    emit(|f| f.place(l_end));
}

/// `loop { body() }`; leave with [`break_if`].
pub fn loop_(body: impl FnOnce()) {
    let (top, end) = with(|c| {
        let (a, b) = (c.f.new_label(), c.f.new_label());
        c.f.place(a);
        c.loops.push((a, b));
        (a, b)
    });
    body();
    with(|c| {
        c.loops.pop();
        c.f.bra(top);
        c.f.place(end);
    });
}

/// Leaves the innermost [`loop_`] when `p`.
pub fn break_if(p: P) {
    with(|c| {
        let (_, end) = *c.loops.last().expect("break outside a loop");
        c.f.bra_if(p.0, false, end);
    });
}

/// `for i in from..to` (i32, step +1).
pub fn for_range(from: impl Iv, to: impl Iv, body: impl FnOnce(I)) {
    let i = I::var(from);
    loop_(|| {
        break_if(i.ge(to));
        body(i);
        i.set(i + 1);
    });
}

/// `for i in (from..=to).rev()` (i32, step -1), running nothing when `from > to`.
pub fn for_rev_incl(from: impl Iv, to: impl Iv, body: impl FnOnce(I)) {
    let i = I::var(to);
    loop_(|| {
        break_if(i.lt(from));
        body(i);
        i.set(i - 1);
    });
}

/// Returns from the function being defined.
pub fn ret(vals: &[Reg]) {
    emit(|f| f.push(Ins::Ret(vals.to_vec())));
}

pub fn ret_f(v: impl Fv) {
    let r = match v.src() {
        Src::R(r) => r,
        s => emit(|f| f.mov(T::F64, s)),
    };
    ret(&[r]);
}

/// Calls another device function (defined on demand); returns its results.
pub fn call(name: &str, args: &[Reg], rets: &[Cls]) -> Vec<Reg> {
    with(|c| {
        if !c.deps.iter().any(|d| d == name) {
            c.deps.push(name.to_string());
        }
        c.f.call(name, args.to_vec(), rets)
    })
}

pub fn call_f(name: &str, args: &[F]) -> F {
    let regs: Vec<Reg> = args.iter().map(|a| a.0).collect();
    F(call(name, &regs, &[Cls::F64])[0])
}

// ---- tables and local arrays ------------------------------------------------------------------

/// Declares a read-only module table.
pub fn table(name: &str, t: T, data: Vec<u64>) {
    with(|c| {
        if !c.globals.iter().any(|g| g.name == name) {
            c.globals.push(Global {
                name: name.to_string(),
                space: Space::Global,
                t,
                data,
                init: true,
            });
        }
    });
}

fn elem_addr(base: Reg, i: I, size: i64) -> Reg {
    emit(|f| {
        let wide = f.cvt(None, T::S64, T::S32, i.0);
        let off = f.bin(Bin::Mul, T::S64, wide, Src::I(size));
        f.bin(Bin::Add, T::S64, base, off)
    })
}

/// `table[i]` of an f64 table.
pub fn ld_table_f(name: &str, i: I) -> F {
    let base = emit(|f| f.addr_of(name));
    let a = elem_addr(base, i, 8);
    F(emit(|f| f.ld(Space::GlobalNc, T::F64, Addr::reg(a, 0))))
}

/// `table[i]` of an i32 table.
pub fn ld_table_i(name: &str, i: I) -> I {
    let base = emit(|f| f.addr_of(name));
    let a = elem_addr(base, i, 4);
    I(emit(|f| f.ld(Space::GlobalNc, T::S32, Addr::reg(a, 0))))
}

/// A per-thread array of `n` 8-byte cells in local memory.
#[derive(Clone, Copy)]
pub struct Local {
    base: Reg,
}

impl Local {
    pub fn new(name: &str, n: u64) -> Local {
        let base = emit(|f| {
            f.local(name, 8 * n);
            f.addr_of(name)
        });
        Local { base }
    }
    pub fn get_f(self, i: I) -> F {
        let a = elem_addr(self.base, i, 8);
        F(emit(|f| f.ld(Space::Local, T::F64, Addr::reg(a, 0))))
    }
    pub fn set_f(self, i: I, v: impl Fv) {
        let a = elem_addr(self.base, i, 8);
        emit(|f| f.st(Space::Local, T::F64, Addr::reg(a, 0), v.src()));
    }
    pub fn get_i(self, i: I) -> I {
        let a = elem_addr(self.base, i, 8);
        I(emit(|f| f.ld(Space::Local, T::S32, Addr::reg(a, 0))))
    }
    pub fn set_i(self, i: I, v: impl Iv) {
        let a = elem_addr(self.base, i, 8);
        emit(|f| f.st(Space::Local, T::S32, Addr::reg(a, 0), v.src()));
    }
}

/// f64 constant from its bits.
pub fn fb(bits: u64) -> f64 {
    f64::from_bits(bits)
}
