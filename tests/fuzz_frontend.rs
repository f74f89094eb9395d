//! A byte- and token-level mutation fuzzer of the front end (parser, checks, lowering, error
//! rendering) and, for inputs that lower, the JIT at small filter sizes. Stable Rust, no
//! cargo-fuzz: the corpus programs are mutated by a seeded generator, each input runs under
//! `catch_unwind` and a time check. Any panic, or an input taking longer than the limit, is a
//! failure; a clear `Err` is a pass.
//!
//! In CI (`cargo test --release --test fuzz_frontend`) it runs 20,000 inputs of seed 1. Long runs:
//!
//! ```text
//! cargo test --release --test fuzz_frontend -- --inputs 10000000 --seed 7 [--first N] [--jit-every 8]
//!     [--time-limit-s S] [--verbose]
//! ```
//!
//! Input `k` of seed `s` depends on (s, k) only, so `--first k --inputs 1 --verbose` replays one
//! (also after an abort: progress lines name the range being run).

mod common;

use ndjit::{Bindings, Filter, Sig};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Fragments that steer mutations towards the grammar's corners: keywords, the language's
/// names, numbers at the edges of i64/f64, odd whitespace and Unicode.
const TOKENS: &[&str] = &[
    "def ",
    "lambda ",
    "return ",
    "if ",
    "elif ",
    "else:",
    "for ",
    " in ",
    "while ",
    "break",
    "continue",
    "pass",
    " and ",
    " or ",
    "not ",
    " is ",
    "None",
    "True",
    "False",
    "yield",
    "global ",
    "nonlocal ",
    "class ",
    "import ",
    "from ",
    "del ",
    "assert ",
    "raise ",
    "try:",
    "with ",
    "async ",
    "await ",
    "x",
    "x[",
    "]",
    "(",
    ")",
    "[",
    "{",
    "}",
    ",",
    ".",
    ":",
    ";",
    ":=",
    "->",
    "@",
    "...",
    "np.",
    "math.",
    "np.sum(",
    "np.percentile(",
    "np.where(",
    "np.concatenate((",
    "np.delete(",
    "len(",
    "range(",
    "enumerate(",
    "zip(",
    "sorted(",
    "min(",
    "max(",
    "sum(",
    "abs(",
    "round(",
    "int(",
    "float(",
    "bool(",
    "x.astype(int)",
    "x.shape[0]",
    "x.size",
    ".sum()",
    "float('nan')",
    "np.nan",
    "math.inf",
    "**",
    "//",
    "%",
    "<<",
    ">>",
    "&",
    "|",
    "^",
    "~",
    "==",
    "!=",
    "<=",
    ">=",
    "<",
    ">",
    "+=",
    "-=",
    "*=",
    "/=",
    "//=",
    "**=",
    "%=",
    "=",
    "*",
    "-",
    "+",
    "/",
    "_",
    "__x",
    "0",
    "1",
    "-1",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "18446744073709551616",
    "1e308",
    "1e309",
    "1e-400",
    "5e-324",
    "0x7fffffffffffffff",
    "0o777",
    "0b101",
    "1_000",
    "1j",
    "00",
    "1__0",
    "1.e5",
    ".5",
    "5.",
    "0.0",
    "-0.0",
    "\u{a0}",
    "é",
    "\u{200b}",
    "\u{1F600}",
    "\r\n",
    "\r",
    "\t",
    "\\\n",
    "\n",
    "\n    ",
    "\n        ",
    "#",
    "'",
    "\"",
    "\"\"\"",
    "f'",
    "b'",
    "\0",
    "x[::-1]",
    "x[1:-1]",
    "x[x > 0]",
];

/// Operands: replacing a name or number by one of these keeps most programs parseable, so the
/// mutations reach the type checks and the lowering.
const ATOMS: &[&str] = &[
    "x",
    "x[0]",
    "x[-1]",
    "x[9]",
    "len(x)",
    "0",
    "1",
    "-1",
    "2",
    "0.5",
    "-0.0",
    "1e308",
    "5e-324",
    "9223372036854775807",
    "-9223372036854775808",
    "2**63",
    "np.nan",
    "np.inf",
    "math.pi",
    "True",
    "None",
    "x[1:]",
    "x[x > 0]",
    "np.sum(x)",
    "x.size",
    "(1, 2)",
    "[1.0, 2.0]",
    "int(x[0])",
    "i",
    "v",
];

/// Snippets repeated many times: nesting and length limits.
const REPEATS: &[&str] = &[
    "(",
    "[",
    "-",
    "not ",
    "x[",
    "1+",
    "(1,",
    "lambda x: ",
    "if x[0]:\n",
    "\n",
    " ",
];

struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    /// splitmix64
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

struct Seed {
    source: String,
    bindings: Bindings,
}

