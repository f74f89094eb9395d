"""Products NumPy adds in an order ndjit does not model are refused, never approximated.

* `np.dot` of a view whose elements lie more than one apart (`x[::2]`, a column `m[:, j]`, a
  row of `m.T`) goes to OpenBLAS's strided loop; `@` adds any non-contiguous vector (`x[::-1]`
  too) in a loop of its own. ndjit reproduces the contiguous kernel only
  (`src/lower/strided_dots.rs`), so such a view is refused where it is made, naming `.copy()`.
* Products with a 2-D float operand go to BLAS's gemm or gemv (`src/lower/numpy/linalg.rs`).

Each refusal is shown to be needed: NumPy's result differs from that of the contiguous copy ndjit
would add on some of the windows below. Each suggested rewrite runs bit for bit as NumPy."""
import numpy as np
import pytest
from scipy import ndimage as ndi

import ndjit
from ndjit import _core

KNOWN = _core.dot_order() != "unknown"
ORDER_REFUSAL = "order ndjit does not know"


def windows(n=25, count=300, seed=5):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(n) for _ in range(count)]


def body(expr):
    return f"def f(x):\n    m = x.reshape(5, 5)\n    return {expr}\n"


def python(src, **bound):
    ns = {"np": np, **bound}
    exec(src, ns)
    return ns["f"]


def bits(v):
    return np.float64(v).view(np.uint64)


# Each refused product, and the same product of contiguous copies (what ndjit would add).
REFUSED_VIEWS = [
    ("np.dot(x[::2], x[:13])", "np.dot(x[::2].copy(), x[:13])"),
    ("x[::2] @ x[:13]", "x[::2].copy() @ x[:13]"),
    ("np.dot(m[:, 1], m[:, 2])", "np.dot(m[:, 1].copy(), m[:, 2].copy())"),
    ("np.dot(m.T[0], x[:5])", "np.dot(m.T.copy()[0], x[:5])"),
    ("x[::-1] @ x", "x[::-1].copy() @ x"),
    ("np.flip(x) @ x", "np.flip(x).copy() @ x"),
    # A backwards slice of a backwards view steps forwards; so does a one-column block
    # reshaped (by rows); np.asarray is the view itself.
    ("np.dot(x[::-1][::-2], x[:13])", "np.dot(x[::-1][::-2].copy(), x[:13])"),
    ("np.dot(m[::-1][::-1, 0], x[:5])", "np.dot(m[::-1][::-1, 0].copy(), x[:5])"),
    ("np.dot(m[:, 2:3].reshape(5), x[:5])", "np.dot(m[:, 2:3].reshape(5).copy(), x[:5])"),
    ("np.dot(np.asarray(x[::2]), x[:13])", "np.dot(x[::2].copy(), x[:13])"),
    # Rows stepping forwards in a block whose rows run backwards; one backwards column.
    ("np.dot(x.reshape(1, 25)[::-1, ::2][0], x[:13])", "np.dot(x.reshape(1, 25)[::-1, ::2][0].copy(), x[:13])"),
    ("np.dot(m[:, 2:1:-1].reshape(5), x[:5])", "np.dot(m[:, 2:1:-1].reshape(5).copy(), x[:5])"),
]


@pytest.mark.parametrize("refused,copied", REFUSED_VIEWS)
def test_strided_views_reaching_a_product_are_refused_and_the_copy_is_exact(refused, copied):
    with pytest.raises(ndjit.FilterSyntaxError, match="strided view") as e:
        ndjit.jit_filter(body(refused))
    assert ".copy()" in str(e.value) and "^" in str(e.value)
    numpy_refused, numpy_copied = python(body(refused)), python(body(copied))
    # The refusal is needed: NumPy adds the view otherwise than its contiguous copy.
    assert sum(bits(numpy_refused(w)) != bits(numpy_copied(w)) for w in windows()) > 10
    numpys_bits(copied)


