"""The package's modules import each other as a DAG: no cycle, not even through a function-local
import, and each module imports on its own, first, in a fresh interpreter."""
import ast
import json
import os
import subprocess
import sys

import ndjit

PACKAGE = os.path.dirname(ndjit.__file__)
MODULES = sorted(name[:-3] for name in os.listdir(PACKAGE) if name.endswith(".py"))


def imports_of(module: str) -> set:
    """The package's Python modules that ``module`` imports, at any depth of its code."""
    with open(os.path.join(PACKAGE, module + ".py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            # `from .x import y` imports x; `from . import x` imports x when x is a module.
            names = [node.module] if node.module else [alias.name for alias in node.names]
            found.update(n.split(".")[0] for n in names)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            absolute = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found.update(n.split(".")[1] for n in absolute if n.startswith("ndjit."))
    return found & set(MODULES)


def find_cycle(graph: dict):
    """A cycle of ``graph`` as a list of modules, or ``None``."""
    state, path = {}, []

    def visit(node):
        state[node], _ = "open", path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[node], _ = "done", path.pop()
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_import_graph_has_no_cycle():
    graph = {m: imports_of(m) for m in MODULES}
    assert graph["_driver"] >= {"_cuda", "_filter", "_scipy_args"}  # the parser sees the edges
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_find_cycle_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


# Each module imported first, with every other ndjit module forgotten in between. The compiled
# `_core` stays loaded: an extension module initialises once per interpreter.
_IMPORT_EACH_FIRST = """
import importlib, json, sys
failed = {}
for name in json.loads(sys.argv[1]):
    for loaded in [m for m in sys.modules if m == "ndjit" or (m.startswith("ndjit.") and m != "ndjit._core")]:
        del sys.modules[loaded]
    try:
        importlib.import_module("ndjit." + name)
    except Exception as e:
        failed[name] = f"{type(e).__name__}: {e}"
print(json.dumps(failed))
"""


def test_every_module_imports_first_in_a_fresh_interpreter():
    names = [m for m in MODULES if m != "__main__"]
    run = subprocess.run([sys.executable, "-c", _IMPORT_EACH_FIRST, json.dumps(names)], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {}
