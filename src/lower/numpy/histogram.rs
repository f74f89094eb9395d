//! `np.histogram(a, bins=10, range=None)`, returning `(hist, bin_edges)` as NumPy computes them.
//!
//! - `bins` a number (a literal or a bound value, checked at run time): equal-width bins.
//!   The edges are `np.linspace(lo, hi, bins + 1)` and each value's bin is NumPy's
//!   `int((v - lo) / (hi - lo) * bins)` with its corrections for values within an ulp of an edge.
//! - `bins` an array of edges (a bound array or a list): NumPy counts with `np.searchsorted` on
//!   the sorted data: bin `b` holds the values in `[e[b], e[b+1])`, the last one also `e[-1]`,
//!   compared in sort order (NaN after every number, so a NaN value falls in no bin).

use super::{as_f64, sorts_before, tabulate};
use crate::error::{ErrorKind, Exception, Result, Span};
use crate::ir::{BinOp, CmpOp, Expr, ReduceOp, Stmt, Ty, UnOp};
use crate::lower::builtins::{counted_loop, zeros, Args};
use crate::lower::expr::{bin, cmp, un};
use crate::lower::value::{ArrayVal, Value};
use crate::lower::{not, Translator};

pub(super) fn histogram(t: &mut Translator, a: &mut Args) -> Result<Value> {
    let span = a.span;
    a.arity(t, 1, 2)?;
    let (v, s) = a.take();
    let bins = a.pos.pop().or_else(|| a.kw("bins"));
    for unsupported in ["weights", "density"] {
        if let Some((w, ws)) = a.kw(unsupported) {
            if !matches!(w, Value::None) {
                return Err(t.err(
                    ErrorKind::Unsupported,
                    ws,
                    format!("np.histogram's `{unsupported}` is not supported in filters"),
                ));
            }
        }
    }
    let x = as_f64(&t.array_of(v, s)?);
    let x = super::in_slot(t, x);
    let range = a.kw("range");
    match bins {
        Some((b @ (Value::Array(_) | Value::Tuple(_)), bs)) => {
            if let Some((r, rs)) = range {
                if !matches!(r, Value::None) {
                    // NumPy ignores `range` when given the edges.
                    let _ = r;
                    return Err(t.err(
                        ErrorKind::Unsupported,
                        rs,
                        "np.histogram with both bin edges and a range",
                    ));
                }
            }
            let edges = t.array_of(b, bs)?;
            explicit_edges(t, &x, edges, span, bs)
        }
        Some((Value::Str(_), bs)) => Err(t
            .err(
                ErrorKind::Unsupported,
                bs,
                "np.histogram's bin estimators ('auto', 'fd' ...) are not supported in filters",
            )
            .hint("give a number of bins or the bin edges")),
        Some((b, bs)) => {
            let n = t
                .int(b, bs, "bins")
                .map_err(|e| e.hint("give a number of bins or an array of bin edges"))?;
            let n = t.stable(n, Ty::I64);
            if let Some(k) = crate::ir::fold::const_expr(&n) {
                if k.i() < 1 {
                    return Err(t.err(
                        ErrorKind::Type,
                        bs,
                        "`bins` must be positive, when an integer",
                    ));
                }
            }
            t.check_plain(
                cmp(CmpOp::Ge, n.clone(), Expr::I64(1)),
                Exception::ValueError,
                "`bins` must be positive, when an integer",
                bs,
            );
            equal_width(t, &x, n, range, span)
        }
        None => equal_width(t, &x, Expr::I64(10), range, span),
    }
}

