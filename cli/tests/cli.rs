//! The `ndjit` binary on real PNG, TIFF and .npy files made here, good and bad.

use ndarray::{ArrayD, IxDyn};
use ndarray_npy::{ReadNpyExt, WriteNpyExt};
use ndjit::driver::{generic_filter, Footprint, Mode, Options};
use ndjit::{Bindings, Filter};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn ndjit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ndjit"))
        .args(args)
        .output()
        .expect("run ndjit")
}

/// Runs the command and asserts that it succeeded (showing its stderr if not).
fn ndjit_ok(args: &[&str]) -> Output {
    let o = ndjit(args);
    assert!(o.status.success(), "{}", stderr(&o));
    o
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ndjit-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn pixels(h: usize, w: usize, c: usize, max: u32) -> Vec<u32> {
    (0..h * w * c)
        .map(|i| ((i as u32).wrapping_mul(2654435761) >> 7) % (max + 1))
        .collect()
}

/// An `h`×`w` image of `bits`-bit samples (8 or 16) and 1, 3 or 4 channels from [`pixels`],
/// saved at `path` in the format its extension names; its samples.
fn save_image(path: &Path, (h, w): (usize, usize), channels: usize, bits: u32) -> Vec<u32> {
    use image::ExtendedColorType::*;
    let samples = pixels(h, w, channels, (1 << bits) - 1);
    let (color, bytes): (_, Vec<u8>) = match bits {
        8 => (
            [L8, L8, Rgb8, Rgba8][channels - 1],
            samples.iter().map(|&v| v as u8).collect(),
        ),
        _ => (
            [L16, L16, Rgb16, Rgba16][channels - 1],
            samples
                .iter()
                .flat_map(|&v| (v as u16).to_ne_bytes())
                .collect(),
        ),
    };
    image::save_buffer(path, &bytes, w as u32, h as u32, color).unwrap();
    samples
}

fn save_u8(path: &Path, shape: (usize, usize), channels: usize) -> Vec<u8> {
    let samples = save_image(path, shape, channels, 8);
    samples.into_iter().map(|v| v as u8).collect()
}

fn save_u16(path: &Path, shape: (usize, usize), channels: usize) -> Vec<u16> {
    let samples = save_image(path, shape, channels, 16);
    samples.into_iter().map(|v| v as u16).collect()
}

/// The driver's own result, which the binary must reproduce.
fn expected<T: ndjit::driver::Element>(a: &ArrayD<T>, src: &str, opts: &Options) -> ArrayD<T> {
    let f = Filter::compile(src, &Bindings::new()).unwrap();
    generic_filter(a.view(), &f, opts).unwrap()
}

#[test]
fn grey_and_rgb_pngs_are_filtered_per_channel() {
    let d = dir("png");
    // 8-bit grey.
    let (h, w) = (37, 53);
    let grey = save_u8(&d.join("g.png"), (h, w), 1);
    ndjit_ok(&[
        "filter",
        s(&d.join("g.png")),
        s(&d.join("g_out.png")),
        "-e",
        "np.median(x)",
        "--size",
        "3",
        "-q",
    ]);
    let got = image::open(d.join("g_out.png"))
        .unwrap()
        .into_luma8()
        .into_raw();
    let a = ArrayD::from_shape_vec(IxDyn(&[h, w]), grey).unwrap();
    assert_eq!(
        got,
        expected(&a, "np.median(x)", &Options::size(&[3, 3]))
            .into_raw_vec_and_offset()
            .0
    );
    // 8-bit RGB: each channel on its own (axes 0 and 1), with a disk and a constant border.
    let rgb = save_u8(&d.join("c.png"), (h, w), 3);
    let (c_in, c_out) = (d.join("c.png"), d.join("c_out.png"));
    let args = [
        "filter",
        s(&c_in),
        s(&c_out),
        "-e",
        "max(x) - min(x)",
        "--footprint",
        "disk:2",
        "--mode",
        "constant",
        "--cval",
        "9",
        "-j",
        "2",
    ];
    let o = ndjit(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let got = image::open(d.join("c_out.png")).unwrap();
    assert!(
        matches!(got, image::DynamicImage::ImageRgb8(_)),
        "the pixel type is kept"
    );
    let a = ArrayD::from_shape_vec(IxDyn(&[h, w, 3]), rgb).unwrap();
    let opts = Options::new(Footprint::disk(2))
        .mode(Mode::Constant)
        .cval(9.0)
        .axes(&[0, 1]);
    assert_eq!(
        got.into_rgb8().into_raw(),
        expected(&a, "max(x) - min(x)", &opts)
            .into_raw_vec_and_offset()
            .0
    );
}

#[test]
fn sixteen_bit_tiffs_keep_their_type() {
    let d = dir("tiff");
    let (h, w) = (20, 31);
    let grey = save_u16(&d.join("g.tif"), (h, w), 1);
    let src = "np.mean(x) * 1.5";
    ndjit_ok(&[
        "filter",
        s(&d.join("g.tif")),
        s(&d.join("g_out.tiff")),
        "-e",
        src,
        "--footprint",
        "cross:2",
        "--mode",
        "mirror",
    ]);
    let got = image::open(d.join("g_out.tiff")).unwrap();
    assert!(matches!(got, image::DynamicImage::ImageLuma16(_)));
    let a = ArrayD::from_shape_vec(IxDyn(&[h, w]), grey).unwrap();
    // 1.5 × the mean overflows uint16 in places: scipy's C cast wraps, and so does the output.
    let want = expected(
        &a,
        src,
        &Options::new(Footprint::cross(2, 2)).mode(Mode::Mirror),
    );
    assert_eq!(
        got.into_luma16().into_raw(),
        want.into_raw_vec_and_offset().0
    );
    // RGBA, 16 bits.
    let rgba = save_u16(&d.join("c.tif"), (h, w), 4);
    ndjit_ok(&[
        "filter",
        s(&d.join("c.tif")),
        s(&d.join("c_out.tif")),
        "-e",
        "np.median(x)",
        "--size",
        "3,5",
        "--origin",
        "0,1",
    ]);
    let a = ArrayD::from_shape_vec(IxDyn(&[h, w, 4]), rgba).unwrap();
    let want = expected(
        &a,
        "np.median(x)",
        &Options::size(&[3, 5]).axes(&[0, 1]).origin(&[0, 1]),
    );
    assert_eq!(
        image::open(d.join("c_out.tif"))
            .unwrap()
            .into_rgba16()
            .into_raw(),
        want.into_raw_vec_and_offset().0
    );
}

#[test]
fn npy_arrays_of_any_dtype_and_rank() {
    let d = dir("npy");
    let a = ArrayD::from_shape_fn(IxDyn(&[5, 6, 7]), |i| {
        (i[0] * 100 + i[1] * 10 + i[2]) as f64 * 0.5
    });
    a.write_npy(std::fs::File::create(d.join("a.npy")).unwrap())
        .unwrap();
    ndjit_ok(&[
        "filter",
        s(&d.join("a.npy")),
        s(&d.join("b.npy")),
        "-e",
        "x[0] - x[len(x) - 1]",
        "--footprint",
        "cross",
        "--mode",
        "wrap",
    ]);
    let got = ArrayD::<f64>::read_npy(std::fs::File::open(d.join("b.npy")).unwrap()).unwrap();
    assert_eq!(
        got,
        expected(
            &a,
            "x[0] - x[len(x) - 1]",
            &Options::new(Footprint::cross(3, 1)).mode(Mode::Wrap)
        )
    );
    // A footprint from a file, axes, an output dtype.
    let fp = ArrayD::from_shape_vec(IxDyn(&[2, 3]), vec![1u8, 0, 2, 0, 1, 0]).unwrap();
    fp.write_npy(std::fs::File::create(d.join("fp.npy")).unwrap())
        .unwrap();
    ndjit_ok(&[
        "filter",
        s(&d.join("a.npy")),
        s(&d.join("c.npy")),
        "-e",
        "np.sum(x)",
        "--footprint",
        s(&d.join("fp.npy")),
        "--axes",
        "2,0",
        "--dtype",
        "int16",
    ]);
    let got = ArrayD::<i16>::read_npy(std::fs::File::open(d.join("c.npy")).unwrap()).unwrap();
    let f = Filter::compile("np.sum(x)", &Bindings::new()).unwrap();
    let mut want = ArrayD::<i16>::zeros(IxDyn(&[5, 6, 7]));
    let fp = Footprint::new(vec![2, 3], vec![true, false, true, false, true, false]).unwrap();
    ndjit::driver::generic_filter_into(
        a.view(),
        want.view_mut(),
        &f,
        &Options::new(fp).axes(&[2, 0]),
    )
    .unwrap();
    assert_eq!(got, want);
    // uint8 in, uint8 out (the C cast wraps 300 to 44).
    let u = ArrayD::from_shape_vec(IxDyn(&[3]), vec![100u8, 100, 100]).unwrap();
    u.write_npy(std::fs::File::create(d.join("u.npy")).unwrap())
        .unwrap();
    ndjit_ok(&[
        "filter",
        s(&d.join("u.npy")),
        s(&d.join("v.npy")),
        "-e",
        "np.sum(x)",
        "--size",
        "3",
    ]);
    assert_eq!(
        ArrayD::<u8>::read_npy(std::fs::File::open(d.join("v.npy")).unwrap())
            .unwrap()
            .into_raw_vec_and_offset()
            .0,
        vec![44, 44, 44]
    );
}

#[test]
fn bad_input_gives_clear_errors_and_no_output() {
    let d = dir("bad");
    let out = d.join("out.png");
    let gray = image::GrayImage::from_raw(4, 4, vec![7; 16]).unwrap();
    gray.save(d.join("ok.png")).unwrap();
    let code = |o: &Output| o.status.code().unwrap();

    // Missing input file.
    let o = ndjit(&[
        "filter",
        s(&d.join("missing.png")),
        s(&out),
        "-e",
        "np.mean(x)",
        "--size",
        "3",
    ]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot read") && stderr(&o).contains("missing.png"),
        "{}",
        stderr(&o)
    );
    // Not an image.
    std::fs::write(d.join("text.png"), b"this is not a png").unwrap();
    let o = ndjit(&[
        "filter",
        s(&d.join("text.png")),
        s(&out),
        "-e",
        "np.mean(x)",
        "--size",
        "3",
    ]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    // A corrupt .npy.
    std::fs::write(d.join("bad.npy"), b"\x93NUMPY garbage").unwrap();
    let o = ndjit(&[
        "filter",
        s(&d.join("bad.npy")),
        s(&d.join("o.npy")),
        "-e",
        "np.mean(x)",
        "--size",
        "3",
    ]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    // An unsupported element type (complex128), hand-written.
    let header = "{'descr': '<c16', 'fortran_order': False, 'shape': (2,), }";
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    let pad = 64 - (10 + header.len() + 1) % 64;
    let hlen = (header.len() + pad + 1) as u16;
    bytes.extend_from_slice(&hlen.to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend(std::iter::repeat_n(b' ', pad));
    bytes.push(b'\n');
    bytes.extend_from_slice(&[0u8; 32]);
    std::fs::write(d.join("complex.npy"), bytes).unwrap();
    let o = ndjit(&[
        "filter",
        s(&d.join("complex.npy")),
        s(&d.join("o.npy")),
        "-e",
        "np.mean(x)",
        "--size",
        "3",
    ]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("unsupported element type"),
        "{}",
        stderr(&o)
    );
    // An array the output format cannot hold: float64 into a PNG.
    ArrayD::<f64>::zeros(IxDyn(&[4, 4]))
        .write_npy(std::fs::File::create(d.join("f.npy")).unwrap())
        .unwrap();
    let o = ndjit(&[
        "filter",
        s(&d.join("f.npy")),
        s(&out),
        "-e",
        "np.mean(x)",
        "--size",
        "3",
    ]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot store a float64 array"),
        "{}",
        stderr(&o)
    );
    // A bad expression shows the caret display of ndjit's errors.
    let o = ndjit(&[
        "filter",
        s(&d.join("ok.png")),
        s(&out),
        "-e",
        "np.mean(x) + undefined_name",
        "--size",
        "3",
    ]);
    assert_eq!(code(&o), 2);
    let e = stderr(&o);
    assert!(e.contains("undefined_name") && e.contains('^'), "{e}");
    // Bad options.
    let ok = d.join("ok.png");
    for args in [
        vec!["--size", "3", "--mode", "sideways"],
        vec![],
        vec!["--footprint", "star:3"],
        vec!["--size", "three"],
        vec!["--size", "3", "--origin", "2"],
        vec!["--size", "3", "--dtype", "float16"],
    ] {
        let mut all = vec!["filter", s(&ok), s(&out), "-e", "np.mean(x)"];
        all.extend(args.iter().copied());
        let o = ndjit(&all);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
    }
    // Nothing was written by any of these.
    assert!(!out.exists());
    // A run-time failure leaves an existing output untouched, and no temporary files.
    std::fs::write(&out, b"precious").unwrap();
    let o = ndjit(&[
        "filter",
        s(&d.join("ok.png")),
        s(&out),
        "-e",
        "x[100]",
        "--size",
        "3",
    ]);
    assert_eq!(code(&o), 4, "{}", stderr(&o));
    assert!(stderr(&o).contains("IndexError"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&out).unwrap(), b"precious");
    // An output directory that does not exist.
    let o = ndjit(&[
        "filter",
        s(&d.join("ok.png")),
        s(&d.join("no/such/dir/o.png")),
        "-e",
        "np.mean(x)",
        "--size",
        "3",
    ]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    let leftovers: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".ndjit"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // Both a size and a footprint: scipy's warning, and the footprint wins.
    let o = ndjit_ok(&[
        "filter",
        s(&d.join("ok.png")),
        s(&d.join("w.png")),
        "-e",
        "np.mean(x)",
        "--size",
        "5",
        "--footprint",
        "cross",
    ]);
    assert!(stderr(&o).contains("ignoring size because footprint is set"));
}

#[test]
fn the_bundled_sample_image_filters() {
    let d = dir("sample");
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/sample.png");
    ndjit_ok(&[
        "filter",
        s(&sample),
        s(&d.join("out.png")),
        "-e",
        "np.median(x)",
        "--size",
        "5",
        "-q",
    ]);
    let out = image::open(d.join("out.png")).unwrap();
    assert_eq!((out.width(), out.height()), (256, 256));
}

/// The output file gets the mode any Unix tool gives a new file (0666 less the umask), not the
/// temporary file's private 0600 that would survive the atomic rename.
#[cfg(unix)]
#[test]
fn outputs_follow_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let d = dir("umask");
    let input = d.join("in.npy");
    ArrayD::<f64>::zeros(IxDyn(&[4, 5]))
        .write_npy(std::fs::File::create(&input).unwrap())
        .unwrap();
    // A file created the ordinary way in the same process tree shows what the umask allows.
    let plain = d.join("plain");
    std::fs::File::create(&plain).unwrap();
    let want = std::fs::metadata(&plain).unwrap().permissions().mode() & 0o777;
    let out = d.join("out.npy");
    ndjit_ok(&[
        "filter",
        s(&input),
        s(&out),
        "-e",
        "x[0]",
        "--size",
        "3",
        "-q",
    ]);
    let got = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_eq!(got, want, "output mode {got:o}, a new file gets {want:o}");
    assert_ne!(got, 0o600, "the temporary file's private mode leaked");
}

#[test]
fn footprints_too_large_for_memory_are_usage_errors() {
    // Sizes of 2^32 on both axes of a 2-D image: 2^64 entries, once wrapped to an empty
    // footprint (the output was all zeros and the exit status 0); 3 × 2^62 once panicked; huge
    // disks and crosses once aborted ("memory allocation of 4000004000001 bytes failed") or
    // panicked ("capacity overflow") with a backtrace.
    let d = dir("huge-footprint");
    let a = ArrayD::from_shape_vec(IxDyn(&[3, 4]), (0..12).map(|v| v as f64).collect()).unwrap();
    a.write_npy(std::fs::File::create(d.join("in.npy")).unwrap())
        .unwrap();
    for (option, value) in [
        ("--size", "4294967296"),
        ("--size", "3,4611686018427387904"),
        ("--footprint", "disk:1000000000"),
        ("--footprint", "cross:1000000000"),
        ("--footprint", "disk:5000000000"),
        ("--footprint", "disk:9223372036854775807"),
    ] {
        let out = d.join("out.npy");
        let o = ndjit(&[
            "filter",
            s(&d.join("in.npy")),
            s(&out),
            "-e",
            "x[0]",
            option,
            value,
        ]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{value}: {err}");
        let sizes = err.contains("ValueError: a footprint of shape");
        assert!(
            err.contains("more entries than fit in memory") && (sizes || option == "--footprint")
                || err.contains("unable to allocate"),
            "{value}: {err}"
        );
        assert!(
            !err.contains("panicked") && !err.contains("backtrace"),
            "{err}"
        );
        assert!(!out.exists(), "no output is written");
    }
}

#[test]
fn netpbm_outputs_take_the_format_their_extension_names() {
    // `.pgm` and `.ppm` were written as PAM (`P7`), which most readers of PGM refuse.
    let d = dir("netpbm");
    let (h, w) = (6, 7);
    let grey = save_u8(&d.join("g.pgm"), (h, w), 1);
    save_u8(&d.join("c.ppm"), (h, w), 3);
    let grey16 = save_u16(&d.join("g16.png"), (h, w), 1);
    for (input, output, magic) in [
        ("g.pgm", "g_out.pgm", "P5\n"),
        ("c.ppm", "c_out.ppm", "P6\n"),
        ("g16.png", "g16_out.pgm", "P5\n"),
        ("g.pgm", "g_out.pnm", "P5\n"),
        ("g.pgm", "g_out.pam", "P7\n"),
    ] {
        let out = d.join(output);
        ndjit_ok(&[
            "filter",
            s(&d.join(input)),
            s(&out),
            "-e",
            "max(x)",
            "--size",
            "3",
            "-q",
        ]);
        let bytes = std::fs::read(&out).unwrap();
        assert!(
            bytes.starts_with(magic.as_bytes()),
            "{output}: {:?}",
            &bytes[..3]
        );
        let back = image::open(&out).unwrap();
        assert_eq!((back.width(), back.height()), (w as u32, h as u32));
    }
    let got = image::open(d.join("g_out.pgm"))
        .unwrap()
        .into_luma8()
        .into_raw();
    let a = ArrayD::from_shape_vec(IxDyn(&[h, w]), grey).unwrap();
    let want = expected(&a, "max(x)", &Options::size(&[3, 3]));
    assert_eq!(got, want.into_raw_vec_and_offset().0);
    let got16 = image::open(d.join("g16_out.pgm"))
        .unwrap()
        .into_luma16()
        .into_raw();
    let a16 = ArrayD::from_shape_vec(IxDyn(&[h, w]), grey16).unwrap();
    let want16 = expected(&a16, "max(x)", &Options::size(&[3, 3]));
    assert_eq!(got16, want16.into_raw_vec_and_offset().0);
    // RGB cannot be a PGM: an error, no file.
    let o = ndjit(&[
        "filter",
        s(&d.join("c.ppm")),
        s(&d.join("c.pgm")),
        "-e",
        "max(x)",
        "--size",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(!d.join("c.pgm").exists());
}
