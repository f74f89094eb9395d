//! Golden PTX of small kernels (regenerate with `NDJIT_BLESS=1`), and properties every generated
//! kernel must have: `.rn` on every floating-point add, subtract, multiply, divide and square
//! root, and no fused multiply-add outside the math routines that have one (glibc's FMA builds,
//! CPython's hypot: `ndjit_gpu::math::FUSED`).

mod common;

use ndjit_gpu::codegen::{generate, Dtype, Kernel, KernelSpec, Mode, Target};
use std::path::PathBuf;

fn golden(name: &str, text: &str) {
    let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden")).join(name);
    if std::env::var("NDJIT_BLESS").is_ok() || !path.exists() && std::env::var("CI").is_err() {
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    if want != text {
        let line = want
            .lines()
            .zip(text.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(want.lines().count().min(text.lines().count()));
        panic!(
            "{name} differs from the golden file at line {}:\n  golden: {:?}\n  now:    {:?}\n(NDJIT_BLESS=1 cargo test -p ndjit-gpu --test golden rewrites it)",
            line + 1,
            want.lines().nth(line),
            text.lines().nth(line)
        );
    }
}

/// The kernel of `src` for `spec`, compiled with `bindings` and specialised to its footprint.
fn kernel_with(src: &str, bindings: &ndjit::Bindings, spec: &KernelSpec) -> Kernel {
    let f = ndjit::Filter::builder(src)
        .bindings(bindings)
        .filter_size(spec.filter_size())
        .compile()
        .unwrap();
    generate(
        f.specialized_ir().unwrap(),
        f.layout(),
        f.bound_values(),
        spec,
    )
    .unwrap()
}

fn kernel(src: &str, spec: &KernelSpec) -> String {
    kernel_with(src, &ndjit::Bindings::new(), spec)
        .module
        .to_ptx()
}

#[test]
fn identity_1d() {
    let mut spec = KernelSpec::boxed(1, 1);
    spec.mode = Mode::Nearest;
    golden("identity_1d_f64.ptx", &kernel("x[0]", &spec));
}

#[test]
fn min_cross_2d() {
    let mut spec = KernelSpec::boxed(2, 3);
    spec.mask = vec![false, true, false, true, true, true, false, true, false];
    golden("min_cross_2d_f64.ptx", &kernel("np.min(x)", &spec));
}

#[test]
fn weighted_sum_f32_portable() {
    let mut spec = KernelSpec::boxed(1, 3);
    spec.input = Dtype::F32;
    spec.output = Dtype::F32;
    spec.mode = Mode::Constant;
    spec.cval = 0.5;
    spec.target = Target::PORTABLE;
    let mut w = ndjit::Bindings::new();
    w.set_array("w", vec![0.25, 0.5, 0.25]);
    let k = kernel_with("np.sum(x * w)", &w, &spec);
    golden("weighted_sum_1d_f32_sm75.ptx", &k.module.to_ptx());
}

#[test]
fn math_exp() {
    let m = ndjit_gpu::math::test_module(ndjit::math::MathFn::Exp, (7, 8), 90);
    golden("math_exp.ptx", &m.to_ptx());
}

/// Every floating-point arithmetic instruction of every corpus kernel is correctly rounded, and
/// unfused outside the math routines whose algorithms call fma.
#[test]
fn arithmetic_is_rounded_and_unfused() {
    let corpus = common::corpus();
    let spec = KernelSpec::boxed(2, 3);
    let mut bad = Vec::new();
    for p in common::selected(&corpus) {
        let k = kernel_with(&p.source, &common::bindings(p), &spec);
        for m in [&k.module, &k.replay] {
            let mut func = String::new();
            for line in m.to_ptx().lines() {
                if line.starts_with(".func") || line.starts_with(".visible .entry") {
                    // `.func (.param ... NAME_ret[8]) NAME(`: the name before the parenthesis.
                    let head = line.trim_end().trim_end_matches('(');
                    func = head.rsplit([' ', ')']).next().unwrap_or("").to_string();
                }
                let op = line.split_whitespace().next().unwrap_or("");
                let float = op.ends_with(".f64") || op.ends_with(".f32");
                let arith = ["add.", "sub.", "mul.", "div.", "sqrt.", "fma.", "mad."]
                    .iter()
                    .any(|a| op.starts_with(a));
                if float && arith && !op.contains(".rn.") {
                    bad.push(format!("{}: unrounded `{}`", p.name, line.trim()));
                }
                if op.starts_with("fma.") && !ndjit_gpu::math::FUSED.contains(&func.as_str()) {
                    bad.push(format!(
                        "{}: fma outside the fused math routines: `{}` in {func}",
                        p.name,
                        line.trim()
                    ));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{}",
        bad.iter().take(10).cloned().collect::<Vec<_>>().join("\n")
    );
}

/// A kernel without a failure branch says so (it is then launched without an error record, and
/// on the caller's stream not waited for); one with a check says it can fail.
#[test]
fn kernels_know_whether_they_can_fail() {
    let spec = KernelSpec::boxed(2, 3);
    let none = ndjit::Bindings::new();
    for src in [
        "min(x)",
        "np.median(x)",
        "max(x) - min(x)",
        "np.mean(x)",
        "x[4] * 2.0",
    ] {
        assert!(!kernel_with(src, &none, &spec).can_fail, "{src}");
    }
    for src in [
        // NumPy's choice between 0.0 and -0.0 is refused (`ndjit::ir::zero_signs`).
        "np.min(x)",
        "float(int(x[4]))",
        "math.log(x[4])",
        "def f(x):\n    assert x[0] > 0\n    return x[1]",
    ] {
        assert!(kernel_with(src, &none, &spec).can_fail, "{src}");
    }
}
