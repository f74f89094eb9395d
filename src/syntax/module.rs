//! A source with several top-level functions: the filter and the helpers it calls.
//!
//! Python callbacks call functions defined next to them (`def clamp(v): ...` at module level, a
//! function passed into a factory). The Python front end sends those along in the same source; a
//! C or Rust caller may write them there too. The filter is the one function that no other one
//! mentions; the others are helpers, inlined where they are called. `name = other` at the top level
//! is an alias (`func = smooth`: how a factory's argument reaches a closure).

use super::ast::{Expr, ExprKind, Function, Stmt, StmtKind};
use super::visit::{for_each_stmt_expr, names_in};
use crate::error::{Error, ErrorKind, Result};

/// A top-level statement of a multi-function source.
enum Item {
    Function(String, Function),
    Alias(String, String, Stmt),
}

/// The filter and its helpers (by the names the code calls them), from top-level statements.
pub(super) fn split(stmts: Vec<Stmt>) -> Result<(Function, Vec<(String, Function)>)> {
    let mut items = Vec::new();
    for s in stmts {
        items.push(item(s)?);
    }
    refuse_redefinitions(&items)?;
    let mentioned_by_others = |name: &str, me: usize| {
        items.iter().enumerate().any(|(k, it)| {
            k != me
                && match it {
                    Item::Function(_, f) => mentions(f).iter().any(|n| n == name),
                    Item::Alias(_, target, _) => target == name,
                }
        })
    };
    let roots: Vec<usize> = (0..items.len())
        .filter(|&k| match &items[k] {
            Item::Function(name, _) => !mentioned_by_others(name, k),
            Item::Alias(..) => false,
        })
        .collect();
    let root = match roots.as_slice() {
        [one] => *one,
        _ => {
            let (span, detail) = match roots.get(1) {
                Some(&k) => match &items[k] {
                    Item::Function(name, f) => {
                        (f.span, format!("`{name}` is not called by the filter"))
                    }
                    Item::Alias(..) => unreachable!("aliases are never roots"),
                },
                None => (
                    function_span(&items),
                    "every function is called by another one".to_string(),
                ),
            };
            return Err(Error::new(
                ErrorKind::Syntax,
                span,
                format!("expected a single expression, lambda or def as the filter: {detail}"),
            )
            .hint("write one filter function; the other functions must be helpers it calls"));
        }
    };
    let mut functions = Vec::new();
    let mut aliases = Vec::new();
    let mut filter = None;
    for (k, it) in items.into_iter().enumerate() {
        match it {
            Item::Function(_, f) if k == root => filter = Some(f),
            Item::Function(name, f) => functions.push((name, f)),
            Item::Alias(name, target, s) => aliases.push((name, target, s)),
        }
    }
    let Some(filter) = filter else {
        unreachable!("the root is a function")
    };
    resolve_aliases(&mut functions, aliases)?;
    Ok((filter, functions))
}

/// A name defined twice (`def h` twice, or `def h` and `h = g`): Python calls the last
/// definition, and code that redefines a helper is more likely a slip than meant; refused.
fn refuse_redefinitions(items: &[Item]) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    for it in items {
        let (name, span) = match it {
            Item::Function(name, f) => (name, f.span),
            Item::Alias(name, _, s) => (name, s.span),
        };
        if !seen.insert(name) {
            return Err(Error::new(
                ErrorKind::Syntax,
                span,
                format!("`{name}` is defined twice (Python would call the last definition)"),
            )
            .hint("keep one definition of each function"));
        }
    }
    Ok(())
}

fn item(s: Stmt) -> Result<Item> {
    match s.kind {
        StmtKind::Expr(Expr {
            kind: ExprKind::Lambda(f),
            ..
        }) => {
            // A bare lambda (the Python front end's form of a lambda filter) is named by nothing.
            let name = f.name.clone().unwrap_or_else(|| "<lambda>".into());
            Ok(Item::Function(name, *f))
        }
        StmtKind::Assign {
            ref targets,
            ref value,
        } if targets.len() == 1 => match (&targets[0].kind, &value.kind) {
            (ExprKind::Name(n), ExprKind::Lambda(f)) => {
                Ok(Item::Function(n.clone(), (**f).clone()))
            }
            (ExprKind::Name(n), ExprKind::Name(target)) => {
                Ok(Item::Alias(n.clone(), target.clone(), s.clone()))
            }
            _ => Err(not_a_function(&s)),
        },
        _ => Err(not_a_function(&s)),
    }
}

fn not_a_function(s: &Stmt) -> Error {
    Error::new(
        ErrorKind::Syntax,
        s.span,
        "expected a single expression, lambda or def, with helper functions beside it",
    )
    .hint("statements belong inside `def f(x): ...`; bind values instead of assigning them at the top level")
}

fn function_span(items: &[Item]) -> crate::error::Span {
    items
        .first()
        .map(|it| match it {
            Item::Function(_, f) => f.span,
            Item::Alias(_, _, s) => s.span,
        })
        .unwrap_or_default()
}

/// The names a function's body and defaults mention.
fn mentions(f: &Function) -> Vec<String> {
    let mut out = Vec::new();
    for_each_stmt_expr(&f.body, &mut |e| names_in(e, &mut out));
    for p in &f.params {
        if let Some(d) = &p.default {
            names_in(d, &mut out);
        }
    }
    out
}

/// Adds each alias as a helper of its own name: `func = smooth` makes `func(w)` inline `smooth`.
fn resolve_aliases(
    functions: &mut Vec<(String, Function)>,
    mut aliases: Vec<(String, String, Stmt)>,
) -> Result<()> {
    // Chains (`a = b`, `b = smooth`) resolve in as many rounds as they are long.
    while !aliases.is_empty() {
        let before = aliases.len();
        aliases.retain(|(name, target, _)| {
            match functions
                .iter()
                .find(|(n, _)| n == target)
                .map(|(_, f)| f.clone())
            {
                Some(f) => {
                    functions.push((name.clone(), f));
                    false
                }
                None => true,
            }
        });
        if aliases.len() == before {
            let (name, target, s) = &aliases[0];
            return Err(Error::new(
                ErrorKind::Syntax,
                s.span,
                format!("`{name} = {target}` at the top level must name a helper function"),
            )
            .hint("bind values (closures, extra_arguments) instead of assigning them beside the filter"));
        }
    }
    Ok(())
}
