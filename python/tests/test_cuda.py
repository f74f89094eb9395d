"""``target="cuda"`` and ``Filter.inspect_ptx``.

Without a GPU (CI), the checks that need none run: argument errors, the missing-device error, and
the PTX itself (assembled with ptxas when the ``nvidia-cuda-nvcc-cu12`` wheel is installed). On a
GPU (``scripts/gpu_device.sh run``), the rest compares the GPU with scipy running ndjit's own
LowLevelCallable on the CPU, bit for bit, for NumPy arrays (copied) and CuPy arrays (zero-copy).
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit

REASON = ndjit._core.cuda_unavailable_reason()
needs_gpu = pytest.mark.skipif(REASON is not None, reason=f"SKIPPED, needs a CUDA device: {REASON}")
no_gpu = pytest.mark.skipif(REASON is None, reason="checks the error raised without a CUDA device")

CROSS = ndi.generate_binary_structure(2, 1)


def find_ptxas():
    """``$NDJIT_PTXAS``, ``ptxas`` on the PATH, or the one in the nvidia-cuda-nvcc-cu12 wheel of
    this Python or the system's."""
    if os.environ.get("NDJIT_PTXAS"):
        return os.environ["NDJIT_PTXAS"]
    if shutil.which("ptxas"):
        return shutil.which("ptxas")
    paths = list(sys.path)
    try:
        out = subprocess.run(["python3", "-c", "import sys; print('\\n'.join(sys.path))"], capture_output=True,
                             text=True, timeout=30)
        paths += out.stdout.splitlines()
    except (OSError, subprocess.TimeoutExpired):
        pass
    for d in paths:
        p = os.path.join(d, "nvidia", "cuda_nvcc", "bin", "ptxas")
        if os.path.isfile(p):
            return p
    return None


# --- without a GPU ------------------------------------------------------------------------------

def test_inspect_ptx_is_a_kernel_for_the_arguments():
    f = ndjit.jit_filter(lambda x: x.min())
    ptx = f.inspect_ptx(footprint=CROSS, mode="nearest", target="sm_90")
    assert ".target sm_90" in ptx and ".visible .entry ndjit_stencil" in ptx
    assert "ld.global.nc" in ptx  # read-only loads, as the issue asks
    portable = f.inspect_ptx(footprint=CROSS, mode="nearest", target="portable")
    assert ".target sm_75" in portable
    # The kernel is specialised: mode, cval, footprint and dtype change the code.
    variants = {
        f.inspect_ptx(footprint=CROSS, mode=m, target="sm_90") for m in ("reflect", "nearest", "wrap", "mirror")
    }
    assert len(variants) == 4
    assert f.inspect_ptx(size=3, mode="constant", cval=1.5) != f.inspect_ptx(size=3, mode="constant", cval=2.5)
    f32 = f.inspect_ptx(size=3, dtype=np.float32)
    assert "ld.global.nc.f32" in f32 or "ld.global.nc.v" in f32
    assert f.inspect_ptx(size=(3, 3, 3)) != f.inspect_ptx(size=(3, 3))


def test_inspect_ptx_assembles_with_ptxas():
    ptxas = find_ptxas()
    if ptxas is None:
        why = "ptxas not found (pip install nvidia-cuda-nvcc-cu12, or set NDJIT_PTXAS)"
        if os.environ.get("CI"):
            pytest.fail(f"CI is set and {why}")  # under CI (.ci/run) a pass must mean it ran
        pytest.skip(f"SKIPPED: {why}")
    programs = [lambda x: np.median(x), "np.sum(x * x) / len(x)", lambda x: np.exp(x[0]) - np.tanh(x.mean()),
                "np.percentile(x, 25)"]
    with tempfile.TemporaryDirectory() as d:
        for i, prog in enumerate(programs):
            f = ndjit.jit_filter(prog)
            for target, sm in (("sm_90", "sm_90"), ("portable", "sm_75")):
                path = os.path.join(d, f"k{i}_{sm}.ptx")
                with open(path, "w") as fh:
                    fh.write(f.inspect_ptx(size=(3, 5), mode="reflect", dtype=np.float32, target=target))
                r = subprocess.run([ptxas, f"-arch={sm}", path, "-o", path + ".cubin"], capture_output=True, text=True)
                assert r.returncode == 0, f"program {i} for {sm}: {r.stderr}"


