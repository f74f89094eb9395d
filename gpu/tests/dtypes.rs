//! Every dtype scipy takes, in and out: through `ndjit::driver::execute`, the emulated GPU kernel
//! and the CPU driver agree bit for bit for every input × output dtype pair and every boundary
//! mode, on images wide enough for the interior's vector loads and the boundary path both. The
//! inputs hold each type's extremes (64-bit integers that do not convert exactly to double), and
//! the filters make values that every integer cast has to wrap, saturate or replace (NaN,
//! infinities, out of range), which are the places where PTX's conversions and x86's differ.

mod common;

use ndjit::driver::{self, Dtype, Engine, Executor, Mode, Options, RawArray, RawArrayMut};
use ndjit_gpu::emulate::Emulator;
use ndjit_gpu::GpuFilter;

/// Values that every output cast must treat as scipy does: out of every integer range, NaN from
/// integer inputs (inf - inf), tiny and negative fractions, and in-range values.
const CASTS: &str = "
def f(x):
    big = x[0] * 1e300 * 1e10 - x[1] * 1e300 * 1e10
    if x[2] > x[3]:
        return big
    scale = 1e-3 if x[5] > x[6] else 1e15
    return x[4] * scale - x[7] * 0.5 + x[8] * 7.0
";

/// 7 rows of 24: rows of whole 16-byte chunks for every element size (the interior's vector
/// loads need them), and with four outputs per thread the threads at 4..16 are interior.
const SHAPE: [usize; 2] = [7, 24];

/// An error as the comparison reads it: a filter's failure with its first failing pixel, on
/// the CPU as the GPU's errors say it.
trait Described {
    fn described(&self) -> String;
}

impl Described for driver::DriverError {
    fn described(&self) -> String {
        match self {
            driver::DriverError::Filter { error, position } => {
                format!("{error} (at pixel {position:?})")
            }
            e => e.to_string(),
        }
    }
}

impl Described for ndjit_gpu::GpuError {
    fn described(&self) -> String {
        self.to_string()
    }
}

/// `filter` on `input` (of `in_dt`) into a fresh output of `out_dt`, through `exec`.
fn run<E: Executor<Error: Described>>(
    exec: &E,
    filter: &ndjit::Filter,
    (input, in_dt): (&[u8], Dtype),
    out_dt: Dtype,
    opts: &Options,
) -> Result<Vec<u8>, String> {
    let n: usize = SHAPE.iter().product();
    let mut out = vec![0u8; n * out_dt.itemsize()];
    let input = RawArray {
        ptr: input.as_ptr(),
        dtype: in_dt,
        shape: SHAPE.to_vec(),
        strides: driver::c_strides(&SHAPE, in_dt),
    };
    let output = RawArrayMut {
        ptr: out.as_mut_ptr(),
        dtype: out_dt,
        shape: SHAPE.to_vec(),
        strides: driver::c_strides(&SHAPE, out_dt),
    };
    // SAFETY: both arrays are ours, described by their own shapes and strides.
    unsafe { driver::execute(exec, &input, &output, filter, opts) }.map_err(|e| e.described())?;
    Ok(out)
}

/// The first element where the emulated GPU and the CPU differ (a NaN equals any NaN).
fn disagreement(cpu: &[u8], gpu: &[u8], dt: Dtype) -> Option<String> {
    let size = dt.itemsize();
    let (c, g) = (cpu.chunks_exact(size), gpu.chunks_exact(size));
    c.zip(g)
        .position(|(c, g)| !common::same_bits(c, g, dt))
        .map(|i| {
            let at = |b: &[u8]| b[i * size..(i + 1) * size].to_vec();
            format!("element {i}: cpu {:?} gpu {:?}", at(cpu), at(gpu))
        })
}

/// `source` (called `name` in reports) over every mode for each `(input, output)` pair: the failures, described.
fn compare(name: &str, source: &str, pairs: &[(Dtype, Dtype)]) -> Vec<String> {
    let gpu = GpuFilter::compile(source, &ndjit::Bindings::new()).expect("compiles");
    let mut failures = Vec::new();
    for &(i, o) in pairs {
        let seed = i.itemsize() as u64 * 13 + o as u64;
        let input = common::Inputs::new(seed).bytes(SHAPE.iter().product(), i);
        for mode in Mode::APPLIED {
            let opts = Options::size(&[3, 3]).mode(mode).cval(-1.5);
            let cpu = run(&Engine::Auto, gpu.filter(), (&input, i), o, &opts);
            let emulated = run(&Emulator::new(&gpu), gpu.filter(), (&input, i), o, &opts);
            let why = match (cpu, emulated) {
                (Ok(c), Ok(g)) => disagreement(&c, &g, o),
                (c, g) => (c.as_ref().err() != g.as_ref().err())
                    .then(|| format!("cpu {:?} gpu {:?}", c.err(), g.err())),
            };
            if let Some(why) = why {
                failures.push(format!("{name} {i} -> {o} {}: {why}", mode.name()));
            }
        }
    }
    failures
}

#[test]
fn every_input_and_output_dtype_casts_as_the_cpu_does() {
    let pairs: Vec<(Dtype, Dtype)> = Dtype::ALL
        .iter()
        .flat_map(|&i| Dtype::ALL.iter().map(move |&o| (i, o)))
        .collect();
    let failures = compare("casts", CASTS, &pairs);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The kernels' own fast paths per input type: min/max on the loaded values, median networks.
#[test]
fn rank_bodies_read_every_dtype_as_the_cpu_does() {
    let pairs: Vec<(Dtype, Dtype)> = Dtype::ALL.iter().map(|&d| (d, d)).collect();
    // The inputs hold zeros of both signs: NumPy's choice between them is refused by both,
    // at the same first pixel.
    let mut failures = compare("min", "np.min(x)", &pairs);
    failures.extend(compare("median", "np.median(x)", &pairs));
    failures.extend(compare("range", "np.max(x) - np.min(x)", &pairs));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
