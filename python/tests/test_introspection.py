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


def test_evaluate_and_interpret_agree():
    f = ndjit.jit_filter("np.percentile(x, 37) + np.std(x, ddof=1)")
    rng = np.random.default_rng(4)
    for n in (1, 2, 9, 25):
        v = rng.normal(size=n)
        a, b = f.evaluate(v), f.interpret(v)
        assert a == b or (np.isnan(a) and np.isnan(b))
