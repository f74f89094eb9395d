"""Number literals: ndjit's lexer against CPython's on generated literal texts.

A literal CPython rejects (``1__0``, ``007``, ``0x_``, ``0b12``) is a malformed source, and ndjit
must refuse it with a syntax error at its position; one CPython accepts must lex to the same
value, or be refused only as an integer past 64 bits.
"""
import random

import numpy as np
import pytest

import ndjit

# Characters a number token can hold, so that most texts stay one token either way.
ALPHABET = "0123456789_.eExobXOBaf"


def literals(count, seed):
    rng = random.Random(seed)
    out = set()
    while len(out) < count:
        text = rng.choice("0123456789.") + "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 5)))
        # A sign only right after an exponent's e, where CPython reads it as part of the number.
        if "e" in text and rng.random() < 0.3:
            i = text.index("e") + 1
            text = text[:i] + rng.choice("+-") + text[i:]
        out.add(text)
    return sorted(out)


def cpython(text):
    """The literal's value; None where CPython's compiler rejects the text; SKIP where it reads
    it as something else than one number (``1.O`` is an attribute of ``1.``, ``0b1x1`` a
    number beside a name in 3.11, which only warns)."""
    try:
        code = compile(f"({text})", "<literal>", "eval")
    except SyntaxError:
        return None
    try:
        value = eval(code)
    except (AttributeError, NameError):
        return SKIP
    return value if type(value) in (int, float) else SKIP


SKIP = object()


def ndjit_value(text):
    """ndjit's value of the literal as a filter's result, or the error it refuses with."""
    try:
        return ndjit.jit_filter(f"({text}) + 0 * x[0]").evaluate(np.array([1.0]))
    except (ndjit.FilterSyntaxError, ndjit.FilterTypeError) as e:
        return e


@pytest.mark.parametrize("seed", range(4))
def test_number_literals_are_cpython_s_or_refused_as_cpython_refuses_them(seed):
    texts = literals(600, seed)
    wrong, accepted, rejected = [], 0, 0
    for text in texts:
        want, got = cpython(text), ndjit_value(text)
        if want is None:
            rejected += 1
            if not isinstance(got, ndjit.FilterSyntaxError):
                wrong.append(f"{text!r}: CPython rejects it, ndjit gives {got!r}")
            elif "<filter>:1:" not in str(got):
                wrong.append(f"{text!r}: refused without a position: {got}")
        elif want is not SKIP:
            accepted += 1
            if isinstance(got, Exception):
                if not (isinstance(want, int) and abs(want) >= 2**63 and "64 bits" in str(got)):
                    wrong.append(f"{text!r}: CPython {want!r}, ndjit refuses: {got}")
            elif got != float(want):
                wrong.append(f"{text!r}: CPython {want!r}, ndjit {got!r}")
    assert not wrong, "\n".join(wrong[:20])
    # The generator reaches both kinds, many of each.
    assert accepted > 100 and rejected > 100, (accepted, rejected)


@pytest.mark.parametrize("text, message", [
    ("1__0", "invalid decimal literal"),
    ("007", "leading zeros in decimal integer literals are not permitted"),
    ("0x_", "invalid hexadecimal literal"),
    ("0b12", "invalid digit '2' in binary literal"),
    ("1_e5", "invalid decimal literal"),
])
def test_a_malformed_literal_gets_cpython_s_message_at_its_position(text, message):
    with pytest.raises(ndjit.FilterSyntaxError, match=message) as e:
        ndjit.jit_filter(f"x[0] + {text}")
    assert "1:8" in str(e.value)
