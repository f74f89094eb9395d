//! Arrays of any element type, and reading and writing them as `.npy` files and images.

use image::{DynamicImage, ExtendedColorType, ImageEncoder, ImageFormat};
use ndarray::{ArrayD, IxDyn};
use ndarray_npy::{ReadNpyError, ReadNpyExt, WriteNpyExt};
use ndjit::driver::Dtype;
use std::fs::File;
use std::io::{BufReader, BufWriter, Seek, Write};
use std::path::Path;

/// An n-d array of one of the dtypes the driver takes.
pub enum Data {
    /// NumPy bools as their bytes: scipy's C cast can store bytes other than 0 and 1 in a bool
    /// array, which Rust's `bool` cannot hold. (A bool converts to and from double exactly as a
    /// `uint8` does, so the driver treats these bytes as `uint8`.)
    Bool(ArrayD<u8>),
    U8(ArrayD<u8>),
    U16(ArrayD<u16>),
    U32(ArrayD<u32>),
    U64(ArrayD<u64>),
    I8(ArrayD<i8>),
    I16(ArrayD<i16>),
    I32(ArrayD<i32>),
    I64(ArrayD<i64>),
    F32(ArrayD<f32>),
    F64(ArrayD<f64>),
}

/// Runs `$body` with `$a` bound to the array inside a [`Data`], whatever its type.
macro_rules! with_data {
    ($data:expr, $a:ident => $body:expr) => {
        match $data {
            Data::Bool($a) => $body,
            Data::U8($a) => $body,
            Data::U16($a) => $body,
            Data::U32($a) => $body,
            Data::U64($a) => $body,
            Data::I8($a) => $body,
            Data::I16($a) => $body,
            Data::I32($a) => $body,
            Data::I64($a) => $body,
            Data::F32($a) => $body,
            Data::F64($a) => $body,
        }
    };
}
pub(crate) use with_data;

/// Why a file could not be read or written.
#[derive(Debug)]
pub enum IoError {
    /// The file could not be opened, read, created or written.
    Io(String),
    /// The file is not a valid image or `.npy` file.
    Decode(String),
    /// A valid file whose pixel format (or element type) is not supported, or an array that the
    /// output format cannot hold.
    Unsupported(String),
}

impl std::fmt::Display for IoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IoError::Io(m) | IoError::Decode(m) | IoError::Unsupported(m) => f.write_str(m),
        }
    }
}

impl Data {
    pub fn dtype(&self) -> Dtype {
        match self {
            Data::Bool(_) => Dtype::Bool,
            Data::U8(_) => Dtype::U8,
            Data::U16(_) => Dtype::U16,
            Data::U32(_) => Dtype::U32,
            Data::U64(_) => Dtype::U64,
            Data::I8(_) => Dtype::I8,
            Data::I16(_) => Dtype::I16,
            Data::I32(_) => Dtype::I32,
            Data::I64(_) => Dtype::I64,
            Data::F32(_) => Dtype::F32,
            Data::F64(_) => Dtype::F64,
        }
    }

    pub fn shape(&self) -> &[usize] {
        with_data!(self, a => a.shape())
    }

    /// A zero-filled array of this shape and the given dtype.
    pub fn zeros(dtype: Dtype, shape: &[usize]) -> Data {
        let s = IxDyn(shape);
        match dtype {
            Dtype::Bool => Data::Bool(ArrayD::zeros(s)),
            Dtype::U8 => Data::U8(ArrayD::zeros(s)),
            Dtype::U16 => Data::U16(ArrayD::zeros(s)),
            Dtype::U32 => Data::U32(ArrayD::zeros(s)),
            Dtype::U64 => Data::U64(ArrayD::zeros(s)),
            Dtype::I8 => Data::I8(ArrayD::zeros(s)),
            Dtype::I16 => Data::I16(ArrayD::zeros(s)),
            Dtype::I32 => Data::I32(ArrayD::zeros(s)),
            Dtype::I64 => Data::I64(ArrayD::zeros(s)),
            Dtype::F32 => Data::F32(ArrayD::zeros(s)),
            Dtype::F64 => Data::F64(ArrayD::zeros(s)),
        }
    }

    /// Reads a `.npy` file (by its extension) or an image (PNG, TIFF, PGM/PPM).
    pub fn read(path: &Path) -> Result<Data, IoError> {
        if is_npy(path) {
            read_npy(path)
        } else {
            read_image(path)
        }
    }

    /// Writes the array to `out` in the format `path`'s extension names.
    pub fn write<W: Write + Seek>(&self, path: &Path, out: W) -> Result<(), IoError> {
        if is_npy(path) {
            let mut out = BufWriter::new(out);
            let written = match self {
                Data::Bool(a) => write_bool_npy(a, &mut out).map_err(|e| e.to_string()),
                _ => with_data!(self, a => a.write_npy(&mut out)).map_err(|e| e.to_string()),
            };
            written.map_err(|e| IoError::Io(format!("cannot write {}: {e}", path.display())))?;
            return out
                .flush()
                .map_err(|e| IoError::Io(format!("cannot write {}: {e}", path.display())));
        }
        write_image(self, path, out)
    }
}