def test_inspect_ptx_shows_the_passes_of_a_box_extreme():
    # A box's minimum or maximum runs as one pass per axis, with the general kernel patching
    # windows that hold a NaN or -0.0, from 7x7; from 5x5 for one-byte types and for NumPy's
    # forms, whose general kernel carries the zero-sign guard on floats; from 3x3 for both (on
    # integer images the guard folds away: no integer is -0.0). Other
    # footprints and statistics keep the general kernel (`separable::chosen`). The column and row
    # passes are one kernel, through shared memory: a strip where its rings fit
    # (`separable::strip`), a tile where no strip serves the window's rows (`separable::tile`),
    # two kernels where neither fits.
    f = ndjit.jit_filter("np.min(x)")
    ptx = f.inspect_ptx(size=7, dtype=np.float32)
    assert ".entry ndjit_pass0" in ptx and ".entry ndjit_pass1" not in ptx and ".entry ndjit_patch" in ptx
    assert "ndjit_ring0" in ptx and "bar.sync" in ptx
    # Rows of 62 taps, whose edge groups no strip unrolls.
    ptx = f.inspect_ptx(size=(3, 62), dtype=np.float32)
    assert "ndjit_rows0" in ptx and "ndjit_ring0" not in ptx and ".entry ndjit_pass1" not in ptx
    for size in (9, 31):
        ptx = f.inspect_ptx(size=size, dtype=np.float32)
        assert ".entry ndjit_pass1" not in ptx and "ndjit_ring0" in ptx and "bar.sync" in ptx
        # Past the 48 KiB a block declares statically, its arrays are dynamic shared memory.
        assert (".extern .shared" in ptx) == (size == 31)
    ptx = ndjit.jit_filter("np.max(x) - np.min(x)").inspect_ptx(size=21, dtype=np.float64)
    assert ".entry ndjit_pass0" in ptx and ".entry ndjit_pass1" in ptx and ".shared" not in ptx
    plain = ndjit.jit_filter("min(x)")
    for size, dtype, numpy_form, python_form in ((3, np.float32, False, False), (3, np.float64, False, False),
                                                 (5, np.float32, True, False), (5, np.float64, True, False),
                                                 (3, np.uint8, False, False), (5, np.uint8, True, True),
                                                 (7, np.float32, True, True), (7, np.float64, True, True)):
        for g, passes in ((f, numpy_form), (plain, python_form)):
            got = "ndjit_pass0" in g.inspect_ptx(size=size, dtype=dtype)
            assert got == passes, (g.source, size, np.dtype(dtype).name)
    assert "ndjit_patch" not in f.inspect_ptx(size=7, dtype=np.uint8)
    # Other footprints: the general kernel up to its register window's 64 values, past it the
    # select kernel's least and largest keys (`separable::select`), never the passes; one
    # extreme of doubles past 200 values (`separable::WIDE_EXTREME_MIN_TAPS`).
    disk = np.ones((9, 9), bool)
    disk[0, 0] = False
    ptx = f.inspect_ptx(footprint=disk, dtype=np.float32)
    assert "ndjit_keys" in ptx and "ndjit_rows0" not in ptx
    assert "ndjit_keys" not in f.inspect_ptx(footprint=disk[1:, 1:], dtype=np.float32)
    assert "ndjit_keys" not in f.inspect_ptx(footprint=disk, dtype=np.float64)
    assert "ndjit_keys" in f.inspect_ptx(footprint=np.ones((15, 15), bool) ^ np.eye(15, dtype=bool),
                                         dtype=np.float64)
    assert "ndjit_pass" not in ndjit.jit_filter("np.median(x)").inspect_ptx(size=9)
    assert "ndjit_pass0" in ndjit.jit_filter("np.max(x) - np.min(x)").inspect_ptx(size=9)
    # A median over a disk past the networks' 128 values selects by keys (`separable::select`).
    yy, xx = np.mgrid[-7:8, -7:8]
    assert "ndjit_keys" in ndjit.jit_filter("np.median(x)").inspect_ptx(footprint=yy**2 + xx**2 <= 49)
    assert "ndjit_keys" not in ndjit.jit_filter("np.median(x)").inspect_ptx(footprint=yy**2 + xx**2 <= 36)


def test_inspect_ptx_errors():
    f = ndjit.jit_filter("np.max(x)")
    with pytest.raises(TypeError, match="complex64|supported"):
        f.inspect_ptx(size=3, dtype=np.complex64)
    with pytest.raises(RuntimeError, match="array type not supported"):
        f.inspect_ptx(size=3, dtype=np.float16)
    with pytest.raises(RuntimeError, match="array type not supported"):
        f.inspect_ptx(size=3, output=np.longdouble)
    with pytest.raises(ValueError, match="target"):
        f.inspect_ptx(size=3, target="sm_80x")
    with pytest.raises(ValueError, match="invalid origin"):
        f.inspect_ptx(size=3, origin=2)
    with pytest.raises(RuntimeError, match="no footprint"):
        f.inspect_ptx()
    with pytest.raises(RuntimeError, match="boundary mode"):
        f.inspect_ptx(size=3, mode="bogus")
    with pytest.raises(TypeError, match="filter1d"):
        ndjit.jit_filter1d("def f(i, o):\n    o[:] = i[1:-1]\n").inspect_ptx(size=3)
    with pytest.raises(ndjit.CudaError, match="1 to 3 dimensions"):
        f.inspect_ptx(size=(2, 2, 2, 2))


