//! Where a filter body reads its neighbourhood `x` from.
//!
//! Small footprints are a register window: every tap loaded once, shared between the outputs of a
//! thread. Past what registers hold ([`WINDOW_REGS`] taps), that window spills to local memory on
//! every output, and the body's loops over `x` copied it there once more. Large footprints
//! instead read each tap where it lies when the body asks for it: in the interior straight from
//! the image (the read-only cache serves the neighbours' reads), at the edges from one local array
//! that a loop over the window fills with scipy's boundary rules. Registers and code then no
//! longer grow with the footprint, only the loads do (one per tap read, as in scipy's own loop).

use super::elem;
use super::Dtype;
use crate::pir::{Addr, Bin, Func, Global, Reg, Space, Src, T};

/// The most taps a register window holds (an 8×8 box): larger footprints read taps from memory.
pub const WINDOW_REGS: usize = 64;

/// The neighbourhood of one body instance.
#[derive(Clone, Debug)]
pub enum Taps {
    /// One f64 register per tap.
    Regs(Vec<Reg>),
    /// `n` taps read on demand.
    Memory(TapMemory),
}

impl Taps {
    pub fn len(&self) -> usize {
        match self {
            Taps::Regs(r) => r.len(),
            Taps::Memory(m) => m.n,
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Taps read from memory.
#[derive(Clone, Debug)]
pub struct TapMemory {
    pub n: usize,
    source: Source,
}

#[derive(Clone, Debug)]
enum Source {
    /// A local f64 array holding the taps in scipy's buffer order.
    Local(String),
    /// The input image around an interior output.
    Image(Image),
}

/// Tap `i` of an interior output at `base + Σ offsets[i][a] × strides[a] × itemsize` (bytes).
#[derive(Clone, Debug)]
struct Image {
    /// The output's own pixel in the input (u64).
    base: Reg,
    /// Element strides per axis (s64 registers, or an immediate for a contiguous last axis):
    /// constant taps then cost one multiply-add by an immediate each, and making the taps
    /// emits no code (a branch that reads them computes their addresses itself).
    strides: [Src; 3],
    dtype: Dtype,
    /// The global table of `offsets`, three s32 per tap, for taps indexed at run time (`None`:
    /// read at constant indices only).
    table: Option<String>,
    offsets: Vec<[i64; 3]>,
}

impl TapMemory {
    /// The taps of a local array `name` of `n` f64 values.
    pub fn local(name: String, n: usize) -> TapMemory {
        TapMemory {
            n,
            source: Source::Local(name),
        }
    }

    /// The taps of an interior output whose pixel lies at `base` in the input image, `strides`
    /// in elements; `table` as [`Image`]'s.
    pub fn image(
        base: Reg,
        strides: [Src; 3],
        dtype: Dtype,
        table: Option<String>,
        offsets: &[[i64; 3]],
    ) -> TapMemory {
        TapMemory {
            n: offsets.len(),
            source: Source::Image(Image {
                base,
                strides,
                dtype,
                table,
                offsets: offsets.to_vec(),
            }),
        }
    }

    /// Loads tap `i` (an immediate below `n`, or an s64 register holding a valid index) as f64.
    pub fn load(&self, k: &mut Func, i: Src) -> Reg {
        match &self.source {
            Source::Local(name) => {
                let base = k.addr_of(name);
                let addr = match i {
                    Src::I(c) => Addr::reg(base, 8 * c),
                    r => {
                        let off = k.bin(Bin::Shl, T::B64, r, Src::I(3));
                        Addr::reg(k.bin(Bin::Add, T::S64, base, off), 0)
                    }
                };
                k.ld(Space::Local, T::F64, addr)
            }
            Source::Image(im) => {
                let addr = im.addr(k, i);
                elem::load(k, im.dtype, addr)
            }
        }
    }

    /// Loads tap `i` of the interior of an image whose values float32 holds exactly
    /// ([`elem::exact_in_f32`]) as a float32; `None` for other images and at the edges (whose
    /// local array holds doubles, `cval` among them).
    pub fn load_f32(&self, k: &mut Func, i: Src) -> Option<Reg> {
        match &self.source {
            Source::Image(im) if elem::exact_in_f32(im.dtype) => {
                let addr = im.addr(k, i);
                let v = k.ld(Space::GlobalNc, elem::ptx_type(im.dtype), addr);
                Some(elem::to_f32(k, im.dtype, v))
            }
            _ => None,
        }
    }
}

impl Image {
    /// The address of tap `i`.
    fn addr(&self, k: &mut Func, i: Src) -> Addr {
        let size = self.dtype.itemsize() as i64;
        // Offsets along each axis as registers (from the table, in bytes) or immediates.
        let d: [Src; 3] = match i {
            Src::I(c) => self.offsets[c as usize].map(Src::I),
            r => {
                let table = self
                    .table
                    .as_ref()
                    .expect("a table for taps indexed at run time");
                let table = k.addr_of(table);
                let row = k.bin(Bin::Mul, T::S64, r, Src::I(12));
                let at = k.bin(Bin::Add, T::S64, table, row);
                std::array::from_fn(|a| {
                    if self.offsets.iter().all(|o| o[a] == 0) {
                        return Src::I(0);
                    }
                    let v = k.ld(Space::GlobalNc, T::S32, Addr::reg(at, 4 * a as i64));
                    let v = k.cvt(None, T::S64, T::S32, v);
                    Src::R(k.bin(Bin::Mul, T::S64, v, Src::I(size)))
                })
            }
        };
        let mut addr = self.base;
        let mut imm = 0;
        for (&d, &s) in d.iter().zip(&self.strides) {
            match (d, s) {
                (Src::I(0), _) => {}
                (Src::I(d), Src::I(s)) => imm += d * s * size,
                (Src::I(d), s) => addr = k.fma(T::S64, Src::I(d * size), s, addr),
                (d, s) => addr = k.fma(T::S64, d, s, addr),
            }
        }
        Addr::reg(addr, imm)
    }
}

/// The global table of `offsets` (three s32 per tap), named after its contents so that equal
/// footprints share one; `globals` collects the module's globals.
pub fn table(globals: &mut Vec<Global>, offsets: &[[i64; 3]]) -> String {
    let data: Vec<u64> = offsets
        .iter()
        .flat_map(|o| o.map(|d| d as i32 as u32 as u64))
        .collect();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    std::hash::Hash::hash(&data, &mut h);
    let name = format!("ndjit_taps_{:016x}", std::hash::Hasher::finish(&h));
    if !globals.iter().any(|g| g.name == name) {
        globals.push(Global {
            name: name.clone(),
            space: Space::Global,
            t: T::S32,
            data,
            init: true,
        });
    }
    name
}
