//! Helpers shared by the integration tests that use the built library from outside Rust.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// `target/<profile>`: the profile directory of this test run (the test executables live in its
/// `deps/`).
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    exe.parent()
        .and_then(Path::parent)
        .expect("profile directory")
        .to_path_buf()
}

/// The directory holding the `libndjit.so` and `libndjit.a` of this build.
///
/// `cargo test -p ndjit-ffi-tests` (also with `--workspace` or `--release`) compiles the library
/// before these tests, a dependency of their package (tests/Cargo.toml); rustc writes the cdylib
/// and the staticlib in the same run, into `target/<profile>/deps/`. Only `cargo build` copies
/// them up to `target/<profile>/`, so `deps/` is the one that is always current; the copy is the
/// fallback.
pub fn lib_dir() -> PathBuf {
    let profile = profile_dir();
    let deps = profile.join("deps");
    for dir in [&deps, &profile] {
        if dir.join("libndjit.so").is_file() && dir.join("libndjit.a").is_file() {
            return dir.clone();
        }
    }
    panic!(
        "libndjit.so not found in {} or {}: run `cargo build -p ndjit-ffi`",
        deps.display(),
        profile.display()
    );
}

/// The shared library under test.
pub fn cdylib() -> PathBuf {
    lib_dir().join("libndjit.so")
}

/// Where the tests put what they build: `target/<profile>/ndjit-ffi-c/`.
pub fn work_dir() -> PathBuf {
    profile_dir().join("ndjit-ffi-c")
}

/// The C library's crate directory, `ffi/` (the parent of this test package's).
pub fn ffi_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("ffi/tests lies in ffi/")
}

/// Whether a program can be run (`name --version` succeeds).
pub fn have(name: &str) -> bool {
    Command::new(name)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs a command; panics with its output when it fails. Returns stdout.
pub fn run_ok(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        panic!(
            "{cmd:?} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    stdout
}