# Every element type scipy's generic_filter takes (as dtypes: scipy refuses the string "bool").
SCIPY_DTYPES = tuple(np.dtype(d) for d in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                            "uint64", "float32", "float64"))


def test_inspect_ptx_reads_and_writes_every_scipy_dtype():
    """Each dtype is loaded as itself and converted as C's (double) does; each output gets its own
    cast (the emulator and ptxas tests of the GPU crate check the sequences)."""
    f = ndjit.jit_filter("np.max(x)")
    loads = {"bool": "u8", "int8": "s8", "int16": "s16", "int32": "s32", "int64": "s64", "uint8": "u8",
             "uint16": "u16", "uint32": "u32", "uint64": "u64", "float32": "f32", "float64": "f64"}
    for dt in SCIPY_DTYPES:
        ptx = f.inspect_ptx(size=3, dtype=dt, output="float64")
        load = loads[dt.name]
        assert f"ld.global.nc.{load}" in ptx or f"ld.global.nc.v2.{load}" in ptx, dt
    assert "cvt.rn.f64.s64" in f.inspect_ptx(size=3, dtype="int64")
    assert "cvt.rn.f64.u64" in f.inspect_ptx(size=3, dtype="uint64")
    assert "cvt.rzi.u64.f64" in f.inspect_ptx(size=3, dtype="float64", output="uint64")
    assert "cvt.rzi.s64.f64" in f.inspect_ptx(size=3, dtype="float64", output="uint32")
    assert "st.global.u8" in f.inspect_ptx(size=3, dtype="float64", output="bool")


def test_target_argument_errors():
    a = np.zeros((4, 4))
    with pytest.raises(ValueError, match="target must be"):
        ndjit.generic_filter(a, "np.max(x)", size=3, target="gpu")
    with pytest.raises(TypeError, match="workers"):
        ndjit.generic_filter(a, "np.max(x)", size=3, target="cuda", workers=2)
    # scipy's errors for the dtypes it refuses, before any device is needed.
    with pytest.raises(RuntimeError, match="array type not supported"):
        ndjit.generic_filter(a.astype(np.float16), "np.max(x)", size=3, target="cuda")
    with pytest.raises(TypeError, match="Complex type not supported"):
        ndjit.generic_filter(a.astype(np.complex64), "np.max(x)", size=3, target="cuda")


@no_gpu
def test_missing_gpu_is_a_clear_error_and_the_cpu_still_works():
    a = np.arange(25.0).reshape(5, 5)
    before = a.copy()
    with pytest.raises(ndjit.CudaUnavailableError) as e:
        ndjit.generic_filter(a, "np.max(x)", size=3, target="cuda")
    assert isinstance(e.value, RuntimeError) and isinstance(e.value, ndjit.FilterError)
    assert "CUDA" in str(e.value) or "libcuda" in str(e.value)
    assert not ndjit.cuda.is_available()
    with pytest.raises(ndjit.CudaUnavailableError):
        ndjit.cuda.device()
    np.testing.assert_array_equal(a, before)
    np.testing.assert_array_equal(ndjit.generic_filter(a, "np.max(x)", size=3),
                                  ndi.maximum_filter(a, size=3))


def test_the_cuda_path_generates_no_native_code():
    """``target="cuda"`` compiles the filter's IR into PTX: the CPU's native code is generated only
    when a CPU call first needs it, in the same cached filter. With a GPU the results match the
    CPU's; without one the CUDA calls raise, after compiling."""
    def ranged(x):  # functions of their own: no other test compiles them
        return np.max(x) - np.min(x) + 0.125

    def centred(x):
        return x[4] - np.mean(x)

    a = np.arange(30.0).reshape(5, 6)
    got = {}
    for f, arg in ((ranged, a), (centred, FakeDeviceArray((5, 6)))):
        if REASON is None and f is ranged:
            got[f] = ndjit.generic_filter(arg, f, size=3, target="cuda")
        elif REASON is not None:
            out = FakeDeviceArray((5, 6)) if isinstance(arg, FakeDeviceArray) else None
            with pytest.raises(ndjit.CudaUnavailableError):
                ndjit.generic_filter(arg, f, size=3, target="cuda", output=out)
        else:
            continue  # a fake device pointer is for the machine without a GPU only
        _, compiled = ndjit._filter.compiled_filter(f, (), None)
        assert not compiled.has_native_code, f.__name__
        v = np.array([3.0, -1.5, 8.0, 0.25, 2.0, 7.0, -4.0, 1.0, 5.5])
        assert compiled.call(v) == f(v)
        assert compiled.has_native_code, f.__name__
        want = ndjit.generic_filter(a, f, size=3)
        np.testing.assert_array_equal(want, ndi.generic_filter(a, f, size=3))
        if f in got:
            assert_bits_equal(got[f], want, f.__name__)


