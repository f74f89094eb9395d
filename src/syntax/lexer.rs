//! Tokenizer: source text to a flat list of tokens, with Python's INDENT/DEDENT/NEWLINE structure.
//!
//! Newlines inside brackets and after a backslash are joined as Python does; comments and blank
//! lines vanish. Strings are lexed only so that docstrings can be skipped and string use can get a
//! precise "not supported" error.

use crate::error::{Error, ErrorKind, Position, Result, Span};

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Name(String),
    Int(i64),
    Float(f64),
    /// A string literal's text: Python's escapes decoded, a raw string's as written.
    Str(String),
    /// An f-string with replacement fields (`f"{v:.2f}"`): its raw text, fields unfilled.
    FStr(String),
    /// An operator or delimiter, e.g. `"**="`, `"("`.
    Op(&'static str),
    Newline,
    Indent,
    Dedent,
    Eof,
}

#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
}

/// Longest operators first so that the first match is the longest.
const OPS: &[&str] = &[
    "**=", "//=", ">>=", "<<=", "...", "->", "**", "//", "<<", ">>", "<=", ">=", "==", "!=", "+=",
    "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=", ":=", "+", "-", "*", "/", "%", "@", "&", "|",
    "^", "~", "<", ">", "(", ")", "[", "]", "{", "}", ",", ":", ".", ";", "=",
];

/// CPython's tokenizer accepts 200 open brackets at once (`MAXLEVEL`), and no more.
pub const MAX_BRACKETS: u32 = 200;
/// ... and 99 levels of indentation (`MAXINDENT` is 100).
pub const MAX_INDENTS: usize = 99;

struct Lexer<'s> {
    src: &'s str,
    pos: Position,
    tokens: Vec<Token>,
    /// The open indentation levels, each measured twice as CPython does: with tabs to the next
    /// multiple of 8, and with tabs as one column. Levels that the two measures order differently
    /// depend on the tab size: CPython's `TabError`.
    indents: Vec<(u32, u32)>,
    /// Bracket depth: newlines inside brackets do not end a logical line.
    depth: u32,
}

pub fn tokenize(src: &str) -> Result<Vec<Token>> {
    let mut lx = Lexer {
        src,
        pos: Position {
            offset: 0,
            line: 1,
            column: 1,
        },
        tokens: Vec::new(),
        indents: vec![(0, 0)],
        depth: 0,
    };
    // CPython refuses a NUL anywhere, even in a comment or string.
    if let Some(at) = src.find('\0') {
        while lx.pos.offset < at {
            lx.bump();
        }
        return Err(lx.error(lx.pos, "source code cannot contain null bytes"));
    }
    lx.run()?;
    Ok(lx.tokens)
}

