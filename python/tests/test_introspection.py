"""Source, signature, IR, Cranelift IR and native disassembly are inspectable; one evaluation
through the JIT or the interpreter agrees bit for bit."""
import numpy as np

import ndjit


def test_introspection():
    f = ndjit.jit_filter("np.sqrt(np.mean((x - x[len(x) // 2]) ** 2))")
    assert f.source.startswith("np.sqrt")
    assert "sum" in f.ir and "return" in f.ir
    assert "function" in f.clif
    assert "ret" in f.disasm
    assert f.kind == "filter"
    assert "np.sqrt" in repr(f)


def test_native_code_can_wait_for_its_first_use():
    """``compile(..., native=False)`` (the CUDA path's) has the IR and the interpreter at once, and
    generates the native code at the first call that needs it; inspecting shows none before."""
    src = "np.percentile(x, 37) + np.std(x, ddof=1)"
    v = np.array([0.5, -2.0, 3.25, 1.0])
    eager = ndjit._core.compile(src, inspect=True)
    lazy = ndjit._core.compile(src, inspect=True, native=False)
    assert eager.has_native_code and not lazy.has_native_code
    assert lazy.ir == eager.ir and lazy.clif is None and lazy.disasm is None
    assert lazy.interpret(v) == eager.call(v)
    assert not lazy.has_native_code
    assert lazy.call(v) == eager.call(v)
    assert lazy.has_native_code and "function" in lazy.clif
    ctx_lazy = ndjit._core.compile(src, native=False)
    ctx_lazy.new_context()
    assert ctx_lazy.has_native_code


def test_evaluate_and_interpret_agree():
    f = ndjit.jit_filter("np.percentile(x, 37) + np.std(x, ddof=1)")
    rng = np.random.default_rng(4)
    for n in (1, 2, 9, 25):
        v = rng.normal(size=n)
        a, b = f.evaluate(v), f.interpret(v)
        assert a == b or (np.isnan(a) and np.isnan(b))


def test_text_and_reduction_specs_are_worked_out_once_without_extra_arguments():
    """Source text and `np.var` with no extra arguments describe the same way every call, so the
    spec is made once; extra arguments (bound values) and the signature still make their own."""
    from ndjit._frontend import describe

    text = "lambda x, k=2.0: x[0] * k"
    assert describe(text) is describe(text)
    assert describe(np.var) is describe(np.var)
    assert describe(text).bindings == {}
    bound = describe(text, extra_arguments=(3.0,))
    assert bound.bindings == {"k": 3.0} and describe(text, extra_arguments=(4.0,)).bindings == {"k": 4.0}
    assert describe(np.var, extra_keywords={"ddof": 1}).bindings == {"ddof": 1}
    assert describe(np.var).bindings == {}
    line = "def f(i, o):\n    o[:] = i"
    assert describe(line, signature="filter1d").signature == "filter1d"
    assert describe(line).signature == "filter"
    # The results are the filters' own.
    img = np.arange(25.0).reshape(5, 5)
    from scipy import ndimage as ndi

    assert ndjit.generic_filter(img, text, size=3)[2, 2] == ndi.generic_filter(img, lambda x, k=2.0: x[0] * k, size=3)[2, 2]