class FakeDeviceArray:
    """An object with only ``__cuda_array_interface__`` (what Numba or PyTorch would hand over)."""

    def __init__(self, shape, typestr="<f8", ptr=0x7F0000000000, readonly=False, strides=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (ptr, readonly),
                                         "version": 3, "strides": strides, "stream": None}


def test_device_array_argument_errors():
    f = "np.max(x)"
    with pytest.raises(TypeError, match="Complex"):
        ndjit.generic_filter(FakeDeviceArray((4, 4), "<c16"), f, size=3, target="cuda")
    with pytest.raises(RuntimeError, match="array type not supported"):
        ndjit.generic_filter(FakeDeviceArray((4, 4), "<f2"), f, size=3, target="cuda",
                             output=FakeDeviceArray((4, 4)))
    with pytest.raises(RuntimeError, match="array type not supported"):
        ndjit.generic_filter(FakeDeviceArray((4, 4)), f, size=3, target="cuda",
                             output=FakeDeviceArray((4, 4), "<f2"))
    with pytest.raises(TypeError, match="cannot allocate an output like a FakeDeviceArray"):
        ndjit.generic_filter(FakeDeviceArray((4, 4)), f, size=3, target="cuda")
    with pytest.raises(ValueError, match="read-only"):
        ndjit.generic_filter(FakeDeviceArray((4, 4)), f, size=3, target="cuda",
                             output=FakeDeviceArray((4, 4), readonly=True))
    with pytest.raises(RuntimeError, match="output shape not correct"):
        ndjit.generic_filter(FakeDeviceArray((4, 4)), f, size=3, target="cuda", output=FakeDeviceArray((4, 5)))
    with pytest.raises(TypeError, match="output must be a device array"):
        ndjit.generic_filter(FakeDeviceArray((4, 4)), f, size=3, target="cuda", output=np.zeros((4, 4)))
    with pytest.raises(ValueError, match="invalid origin"):
        ndjit.generic_filter(FakeDeviceArray((4, 4)), f, size=3, origin=5, target="cuda",
                             output=FakeDeviceArray((4, 4)))
    with pytest.raises(ndjit.FilterSyntaxError):
        ndjit.generic_filter(FakeDeviceArray((4, 4)), "max(x", size=3, target="cuda", output=FakeDeviceArray((4, 4)))


@no_gpu
def test_device_array_without_gpu():
    with pytest.raises(ndjit.CudaUnavailableError):
        ndjit.generic_filter(FakeDeviceArray((4, 4)), "np.max(x)", size=3, target="cuda",
                             output=FakeDeviceArray((4, 4)))


# --- on a GPU -----------------------------------------------------------------------------------

PROGRAMS = [
    ("min", lambda x: x.min()),
    ("range", lambda x: x.max() - x.min()),
    ("median", np.median),
    ("var", np.var),
    ("nanmean", lambda x: np.nanmean(x) if not np.all(np.isnan(x)) else 0.0),
    ("centre", lambda x: 1.0 if x[len(x) // 2] > np.mean(x) else 0.0),
    ("exp", lambda x: np.exp(-np.abs(x[0] - x[-1])) + np.log1p(np.abs(x.sum()))),
    ("percentile", lambda x: np.percentile(x, 30)),
]


def assert_bits_equal(got, want, msg=""):
    """Bit for bit, except that a NaN equals any NaN: NumPy gives NaN's sign and payload no
    meaning, and x86 and the GPU make different default NaNs (0xFFF8... against 0x7FFF...)."""
    assert got.dtype == want.dtype and got.shape == want.shape, msg
    if got.dtype.kind == "f":
        nan = np.isnan(want)
        np.testing.assert_array_equal(np.isnan(got), nan, err_msg=msg)
        got, want = got[~nan], want[~nan]
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8), err_msg=msg)


# Programs that call transcendental functions: the CPU calls the C library (CPython's own), the
# GPU its transcriptions of glibc's routines, bit-identical where the host's glibc runs the builds
# they transcribe (x86-64 with FMA and AVX2; README, *GPU*). Elsewhere they are 1-3 ulp apart, and
# after the arithmetic that follows the results agree to ~1e-13, or within one unit of an integer
# output.
MATH_CALLS = {"exp"}


GPU_MATH_EXACT = ndjit._core.gpu_math_matches_cpu()


def assert_close_for_math(got, want, msg=""):
    assert got.dtype == want.dtype and got.shape == want.shape, msg
    if got.dtype.kind == "f":
        tol = 1e-13 if got.dtype == np.float64 else 1e-6
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True, err_msg=msg)
    else:
        assert np.abs(got.astype(np.int64) - want.astype(np.int64)).max(initial=0) <= 1, msg