# Views NumPy adds as their contiguous copy: `np.dot` copies a reversed view first, and the norm
# ravels its argument.
EXACT_VIEWS = [
    "np.dot(x[::-1], x) + np.dot(x[::-1][1:], x[:24])",
    "np.dot(np.array(x[::2]), x[:13]) + np.dot(m[1:4, :][2], x[:5]) + np.dot(m[:, 1:4][2], x[:3])",
    "np.dot(np.flip(x), x)",
    "np.dot(x[20:2:-2], x[:9])",
    "np.dot(m[1], m[2]) + np.dot(m[3, :], x[:5])",
    "np.dot(x[::2] * 2.0, x[:13])",
    "np.linalg.norm(x[::2]) + np.linalg.norm(x[::-1]) + np.linalg.norm(m[:, 1:])",
]


def numpys_bits(expr):
    """The filter of `expr` and its Python function, after checking that the filter gives
    NumPy's bits on every window; None where NumPy's BLAS order is unknown (then refused)."""
    if not KNOWN:
        with pytest.raises(ndjit.FilterSyntaxError, match=ORDER_REFUSAL):
            ndjit.jit_filter(body(expr))
        return None
    f, py = ndjit.jit_filter(body(expr)), python(body(expr))
    for w in windows():
        assert bits(f.evaluate(w)) == bits(py(w)), (expr, w)
    return f, py


@pytest.mark.parametrize("expr", EXACT_VIEWS)
def test_views_numpy_adds_contiguously_compile_bit_for_bit(expr):
    numpys_bits(expr)


KERNEL = np.arange(1.0, 26.0).reshape(5, 5) / 7.0


def bound_dot(w):
    return float(np.dot(w[:5], COLUMN))


def bound_matmul(w):
    return float(w[:5] @ REVERSED)


def bound_resliced(w):
    return float(np.dot(LONG_REVERSED[::-2], w[:13]))


def bound_block(w):
    return float(np.dot(w[:5], BLOCK.reshape(5)))


COLUMN = KERNEL[:, 1]  # strided: elements 5 apart
REVERSED = KERNEL[0, ::-1]
LONG_REVERSED = np.random.default_rng(2).standard_normal(30)[25::-1]
BLOCK = KERNEL[:, 1:2]  # one column: its reshape(5) steps by rows
ROWS_REVERSED = KERNEL[::-1]  # a backwards column of it steps forwards


def bound_rows_reversed(w):
    return float(np.dot(ROWS_REVERSED[::-1, 0], w[:5]))


@pytest.mark.parametrize("func,name,contiguous", [
    (bound_dot, "COLUMN", np.ascontiguousarray(COLUMN)),
    (bound_matmul, "REVERSED", np.ascontiguousarray(REVERSED)),
    (bound_resliced, "LONG_REVERSED", np.ascontiguousarray(LONG_REVERSED)),
    (bound_block, "BLOCK", np.ascontiguousarray(BLOCK)),
    (bound_rows_reversed, "ROWS_REVERSED", np.ascontiguousarray(ROWS_REVERSED)),
])
def test_bound_strided_arrays_reaching_a_product_are_refused(func, name, contiguous):
    with pytest.raises(ndjit.FilterSyntaxError, match="rows are strided") as e:
        ndjit.jit_filter(func)
    assert f"np.ascontiguousarray({name})" in str(e.value)
    if not KNOWN:
        return
    # Bound contiguous, the same function compiles, and NumPy's bits come out.
    rebound = func.__globals__.copy()
    rebound[name] = contiguous
    g = type(func)(func.__code__, rebound)
    f = ndjit.jit_filter(g)
    for w in windows():
        assert bits(f.evaluate(w)) == bits(g(w))
    # Binding the strided array again compiles anew, and refuses.
    with pytest.raises(ndjit.FilterSyntaxError, match="rows are strided"):
        f.bind(**{name: func.__globals__[name]})


