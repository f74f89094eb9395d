"""Callbacks need no GIL and are reentrant: several Python threads share one Filter, and the native
driver runs on many threads."""
import threading

import numpy as np
import scipy.ndimage as ndi

import ndjit


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

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(imgs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
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