def _image(rng, shape, dtype):
    if np.dtype(dtype).kind == "f":
        a = rng.normal(size=shape).astype(dtype)
        a.flat[rng.integers(0, a.size, 3)] = np.nan
        return a
    return rng.integers(0, 200, size=shape).astype(dtype)


@needs_gpu
@pytest.mark.parametrize("name,func", PROGRAMS)
@pytest.mark.parametrize("mode", ["reflect", "constant", "nearest", "mirror", "wrap"])
def test_numpy_arrays_match_scipy(rng, name, func, mode):
    f = ndjit.jit_filter(func)
    for shape, kw in (((13, 17), {"size": 3}), ((9, 11), {"footprint": CROSS, "origin": (1, 0)}),
                      ((31,), {"size": 5}), ((5, 6, 7), {"size": (3, 1, 3)})):
        for dtype in (np.float64, np.float32, np.uint8):
            a = _image(rng, shape, dtype)
            want = ndi.generic_filter(a, f, mode=mode, cval=0.5, **kw)
            got = ndjit.generic_filter(a, f, mode=mode, cval=0.5, target="cuda", **kw)
            assert isinstance(got, np.ndarray)
            exact = name not in MATH_CALLS or GPU_MATH_EXACT
            check = assert_bits_equal if exact else assert_close_for_math
            check(got, want, f"{name} {shape} {dtype}")


@needs_gpu
def test_output_dtypes_strides_and_runtime_errors(rng):
    a = rng.normal(size=(20, 30))
    f = ndjit.jit_filter(lambda x: x.max() * 100)
    for out in (np.float32, np.int32, np.uint16):
        np.testing.assert_array_equal(ndjit.generic_filter(a, f, size=3, output=out, target="cuda"),
                                      ndi.generic_filter(a, f, size=3, output=out))
    view = a[::2, ::-3]
    np.testing.assert_array_equal(ndjit.generic_filter(view, f, size=3, target="cuda"),
                                  ndi.generic_filter(view, f, size=3))
    bad = ndjit.jit_filter(lambda x: x[int(x[0] > 1.5) * 20])
    with pytest.raises(IndexError) as cpu:
        ndi.generic_filter(a, bad, size=3)
    with pytest.raises(IndexError) as gpu:
        ndjit.generic_filter(a, bad, size=3, target="cuda")
    assert str(gpu.value) == str(cpu.value)


@needs_gpu
def test_cupy_arrays_are_filtered_in_place_on_the_device(rng):
    cupy = pytest.importorskip("cupy")
    f = ndjit.jit_filter(lambda x: np.median(x) - x.min())
    a = rng.normal(size=(64, 48))
    want = ndi.generic_filter(a, f, footprint=CROSS, mode="mirror")
    d = cupy.asarray(a)
    got = ndjit.generic_filter(d, f, footprint=CROSS, mode="mirror", target="cuda")
    assert isinstance(got, cupy.ndarray) and got.dtype == cupy.float64
    assert_bits_equal(cupy.asnumpy(got), want)
    # A strided view, a given output, and an in-place call: refused, as scipy's loop reads the
    # pixels it has already written, which parallel threads cannot reproduce.
    view = d[::2, 1::3]
    out = cupy.empty(view.shape, dtype=cupy.float32)
    r = ndjit.generic_filter(view, f, size=3, output=out, target="cuda")
    assert r is out
    np.testing.assert_array_equal(cupy.asnumpy(out), ndi.generic_filter(a[::2, 1::3], f, size=3, output=np.float32))
    with pytest.raises(ValueError, match="overlaps the input"):
        ndjit.generic_filter(d, f, size=3, output=d, target="cuda")
    np.testing.assert_array_equal(cupy.asnumpy(d), a)
    with pytest.raises(ValueError, match="overlaps the input"):
        ndjit.generic_filter(a, f, size=3, output=a, target="cuda")
    with pytest.raises(ValueError, match="not CUDA device memory"):
        ndjit.generic_filter(FakeDeviceArray((4, 4), ptr=a.ctypes.data), f, size=3, target="cuda",
                             output=FakeDeviceArray((4, 4), ptr=a.ctypes.data))


