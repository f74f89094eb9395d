//! Shared by the GPU crate's tests: the project's filter corpus and awkward inputs.
#![allow(dead_code)]

use ndjit_gpu::codegen::{Dtype, KernelSpec, Mode, Target};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize)]
pub struct Corpus {
    pub programs: Vec<Program>,
}

#[derive(Deserialize)]
pub struct Program {
    pub name: String,
    pub source: String,
    #[serde(default)]
    pub bindings: BTreeMap<String, toml::Value>,
}

/// `tests/corpus/programs.toml` of the workspace.
pub fn corpus() -> Corpus {
    let path = std::env::var("NDJIT_CORPUS_PATH").unwrap_or_else(|_| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/corpus/programs.toml").to_string()
    });
    let text = std::fs::read_to_string(path).expect("read the corpus");
    toml::from_str(&text).expect("parse the corpus")
}

/// Programs whose name contains one of the comma-separated parts of `NDJIT_CORPUS` (all when
/// unset).
pub fn selected(c: &Corpus) -> Vec<&Program> {
    let filter = std::env::var("NDJIT_CORPUS").unwrap_or_default();
    c.programs
        .iter()
        .filter(|p| filter.split(',').any(|part| p.name.contains(part)))
        .collect()
}

pub fn bindings(p: &Program) -> ndjit::Bindings {
    let mut b = ndjit::Bindings::new();
    for (name, v) in &p.bindings {
        match v {
            toml::Value::Integer(i) => b.set_int(name.clone(), *i),
            toml::Value::Float(f) => b.set_float(name.clone(), *f),
            toml::Value::Boolean(x) => b.set_int(name.clone(), *x as i64),
            toml::Value::Array(items) => b.set_array(
                name.clone(),
                items
                    .iter()
                    .map(|i| {
                        i.as_float()
                            .or(i.as_integer().map(|n| n as f64))
                            .expect("numeric array")
                    })
                    .collect(),
            ),
            other => panic!("{}: unsupported binding {name} = {other}", p.name),
        };
    }
    b
}

/// Awkward values: NaN, ±inf, ±0, subnormals, huge, small integers (ties), ordinary.
pub struct Inputs(u64);