/// `(lo, hi)`: the range given, or the data's min and max; an empty one widened by 0.5 each way.
fn outer_edges(
    t: &mut Translator,
    x: &ArrayVal,
    range: Option<(Value, Span)>,
    span: Span,
) -> Result<(Expr, Expr)> {
    let (lo, hi) = (t.temp(Ty::F64), t.temp(Ty::F64));
    let finite = bin(
        BinOp::And,
        un(UnOp::IsFinite, Expr::Var(lo)),
        un(UnOp::IsFinite, Expr::Var(hi)),
    );
    match range {
        Some((Value::Tuple(r), rs)) if r.len() == 2 => {
            let mut r = r.into_iter();
            let l = t.float(r.next().unwrap(), rs, "the range")?;
            let h = t.float(r.next().unwrap(), rs, "the range")?;
            t.emit(Stmt::Assign(lo, l));
            t.emit(Stmt::Assign(hi, h));
            // NumPy's order of checks: `lo > hi` first, so a NaN bound is "not finite".
            t.check_plain(
                not(cmp(CmpOp::Gt, Expr::Var(lo), Expr::Var(hi))),
                Exception::ValueError,
                "max must be larger than min in range parameter.",
                rs,
            );
            t.check_plain(
                finite,
                Exception::ValueError,
                "supplied range of [lo, hi] is not finite",
                rs,
            );
        }
        Some((Value::None, _)) | None => {
            t.emit(Stmt::Assign(lo, Expr::F64(0.0)));
            t.emit(Stmt::Assign(hi, Expr::F64(1.0)));
            let ((), auto) = t.nested(|t| {
                let l = t.reduce(ReduceOp::Min, x, span, None)?;
                let h = t.reduce(ReduceOp::Max, x, span, None)?;
                t.emit(Stmt::Assign(lo, l));
                t.emit(Stmt::Assign(hi, h));
                t.check_plain(
                    finite,
                    Exception::ValueError,
                    "autodetected range of [min, max] is not finite",
                    span,
                );
                Ok(())
            })?;
            t.emit(Stmt::If(
                cmp(CmpOp::Gt, x.len.clone(), Expr::I64(0)),
                auto,
                vec![],
            ));
        }
        Some((_, rs)) => {
            return Err(t.err(ErrorKind::Type, rs, "range must be a (min, max) tuple"))
        }
    }
    let same = cmp(CmpOp::Eq, Expr::Var(lo), Expr::Var(hi));
    t.emit(Stmt::If(
        same,
        vec![
            Stmt::Assign(lo, bin(BinOp::Sub, Expr::Var(lo), Expr::F64(0.5))),
            Stmt::Assign(hi, bin(BinOp::Add, Expr::Var(hi), Expr::F64(0.5))),
        ],
        vec![],
    ));
    Ok((Expr::Var(lo), Expr::Var(hi)))
}

/// `bins` equal-width bins over the range.
fn equal_width(
    t: &mut Translator,
    x: &ArrayVal,
    bins: Expr,
    range: Option<(Value, Span)>,
    span: Span,
) -> Result<Value> {
    let (lo, hi) = outer_edges(t, x, range, span)?;
    let nbins = t.stable(Expr::Cast(Ty::F64, bins.clone().boxed()), Ty::F64);
    let delta = t.stable(bin(BinOp::Sub, hi.clone(), lo.clone()), Ty::F64);
    let num = bin(BinOp::Add, bins.clone(), Expr::I64(1));
    // Computed once: the loop below reads two edges per value.
    let edges = super::sequences::linspace_values(t, lo.clone(), hi.clone(), num, true);
    let edges = super::in_slot(t, edges);
    // k stays in 0..=bins by the arithmetic; the clamp makes every load provably in range.
    let edge = |k: Expr| {
        edges.at(bin(
            BinOp::Max,
            bin(BinOp::Min, k, bins.clone()),
            Expr::I64(0),
        ))
    };
    // NumPy's check of the edges: a range too narrow (or too wide: `hi - lo` overflows) for
    // `bins` distinct edges raises. A NaN edge compares false, and passes, as in NumPy.
    counted_loop(t, bins.clone(), |t, k| {
        let (here, next) = (edge(k.clone()), edge(bin(BinOp::Add, k, Expr::I64(1))));
        t.check(
            not(cmp(CmpOp::Ge, here, next)),
            Exception::ValueError,
            "Too many bins for data range. Cannot create {a} finite-sized bins.",
            span,
            bins.clone(),
            Expr::I64(0),
        );
        Ok(())
    })?;
    let last = bin(BinOp::Sub, bins.clone(), Expr::I64(1));
    let counts = zeros(t, bins.clone(), Ty::I64, "%histogram");
    counted_loop(t, x.len.clone(), |t, i| {
        let v = t.stable(x.at(i), Ty::F64);
        let inside = bin(
            BinOp::And,
            cmp(CmpOp::Ge, v.clone(), lo.clone()),
            cmp(CmpOp::Le, v.clone(), hi.clone()),
        );
        let ((), count) = t.nested(|t| {
            // k = int((v - lo) / (hi - lo) * bins), the top edge in the last bin.
            let f = bin(
                BinOp::Mul,
                bin(
                    BinOp::Div,
                    bin(BinOp::Sub, v.clone(), lo.clone()),
                    delta.clone(),
                ),
                nbins.clone(),
            );
            let k = t.temp(Ty::I64);
            t.emit(Stmt::Assign(
                k,
                bin(BinOp::Min, Expr::Cast(Ty::I64, f.boxed()), last.clone()),
            ));
            let kv = Expr::Var(k);
            // NumPy's corrections for values within an ulp of an edge.
            t.emit(Stmt::If(
                cmp(CmpOp::Lt, v.clone(), edge(kv.clone())),
                vec![Stmt::Assign(k, bin(BinOp::Sub, kv.clone(), Expr::I64(1)))],
                vec![],
            ));
            let up = bin(
                BinOp::And,
                cmp(
                    CmpOp::Ge,
                    v.clone(),
                    edge(bin(BinOp::Add, kv.clone(), Expr::I64(1))),
                ),
                cmp(CmpOp::Ne, kv.clone(), last.clone()),
            );
            t.emit(Stmt::If(
                up,
                vec![Stmt::Assign(k, bin(BinOp::Add, kv.clone(), Expr::I64(1)))],
                vec![],
            ));
            let k = bin(BinOp::Max, bin(BinOp::Min, kv, last.clone()), Expr::I64(0));
            let k = t.stable(k, Ty::I64);
            t.emit(Stmt::Store(
                counts,
                k.clone(),
                bin(BinOp::Add, Expr::Load(counts, k.boxed()), Expr::I64(1)),
            ));
            Ok(())
        })?;
        t.emit(Stmt::If(inside, count, vec![]));
        Ok(())
    })?;
    Ok(Value::Tuple(vec![
        Value::Array(t.view(counts)),
        Value::Array(edges.clone()),
    ]))
}

