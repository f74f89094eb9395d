//! A small PTX-level IR: typed virtual registers, PTX instructions, functions and modules.
//!
//! Everything the GPU backend emits goes through this representation, for two reasons:
//! - [`print`] turns it into PTX text, one instruction per [`Ins`], so the text is exactly what the
//!   code says (`add.rn.f64`, never a bare `add.f64` that ptxas could fuse into an FMA);
//! - [`emu`] executes it on the CPU with PTX's semantics, so kernels and math routines are tested
//!   bit for bit against the CPU JIT and `libm` on machines without a GPU.
//!
//! Registers are virtual and mutable (PTX is not SSA); ptxas allocates them.

pub mod emu;
pub mod print;

/// Register classes: the PTX register declarations (`%p`, `%r`, `%rd`, `%f`, `%fd`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cls {
    Pred,
    B32,
    B64,
    F32,
    F64,
}

/// A virtual register. Ids are unique within a function across all classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reg {
    pub id: u32,
    pub cls: Cls,
}

/// Instruction types (the `.u32`, `.f64` ... suffixes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum T {
    Pred,
    B8,
    B16,
    B32,
    B64,
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F32,
    F64,
    /// Two 16-bit lanes in a 32-bit register, unsigned or signed: `min`/`max` only (sm_90,
    /// PTX ISA 8.0), each lane on its own.
    U16x2,
    S16x2,
}

impl T {
    /// The register class that holds a value of this type.
    pub fn cls(self) -> Cls {
        match self {
            T::Pred => Cls::Pred,
            T::B64 | T::U64 | T::S64 => Cls::B64,
            T::F32 => Cls::F32,
            T::F64 => Cls::F64,
            _ => Cls::B32,
        }
    }
    pub fn bits(self) -> u32 {
        match self {
            T::Pred => 1,
            T::B8 | T::U8 | T::S8 => 8,
            T::B16 | T::U16 | T::S16 => 16,
            T::B32 | T::U32 | T::S32 | T::F32 | T::U16x2 | T::S16x2 => 32,
            T::B64 | T::U64 | T::S64 | T::F64 => 64,
        }
    }
    pub fn is_signed(self) -> bool {
        matches!(self, T::S8 | T::S16 | T::S32 | T::S64)
    }
    pub fn is_float(self) -> bool {
        matches!(self, T::F32 | T::F64)
    }
    pub fn name(self) -> &'static str {
        match self {
            T::Pred => "pred",
            T::B8 => "b8",
            T::B16 => "b16",
            T::B32 => "b32",
            T::B64 => "b64",
            T::U8 => "u8",
            T::U16 => "u16",
            T::U32 => "u32",
            T::U64 => "u64",
            T::S8 => "s8",
            T::S16 => "s16",
            T::S32 => "s32",
            T::S64 => "s64",
            T::F32 => "f32",
            T::F64 => "f64",
            T::U16x2 => "u16x2",
            T::S16x2 => "s16x2",
        }
    }
}

/// A source operand: a register or an immediate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Src {
    R(Reg),
    /// An integer immediate (its low bits are used for narrower types).
    I(i64),
    /// An f64 immediate, kept as bits so that -0.0 and NaN payloads survive.
    D(u64),
    /// An f32 immediate, as bits.
    S(u32),
}

impl From<Reg> for Src {
    fn from(r: Reg) -> Src {
        Src::R(r)
    }
}

