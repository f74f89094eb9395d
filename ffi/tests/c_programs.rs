//! The C examples in `ffi/examples/`, built with the system C compiler against `ndjit.h` and the
//! built library, run, and checked against values computed here with the Rust API; then run again
//! under valgrind memcheck (skipped, with a message, when valgrind is not installed). Also: the
//! static library, and an install through `ffi/install.sh` used through pkg-config.

mod common;

use common::{ffi_dir, have, lib_dir, run_ok, work_dir};
use ndjit_core::driver::{self, Dtype, Footprint, Mode, Options, RawArray, RawArrayMut};
use ndjit_core::{Bindings, Filter};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const PROGRAMS: [&str; 4] = ["ex1_callback", "ex2_image", "ex3_threads", "bad_input"];
const CFLAGS: [&str; 7] = [
    "-std=c11",
    "-O1",
    "-g",
    "-Wall",
    "-Wextra",
    "-Wpedantic",
    "-Werror",
];

/// Builds the examples once per test run, into `target/<profile>/ndjit-ffi-c/`, with the
/// Makefile (or, where `make` is missing, the same `cc` commands), and returns that directory.
fn built() -> &'static Path {
    static OUT: OnceLock<PathBuf> = OnceLock::new();
    OUT.get_or_init(|| {
        let lib = lib_dir();
        let out = work_dir();
        let examples = ffi_dir().join("examples");
        if have("make") {
            let static_ex1 = out.join("ex1_callback-static");
            run_ok(
                Command::new("make")
                    .arg("-B") // relink: the library may have changed, the sources not
                    .arg("-C")
                    .arg(&examples)
                    .arg(format!("OUT={}", out.display()))
                    .arg(format!("LIBDIR={}", lib.display()))
                    .arg("all")
                    .arg(&static_ex1),
            );
        } else {
            eprintln!("make not found: building the examples with cc directly");
            std::fs::create_dir_all(&out).unwrap();
            for p in PROGRAMS {
                run_ok(
                    Command::new("cc")
                        .args(CFLAGS)
                        .arg("-I")
                        .arg(ffi_dir().join("include"))
                        .arg(examples.join(format!("{p}.c")))
                        .arg("-o")
                        .arg(out.join(p))
                        .arg(format!("-L{}", lib.display()))
                        .arg(format!("-Wl,-rpath,{}", lib.display()))
                        .args(["-lndjit", "-lpthread", "-lm"]),
                );
            }
            run_ok(
                Command::new("cc")
                    .args(CFLAGS)
                    .arg("-I")
                    .arg(ffi_dir().join("include"))
                    .arg(examples.join("ex1_callback.c"))
                    .arg("-o")
                    .arg(out.join("ex1_callback-static"))
                    .arg(lib.join("libndjit.a"))
                    .args([
                        "-lpthread",
                        "-ldl",
                        "-lm",
                        "-lrt",
                        "-lutil",
                        "-lgcc_s",
                        "-lc",
                    ]),
            );
        }
        out
    })
}

fn run_program(name: &str) -> String {
    run_ok(&mut Command::new(built().join(name)))
}

fn num(s: &str) -> f64 {
    s.trim()
        .parse()
        .unwrap_or_else(|_| panic!("not a number: {s:?}"))
}

