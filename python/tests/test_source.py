"""Finding the exact source of a function: several lambdas on a line, nested, in defaults, in
calls, decorated defs; files edited after import; sources kept only by linecache."""
import ast
import importlib
import linecache
import math
import sys
import textwrap

import numpy as np
import pytest
import scipy.ndimage as ndi
from scipy import integrate

import ndjit
from ndjit import _locate

IMG = np.random.default_rng(7).normal(size=(7, 8))

# Module-level `np` is import-originated: CPython 3.11+ compiles `np.max(x)` here with LOAD_ATTR,
# and to LOAD_METHOD when the lambda is compiled alone.
lo, hi = (lambda x: np.min(x)), (lambda x: np.max(x))
scaled = [lambda x: x * 2.0, lambda x: x * 3.0, lambda x: math.exp(-x * x)]
nest = lambda a: lambda x: np.max(x) + a  # noqa: E731
with_default = lambda x, k=(lambda v: np.min(v)): k(x) + np.max(x)  # noqa: E731
folded = (lambda x: np.max(x) * (2 * 3)), (lambda x: np.max(x) * 6)


def _identity(f):
    return f


def _pair(a, b):
    return a, b


called = _pair(lambda x: np.mean(x), lambda x: np.median(x))


@_identity
@_identity
def decorated(x, k=(lambda v: np.sum(v) + 1.0)):
    return np.max(x) - k(x)


@pytest.fixture(params=["positions", "bytecode"])
def strategy(request, monkeypatch):
    """Runs a test through each way of telling lambdas apart: columns (3.11+) and compiling in place."""
    if request.param == "positions" and sys.version_info < (3, 11):
        pytest.skip("co_positions is new in 3.11")
    if request.param == "bytecode":
        monkeypatch.setattr(_locate, "_by_positions", lambda candidates, code: None)
    # Located functions are remembered: each strategy must find them afresh.
    _locate._located.cache_clear()
    return request.param


def segment(f):
    located = _locate.locate(f)
    return ast.get_source_segment(located.text, located.node)


def test_lambdas_on_one_line_each_compile_their_own(strategy):
    assert segment(lo) == "lambda x: np.min(x)" and segment(hi) == "lambda x: np.max(x)"
    for f in (lo, hi):
        np.testing.assert_array_equal(ndi.generic_filter(IMG, ndjit.jit_filter(f), size=3),
                                      ndi.generic_filter(IMG, f, size=3))


def test_integrands_in_a_list_on_one_line(strategy):
    for f in scaled:
        assert integrate.quad(ndjit.jit_integrand(f), 0.0, 2.0)[0] == integrate.quad(f, 0.0, 2.0)[0]


def test_nested_lambdas_default_arguments_and_calls(strategy):
    inner = nest(0.5)
    assert segment(inner) == "lambda x: np.max(x) + a"
    assert segment(nest) == "lambda a: lambda x: np.max(x) + a"
    assert segment(with_default.__defaults__[0]) == "lambda v: np.min(v)"
    assert segment(with_default).startswith("lambda x, k=")
    assert [segment(f) for f in called] == ["lambda x: np.mean(x)", "lambda x: np.median(x)"]
    for f in (inner, with_default.__defaults__[0]) + called:
        np.testing.assert_array_equal(ndi.generic_filter(IMG, ndjit.jit_filter(f), size=3),
                                      ndi.generic_filter(IMG, f, size=3))


def test_decorated_def_and_the_lambda_in_its_defaults(strategy):
    assert segment(decorated).startswith("def decorated(x, k=")
    assert segment(decorated.__defaults__[0]) == "lambda v: np.sum(v) + 1.0"
    f = ndjit.jit_filter(decorated.__defaults__[0])
    assert f.evaluate([3.0]) == 4.0


def test_same_bytecode_from_different_text():
    """`* (2 * 3)` and `* 6` fold to the same code: columns tell them apart; without columns that
    is an error, not a guess."""
    assert [segment(f) for f in folded] == ["lambda x: np.max(x) * (2 * 3)", "lambda x: np.max(x) * 6"]


def test_same_bytecode_without_columns_is_an_error(monkeypatch):
    monkeypatch.setattr(_locate, "_by_positions", lambda candidates, code: None)
    _locate._located.cache_clear()
    with pytest.raises(ndjit.SourceUnavailable, match="cannot tell which of the 2 lambdas on line"):
        ndjit.jit_filter(folded[1])