fn is_npy(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"))
}

fn read_npy(path: &Path) -> Result<Data, IoError> {
    let open = || {
        File::open(path)
            .map(BufReader::new)
            .map_err(|e| IoError::Io(format!("cannot read {}: {e}", path.display())))
    };
    // ndarray-npy reads one element type at a time: try each until the header matches.
    macro_rules! attempt {
        ($($variant:ident : $t:ty),*) => {{
            $(
                match ArrayD::<$t>::read_npy(open()?) {
                    Ok(a) => return Ok(Data::$variant(a.mapv(Into::into))),
                    Err(ReadNpyError::WrongDescriptor(_)) => {}
                    Err(e) => return Err(IoError::Decode(format!("{} is not a valid .npy file: {e}", path.display()))),
                }
            )*
        }};
    }
    attempt!(F64: f64, F32: f32, U8: u8, U16: u16, Bool: bool, U32: u32, U64: u64, I8: i8, I16: i16, I32: i32, I64: i64);
    Err(IoError::Unsupported(format!(
        "{}: unsupported element type (supported: bool, uint8-64, int8-64, float32, float64; complex and float16 are not)",
        path.display()
    )))
}

/// A `|b1` .npy file holding the bytes of `a` (ndarray-npy writes only Rust `bool`s).
fn write_bool_npy<W: Write>(a: &ArrayD<u8>, out: &mut W) -> std::io::Result<()> {
    let shape: String = match a.shape() {
        [n] => format!("({n},)"),
        s => format!(
            "({})",
            s.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!("{{'descr': '|b1', 'fortran_order': False, 'shape': {shape}, }}");
    // Magic (6) + version (2) + length (2) + header + newline, padded to a multiple of 64.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    out.write_all(b"\x93NUMPY\x01\x00")?;
    out.write_all(&(header.len() as u16).to_le_bytes())?;
    out.write_all(header.as_bytes())?;
    let bytes: Vec<u8> = a.iter().copied().collect();
    out.write_all(&bytes)
}

fn read_image(path: &Path) -> Result<Data, IoError> {
    let reader = image::ImageReader::open(path)
        .map_err(|e| IoError::Io(format!("cannot read {}: {e}", path.display())))?;
    let reader = reader
        .with_guessed_format()
        .map_err(|e| IoError::Io(format!("cannot read {}: {e}", path.display())))?;
    if reader.format().is_none() {
        return Err(IoError::Decode(format!(
            "{}: not a PNG, TIFF, PGM/PPM or .npy file",
            path.display()
        )));
    }
    let img = reader.decode().map_err(|e| match e {
        image::ImageError::Unsupported(e) => {
            IoError::Unsupported(format!("{}: {e}", path.display()))
        }
        image::ImageError::IoError(e) => {
            IoError::Io(format!("cannot read {}: {e}", path.display()))
        }
        e => IoError::Decode(format!("{}: {e}", path.display())),
    })?;
    let (w, h) = (img.width() as usize, img.height() as usize);
    let shape = |c: usize| if c == 1 { vec![h, w] } else { vec![h, w, c] };
    let arr = |c: usize, v: Vec<u8>| {
        ArrayD::from_shape_vec(IxDyn(&shape(c)), v).expect("image buffer size")
    };
    Ok(match img {
        DynamicImage::ImageLuma8(b) => Data::U8(arr(1, b.into_raw())),
        DynamicImage::ImageLumaA8(b) => Data::U8(arr(2, b.into_raw())),
        DynamicImage::ImageRgb8(b) => Data::U8(arr(3, b.into_raw())),
        DynamicImage::ImageRgba8(b) => Data::U8(arr(4, b.into_raw())),
        DynamicImage::ImageLuma16(b) => Data::U16(
            ArrayD::from_shape_vec(IxDyn(&shape(1)), b.into_raw()).expect("image buffer size"),
        ),
        DynamicImage::ImageLumaA16(b) => Data::U16(
            ArrayD::from_shape_vec(IxDyn(&shape(2)), b.into_raw()).expect("image buffer size"),
        ),
        DynamicImage::ImageRgb16(b) => Data::U16(
            ArrayD::from_shape_vec(IxDyn(&shape(3)), b.into_raw()).expect("image buffer size"),
        ),
        DynamicImage::ImageRgba16(b) => Data::U16(
            ArrayD::from_shape_vec(IxDyn(&shape(4)), b.into_raw()).expect("image buffer size"),
        ),
        DynamicImage::ImageRgb32F(b) => Data::F32(
            ArrayD::from_shape_vec(IxDyn(&shape(3)), b.into_raw()).expect("image buffer size"),
        ),
        DynamicImage::ImageRgba32F(b) => Data::F32(
            ArrayD::from_shape_vec(IxDyn(&shape(4)), b.into_raw()).expect("image buffer size"),
        ),
        other => {
            return Err(IoError::Unsupported(format!(
                "{}: unsupported pixel format {:?}",
                path.display(),
                other.color()
            )))
        }
    })
}

/// The image color type of an array: `(H, W)` grey, or `(H, W, C)` with 2 (grey + alpha), 3 (RGB)
/// or 4 (RGBA) channels, of 8-bit, 16-bit or float32 samples.
fn color_type(data: &Data) -> Option<ExtendedColorType> {
    let shape = data.shape();
    let channels = match shape.len() {
        2 => 1,
        3 => shape[2],
        _ => return None,
    };
    use ExtendedColorType as C;
    Some(match (data.dtype(), channels) {
        (Dtype::U8, 1) => C::L8,
        (Dtype::U8, 2) => C::La8,
        (Dtype::U8, 3) => C::Rgb8,
        (Dtype::U8, 4) => C::Rgba8,
        (Dtype::U16, 1) => C::L16,
        (Dtype::U16, 2) => C::La16,
        (Dtype::U16, 3) => C::Rgb16,
        (Dtype::U16, 4) => C::Rgba16,
        (Dtype::F32, 3) => C::Rgb32F,
        (Dtype::F32, 4) => C::Rgba32F,
        _ => return None,
    })
}

/// The Netpbm header the extension names: `.pgm` grey (`P5`), `.ppm` RGB (`P6`), `.pam` any
/// (`P7`, the encoder's own), `.pnm` the first of those that holds `color`; None where it cannot
/// hold it (alpha in a `.pgm`, say).
fn pnm_header(
    path: &Path,
    color: ExtendedColorType,
    (width, height): (u32, u32),
) -> Option<Option<image::codecs::pnm::PnmHeader>> {
    use image::codecs::pnm::{GraymapHeader, PixmapHeader, SampleEncoding::Binary};
    use ExtendedColorType::{Rgb16, Rgb8, L16, L8};
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    let max = |wide| if wide { 65535 } else { 255 };
    let grey = |wide| GraymapHeader {
        encoding: Binary,
        width,
        height,
        maxwhite: max(wide),
    };
    let rgb = |wide| PixmapHeader {
        encoding: Binary,
        width,
        height,
        maxval: max(wide),
    };
    match (ext.as_str(), color) {
        ("pgm" | "pnm", L8 | L16) => Some(Some(grey(color == L16).into())),
        ("ppm" | "pnm", Rgb8 | Rgb16) => Some(Some(rgb(color == Rgb16).into())),
        ("pam" | "pnm", _) => Some(None),
        _ => None,
    }
}

fn write_image<W: Write + Seek>(data: &Data, path: &Path, out: W) -> Result<(), IoError> {
    let format = ImageFormat::from_path(path).map_err(|_| {
        IoError::Unsupported(format!(
            "{}: unknown output format (use .png, .tif/.tiff, .pgm/.ppm or .npy)",
            path.display()
        ))
    })?;
    let unsupported = || {
        IoError::Unsupported(format!(
            "{}: cannot store a {} array of shape {:?} as {format:?} (images are (H, W) or (H, W, 2|3|4) of uint8 or uint16; write .npy for anything else)",
            path.display(),
            data.dtype(),
            data.shape()
        ))
    };
    let color = color_type(data).ok_or_else(unsupported)?;
    let shape = data.shape();
    let (h, w) = (shape[0], shape[1]);
    let (Ok(w32), Ok(h32)) = (u32::try_from(w), u32::try_from(h)) else {
        return Err(unsupported());
    };
    // The samples in row-major order, native-endian bytes as `ImageEncoder` expects.
    let bytes: Vec<u8> = match data {
        Data::U8(a) => a.iter().copied().collect(),
        Data::U16(a) => a.iter().flat_map(|v| v.to_ne_bytes()).collect(),
        Data::F32(a) => a.iter().flat_map(|v| v.to_ne_bytes()).collect(),
        _ => return Err(unsupported()),
    };
    let mut out = BufWriter::new(out);
    let result = match format {
        ImageFormat::Png => {
            image::codecs::png::PngEncoder::new(&mut out).write_image(&bytes, w32, h32, color)
        }
        ImageFormat::Tiff => {
            image::codecs::tiff::TiffEncoder::new(&mut out).write_image(&bytes, w32, h32, color)
        }
        ImageFormat::Pnm => {
            let encoder = image::codecs::pnm::PnmEncoder::new(&mut out);
            match pnm_header(path, color, (w32, h32)).ok_or_else(unsupported)? {
                Some(header) => encoder.with_header(header),
                None => encoder,
            }
            .write_image(&bytes, w32, h32, color)
        }
        _ => return Err(unsupported()),
    };
    result.map_err(|e| match e {
        image::ImageError::Unsupported(_) | image::ImageError::Parameter(_) => unsupported(),
        e => IoError::Io(format!("cannot write {}: {e}", path.display())),
    })?;
    out.flush()
        .map_err(|e| IoError::Io(format!("cannot write {}: {e}", path.display())))
}

/// The channels of an `(H, W, C)` image are filtered separately: the spatial axes.
pub fn spatial_axes(data: &Data, is_image: bool) -> Option<Vec<usize>> {
    (is_image && data.shape().len() == 3).then(|| vec![0, 1])
}