fn seeds() -> Vec<Seed> {
    // FUZZ_CORPUS: where the corpus is when the binary runs away from its checkout.
    let corpus: common::Corpus = match std::env::var("FUZZ_CORPUS") {
        Ok(path) => toml::from_str(&std::fs::read_to_string(path).expect("read FUZZ_CORPUS"))
            .expect("parse FUZZ_CORPUS"),
        Err(_) => common::corpus(),
    };
    let mut out: Vec<Seed> = corpus
        .programs
        .iter()
        .map(|p| Seed {
            source: p.source.clone(),
            bindings: common::bindings(p).unwrap_or_default(),
        })
        .collect();
    let extra = [
        "def f(x):\n    s = 0.0\n    for i, v in enumerate(x):\n        if v > s:\n            s = v\n        elif i % 2 == 0:\n            continue\n        else:\n            break\n    else:\n        s = -s\n    return s\n",
        "def f(x):\n    i = 0\n    while i < len(x) and x[i] == x[i]:\n        i += 1\n    a, b = x[0], x[-1]\n    return a if i > 3 else b\n",
        "lambda x: (x[0] < x[1] <= x[2]) + int(x[3]) // 3 ** 2 % 7 << 1",
        "def f(x, t=0.5):\n    m = x[(x > t) & ~np.isnan(x)]\n    return np.percentile(m, 25) if m.size else np.nan\n",
    ];
    out.extend(extra.iter().map(|s| Seed {
        source: s.to_string(),
        bindings: Bindings::new(),
    }));
    out
}

/// One mutation of `buf`, in place.
fn mutate(rng: &mut Rng, buf: &mut Vec<u8>, seeds: &[Seed]) {
    let at = rng.below(buf.len() + 1);
    match rng.below(10) {
        0 if !buf.is_empty() => {
            let i = at.min(buf.len() - 1);
            buf[i] ^= 1 << rng.below(8);
        }
        1 if !buf.is_empty() => {
            let i = at.min(buf.len() - 1);
            buf[i] = *rng.pick(b" \t\n\r()[]:,.=+-*/%<>!&|~^0123456789xe_'\"#\\\x00\x7f\xc3\xff");
        }
        2 => {
            let end = (at + 1 + rng.below(16)).min(buf.len());
            buf.drain(at.min(end)..end);
        }
        3 => {
            let end = (at + 1 + rng.below(24)).min(buf.len());
            let chunk = buf[at.min(end)..end].to_vec();
            let to = rng.below(buf.len() + 1);
            buf.splice(to..to, chunk);
        }
        4 => {
            let other = rng.pick(seeds).source.as_bytes();
            let from = rng.below(other.len());
            let end = (from + 1 + rng.below(40)).min(other.len());
            buf.splice(at..at, other[from..end].iter().copied());
        }
        5 => {
            let snippet = rng.pick(REPEATS).repeat(1 + rng.below(300));
            buf.splice(at..at, snippet.bytes());
        }
        6 => replace_token(rng, buf, TOKENS),
        7 => replace_token(rng, buf, ATOMS),
        _ => {
            let token = rng.pick(TOKENS);
            buf.splice(at..at, token.bytes());
        }
    }
}

/// Replaces one identifier, number or operator run with one of `tokens`.
fn replace_token(rng: &mut Rng, buf: &mut Vec<u8>, tokens: &[&str]) {
    if buf.is_empty() {
        return;
    }
    let start = rng.below(buf.len());
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'.';
    let class = word(buf[start]);
    let (mut a, mut b) = (start, start);
    while a > 0 && word(buf[a - 1]) == class && !buf[a - 1].is_ascii_whitespace() {
        a -= 1;
    }
    while b < buf.len() && word(buf[b]) == class && !buf[b].is_ascii_whitespace() {
        b += 1;
    }
    let token = rng.pick(tokens);
    buf.splice(a..b.max(a + 1).min(buf.len()), token.bytes());
}

/// Input `index` of `seed`: a seed program with 1 to 8 mutations (one in half the inputs, two in
/// a quarter ...: most inputs stay close enough to the language to reach the lowering), and
/// its bindings.
fn input(seed: u64, index: u64, seeds: &[Seed]) -> (String, &Bindings) {
    let mut rng = Rng::new(seed.wrapping_mul(0x1000_0000_01B3) ^ index);
    let base = rng.pick(seeds);
    let mut buf = base.source.clone().into_bytes();
    for _ in 0..1 + (rng.next().trailing_zeros() as usize).min(7) {
        mutate(&mut rng, &mut buf, seeds);
    }
    (String::from_utf8_lossy(&buf).into_owned(), &base.bindings)
}

#[derive(Default)]
struct Stats {
    parsed: u64,
    lowered: u64,
    jitted: u64,
}

