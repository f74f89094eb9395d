//! The `ndarray` face of the driver.

use super::array::{RawArray, RawArrayMut};
use super::dtype::Dtype;
use super::error::DriverError;
use super::options::Options;
use crate::Filter;
use ndarray::{Array, ArrayView, ArrayViewMut, Dimension};

/// Rust element types with a [`Dtype`]: `bool`, `u8`…`u64`, `i8`…`i64`, `f32`, `f64`.
pub trait Element: Copy + Default + Send + Sync + 'static {
    const DTYPE: Dtype;
}

macro_rules! element {
    ($($t:ty => $d:ident),*) => {$(
        impl Element for $t {
            const DTYPE: Dtype = Dtype::$d;
        }
    )*};
}
element!(bool => Bool, u8 => U8, u16 => U16, u32 => U32, u64 => U64, i8 => I8, i16 => I16, i32 => I32, i64 => I64, f32 => F32, f64 => F64);

fn raw<A: Element, D: Dimension>(a: &ArrayView<A, D>) -> RawArray {
    let size = std::mem::size_of::<A>() as isize;
    RawArray {
        ptr: a.as_ptr() as *const u8,
        dtype: A::DTYPE,
        shape: a.shape().to_vec(),
        strides: a.strides().iter().map(|s| s * size).collect(),
    }
}

fn raw_mut<B: Element, D: Dimension>(a: &mut ArrayViewMut<B, D>) -> RawArrayMut {
    let size = std::mem::size_of::<B>() as isize;
    let strides = a.strides().iter().map(|s| s * size).collect();
    RawArrayMut {
        ptr: a.as_mut_ptr() as *mut u8,
        dtype: B::DTYPE,
        shape: a.shape().to_vec(),
        strides,
    }
}

/// `scipy.ndimage.generic_filter(input, filter, ...)` with the output of the input's type.
///
/// ```
/// use ndarray::array;
/// use ndjit::driver::{generic_filter, Options};
/// let f = ndjit::Filter::compile("max(x) - min(x)", &ndjit::Bindings::new())?;
/// let a = array![[1.0, 2.0, 4.0], [8.0, 16.0, 32.0]];
/// let r = generic_filter(a.view(), &f, &Options::size(&[1, 3]))?;
/// assert_eq!(r, array![[1.0, 3.0, 2.0], [8.0, 24.0, 16.0]]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn generic_filter<A: Element, D: Dimension>(
    input: ArrayView<A, D>,
    filter: &Filter,
    opts: &Options,
) -> Result<Array<A, D>, DriverError> {
    if A::DTYPE == Dtype::Bool {
        let mut out = Array::from_elem(input.raw_dim(), A::default());
        generic_filter_into(input, out.view_mut(), filter, opts)?;
        return Ok(out);
    }
    // Uninitialised: the workers write (and first touch, in parallel) every element.
    let mut out = Array::<A, D>::uninit(input.raw_dim());
    let size = std::mem::size_of::<A>() as isize;
    let raw_out = RawArrayMut {
        ptr: out.as_mut_ptr() as *mut u8,
        dtype: A::DTYPE,
        shape: out.shape().to_vec(),
        strides: out.strides().iter().map(|s| s * size).collect(),
    };
    // SAFETY: `out` is ours and has the input's shape; on success every element has been
    // written (an empty array has none), so it is initialised.
    unsafe {
        super::generic_filter_raw(&raw(&input), &raw_out, filter, opts)?;
        Ok(out.assume_init())
    }
}

/// `scipy.ndimage.generic_filter(input, filter, output=output, ...)`: the results cast to the
/// output's type with scipy's C cast (see [`Dtype`]). A `bool` output holds `true` where scipy's
/// byte would be non-zero (scipy can store bytes other than 0 and 1 in a bool array, which Rust's
/// `bool` cannot hold).
pub fn generic_filter_into<A: Element, B: Element, D: Dimension>(
    input: ArrayView<A, D>,
    mut output: ArrayViewMut<B, D>,
    filter: &Filter,
    opts: &Options,
) -> Result<(), DriverError> {
    let inp = raw(&input);
    if B::DTYPE == Dtype::Bool {
        // Through bytes, which may hold any value, then to valid bools.
        let mut bytes = Array::<u8, D>::zeros(output.raw_dim());
        let out = raw_mut(&mut bytes.view_mut());
        // SAFETY: both describe live, correctly typed ndarray memory, and `bytes` is our own.
        unsafe { super::generic_filter_raw(&inp, &out, filter, opts)? };
        output.zip_mut_with(&bytes, |o, &b| {
            // SAFETY: B is bool here, and `b != 0` is a valid bool.
            unsafe { *(o as *mut B as *mut bool) = b != 0 };
        });
        return Ok(());
    }
    let out = raw_mut(&mut output);
    // SAFETY: the views describe live memory of their element types; a mutable view cannot alias
    // the input view in safe Rust.
    unsafe { super::generic_filter_raw(&inp, &out, filter, opts) }
}