# --- the file changed after import -------------------------------------------------------------
MODULE = """\
import numpy as np

def f(x):
    return np.min(x) + 1.0

g = lambda x: np.min(x) + 1.0
"""


@pytest.fixture
def module(tmp_path, monkeypatch):
    """A module imported from tmp_path, and a function that rewrites its file."""
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # a same-size edit must not reuse a .pyc
    monkeypatch.syspath_prepend(str(tmp_path))
    path = tmp_path / "ndjit_edited_module.py"
    path.write_text(MODULE)
    mod = importlib.import_module("ndjit_edited_module")
    yield mod, lambda text: (path.write_text(text), linecache.checkcache(str(path)))
    sys.modules.pop("ndjit_edited_module", None)


@pytest.mark.parametrize("edit", [
    ("np.min", "np.max"),  # other names
    ("+ 1.0", "- 1.0"),  # the same names and constants, other bytecode
    ("+ 1.0", "+ 2.0"),  # other constants
    ("import numpy as np\n", "import numpy as np\n\n"),  # the same code, one line lower
])
def test_file_edited_after_import_is_an_error(module, edit):
    mod, rewrite = module
    rewrite(MODULE.replace(*edit))
    for func in (mod.f, mod.g):
        with pytest.raises(ndjit.SourceMismatch, match="does not match the running function.*Reload the module"):
            ndjit.jit_filter(func)


def test_reloaded_module_compiles_the_new_text(module):
    mod, rewrite = module
    assert ndjit.jit_filter(mod.g).evaluate([1.0, 5.0]) == 2.0  # linecache now holds this text
    rewrite(MODULE.replace("np.min", "np.max"))
    mod = importlib.reload(mod)
    for func in (mod.f, mod.g):
        assert ndjit.jit_filter(func).evaluate([1.0, 5.0]) == 6.0


def test_module_imported_from_a_zip(tmp_path, monkeypatch):
    """No file on disk: linecache asks the module's loader."""
    import zipfile
    with zipfile.ZipFile(tmp_path / "filters.zip", "w") as z:
        z.writestr("ndjit_zipped_module.py", MODULE)
    monkeypatch.syspath_prepend(str(tmp_path / "filters.zip"))
    try:
        mod = importlib.import_module("ndjit_zipped_module")
        assert ndjit.jit_filter(mod.g).evaluate([1.0, 5.0]) == 2.0
    finally:
        sys.modules.pop("ndjit_zipped_module", None)


def test_form_feed_lines_do_not_shift_defs(tmp_path, monkeypatch):
    """A form feed (PEP 8's page break) is whitespace to Python, a line break to str.splitlines."""
    (tmp_path / "ndjit_form_feed.py").write_text(
        "import numpy as np\n\x0c\ndef g(x): return np.min(x)\ndef f(x): return np.max(x)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        mod = importlib.import_module("ndjit_form_feed")
        assert ndjit.jit_filter(mod.f).evaluate([1.0, 5.0]) == mod.f(np.array([1.0, 5.0]))
    finally:
        sys.modules.pop("ndjit_form_feed", None)


# --- sources only linecache keeps ----------------------------------------------------------------
def _define(source, filename, register):
    if register:  # as IPython registers its cells
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"np": np}
    exec(compile(source, filename, "exec"), namespace)
    return namespace["f"]


@pytest.mark.parametrize("filename", ["<ipython-input-3-0123456789ab>", "/tmp/ipykernel_1/2046751390.py",
                                      "<string-ndjit-test>"])
def test_linecache_entries_are_sources(filename):
    source = textwrap.dedent("""\
        f = lambda x: np.max(x) - np.min(x)
    """)
    try:
        f = _define(source, filename, register=True)
        assert ndjit.jit_filter(f).evaluate([1.0, 4.0, 2.0]) == 3.0
    finally:
        linecache.cache.pop(filename, None)


def test_no_source_says_what_to_do():
    f = _define("f = lambda x: np.max(x)\n", "<stdin>", register=False)
    with pytest.raises(ndjit.SourceUnavailable, match="interactive prompt.*pass its source as a string") as e:
        ndjit.jit_filter(f)
    assert isinstance(e.value, TypeError) and isinstance(e.value, ndjit.FilterError)


