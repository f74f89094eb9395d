//! Recursive-descent parser for the Python subset, following Python's grammar levels.
//!
//! The parser guards its own recursion with a nesting limit so that hostile input (`((((...`,
//! `- - - - x`) gives an [`ErrorKind::Limit`] error instead of a stack overflow. Constructs that are
//! Python but not in the subset are rejected here when the parser can name them precisely (`try`,
//! `class`, dict literals ...); everything else is left to the lowering, which knows the types.

use super::ast::*;
use super::lexer::{Tok, Token};
use crate::error::{Error, ErrorKind, Result, Span};

/// The deepest nesting of expressions and blocks the parser accepts: enough for CPython's 200
/// nested brackets (the lexer's own limit) with the expression around them.
/// A chain `a + b + c` builds a left-deep tree, so each link counts as one level too: later stages
/// recurse over the tree and must never overflow the stack.
pub const NEST_LIMIT: u32 = 256;

pub struct Parser<'t> {
    toks: &'t [Token],
    i: usize,
    depth: u32,
}

/// Parses a module: a sequence of statements.
pub fn parse_module(toks: &[Token]) -> Result<Vec<Stmt>> {
    let mut p = Parser {
        toks,
        i: 0,
        depth: 0,
    };
    let mut out = Vec::new();
    while p.peek() != &Tok::Eof {
        if p.eat_tok(&Tok::Newline) {
            continue;
        }
        p.statement(&mut out)?;
    }
    Ok(out)
}

fn err(kind: ErrorKind, span: Span, msg: impl Into<String>) -> Error {
    Error::new(kind, span, msg)
}

