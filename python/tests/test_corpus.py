"""The project's corpus of real-world-style callbacks (tests/corpus/generate.py, 112 programs),
written into a real module so that they reach ndjit exactly as users' functions do (inspect,
globals, closures). Each is checked against scipy running the plain Python function: through scipy
with ndjit's callable, and through ndjit's native driver."""
import importlib.util
import math
import os
import sys
import warnings

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit
from conftest import REPO, assert_same, python_generic_filter

GENERATOR = os.path.join(REPO, "tests", "corpus", "generate.py")
CROSS = np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], bool)


def _load_programs():
    spec = importlib.util.spec_from_file_location("ndjit_corpus_generate", GENERATOR)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.PROGRAMS


PROGRAMS = _load_programs()


@pytest.fixture(scope="module")
def corpus_module(tmp_path_factory):
    """Each program as a module-level function `p_<name>` with its bindings as module globals."""
    lines = ["import math", "import numpy as np", "import numpy", "nan = float('nan')", "inf = float('inf')"]
    for p in PROGRAMS:
        for k, v in p["bindings"].items():
            lines.append(f"{k} = np.array({v!r}, dtype=float)" if isinstance(v, list) else f"{k} = {v!r}")
        src = p["source"].rstrip("\n")
        name = f"p_{p['name']}"
        defs = [ln for ln in src.splitlines() if ln.startswith("def ")]
        if defs:  # possibly after module-level imports
            fn = defs[0].split("(", 1)[0].split()[1]
            lines += [src, f"{name} = {fn}"]
        elif src.lstrip().startswith("lambda"):
            lines.append(f"{name} = {src}")
        elif "= lambda" in src.splitlines()[0]:
            lines += [src, f"{name} = {src.split('=', 1)[0].strip()}"]
        else:
            lines.append(f"{name} = lambda x: {src}")
    path = tmp_path_factory.mktemp("corpus") / "ndjit_user_corpus.py"
    path.write_text("\n".join(lines) + "\n")
    spec = importlib.util.spec_from_file_location("ndjit_user_corpus", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["ndjit_user_corpus"] = mod
    spec.loader.exec_module(mod)
    return mod


def _footprint(p):
    n = next((s for s in p["sizes"] if s in (9, 25, 5)), 9)
    return {9: dict(size=3), 25: dict(size=5), 5: dict(footprint=CROSS)}[n]


def _seed(p):
    # Python randomises str hashes per process: each run draws another image (the failure
    # messages name the seed, to replay it).
    return abs(hash(p["name"])) % 2**32


def _image(p):
    rng = np.random.default_rng(_seed(p))
    img = rng.random((13, 12))
    if "nan" in p["kinds"]:
        img[rng.random(img.shape) < 0.15] = np.nan
    return img


def _outcome(run):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return run(), None
        except Exception as e:  # the corpus includes programs that raise on some inputs
            return None, e


@pytest.mark.parametrize("p", PROGRAMS, ids=[p["name"] for p in PROGRAMS])
def test_corpus_program_matches_scipy(p, corpus_module):
    func = getattr(corpus_module, f"p_{p['name']}")
    extra = tuple(p["bindings"][k] for k in func.__code__.co_varnames[1:func.__code__.co_argcount] if k in p["bindings"])
    extra = tuple(np.array(v, float) if isinstance(v, list) else v for v in extra)
    img, fp = _image(p), _footprint(p)
    want, want_err = _outcome(lambda: python_generic_filter(img, func, extra_arguments=extra, **fp))
    if want_err is None:  # scipy ran; did the user's function raise?
        want, want_err = want
    f = ndjit.jit_filter(func, extra_arguments=extra)
    got, got_err = _outcome(lambda: ndi.generic_filter(img, f, **fp))
    native, native_err = _outcome(lambda: ndjit.generic_filter(img, f, **fp))
    if want_err is not None:
        assert got_err is not None and native_err is not None, \
            f"scipy raised {want_err!r}, ndjit did not (image seed {_seed(p)})"
        assert isinstance(got_err, ndjit.FilterRuntimeError), got_err
        # The same kind of exception as the user's Python raised (IndexError, ZeroDivisionError ...);
        # scipy reports some of them (a huge int returned, say) as a SystemError of its own.
        if not isinstance(want_err, SystemError):
            assert isinstance(got_err, type(want_err)), (got_err, want_err)
        return
    assert got_err is None, (got_err, f"image seed {_seed(p)}")
    assert native_err is None, (native_err, f"image seed {_seed(p)}")
    assert_same(got, want)
    assert np.array_equal(native, got, equal_nan=True), "native driver differs from scipy with ndjit's callable"


def test_the_oracle_keeps_the_first_exception_of_the_users_function():
    """scipy goes on calling a Python callback after it raised; the next call, with the exception
    still set, fails in `len` with a SystemError. The oracle reports what the function raised."""
    img = np.ones((4, 4))
    img[1, 1] = np.nan
    func = lambda v: round(v[len(v) // 2])  # noqa: E731 - a user's lambda
    with pytest.raises(ValueError, match="NaN"):
        func(np.array([np.nan]))
    want, err = python_generic_filter(img, func, size=3)
    assert want is None and type(err) is ValueError and "NaN" in str(err), err
    got, got_err = _outcome(lambda: ndi.generic_filter(img, ndjit.jit_filter(func), size=3))
    assert isinstance(got_err, ValueError) and isinstance(got_err, ndjit.FilterRuntimeError), got_err
