"""Stop 59's hunt of realistic callbacks (SAR speckle filters, terrain, seismology, robust
statistics ...): what it found, each checked here against CPython running the same function.

- An f-string's fields in a `raise`/`assert` message were left as the template and passed off as
  Python's text; elsewhere an f-string was taken as its template (`name == f"b{k}"` compared
  with the text `b{k}`). Now an f-string with fields is refused but as a message, whose text
  says that its fields are not filled in.
- A `for` loop over `enumerate(v)`, `zip(v, ...)` or `reversed(v)` of a list the body changes
  counted the items of the list as it was; Python's iterators read the list as it is. Refused.
- `functools.partial(f, k=...)` is `f` with the partial's keywords, as scipy calls it.
- `*args` with `extra_arguments` got a count of parameters instead of the located refusal.
- `math.hypot` of three values was refused as Python's arity error (Python takes any number).
"""
import functools
import textwrap

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit
from conftest import python_generic_filter

IMAGE = np.random.default_rng(59).random((6, 7))


def _function(source):
    namespace = {"np": np, "math": __import__("math")}
    exec(compile(source, "<test>", "exec"), namespace)
    return namespace["f"]


@pytest.mark.parametrize("source", [
    "def f(x):\n    c = x[4]\n    if c > 0.5:\n        raise ValueError(f\"pixel value {c} above {0.5}\")\n    return c\n",
    "def f(x):\n    assert x.min() > 0.3, f\"too low: {x.min():.1f}\"\n    return x[0]\n",
    "def f(x):\n    assert x.min() > 0.3, 'low ' f'{x[0]}'\n    return x[0]\n",
])
def test_an_f_string_message_says_its_fields_are_not_filled_in(source):
    _, error = python_generic_filter(IMAGE, _function(source), size=3)
    assert error is not None
    with pytest.raises(type(error)) as info:
        ndi.generic_filter(IMAGE, ndjit.jit_filter(source), size=3)
    text = str(info.value)
    assert "ndjit does not fill in the fields of an f-string" in text
    assert "{" in text  # the template, not a value made up for the field


def test_an_f_string_message_may_name_fields_a_and_b():
    # Run-time messages fill in `{a}` and `{b}` with values: the template's own are kept apart.
    source = "def f(x):\n    a = x[4]\n    assert a < 0.0, f\"bad {a}\"\n    return a\n"
    with pytest.raises(AssertionError, match=r"bad \{ a \}"):
        ndi.generic_filter(IMAGE, ndjit.jit_filter(source), size=3)


@pytest.mark.parametrize("source", [
    "def f(x):\n    k = int(x[4] * 3)\n    return 1.0 if f'b{k}' == 'b1' else 0.0\n",
    "def f(x):\n    name = f\"band{int(x[0])}\"\n    return len(name)\n",
    "lambda x: float(f'{x[0]}')",
])
def test_an_f_string_elsewhere_is_refused(source):
    with pytest.raises(ndjit.FilterSyntaxError, match="f-string with fields"):
        ndjit.jit_filter(source)


def test_an_f_string_without_fields_is_a_string():
    source = "def f(x):\n    if x[4] > 0.5:\n        raise ValueError(f'too bright')\n    return x[4]\n"
    with pytest.raises(ValueError, match="too bright") as info:
        ndi.generic_filter(IMAGE, ndjit.jit_filter(source), size=3)
    assert "f-string" not in str(info.value)


@pytest.mark.parametrize("loop", [
    "for i, a in enumerate(v):",
    "for a, b in zip(v, x):",
    "for a in reversed(v):",
    "for i, (a, b) in enumerate(zip(x, v)):",
])
def test_iterating_a_list_the_body_changes_is_refused(loop):
    source = f"def f(x):\n    v = list(x)\n    n = 0\n    {loop}\n        v.pop()\n        n += 1\n    return n\n"
    with pytest.raises(ndjit.FilterSyntaxError, match="changes `v` while it iterates"):
        ndjit.jit_filter(source)


def test_iterating_a_copy_of_a_list_the_body_changes_agrees():
    source = "def f(x):\n    v = list(x)\n    w = v[:]\n    n = 0\n    for i, a in enumerate(w):\n        v.pop()\n        n += 1\n    return n + len(v)\n"
    want, error = python_generic_filter(IMAGE, _function(source), size=3)
    assert error is None
    np.testing.assert_array_equal(ndi.generic_filter(IMAGE, ndjit.jit_filter(source), size=3), want)


def _scaled(x, k, m=1.0):
    return x[0] * k + m


@pytest.mark.parametrize("keywords", [{}, {"m": 5.0}, {"k": 3.0}])
def test_a_partial_with_keywords_is_its_function_with_them(keywords):
    p = functools.partial(_scaled, k=2.0)
    want = ndi.generic_filter(IMAGE, p, size=3, extra_keywords=keywords)
    np.testing.assert_array_equal(ndjit.generic_filter(IMAGE, p, size=3, extra_keywords=keywords), want)
    compiled = ndjit.jit_filter(p, extra_keywords=keywords)
    np.testing.assert_array_equal(ndi.generic_filter(IMAGE, compiled, size=3), want)


def test_a_partial_with_positional_arguments_is_refused():
    with pytest.raises(TypeError, match="before the neighbourhood"):
        ndjit.jit_filter(functools.partial(_scaled, 2.0))


def _star(x, *args):
    return x[0] + args[0]


def _star_star(x, **kw):
    return x[0]


@pytest.mark.parametrize("func, kwargs", [
    (_star, {"extra_arguments": (1.0,)}),
    (_star_star, {"extra_keywords": {"a": 1.0}}),
    ("def f(x, *args):\n    return x[0] + args[0]\n", {"extra_arguments": (1.0,)}),
    ("def f(x, **kw):\n    return x[0]\n", {"extra_keywords": {"a": 1.0}}),
])
def test_variadic_parameters_are_refused_where_they_are(func, kwargs):
    with pytest.raises(ndjit.FilterSyntaxError, match="variadic parameters") as info:
        ndjit.jit_filter(func, **kwargs)
    assert info.value.lineno is not None and info.value.offset is not None


@pytest.mark.parametrize("args", ["a, b, c", "a", ""])
def test_math_hypot_of_other_than_two_values_is_refused(args):
    source = f"def f(x):\n    a, b, c = x[0], x[1], x[2]\n    return math.hypot({args})\n"
    assert _function(source)(np.array([3.0, 4.0, 12.0])) in (13.0, 3.0, 0.0)  # Python takes them
    with pytest.raises(ndjit.FilterSyntaxError, match="math.hypot"):
        ndjit.jit_filter(textwrap.dedent(source))


def test_an_arrays_sort_as_a_value_says_to_sort_a_copy():
    # (`x.sort()` on a line of its own sorts in place since stop 64: test_sort_in_place.py.)
    with pytest.raises(ndjit.FilterSyntaxError, match="in place") as info:
        ndjit.jit_filter("def f(x):\n    y = x.sort()\n    return x[4]\n")
    assert "np.sort(x)" in str(info.value)
