"""The GPU backend through the PTX emulator: a client of gpu/examples/fuzz_emulate.rs (one
process, kept running, one request line and one answer line per image)."""
from __future__ import annotations

import builtins
import statistics
import subprocess
from typing import Any, Tuple

import numpy as np

# The library exceptions ndjit raises by name (its typed exceptions), as the builtin classes they
# subclass, which the oracle compares (oracle.builtin_class).
_LIBRARY = {"StatisticsError": statistics.StatisticsError.__base__, "AxisError": ValueError}


class Emulator:
    def __init__(self, path: str):
        self.path = path
        self.proc = None

    def _server(self) -> subprocess.Popen:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen([self.path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                         bufsize=1)
        return self.proc

    def run(self, source: str, image: np.ndarray, mode: str) -> Tuple[str, Any]:
        """("ok", image), ("raise", builtin class, message), ("unsupported", why) or ("crash", what)."""
        bits = ",".join(format(int(b), "x") for b in image.astype(np.float64).ravel().view(np.uint64))
        request = f"{mode} {image.shape[0]} {image.shape[1]} {bits} {source.encode().hex()}\n"
        proc = self._server()
        try:
            proc.stdin.write(request)
            proc.stdin.flush()
            answer = proc.stdout.readline().rstrip("\n")
        except BrokenPipeError:
            answer = ""
        if not answer:
            self.proc = None
            return "crash", f"the emulator process died (exit status {proc.wait()})"
        what, _, rest = answer.partition(" ")
        if what == "ok":
            out = np.array([int(b, 16) for b in rest.split(",")], dtype=np.uint64).view(np.float64)
            return "ok", out.reshape(image.shape)
        if what == "raise":
            name, _, message = rest.partition(" ")
            return "raise", _LIBRARY.get(name) or getattr(builtins, name, RuntimeError), message
        if what in ("unsupported", "gpu-only"):
            return "unsupported", f"{what}: {rest}"
        return "crash", answer
