//! The IR's text form, for `Filter::ir_text()` and for reading test failures.

use super::{ArrKind, ArrayOp, Expr, Func, ReduceOp, Stmt};
use std::fmt::{self, Write};

impl fmt::Display for Func {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let size = match self.filter_size {
            Some(n) => format!("{n}"),
            None => "n".into(),
        };
        writeln!(f, "{:?} (buffer: [{size}]) {{", self.sig)?;
        for (i, a) in self.arrays.iter().enumerate() {
            let kind = match &a.kind {
                ArrKind::Buffer => "buffer".to_string(),
                ArrKind::Coords => "coordinates i64".to_string(),
                ArrKind::Output => "output".to_string(),
                ArrKind::Bound(k) => format!("bound[{k}]"),
                ArrKind::Scratch { elem } => format!("scratch {}", elem.name()),
            };
            writeln!(f, "  array @{i} {}: {kind}", a.name)?;
        }
        for (i, v) in self.vars.iter().enumerate() {
            writeln!(f, "  var %{i} {}: {}", v.name, v.ty.name())?;
        }
        let mut s = String::new();
        block(&mut s, &self.body, 1)?;
        f.write_str(&s)?;
        writeln!(f, "}}")
    }
}

fn indent(s: &mut String, depth: usize) {
    for _ in 0..depth {
        s.push_str("  ");
    }
}

fn block(s: &mut String, stmts: &[Stmt], depth: usize) -> fmt::Result {
    for st in stmts {
        indent(s, depth);
        match st {
            Stmt::Assign(v, e) => writeln!(s, "%{} = {}", v.0, e)?,
            Stmt::Store(a, i, v) => writeln!(s, "@{}[{}] = {}", a.0, i, v)?,
            Stmt::If(c, a, b) => {
                writeln!(s, "if {c} {{")?;
                block(s, a, depth + 1)?;
                if !b.is_empty() {
                    indent(s, depth);
                    writeln!(s, "}} else {{")?;
                    block(s, b, depth + 1)?;
                }
                indent(s, depth);
                writeln!(s, "}}")?;
            }
            Stmt::Loop { body, latch } => {
                writeln!(s, "loop {{")?;
                block(s, body, depth + 1)?;
                if !latch.is_empty() {
                    indent(s, depth);
                    writeln!(s, "}} latch {{")?;
                    block(s, latch, depth + 1)?;
                }
                indent(s, depth);
                writeln!(s, "}}")?;
            }
            Stmt::Break => writeln!(s, "break")?,
            Stmt::Continue => writeln!(s, "continue")?,
            Stmt::Check { cond, err, a, b } => {
                writeln!(s, "check {cond} else error#{} ({a}, {b})", err.0)?
            }
            Stmt::Return(e) => writeln!(s, "return {e}")?,
            Stmt::Succeed => writeln!(s, "succeed")?,
            Stmt::Reduce {
                dst,
                op,
                len,
                index,
                elem,
                on_empty,
            } => {
                let name = reduce_name(*op);
                write!(
                    s,
                    "%{} = {name} for %{} in 0..{len}: {elem}",
                    dst.0, index.0
                )?;
                match on_empty {
                    Some(e) => writeln!(s, " (empty: error#{})", e.0)?,
                    None => writeln!(s)?,
                }
            }
            Stmt::Fill {
                dst,
                len,
                index,
                elem,
                keep,
            } => {
                write!(s, "@{} = fill for %{} in 0..{len}: {elem}", dst.0, index.0)?;
                match keep {
                    Some(k) => writeln!(s, " if {k}")?,
                    None => writeln!(s)?,
                }
            }
            Stmt::ArrayOp(ArrayOp::Sort { of_taps }, a) => {
                let taps = if *of_taps { " (of the taps)" } else { "" };
                writeln!(s, "sort @{}{taps}", a.0)?
            }
            Stmt::Sorted { dst, stat, arr, q } => {
                writeln!(s, "%{} = {stat:?}(sorted @{}, q={q})", dst.0, arr.0)?
            }
            Stmt::MedianNetwork {
                dst,
                elems,
                fallback,
            } => {
                let elems: Vec<String> = elems.iter().map(|e| e.to_string()).collect();
                let elems = elems.join(", ");
                writeln!(s, "%{} = median network [{elems}], on NaN {{", dst.0)?;
                block(s, fallback, depth + 1)?;
                indent(s, depth);
                writeln!(s, "}}")?;
            }
        }
    }
    Ok(())
}

fn reduce_name(op: ReduceOp) -> &'static str {
    match op {
        ReduceOp::Sum => "sum",
        ReduceOp::SumSeq => "sum.seq",
        ReduceOp::SumInt => "sum.i64",
        ReduceOp::Prod => "prod",
        ReduceOp::Min => "min",
        ReduceOp::Max => "max",
        ReduceOp::PyMin => "pymin",
        ReduceOp::PyMax => "pymax",
        ReduceOp::ArgMin => "argmin",
        ReduceOp::ArgMax => "argmax",
        ReduceOp::Any => "any",
        ReduceOp::All => "all",
        ReduceOp::Count => "count",
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::F64(v) => write!(f, "{v:?}"),
            Expr::I64(v) => write!(f, "{v}"),
            Expr::Bool(v) => write!(f, "{v}"),
            Expr::Var(v) => write!(f, "%{}", v.0),
            Expr::Param(k) => write!(f, "param.f64[{k}]"),
            Expr::IntParam(k) => write!(f, "param.i64[{k}]"),
            Expr::Len(a) => write!(f, "len(@{})", a.0),
            Expr::Load(a, i) => write!(f, "@{}[{i}]", a.0),
            Expr::Unary(op, x) => write!(f, "{op:?}({x})"),
            Expr::Binary(op, a, b) => write!(f, "{op:?}({a}, {b})"),
            Expr::Cmp(op, a, b) => write!(f, "{op:?}({a}, {b})"),
            Expr::Select(c, a, b) => write!(f, "select({c}, {a}, {b})"),
            Expr::Call(m, args) => {
                write!(f, "{}(", m.name())?;
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{a}")?;
                }
                f.write_str(")")
            }
            Expr::Cast(t, x) => write!(f, "{}({x})", t.name()),
        }
    }
}
