//! Source text to AST: [`parse`] accepts an expression over `x`, a `lambda`, or a `def`.

pub mod ast;
pub mod lexer;
mod module;
pub mod parser;
pub mod visit;

use crate::error::{Error, ErrorKind, Position, Result, Span};
use ast::*;

/// The largest source accepted, in bytes. Filters are short; this bounds every later stage.
pub const MAX_SOURCE_BYTES: usize = 64 * 1024;

/// A parsed program: always a function (an expression `e` becomes `lambda x: e`), plus the
/// module-level imports that came with it (`import numpy as xp`).
#[derive(Clone, Debug)]
pub struct Program {
    pub function: Function,
    pub imports: Vec<Import>,
    /// Helper functions the filter calls, by the names it calls them (inlined by the lowering).
    pub helpers: Vec<(String, Function)>,
}

/// `import module as alias`: a line of the source (`span`), or a name the caller's module binds
/// (`FilterBuilder::import`, no span).
#[derive(Clone, Debug, PartialEq)]
pub struct Import {
    pub module: String,
    pub alias: String,
    pub span: Option<Span>,
}

/// Parses filter source: an expression over `x`, a `lambda`, `name = lambda ...`, or one `def`
/// (optionally preceded by imports, decorators and a docstring).
pub fn parse(source: &str) -> Result<Program> {
    if source.len() > MAX_SOURCE_BYTES {
        let p = Position {
            offset: 0,
            line: 1,
            column: 1,
        };
        return Err(Error::new(
            ErrorKind::Limit,
            Span::new(p, p),
            format!(
                "source is {} bytes; the limit is {MAX_SOURCE_BYTES}",
                source.len()
            ),
        ));
    }
    let tokens = lexer::tokenize(source)?;
    let stmts = parser::parse_module(&tokens)?;
    let mut imports = Vec::new();
    let mut candidates = Vec::new();
    let statements = stmts.len();
    for s in stmts {
        match s.kind {
            StmtKind::Import(names) => {
                imports.extend(names.into_iter().map(|(module, alias)| Import {
                    module,
                    alias,
                    span: Some(s.span),
                }))
            }
            StmtKind::Expr(Expr {
                kind: ExprKind::Str(_),
                ..
            })
            | StmtKind::Pass => {}
            _ => candidates.push(s),
        }
    }
    let whole = || {
        let end = tokens.last().map(|t| t.span.end).unwrap_or_default();
        Span::new(
            Position {
                offset: 0,
                line: 1,
                column: 1,
            },
            end,
        )
    };
    if candidates.len() > 1 {
        let (function, helpers) = module::split(candidates)?;
        return Ok(Program {
            function,
            imports,
            helpers,
        });
    }
    let [stmt] = <[Stmt; 1]>::try_from(candidates).map_err(|c| {
        let span = if c.len() > 1 { c[1].span } else { whole() };
        Error::new(
            ErrorKind::Syntax,
            span,
            if c.is_empty() && statements == 0 {
                "empty filter source".to_string()
            } else if c.is_empty() {
                "no filter in the source: it holds only imports, strings or `pass`".to_string()
            } else {
                "expected a single expression, lambda or def".to_string()
            },
        )
        .hint("write one `def` (helpers must be inlined), one lambda, or one expression over x")
    })?;
    let function = match stmt.kind {
        StmtKind::Expr(Expr {
            kind: ExprKind::Lambda(f),
            ..
        }) => *f,
        StmtKind::Assign {
            targets,
            value:
                Expr {
                    kind: ExprKind::Lambda(f),
                    ..
                },
        } if targets.len() == 1 => *f,
        StmtKind::Expr(e) => {
            let span = e.span;
            Function {
                name: None,
                params: vec![Param {
                    name: "x".into(),
                    default: None,
                    annotation: None,
                    span,
                }],
                body: vec![Stmt {
                    kind: StmtKind::Return(Some(e)),
                    span,
                }],
                span,
            }
        }
        _ => {
            return Err(Error::new(
                ErrorKind::Syntax,
                stmt.span,
                "expected an expression, a lambda or a def",
            )
            .hint("statements belong inside `def f(x): ...`"))
        }
    };
    Ok(Program {
        function,
        imports,
        helpers: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_forms() {
        assert_eq!(
            parse("max(x) - min(x)").unwrap().function.params[0].name,
            "x"
        );
        assert_eq!(
            parse("lambda v: v[0]").unwrap().function.params[0].name,
            "v"
        );
        let p =
            parse("import numpy as np\n@deco\ndef f(a, k=2):\n    '''doc'''\n    return a[k]\n")
                .unwrap();
        assert_eq!(p.function.name.as_deref(), Some("f"));
        assert_eq!(p.function.params.len(), 2);
        let i = &p.imports[0];
        assert_eq!((i.module.as_str(), i.alias.as_str()), ("numpy", "np"));
        assert_eq!(i.span.map(|s| (s.start.line, s.start.column)), Some((1, 1)));
        assert!(parse("g = lambda w: w.sum()").is_ok());
    }

    #[test]
    fn structural_errors_have_positions() {
        let e = parse("def f(x):\n    return x\ndef g(x):\n    return x\n").unwrap_err();
        assert_eq!((e.kind, e.line(), e.column()), (ErrorKind::Syntax, 3, 1));
        let e = parse("").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Syntax);
    }

    #[test]
    fn nesting_limit_is_an_error_not_a_crash() {
        let deep = format!("{}x{}", "(".repeat(10_000), ")".repeat(10_000));
        assert_eq!(parse(&deep).unwrap_err().kind, ErrorKind::Limit);
        let unary = format!("{}x", "-".repeat(10_000));
        assert_eq!(parse(&unary).unwrap_err().kind, ErrorKind::Limit);
        let big = "x+".repeat(40_000) + "x";
        assert_eq!(parse(&big).unwrap_err().kind, ErrorKind::Limit);
        // Flat in the syntax tree, but nested as deep as they are long once lowered
        // (short-circuit branches): each link counts.
        for link in [
            " < ", " == ", " is not ", " not in ", " and ", " or ", " | ",
        ] {
            let long = vec!["x"; 4000].join(link);
            let e = parse(&long).unwrap_err();
            assert_eq!(e.kind, ErrorKind::Limit, "{link}");
            let short = vec!["x"; 200].join(link);
            assert!(parse(&short).is_ok(), "{link}");
        }
    }

    #[test]
    fn precedence() {
        // -x**2 is -(x**2); a < b <= c is one chained comparison.
        let p = parse("-x**2").unwrap();
        let StmtKind::Return(Some(e)) = &p.function.body[0].kind else {
            panic!()
        };
        assert!(
            matches!(&e.kind, ExprKind::Unary(UnaryOp::Neg, inner) if matches!(inner.kind, ExprKind::Binary(BinOp::Pow, ..)))
        );
        let p = parse("a < b <= c").unwrap();
        let StmtKind::Return(Some(e)) = &p.function.body[0].kind else {
            panic!()
        };
        assert!(matches!(&e.kind, ExprKind::Compare(_, rest) if rest.len() == 2));
    }
}