def _extremes(rng, shape, dtype):
    """An image of ``dtype`` holding its extremes (int64 and uint64 beyond 2^53, which round on
    the way to double), zeros and ordinary values; NaN and infinities for the floats."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.kind == "f":
        a = _image(rng, shape, dtype) * 1e3
        a.flat[rng.integers(0, a.size, 4)] = [np.inf, -np.inf, 1e30, -0.0]
        return a
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    a.flat[rng.integers(0, a.size, 4)] = [info.min, info.max, 0, info.max - 1]
    return a


@needs_gpu
@pytest.mark.parametrize("dt", ["bool", "int8", "uint8", "int16", "uint16", "float32"])
def test_box_medians_of_narrow_types_match_scipy(rng, dt):
    """Medians of boxes up to 11x11 run as sorting networks: on 8- and 16-bit images two pairs of
    outputs at once in 16-bit lanes (sm_90), on float32 images through NaN-carrying comparators.
    Equal to scipy running np.median, bit for bit, with every value of the type's range and, in
    float32, NaN at scattered pixels."""
    a = _extremes(rng, (61, 83), dt)
    if a.dtype.kind == "f":
        a.flat[rng.integers(0, a.size, 5)] = np.nan
    for size, mode in [(3, "reflect"), (5, "wrap"), (7, "constant"), (9, "nearest"), (11, "mirror")]:
        want = ndi.generic_filter(a, np.median, size=size, mode=mode, output=np.float64)
        got = ndjit.generic_filter(a, "np.median(x)", size=size, mode=mode, output=np.float64,
                                   target="cuda")
        assert_bits_equal(got, want, f"median {dt} {size} {mode}")


@needs_gpu
@pytest.mark.parametrize("dt", ["float32", "float64", "uint8", "int16", "uint64"])
def test_box_extremes_as_passes_match_scipy(rng, dt):
    """Minima, maxima and ranges of boxes past 7x7 run as separable passes: equal to scipy running
    the callback, bit for bit, with NaN and -0.0 in the floats (their windows are patched)."""
    a = _extremes(rng, (97, 131), dt)
    if a.dtype.kind == "f":
        a.flat[rng.integers(0, a.size, 6)] = [np.nan, -0.0, np.nan, -0.0, 0.0, np.nan]
    for source in ("np.min(x)", "max(x)", "max(x) - min(x)"):
        f = ndjit.jit_filter(source)
        for size, mode, origin in [(9, "reflect", 0), ((11, 8), "wrap", (2, -1)), (15, "constant", 0)]:
            want = ndi.generic_filter(a, f, size=size, mode=mode, origin=origin, output=np.float64)
            got = ndjit.generic_filter(a, f, size=size, mode=mode, origin=origin, output=np.float64,
                                       target="cuda")
            assert_bits_equal(got, want, f"{source} {dt} {size} {mode}")
    # Strided device arrays, in and out: the passes read and write along strides.
    cupy = pytest.importorskip("cupy")
    view = cupy.asarray(a)[:, 1::2]
    out = cupy.zeros((view.shape[0], view.shape[1] * 3), dtype=np.float64)[:, ::3]
    f = ndjit.jit_filter("np.max(x)")
    want = ndi.generic_filter(a[:, 1::2], f, size=9, mode="mirror", output=np.float64)
    ndjit.generic_filter(view, f, size=9, mode="mirror", output=out, target="cuda")
    assert_bits_equal(cupy.asnumpy(out), want, f"strided {dt}")


@needs_gpu
@pytest.mark.parametrize("dt", ["float32", "float64", "uint8", "int16", "int64"])
def test_box_medians_past_the_networks_match_scipy(rng, dt):
    """Medians of boxes of more than 128 values run as the median kernel (bisection over ordered
    keys): equal to scipy running the callback, bit for bit, with NaN, infinities and both zeros
    in the floats, odd and even boxes, origins and modes."""
    a = _extremes(rng, (61, 83), dt)
    if a.dtype.kind == "f":
        a.flat[rng.integers(0, a.size, 8)] = [np.nan, -0.0, np.inf, -0.0, 0.0, -np.inf, -0.0, 0.0]
    f = ndjit.jit_filter("np.median(x)")
    for size, mode, origin in [(13, "reflect", 0), ((12, 14), "wrap", (2, -1)), (15, "constant", 0)]:
        want = ndi.generic_filter(a, f, size=size, mode=mode, origin=origin, output=np.float64)
        got = ndjit.generic_filter(a, f, size=size, mode=mode, origin=origin, output=np.float64,
                                   target="cuda")
        assert_bits_equal(got, want, f"median {dt} {size} {mode}")
    # Strided device arrays, in and out: the kernel reads and writes through the strides.
    cupy = pytest.importorskip("cupy")
    view = cupy.asarray(a)[::-1, 1::2]
    out = cupy.zeros((view.shape[0], view.shape[1] * 3), dtype=np.float64)[:, ::3]
    want = ndi.generic_filter(a[::-1, 1::2], f, size=(13, 12), mode="mirror", output=np.float64)
    ndjit.generic_filter(view, f, size=(13, 12), mode="mirror", output=out, target="cuda")
    assert_bits_equal(cupy.asnumpy(out), want, f"strided median {dt}")


@needs_gpu
@pytest.mark.parametrize("dt", ["float32", "float64", "uint8", "int16"])
def test_footprint_medians_and_quantiles_past_the_networks_match_scipy(rng, dt):
    """Medians, quantiles, np.sort(x)[k] and extremes over disks, a ring and a random mask past
    the networks run as the select kernel, counting the footprint's cells: equal to scipy running
    the callback, bit for bit, with NaN, infinities and -0.0 in the floats, modes and origins."""
    a = _extremes(rng, (57, 79), dt)
    if a.dtype.kind == "f":
        # -0.0 without +0.0: where a zero's sign shows, a window holding both would be a choice
        # between zeros, refused on both sides.
        a[a == 0] = 1.0
        a.flat[rng.integers(0, a.size, 8)] = [np.nan, -0.0, np.inf, -0.0, np.nan, -np.inf, -0.0, -0.0]
    yy, xx = np.mgrid[-7:8, -7:8]
    disk = yy**2 + xx**2 <= 49
    yy, xx = np.mgrid[-9:10, -9:10]
    ring = (yy**2 + xx**2 <= 81) & (yy**2 + xx**2 >= 9)
    holes = rng.random((13, 17)) < 0.8
    # The extremes too (past 64 values; one extreme of doubles past 200): the windows holding
    # -0.0 or NaN computed by the filter's own code.
    for source in ("np.median(x)", "np.percentile(x, 30)", "np.sort(x)[3]", "np.min(x)", "max(x) - min(x)"):
        f = ndjit.jit_filter(source)
        for footprint, mode, origin in [(disk, "reflect", 0), (ring, "wrap", (2, -1)),
                                        (holes, "constant", 0)]:
            wide_min = source == "np.min(x)" and a.dtype.itemsize == 8 and footprint.sum() <= 200
            assert ("ndjit_keys" in f.inspect_ptx(footprint=footprint, dtype=a.dtype)) != wide_min
            want = ndi.generic_filter(a, f, footprint=footprint, mode=mode, origin=origin, cval=2.0,
                                      output=np.float64)
            got = ndjit.generic_filter(a, f, footprint=footprint, mode=mode, origin=origin, cval=2.0,
                                       output=np.float64, target="cuda")
            assert_bits_equal(got, want, f"{source} {dt} {mode}")


@needs_gpu
@pytest.mark.parametrize("dt", ["uint8", "int16", "bool"])
def test_integer_extremes_over_disks_need_no_zero_sign_guard(rng, dt):
    """NumPy's min, max and ptp over disks of integer and bool images: their values are never
    -0.0 or NaN, so the guard folds away and the kernels cannot fail; equal to scipy bit for bit."""
    a = _extremes(rng, (61, 67), dt)
    yy, xx = np.mgrid[-5:6, -5:6]
    disk = yy**2 + xx**2 <= 25
    for source in ("np.min(x)", "np.max(x) - np.min(x)", "np.ptp(x)"):
        f = ndjit.jit_filter(source)
        for mode in ("reflect", "constant"):
            want = ndi.generic_filter(a, f, footprint=disk, mode=mode, cval=1, output=np.float64)
            got = ndjit.generic_filter(a, f, footprint=disk, mode=mode, cval=1, output=np.float64,
                                       target="cuda")
            assert_bits_equal(got, want, f"{source} {dt} {mode}")


@needs_gpu
@pytest.mark.parametrize("dt", ["float32", "float64", "uint16", "int32"])
def test_box_quantiles_and_kth_values_past_the_networks_match_scipy(rng, dt):
    """Quantiles and np.sort(x)[k] of boxes of more than 128 values run as the same kernel, the
    windows whose zeros or NaNs show in the result patched by the filter's own code: equal to
    scipy running the callback, bit for bit (the floats hold -0.0 and NaN, no +0.0)."""
    a = _extremes(rng, (53, 71), dt)
    if a.dtype.kind == "f":
        a[a == 0] = 1.0
        a.flat[rng.integers(0, a.size, 6)] = [np.nan, -0.0, -0.0, np.nan, -0.0, -0.0]
    for source in ("np.percentile(x, 30)", "np.quantile(x, 0.99)", "np.sort(x)[7]"):
        f = ndjit.jit_filter(source)
        for size, mode in [(13, "reflect"), ((12, 14), "nearest")]:
            want = ndi.generic_filter(a, f, size=size, mode=mode, output=np.float64)
            got = ndjit.generic_filter(a, f, size=size, mode=mode, output=np.float64, target="cuda")
            assert_bits_equal(got, want, f"{source} {dt} {size} {mode}")


@needs_gpu
@pytest.mark.parametrize("source", ["np.min(x)", "np.max(x) - np.min(x)", "np.ptp(x)", "np.sort(x)[4]",
                                    "np.percentile(x, 10)"])
def test_a_choice_between_zeros_raises_on_the_gpu_as_on_the_cpu(rng, source):
    """NumPy's choice between equal zeros (src/ir/zero_signs.rs) is refused on the GPU too: by the
    general kernel, and through the separable passes (9x9), whose windows holding -0.0 it runs."""
    image = rng.choice(np.array([0.0, 1.0, 2.0]), (40, 50))
    f = ndjit.jit_filter(source)
    for size in (3, 9):
        want = ndi.generic_filter(image, f, size=size)
        assert_bits_equal(ndjit.generic_filter(image, f, size=size, target="cuda"), want, source)
    image[10:19, 10:19] = 0.0
    image[14, 14] = -0.0
    for size in (3, 9):
        with pytest.raises(ValueError, match="both 0.0 and -0.0"):
            ndi.generic_filter(image, f, size=size)
        with pytest.raises(ValueError, match="both 0.0 and -0.0"):
            ndjit.generic_filter(image, f, size=size, target="cuda")


@needs_gpu
def test_every_scipy_dtype_in_and_out_matches_scipy(rng):
    """Every input × output dtype pair against scipy, with results that every cast must wrap,
    saturate or replace (out of range, NaN from inf - inf, fractions)."""
    f = ndjit.jit_filter(lambda x: x.max() * 1e3 - x.min() if x[0] > x[1] else (x[2] - x[3]) * 0.25)
    for dt in SCIPY_DTYPES:
        a = _extremes(rng, (13, 24), dt)
        for out in SCIPY_DTYPES:
            for mode in ("reflect", "constant"):
                want = ndi.generic_filter(a, f, size=3, mode=mode, cval=-2.5, output=out)
                got = ndjit.generic_filter(a, f, size=3, mode=mode, cval=-2.5, output=out, target="cuda")
                assert_bits_equal(got, want, f"{dt} -> {out} {mode}")


@needs_gpu
def test_cellular_automata_on_bool_and_int8_boards(rng):
    """The held-out runs that found the GPU's missing dtypes: life on bool and int8 boards, a
    label count in int16 and a counter in int64, on NumPy and CuPy arrays."""
    life = ndjit.jit_filter(lambda x: 1.0 if (x.sum() - x[4] == 3) or (x[4] == 1 and x.sum() - x[4] == 2) else 0.0)
    count = ndjit.jit_filter(lambda x: float(np.sum(x == x[len(x) // 2])))
    for func, dtype, mode in ((life, bool, "wrap"), (life, np.int8, "constant"), (count, np.int16, "nearest"),
                              (count, np.int64, "mirror")):
        a = rng.integers(0, 2 if func is life else 5, size=(40, 56)).astype(dtype)
        want = ndi.generic_filter(a, func, size=3, mode=mode)
        assert_bits_equal(ndjit.generic_filter(a, func, size=3, mode=mode, target="cuda"), want, str(dtype))
        cupy = pytest.importorskip("cupy")
        got = ndjit.generic_filter(cupy.asarray(a), func, size=3, mode=mode, target="cuda")
        assert got.dtype == want.dtype
        assert_bits_equal(cupy.asnumpy(got), want, f"cupy {dtype}")


@needs_gpu
def test_device_info():
    info = ndjit.cuda.device()
    assert info["name"] and info["compute_capability"][0] >= 5 and info["ptx_target"].startswith("sm_")


@needs_gpu
def test_numpy_output_overlapping_itself_is_written_in_scipys_order():
    """The driver tells the GPU executor the output's rows share memory: the host copy-back writes
    them in C order, so the last row's values remain, as in scipy's loop."""
    from numpy.lib.stride_tricks import as_strided
    f = ndjit.jit_filter(lambda x: x.max() - 0.5 * x[0])
    a = np.arange(48.0).reshape(6, 8) % 7

    def shared_rows():
        return as_strided(np.zeros(8), shape=(6, 8), strides=(0, 8), writeable=True)

    want, got = shared_rows(), shared_rows()
    ndi.generic_filter(a, f, size=3, output=want)
    ndjit.generic_filter(a, f, size=3, output=got, target="cuda")
    assert got.tobytes() == want.tobytes()


@needs_gpu
def test_big_endian_numpy_arrays(rng):
    """Byte-swapped NumPy input and output (scipy converts them) through the GPU path."""
    f = ndjit.jit_filter(lambda x: x.max() - x[0])
    for dtype in ("float64", "float32", "uint16", "int32"):
        swapped = np.dtype(dtype).newbyteorder(">" if np.little_endian else "<")
        a = (rng.random((13, 17)) * 200).astype(swapped)
        for output in (None, swapped):
            got = ndjit.generic_filter(a, f, size=3, output=output, target="cuda")
            want = ndi.generic_filter(a, f, size=3, output=output)
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (dtype, output)