impl Inputs {
    pub fn new(seed: u64) -> Inputs {
        Inputs(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn value(&mut self) -> f64 {
        let r = self.next();
        match r % 16 {
            0 => f64::NAN,
            1 => f64::INFINITY,
            2 => f64::NEG_INFINITY,
            3 => -0.0,
            4 => 0.0,
            5 => 5e-324 * (r >> 40) as f64,
            6 => (r >> 11) as f64 * 1e300 / (1u64 << 53) as f64,
            7 => ((r >> 8) % 5) as f64,
            _ => (r >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 0.5,
        }
    }
    /// An integer in `[lo, hi]`: one draw in four an extreme (`lo`, `hi`, their neighbours or 0),
    /// the others spread over the range (64-bit ones mostly beyond 2^53, where the conversion to
    /// double rounds).
    pub fn int_in(&mut self, lo: i128, hi: i128) -> i128 {
        let x = self.next();
        if x.is_multiple_of(4) {
            [lo, hi, 0, lo + 1, hi - 1][(x >> 8) as usize % 5]
        } else {
            lo + (x >> 2) as i128 % (hi - lo + 1)
        }
    }
    /// Little-endian bytes of `n` values of `dt` (integers drawn in their range).
    pub fn bytes(&mut self, n: usize, dt: Dtype) -> Vec<u8> {
        let mut out = Vec::with_capacity(n * dt.itemsize());
        for _ in 0..n {
            match dt {
                Dtype::F64 => out.extend(self.value().to_le_bytes()),
                Dtype::F32 => out.extend((self.value() as f32).to_le_bytes()),
                Dtype::U8 => out.push((self.next() % 7) as u8 * 40),
                Dtype::U16 => out.extend(((self.next() % 70000) as u16).to_le_bytes()),
                Dtype::I32 => out.extend(((self.next() as i64 % 2000 - 1000) as i32).to_le_bytes()),
                Dtype::Bool => out.push((self.next() % 2) as u8),
                Dtype::I8 => out.push(self.int_in(-128, 127) as i8 as u8),
                Dtype::I16 => out.extend((self.int_in(-32768, 32767) as i16).to_le_bytes()),
                Dtype::U32 => out.extend((self.int_in(0, u32::MAX.into()) as u32).to_le_bytes()),
                Dtype::U64 => out.extend((self.int_in(0, u64::MAX.into()) as u64).to_le_bytes()),
                Dtype::I64 => {
                    let v = self.int_in(i64::MIN.into(), i64::MAX.into());
                    out.extend((v as i64).to_le_bytes())
                }
            }
        }
        out
    }
}

/// The footprints the tests use: `(name, image shape, spec)`.
pub fn geometries() -> Vec<(&'static str, Vec<usize>, KernelSpec)> {
    let cross = vec![false, true, false, true, true, true, false, true, false];
    let mut out = vec![];
    let mut s = KernelSpec::boxed(2, 3);
    out.push(("2d 3x3", vec![6, 8], s.clone()));
    s.mask = cross;
    out.push(("2d cross", vec![5, 9], s.clone()));
    let mut s = KernelSpec::boxed(1, 5);
    s.origin = vec![1];
    out.push(("1d 5 origin 1", vec![11], s));
    let mut s = KernelSpec::boxed(2, 5);
    s.origin = vec![-1, 2];
    out.push(("2d 5x5 origin (-1, 2)", vec![4, 6], s));
    let s = KernelSpec::boxed(3, 3);
    out.push(("3d 3x3x3", vec![3, 2, 5], s));
    out
}

/// sm_90 with PTX ISA 8.0, where `min`/`max` take two 16-bit lanes.
pub const SM90_PTX80: Target = Target {
    version: (8, 0),
    ..Target::SM90
};

pub fn with(
    spec: &KernelSpec,
    mode: Mode,
    input: Dtype,
    output: Dtype,
    target: Target,
) -> KernelSpec {
    let mut s = spec.clone();
    s.mode = mode;
    s.cval = -1.5;
    s.input = input;
    s.output = output;
    s.target = target;
    s
}

/// ptxas: `$NDJIT_PTXAS`, `ptxas` on the PATH, or the one in the `nvidia-cuda-nvcc-cu12` wheel.
pub fn find_ptxas() -> Option<std::path::PathBuf> {
    if let Ok(p) = std::env::var("NDJIT_PTXAS") {
        return Some(p.into());
    }
    if let Ok(path) = std::env::var("PATH") {
        for dir in std::env::split_paths(&path) {
            let p = dir.join("ptxas");
            if p.is_file() {
                return Some(p);
            }
        }
    }
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print('\\n'.join(sys.path))"])
        .output()
        .ok()?;
    for dir in String::from_utf8_lossy(&out.stdout).lines() {
        let p = std::path::Path::new(dir).join("nvidia/cuda_nvcc/bin/ptxas");
        if p.is_file() {
            return Some(p);
        }
    }
    None
}

/// Assembles PTX text with ptxas for `sm`; `Err(log)` when ptxas rejects it.
pub fn assemble(ptxas: &std::path::Path, ptx: &str, sm: u32, tag: &str) -> Result<String, String> {
    let dir = std::env::temp_dir().join(format!("ndjit-ptxas-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let file = dir.join(format!("{tag}.ptx"));
    std::fs::write(&file, ptx).map_err(|e| e.to_string())?;
    let out = std::process::Command::new(ptxas)
        .args([
            "--gpu-name",
            &format!("sm_{sm}"),
            "-v",
            file.to_str().unwrap(),
            "-o",
            "/dev/null",
        ])
        .output()
        .map_err(|e| e.to_string())?;
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        let _ = std::fs::remove_file(&file);
        Ok(log)
    } else {
        Err(log)
    }
}

/// Equal bytes, or both NaN (a NaN made by arithmetic has the GPU's default payload where x86
/// makes another; NumPy gives payloads no meaning).
/// Whether a device result stands for the CPU's: the same bits. The device's math routines are
/// glibc's, bit-identical to the CPU's where its glibc runs the builds they transcribe
/// (`ndjit_gpu::math::cpu_runs_glibc_fma_builds`). Elsewhere they are within 1–3 ulp of the
/// CPU's, and the arithmetic after a call can magnify that (a difference of two nearly equal
/// values keeps only the error), so there, for bodies that call a math function, close is
/// enough: absolute below 1 and relative above, `|cpu - gpu| <= CALL_TOLERANCE * max(1, |cpu|)`,
/// or one unit of an integer output (a value near a rounding boundary of the cast). `Err` gives
/// the difference.
pub fn agrees(cpu: &[u8], gpu: &[u8], dt: Dtype, has_call: bool) -> Result<(), f64> {
    let has_call = has_call && !ndjit_gpu::math::cpu_runs_glibc_fma_builds();
    if same_bits(cpu, gpu, dt) {
        return Ok(());
    }
    let (c, g) = (
        ndjit_gpu::reference::to_f64(cpu, dt)[0],
        ndjit_gpu::reference::to_f64(gpu, dt)[0],
    );
    let diff = (c - g).abs();
    let limit = match dt {
        Dtype::F64 => CALL_TOLERANCE * c.abs().max(1.0),
        Dtype::F32 => f64::from(f32::EPSILON) * 8.0 * c.abs().max(1.0),
        _ => 1.0,
    };
    if has_call && diff <= limit {
        Ok(())
    } else {
        Err(diff)
    }
}

/// See [`agrees`]: about 450 ulp of a value near 1.
pub const CALL_TOLERANCE: f64 = 1e-13;

pub fn same_bits(a: &[u8], b: &[u8], dt: Dtype) -> bool {
    if a == b {
        return true;
    }
    match dt {
        Dtype::F64 => {
            f64::from_le_bytes(a.try_into().unwrap()).is_nan()
                && f64::from_le_bytes(b.try_into().unwrap()).is_nan()
        }
        Dtype::F32 => {
            f32::from_le_bytes(a.try_into().unwrap()).is_nan()
                && f32::from_le_bytes(b.try_into().unwrap()).is_nan()
        }
        _ => false,
    }
}

/// Every dtype scipy takes, in and out.
pub const ALL: [Dtype; 11] = [
    Dtype::Bool,
    Dtype::I8,
    Dtype::U8,
    Dtype::I16,
    Dtype::U16,
    Dtype::I32,
    Dtype::U32,
    Dtype::I64,
    Dtype::U64,
    Dtype::F32,
    Dtype::F64,
];

/// Every mode scipy takes.
pub const MODES: [Mode; 8] = [
    Mode::Reflect,
    Mode::Mirror,
    Mode::Nearest,
    Mode::Wrap,
    Mode::Constant,
    Mode::GridWrap,
    Mode::GridMirror,
    Mode::GridConstant,
];

/// `exec` on `input` (bytes of `dt`, C order) into a fresh output of `out`.
pub fn run<E: ndjit::driver::Executor>(
    exec: &E,
    filter: &ndjit::Filter,
    (input, dt): (&[u8], Dtype),
    shape: &[usize],
    out: Dtype,
    opts: &ndjit::driver::Options,
) -> Result<Vec<u8>, E::Error> {
    let n: usize = shape.iter().product();
    let mut bytes = vec![0xA5u8; n * out.itemsize()];
    use ndjit::driver::{self, RawArray, RawArrayMut};
    let input = RawArray {
        ptr: input.as_ptr(),
        dtype: dt,
        shape: shape.to_vec(),
        strides: driver::c_strides(shape, dt),
    };
    let output = RawArrayMut {
        ptr: bytes.as_mut_ptr(),
        dtype: out,
        shape: shape.to_vec(),
        strides: driver::c_strides(shape, out),
    };
    // SAFETY: both arrays are ours, described by their own shapes and strides.
    unsafe { driver::execute(exec, &input, &output, filter, opts) }?;
    Ok(bytes)
}

/// A tuning that forces the box statistics' kernels (`separable`) on or off.
pub fn forced(on: bool) -> ndjit_gpu::Tuning {
    ndjit_gpu::Tuning {
        separable: Some(on),
        ..ndjit_gpu::Tuning::default()
    }
}

/// Whether an error is the refusal of NumPy's choice between `0.0` and `-0.0`
/// (`ndjit::ir::zero_signs`).
pub fn refuses_a_zero_choice(error: &str) -> bool {
    error.contains("both 0.0 and -0.0")
}

/// How the emulator launches a case's kernels ([`agree_with_cpu`]).
#[derive(Clone, Copy, Debug)]
pub struct Launch {
    pub tuning: ndjit_gpu::Tuning,
    /// The most rows of blocks a grid may have: lower, each block loops over more of the image.
    pub grid_rows: u32,
    /// The multiprocessors the launch keeps busy: an H100's shortens a strip's runs of rows on
    /// the small images of the tests to the fewest (`Strip::run`); 0 keeps the strip's own.
    pub multiprocessors: u32,
}

impl Launch {
    /// `tuning` with at most `grid_rows` rows of blocks, launched as on an H100.
    pub fn new(tuning: ndjit_gpu::Tuning, grid_rows: u32) -> Launch {
        Launch {
            tuning,
            grid_rows,
            multiprocessors: ndjit_gpu::emulate::H100_MULTIPROCESSORS,
        }
    }

    /// The emulator of `gpu`'s kernels launched so.
    pub fn emulator(self, gpu: &ndjit_gpu::GpuFilter) -> ndjit_gpu::emulate::Emulator<'_> {
        ndjit_gpu::emulate::Emulator {
            tuning: self.tuning,
            grid_rows: self.grid_rows,
            multiprocessors: self.multiprocessors,
            ..ndjit_gpu::emulate::Emulator::new(gpu)
        }
    }
}

/// The emulated kernels of `gpu` under each of `runs` against the CPU's general engine, element
/// by element; panics with the case on a difference. Returns whether both refused: a choice
/// between zeros that NumPy makes by its SIMD code, which a patch kernel reports as the general
/// kernel does.
pub fn agree_with_cpu(
    gpu: &ndjit_gpu::GpuFilter,
    (data, shape): (&[u8], &[usize]),
    dts: (Dtype, Dtype),
    opts: &ndjit::driver::Options,
    runs: &[Launch],
) -> bool {
    use ndjit::driver::{Engine, Options};
    let source = gpu.filter().source();
    let cpu_opts = Options {
        engine: Engine::Callback,
        ..opts.clone()
    };
    let cpu = run(
        &Engine::Callback,
        gpu.filter(),
        (data, dts.0),
        shape,
        dts.1,
        &cpu_opts,
    );
    let mut refused = false;
    for &launch in runs {
        let emu = launch.emulator(gpu);
        let got = run(&emu, gpu.filter(), (data, dts.0), shape, dts.1, opts);
        let (cpu, got) = match (&cpu, got) {
            (Ok(cpu), Ok(got)) => (cpu, got),
            (Err(c), Err(g)) if refuses_a_zero_choice(&c.to_string()) => {
                assert!(refuses_a_zero_choice(&g.to_string()), "{source}: {g}");
                refused = true;
                continue;
            }
            (c, g) => panic!("{source} {dts:?} {opts:?}: cpu {c:?}, emulated {g:?}"),
        };
        let size = dts.1.itemsize();
        for (i, (c, g)) in cpu.chunks(size).zip(got.chunks(size)).enumerate() {
            assert!(
                same_bits(c, g, dts.1),
                "{source} {dts:?} shape {shape:?} {opts:?} {launch:?}: element {i}: cpu {c:?}, gpu {g:?}"
            );
        }
    }
    refused
}