impl Src {
    pub fn f64(v: f64) -> Src {
        Src::D(v.to_bits())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bin {
    /// `.rn` on floats; wrapping on integers.
    Add,
    Sub,
    /// `.rn` on floats; `.lo` on integers.
    Mul,
    /// `mul.hi` on integers.
    MulHi,
    /// `.rn` on floats; truncating on integers.
    Div,
    Rem,
    Min,
    Max,
    /// `min.NaN`/`max.NaN` on f32 (sm_80 on): the canonical NaN where either operand is NaN,
    /// otherwise `min`/`max` (of two zeros, `-0.0` below `+0.0`).
    MinNan,
    MaxNan,
    And,
    Or,
    Xor,
    /// Shift counts are `.u32` registers or immediates; PTX clamps counts above the width.
    Shl,
    Shr,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Un {
    Neg,
    Abs,
    Not,
    /// `sqrt.rn`, correctly rounded.
    Sqrt,
    /// Count leading zeros (`clz.b32/.b64`, result `.u32`).
    Clz,
}

/// Rounding modifiers of `cvt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rnd {
    /// Round to nearest even (float results).
    Rn,
    /// To integral values: nearest even, toward zero, toward -inf, toward +inf.
    Rni,
    Rzi,
    Rmi,
    Rpi,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cmp {
    Eq,
    /// Ordered not-equal on floats (false if either is NaN).
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// Unordered-or variants (floats only).
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    /// Both numbers / either NaN (floats only).
    Num,
    Nan,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoolOp {
    And,
    Or,
    Xor,
}

/// State spaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    Global,
    /// `ld.global.nc`: read-only data through the non-coherent cache.
    GlobalNc,
    Local,
    /// Memory of a thread block, shared by its threads (see [`Ins::Bar`]).
    Shared,
    Param,
    Const,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Base {
    R(Reg),
    /// A module or function variable (`[table+8]`).
    Sym(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Addr {
    pub base: Base,
    pub off: i64,
}

impl Addr {
    pub fn reg(r: Reg, off: i64) -> Addr {
        Addr {
            base: Base::R(r),
            off,
        }
    }
    pub fn sym(s: &str, off: i64) -> Addr {
        Addr {
            base: Base::Sym(s.to_string()),
            off,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomOp {
    Min,
    Exch,
    Add,
}

/// Special registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Special {
    TidX,
    TidY,
    NtidX,
    NtidY,
    CtaidX,
    CtaidY,
    NctaidX,
    NctaidY,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Ins {
    Label(u32),
    /// `@p ins` (`@!p` if `neg`): a move or an arithmetic instruction that runs only where the
    /// predicate holds, its destination otherwise unchanged. One predicated instruction where a
    /// select and the instruction would be two.
    Guarded {
        p: Reg,
        neg: bool,
        ins: Box<Ins>,
    },
    /// `.pragma "nounroll";`, in a loop's header block: ptxas keeps that loop rolled.
    NoUnroll,
    Mov {
        t: T,
        d: Reg,
        a: Src,
    },
    Bin {
        op: Bin,
        t: T,
        d: Reg,
        a: Src,
        b: Src,
    },
    Un {
        op: Un,
        t: T,
        d: Reg,
        a: Src,
    },
    /// `fma.rn` on floats, `mad.lo` on integers.
    Fma {
        t: T,
        d: Reg,
        a: Src,
        b: Src,
        c: Src,
    },
    Cvt {
        rnd: Option<Rnd>,
        dt: T,
        st: T,
        d: Reg,
        a: Src,
    },
    /// `setp.cmp[.bop].t d, a, b[, [!]c]`.
    Setp {
        cmp: Cmp,
        t: T,
        d: Reg,
        a: Src,
        b: Src,
        comb: Option<(BoolOp, Reg, bool)>,
    },
    /// `selp.t d, a, b, p`: `p ? a : b`.
    Selp {
        t: T,
        d: Reg,
        a: Src,
        b: Src,
        p: Reg,
    },
    /// `mov.b64 d, {lo, hi}`.
    Pack {
        d: Reg,
        lo: Src,
        hi: Src,
    },
    /// `mov.b64 {lo, hi}, a`.
    Unpack {
        lo: Reg,
        hi: Reg,
        a: Reg,
    },
    Ld {
        sp: Space,
        t: T,
        d: Reg,
        addr: Addr,
    },
    St {
        sp: Space,
        t: T,
        addr: Addr,
        a: Src,
    },
    /// Vector load/store (`.v2`/`.v4`) of consecutive elements; the address must be aligned to
    /// the vector's size.
    LdV {
        sp: Space,
        t: T,
        d: Vec<Reg>,
        addr: Addr,
    },
    StV {
        sp: Space,
        t: T,
        addr: Addr,
        a: Vec<Reg>,
    },
    Atom {
        op: AtomOp,
        t: T,
        d: Reg,
        addr: Addr,
        a: Src,
    },
    /// `[@[!]p] bra L`.
    Bra {
        target: u32,
        pred: Option<(Reg, bool)>,
    },
    /// A call of a `.func` of this module; every argument and result travels in its own `.param`.
    Call {
        func: String,
        args: Vec<Reg>,
        rets: Vec<Reg>,
    },
    /// Return from a `.func` with these values (stored to its return parameters first).
    Ret(Vec<Reg>),
    /// End of a kernel thread.
    Exit,
    /// `bar.sync 0`: waits until every thread of the block has arrived, so that what each
    /// stored to shared memory before it is seen by all after it. Every thread of the block
    /// must reach each barrier (none may have left).
    Bar,
    Sreg {
        d: Reg,
        s: Special,
    },
    /// `mov.u64 d, sym`: the address of a variable in its state space.
    AddrOf {
        d: Reg,
        sym: String,
    },
    Comment(String),
}

/// A kernel parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: String,
    pub t: T,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Func {
    pub name: String,
    /// `.entry` (a kernel) or `.func` (a device function).
    pub entry: bool,
    /// Kernel parameters, read with `ld.param` by name.
    pub params: Vec<Param>,
    /// Arguments of a `.func`: the registers they arrive in.
    pub args: Vec<Reg>,
    /// Result classes of a `.func`.
    pub rets: Vec<Cls>,
    /// Per-thread local arrays: name, bytes (8-byte aligned).
    pub locals: Vec<(String, u64)>,
    /// For a kernel, arrays shared by a block's threads: name, bytes (16-byte aligned).
    pub shared: Vec<(String, u64)>,
    /// Whether those arrays lie in the block's dynamic shared memory (one `.extern` array,
    /// at the offsets [`layout`] gives; the launch passes [`Func::dynamic_shared_bytes`]), as a
    /// block needs for more than [`STATIC_SHARED`] bytes.
    pub shared_dynamic: bool,
    pub body: Vec<Ins>,
    pub next_reg: u32,
    pub next_label: u32,
    /// For a kernel: `.maxntid 256, 1, 1` and `.minnctapersm n`, which caps ptxas's register
    /// use so that `n` blocks of 256 threads fit on one SM.
    pub min_blocks_per_sm: Option<u32>,
}

/// Shared memory a block may declare statically; more must be dynamic, and opted into by the
/// device's kernel attribute.
pub const STATIC_SHARED: u64 = 48 * 1024;

/// The name of a kernel's dynamic shared memory, where [`Func::shared_dynamic`] puts its arrays.
pub const DYNAMIC_SHARED: &str = "ndjit_dynamic";

/// Arrays laid out one after another, each at a 16-byte boundary: their offsets by name, and
/// the bytes of all (a kernel's shared arrays, static or dynamic, and its local arrays in the
/// emulator).
pub fn layout(arrays: &[(String, u64)]) -> (std::collections::HashMap<&str, u64>, u64) {
    let mut at = std::collections::HashMap::new();
    let mut size = 0u64;
    for (name, bytes) in arrays {
        at.insert(name.as_str(), size);
        size += (bytes + 15) & !15;
    }
    (at, size)
}

/// A module-level array, initialised (`.global` or `.const`).
#[derive(Clone, Debug, PartialEq)]
pub struct Global {
    pub name: String,
    pub space: Space,
    /// Element type: `.f64`, `.u32`, `.s32`, `.b64`, `.u8` ...
    pub t: T,
    /// Element bits (zero-extended), or just the count for an uninitialised array.
    pub data: Vec<u64>,
    pub init: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    /// PTX ISA version, `(major, minor)`.
    pub version: (u32, u32),
    /// `sm_XY`.
    pub target: u32,
    pub globals: Vec<Global>,
    pub funcs: Vec<Func>,
}

impl Module {
    pub fn new(version: (u32, u32), target: u32) -> Module {
        Module {
            version,
            target,
            globals: Vec::new(),
            funcs: Vec::new(),
        }
    }
    pub fn func(&self, name: &str) -> Option<&Func> {
        self.funcs.iter().find(|f| f.name == name)
    }
    pub fn has_func(&self, name: &str) -> bool {
        self.func(name).is_some()
    }
    pub fn has_global(&self, name: &str) -> bool {
        self.globals.iter().any(|g| g.name == name)
    }
    /// Adds a global unless one of that name exists.
    pub fn add_global(&mut self, g: Global) {
        if !self.has_global(&g.name) {
            self.globals.push(g);
        }
    }
    /// Adds the functions and globals of `other` (skipping names already present) with its
    /// kernels renamed by `rename` (for assembling many kernels in one module).
    pub fn merge(&mut self, other: &Module, rename: impl Fn(&str) -> String) {
        for g in &other.globals {
            self.add_global(g.clone());
        }
        for f in &other.funcs {
            let mut f = f.clone();
            if f.entry {
                f.name = rename(&f.name);
            }
            if !self.has_func(&f.name) {
                self.funcs.push(f);
            }
        }
    }
    /// The PTX text.
    pub fn to_ptx(&self) -> String {
        print::module(self)
    }
}

impl Func {
    pub fn new_entry(name: &str, params: Vec<Param>) -> Func {
        Func {
            name: name.into(),
            entry: true,
            params,
            args: vec![],
            rets: vec![],
            locals: vec![],
            shared: vec![],
            shared_dynamic: false,
            body: vec![],
            next_reg: 0,
            next_label: 0,
            min_blocks_per_sm: None,
        }
    }
    /// A `.func` with arguments of the given classes; returns it and the argument registers.
    pub fn new_func(name: &str, args: &[Cls], rets: &[Cls]) -> Func {
        let mut f = Func {
            name: name.into(),
            entry: false,
            params: vec![],
            args: vec![],
            rets: rets.to_vec(),
            locals: vec![],
            shared: vec![],
            shared_dynamic: false,
            body: vec![],
            next_reg: 0,
            next_label: 0,
            min_blocks_per_sm: None,
        };
        f.args = args.iter().map(|&c| f.reg(c)).collect();
        f
    }
    pub fn reg(&mut self, cls: Cls) -> Reg {
        self.next_reg += 1;
        Reg {
            id: self.next_reg - 1,
            cls,
        }
    }
    pub fn new_label(&mut self) -> u32 {
        self.next_label += 1;
        self.next_label - 1
    }
    /// Declares a local array of `bytes` bytes (idempotent by name, keeping the larger size).
    pub fn local(&mut self, name: &str, bytes: u64) {
        if let Some(l) = self.locals.iter_mut().find(|(n, _)| n == name) {
            l.1 = l.1.max(bytes);
        } else {
            self.locals.push((name.to_string(), bytes));
        }
    }

    /// Bytes of dynamic shared memory a launch of this kernel must pass (0: none).
    pub fn dynamic_shared_bytes(&self) -> u32 {
        match self.shared_dynamic {
            true => layout(&self.shared).1 as u32,
            false => 0,
        }
    }

    /// Declares an array of `bytes` bytes shared by a block's threads (a kernel's; idempotent
    /// by name, keeping the larger size).
    pub fn shared(&mut self, name: &str, bytes: u64) {
        if let Some(l) = self.shared.iter_mut().find(|(n, _)| n == name) {
            l.1 = l.1.max(bytes);
        } else {
            self.shared.push((name.to_string(), bytes));
        }
    }

    // ---- emission helpers, each returning the destination ----------------------------------

    pub fn push(&mut self, i: Ins) {
        self.body.push(i);
    }
    pub fn place(&mut self, l: u32) {
        self.body.push(Ins::Label(l));
    }
    pub fn bra(&mut self, l: u32) {
        self.body.push(Ins::Bra {
            target: l,
            pred: None,
        });
    }
    /// Branch to `l` when `p` (or when `!p` if `neg`).
    pub fn bra_if(&mut self, p: Reg, neg: bool, l: u32) {
        self.body.push(Ins::Bra {
            target: l,
            pred: Some((p, neg)),
        });
    }
    pub fn mov(&mut self, t: T, a: impl Into<Src>) -> Reg {
        let d = self.reg(t.cls());
        self.body.push(Ins::Mov { t, d, a: a.into() });
        d
    }
    /// `d = a` into an existing register.
    pub fn set(&mut self, t: T, d: Reg, a: impl Into<Src>) {
        self.body.push(Ins::Mov { t, d, a: a.into() });
    }
    /// `@p d = op(d, b)` into the existing register `d`: where `p` is false `d` keeps its value.
    pub fn bin_if(&mut self, p: Reg, op: Bin, t: T, d: Reg, b: impl Into<Src>) {
        let ins = Box::new(Ins::Bin {
            op,
            t,
            d,
            a: Src::R(d),
            b: b.into(),
        });
        self.body.push(Ins::Guarded { p, neg: false, ins });
    }
    pub fn bin(&mut self, op: Bin, t: T, a: impl Into<Src>, b: impl Into<Src>) -> Reg {
        let d = self.reg(t.cls());
        self.body.push(Ins::Bin {
            op,
            t,
            d,
            a: a.into(),
            b: b.into(),
        });
        d
    }
    pub fn un(&mut self, op: Un, t: T, a: impl Into<Src>) -> Reg {
        let cls = if op == Un::Clz { Cls::B32 } else { t.cls() };
        let d = self.reg(cls);
        self.body.push(Ins::Un {
            op,
            t,
            d,
            a: a.into(),
        });
        d
    }
    pub fn fma(&mut self, t: T, a: impl Into<Src>, b: impl Into<Src>, c: impl Into<Src>) -> Reg {
        let d = self.reg(t.cls());
        self.body.push(Ins::Fma {
            t,
            d,
            a: a.into(),
            b: b.into(),
            c: c.into(),
        });
        d
    }
    pub fn cvt(&mut self, rnd: Option<Rnd>, dt: T, st: T, a: impl Into<Src>) -> Reg {
        let d = self.reg(dt.cls());
        self.body.push(Ins::Cvt {
            rnd,
            dt,
            st,
            d,
            a: a.into(),
        });
        d
    }
    pub fn setp(&mut self, cmp: Cmp, t: T, a: impl Into<Src>, b: impl Into<Src>) -> Reg {
        let d = self.reg(Cls::Pred);
        self.body.push(Ins::Setp {
            cmp,
            t,
            d,
            a: a.into(),
            b: b.into(),
            comb: None,
        });
        d
    }
    /// `d = (a cmp b) bop [!]c`: the operands of PTX's combining `setp`, one argument each.
    #[allow(clippy::too_many_arguments)]
    pub fn setp_comb(
        &mut self,
        cmp: Cmp,
        t: T,
        a: impl Into<Src>,
        b: impl Into<Src>,
        bop: BoolOp,
        c: Reg,
        neg: bool,
    ) -> Reg {
        let d = self.reg(Cls::Pred);
        self.body.push(Ins::Setp {
            cmp,
            t,
            d,
            a: a.into(),
            b: b.into(),
            comb: Some((bop, c, neg)),
        });
        d
    }
    pub fn selp(&mut self, t: T, a: impl Into<Src>, b: impl Into<Src>, p: Reg) -> Reg {
        let d = self.reg(t.cls());
        self.body.push(Ins::Selp {
            t,
            d,
            a: a.into(),
            b: b.into(),
            p,
        });
        d
    }
    pub fn pack(&mut self, cls: Cls, lo: impl Into<Src>, hi: impl Into<Src>) -> Reg {
        let (lo, hi) = (
            self.in_reg(T::B32, lo.into()),
            self.in_reg(T::B32, hi.into()),
        );
        let d = self.reg(cls);
        self.body.push(Ins::Pack {
            d,
            lo: Src::R(lo),
            hi: Src::R(hi),
        });
        d
    }
    /// The operand in a register (immediates are moved into one).
    pub fn in_reg(&mut self, t: T, a: Src) -> Reg {
        match a {
            Src::R(r) => r,
            _ => self.mov(t, a),
        }
    }
    /// `(lo, hi)` 32-bit halves of a 64-bit register.
    pub fn unpack(&mut self, a: Reg) -> (Reg, Reg) {
        let (lo, hi) = (self.reg(Cls::B32), self.reg(Cls::B32));
        self.body.push(Ins::Unpack { lo, hi, a });
        (lo, hi)
    }
    pub fn ld(&mut self, sp: Space, t: T, addr: Addr) -> Reg {
        // Sub-word loads land in 32-bit registers.
        let d = self.reg(t.cls());
        self.body.push(Ins::Ld { sp, t, d, addr });
        d
    }
    pub fn st(&mut self, sp: Space, t: T, addr: Addr, a: impl Into<Src>) {
        let rt = match t.cls() {
            Cls::B32 => T::B32,
            _ => t,
        };
        let a = self.in_reg(rt, a.into());
        self.body.push(Ins::St {
            sp,
            t,
            addr,
            a: Src::R(a),
        });
    }
    pub fn sreg(&mut self, s: Special) -> Reg {
        let d = self.reg(Cls::B32);
        self.body.push(Ins::Sreg { d, s });
        d
    }
    pub fn addr_of(&mut self, sym: &str) -> Reg {
        let d = self.reg(Cls::B64);
        self.body.push(Ins::AddrOf {
            d,
            sym: sym.to_string(),
        });
        d
    }
    pub fn call(&mut self, func: &str, args: Vec<Reg>, rets: &[Cls]) -> Vec<Reg> {
        let rets: Vec<Reg> = rets.iter().map(|&c| self.reg(c)).collect();
        self.body.push(Ins::Call {
            func: func.to_string(),
            args,
            rets: rets.clone(),
        });
        rets
    }
    /// Keeps the loop whose header block this is rolled ([`Ins::NoUnroll`]).
    pub fn no_unroll(&mut self) {
        self.body.push(Ins::NoUnroll);
    }
    pub fn comment(&mut self, s: impl Into<String>) {
        self.body.push(Ins::Comment(s.into()));
    }
}
