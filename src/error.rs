//! Errors with source locations.
//!
//! Compile-time problems are [`Error`]s: a [`ErrorKind`], a [`Span`] into the source, a message and,
//! where we know one, a hint saying what to write instead. Displaying an `Error` prints the offending
//! line with `^^^` under the span, in the style of rustc and regex-syntax. Run-time failures inside a
//! compiled filter (an index out of range, the minimum of an empty array) are [`RuntimeError`]s; they
//! carry the span of the expression that failed.

use std::fmt;

/// A position in the source: byte offset plus 1-based line and column (columns count characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Position {
    pub offset: usize,
    pub line: u32,
    pub column: u32,
}

/// A half-open byte range of the source, `start..end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub start: Position,
    pub end: Position,
}

impl Span {
    pub fn new(start: Position, end: Position) -> Span {
        Span { start, end }
    }
    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        let start = if other.start.offset < self.start.offset {
            other.start
        } else {
            self.start
        };
        let end = if other.end.offset > self.end.offset {
            other.end
        } else {
            self.end
        };
        Span { start, end }
    }
}

/// Declares a fieldless enum with `ALL`, its variants in order: the faces that map every variant
/// (Python's classes, C's statuses) enumerate it in their tests, and cannot miss one added later.
macro_rules! enum_with_all {
    ($(#[$meta:meta])* pub enum $name:ident { $($(#[$vmeta:meta])* $variant:ident,)* }) => {
        $(#[$meta])*
        pub enum $name {
            $($(#[$vmeta])* $variant,)*
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];
        }
    };
}

enum_with_all! {
    /// What went wrong, coarsely; the message says exactly.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum ErrorKind {
        /// The text is not Python: a bad token, unbalanced brackets, wrong indentation.
        Syntax,
        /// Valid Python that ndjit does not compile (`try`, `print`, strings, classes ...).
        Unsupported,
        /// A name that is neither a parameter, a local, a bound value nor a known function.
        UnknownName,
        /// A known function called with the wrong number or kind of arguments.
        Arity,
        /// A value of the wrong type: an array where a number is needed, a float index ...
        Type,
        /// A nesting, size or IR-node limit was exceeded.
        Limit,
        /// Bound values that do not fit the compiled filter.
        Binding,
        /// The code generator failed (a bug in ndjit: please report it).
        Codegen,
    }
}

impl ErrorKind {
    /// Whether Python reports a compile error of this kind as a `TypeError` (wrong types,
    /// arguments or bound values: the program is in the language, its values do not fit) rather
    /// than a `SyntaxError` (a program outside the language).
    pub fn is_type_error(self) -> bool {
        match self {
            ErrorKind::Type | ErrorKind::Arity | ErrorKind::Binding => true,
            ErrorKind::Syntax
            | ErrorKind::Unsupported
            | ErrorKind::UnknownName
            | ErrorKind::Limit
            | ErrorKind::Codegen => false,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Syntax => "syntax error",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::UnknownName => "unknown name",
            ErrorKind::Arity => "wrong arguments",
            ErrorKind::Type => "type error",
            ErrorKind::Limit => "limit exceeded",
            ErrorKind::Binding => "binding error",
            ErrorKind::Codegen => "internal compiler error",
        }
    }
}

/// A compile-time error, with everything needed to show the user where and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Error {
    pub kind: ErrorKind,
    pub span: Span,
    pub message: String,
    /// What to write instead, when there is an obvious alternative.
    pub hint: Option<String>,
    /// For [`ErrorKind::UnknownName`] errors about a plain name (`k`, not `np.k`), that name: a
    /// binding layer tells from it that the name is a value it could not bind.
    pub name: Option<Box<str>>,
    /// The whole source, kept so that `Display` can quote the offending line.
    source: std::sync::Arc<str>,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, span: Span, message: impl Into<String>) -> Error {
        Error {
            kind,
            span,
            message: message.into(),
            hint: None,
            name: None,
            source: "".into(),
        }
    }
    pub(crate) fn hint(mut self, hint: impl Into<String>) -> Error {
        self.hint = Some(hint.into());
        self
    }
    /// Records the unknown name this error is about (see [`Error::name`]).
    pub(crate) fn naming(mut self, name: &str) -> Error {
        self.name = Some(name.into());
        self
    }
    /// Attach the source text so that the error can be rendered with a caret.
    pub(crate) fn with_source(mut self, source: &std::sync::Arc<str>) -> Error {
        self.source = source.clone();
        self
    }
    /// 1-based line of the start of the span.
    pub fn line(&self) -> u32 {
        self.span.start.line
    }
    /// 1-based column (in characters) of the start of the span.
    pub fn column(&self) -> u32 {
        self.span.start.column
    }
    /// The text of the source line the error starts on.
    pub fn source_line(&self) -> Option<&str> {
        self.source
            .lines()
            .nth((self.span.start.line as usize).checked_sub(1)?)
    }
    /// The source line with a caret line under the span, or `None` if no source is attached.
    pub fn snippet(&self) -> Option<String> {
        snippet(&self.source, self.span)
    }
}