impl<'s> Lexer<'s> {
    fn peek(&self) -> Option<char> {
        self.src[self.pos.offset..].chars().next()
    }
    fn peek2(&self) -> Option<char> {
        self.src[self.pos.offset..].chars().nth(1)
    }
    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos.offset += c.len_utf8();
        if c == '\n' {
            self.pos.line += 1;
            self.pos.column = 1;
        } else {
            self.pos.column += 1;
        }
        Some(c)
    }
    fn push(&mut self, tok: Tok, start: Position) {
        self.tokens.push(Token {
            tok,
            span: Span::new(start, self.pos),
        });
    }
    fn error(&self, start: Position, msg: impl Into<String>) -> Error {
        let end = Position {
            offset: self.pos.offset.max(start.offset + 1),
            line: start.line,
            column: start.column + 1,
        };
        Error::new(
            ErrorKind::Syntax,
            Span::new(
                start,
                if self.pos.line == start.line && self.pos.offset > start.offset {
                    self.pos
                } else {
                    end
                },
            ),
            msg,
        )
    }

    /// One of CPython's own limits, at `start`.
    fn limit(&self, start: Position, msg: &str) -> Error {
        let mut e = self.error(start, msg);
        e.kind = ErrorKind::Limit;
        e
    }

    fn run(&mut self) -> Result<()> {
        let mut at_line_start = true;
        loop {
            if at_line_start && self.depth == 0 {
                if !self.indentation()? {
                    continue; // blank or comment-only line
                }
                at_line_start = false;
            }
            let start = self.pos;
            let Some(c) = self.peek() else { break };
            match c {
                ' ' | '\t' | '\x0c' | '\r' => {
                    self.bump();
                }
                '#' => {
                    while !matches!(self.peek(), None | Some('\n')) {
                        self.bump();
                    }
                }
                '\\' if self.peek2() == Some('\n') => {
                    self.bump();
                    self.bump();
                }
                '\n' => {
                    self.bump();
                    if self.depth == 0 {
                        self.push(Tok::Newline, start);
                        at_line_start = true;
                    }
                }
                '0'..='9' => self.number()?,
                '.' if self.peek2().is_some_and(|d| d.is_ascii_digit()) => self.number()?,
                '"' | '\'' => self.string()?,
                c if c == '_' || c.is_alphabetic() => {
                    while self.peek().is_some_and(|c| c == '_' || c.is_alphanumeric()) {
                        self.bump();
                    }
                    let word = &self.src[start.offset..self.pos.offset];
                    // String prefixes: r"..", b'..', f"..", rb"..".
                    if word.len() <= 2
                        && word.chars().all(|c| "rRbBuUfF".contains(c))
                        && matches!(self.peek(), Some('"' | '\''))
                    {
                        if word.contains(['b', 'B']) {
                            // Python's bytes never equal its strings, which is all ndjit has.
                            return Err(self.error(start, "bytes literals are not supported"));
                        }
                        let raw = word.contains(['r', 'R']);
                        self.string_from(start, word.contains(['f', 'F']), raw)?;
                    } else {
                        self.push(Tok::Name(word.to_string()), start);
                    }
                }
                _ => {
                    let rest = &self.src[self.pos.offset..];
                    let Some(op) = OPS.iter().find(|op| rest.starts_with(**op)) else {
                        self.bump();
                        return Err(self.error(start, format!("unexpected character {c:?}")));
                    };
                    for _ in 0..op.len() {
                        self.bump();
                    }
                    match *op {
                        "(" | "[" | "{" if self.depth >= MAX_BRACKETS => {
                            return Err(self.limit(start, "too many nested parentheses"));
                        }
                        "(" | "[" | "{" => self.depth += 1,
                        ")" | "]" | "}" => self.depth = self.depth.saturating_sub(1),
                        _ => {}
                    }
                    self.push(Tok::Op(op), start);
                }
            }
        }
        let end = self.pos;
        if !matches!(
            self.tokens.last().map(|t| &t.tok),
            None | Some(Tok::Newline)
        ) {
            self.push(Tok::Newline, end);
        }
        while self.indents.len() > 1 {
            self.indents.pop();
            self.push(Tok::Dedent, end);
        }
        self.push(Tok::Eof, end);
        Ok(())
    }

    /// Measures the indentation of a new line. Returns false for blank and comment-only lines.
    fn indentation(&mut self) -> Result<bool> {
        let start = self.pos;
        let (mut width, mut alt) = (0u32, 0u32);
        while let Some(c) = self.peek() {
            match c {
                ' ' => (width, alt) = (width + 1, alt + 1),
                '\t' => (width, alt) = ((width / 8 + 1) * 8, alt + 1),
                // A form feed resets the column, as in CPython.
                '\x0c' => (width, alt) = (0, 0),
                '\r' => {}
                _ => break,
            }
            self.bump();
        }
        match self.peek() {
            None => return Ok(true),
            Some('\n') => {
                self.bump();
                return Ok(false);
            }
            Some('#') => {
                while !matches!(self.peek(), None | Some('\n')) {
                    self.bump();
                }
                self.bump();
                return Ok(false);
            }
            _ => {}
        }
        let tab_error = |lx: &Self| {
            lx.error(
                start,
                "inconsistent use of tabs and spaces in indentation (TabError)",
            )
        };
        let top = *self.indents.last().unwrap();
        if width > top.0 {
            if alt <= top.1 {
                return Err(tab_error(self));
            }
            if self.indents.len() > MAX_INDENTS {
                return Err(self.limit(self.pos, "too many levels of indentation"));
            }
            self.indents.push((width, alt));
            self.push(Tok::Indent, start);
        } else {
            while width < self.indents.last().unwrap().0 {
                self.indents.pop();
                self.push(Tok::Dedent, self.pos);
            }
            let level = *self.indents.last().unwrap();
            if width != level.0 {
                return Err(self.error(
                    self.pos,
                    "unindent does not match any outer indentation level",
                ));
            }
            if alt != level.1 {
                return Err(tab_error(self));
            }
        }
        Ok(true)
    }

    fn number(&mut self) -> Result<()> {
        let start = self.pos;
        let rest = &self.src[start.offset..];
        let radix = match rest.get(..2) {
            Some("0x" | "0X") => 16,
            Some("0o" | "0O") => 8,
            Some("0b" | "0B") => 2,
            _ => 10,
        };
        if radix != 10 {
            self.bump();
            self.bump();
            while self
                .peek()
                .is_some_and(|c| c == '_' || c.is_ascii_alphanumeric())
            {
                self.bump();
            }
            let body = &self.src[start.offset + 2..self.pos.offset];
            if let Some(msg) = prefixed_literal_error(body, radix) {
                return Err(self.error(start, msg));
            }
            let digits: String = body.chars().filter(|&c| c != '_').collect();
            let v = i64::from_str_radix(&digits, radix).map_err(|_| {
                self.error(start, "integer literal does not fit in 64 bits")
                    .hint("write it as a float, e.g. 1e20")
            })?;
            self.push(Tok::Int(v), start);
            return Ok(());
        }
        let mut is_float = false;
        while let Some(c) = self.peek() {
            if c.is_ascii_digit() || c == '_' {
                self.bump();
            } else if c == '.' && !is_float {
                is_float = true;
                self.bump();
            } else if c == 'e' || c == 'E' {
                is_float = true;
                self.bump();
                if matches!(self.peek(), Some('+' | '-')) {
                    self.bump();
                }
            } else {
                break;
            }
        }
        if matches!(self.peek(), Some('j' | 'J')) {
            self.bump();
            return Err(self.error(start, "complex numbers are not supported"));
        }
        if self.peek().is_some_and(|c| c.is_alphabetic() || c == '_') {
            return Err(self
                .error(start, "invalid decimal literal")
                .hint("put a space between a number and the word after it"));
        }
        let raw = &self.src[start.offset..self.pos.offset];
        if let Some(msg) = decimal_literal_error(raw, is_float) {
            let e = self.error(start, msg);
            return Err(if msg == LEADING_ZEROS {
                e.hint("write 7, or 0o7 for octal")
            } else {
                e
            });
        }
        let text: String = raw.chars().filter(|&c| c != '_').collect();
        if is_float {
            let v: f64 = text
                .parse()
                .map_err(|_| self.error(start, "invalid decimal literal"))?;
            self.push(Tok::Float(v), start);
        } else {
            match text.parse::<i64>() {
                Ok(v) => self.push(Tok::Int(v), start),
                Err(_) => {
                    return Err(self
                        .error(start, "integer literal does not fit in 64 bits")
                        .hint("write it as a float, e.g. 1e20"))
                }
            }
        }
        Ok(())
    }

    fn string(&mut self) -> Result<()> {
        let start = self.pos;
        self.string_from(start, false, false)
    }

    /// Lexes a string literal whose prefix (if any) is already consumed; `start` is the prefix
    /// start, `formatted` whether the prefix makes it an f-string, `raw` whether its backslashes
    /// are text.
    fn string_from(&mut self, start: Position, formatted: bool, raw: bool) -> Result<()> {
        let quote = self.bump().unwrap();
        let triple = self.peek() == Some(quote) && self.peek2() == Some(quote);
        if triple {
            self.bump();
            self.bump();
        }
        let body_start = self.pos.offset;
        loop {
            match self.bump() {
                None => return Err(self.error(start, "unterminated string literal")),
                Some('\\') => {
                    self.bump();
                }
                Some('\n') if !triple => {
                    return Err(self.error(start, "unterminated string literal"))
                }
                Some(c) if c == quote => {
                    if !triple {
                        break;
                    }
                    if self.peek() == Some(quote) && self.peek2() == Some(quote) {
                        self.bump();
                        self.bump();
                        break;
                    }
                }
                Some(_) => {}
            }
        }
        let body_end = self.pos.offset - if triple { 3 } else { 1 };
        let text = self.src[body_start..body_end.max(body_start)].to_string();
        match formatted && text.contains(['{', '}']) {
            true => self.push(Tok::FStr(text), start),
            false if raw => self.push(Tok::Str(text), start),
            false => {
                let text = unescape(&text).map_err(|msg| self.error(start, msg))?;
                self.push(Tok::Str(text), start)
            }
        }
        Ok(())
    }
}

