//! Every rejected program gets a clear error with its kind and position. Each row below is a
//! program a user could plausibly write, the error kind, the 1-based line and column where the
//! caret must point, and a fragment the message must contain.

use ndjit::{Bindings, ErrorKind as K, Filter};

#[rustfmt::skip]
const CASES: &[(&str, K, u32, u32, &str)] = &[
    // --- syntax --------------------------------------------------------------------------------
    ("max(x) -", K::Syntax, 1, 9, "expected an expression"),
    ("def f(x):\nreturn x[0]", K::Syntax, 2, 1, "expected an indented block"),
    ("def f(x):\n    if x[0] > 0\n        return 1.0\n    return 0.0", K::Syntax, 2, 16, "expected ':'"),
    ("def f(x):\n    y = (x[0] + 1\n    return y", K::Syntax, 3, 5, "expected ')'"),
    ("x[0] $ 2", K::Syntax, 1, 6, "unexpected character"),
    ("def f(x):\n    s = 'abc\n    return 1.0", K::Syntax, 2, 9, "unterminated string"),
    ("def f(x):\n        a = 1\n    return a", K::Syntax, 3, 5, "unindent does not match"),
    ("", K::Syntax, 1, 1, "empty filter source"),
    ("import os", K::Syntax, 1, 1, "no filter in the source: it holds only imports, strings or `pass`"),
    ("'abc'", K::Syntax, 1, 1, "no filter in the source"),
    ("def f(x):\n    return x[0]\ndef g(x):\n    return x[1]", K::Syntax, 3, 1, "single expression, lambda or def"),
    ("x[0] + 3j", K::Syntax, 1, 8, "complex numbers are not supported"),
    ("99999999999999999999 + x[0]", K::Syntax, 1, 1, "does not fit in 64 bits"),
    ("def f(x):\n    break", K::Syntax, 2, 5, "'break' outside loop"),
    ("def f(x):\n    continue", K::Syntax, 2, 5, "'continue' outside loop"),
    ("np.sum(x=1, 2)", K::Syntax, 1, 13, "positional argument follows keyword"),
    ("lambda x: x[0] if x[1] > 0", K::Syntax, 1, 27, "expected 'else'"),
    ("def f(x):\n    return x[0]\n  y = 1", K::Syntax, 3, 3, "unindent does not match"),
    // --- unsupported constructs -----------------------------------------------------------------
    ("def f(x):\n    try:\n        return x[0]\n    except:\n        return 0.0", K::Unsupported, 2, 5, "`try` statements are not supported"),
    ("def f(x):\n    with open('f') as g:\n        pass\n    return 0.0", K::Unsupported, 2, 5, "`with` statements"),
    ("def f(x):\n    class A:\n        pass\n    return 0.0", K::Unsupported, 2, 5, "`class` statements"),
    ("def f(x):\n    raise MyError('no')", K::Unsupported, 2, 11, "`MyError` cannot be raised by a filter"),
    ("def f(x):\n    raise", K::Unsupported, 2, 5, "a bare `raise`"),
    ("def f(x):\n    raise ValueError('a', 'b')", K::Unsupported, 2, 27, "several arguments"),
    ("def f(x):\n    assert len(x) == 9, x[0]\n    return x[0]", K::Unsupported, 2, 25, "only a string known at compile time"),
    ("def f(x):\n    assert len(x) == 9, 'size {a}'\n    return x[0]", K::Unsupported, 2, 25, "reserve"),
    ("def f(x):\n    global g\n    return x[0]", K::Unsupported, 2, 5, "`global` statements"),
    ("def f(x):\n    del x\n    return 0.0", K::Unsupported, 2, 5, "`del` statements"),
    ("def f(x):\n    yield x[0]", K::Unsupported, 2, 5, "`yield` statements"),
    ("len([a * b for a in x for b in x])", K::Unsupported, 1, 5, "more than one `for`"),
    ("np.sum(v * 2 for v in x)", K::Unsupported, 1, 8, "generator expression is supported only"),
    ("{'a': 1}", K::Unsupported, 1, 1, "dict and set literals"),
    ("def f(x):\n    if (n := len(x)) > 3:\n        return 1.0\n    return 0.0", K::Unsupported, 2, 11, "assignment expressions"),
    ("def f(x, *args):\n    return x[0]", K::Unsupported, 1, 10, "variadic parameters"),
    ("np.sum(*x)", K::Unsupported, 1, 8, "argument unpacking"),
    ("def f(x):\n    def g(v):\n        return v\n    return g(x[0])", K::Unsupported, 2, 5, "nested function definitions"),
    ("def f(x):\n    g = lambda v: v\n    return 0.0", K::Unsupported, 2, 9, "lambdas are not supported"),
    ("x @ 2.0", K::Type, 1, 1, "matmul: Input operand does not have enough dimensions"),
    ("[1.0, 2.0] @ [x[0], x[1]]", K::Type, 1, 1, "unsupported operand type(s) for @"),
    ("(x.reshape(2, 2) @ x[:2])[0]", K::Unsupported, 1, 1, "a product of float matrices"),
    ("np.dot(x[::2], x[:4]) + 1.0", K::Unsupported, 1, 8, "a strided view"),
    ("def f(x):\n    c = x.reshape(3, 3)[:, 0]\n    return c @ x[:3]", K::Unsupported, 2, 9, "a strided view"),
    ("def f(x):\n    x.flags = 1\n    return 0.0", K::Unsupported, 2, 5, "assigning to attributes"),
    ("def f(x, w=(1.0, 2.0)):\n    w[0] = 1.0\n    return x[0]", K::Unsupported, 2, 5, "not the filter's own copy"),
    ("def f(x, w=(1.0, 2.0)):\n    w += 1.0\n    return x[0]", K::Unsupported, 2, 5, "not the filter's own copy"),
    ("def f(x):\n    y = x\n    y[0] = 1.0\n    return x[0]", K::Unsupported, 2, 9, "shares memory"),
    ("def f(x):\n    y = x[1:]\n    x[0] = 1.0\n    return y[0]", K::Unsupported, 2, 9, "shares memory"),
    ("import fractions\ndef f(x):\n    return x[0]", K::Unsupported, 1, 1, "module `fractions` is not available"),
    ("import statistics\ndef f(x):\n    return statistics.mean(x)", K::UnknownName, 3, 12, "`statistics.mean` is not supported"),
    ("lambda x: np.copy(x, dtype=int)[0]", K::Arity, 1, 22, "unexpected keyword argument 'dtype'"),
    ("def f(x):\n    x[x > 0] = x[:2]\n    return x[0]", K::Unsupported, 2, 5, "through a boolean mask"),
    ("def f(x):\n    x[x] = 0.0\n    return x[0]", K::Type, 2, 7, "must be of integer (or boolean) type"),
    ("def f(x):\n    y = x.copy()\n    y[x[0] > 0] = 0.0\n    return y[0]", K::Unsupported, 3, 7, "with a bool"),
    ("def f(x):\n    import os\n    return 0.0", K::Unsupported, 2, 5, "module `os`"),
    // --- strings and tuples -----------------------------------------------------------------------
    ("def f(x, m='a'):\n    return x[0] if m < 1 else 0.0", K::Unsupported, 2, 24, "comparing a string with an int"),
    ("def f(x):\n    t = (1, 2)\n    t = (3, 4)\n    return x[t[0]]", K::Unsupported, 2, 5, "must be assigned once"),
    ("def f(x):\n    if x[0] > 0:\n        t = (1, 2)\n    return x[0]", K::Unsupported, 3, 9, "must be assigned once"),
    ("import typing\ndef f(x):\n    return typing.cast(x[0])", K::Arity, 3, 12, "cast() takes a type and a value"),
    ("def f(x, w=(1.0, 2.0)):\n    x = x.sum()\n    if x > 0:\n        x = np.array(w) * 2\n    return 0.0", K::Type, 4, 9, "`x` holds an array here but a number elsewhere"),
    // --- helper functions -------------------------------------------------------------------------
    ("def f(x):\n    return g(x[0])\ndef g(v):\n    return g(v - 1)", K::Unsupported, 4, 12, "recursion cannot be inlined: `g` calls `g`"),
    ("def f(x):\n    return g(x[0])\ndef g(v):\n    return h(v)\ndef h(v):\n    return g(v)", K::Unsupported, 6, 12, "`g` calls `h` calls `g`"),
    ("def f(x):\n    return g(x[0], 1)\ndef g(v):\n    return v", K::Arity, 2, 12, "takes 1 positional argument but 2"),
    ("def f(x):\n    return g()\ndef g(v):\n    return v", K::Arity, 2, 12, "missing required argument `v`"),
    ("def f(x):\n    return g(x, w=1)\ndef g(v):\n    return v[0]", K::Arity, 2, 17, "unexpected keyword argument `w`"),
    ("def f(x):\n    return g(x)\ndef g(a):\n    a[0] = 1.0\n    return a.sum()", K::Unsupported, 4, 5, "writes into its argument `a`"),
    ("def f(x):\n    return g(x[0])\ndef g(v):\n    if v > 0:\n        return None\n    return v", K::Unsupported, 5, 16, "returns None"),
    ("def f(x):\n    return x[0]\nk = 3", K::Syntax, 3, 1, "with helper functions beside it"),
    ("def f(x):\n    return x[0]\nh = g", K::Syntax, 3, 1, "must name a helper function"),
    ("def f(x):\n    return g(x)\ndef g(x):\n    return f(x)", K::Syntax, 1, 1, "every function is called by another one"),
    ("'abc' + 'd'", K::Type, 1, 1, "must be a number, not a string"),
    ("float('abc')", K::Unsupported, 1, 7, "strings are not supported"),
    ("x[[0.5, 1.0]].sum()", K::Type, 1, 3, "arrays used as indices must be of integer (or boolean) type"),
    ("np.percentile(x, (10, 90))", K::Type, 1, 1, "the return value must be a number, but this is an array"),
    ("np.percentile(x, None)", K::Unsupported, 1, 18, "q must be a number or a list of numbers"),
    ("np.median(x, keepdims=True)", K::Unsupported, 1, 14, "keepdims"),
    ("def f(x):\n    return sum([x[i] for i in range(0, len(x), int(x[0]))])", K::Unsupported, 2, 31, "a comprehension over a range() whose step is computed"),
    ("x[::int(x[0])].sum()", K::Unsupported, 1, 5, "slice step must be a constant"),
    ("np.sort(x)[0] if x.tobytes() else 0.0", K::UnknownName, 1, 18, "`.tobytes()` is not supported"),
    ("np.linalg.det(x)", K::UnknownName, 1, 1, "`numpy.linalg.det` is not supported"),
    ("np.linalg.norm(x, 3)", K::Unsupported, 1, 19, "np.linalg.norm supports ord None, 0, 1, 2"),
    ("np.linalg.norm(x.reshape(3, 3), 1)", K::Unsupported, 1, 33, "only the Frobenius norm of a 2-D array"),
    ("np.linalg.norm(x, axis=0)", K::Unsupported, 1, 19, "np.linalg.norm along an axis"),
    ("np.where(x > 0, x)", K::Arity, 1, 1, "np.where() needs three arguments"),
    ("np.where(x > 0)", K::Type, 1, 1, "the return value must be a number"),
    ("np.unique(x, return_counts=x[0] > 0)[0][0]", K::Unsupported, 1, 14, "`return_counts` must be a constant True or False"),
    ("np.unique(x, return_index=True, equal_nan=False)[0][0]", K::Unsupported, 1, 1, "equal_nan=False and return_index"),
    ("np.histogram(x, bins='auto')[0][0]", K::Unsupported, 1, 17, "bin estimators"),
    ("np.histogram(x, bins=0)[0][0]", K::Type, 1, 17, "`bins` must be positive"),
    ("np.histogram(x, bins=2.5)[0][0]", K::Type, 1, 17, "bins must be an integer"),
    ("np.histogram(x, [0.0, 1.0], range=(0, 1))[0][0]", K::Unsupported, 1, 29, "both bin edges and a range"),
    ("np.histogram(x, weights=x)[0][0]", K::Unsupported, 1, 17, "`weights` is not supported"),
    ("np.roll(x, 1, axis=0)[0]", K::Unsupported, 1, 15, "np.roll along an axis"),
    ("np.roll(x)[0]", K::Arity, 1, 1, "np.roll() needs the shift"),
    ("np.r_[x.reshape(3, 3)][0]", K::Unsupported, 1, 7, "np.r_ of a 2-D array"),
    ("np.r_[0:int(x[0])][0]", K::Unsupported, 1, 9, "must be a constant"),
    ("np.r_[0:][0]", K::Unsupported, 1, 7, "np.r_ needs the end of a range"),
    ("np.r_(x)[0]", K::Type, 1, 1, "np.r_ is indexed, not called"),
    ("np.linspace(0, 1, 5, retstep=True)[0]", K::Unsupported, 1, 1, "np.linspace's retstep"),
    ("x.reshape(3, 3).sum(axis=2)[0]", K::Arity, 1, 21, "axis 2 is out of bounds for array of dimension 2"),
    ("x.reshape(3, 3).sum(axis=int(x[0]))[0]", K::Unsupported, 1, 21, "axis must be a constant"),
    // --- names ----------------------------------------------------------------------------------
    ("max(x) - threshold", K::UnknownName, 1, 10, "name `threshold` is not defined"),
    ("def f(x):\n    print(x)\n    return 0.0", K::UnknownName, 2, 5, "Python's builtin `print` is not supported in filters"),
    ("def f(x, k):\n    return x[k]", K::Binding, 1, 10, "parameter `k` has no value"),
    ("np.foo(x)", K::UnknownName, 1, 1, "`numpy.foo` is not supported"),
    ("math.gamma(x[0])", K::UnknownName, 1, 1, "`math.gamma` is not supported"),
    ("x.frobnicate()", K::UnknownName, 1, 1, "`.frobnicate()` is not supported"),
    ("scipy.stats.mode(x)", K::UnknownName, 1, 1, "name `scipy` is not defined"),
    ("def f():\n    return 1.0", K::Arity, 1, 1, "takes no parameters"),
    // --- arity and types ------------------------------------------------------------------------
    ("len(x, x)", K::Arity, 1, 1, "takes 1 positional argument but 2 were given"),
    ("np.sqrt()", K::Arity, 1, 1, "takes 1 positional argument but 0 were given"),
    ("math.atan2(x[0])", K::Arity, 1, 1, "math.atan2() takes 2 arguments but 1 was given"),
    ("np.mean(x, axis=1)", K::Arity, 1, 12, "axis must be None or 0"),
    ("np.std(x, bias=True)", K::Arity, 1, 11, "unsupported keyword argument `bias`"),
    ("math.sqrt(x)", K::Type, 1, 11, "math.sqrt() takes a number, not an array"),
    ("x", K::Type, 1, 1, "the return value must be a number, but this is an array"),
    ("x - 1", K::Type, 1, 1, "the return value must be a number"),
    ("def f(x):\n    return", K::Type, 2, 5, "must return a number, not None"),
    ("x[1.5]", K::Type, 1, 3, "array indices must be integers, not float"),
    ("x[len(x) / 2]", K::Type, 1, 3, "array indices must be integers"),
    ("x[1, 1]", K::Type, 1, 3, "too many indices"),
    ("1.0 if x else 0.0", K::Type, 1, 8, "truth value of an array"),
    ("def f(x):\n    while x > 0:\n        return 1.0\n    return 0.0", K::Type, 2, 11, "truth value of an array"),
    ("x[0] & 1.5", K::Type, 1, 1, "bitwise operators need booleans or integers"),
    ("~x[0]", K::Type, 1, 1, "bad operand type for unary ~"),
    ("def f(x):\n    for i in range(1.5):\n        pass\n    return 0.0", K::Type, 2, 20, "range() arguments must be integers"),
    ("def f(x):\n    a = x[0]\n    a = x\n    return 0.0", K::Type, 3, 5, "holds an array here but a number elsewhere"),
    ("def f(x):\n    a, b = x[0], x[1], x[2]\n    return a", K::Type, 2, 5, "cannot unpack 3 values into 2 names"),
    ("x[0] < x < x[2]", K::Type, 1, 1, "chained comparisons of arrays"),
    ("x[0] is 1.0", K::Unsupported, 1, 9, "`is` only compares with None"),
    ("len(3.0)", K::Type, 1, 5, "expected an array, got a float"),
    ("np.concatenate(x, x)", K::Arity, 1, 1, "takes 1 positional argument"),
    ("np.concatenate((x[0], x))", K::Type, 1, 16, "needs arrays, not numbers"),
    ("x[::0].sum()", K::Type, 1, 5, "slice step cannot be zero"),
    ("def f(x):\n    for i in range(0, 9, 0):\n        pass\n    return 0.0", K::Type, 2, 26, "must not be zero"),
    ("def f(x, w=np.ones(3)):\n    return x[0]", K::Unsupported, 1, 12, "default values must be numbers"),
    ("range(3)", K::Unsupported, 1, 1, "can only be used as the iterable of a for loop"),
    ("x.astype(str)", K::UnknownName, 1, 10, "Python's builtin `str` is not supported in filters"),
    ("x.astype('uint8')[0]", K::Type, 1, 10, "astype() supports int, float and bool"),
    ("x.astype('float32')[0]", K::Type, 1, 10, "astype() supports int, float and bool"),
    // --- CPython's tokenizer: tabs, NUL bytes, limits -----------------------------------------
    ("def f(x):\n        a = 1\n\treturn a", K::Syntax, 3, 1, "inconsistent use of tabs and spaces"),
    ("def f(x):\n  if x[0] > 0:\n\treturn 1.0\n  return 0.0", K::Syntax, 3, 1, "(TabError)"),
    ("x[0] +\0 1", K::Syntax, 1, 7, "source code cannot contain null bytes"),
    ("x[0] # \0", K::Syntax, 1, 8, "null bytes"),
    // --- builtin sum: Python's order or nothing ------------------------------------------------
    ("sum([float(x[0]), float(x[1])])", K::Unsupported, 1, 5, "depends on the Python version"),
    ("sum(x, 1.0)", K::Unsupported, 1, 8, "sum() of an array with a start value"),
    ("sum(x.reshape(3, 3))", K::Unsupported, 1, 5, "sum() of a 2-D array"),
];

