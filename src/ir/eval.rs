//! The executable definition of every scalar IR operation.
//!
//! The interpreter evaluates through these functions and constant folding folds through them, so
//! folding can never change a result. The JIT and PTX backends must produce the same bits.

use super::{BinOp, CmpOp, ReduceOp, Ty, UnOp};
use crate::math::{fmax, fmin, ndjit_ifloordiv, ndjit_imod, MathFn};

/// A scalar value of one of the IR's types.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Val {
    F(f64),
    I(i64),
    B(bool),
}

/// The value a reduction gives over no elements (for the ops that need elements, the value a
/// backend starts from before its `on_empty` check, never observed).
pub fn reduce_empty(op: ReduceOp) -> Val {
    match op {
        ReduceOp::Prod => Val::F(1.0),
        ReduceOp::Sum
        | ReduceOp::SumSeq
        | ReduceOp::Min
        | ReduceOp::Max
        | ReduceOp::PyMin
        | ReduceOp::PyMax => Val::F(0.0),
        ReduceOp::Any => Val::B(false),
        ReduceOp::All => Val::B(true),
        ReduceOp::SumInt | ReduceOp::Count | ReduceOp::ArgMin | ReduceOp::ArgMax => Val::I(0),
    }
}

impl Val {
    pub fn ty(self) -> Ty {
        match self {
            Val::F(_) => Ty::F64,
            Val::I(_) => Ty::I64,
            Val::B(_) => Ty::Bool,
        }
    }
    pub fn f(self) -> f64 {
        match self {
            Val::F(v) => v,
            Val::I(v) => v as f64,
            Val::B(v) => v as u8 as f64,
        }
    }
    pub fn i(self) -> i64 {
        match self {
            Val::I(v) => v,
            Val::F(v) => v as i64,
            Val::B(v) => v as i64,
        }
    }
    pub fn b(self) -> bool {
        match self {
            Val::B(v) => v,
            Val::I(v) => v != 0,
            Val::F(v) => v != 0.0,
        }
    }
    /// The 8-byte representation used in scratch arrays.
    pub fn to_bits(self) -> u64 {
        match self {
            Val::F(v) => v.to_bits(),
            Val::I(v) => v as u64,
            Val::B(v) => v as u64,
        }
    }
    pub fn from_bits(ty: Ty, bits: u64) -> Val {
        match ty {
            Ty::F64 => Val::F(f64::from_bits(bits)),
            Ty::I64 => Val::I(bits as i64),
            Ty::Bool => Val::B(bits != 0),
        }
    }
}

/// `Cast(ty, v)`: f64→i64 truncates and saturates (NaN → 0), as Rust's `as` and Cranelift's
/// `fcvt_to_sint_sat` do; to bool is `!= 0` (NaN is true).
pub fn cast(ty: Ty, v: Val) -> Val {
    match ty {
        Ty::F64 => Val::F(v.f()),
        Ty::I64 => Val::I(v.i()),
        Ty::Bool => Val::B(v.b()),
    }
}

pub fn unary(op: UnOp, v: Val) -> Val {
    match (op, v) {
        (UnOp::Neg, Val::F(x)) => Val::F(-x),
        (UnOp::Neg, Val::I(x)) => Val::I(x.wrapping_neg()),
        (UnOp::Abs, Val::F(x)) => Val::F(x.abs()),
        (UnOp::Abs, Val::I(x)) => Val::I(x.wrapping_abs()),
        (UnOp::Not, v) => Val::B(!v.b()),
        (UnOp::BitNot, Val::I(x)) => Val::I(!x),
        (UnOp::BitNot, Val::B(x)) => Val::B(!x),
        (UnOp::Sqrt, v) => Val::F(v.f().sqrt()),
        (UnOp::Floor, v) => Val::F(v.f().floor()),
        (UnOp::Ceil, v) => Val::F(v.f().ceil()),
        (UnOp::Trunc, v) => Val::F(v.f().trunc()),
        (UnOp::RoundEven, v) => Val::F(v.f().round_ties_even()),
        (UnOp::IsNan, v) => Val::B(v.f().is_nan()),
        (UnOp::IsInf, v) => Val::B(v.f().is_infinite()),
        (UnOp::IsFinite, v) => Val::B(v.f().is_finite()),
        (UnOp::SignBit, v) => Val::B(v.f().is_sign_negative()),
        (op, v) => unreachable!("ill-typed IR: {op:?} on {v:?}"),
    }
}

pub fn binary(op: BinOp, a: Val, b: Val) -> Val {
    match (a, b) {
        (Val::F(x), Val::F(y)) => Val::F(match op {
            BinOp::Add => x + y,
            BinOp::Sub => x - y,
            BinOp::Mul => x * y,
            BinOp::Div => x / y,
            BinOp::Min => fmin(x, y),
            BinOp::Max => fmax(x, y),
            BinOp::PyMin => {
                if y < x {
                    y
                } else {
                    x
                }
            }
            BinOp::PyMax => {
                if y > x {
                    y
                } else {
                    x
                }
            }
            _ => unreachable!("ill-typed IR: {op:?} on f64"),
        }),
        (Val::I(x), Val::I(y)) => Val::I(match op {
            BinOp::Add => x.wrapping_add(y),
            BinOp::Sub => x.wrapping_sub(y),
            BinOp::Mul => x.wrapping_mul(y),
            BinOp::FloorDiv => ndjit_ifloordiv(x, y),
            BinOp::Mod => ndjit_imod(x, y),
            BinOp::Min | BinOp::PyMin => x.min(y),
            BinOp::Max | BinOp::PyMax => x.max(y),
            BinOp::And => x & y,
            BinOp::Or => x | y,
            BinOp::Xor => x ^ y,
            // Shift counts are masked to 0..63 on every backend.
            BinOp::Shl => x.wrapping_shl(y as u32),
            BinOp::Shr => x.wrapping_shr(y as u32),
            BinOp::MulHi => ((x as i128 * y as i128) >> 64) as i64,
            BinOp::Div => unreachable!("ill-typed IR: Div on i64"),
        }),
        (Val::B(x), Val::B(y)) => Val::B(match op {
            BinOp::And | BinOp::Min | BinOp::PyMin => x & y,
            BinOp::Or | BinOp::Max | BinOp::PyMax => x | y,
            BinOp::Xor => x ^ y,
            _ => unreachable!("ill-typed IR: {op:?} on bool"),
        }),
        _ => unreachable!("ill-typed IR: {op:?} on {a:?}, {b:?}"),
    }
}

pub fn cmp(op: CmpOp, a: Val, b: Val) -> bool {
    match (a, b) {
        (Val::F(x), Val::F(y)) => match op {
            CmpOp::Lt => x < y,
            CmpOp::Le => x <= y,
            CmpOp::Gt => x > y,
            CmpOp::Ge => x >= y,
            CmpOp::Eq => x == y,
            CmpOp::Ne => x != y,
        },
        _ => {
            let (x, y) = (a.i(), b.i());
            match op {
                CmpOp::Lt => x < y,
                CmpOp::Le => x <= y,
                CmpOp::Gt => x > y,
                CmpOp::Ge => x >= y,
                CmpOp::Eq => x == y,
                CmpOp::Ne => x != y,
            }
        }
    }
}

pub fn call(f: MathFn, args: &[f64]) -> f64 {
    f.eval(args)
}