def test_a_reversed_bound_array_in_np_dot_is_numpys():
    if not KNOWN:
        return

    def f(w):
        return float(np.dot(w[:5], REVERSED))

    g = ndjit.jit_filter(f)
    for w in windows():
        assert bits(g.evaluate(w)) == bits(f(w))


@pytest.mark.parametrize("kernel", [KERNEL, KERNEL[:, ::-1], KERNEL[1:, ::-2]], ids=["C", "reversed", "reversed-strided"])
def test_the_transpose_of_a_bound_array_reaching_a_product_is_refused(kernel):
    # `k.T[0]` is a column of `k`: strided whatever the bound array's own layout.
    src = "def f(x, k):\n    return np.dot(k.T[0], x[:5])\n"
    with pytest.raises(ndjit.FilterSyntaxError, match="strided"):
        ndjit.jit_filter(src, extra_arguments=(kernel,))


def test_rows_of_a_bound_fortran_array_reaching_a_product_are_refused():
    kernel = np.asfortranarray(KERNEL)
    src = "def f(x, k):\n    return np.dot(k[1], x[:5])\n"
    with pytest.raises(ndjit.FilterSyntaxError, match="rows are strided"):
        ndjit.jit_filter(src, extra_arguments=(kernel,))
    if KNOWN:
        f = ndjit.jit_filter(src, extra_arguments=(KERNEL,))
        want = python(src)
        for w in windows():
            assert bits(f.evaluate(w)) == bits(want(w, KERNEL))


MATRIX_PRODUCTS = ["(m @ x[:5])[0]", "np.dot(m, x[:5])[1]", "(x[:5] @ m)[2]", "(m @ m)[1, 2]",
                   "np.dot(x[:5], m)[3]", "np.dot(m, m)[0, 0]"]


@pytest.mark.parametrize("expr", MATRIX_PRODUCTS)
def test_products_of_float_matrices_are_refused(expr):
    with pytest.raises(ndjit.FilterSyntaxError, match="product of float matrices") as e:
        ndjit.jit_filter(body(expr))
    assert "np.sum(m * v, axis=1)" in str(e.value)


def test_matrix_products_differ_from_pairwise_sums_in_numpy():
    # Why they are refused: NumPy's gemm/gemv against the pairwise sums ndjit once computed.
    rng = np.random.default_rng(3)
    off = 0
    for _ in range(200):
        m, v = rng.standard_normal((5, 5)), rng.standard_normal(5)
        off += int((bits(m @ v) != bits(np.sum(m * v, axis=1))).sum())
    assert off > 50


def test_the_suggested_sums_and_integer_products_are_numpys():
    compiled = numpys_bits(
        "np.sum(m * x[:5], axis=1)[1] + (m.astype(np.int64) @ np.arange(5))[2] + np.dot(m[1], x[:5])")
    if compiled is None:
        return
    f, py = compiled
    img = np.random.default_rng(9).standard_normal((20, 24))
    got = ndi.generic_filter(img, f, size=5)
    want = ndi.generic_filter(img, py, size=5)
    np.testing.assert_array_equal(got.view(np.uint64), want.view(np.uint64))


def test_the_norm_of_a_transposed_array_is_refused_however_it_is_named():
    # NumPy's norm ravels in memory order: m.T's elements in m's order, not m.T's (a sum of
    # squares in another order). `np.linalg.norm` and a `numpy.linalg` alias are one function.
    src = "import numpy.linalg as la\ndef f(x):\n    m = x.reshape(7, 7)\n    return la.norm(m.T)\n"
    with pytest.raises(ndjit.FilterSyntaxError, match="memory order"):
        ndjit.jit_filter(src)
    off = sum(bits(np.linalg.norm(w.reshape(7, 7).T)) != bits(np.sqrt(np.dot(w.reshape(7, 7).T.ravel(),
                                                                            w.reshape(7, 7).T.ravel())))
              for w in windows(49))
    assert off > 10