/// CPython's message for `007`.
const LEADING_ZEROS: &str =
    "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers";

/// The character of `\\xhh`, `\\uhhhh` or `\\Uhhhhhhhh` (`n` hex digits after the `kind` letter).
fn hex_escape(
    chars: &mut std::iter::Peekable<std::str::Chars>,
    n: usize,
    kind: char,
) -> std::result::Result<char, String> {
    let digits: String = (0..n).filter_map(|_| chars.next()).collect();
    let code = (digits.len() == n && digits.chars().all(|d| d.is_ascii_hexdigit()))
        .then(|| u32::from_str_radix(&digits, 16).ok())
        .flatten()
        .ok_or_else(|| format!("truncated \\{kind} escape in a string literal"))?;
    char::from_u32(code).ok_or_else(|| {
        format!("\\{kind}{digits} is a surrogate, which ndjit's strings cannot hold")
    })
}

/// A string literal's text with Python's escape sequences replaced by what they stand for
/// (`"\x41"` is `"A"`, `"\uffff" < "\U00010000"`), so that comparisons see Python's string.
/// An unknown escape keeps its backslash, as Python does.
fn unescape(body: &str) -> std::result::Result<String, String> {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        match e {
            '\n' => {} // a backslash-newline continues the line
            '\\' | '\'' | '"' => out.push(e),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\u{b}'),
            'x' => out.push(hex_escape(&mut chars, 2, 'x')?),
            'u' => out.push(hex_escape(&mut chars, 4, 'u')?),
            'U' => out.push(hex_escape(&mut chars, 8, 'U')?),
            '0'..='7' => {
                let mut code = e.to_digit(8).unwrap();
                for _ in 0..2 {
                    match chars.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            code = code * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(code).expect("at most 0o777"));
            }
            'N' => return Err("\\N{...} escapes in string literals are not supported".into()),
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    Ok(out)
}

/// Whether every `_` of a literal's digits sits between two digits (`1_000`), as CPython's
/// tokenizer requires; `prefix_ok` also allows one right after a base prefix (`0x_1f`).
fn underscores_ok(text: &str, is_digit: impl Fn(char) -> bool, prefix_ok: bool) -> bool {
    let chars: Vec<char> = text.chars().collect();
    chars.iter().enumerate().all(|(i, &c)| {
        c != '_'
            || ((i > 0 && is_digit(chars[i - 1]) || i == 0 && prefix_ok)
                && chars.get(i + 1).is_some_and(|&n| is_digit(n)))
    })
}

/// CPython's error for a decimal literal's text (digits, `_`, `.`, an exponent), if any.
fn decimal_literal_error(text: &str, is_float: bool) -> Option<&'static str> {
    if !underscores_ok(text, |c| c.is_ascii_digit(), false) {
        return Some("invalid decimal literal");
    }
    let digits: String = text.chars().filter(|&c| c != '_').collect();
    // `0`, `00` and `0_0` are zero; `007` is an error, not octal (floats may start with zeros).
    (!is_float && digits.starts_with('0') && digits.chars().any(|c| c != '0'))
        .then_some(LEADING_ZEROS)
}

