//! `ndjit`: apply a Python filter expression to image and array files, natively and in parallel.
//!
//! ```text
//! ndjit filter IN OUT -e 'max(x) - min(x)' --size 5 [--footprint disk:3|cross|FILE.npy]
//!       [--mode reflect] [--cval 0] [--threads N]
//! ```
//! Exactly `scipy.ndimage.generic_filter(input, <the expression>, ...)`, computed by ndjit's
//! driver (`ndjit::driver`).

mod data;

use clap::{Args, Parser, Subcommand};
use data::{with_data, Data, IoError};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use ndjit::driver::{generic_filter_into, DriverError, Dtype, Footprint, Mode, Options};
use ndjit::{Bindings, Filter};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Exit codes, documented in `--help`.
const EXIT_USAGE: u8 = 2;
const EXIT_IO: u8 = 3;
const EXIT_FILTER: u8 = 4;

#[derive(Parser)]
#[command(
    name = "ndjit",
    version,
    about = "Filter images and arrays with Python expressions, compiled to native code"
)]
#[command(
    after_help = "Exit status: 0 success, 2 bad arguments or expression, 3 unreadable/unwritable file or unsupported pixel format, 4 the filter failed on a pixel."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// scipy.ndimage.generic_filter: replace each pixel by the expression over its neighbourhood `x`.
    ///
    /// Images (PNG, TIFF, PGM/PPM) are filtered per channel over their two spatial axes and keep
    /// their pixel type (8- or 16-bit); `.npy` arrays of any dtype are filtered over all axes.
    Filter(FilterArgs),
}

#[derive(Args)]
struct FilterArgs {
    /// Input file: .png, .tif/.tiff, .pgm/.ppm or .npy.
    input: PathBuf,
    /// Output file; the format follows the extension. Written atomically: never half-written.
    output: PathBuf,
    /// The filter: an expression over the neighbourhood `x` (`np.median(x)`), a `lambda`, or a
    /// `def` whose first parameter is the neighbourhood.
    #[arg(short = 'e', long = "expr", value_name = "PYTHON")]
    expr: String,
    /// Footprint box size: one number for every filtered axis, or one per axis (`3,5`).
    #[arg(short, long, value_name = "N[,N...]")]
    size: Option<String>,
    /// Footprint: `disk:R`, `cross` or `cross:R` (the plus shape), `box:N[,N...]`, or a .npy file
    /// (non-zero entries are in the footprint).
    #[arg(short, long, value_name = "SPEC")]
    footprint: Option<String>,
    /// Boundary mode: reflect, constant, nearest, mirror, wrap, grid-mirror, grid-constant, grid-wrap.
    #[arg(short, long, default_value = "reflect")]
    mode: String,
    /// The value outside the input for the constant modes.
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    cval: f64,
    /// Shift of the footprint: one number for every filtered axis, or one per axis.
    #[arg(long, value_name = "N[,N...]", allow_hyphen_values = true)]
    origin: Option<String>,
    /// Axes to filter (.npy input); images are filtered over their two spatial axes.
    #[arg(long, value_name = "A[,A...]")]
    axes: Option<String>,
    /// Output element type (a NumPy name such as uint8 or float32); default: the input's.
    #[arg(long, value_name = "DTYPE")]
    dtype: Option<String>,
    /// Worker threads (default: all cores).
    #[arg(short = 'j', long)]
    threads: Option<usize>,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
}

/// A failure with its exit status.
struct Failure {
    code: u8,
    message: String,
}

fn fail(code: u8, message: impl Into<String>) -> Failure {
    Failure {
        code,
        message: message.into(),
    }
}

