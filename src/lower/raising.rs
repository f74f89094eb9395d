//! `raise E("message")` and `assert test, "message"`: the same exception class and message at run
//! time, through the checks every backend already implements.

use super::{Translator, Value};
use crate::error::{ErrorKind, Exception, Result, Span};
use crate::ir::Expr;
use crate::syntax::ast::{self, ExprKind};

/// The exception classes a filter may raise, by their Python names.
const RAISABLE: &[(&str, Exception)] = &[
    ("ValueError", Exception::ValueError),
    ("IndexError", Exception::IndexError),
    ("TypeError", Exception::TypeError),
    ("RuntimeError", Exception::RuntimeError),
    ("ZeroDivisionError", Exception::ZeroDivisionError),
    ("OverflowError", Exception::OverflowError),
    ("ArithmeticError", Exception::ArithmeticError),
    ("AssertionError", Exception::AssertionError),
    ("NotImplementedError", Exception::NotImplementedError),
];

impl Translator<'_> {
    /// `raise Class`, `raise Class()` or `raise Class("message")`.
    pub(super) fn lower_raise(&mut self, exc: Option<&ast::Expr>, span: Span) -> Result<()> {
        let Some(exc) = exc else {
            return Err(self
                .err(
                    ErrorKind::Unsupported,
                    span,
                    "a bare `raise` re-raises the exception being handled, and a filter handles none",
                )
                .hint("raise a new exception, e.g. `raise ValueError(\"bad window\")`"));
        };
        let (class, args) = match &exc.kind {
            ExprKind::Call {
                func,
                args,
                keywords,
            } if keywords.is_empty() => (&**func, args.as_slice()),
            _ => (exc, &[][..]),
        };
        let exception = self.exception_class(class)?;
        let message = match args {
            [] => String::new(),
            [m] => self.message(m)?,
            [_, extra, ..] => {
                return Err(self
                    .err(
                        ErrorKind::Unsupported,
                        extra.span,
                        "an exception with several arguments is not supported",
                    )
                    .hint("pass one message string"))
            }
        };
        self.check_plain(Expr::Bool(false), exception, &message, span);
        Ok(())
    }

    /// `assert test` / `assert test, "message"`: an `AssertionError` when the test is false.
    pub(super) fn lower_assert(
        &mut self,
        test: &ast::Expr,
        msg: Option<&ast::Expr>,
        span: Span,
    ) -> Result<()> {
        let cond = self.condition(test)?;
        let message = match msg {
            Some(m) => self.message(m)?,
            None => String::new(),
        };
        self.check_plain(cond, Exception::AssertionError, &message, span);
        Ok(())
    }

    fn exception_class(&mut self, class: &ast::Expr) -> Result<Exception> {
        let known = match &class.kind {
            ExprKind::Name(n) if !self.is_user_name(n) => {
                RAISABLE.iter().find(|(name, _)| name == n).map(|(_, e)| *e)
            }
            _ => None,
        };
        known.ok_or_else(|| {
            let names: Vec<&str> = RAISABLE.iter().map(|(n, _)| *n).collect();
            let what = match &class.kind {
                ExprKind::Name(n) if !self.is_user_name(n) => format!("`{n}`"),
                _ => "this".to_string(),
            };
            self.err(
                ErrorKind::Unsupported,
                class.span,
                format!("{what} cannot be raised by a filter: ndjit raises {} of Python's built-in exception classes", names.len()),
            )
            .hint(format!("raise one of {}", names.join(", ")))
        })
    }

    /// Whether `name` is the user's own (a local, parameter or bound value), shadowing a builtin.
    fn is_user_name(&self, name: &str) -> bool {
        self.locals.contains(name)
            || self.names.contains_key(name)
            || self.bindings.get(name).is_some()
    }

    /// The message of an exception: a string known at compile time.
    fn message(&mut self, m: &ast::Expr) -> Result<String> {
        if let ast::ExprKind::FString(template) = &m.kind {
            // The fields' values would need Python's formatting at run time: the message says
            // they are missing rather than pass the template off as Python's text.
            let template = template.replace("{a}", "{ a }").replace("{b}", "{ b }");
            return Ok(format!(
                "{template} (ndjit does not fill in the fields of an f-string)"
            ));
        }
        let text = match self.expr(m)? {
            Value::Str(s) => s,
            other => {
                return Err(self
                    .err(
                        ErrorKind::Unsupported,
                        m.span,
                        format!(
                            "the exception message is {}; only a string known at compile time is supported",
                            other.describe()
                        ),
                    )
                    .hint("write the message as a string literal"))
            }
        };
        // Run-time messages fill in `{a}` and `{b}` with values: a user's text must not.
        if text.contains("{a}") || text.contains("{b}") {
            return Err(self
                .err(
                    ErrorKind::Unsupported,
                    m.span,
                    "the message contains `{a}` or `{b}`, which ndjit's run-time messages reserve",
                )
                .hint("reword the message"));
        }
        Ok(text)
    }
}