/// Bins between given edges, which must not decrease.
fn explicit_edges(
    t: &mut Translator,
    x: &ArrayVal,
    edges: ArrayVal,
    span: Span,
    bs: Span,
) -> Result<Value> {
    let edges = super::in_slot(t, edges);
    let e = as_f64(&edges);
    let ne = t.stable(e.len.clone(), Ty::I64);
    t.check_plain(
        cmp(CmpOp::Ge, ne.clone(), Expr::I64(1)),
        Exception::IndexError,
        "index -1 is out of bounds for axis 0 with size 0",
        bs,
    );
    let nb = t.stable(bin(BinOp::Sub, ne.clone(), Expr::I64(1)), Ty::I64);
    let j = Expr::Var(e.index);
    let falls = ArrayVal {
        len: nb.clone(),
        ty: Ty::Bool,
        index: e.index,
        elem: cmp(
            CmpOp::Gt,
            e.elem.clone(),
            e.at(bin(BinOp::Add, j, Expr::I64(1))),
        ),
    };
    let decreasing = t.reduce(ReduceOp::Any, &falls, bs, None)?;
    t.check_plain(
        not(decreasing),
        Exception::ValueError,
        "`bins` must increase monotonically, when an array",
        bs,
    );
    // below[k]: how many values sort before edge k (at or before it, for the last edge).
    let below = tabulate(t, ne.clone(), "%histogram_edges", |t, k| {
        let ek = t.stable(e.at(k.clone()), Ty::F64);
        let is_last = cmp(CmpOp::Eq, k, nb.clone());
        let v = x.elem.clone();
        let counted = Expr::Select(
            is_last.boxed(),
            not(sorts_before(ek.clone(), v.clone())).boxed(),
            sorts_before(v, ek).boxed(),
        );
        let hit = ArrayVal {
            elem: counted,
            ty: Ty::Bool,
            ..x.clone()
        };
        Ok((t.reduce(ReduceOp::Count, &hit, span, None)?, Ty::I64))
    })?;
    let b = Expr::Var(below.index);
    let counts = ArrayVal {
        len: nb,
        elem: bin(
            BinOp::Sub,
            below.at(bin(BinOp::Add, b, Expr::I64(1))),
            below.elem.clone(),
        ),
        ..below.clone()
    };
    Ok(Value::Tuple(vec![
        Value::Array(counts),
        Value::Array(edges),
    ]))
}