def test_lambda_inside_an_assert_pytest_rewrote():
    """pytest compiles this file from its rewritten syntax tree; a lambda in an assert keeps its code."""
    assert ndjit.jit_filter(lambda x: np.max(x) - np.min(x)).evaluate([1.0, 4.0]) == 3.0


# --- globals and closure variables that hide what ndjit would compile -------------------------
SHADOWING = """\
import numpy as np
import numpy.ma as ma

def abs(v):
    return v * 2

def uses_abs(x):
    return abs(x[0])

def uses_method(x):
    return x.sum()

def sum(v):
    return 0.0

np_is_ma = (lambda: (lambda np: lambda x: np.max(x))(ma))()
"""

DECORATED_EARLY = """\
import ndjit

@ndjit.jit_filter
def f(x):
    return round(x[0])

def round(v):
    return v
"""


def test_global_hiding_a_builtin_or_numpy_is_an_error(tmp_path, monkeypatch):
    (tmp_path / "ndjit_shadowing.py").write_text(SHADOWING)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        mod = importlib.import_module("ndjit_shadowing")
        with pytest.raises(ndjit.FilterTypeError, match=r"`abs` here is your function abs, not Python's built-in") as e:
            ndjit.jit_filter(mod.uses_abs)
        assert (e.value.lineno, e.value.col) == (8, 12) and "return abs(x[0])" in str(e.value)
        with pytest.raises(ndjit.FilterTypeError, match="`np` here is your module numpy.ma, not the NumPy"):
            ndjit.jit_filter(mod.np_is_ma)
        x = np.array([-1.5, 2.0])  # a global `sum` does not hide the method
        assert ndjit.jit_filter(mod.uses_method).evaluate(x) == mod.uses_method(x)
    finally:
        sys.modules.pop("ndjit_shadowing", None)


def test_builtin_hidden_later_in_the_module_is_an_error(tmp_path, monkeypatch):
    """The decorator compiles `f` before the module defines its own `round`, which f will call."""
    (tmp_path / "ndjit_decorated_early.py").write_text(DECORATED_EARLY)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with pytest.raises(ndjit.FilterTypeError, match="`round` is bound at line 7 of this module") as e:
            importlib.import_module("ndjit_decorated_early")
        assert (e.value.lineno, e.value.col) == (5, 12)
    finally:
        sys.modules.pop("ndjit_decorated_early", None)


def test_a_plain_function_is_located_once_and_its_globals_read_every_call(tmp_path, monkeypatch):
    """Calls with a plain function reuse where its source lies (no walk of the module's tree per
    call), but still read the values it binds, and still notice an edited file."""
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.syspath_prepend(str(tmp_path))
    path = tmp_path / "ndjit_located_once.py"
    path.write_text("import numpy as np\nT = 1.0\n\ndef f(x):\n    return np.max(x) + T\n\n"
                    "def g(x):\n    return np.sum(x)\n")
    mod = importlib.import_module("ndjit_located_once")
    try:
        x = np.arange(9.0)
        before = _locate._located.cache_info()
        assert ndjit.jit_filter(mod.f).evaluate(x) == 9.0
        assert ndjit.jit_filter(mod.f).evaluate(x) == 9.0
        after = _locate._located.cache_info()
        # Located once: the second call finds the location, or the whole spec, kept.
        assert after.misses == before.misses + 1, (before, after)
        mod.T = 2.5  # a global the filter binds: read again at each call
        assert ndjit.jit_filter(mod.f).evaluate(x) == 10.5
        # Edited on disk after import. A function described before the edit, whose values are
        # the same objects, keeps the text it was compiled from: the running code's, which CPython
        # still runs too.
        path.write_text("import numpy as np\nT = 1.0\n\ndef f(x):\n    return np.min(x) + T\n\n"
                        "def g(x):\n    return np.prod(x)\n")
        linecache.checkcache(str(path))
        assert ndjit.jit_filter(mod.f).evaluate(x) == 10.5
        # Described afresh (a value it reads changed, or first described after the edit), it is
        # located in the new text, which is found not to be the running function.
        mod.T = 3.5
        with pytest.raises(ndjit.SourceMismatch):
            ndjit.jit_filter(mod.f)
        with pytest.raises(ndjit.SourceMismatch):
            ndjit.jit_filter(mod.g)
    finally:
        sys.modules.pop("ndjit_located_once", None)

