//! Walking the syntax tree: the direct children of an expression, and every expression of a
//! statement list, so that passes over the tree (renaming, free names) list the variants once.
//! Each walk exists read-only and mutable, generated from one body by a macro.

use super::ast::{Expr, ExprKind, Stmt, StmtKind};

/// The body of a child walk over `$kind` (an `&ExprKind` or `&mut ExprKind`); `$iter` is `iter`
/// or `iter_mut`, and `$($m)?` is `mut` for the mutable walk.
macro_rules! children {
    ($kind:expr, $f:ident, $iter:ident $(, $m:tt)?) => {
        match $kind {
            ExprKind::Tuple(items) | ExprKind::List(items) | ExprKind::BoolOp(_, items) => {
                items.$iter().for_each($f)
            }
            ExprKind::Unary(_, a) | ExprKind::Attribute(a, _) => $f(a),
            ExprKind::Binary(_, a, b) | ExprKind::Subscript(a, b) => {
                $f(a);
                $f(b);
            }
            ExprKind::Compare(a, rest) => {
                $f(a);
                rest.$iter().for_each(|(_, e)| $f(e));
            }
            ExprKind::IfExp { test, body, orelse } => {
                $f(test);
                $f(body);
                $f(orelse);
            }
            ExprKind::Call {
                func,
                args,
                keywords,
            } => {
                $f(func);
                args.$iter().for_each(&mut $f);
                keywords.$iter().for_each(|k| $f(&$($m)? k.value));
            }
            ExprKind::Comp(c) => {
                for clause in c.clauses.$iter() {
                    $f(&$($m)? clause.target);
                    $f(&$($m)? clause.iter);
                    clause.ifs.$iter().for_each(&mut $f);
                }
                $f(&$($m)? c.elt);
            }
            ExprKind::Slice(a, b, c) => {
                for x in [a, b, c].into_iter().flatten() {
                    $f(x);
                }
            }
            ExprKind::Name(_)
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Bool(_)
            | ExprKind::None
            | ExprKind::Str(_)
            | ExprKind::FString(_)
            | ExprKind::Ellipsis
            | ExprKind::Lambda(_)
            | ExprKind::Unsupported(_) => {}
        }
    };
}

/// The body of a statement walk: `$f` gets every expression the statements hold directly,
/// recursing into nested blocks with `$recurse`.
macro_rules! statements {
    ($stmts:expr, $f:ident, $recurse:ident, $iter:ident $(, $m:tt)?) => {
        for s in $stmts {
            match &$($m)? s.kind {
                StmtKind::Expr(e) | StmtKind::Return(Some(e)) | StmtKind::Raise { exc: Some(e) } => {
                    $f(e)
                }
                StmtKind::Assign { targets, value } => {
                    targets.$iter().for_each(&mut *$f);
                    $f(value);
                }
                StmtKind::AugAssign { target, value, .. } => {
                    $f(target);
                    $f(value);
                }
                StmtKind::If { test, body, orelse } | StmtKind::While { test, body, orelse } => {
                    $f(test);
                    $recurse(body, $f);
                    $recurse(orelse, $f);
                }
                StmtKind::For {
                    target,
                    iter,
                    body,
                    orelse,
                } => {
                    $f(target);
                    $f(iter);
                    $recurse(body, $f);
                    $recurse(orelse, $f);
                }
                StmtKind::Assert { test, msg } => {
                    $f(test);
                    if let Some(m) = msg {
                        $f(m);
                    }
                }
                StmtKind::Return(None)
                | StmtKind::Raise { exc: None }
                | StmtKind::Break
                | StmtKind::Continue
                | StmtKind::Pass
                | StmtKind::Import(_)
                | StmtKind::Unsupported(_) => {}
            }
        }
    };
}

/// Calls `f` on each direct sub-expression of `e`.
pub fn for_each_child(e: &Expr, mut f: impl FnMut(&Expr)) {
    children!(&e.kind, f, iter)
}

/// Calls `f` on each direct sub-expression of `e`, mutably.
pub fn for_each_child_mut(e: &mut Expr, mut f: impl FnMut(&mut Expr)) {
    children!(&mut e.kind, f, iter_mut, mut)
}

/// Calls `f` on every expression directly held by the statements (not their sub-expressions),
/// recursing into nested blocks; lambdas' and defs' bodies are not entered.
pub fn for_each_stmt_expr(stmts: &[Stmt], f: &mut impl FnMut(&Expr)) {
    statements!(stmts, f, for_each_stmt_expr, iter)
}

/// [`for_each_stmt_expr`], mutably.
pub fn for_each_stmt_expr_mut(stmts: &mut [Stmt], f: &mut impl FnMut(&mut Expr)) {
    statements!(stmts, f, for_each_stmt_expr_mut, iter_mut, mut)
}

/// Every name an expression mentions (lambda parameters included: an over-approximation).
pub fn names_in(e: &Expr, out: &mut Vec<String>) {
    match &e.kind {
        ExprKind::Name(n) => out.push(n.clone()),
        ExprKind::Lambda(f) => {
            for_each_stmt_expr(&f.body, &mut |e| names_in(e, out));
        }
        _ => for_each_child(e, |c| names_in(c, out)),
    }
}