impl<'t> Parser<'t> {
    fn peek(&self) -> &Tok {
        &self.toks[self.i].tok
    }
    fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.i + k).min(self.toks.len() - 1)].tok
    }
    fn span(&self) -> Span {
        self.toks[self.i].span
    }
    fn prev_span(&self) -> Span {
        self.toks[self.i.saturating_sub(1)].span
    }
    fn bump(&mut self) -> &Token {
        let t = &self.toks[self.i];
        if self.i + 1 < self.toks.len() {
            self.i += 1;
        }
        t
    }
    fn is_op(&self, op: &str) -> bool {
        matches!(self.peek(), Tok::Op(o) if *o == op)
    }
    fn is_kw(&self, kw: &str) -> bool {
        matches!(self.peek(), Tok::Name(n) if n == kw)
    }
    fn eat_op(&mut self, op: &str) -> bool {
        let yes = self.is_op(op);
        if yes {
            self.bump();
        }
        yes
    }
    fn eat_kw(&mut self, kw: &str) -> bool {
        let yes = self.is_kw(kw);
        if yes {
            self.bump();
        }
        yes
    }
    fn eat_tok(&mut self, t: &Tok) -> bool {
        let yes = self.peek() == t;
        if yes {
            self.bump();
        }
        yes
    }
    fn unexpected(&self, wanted: &str) -> Error {
        let found = match self.peek() {
            Tok::Name(n) => format!("'{n}'"),
            Tok::Int(_) | Tok::Float(_) => "a number".into(),
            Tok::Str(_) | Tok::FStr(_) => "a string".into(),
            Tok::Op(o) => format!("'{o}'"),
            Tok::Newline => "end of line".into(),
            Tok::Indent => "an indented block".into(),
            Tok::Dedent => "the end of the block".into(),
            Tok::Eof => "end of input".into(),
        };
        err(
            ErrorKind::Syntax,
            self.span(),
            format!("expected {wanted}, found {found}"),
        )
    }
    fn expect_op(&mut self, op: &str) -> Result<Span> {
        if self.is_op(op) {
            Ok(self.bump().span)
        } else {
            Err(self.unexpected(&format!("'{op}'")))
        }
    }
    fn name(&mut self) -> Result<(String, Span)> {
        match self.peek().clone() {
            Tok::Name(n) if !is_keyword(&n) => Ok((n, self.bump().span)),
            _ => Err(self.unexpected("a name")),
        }
    }
    /// Enters one nesting level; every recursive production calls this.
    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > NEST_LIMIT {
            return Err(err(
                ErrorKind::Limit,
                self.span(),
                format!("nesting deeper than {NEST_LIMIT} levels"),
            )
            .hint("split the expression into several assignments"));
        }
        Ok(())
    }
    fn leave(&mut self) {
        self.depth -= 1;
    }

    // ---- statements -----------------------------------------------------------------------

    fn statement(&mut self, out: &mut Vec<Stmt>) -> Result<()> {
        self.enter()?;
        let r = crate::with_stack(|| self.statement_inner(out));
        self.leave();
        r
    }

    fn statement_inner(&mut self, out: &mut Vec<Stmt>) -> Result<()> {
        let start = self.span();
        let kw = match self.peek() {
            Tok::Name(n) => n.clone(),
            Tok::Op("@") => {
                // Decorators (`@ndjit.jit_filter`) are the caller's business: skip them.
                self.bump();
                self.expr()?;
                self.end_of_line()?;
                return Ok(());
            }
            Tok::Indent => return Err(err(ErrorKind::Syntax, start, "unexpected indent")),
            _ => String::new(),
        };
        let compound = match kw.as_str() {
            "def" => Some(self.funcdef()?),
            "if" => Some(self.if_stmt()?),
            "for" => Some(self.for_stmt()?),
            "while" => Some(self.while_stmt()?),
            "try" | "with" | "class" | "async" | "match"
                if !matches!(self.peek_at(1), Tok::Op(_)) || kw == "try" =>
            {
                let hint = match kw.as_str() {
                    "try" => {
                        "filters cannot catch exceptions; test the condition with `if` instead"
                    }
                    "with" => "remove the `with` block; filters need no context managers",
                    "class" => "define classes outside the filter and pass plain numbers in",
                    _ => "rewrite it with if/for/while",
                };
                return Err(err(
                    ErrorKind::Unsupported,
                    start,
                    format!("`{kw}` statements are not supported"),
                )
                .hint(hint));
            }
            _ => None,
        };
        if let Some(s) = compound {
            out.push(s);
            return Ok(());
        }
        loop {
            out.push(self.simple_statement()?);
            if !self.eat_op(";") || matches!(self.peek(), Tok::Newline | Tok::Eof) {
                break;
            }
        }
        self.end_of_line()
    }

    fn end_of_line(&mut self) -> Result<()> {
        if self.eat_tok(&Tok::Newline) || self.peek() == &Tok::Eof || self.peek() == &Tok::Dedent {
            Ok(())
        } else {
            Err(self.unexpected("end of line"))
        }
    }

    /// Whether the current simple statement ends here (`return`/`raise` without a value).
    fn at_statement_end(&self) -> bool {
        matches!(self.peek(), Tok::Newline | Tok::Eof | Tok::Dedent) || self.is_op(";")
    }

    fn simple_statement(&mut self) -> Result<Stmt> {
        let start = self.span();
        let kind = match self.peek() {
            Tok::Name(n) => match n.as_str() {
                "return" => {
                    self.bump();
                    if self.at_statement_end() {
                        StmtKind::Return(None)
                    } else {
                        StmtKind::Return(Some(self.testlist()?))
                    }
                }
                "pass" => {
                    self.bump();
                    StmtKind::Pass
                }
                "break" => {
                    self.bump();
                    StmtKind::Break
                }
                "continue" => {
                    self.bump();
                    StmtKind::Continue
                }
                "import" => {
                    self.bump();
                    let mut names = Vec::new();
                    loop {
                        let module = self.dotted_name()?;
                        let alias = if self.eat_kw("as") {
                            self.name()?.0
                        } else {
                            module.split('.').next().unwrap().to_string()
                        };
                        names.push((module, alias));
                        if !self.eat_op(",") {
                            break;
                        }
                    }
                    StmtKind::Import(names)
                }
                "from" => {
                    self.bump();
                    let module = self.dotted_name()?;
                    if !self.eat_kw("import") {
                        return Err(self.unexpected("'import'"));
                    }
                    let mut names = Vec::new();
                    loop {
                        let (n, _) = self.name()?;
                        let alias = if self.eat_kw("as") {
                            self.name()?.0
                        } else {
                            n.clone()
                        };
                        names.push((format!("{module}.{n}"), alias));
                        if !self.eat_op(",") {
                            break;
                        }
                    }
                    StmtKind::Import(names)
                }
                "raise" => {
                    self.bump();
                    if self.at_statement_end() {
                        StmtKind::Raise { exc: None }
                    } else {
                        let exc = self.expr()?;
                        if self.eat_kw("from") {
                            self.expr()?;
                        }
                        StmtKind::Raise { exc: Some(exc) }
                    }
                }
                "assert" => {
                    self.bump();
                    let test = self.expr()?;
                    let msg = if self.eat_op(",") {
                        Some(self.expr()?)
                    } else {
                        None
                    };
                    StmtKind::Assert { test, msg }
                }
                "del" | "global" | "nonlocal" | "yield" | "await" => {
                    let what = match n.as_str() {
                        "del" => "del",
                        "global" => "global",
                        "nonlocal" => "nonlocal",
                        "yield" => "yield",
                        _ => "await",
                    };
                    let hint = match what {
                        "global" | "nonlocal" => {
                            "filters cannot change outer variables; use a local variable"
                        }
                        _ => "rewrite the filter without it",
                    };
                    return Err(err(
                        ErrorKind::Unsupported,
                        start,
                        format!("`{what}` statements are not supported"),
                    )
                    .hint(hint));
                }
                _ => self.expr_statement()?,
            },
            _ => self.expr_statement()?,
        };
        Ok(Stmt {
            kind,
            span: start.to(self.prev_span()),
        })
    }

    fn dotted_name(&mut self) -> Result<String> {
        let mut s = self.name()?.0;
        while self.eat_op(".") {
            s.push('.');
            s.push_str(&self.name()?.0);
        }
        Ok(s)
    }

    fn expr_statement(&mut self) -> Result<StmtKind> {
        let first = self.testlist()?;
        if let Some(op) = self.augassign_op() {
            self.bump();
            let value = self.testlist()?;
            return Ok(StmtKind::AugAssign {
                target: first,
                op,
                value,
            });
        }
        if self.is_op(":") {
            // Annotated assignment `x: float = 0.0`: the annotation is ignored.
            self.bump();
            self.expr()?;
            if self.eat_op("=") {
                let value = self.testlist()?;
                return Ok(StmtKind::Assign {
                    targets: vec![first],
                    value,
                });
            }
            return Ok(StmtKind::Pass);
        }
        if self.is_op("=") {
            let mut targets = vec![first];
            let mut value;
            loop {
                self.expect_op("=")?;
                value = self.testlist()?;
                if !self.is_op("=") {
                    break;
                }
                targets.push(value);
            }
            return Ok(StmtKind::Assign { targets, value });
        }
        Ok(StmtKind::Expr(first))
    }

    fn augassign_op(&self) -> Option<BinOp> {
        Some(match self.peek() {
            Tok::Op("+=") => BinOp::Add,
            Tok::Op("-=") => BinOp::Sub,
            Tok::Op("*=") => BinOp::Mul,
            Tok::Op("/=") => BinOp::Div,
            Tok::Op("//=") => BinOp::FloorDiv,
            Tok::Op("%=") => BinOp::Mod,
            Tok::Op("**=") => BinOp::Pow,
            Tok::Op("&=") => BinOp::BitAnd,
            Tok::Op("|=") => BinOp::BitOr,
            Tok::Op("^=") => BinOp::BitXor,
            Tok::Op("<<=") => BinOp::LShift,
            Tok::Op(">>=") => BinOp::RShift,
            Tok::Op("@=") => BinOp::MatMul,
            _ => return None,
        })
    }

    /// A block after `:`, either on the same line or indented on the following lines.
    fn suite(&mut self) -> Result<Vec<Stmt>> {
        self.expect_op(":")?;
        let mut body = Vec::new();
        if self.eat_tok(&Tok::Newline) {
            if !self.eat_tok(&Tok::Indent) {
                return Err(self.unexpected("an indented block"));
            }
            while !self.eat_tok(&Tok::Dedent) {
                if self.peek() == &Tok::Eof {
                    break;
                }
                self.statement(&mut body)?;
            }
        } else {
            loop {
                body.push(self.simple_statement()?);
                if !self.eat_op(";") || matches!(self.peek(), Tok::Newline | Tok::Eof) {
                    break;
                }
            }
            self.end_of_line()?;
        }
        Ok(body)
    }

    fn funcdef(&mut self) -> Result<Stmt> {
        let start = self.bump().span;
        let (name, _) = self.name()?;
        self.expect_op("(")?;
        let params = self.params(")")?;
        self.expect_op(")")?;
        if self.eat_op("->") {
            self.expr()?;
        }
        let body = self.suite()?;
        let span = start.to(self.prev_span());
        let f = Function {
            name: Some(name),
            params,
            body,
            span,
        };
        // A nested `def` is carried as an expression statement holding a lambda-like function; the
        // lowering rejects it with a precise message.
        Ok(Stmt {
            kind: StmtKind::Expr(Expr {
                kind: ExprKind::Lambda(Box::new(f)),
                span,
            }),
            span,
        })
    }

    /// Parameters up to (not including) `close`: names, defaults, annotations; `*args` is rejected.
    fn params(&mut self, close: &str) -> Result<Vec<Param>> {
        let mut params = Vec::new();
        while !self.is_op(close) {
            if self.is_op("*") || self.is_op("**") || self.is_op("/") {
                let sp = self.span();
                self.bump();
                if self.is_op(",") || self.is_op(close) {
                    // bare `*` or `/` markers: keyword-only / positional-only; harmless
                    if !self.eat_op(",") {
                        break;
                    }
                    continue;
                }
                return Err(err(
                    ErrorKind::Unsupported,
                    sp,
                    "variadic parameters (*args, **kwargs) are not supported",
                )
                .hint("name each parameter"));
            }
            let (name, span) = self.name()?;
            let annotation = match close == ")" && self.eat_op(":") {
                true => Some(self.expr()?),
                false => None,
            };
            let default = if self.eat_op("=") {
                Some(self.expr()?)
            } else {
                None
            };
            params.push(Param {
                name,
                default,
                annotation,
                span,
            });
            if !self.eat_op(",") {
                break;
            }
        }
        Ok(params)
    }

    fn if_stmt(&mut self) -> Result<Stmt> {
        let start = self.bump().span;
        let test = self.expr()?;
        let body = self.suite()?;
        let orelse = if self.is_kw("elif") {
            vec![self.if_stmt()?]
        } else if self.eat_kw("else") {
            self.suite()?
        } else {
            Vec::new()
        };
        Ok(Stmt {
            kind: StmtKind::If { test, body, orelse },
            span: start.to(self.prev_span()),
        })
    }

    fn for_stmt(&mut self) -> Result<Stmt> {
        let start = self.bump().span;
        let target = self.target_list()?;
        if !self.eat_kw("in") {
            return Err(self.unexpected("'in'"));
        }
        let iter = self.testlist()?;
        let body = self.suite()?;
        let orelse = if self.eat_kw("else") {
            self.suite()?
        } else {
            Vec::new()
        };
        Ok(Stmt {
            kind: StmtKind::For {
                target,
                iter,
                body,
                orelse,
            },
            span: start.to(self.prev_span()),
        })
    }

    fn while_stmt(&mut self) -> Result<Stmt> {
        let start = self.bump().span;
        let test = self.expr()?;
        let body = self.suite()?;
        let orelse = if self.eat_kw("else") {
            self.suite()?
        } else {
            Vec::new()
        };
        Ok(Stmt {
            kind: StmtKind::While { test, body, orelse },
            span: start.to(self.prev_span()),
        })
    }

    /// `for` targets: names and tuples of names, parsed at the `or` level so that `in` stops them.
    fn target_list(&mut self) -> Result<Expr> {
        let first = self.bitor()?;
        if !self.is_op(",") {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat_op(",") {
            if self.is_kw("in") {
                break;
            }
            items.push(self.bitor()?);
        }
        let span = items[0].span.to(items.last().unwrap().span);
        Ok(Expr {
            kind: ExprKind::Tuple(items),
            span,
        })
    }

    /// The `for ... in ... if ...` clauses after a comprehension's element (the parser stands on
    /// the first `for`). Each `in` takes an `or`-level expression and each `if` one too, as in
    /// Python's grammar, so that a conditional expression needs parentheses there.
    fn comprehension(&mut self, kind: CompKind, elt: Expr, start: Span) -> Result<Expr> {
        let mut clauses = Vec::new();
        while self.eat_kw("for") {
            let target = self.target_list()?;
            if !self.eat_kw("in") {
                return Err(self.unexpected("'in'"));
            }
            let iter = self.or_test()?;
            let mut ifs = Vec::new();
            while self.eat_kw("if") {
                ifs.push(self.or_test()?);
            }
            clauses.push(CompFor { target, iter, ifs });
        }
        if self.is_kw("async") {
            return Err(self.unexpected("the end of the comprehension"));
        }
        Ok(Expr {
            kind: ExprKind::Comp(Box::new(Comprehension { kind, elt, clauses })),
            span: start.to(self.prev_span()),
        })
    }

    // ---- expressions ----------------------------------------------------------------------

    /// `a, b, c` (a tuple) or a single expression.
    fn testlist(&mut self) -> Result<Expr> {
        let first = self.expr()?;
        if !self.is_op(",") {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat_op(",") {
            if matches!(self.peek(), Tok::Newline | Tok::Eof | Tok::Dedent)
                || self.is_op("=")
                || self.is_op(")")
            {
                break;
            }
            items.push(self.expr()?);
        }
        let span = items[0].span.to(self.prev_span());
        Ok(Expr {
            kind: ExprKind::Tuple(items),
            span,
        })
    }

    pub fn expr(&mut self) -> Result<Expr> {
        self.enter()?;
        let r = crate::with_stack(|| self.expr_inner());
        self.leave();
        r
    }

    fn expr_inner(&mut self) -> Result<Expr> {
        if self.is_kw("lambda") {
            let start = self.bump().span;
            let params = self.params(":")?;
            self.expect_op(":")?;
            let body = self.expr()?;
            let span = start.to(body.span);
            let ret = Stmt {
                span: body.span,
                kind: StmtKind::Return(Some(body)),
            };
            let f = Function {
                name: None,
                params,
                body: vec![ret],
                span,
            };
            return Ok(Expr {
                kind: ExprKind::Lambda(Box::new(f)),
                span,
            });
        }
        let body = self.or_test()?;
        if self.is_kw("if") {
            self.bump();
            let test = self.or_test()?;
            if !self.eat_kw("else") {
                return Err(self.unexpected("'else' in the conditional expression"));
            }
            let orelse = self.expr()?;
            let span = body.span.to(orelse.span);
            return Ok(Expr {
                kind: ExprKind::IfExp {
                    test: Box::new(test),
                    body: Box::new(body),
                    orelse: Box::new(orelse),
                },
                span,
            });
        }
        if self.is_op(":=") {
            return Err(err(
                ErrorKind::Unsupported,
                self.span(),
                "assignment expressions (:=) are not supported",
            )
            .hint("assign on a line of its own"));
        }
        Ok(body)
    }

    fn bool_chain(
        &mut self,
        kw: &str,
        op: BoolOp,
        next: fn(&mut Self) -> Result<Expr>,
    ) -> Result<Expr> {
        let first = next(self)?;
        let rest = self.chain(|p| p.eat_kw(kw).then_some(()), next)?;
        if rest.is_empty() {
            return Ok(first);
        }
        let items: Vec<Expr> = std::iter::once(first)
            .chain(rest.into_iter().map(|(_, e)| e))
            .collect();
        let span = items[0].span.to(items.last().unwrap().span);
        Ok(Expr {
            kind: ExprKind::BoolOp(op, items),
            span,
        })
    }

    /// The links of a flat chain (`a + b + c`, `a and b`, `a < b < c`): `op` consumes a link's
    /// operator (or returns `None` where the chain ends), `operand` parses its right side. The
    /// syntax tree is flat, but later stages turn a chain into nesting as deep as it is long
    /// (left-deep operations, short-circuit branches), so each link counts as one level.
    fn chain<O>(
        &mut self,
        mut op: impl FnMut(&mut Self) -> Option<O>,
        operand: fn(&mut Self) -> Result<Expr>,
    ) -> Result<Vec<(O, Expr)>> {
        let mut links = Vec::new();
        let mut entered = 0;
        let result = loop {
            let Some(o) = op(self) else { break Ok(()) };
            entered += 1;
            if let Err(e) = self.enter() {
                break Err(e);
            }
            match operand(self) {
                Ok(e) => links.push((o, e)),
                Err(e) => break Err(e),
            }
        };
        self.depth -= entered;
        result.map(|()| links)
    }

    fn or_test(&mut self) -> Result<Expr> {
        self.bool_chain("or", BoolOp::Or, Self::and_test)
    }

    fn and_test(&mut self) -> Result<Expr> {
        self.bool_chain("and", BoolOp::And, Self::not_test)
    }

    fn not_test(&mut self) -> Result<Expr> {
        if self.is_kw("not") {
            self.enter()?;
            let start = self.bump().span;
            let e = self.not_test();
            self.leave();
            let e = e?;
            let span = start.to(e.span);
            return Ok(Expr {
                kind: ExprKind::Unary(UnaryOp::Not, Box::new(e)),
                span,
            });
        }
        self.comparison()
    }

    fn comparison(&mut self) -> Result<Expr> {
        let first = self.bitor()?;
        let rest = self.chain(Self::comparison_op, Self::bitor)?;
        if rest.is_empty() {
            return Ok(first);
        }
        let span = first.span.to(rest.last().unwrap().1.span);
        Ok(Expr {
            kind: ExprKind::Compare(Box::new(first), rest),
            span,
        })
    }

    /// Consumes a comparison operator, if one comes next.
    fn comparison_op(&mut self) -> Option<CmpOp> {
        let op = match self.peek() {
            Tok::Op("<") => CmpOp::Lt,
            Tok::Op("<=") => CmpOp::Le,
            Tok::Op(">") => CmpOp::Gt,
            Tok::Op(">=") => CmpOp::Ge,
            Tok::Op("==") => CmpOp::Eq,
            Tok::Op("!=") => CmpOp::Ne,
            Tok::Name(n) if n == "in" => CmpOp::In,
            Tok::Name(n) if n == "is" => {
                if matches!(self.peek_at(1), Tok::Name(m) if m == "not") {
                    self.bump();
                    CmpOp::IsNot
                } else {
                    CmpOp::Is
                }
            }
            Tok::Name(n) if n == "not" && matches!(self.peek_at(1), Tok::Name(m) if m == "in") => {
                self.bump();
                CmpOp::NotIn
            }
            _ => return None,
        };
        self.bump();
        Some(op)
    }

    /// Left-associative binary levels: a chain folded to the left.
    fn binary_level(
        &mut self,
        ops: &[(&str, BinOp)],
        next: fn(&mut Self) -> Result<Expr>,
    ) -> Result<Expr> {
        let first = next(self)?;
        let op = |p: &mut Self| {
            let op = ops.iter().find(|(tok, _)| p.is_op(tok))?.1;
            p.bump();
            Some(op)
        };
        let rest = self.chain(op, next)?;
        Ok(rest.into_iter().fold(first, |lhs, (op, rhs)| {
            let span = lhs.span.to(rhs.span);
            Expr {
                kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                span,
            }
        }))
    }

    fn bitor(&mut self) -> Result<Expr> {
        self.binary_level(&[("|", BinOp::BitOr)], Self::bitxor)
    }
    fn bitxor(&mut self) -> Result<Expr> {
        self.binary_level(&[("^", BinOp::BitXor)], Self::bitand)
    }
    fn bitand(&mut self) -> Result<Expr> {
        self.binary_level(&[("&", BinOp::BitAnd)], Self::shift)
    }
    fn shift(&mut self) -> Result<Expr> {
        self.binary_level(&[("<<", BinOp::LShift), (">>", BinOp::RShift)], Self::arith)
    }
    fn arith(&mut self) -> Result<Expr> {
        self.binary_level(&[("+", BinOp::Add), ("-", BinOp::Sub)], Self::term)
    }
    fn term(&mut self) -> Result<Expr> {
        self.binary_level(
            &[
                ("*", BinOp::Mul),
                ("/", BinOp::Div),
                ("//", BinOp::FloorDiv),
                ("%", BinOp::Mod),
                ("@", BinOp::MatMul),
            ],
            Self::factor,
        )
    }

    fn factor(&mut self) -> Result<Expr> {
        let op = match self.peek() {
            Tok::Op("-") => UnaryOp::Neg,
            Tok::Op("+") => UnaryOp::Pos,
            Tok::Op("~") => UnaryOp::Invert,
            _ => return self.power(),
        };
        self.enter()?;
        let start = self.bump().span;
        let e = self.factor();
        self.leave();
        let e = e?;
        let span = start.to(e.span);
        Ok(Expr {
            kind: ExprKind::Unary(op, Box::new(e)),
            span,
        })
    }

    fn power(&mut self) -> Result<Expr> {
        let base = self.primary()?;
        if self.eat_op("**") {
            self.enter()?;
            let exp = self.factor();
            self.leave();
            let exp = exp?;
            let span = base.span.to(exp.span);
            return Ok(Expr {
                kind: ExprKind::Binary(BinOp::Pow, Box::new(base), Box::new(exp)),
                span,
            });
        }
        Ok(base)
    }

    fn primary(&mut self) -> Result<Expr> {
        let mut e = self.atom()?;
        let mut trailers = 0;
        loop {
            if self.is_op("(") {
                self.bump();
                let (args, keywords) = self.call_args()?;
                let end = self.expect_op(")")?;
                let span = e.span.to(end);
                e = Expr {
                    kind: ExprKind::Call {
                        func: Box::new(e),
                        args,
                        keywords,
                    },
                    span,
                };
            } else if self.is_op("[") {
                self.bump();
                let index = self.subscript_list()?;
                let end = self.expect_op("]")?;
                let span = e.span.to(end);
                e = Expr {
                    kind: ExprKind::Subscript(Box::new(e), Box::new(index)),
                    span,
                };
            } else if self.is_op(".") {
                self.bump();
                let (attr, sp) = self.name()?;
                let span = e.span.to(sp);
                e = Expr {
                    kind: ExprKind::Attribute(Box::new(e), attr),
                    span,
                };
            } else {
                return Ok(e);
            }
            trailers += 1;
            if trailers > NEST_LIMIT * 4 {
                return Err(err(
                    ErrorKind::Limit,
                    e.span,
                    "too many calls, subscripts and attributes in one chain",
                ));
            }
        }
    }

    fn call_args(&mut self) -> Result<(Vec<Expr>, Vec<Keyword>)> {
        let mut args = Vec::new();
        let mut keywords = Vec::new();
        while !self.is_op(")") {
            if self.is_op("*") || self.is_op("**") {
                return Err(err(
                    ErrorKind::Unsupported,
                    self.span(),
                    "argument unpacking (*args, **kwargs) is not supported",
                )
                .hint("pass each argument explicitly"));
            }
            if let (Tok::Name(n), Tok::Op("=")) = (self.peek().clone(), self.peek_at(1).clone()) {
                let span = self.bump().span;
                self.bump();
                let value = self.expr()?;
                keywords.push(Keyword {
                    name: n,
                    value,
                    span,
                });
            } else {
                if !keywords.is_empty() {
                    return Err(err(
                        ErrorKind::Syntax,
                        self.span(),
                        "positional argument follows keyword argument",
                    ));
                }
                let a = self.expr()?;
                let a = if self.is_kw("for") {
                    // `f(v for v in x)`: the call's parentheses are the generator's, so it must
                    // be the only argument.
                    let span = a.span;
                    let g = self.comprehension(CompKind::Generator, a, span)?;
                    if !args.is_empty() || !keywords.is_empty() || self.is_op(",") {
                        return Err(err(
                            ErrorKind::Syntax,
                            g.span,
                            "Generator expression must be parenthesized",
                        ));
                    }
                    g
                } else {
                    a
                };
                args.push(a);
            }
            if !self.eat_op(",") {
                break;
            }
        }
        Ok((args, keywords))
    }

    fn subscript_list(&mut self) -> Result<Expr> {
        let first = self.subscript_item()?;
        if !self.is_op(",") {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat_op(",") {
            if self.is_op("]") {
                break;
            }
            items.push(self.subscript_item()?);
        }
        let span = items[0].span.to(items.last().unwrap().span);
        Ok(Expr {
            kind: ExprKind::Tuple(items),
            span,
        })
    }

    fn subscript_item(&mut self) -> Result<Expr> {
        let start = self.span();
        let lower = if self.is_op(":") {
            None
        } else {
            Some(Box::new(self.expr()?))
        };
        if !self.is_op(":") {
            return Ok(*lower.unwrap());
        }
        self.bump();
        let upper = if self.is_op(":") || self.is_op("]") || self.is_op(",") {
            None
        } else {
            Some(Box::new(self.expr()?))
        };
        let step = if self.eat_op(":") && !self.is_op("]") && !self.is_op(",") {
            Some(Box::new(self.expr()?))
        } else {
            None
        };
        Ok(Expr {
            kind: ExprKind::Slice(lower, upper, step),
            span: start.to(self.prev_span()),
        })
    }

    fn atom(&mut self) -> Result<Expr> {
        let span = self.span();
        let kind = match self.peek().clone() {
            Tok::Int(v) => {
                self.bump();
                ExprKind::Int(v)
            }
            Tok::Float(v) => {
                self.bump();
                ExprKind::Float(v)
            }
            Tok::Str(_) | Tok::FStr(_) => {
                // Implicit concatenation: an f-string among the parts makes the whole one.
                let (mut text, mut formatted) = (String::new(), false);
                loop {
                    match self.peek().clone() {
                        Tok::Str(more) => text.push_str(&more),
                        Tok::FStr(more) => {
                            text.push_str(&more);
                            formatted = true;
                        }
                        _ => break,
                    }
                    self.bump();
                }
                match formatted {
                    true => ExprKind::FString(text),
                    false => ExprKind::Str(text),
                }
            }
            Tok::Op("...") => {
                self.bump();
                ExprKind::Ellipsis
            }
            Tok::Name(n) => match n.as_str() {
                "True" | "False" => {
                    self.bump();
                    ExprKind::Bool(n == "True")
                }
                "None" => {
                    self.bump();
                    ExprKind::None
                }
                _ if is_keyword(&n) => return Err(self.unexpected("an expression")),
                _ => {
                    self.bump();
                    ExprKind::Name(n)
                }
            },
            Tok::Op("(") => {
                self.bump();
                if self.is_op(")") {
                    let end = self.bump().span;
                    return Ok(Expr {
                        kind: ExprKind::Tuple(Vec::new()),
                        span: span.to(end),
                    });
                }
                let first = self.expr()?;
                if self.is_kw("for") {
                    let comp = self.comprehension(CompKind::Generator, first, span)?;
                    let end = self.expect_op(")")?;
                    return Ok(Expr {
                        kind: comp.kind,
                        span: span.to(end),
                    });
                }
                if self.is_op(")") {
                    let end = self.bump().span;
                    // Keep the inner node but widen its span to the parentheses.
                    return Ok(Expr {
                        kind: first.kind,
                        span: span.to(end),
                    });
                }
                let mut items = vec![first];
                while self.eat_op(",") {
                    if self.is_op(")") {
                        break;
                    }
                    items.push(self.expr()?);
                }
                let end = self.expect_op(")")?;
                return Ok(Expr {
                    kind: ExprKind::Tuple(items),
                    span: span.to(end),
                });
            }
            Tok::Op("[") => {
                self.bump();
                let mut items = Vec::new();
                while !self.is_op("]") {
                    items.push(self.expr()?);
                    if self.is_kw("for") && items.len() == 1 {
                        let elt = items.pop().unwrap();
                        let comp = self.comprehension(CompKind::List, elt, span)?;
                        let end = self.expect_op("]")?;
                        return Ok(Expr {
                            kind: comp.kind,
                            span: span.to(end),
                        });
                    }
                    if !self.eat_op(",") {
                        break;
                    }
                }
                let end = self.expect_op("]")?;
                return Ok(Expr {
                    kind: ExprKind::List(items),
                    span: span.to(end),
                });
            }
            Tok::Op("{") => {
                return Err(err(
                    ErrorKind::Unsupported,
                    span,
                    "dict and set literals are not supported",
                )
                .hint("use numbers, tuples or NumPy arrays"))
            }
            _ => return Err(self.unexpected("an expression")),
        };
        Ok(Expr { kind, span })
    }
}

fn is_keyword(n: &str) -> bool {
    matches!(
        n,
        "False"
            | "None"
            | "True"
            | "and"
            | "as"
            | "assert"
            | "async"
            | "await"
            | "break"
            | "class"
            | "continue"
            | "def"
            | "del"
            | "elif"
            | "else"
            | "except"
            | "finally"
            | "for"
            | "from"
            | "global"
            | "if"
            | "import"
            | "in"
            | "is"
            | "lambda"
            | "nonlocal"
            | "not"
            | "or"
            | "pass"
            | "raise"
            | "return"
            | "try"
            | "while"
            | "with"
            | "yield"
    )
}