impl From<IoError> for Failure {
    fn from(e: IoError) -> Failure {
        fail(EXIT_IO, e.to_string())
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Filter(args) => filter(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("error: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}

fn filter(args: &FilterArgs) -> Result<(), Failure> {
    // Everything that can be checked before reading the input is checked first.
    let mode: Mode = args.mode.parse().map_err(|_| {
        fail(EXIT_USAGE, format!("unknown mode `{}` (reflect, constant, nearest, mirror, wrap, grid-mirror, grid-constant, grid-wrap)", args.mode))
    })?;
    let filter = Filter::compile(&args.expr, &Bindings::new())
        .map_err(|e| fail(EXIT_USAGE, format!("invalid filter expression\n{e}")))?;
    let out_dtype = args.dtype.as_deref().map(parse_dtype).transpose()?;
    if args.output.extension().is_none() {
        return Err(fail(
            EXIT_USAGE,
            format!(
                "{}: the output needs an extension (.png, .tif, .pgm, .npy)",
                args.output.display()
            ),
        ));
    }
    let input = Data::read(&args.input)?;
    let is_image = !args
        .input
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"));
    let ndim = input.shape().len();
    let axes: Option<Vec<isize>> = match (&args.axes, is_image) {
        (Some(a), _) => Some(parse_list(a, "axes")?),
        (None, true) => data::spatial_axes(&input, true)
            .map(|axes| axes.into_iter().map(|a| a as isize).collect()),
        (None, false) => None,
    };
    let num_axes = axes.as_ref().map_or(ndim, Vec::len);
    let footprint = footprint(args, num_axes)?;
    let mut opts = Options::new(footprint).mode(mode).cval(args.cval);
    opts.axes = axes;
    opts.threads = args.threads;
    if let Some(o) = &args.origin {
        let o: Vec<isize> = parse_list(o, "origin")?;
        opts.origin = if o.len() == 1 {
            vec![o[0]; num_axes]
        } else {
            o
        };
    }
    let total: usize = input.shape().iter().product();
    let bar = progress_bar(args.quiet, total);
    if let Some(bar) = &bar {
        let (bar, start, shown) = (
            bar.clone(),
            Instant::now(),
            Arc::new(AtomicBool::new(false)),
        );
        opts.progress = Some(Arc::new(move |done, _| {
            // Only jobs that take a while get a bar.
            if !shown.load(Ordering::Relaxed) && start.elapsed() > Duration::from_secs(1) {
                shown.store(true, Ordering::Relaxed);
                bar.set_draw_target(ProgressDrawTarget::stderr());
            }
            bar.set_position(done as u64);
        }));
    }
    let mut output = Data::zeros(out_dtype.unwrap_or(input.dtype()), input.shape());
    let result = run(&input, &mut output, &filter, &opts);
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    result.map_err(|e| match e {
        DriverError::Filter { error, position } => fail(
            EXIT_FILTER,
            format!(
                "the filter failed at pixel {position:?}: {}: {error}",
                error.exception
            ),
        ),
        e => fail(EXIT_USAGE, format!("{}: {e}", e.python_type())),
    })?;
    write_atomically(&args.output, &output)
}

/// Runs the driver from any input type into any output type.
fn run(
    input: &Data,
    output: &mut Data,
    filter: &Filter,
    opts: &Options,
) -> Result<(), DriverError> {
    with_data!(input, a => with_data!(output, o => generic_filter_into(a.view(), o.view_mut(), filter, opts)))
}

/// Writes to a temporary file next to `path`, then renames it: a failure leaves no partial output.
fn write_atomically(path: &Path, data: &Data) -> Result<(), Failure> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".ndjit-");
    // The temporary file would keep its private 0600 mode through the rename; the output is
    // created as any Unix tool creates files (0666 less the umask).
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let tmp = builder
        .tempfile_in(dir)
        .map_err(|e| fail(EXIT_IO, format!("cannot write {}: {e}", path.display())))?;
    data.write(path, tmp.as_file())?;
    tmp.persist(path).map_err(|e| {
        fail(
            EXIT_IO,
            format!("cannot write {}: {}", path.display(), e.error),
        )
    })?;
    Ok(())
}

fn progress_bar(quiet: bool, total: usize) -> Option<ProgressBar> {
    if quiet {
        return None;
    }
    let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::hidden());
    let style =
        ProgressStyle::with_template("{bar:40} {percent:>3}% {elapsed}/{duration} ({per_sec})")
            .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    Some(bar)
}

/// The footprint from `--footprint` or `--size` (scipy's warning when both are given).
fn footprint(args: &FilterArgs, num_axes: usize) -> Result<Footprint, Failure> {
    if let (Some(_), Some(_)) = (&args.size, &args.footprint) {
        eprintln!("warning: ignoring size because footprint is set");
    }
    let sizes = |spec: &str| -> Result<Vec<usize>, Failure> {
        let s: Vec<usize> = parse_list(spec, "size")?;
        Ok(if s.len() == 1 {
            vec![s[0]; num_axes]
        } else {
            s
        })
    };
    match (&args.footprint, &args.size) {
        (Some(spec), _) => {
            let (kind, arg) = spec.split_once(':').unwrap_or((spec.as_str(), ""));
            let radius = |default: usize| -> Result<usize, Failure> {
                if arg.is_empty() {
                    return Ok(default);
                }
                arg.parse().map_err(|_| {
                    fail(
                        EXIT_USAGE,
                        format!("--footprint {spec}: `{arg}` is not a radius"),
                    )
                })
            };
            match kind {
                "disk" if num_axes == 2 => {
                    Footprint::try_disk(radius(1)?).map_err(|e| fail(EXIT_USAGE, e.to_string()))
                }
                "disk" => Err(fail(
                    EXIT_USAGE,
                    format!("--footprint disk needs 2 filtered axes, not {num_axes}"),
                )),
                "cross" => Footprint::try_cross(num_axes, radius(1)?)
                    .map_err(|e| fail(EXIT_USAGE, e.to_string())),
                "box" => Ok(Footprint::from_size(&sizes(arg)?)),
                _ if spec.ends_with(".npy") => {
                    let d = Data::read(Path::new(spec))?;
                    let shape = d.shape().to_vec();
                    let mask: Vec<bool> =
                        with_data!(&d, a => a.iter().map(|v| *v != Default::default()).collect());
                    Footprint::new(shape, mask).map_err(|e| fail(EXIT_USAGE, e.to_string()))
                }
                _ => Err(fail(
                    EXIT_USAGE,
                    format!(
                        "--footprint {spec}: expected disk:R, cross, cross:R, box:N or a .npy file"
                    ),
                )),
            }
        }
        (None, Some(size)) => Ok(Footprint::from_size(&sizes(size)?)),
        (None, None) => Err(fail(
            EXIT_USAGE,
            "no footprint or filter size provided (use --size or --footprint)",
        )),
    }
}

fn parse_list<T: std::str::FromStr>(s: &str, what: &str) -> Result<Vec<T>, Failure> {
    s.split(',')
        .map(|p| {
            p.trim().parse().map_err(|_| {
                fail(
                    EXIT_USAGE,
                    format!("--{what} {s}: `{p}` is not a valid number"),
                )
            })
        })
        .collect()
}

fn parse_dtype(s: &str) -> Result<Dtype, Failure> {
    Dtype::ALL
        .into_iter()
        .find(|d| d.name() == s || (s == "bool_" && *d == Dtype::Bool))
        .ok_or_else(|| fail(EXIT_USAGE, format!("--dtype {s}: expected one of bool, uint8, uint16, uint32, uint64, int8, int16, int32, int64, float32, float64")))
}
