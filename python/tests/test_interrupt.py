"""Ctrl-C stops a runaway filter (`while True: pass`, `range(10**12)`) with KeyboardInterrupt, on
scipy's path (scipy's loop calls the compiled callback with the GIL held) and in ndjit's native
driver (GIL released, helper threads). Each case runs in a child process that gets SIGINT half a
second into the run; a regression shows as a child killed at the time limit."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

pytestmark = pytest.mark.skipif(os.name != "posix", reason="sends SIGINT")

CHILD = textwrap.dedent("""
    import sys, time
    import numpy as np, scipy.ndimage as ndi, ndjit
    path, body = sys.argv[1], sys.argv[2]
    f = ndjit.jit_filter("def f(x):\\n    s = 0.0\\n" + body + "\\n    return s\\n")
    img = np.arange(400.0).reshape(20, 20)
    print("ready", flush=True)
    if len(sys.argv) > 3:  # a handler of the user's own, whose exception must come through
        import signal
        def stop(signum, frame):
            raise RuntimeError("stopped by the handler")
        signal.signal(signal.SIGINT, stop)
    t = time.perf_counter()
    try:
        if path == "scipy":
            ndi.generic_filter(img, f, size=3)
        else:
            ndjit.generic_filter(img, f, size=3, workers=2)
    except KeyboardInterrupt:
        print(f"KeyboardInterrupt {time.perf_counter() - t:.2f}", flush=True)
    except RuntimeError as e:
        print(f"RuntimeError {time.perf_counter() - t:.2f} {e}", flush=True)
    # The filter works again after the interrupt.
    print(ndjit.generic_filter(np.ones((3, 3)), "np.sum(x)", size=3)[1, 1], flush=True)
""")

RUNAWAY = {
    "while": "    while True:\n        s += x[0]",
    "range": "    for i in range(10**12):\n        s += x[0]",
}


def _interrupted(path, body, *extra):
    """The child's output after SIGINT: the exception line, then the later filter's result."""
    child = subprocess.Popen([sys.executable, "-c", CHILD, path, RUNAWAY[body], *extra],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        time.sleep(0.5)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        pytest.fail(f"{path}/{body}: SIGINT did not stop the filter")
    assert child.returncode == 0, err
    lines = out.split("\n")
    assert float(lines[0].split()[1]) < 10.0, out
    assert lines[1] == "9.0", out
    return lines[0]


@pytest.mark.parametrize("body", sorted(RUNAWAY))
@pytest.mark.parametrize("path", ["scipy", "driver"])
def test_sigint_stops_a_runaway_filter(path, body):
    assert _interrupted(path, body).startswith("KeyboardInterrupt ")


@pytest.mark.parametrize("path", ["scipy", "driver"])
def test_the_exception_of_a_users_signal_handler_comes_through(path):
    line = _interrupted(path, "while", "own-handler")
    assert line.startswith("RuntimeError ") and line.endswith("stopped by the handler"), line