/// An arity error worded as Python words it: "f() takes 1 positional argument but 2 were given".
/// `takes` is the count wanted ("1", "1 to 3"), `kind` what qualifies the noun ("positional ").
pub(crate) fn arity_message(callee: &str, takes: &str, kind: &str, given: usize) -> String {
    let noun = if takes == "1" {
        "argument"
    } else {
        "arguments"
    };
    let verb = if given == 1 { "was" } else { "were" };
    format!("{callee}() takes {takes} {kind}{noun} but {given} {verb} given")
}

/// Renders `line_text\n   ^^^` for a span (the caret covers the span's part of its first line).
pub(crate) fn snippet(source: &str, span: Span) -> Option<String> {
    if source.is_empty() || span.start.line == 0 {
        return None;
    }
    let text = source.lines().nth(span.start.line as usize - 1)?;
    let pad = span.start.column.saturating_sub(1) as usize;
    let width = if span.end.line == span.start.line {
        (span.end.column.saturating_sub(span.start.column) as usize).max(1)
    } else {
        text.chars().count().saturating_sub(pad).max(1)
    };
    let gutter = format!("{}", span.start.line);
    Some(format!(
        "{gutter} | {text}\n{} | {}{}",
        " ".repeat(gutter.len()),
        " ".repeat(pad),
        "^".repeat(width)
    ))
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at {}:{}: {}",
            self.kind.as_str(),
            self.line(),
            self.column(),
            self.message
        )?;
        if let Some(snippet) = self.snippet() {
            write!(f, "\n{snippet}")?;
        }
        if let Some(hint) = &self.hint {
            write!(f, "\nhelp: {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

enum_with_all! {
    /// The Python exception a failure corresponds to: the one the user's own code (or scipy) raises
    /// in the same situation. Each face maps it once: Python to its exception class, C to a status
    /// code and kind string, so no message text ever decides which exception is raised.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum Exception {
        IndexError,
        ValueError,
        ZeroDivisionError,
        OverflowError,
        TypeError,
        RuntimeError,
        MemoryError,
        /// NumPy's `AxisError` (both a `ValueError` and an `IndexError`).
        AxisError,
        KeyboardInterrupt,
        /// A failed `assert` in the filter.
        AssertionError,
        /// Raised by the filter's own `raise` statements (with the classes above).
        NotImplementedError,
        ArithmeticError,
        /// A local variable read where no assignment has run (a `NameError`).
        UnboundLocalError,
        /// Python's `statistics.StatisticsError` (a `ValueError`).
        StatisticsError,
    }
}

impl Exception {
    /// The Python class name, e.g. `"IndexError"`.
    pub fn name(self) -> &'static str {
        match self {
            Exception::IndexError => "IndexError",
            Exception::ValueError => "ValueError",
            Exception::ZeroDivisionError => "ZeroDivisionError",
            Exception::OverflowError => "OverflowError",
            Exception::TypeError => "TypeError",
            Exception::RuntimeError => "RuntimeError",
            Exception::MemoryError => "MemoryError",
            Exception::AxisError => "AxisError",
            Exception::KeyboardInterrupt => "KeyboardInterrupt",
            Exception::AssertionError => "AssertionError",
            Exception::NotImplementedError => "NotImplementedError",
            Exception::ArithmeticError => "ArithmeticError",
            Exception::UnboundLocalError => "UnboundLocalError",
            Exception::StatisticsError => "StatisticsError",
        }
    }
}

impl fmt::Display for Exception {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A failure while a compiled filter ran, e.g. `index 9 is out of bounds for size 9`.
#[derive(Clone, Debug, PartialEq)]
pub struct RuntimeError {
    pub message: String,
    /// The Python exception the user's code raises in this situation.
    pub exception: Exception,
    pub span: Span,
    /// The source line with a caret under the failing expression.
    pub snippet: Option<String>,
}

impl RuntimeError {
    /// The error of a call stopped by [`crate::interrupt::poll`] (Ctrl-C, or a cancelled driver
    /// run): Python's `KeyboardInterrupt`.
    pub fn interrupted() -> RuntimeError {
        RuntimeError {
            message: "the filter was interrupted".into(),
            exception: Exception::KeyboardInterrupt,
            span: Span::default(),
            snippet: None,
        }
    }

    /// The error of a call that needed native code generated late
    /// ([`crate::FilterBuilder::native_code`]) when generating it failed: Python's
    /// `RuntimeError`, with the compile error's message.
    pub fn native_code_failed(e: &Error) -> RuntimeError {
        RuntimeError {
            message: format!("{}: {}", e.kind.as_str(), e.message),
            exception: Exception::RuntimeError,
            span: e.span,
            snippet: None,
        }
    }

    /// Whether this is [`RuntimeError::interrupted`].
    pub fn is_interrupt(&self) -> bool {
        *self == RuntimeError::interrupted()
    }
}

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        // Line 0: no place in the source (an interrupt, say).
        if self.span.start.line > 0 {
            write!(
                f,
                " (at {}:{})",
                self.span.start.line, self.span.start.column
            )?;
        }
        if let Some(s) = &self.snippet {
            write!(f, "\n{s}")?;
        }
        Ok(())
    }
}

impl std::error::Error for RuntimeError {}

pub type Result<T, E = Error> = std::result::Result<T, E>;
