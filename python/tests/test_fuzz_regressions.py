"""Regressions found by the differential fuzzer (tests/fuzz/differential.py), each checked
against CPython + NumPy running the same source at test time."""
import math

import numpy as np
import pytest

import ndjit


def python_outcome(source, window):
    ns = {"np": np, "math": math}
    exec(source, ns)
    try:
        return "ok", float(ns["f"](np.array(window, dtype=np.float64)))
    except Exception as e:  # noqa: BLE001 - the class is the expectation
        return "raise", type(e)


def ndjit_outcomes(source, window):
    f = ndjit.jit_filter(source)
    out = []
    for call in (f.evaluate, f.interpret):
        try:
            out.append(("ok", float(call(window))))
        except ndjit.FilterRuntimeError as e:
            out.append(("raise", e))
    return out


# A chained comparison stops at the first false link: Python never evaluates the later operands,
# so `x[-2]` on a 1-element window, or `math.asin` of a huge value, must not raise there.
CHAINS = [
    ("def f(x):\n    return 0.5 == -2.5 >= x[-2]\n", [[np.nan], [1.0, 2.0], [3.0, -4.0, 1.0]]),
    ("def f(x):\n    return 0.5 > x[0] <= math.asin(x[1])\n", [[1.0, 9e18], [0.0, 0.5], [0.0, 2.0]]),
    ("def f(x):\n    return x[0] < x[1] < x[2] < x[3]\n", [[1.0, 0.0], [0.0, 1.0, 0.5], [0.0, 1.0, 2.0], [0.0, 1.0, 2.0, 3.0]]),
    ("def f(x):\n    return 1 if x[0] < 0.5 < np.min(x[x > 9]) else 2\n", [[1.0, 2.0], [0.0, 10.0], [0.0, 2.0]]),
]


@pytest.mark.parametrize("source,windows", CHAINS)
def test_chained_comparison_short_circuits_as_python(source, windows):
    for w in windows:
        want = python_outcome(source, w)
        for got in ndjit_outcomes(source, w):
            if want[0] == "ok":
                assert got == want, (source, w)
            else:
                assert got[0] == "raise" and isinstance(got[1], want[1]), (source, w, got, want)