/// CPython's error for the digits after a `0x`/`0o`/`0b` prefix, if any.
fn prefixed_literal_error(body: &str, radix: u32) -> Option<String> {
    let name = match radix {
        16 => "hexadecimal",
        8 => "octal",
        _ => "binary",
    };
    let valid = |c: char| c.is_digit(radix);
    if let Some(bad) = body
        .chars()
        .find(|&c| c != '_' && !valid(c) && c.is_ascii_digit())
    {
        return Some(format!("invalid digit '{bad}' in {name} literal"));
    }
    let well_formed = body.chars().any(valid)
        && body.chars().all(|c| c == '_' || valid(c))
        && underscores_ok(body, valid, true);
    (!well_formed).then(|| format!("invalid {name} literal"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(src: &str) -> Vec<Tok> {
        tokenize(src).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn indentation_and_newlines() {
        let t = toks("def f(x):\n    if x:\n        return 1\n    return 2\n");
        let indents = t.iter().filter(|t| **t == Tok::Indent).count();
        let dedents = t.iter().filter(|t| **t == Tok::Dedent).count();
        assert_eq!((indents, dedents), (2, 2));
        assert_eq!(t.last(), Some(&Tok::Eof));
    }

    #[test]
    fn brackets_join_lines_and_comments_vanish() {
        let t = toks("f(1,\n  2)  # comment\n\n# only a comment\ny");
        assert_eq!(t.iter().filter(|t| **t == Tok::Newline).count(), 2);
    }

    #[test]
    fn numbers() {
        assert_eq!(
            toks("1_000 0x1f 2.5e-3 .5 3.")[..5],
            [
                Tok::Int(1000),
                Tok::Int(31),
                Tok::Float(2.5e-3),
                Tok::Float(0.5),
                Tok::Float(3.0)
            ]
        );
    }

    #[test]
    fn longest_operator_wins() {
        assert_eq!(toks("a **= b")[1], Tok::Op("**="));
        assert_eq!(toks("a // b")[1], Tok::Op("//"));
    }

    #[test]
    fn bad_dedent_is_an_error_with_position() {
        let e = tokenize("if x:\n    y\n  z\n").unwrap_err();
        assert_eq!((e.kind, e.line()), (ErrorKind::Syntax, 3));
    }

    #[test]
    fn string_escapes_are_pythons() {
        let text = |src: &str| match &toks(src)[0] {
            Tok::Str(t) => t.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            text(r#""\x41\t\u00e9\U0001F600\101\0""#),
            "A\t\u{e9}\u{1F600}A\0"
        );
        assert_eq!(text(r#""a\\b\'\"\d""#), "a\\b'\"\\d");
        assert_eq!(text(r#"r"\x41\n""#), "\\x41\\n");
        assert!(tokenize(r#""\x4""#).is_err());
        assert!(tokenize(r#""\ud800""#).is_err());
        assert!(tokenize(r#""\N{DASH}""#).is_err());
        assert!(tokenize(r#"b"a""#).is_err());
    }

    #[test]
    fn errors() {
        assert!(tokenize("a $ b").is_err());
        assert!(tokenize("'abc").is_err());
        assert!(tokenize("3j").is_err());
        assert!(tokenize("99999999999999999999").is_err());
    }

    /// CPython's verdict on each literal (`compile(text, "", "eval")` in 3.11): its value, or
    /// its SyntaxError's message. A literal CPython rejects must not lex to a number.
    #[test]
    fn number_literals_follow_cpython() {
        let lexed = |src: &str| {
            tokenize(src)
                .map(|t| t[0].tok.clone())
                .map_err(|e| e.to_string())
        };
        for (src, want) in [
            ("0_0", Tok::Int(0)),
            ("00", Tok::Int(0)),
            ("0_9.5", Tok::Float(9.5)),
            ("09e1", Tok::Float(90.0)),
            ("0x_1f", Tok::Int(31)),
            ("0b_1", Tok::Int(1)),
            ("0o7_7", Tok::Int(63)),
            ("1.5e1_0", Tok::Float(1.5e10)),
            (".5_5", Tok::Float(0.55)),
            ("0E-0_1", Tok::Float(0.0)),
        ] {
            assert_eq!(lexed(src), Ok(want), "{src}");
        }
        for (src, message) in [
            ("1__0", "invalid decimal literal"),
            ("1_", "invalid decimal literal"),
            ("1_.5", "invalid decimal literal"),
            ("1._5", "invalid decimal literal"),
            ("1e_5", "invalid decimal literal"),
            ("1_e5", "invalid decimal literal"),
            ("1e5_", "invalid decimal literal"),
            ("1e+", "invalid decimal literal"),
            (
                "007",
                "leading zeros in decimal integer literals are not permitted",
            ),
            (
                "0_9",
                "leading zeros in decimal integer literals are not permitted",
            ),
            ("0x", "invalid hexadecimal literal"),
            ("0x_", "invalid hexadecimal literal"),
            ("0x1__f", "invalid hexadecimal literal"),
            ("0x1f_", "invalid hexadecimal literal"),
            ("0x1g", "invalid hexadecimal literal"),
            ("0b12", "invalid digit '2' in binary literal"),
            ("0o8", "invalid digit '8' in octal literal"),
            (
                "0xffffffffffffffffff",
                "integer literal does not fit in 64 bits",
            ),
        ] {
            let e = lexed(src).expect_err(src);
            assert!(e.contains(message), "{src}: {e}");
            assert!(e.contains("1:1"), "{src}: {e}");
        }
    }
}