/// The front end on one input; `jit` also compiles the inputs that lower, at small sizes.
fn exercise(source: &str, bindings: &Bindings, jit: bool, stats: &mut Stats) {
    let program = match ndjit::syntax::parse(source) {
        Ok(p) => p,
        Err(_) => {
            // Again through the public entry point, which renders the caret under the source.
            let e = Filter::compile(source, bindings).expect_err("parse failed once");
            let _ = e.to_string();
            return;
        }
    };
    stats.parsed += 1;
    let mut lowered = false;
    for sig in [Sig::Filter, Sig::Filter1d, Sig::Transform, Sig::Integrand] {
        match ndjit::lower::lower(&program, bindings, sig) {
            Ok(l) => {
                lowered |= sig == Sig::Filter;
                // The optimiser on the general IR and on two specialisations.
                for filter_size in [None, Some(1), Some(9)] {
                    let known = ndjit::ir::Known {
                        filter_size,
                        bound: None,
                        ..Default::default()
                    };
                    let func = ndjit::ir::substitute(l.func.clone(), known);
                    let _ = ndjit::ir::optimize(func, ndjit::ir::optimize::ALL);
                }
            }
            Err(_) => {
                let r = Filter::builder(source)
                    .bindings(bindings)
                    .signature(sig)
                    .compile();
                let _ = r.err().map(|e| e.to_string());
            }
        }
    }
    if lowered {
        stats.lowered += 1;
        if jit {
            stats.jitted += 1;
            for n in [1, 3] {
                let r = Filter::builder(source)
                    .bindings(bindings)
                    .filter_size(n)
                    .compile();
                let _ = r.map_err(|e| e.to_string());
            }
        }
    }
}

fn slow_again(source: &str, bindings: &Bindings, jit: bool, limit: Duration) -> bool {
    let t = Instant::now();
    exercise(source, bindings, jit, &mut Stats::default());
    t.elapsed() > limit
}

struct Options {
    inputs: u64,
    seed: u64,
    first: u64,
    jit_every: u64,
    time_limit: Duration,
    /// Stop after this long (a long run on a shared machine), reporting what ran.
    run_limit: Option<Duration>,
    verbose: bool,
}

fn options() -> Options {
    let mut o = Options {
        inputs: 20_000,
        seed: 1,
        first: 0,
        jit_every: 8,
        time_limit: Duration::from_secs(2),
        run_limit: None,
        verbose: false,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut num = || -> u64 {
            it.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{a} needs a number"))
        };
        match a.as_str() {
            "--inputs" => o.inputs = num(),
            "--seed" => o.seed = num(),
            "--first" => o.first = num(),
            "--jit-every" => o.jit_every = num().max(1),
            "--time-limit-ms" => o.time_limit = Duration::from_millis(num()),
            "--time-limit-s" => o.run_limit = Some(Duration::from_secs(num())),
            "--verbose" => o.verbose = true,
            // What libtest would be given (`cargo test` passes its own flags on).
            _ => {}
        }
    }
    o
}

static PANIC_MESSAGE: Mutex<String> = Mutex::new(String::new());

fn main() {
    let o = options();
    let seeds = seeds();
    panic::set_hook(Box::new(|info| {
        *PANIC_MESSAGE.lock().unwrap() = info.to_string();
    }));
    let mut stats = Stats::default();
    let mut failures: Vec<String> = Vec::new();
    let start = Instant::now();
    let mut ran: u64 = 0;
    for index in o.first..o.first + o.inputs {
        if o.run_limit.is_some_and(|limit| start.elapsed() > limit) {
            break;
        }
        ran += 1;
        if (index - o.first).is_multiple_of(1_000_000) && o.inputs >= 1_000_000 {
            eprintln!(
                "fuzz_frontend: inputs {index}..{} of seed {} ({:.0} s)",
                (index + 1_000_000).min(o.first + o.inputs),
                o.seed,
                start.elapsed().as_secs_f64()
            );
        }
        let (source, bindings) = input(o.seed, index, &seeds);
        if o.verbose {
            eprintln!("--- input {index}\n{source:?}");
        }
        let jit = index % o.jit_every == 0;
        let t = Instant::now();
        let run = panic::catch_unwind(AssertUnwindSafe(|| {
            exercise(&source, bindings, jit, &mut stats)
        }));
        let took = t.elapsed();
        let problem = match run {
            Err(_) => Some(format!("panic: {}", PANIC_MESSAGE.lock().unwrap())),
            // Timed again, alone: on a shared machine one slow run may be someone else's load.
            Ok(()) if took > o.time_limit && slow_again(&source, bindings, jit, o.time_limit) => {
                Some(format!("slow: {took:?}"))
            }
            Ok(()) => None,
        };
        if let Some(p) = problem {
            let failure = format!("input {index} of seed {}: {p}\n{source:?}", o.seed);
            eprintln!("fuzz_frontend: FAILURE {failure}"); // at once: a long run may be stopped
            failures.push(failure);
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "fuzz_frontend: {ran} inputs of seed {} in {secs:.1} s ({:.0}/s): {} parsed, {} lowered, {} JIT-compiled; {} failures",
        o.seed,
        ran as f64 / secs,
        stats.parsed,
        stats.lowered,
        stats.jitted,
        failures.len()
    );
    if !failures.is_empty() {
        for f in failures.iter().take(20) {
            println!("{f}\n");
        }
        std::process::exit(1);
    }
}