#[test]
fn every_bad_program_gets_kind_position_and_message() {
    assert!(
        CASES.len() >= 60,
        "the brief asks for at least 60 error cases"
    );
    let mut failures = Vec::new();
    for (src, kind, line, col, fragment) in CASES {
        match Filter::compile(src, &Bindings::new()) {
            Ok(_) => failures.push(format!("{src:?}: compiled, expected {kind:?}")),
            Err(e) => {
                let shown = e.to_string();
                if e.kind != *kind
                    || e.line() != *line
                    || e.column() != *col
                    || !shown.contains(fragment)
                {
                    failures.push(format!(
                        "{src:?}: expected {kind:?} at {line}:{col} containing {fragment:?}\n   got {:?} at {}:{}: {shown}",
                        e.kind,
                        e.line(),
                        e.column()
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases wrong:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

#[test]
fn errors_show_the_line_and_a_caret_under_the_span() {
    let e = Filter::compile(
        "def f(x):\n    return np.mean(x) + undefined_name\n",
        &Bindings::new(),
    )
    .unwrap_err();
    let shown = e.to_string();
    assert!(
        shown.contains("2 |     return np.mean(x) + undefined_name"),
        "{shown}"
    );
    let caret_line = shown.lines().find(|l| l.contains('^')).unwrap();
    assert_eq!(
        caret_line.find('^').unwrap() - caret_line.find('|').unwrap() - 2,
        24,
        "{shown}"
    );
    assert_eq!(caret_line.matches('^').count(), "undefined_name".len());
    assert!(
        shown.contains("help:"),
        "a hint says what to do instead: {shown}"
    );
}

#[test]
fn limits_give_errors_not_stack_overflows() {
    let deep = format!("{}x[0]{}", "(".repeat(5000), ")".repeat(5000));
    assert_eq!(
        Filter::compile(&deep, &Bindings::new()).unwrap_err().kind,
        K::Limit
    );
    let long_chain = vec!["x[0]"; 5000].join(" + ");
    assert_eq!(
        Filter::compile(&long_chain, &Bindings::new())
            .unwrap_err()
            .kind,
        K::Limit
    );
    let huge = format!("x[0] + {}", "0".repeat(70_000));
    assert_eq!(
        Filter::compile(&huge, &Bindings::new()).unwrap_err().kind,
        K::Limit
    );
    let mut nested = String::from("def f(x):\n");
    for d in 0..120 {
        nested.push_str(&format!("{}if x[0] > {d}:\n", "    ".repeat(d + 1)));
    }
    nested.push_str(&format!(
        "{}return 1.0\n    return 0.0\n",
        "    ".repeat(121)
    ));
    assert_eq!(
        Filter::compile(&nested, &Bindings::new()).unwrap_err().kind,
        K::Limit
    );
}

#[test]
fn long_chains_are_limits_not_stack_overflows() {
    // A chain is flat in Python's syntax tree, but `a < b < c` and `a and b` become short-circuit
    // branches as deep as the chain is long: past the nesting limit, an error.
    for link in [" < ", " == ", " and ", " or ", " is not ", " in "] {
        let long = vec!["x[0]"; 4000].join(link);
        let e = Filter::compile(&long, &Bindings::new()).unwrap_err();
        assert_eq!(e.kind, K::Limit, "{link}: {e}");
        assert!(e.to_string().contains("nesting deeper than"), "{e}");
    }
}

/// The deepest program of each nesting form that compiles: the depth one below the limit
/// (found by searching down from it).
fn deepest(form: impl Fn(usize) -> String) -> (usize, Filter) {
    (1..=260)
        .rev()
        .find_map(|n| {
            Filter::compile(&form(n), &Bindings::new())
                .ok()
                .map(|f| (n, f))
        })
        .expect("some depth compiles")
}

#[test]
fn programs_at_the_nesting_limit_compile_and_run_on_a_small_stack() {
    // A C host may call from a thread with a small stack: the recursive walks grow their own.
    type Form = fn(usize) -> String; // the program at a depth
    let forms: [(&str, Form); 7] = [
        ("parentheses", |n| {
            format!("{}x[0]{}", "(".repeat(n), ")".repeat(n))
        }),
        ("negations", |n| format!("{}x[0]", "-".repeat(n))),
        ("sums", |n| vec!["x[0]"; n + 1].join(" + ")),
        ("ternaries", |n| "x[0] if x[1] else ".repeat(n) + "x[2]"),
        ("comparisons", |n| vec!["x[0]"; n + 1].join(" < ")),
        ("nots", |n| "not ".repeat(n) + "x[0]"),
        ("calls", |n| {
            format!("{}x[0]{}", "abs(".repeat(n), ")".repeat(n))
        }),
    ];
    let run = move || {
        for (name, form) in forms {
            let (n, f) = deepest(form);
            assert!(n >= 100, "{name}: only {n} levels compile");
            let window = [1.0, 2.0, 3.0];
            assert_eq!(f.call(&window), f.interpret(&window), "{name}");
            let image = ndarray::Array2::from_shape_fn((6, 5), |(i, j)| (i * 5 + j) as f64);
            let opts = ndjit::driver::Options::size(&[3, 3]).threads(1);
            let r = ndjit::driver::generic_filter(image.view(), &f, &opts).unwrap();
            assert!(r.iter().all(|v| !v.is_nan()), "{name}");
        }
    };
    std::thread::Builder::new()
        .stack_size(64 * 1024)
        .spawn(run)
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn nesting_follows_cpythons_limits() {
    // CPython takes 200 nested brackets and 99 levels of indentation, and refuses one more.
    let parens = |n: usize| format!("{}x{}[0] + 1", "(".repeat(n), ")".repeat(n));
    let f = Filter::compile(&parens(200), &Bindings::new()).unwrap();
    assert_eq!(f.call(&[2.0]).unwrap(), 3.0);
    assert_eq!(f.interpret(&[2.0]).unwrap(), 3.0);
    let e = Filter::compile(&parens(201), &Bindings::new()).unwrap_err();
    assert_eq!((e.kind, e.line(), e.column()), (K::Limit, 1, 201));
    assert!(e.to_string().contains("too many nested parentheses"), "{e}");
    let blocks = |n: usize| {
        let mut s = String::from("def f(x):\n");
        for d in 1..n {
            s.push_str(&format!("{}if x[0] > {d}:\n", " ".repeat(d)));
        }
        s + &format!("{}return 1.0\n return 0.0\n", " ".repeat(n))
    };
    assert_eq!(
        Filter::compile(&blocks(99), &Bindings::new())
            .unwrap()
            .call(&[100.0]),
        Ok(1.0)
    );
    let e = Filter::compile(&blocks(100), &Bindings::new()).unwrap_err();
    assert_eq!((e.kind, e.line()), (K::Limit, 101));
    assert!(
        e.to_string().contains("too many levels of indentation"),
        "{e}"
    );
}

/// A write into what may still be a bound array (NumPy changes the array every later call
/// reads) is refused where the sharing starts, with the same wording as the C and Python faces.
#[test]
fn writes_into_a_bound_array_through_a_version_or_an_alias_are_refused() {
    let mut b = Bindings::new();
    b.set_array("w", vec![1.0, 2.0]);
    let cases = [
        (
            "def f(x, w):\n    w = w\n    w[0] = 1.0\n    return w[1]",
            2,
            9,
            "may still be the array it was given",
        ),
        (
            "def f(x, w):\n    if x[0] > 0:\n        w = w[1:]\n    w[0] = 1.0\n    return w[0]",
            3,
            9,
            "may still be the array it was given",
        ),
        (
            "def f(x, w):\n    y = w[:]\n    y[0] += 1.0\n    return y[0]",
            2,
            9,
            "would change `w`, which is read after the call",
        ),
        (
            "def f(x):\n    y = w\n    y[0] = x[0]\n    return y[0]",
            2,
            9,
            "would change `w`, which is read after the call",
        ),
    ];
    for (src, line, col, fragment) in cases {
        let e = Filter::compile(src, &b)
            .err()
            .unwrap_or_else(|| panic!("{src:?} compiled"));
        assert_eq!(e.kind, K::Unsupported, "{e}");
        assert_eq!((e.span.start.line, e.span.start.column), (line, col), "{e}");
        assert!(e.to_string().contains(fragment), "{e}");
    }
    // Rebinding it in a branch, or copying it first, leaves it alone: both compile and run.
    for src in [
        "def f(x, w):\n    if x[0] > 0:\n        w = w * 2.0\n    return w[0] + w[1]",
        "def f(x, w):\n    w = w.copy()\n    w[0] = x[0]\n    return w[0] + w[1]",
    ] {
        let f = Filter::compile(src, &b).unwrap_or_else(|e| panic!("{src:?}: {e}"));
        assert_eq!(
            f.call(&[1.0]).unwrap(),
            if src.contains("copy") { 3.0 } else { 6.0 }
        );
        assert_eq!(
            f.call(&[-1.0]).unwrap(),
            if src.contains("copy") { 1.0 } else { 3.0 }
        );
    }
}

#[test]
fn binding_errors() {
    let mut b = Bindings::new();
    b.set_array("w", vec![1.0, 2.0]);
    let f = Filter::compile("np.sum(x * w)", &b).unwrap();
    let mut wrong = Bindings::new();
    wrong.set_float("w", 1.0);
    let e = f.with_bindings(&wrong).unwrap_err();
    assert_eq!(e.kind, K::Binding);
    assert!(
        e.to_string()
            .contains("`w` was compiled as a float64 array, but a float was given"),
        "{e}"
    );
}

/// Inlining copies a helper's code at every call: a call tree that doubles at each level stops at
/// the cap with a clear error instead of blowing up compile time and code size.
#[test]
fn inlining_is_capped() {
    // `levels` helpers, each calling the next twice: 2**levels - 1 calls, value x * 2**(levels-1).
    let doubling = |levels: u32| {
        let mut src = String::from("def f(x):\n    return h1(x[0])\n");
        for k in 1..levels {
            src += &format!("def h{k}(v):\n    return h{0}(v) + h{0}(v)\n", k + 1);
        }
        src + &format!("def h{levels}(v):\n    return v\n")
    };
    let e = Filter::compile(doubling(9).as_str(), &Bindings::new()).unwrap_err();
    assert_eq!(e.kind, K::Limit, "{e}");
    assert!(e.message.contains("helper calls to inline"), "{e}");
    // 255 calls are within the cap.
    let f = Filter::compile(doubling(8).as_str(), &Bindings::new()).unwrap();
    assert_eq!(f.call(&[1.5]).unwrap(), 1.5 * 128.0);
}

/// A bound string is folded into the code: rebinding another one without recompiling is an
/// error, never the old branch silently.
#[test]
fn folded_strings_cannot_be_rebound() {
    let mut b = Bindings::new();
    b.set("method", ndjit::Value::Str("mean".into()));
    let src = "def f(x):\n    return x.mean() if method == 'mean' else x.max()";
    let f = Filter::compile(src, &b).unwrap();
    assert_eq!(f.call(&[1.0, 3.0]).unwrap(), 2.0);
    assert!(f.with_bindings(&b).is_ok());
    b.set("method", ndjit::Value::Str("max".into()));
    let e = f.with_bindings(&b).unwrap_err();
    assert_eq!(e.kind, K::Binding);
    assert!(e.message.contains("folded into the code"), "{e}");
    assert_eq!(
        Filter::compile(src, &b).unwrap().call(&[1.0, 3.0]).unwrap(),
        3.0
    );
}
