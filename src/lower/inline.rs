//! Calls to helper functions, inlined where they are called.
//!
//! A helper's body is lowered in place with its parameters bound to the argument values. Its
//! parameters and locals are renamed apart (`v` becomes `v'@3` at the third inlined call), so
//! they never meet the caller's names, while its free names resolve as Python resolves them: in
//! the module (bound values, other helpers, NumPy), never in the caller's locals. A body that is
//! one `return` is an expression; any other body runs inside a one-trip loop, where `return`
//! stores the result in a hidden local and leaves the loop (and every loop it is in).

use super::rebind;
use super::{collect_locals, Translator, Value};
use crate::error::{arity_message, ErrorKind, Exception, Result, Span};
use crate::ir::{Expr, Stmt, Ty, Var};
use crate::syntax::ast::{self, StmtKind};
use std::collections::HashMap;

/// The most helper calls one filter may inline: each copies the helper's code.
pub const MAX_INLINED_CALLS: u32 = 256;

/// Where the helper being inlined delivers its result.
#[derive(Clone)]
pub(super) struct Return {
    /// The hidden local holding the result.
    name: String,
    /// Set by a `return` inside one of the helper's loops, so that each loop leaves in turn.
    done: Var,
}

/// Inlining state of one lowering pass.
#[derive(Default)]
pub(super) struct Inliner {
    /// Helpers being inlined, outermost first (for the recursion check).
    stack: Vec<usize>,
    /// Calls inlined so far: numbers each call's renamed names.
    count: u32,
    pub(super) ret: Option<Return>,
}

impl Inliner {
    /// Whether the name being read comes from code inlined from a helper that cannot see the
    /// filter's own parameters and locals.
    pub(super) fn in_helper(&self) -> bool {
        !self.stack.is_empty()
    }
}

/// Whether a name was renamed apart for an inlined call.
pub(super) fn is_scoped(name: &str) -> bool {
    name.contains("'@")
}

