"""Callbacks need no GIL and are reentrant: several Python threads share one Filter, and the native
driver runs on many threads."""
import os
import select
import signal
import sys
import threading
import warnings

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit


def run_in_threads(work, n):
    """Runs work(0), ..., work(n - 1) on n Python threads at once, and waits for them."""
    threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_python_threads_share_a_filter():
    f = ndjit.jit_filter("np.median(x[np.isfinite(x)]) if np.isfinite(x).any() else np.nan")
    imgs = [np.random.default_rng(i).random((40, 40)) for i in range(8)]
    for im in imgs:
        im[::7, ::5] = np.nan
    expect = [ndi.generic_filter(im, f, size=3) for im in imgs]
    results = [None] * len(imgs)

    def work(i):
        for _ in range(3):
            results[i] = ndi.generic_filter(imgs[i], f, size=3)

    run_in_threads(work, len(imgs))
    for r, e in zip(results, expect):
        assert np.array_equal(r, e, equal_nan=True)


def test_native_driver_threads_agree():
    img = np.random.default_rng(5).random((200, 150))
    one = ndjit.generic_filter(img, "np.percentile(x, 30)", size=5, workers=1)
    many = ndjit.generic_filter(img, "np.percentile(x, 30)", size=5, workers=4)
    assert np.array_equal(one, many)


def test_native_driver_releases_the_gil():
    img = np.random.default_rng(6).random((600, 600))
    f = ndjit.jit_filter("np.median(x)")
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(1)
            stop.wait(0.001)

    t = threading.Thread(target=ticker)
    t.start()
    ndjit.generic_filter(img, f, size=7, workers=1)
    stop.set()
    t.join()
    assert len(ticks) > 5, "another Python thread ran while the filter did"


def test_native_driver_runs_from_many_python_threads_at_once():
    # Each run takes its own helper threads (or runs with fewer); none waits for another.
    imgs = [np.random.default_rng(10 + i).random((300, 200)) for i in range(6)]
    expect = [ndjit.generic_filter(im, "max(x) - min(x)", size=5, workers=1) for im in imgs]
    results = [None] * len(imgs)

    def work(i):
        for _ in range(3):
            results[i] = ndjit.generic_filter(imgs[i], "max(x) - min(x)", size=5, workers=3)

    run_in_threads(work, len(imgs))
    for r, e in zip(results, expect):
        assert np.array_equal(r, e)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_native_driver_works_in_a_forked_child():
    # The child has none of the parent's helper threads: it must start its own, not wait on them.
    img = np.random.default_rng(7).random((400, 300))
    expect = ndjit.generic_filter(img, "np.mean(x)", size=3, workers=2)
    r, w = os.pipe()
    with warnings.catch_warnings():  # Python >= 3.12 warns about forking a threaded process
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: report through the exit status, never return into pytest
        os.close(r)
        code = 1
        try:
            got = ndjit.generic_filter(img, "np.mean(x)", size=3, workers=2)
            code = 0 if np.array_equal(got, expect) else 2
        finally:
            os.write(w, bytes([code]))
            os._exit(code)
    os.close(w)
    ready, _, _ = select.select([r], [], [], 60)
    if not ready:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pytest.fail("the forked child hung")
    assert os.read(r, 1) == b"\x00", "the forked child's result differs from the parent's"
    os.waitpid(pid, 0)
    os.close(r)


def test_compile_cache_under_threads(monkeypatch):
    """Threads hitting and evicting the compile cache (more sources than it holds) at once: every
    lookup returns the filter compiled for its own source, and nothing raises."""
    from ndjit import _filter
    from ndjit._frontend import describe

    # The cache, not the compiler, is under test: a stub "compiles" a source to itself.
    monkeypatch.setattr(_filter._core, "compile", lambda source, *rest: ("compiled", source))
    monkeypatch.setattr(_filter, "_cache", _filter.OrderedDict())
    # More sources than the cache holds, as with 257+ sources and the real size, but with a hit
    # often on the entry the next miss evicts, so that the race shows within a second.
    monkeypatch.setattr(_filter, "_CACHE_SIZE", 3)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    specs = [describe(f"x[0] + {i}") for i in range(5)]
    failures = []

    def work(seed):
        rng = np.random.default_rng(seed)
        try:
            for i in rng.integers(0, len(specs), 20000):
                assert _filter._compile(specs[i]) == ("compiled", specs[i].source)
        except Exception as e:  # noqa: BLE001 - reported below, with its type
            failures.append(e)

    try:
        run_in_threads(work, 8)
    finally:
        sys.setswitchinterval(interval)
    assert not failures, repr(failures[0])
    assert len(_filter._cache) <= _filter._CACHE_SIZE