/// Asserts two doubles are the same value, bit for bit (NaN payloads aside).
fn same(what: &str, got: f64, want: f64) {
    assert!(
        got == want || (got.is_nan() && want.is_nan()),
        "{what}: C printed {got:?}, Rust computes {want:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Example 1

#[test]
fn ex1_callback_matches_rust() {
    let out = run_program("ex1_callback");
    let mut lines = out.lines();
    assert_eq!(
        lines.next().unwrap(),
        format!("ndjit {}", env!("CARGO_PKG_VERSION"))
    );

    let mut b = Bindings::new();
    b.set_array("weights", vec![0.25, 0.5, 0.25])
        .set_float("gain", 2.0);
    let f = Filter::builder("gain * np.sum(x * weights)")
        .bindings(&b)
        .filter_size(3)
        .compile()
        .unwrap();
    let signal = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0];
    for i in 0..6 {
        let line = lines.next().unwrap();
        let prefix = format!("y[{}] = ", i + 1);
        assert!(line.starts_with(&prefix), "{line}");
        same(
            line,
            num(&line[prefix.len()..]),
            f.call(&signal[i..i + 3]).unwrap(),
        );
    }

    let mut b10 = Bindings::new();
    b10.set_float("gain", 10.0);
    let g = f.with_bindings(&b10).unwrap();
    let line = lines.next().unwrap();
    same(
        line,
        num(line.strip_prefix("gain 10: ").unwrap()),
        g.call(&[1.0, 2.0, 3.0]).unwrap(),
    );

    let e = Filter::compile("np.sum(x * weigths)", &Bindings::new()).unwrap_err();
    let line = lines.next().unwrap();
    assert_eq!(
        line,
        format!(
            "error at {}:{}: {} (help: {})",
            e.line(),
            e.column(),
            e.message,
            e.hint.as_deref().unwrap()
        )
    );
    let rest: Vec<&str> = lines.collect();
    assert_eq!(
        rest.join("\n"),
        e.to_string(),
        "the error text is the core error's Display"
    );
}

#[test]
fn ex1_links_statically_too() {
    let dynamic = run_program("ex1_callback");
    let stat = run_program("ex1_callback-static");
    assert_eq!(stat, dynamic);
}

// ---------------------------------------------------------------------------------------------
// Example 2

/// `name rows cols` headers, each followed by `rows` lines of `cols` numbers.
fn parse_arrays(out: &str) -> HashMap<String, (usize, usize, Vec<f64>)> {
    let mut arrays = HashMap::new();
    let mut lines = out.lines().peekable();
    while let Some(line) = lines.next() {
        let parts: Vec<&str> = line.split(' ').collect();
        if parts.len() == 3
            && parts[1].parse::<usize>().is_ok()
            && parts[2].parse::<usize>().is_ok()
        {
            let (rows, cols) = (parts[1].parse().unwrap(), parts[2].parse().unwrap());
            let mut v = Vec::new();
            for _ in 0..rows {
                let row: Vec<f64> = lines.next().unwrap().split(' ').map(num).collect();
                assert_eq!(row.len(), cols);
                v.extend(row);
            }
            arrays.insert(parts[0].to_string(), (rows, cols, v));
        }
    }
    arrays
}

#[test]
fn ex2_image_matches_the_rust_driver() {
    let out = run_program("ex2_image");
    let arrays = parse_arrays(&out);
    let (h, w) = (6usize, 8usize);
    let img: Vec<u8> = (0..h * w)
        .map(|i| ((i / w * 37 + (i % w) * (i % w) * 11) % 251) as u8)
        .collect();
    assert_eq!(
        arrays["input"].2,
        img.iter().map(|&v| v as f64).collect::<Vec<_>>()
    );

    // 1. max - min over 3x3, nearest, uint8 -> uint8.
    let range = Filter::compile("max(x) - min(x)", &Bindings::new()).unwrap();
    let mut grad = vec![0u8; h * w];
    let input = RawArray::from_slice(&img, &[h, w]).unwrap();
    let output = RawArrayMut::from_slice(&mut grad, &[h, w]).unwrap();
    unsafe {
        driver::generic_filter_raw(
            &input,
            &output,
            &range,
            &Options::size(&[3, 3]).mode(Mode::Nearest),
        )
    }
    .unwrap();
    assert_eq!(
        arrays["gradient"],
        (h, w, grad.iter().map(|&v| v as f64).collect())
    );

    // 2. mean over a cross on img[:, ::2], constant 100, float64 output, 2 threads.
    let mean = Filter::compile("np.mean(x)", &Bindings::new()).unwrap();
    let view = RawArray {
        ptr: img.as_ptr(),
        dtype: Dtype::U8,
        shape: vec![h, w / 2],
        strides: vec![w as isize, 2],
    };
    let mut smooth = vec![0f64; h * w / 2];
    let output = RawArrayMut::from_slice(&mut smooth, &[h, w / 2]).unwrap();
    let opts = Options::new(Footprint::cross(2, 1))
        .mode(Mode::Constant)
        .cval(100.0)
        .threads(2);
    unsafe { driver::generic_filter_raw(&view, &output, &mean, &opts) }.unwrap();
    let (rows, cols, got) = &arrays["cross_mean"];
    assert_eq!((*rows, *cols), (h, w / 2));
    for (k, (&g, &want)) in got.iter().zip(&smooth).enumerate() {
        same(&format!("cross_mean[{k}]"), g, want);
    }

    // 3. The out-of-bounds view is refused.
    assert!(
        out.contains("out of bounds view: NDJIT_ERR_SHAPE: `input` reaches bytes 0 .. 52"),
        "{out}"
    );
}

// ---------------------------------------------------------------------------------------------
// Example 3

#[test]
fn ex3_threads_match_single_threaded_rust() {
    let out = run_program("ex3_threads");
    const N: usize = 4096;
    const WIN: usize = 5;
    let src = "def despike(x):\n    med = np.median(x)\n    return med if abs(x[2] - med) > 20 else x[2]\n";
    let f = Filter::builder(src).filter_size(WIN).compile().unwrap();
    let signal: Vec<f64> = (0..N + WIN - 1)
        .map(|i| ((i * 7919) % 1000) as f64 / 10.0)
        .collect();
    let result: Vec<f64> = (0..N)
        .map(|i| f.call(&signal[i..i + WIN]).unwrap())
        .collect();

    let short = f.call(&[1.0, 2.0]).unwrap_err();
    let mut lines = out.lines();
    for t in 0..3 {
        assert_eq!(
            lines.next().unwrap(),
            format!("thread {t}: 0 failed calls, no failure recorded")
        );
    }
    assert_eq!(
        lines.next().unwrap(),
        format!(
            "thread 3: 1 failed calls, {} at {}:{}: {}",
            short.exception, short.span.start.line, short.span.start.column, short.message
        )
    );
    let sum = result.iter().fold(0.0, |a, &b| a + b);
    let line = lines.next().unwrap();
    same(line, num(line.strip_prefix("sum ").unwrap()), sum);
    for i in (0..N).step_by(N / 8) {
        let line = lines.next().unwrap();
        let prefix = format!("result[{i}] = ");
        same(line, num(line.strip_prefix(&prefix).unwrap()), result[i]);
    }
}

// ---------------------------------------------------------------------------------------------
// Bad input

#[test]
fn bad_input_gets_an_error_code_for_every_mistake() {
    let out = run_program("bad_input");
    let last = out.lines().last().unwrap();
    assert!(last.ends_with(" checks, 0 failures"), "{out}");
    let checks: usize = last.split(' ').next().unwrap().parse().unwrap();
    assert!(checks >= 100, "only {checks} checks ran");
    assert!(!out.contains("FAIL"), "{out}");
}

// ---------------------------------------------------------------------------------------------
// Valgrind

/// Runs a program under memcheck with the project's suppressions; `Ok(())` when memcheck found
/// no error and no definite or possible leak, `Err(report)` otherwise. `None` without valgrind.
fn memcheck(program: &Path) -> Option<Result<(), String>> {
    if !have("valgrind") {
        eprintln!(
            "valgrind not installed: skipping the memcheck run of {}",
            program.display()
        );
        return None;
    }
    let out = Command::new("valgrind")
        .args([
            "--tool=memcheck",
            "--error-exitcode=1",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite,possible",
            "--show-leak-kinds=definite,possible",
            // Deep enough that suppressions can see the library's entry point in every stack.
            "--num-callers=64",
        ])
        .arg(format!(
            "--suppressions={}",
            ffi_dir().join("examples/valgrind.supp").display()
        ))
        .arg(program)
        .output()
        .expect("run valgrind");
    let report = String::from_utf8_lossy(&out.stderr).into_owned();
    Some(if out.status.success() {
        Ok(())
    } else {
        Err(report)
    })
}

fn memcheck_clean(name: &str) {
    if let Some(Err(report)) = memcheck(&built().join(name)) {
        panic!("valgrind found errors or leaks in {name}:\n{report}");
    }
}

#[test]
fn valgrind_ex1_callback() {
    memcheck_clean("ex1_callback");
}

#[test]
fn valgrind_ex2_image() {
    memcheck_clean("ex2_image");
}

#[test]
fn valgrind_ex3_threads() {
    memcheck_clean("ex3_threads");
}

#[test]
fn valgrind_bad_input() {
    memcheck_clean("bad_input");
}

/// The memcheck run is not vacuous: a program that forgets to free a filter fails it, despite the
/// suppressions.
#[test]
fn valgrind_catches_a_forgotten_free() {
    if !have("valgrind") {
        eprintln!("valgrind not installed: skipping");
        return;
    }
    let dir = built();
    let src = dir.join("leaky.c");
    std::fs::write(
        &src,
        "#include <ndjit.h>\nint main(void) {\n    ndjit_filter *f = NULL;\n    \
         ndjit_filter_compile(\"x[0]\", NULL, 0, &f, NULL);\n    return f == NULL;\n}\n",
    )
    .unwrap();
    let lib = lib_dir();
    run_ok(
        Command::new("cc")
            .args(CFLAGS)
            .arg("-I")
            .arg(ffi_dir().join("include"))
            .arg(&src)
            .arg("-o")
            .arg(dir.join("leaky"))
            .arg(format!("-L{}", lib.display()))
            .arg(format!("-Wl,-rpath,{}", lib.display()))
            .arg("-lndjit"),
    );
    let report = memcheck(&dir.join("leaky"))
        .unwrap()
        .expect_err("valgrind missed a leaked filter");
    assert!(
        report.contains("definitely lost") && report.contains("ndjit_filter_compile"),
        "{report}"
    );
}

// ---------------------------------------------------------------------------------------------
// Installing, and pkg-config

#[test]
fn install_and_build_with_pkg_config() {
    if !have("pkg-config") {
        eprintln!("pkg-config not installed: skipping the install test");
        return;
    }
    let prefix = work_dir().join("prefix");
    let _ = std::fs::remove_dir_all(&prefix);
    run_ok(
        Command::new("sh")
            .arg(ffi_dir().join("install.sh"))
            .arg(&prefix)
            .env("BUILD_DIR", lib_dir()),
    );
    for f in [
        "include/ndjit.h",
        "lib/libndjit.so",
        "lib/libndjit.a",
        "lib/pkgconfig/ndjit.pc",
    ] {
        assert!(prefix.join(f).is_file(), "{f} not installed");
    }
    let pc = prefix.join("lib/pkgconfig");
    let pkg = |args: &[&str]| {
        run_ok(
            Command::new("pkg-config")
                .args(args)
                .arg("ndjit")
                .env("PKG_CONFIG_PATH", &pc),
        )
        .trim()
        .to_string()
    };
    assert_eq!(pkg(&["--modversion"]), env!("CARGO_PKG_VERSION"));
    let flags = pkg(&["--cflags", "--libs"]);
    assert!(
        flags.contains(&format!("-I{}", prefix.join("include").display())),
        "{flags}"
    );
    assert!(
        flags.contains(&format!("-L{}", prefix.join("lib").display())) && flags.contains("-lndjit"),
        "{flags}"
    );

    let exe = prefix.join("ex1_callback");
    run_ok(
        Command::new("cc")
            .args(CFLAGS)
            .arg(ffi_dir().join("examples/ex1_callback.c"))
            .arg("-o")
            .arg(&exe)
            .args(flags.split_whitespace())
            .arg(format!("-Wl,-rpath,{}", prefix.join("lib").display())),
    );
    assert_eq!(run_ok(&mut Command::new(&exe)), run_program("ex1_callback"));
    let static_flags = pkg(&["--static", "--libs"]);
    assert!(
        static_flags.contains("-lpthread") && static_flags.contains("-ldl"),
        "{static_flags}"
    );
}

/// ffi/README.md (the README's C API section) shows example 1 as it is.
#[test]
fn readme_shows_example_1_verbatim() {
    let readme = std::fs::read_to_string(ffi_dir().join("README.md")).unwrap();
    let ex1 = std::fs::read_to_string(ffi_dir().join("examples/ex1_callback.c")).unwrap();
    assert!(
        readme.contains(&format!("```c\n{ex1}```")),
        "ffi/README.md does not show ffi/examples/ex1_callback.c verbatim"
    );
}