impl Translator<'_> {
    /// The helper a name refers to, if any.
    pub(super) fn helper(&self, name: &str) -> Option<usize> {
        self.program.helpers.iter().position(|(n, _)| n == name)
    }

    /// `helper(args...)`: the helper's body, inlined.
    pub(super) fn call_helper(
        &mut self,
        k: usize,
        args: &[ast::Expr],
        keywords: &[ast::Keyword],
        span: Span,
    ) -> Result<Value> {
        let (name, f) = &self.program.helpers[k];
        if let Some(at) = self.inline.stack.iter().position(|&h| h == k) {
            let mut cycle: Vec<&str> = self.inline.stack[at..]
                .iter()
                .map(|&h| self.program.helpers[h].0.as_str())
                .collect();
            cycle.push(name);
            return Err(self
                .err(
                    ErrorKind::Unsupported,
                    span,
                    format!(
                        "recursion cannot be inlined: {}",
                        cycle
                            .iter()
                            .map(|n| format!("`{n}`"))
                            .collect::<Vec<_>>()
                            .join(" calls ")
                    ),
                )
                .hint("rewrite the recursion as a loop"));
        }
        self.inline.count += 1;
        if self.inline.count > MAX_INLINED_CALLS {
            return Err(self
                .err(
                    ErrorKind::Limit,
                    span,
                    format!("more than {MAX_INLINED_CALLS} helper calls to inline"),
                )
                .hint("call helpers from fewer places, or loop over the calls"));
        }
        let scope = format!("'@{}", self.inline.count);
        let (name, f) = (name.clone(), f.clone());
        let params = self.helper_arguments(&name, &f, args, keywords, span)?;

        // Rename the helper's parameters and locals apart from every other name.
        let mut locals = std::collections::HashSet::new();
        collect_locals(&f.body, &mut locals);
        locals.extend(f.params.iter().map(|p| p.name.clone()));
        let map: HashMap<String, String> = locals
            .iter()
            .map(|n| (n.clone(), format!("{n}{scope}")))
            .collect();
        let mut body = f.body.clone();
        rebind::rename_stmts(&mut body, &map);
        let scoped: Vec<String> = f.params.iter().map(|p| map[&p.name].clone()).collect();
        for (p, v) in scoped.iter().zip(params) {
            self.names.insert(p.clone(), v);
        }
        let (body, copied) = rebind::version_params(&scoped, &body);
        for rebind::Copied {
            name: p,
            span: at,
            write,
        } in copied
        {
            // (A rebinding leaves the caller's array as it is; `check_aliasing` below refuses
            // writes into a version that may still be it.)
            let (what, copy) = match self.names.get(&p) {
                Some(Value::Scalar(..)) => continue,
                Some(Value::List(..)) => ("list", "a = list(a)"),
                _ => ("array", "a = a.copy()"),
            };
            if write == rebind::Write::InPlace {
                return Err(self
                    .err(
                        ErrorKind::Unsupported,
                        at,
                        format!(
                            "helper `{name}` writes into its argument `{}`, which would change \
                             the caller's {what}",
                            rebind::display(&p)
                        ),
                    )
                    .hint(format!("copy it in the helper first, e.g. `{copy}`")));
            }
        }
        let mut own = std::collections::HashSet::new();
        collect_locals(&body, &mut own);
        self.guard_unbound(&body, &own);
        self.guard_sentinels(&body, &own, false);
        self.locals.extend(own);
        let mut changed = rebind::changed_lists(&body);
        changed.retain(|n| !self.sorted_arrays.contains(n));
        self.sortable.extend(rebind::sorted_only(&body));
        self.assigned_once.extend(
            super::tuples::assigned_once_at_top(&body)
                .into_iter()
                .filter(|n| !changed.contains(n)),
        );
        self.changed_lists.extend(changed);

        let saved_loops = std::mem::take(&mut self.loops);
        let saved_ret = self.inline.ret.take();
        self.inline.stack.push(k);
        let r = self.inline_body(&name, &scope, &body, f.span);
        self.inline.stack.pop();
        self.inline.ret = saved_ret;
        self.loops = saved_loops;
        let v = r?;
        rebind::check_aliasing(
            &body,
            |n| self.may_hold_array(n) || self.bound_object(n) || self.helper_gives_bound(n),
            |n| self.items_are_views(n),
            |n| self.helper(n).is_some(),
            |n| {
                scoped.iter().any(|p| p == n)
                    || self.bound_object(n)
                    || (!self.locals.contains(n) && self.bindings.get(n).is_some())
            },
        )?;
        Ok(v)
    }

    /// The values of a helper's parameters: positional arguments, keywords, then defaults.
    fn helper_arguments(
        &mut self,
        name: &str,
        f: &ast::Function,
        args: &[ast::Expr],
        keywords: &[ast::Keyword],
        span: Span,
    ) -> Result<Vec<Value>> {
        if args.len() > f.params.len() {
            return Err(self.err(
                ErrorKind::Arity,
                span,
                arity_message(name, &f.params.len().to_string(), "positional ", args.len()),
            ));
        }
        if let Some(kw) = keywords
            .iter()
            .find(|kw| !f.params.iter().any(|p| p.name == kw.name))
        {
            return Err(self.err(
                ErrorKind::Arity,
                kw.span,
                format!(
                    "`{name}()` got an unexpected keyword argument `{}`",
                    kw.name
                ),
            ));
        }
        let mut values = Vec::with_capacity(f.params.len());
        for (i, p) in f.params.iter().enumerate() {
            let given = args.get(i).or_else(|| {
                keywords
                    .iter()
                    .find(|kw| kw.name == p.name)
                    .map(|kw| &kw.value)
            });
            // Python evaluates each argument once, before the body runs.
            let v = match (given, &p.default) {
                (Some(e), _) | (None, Some(e)) => self.expr(e)?,
                (None, None) => {
                    return Err(self.err(
                        ErrorKind::Arity,
                        span,
                        format!("`{name}()` missing required argument `{}`", p.name),
                    ))
                }
            };
            values.push(self.stabilize(v));
        }
        Ok(values)
    }

    /// Lowers the renamed body and returns the helper's result.
    fn inline_body(
        &mut self,
        name: &str,
        scope: &str,
        body: &[ast::Stmt],
        span: Span,
    ) -> Result<Value> {
        if let [ast::Stmt {
            kind: StmtKind::Return(Some(e)),
            ..
        }] = body
        {
            return self.expr(e);
        }
        let ret = format!("%ret{scope}");
        self.locals.insert(ret.clone());
        if returns(body) == 1
            && matches!(body.last(), Some(s) if matches!(s.kind, StmtKind::Return(_)))
        {
            // Returned once, by the last statement: the result may be a tuple or a Counter,
            // which a name holds only where it is assigned once (`tuples.rs`).
            self.assigned_once.insert(ret.clone());
        }
        let done = self.temp(Ty::Bool);
        self.emit(Stmt::Assign(done, Expr::Bool(false)));
        self.inline.ret = Some(Return {
            name: ret.clone(),
            done,
        });
        let falls_off = !body
            .last()
            .is_some_and(|s| matches!(s.kind, StmtKind::Return(_) | StmtKind::Raise { .. }));
        let (_, mut inner) = self.nested(|t| {
            t.stmts(body)?;
            if falls_off {
                t.check_plain(
                    Expr::Bool(false),
                    Exception::TypeError,
                    &format!("helper `{name}` returned None where a value is needed"),
                    span,
                );
            }
            Ok(())
        })?;
        inner.push(Stmt::Break);
        self.emit(Stmt::Loop {
            body: inner,
            latch: vec![],
        });
        self.read_name(&ret, span)
    }

    /// `return value` inside an inlined helper: store the result and leave.
    pub(super) fn helper_return(&mut self, value: Option<&ast::Expr>, span: Span) -> Result<()> {
        let Some(ret) = self.inline.ret.clone() else {
            unreachable!("only called while inlining")
        };
        let v = match value {
            Some(value) => (self.expr(value)?, value.span),
            None => (Value::None, span),
        };
        let (v, at) = match v {
            (Value::None, at) => {
                return Err(self
                    .err(
                        ErrorKind::Unsupported,
                        at,
                        "a helper that returns None cannot give the filter a value",
                    )
                    .hint("return a number or an array"))
            }
            v => v,
        };
        self.assign_name(&ret.name, v, at)?;
        if !self.loops.is_empty() {
            self.emit(Stmt::Assign(ret.done, Expr::Bool(true)));
        }
        self.emit(Stmt::Break);
        Ok(())
    }

    /// After a loop inside an inlined helper: leave the enclosing loop too if it returned.
    pub(super) fn leave_if_returned(&mut self) {
        if let Some(ret) = &self.inline.ret {
            let done = ret.done;
            self.emit(Stmt::If(Expr::Var(done), vec![Stmt::Break], vec![]));
        }
    }
}

/// The `return` statements in `body`, nested ones included (a nested `def` is not a statement
/// ndjit lowers).
fn returns(body: &[ast::Stmt]) -> usize {
    body.iter()
        .map(|s| match &s.kind {
            StmtKind::Return(_) => 1,
            StmtKind::If { body, orelse, .. }
            | StmtKind::For { body, orelse, .. }
            | StmtKind::While { body, orelse, .. } => returns(body) + returns(orelse),
            _ => 0,
        })
        .sum()
}
