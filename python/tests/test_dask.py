"""ndjit on Dask arrays, a process cluster and Zarr stores, against scipy over the whole array.

The oracle is ``scipy.ndimage.generic_filter`` on the whole NumPy array: with the user's Python
function on small arrays, and with ``ndjit.jit_filter`` (scipy's own driver, boundary handling and
buffer, calling ndjit's compiled callback) where a Python callback per pixel would be too slow.
"""
import os
import signal
import sys
import time

import numpy as np
import pytest
import scipy.ndimage as ndi

import ndjit

da = pytest.importorskip("dask.array", reason='dask is not installed: pip install "./python[dask]" to run these')
from ndjit import _halo  # noqa: E402

MODES = ["reflect", "constant", "nearest", "mirror", "wrap", "grid-mirror", "grid-constant", "grid-wrap"]


def asym(x):
    """Not symmetric in the window, so a flipped or shifted halo shows."""
    return x[0] - 2.0 * x[-1] + x.max()


def assert_same(got, want):
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want, strict=True)
    assert got.tobytes() == want.tobytes()  # bit for bit, signed zeros and NaN payloads included


@pytest.mark.parametrize("mode", MODES)
def test_index_mapping_is_scipys(mode):
    # Which index each footprint element reads, seen through scipy itself on arange(n).
    for n in range(1, 6):
        a = np.arange(n, dtype=float)
        for size in sorted({1, 2, 3, 5, 2 * n + 1, 3 * n + 2}):
            for origin in {-(size // 2), 0, (size - 1) - size // 2}:
                before, _ = _halo.reach(size, origin)
                for j in range(size):
                    want = ndi.generic_filter(a, lambda v: v[j], size=size, mode=mode, cval=-1.0, origin=origin)
                    got = _halo.map_indices(mode, np.arange(n) + j - before, n)
                    np.testing.assert_array_equal(got.astype(float), want, err_msg=f"n={n} size={size} j={j}")


CHUNKINGS = {
    "one chunk": (11, 13),
    "1 pixel": (1, 1),
    "2-3 pixels": ((3, 2, 3, 3), (2, 3, 2, 3, 3)),
    "irregular": ((5, 1, 4, 1), (7, 1, 2, 3)),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("chunks", list(CHUNKINGS.values()), ids=list(CHUNKINGS))
def test_every_mode_and_chunking_equals_scipy(mode, chunks):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((11, 13))
    got = ndjit.generic_filter(da.from_array(a, chunks=chunks), asym, size=(3, 5), mode=mode, cval=0.25,
                               origin=(0, 1))
    assert isinstance(got, da.Array) and got.chunks == da.from_array(a, chunks=chunks).chunks
    want = ndi.generic_filter(a, asym, size=(3, 5), mode=mode, cval=0.25, origin=(0, 1))
    assert_same(got.compute(scheduler="sync"), want)


@pytest.mark.parametrize("mode", ["reflect", "mirror", "wrap", "nearest", "constant"])
def test_footprint_longer_than_the_array(mode):
    # The reach spans the whole axis several times: every index comes through the mode's period.
    a = np.arange(1.0, 9.0).reshape(2, 4)
    for chunks in [(1, 1), (2, 3)]:
        got = ndjit.generic_filter(da.from_array(a, chunks=chunks), asym, size=(5, 9), mode=mode, cval=-3.0)
        assert_same(got.compute(scheduler="sync"), ndi.generic_filter(a, asym, size=(5, 9), mode=mode, cval=-3.0))


@pytest.mark.parametrize("dtype,output", [("uint8", None), ("uint8", np.float32), ("int16", "float64"),
                                          ("float32", None), (">f8", None), ("uint16", np.int8)])
def test_dtypes_and_output_dtypes(dtype, output):
    rng = np.random.default_rng(2)
    a = (rng.standard_normal((9, 10)) * 40 + 100).astype(dtype)
    f = lambda x: x.mean() + 0.3  # noqa: E731  (fractions: rounding by the output dtype shows)
    for mode in ["constant", "wrap"]:
        got = ndjit.generic_filter(da.from_array(a, chunks=(2, 3)), f, size=3, output=output, mode=mode, cval=0.5)
        assert_same(got.compute(scheduler="sync"), ndi.generic_filter(a, f, size=3, output=output, mode=mode, cval=0.5))


def test_footprint_origin_axes_in_3d():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((5, 6, 7)).astype(np.float32)
    fp = np.array([[1, 0, 1], [0, 1, 1]], dtype=bool)
    kw = dict(footprint=fp, origin=(0, -1), axes=(2, 0), mode="mirror")
    got = ndjit.dask.generic_filter(da.from_array(a, chunks=(2, 3, 1)), asym, **kw)
    assert_same(got.compute(scheduler="sync"), ndi.generic_filter(a, asym, **kw))


def test_empty_chunks_empty_and_0d_arrays():
    a = np.arange(35.0).reshape(7, 5)
    got = ndjit.generic_filter(da.from_array(a, chunks=((3, 0, 4), (5,))), asym, size=3, mode="wrap")
    assert_same(got.compute(scheduler="sync"), ndi.generic_filter(a, asym, size=3, mode="wrap"))
    for b, size in [(np.zeros((0, 5)), 3), (np.array(3.5), 1)]:
        got = ndjit.generic_filter(da.from_array(b), "max(x)", size=size, output=np.float32)
        assert_same(got.compute(scheduler="sync"), ndi.generic_filter(b, max, size=size, output=np.float32))


def test_bound_values_and_a_compiled_filter():
    a = np.random.default_rng(4).standard_normal((10, 10))
    f = ndjit.jit_filter(lambda x, w: (x * w).sum(), extra_arguments=(np.linspace(0.1, 0.9, 9),))
    got = ndjit.generic_filter(da.from_array(a, chunks=3), f, size=3, mode="wrap")
    assert_same(got.compute(scheduler="sync"), ndi.generic_filter(a, f, size=3, mode="wrap"))
    g = lambda x, k, s=1.0: k * x.min() + s  # noqa: E731
    got = ndjit.generic_filter(da.from_array(a, chunks=4), g, size=3, extra_arguments=(2.0,),
                               extra_keywords={"s": -1.5})
    want = ndi.generic_filter(a, g, size=3, extra_arguments=(2.0,), extra_keywords={"s": -1.5})
    assert_same(got.compute(scheduler="sync"), want)


def test_a_chunk_reads_slabs_not_whole_neighbours():
    y = ndjit.generic_filter(da.zeros((64, 64), chunks=16), "max(x)", size=3)
    deps = y.__dask_graph__().get_all_dependencies()
    assert max(len(deps[key]) for row in y.__dask_keys__() for key in row) == 9  # its chunk and 8 slabs
    # Along an axis an inner chunk reads one row of each neighbour, an edge chunk reflects its own.
    assert [g.slabs for g in _halo.axis_gathers((16,) * 4, 3, 0, "reflect")] == [
        ((0, 0, 17 - 1), (1, 0, 1)), ((0, 15, 16), (1, 0, 16), (2, 0, 1)),
        ((1, 15, 16), (2, 0, 16), (3, 0, 1)), ((2, 15, 16), (3, 0, 16))]


def test_errors_come_at_graph_time():
    x = da.zeros((8, 8), chunks=4)
    with pytest.raises(ndjit.FilterCompileError):
        ndjit.generic_filter(x, "max(x", size=3)
    with pytest.raises(TypeError, match="pass output as a dtype"):
        ndjit.generic_filter(x, "max(x)", size=3, output=np.zeros((8, 8)))
    with pytest.raises(TypeError, match="Complex type not supported"):
        ndjit.generic_filter(x.astype(complex), "max(x)", size=3)
    with pytest.raises(ValueError, match="workers must be at least 1"):
        ndjit.generic_filter(x, "max(x)", size=3, workers=0)
    with pytest.raises(RuntimeError, match="boundary mode not supported"):
        ndjit.generic_filter(x, "max(x)", size=3, mode="wrapped")
    with pytest.raises(ValueError, match="invalid origin"):
        ndjit.generic_filter(x, "max(x)", size=3, origin=2)
    with pytest.raises(TypeError, match="target applies"):
        ndjit.generic_filter(x, "max(x)", size=3, target="cuda")


def test_without_the_extra_the_error_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "dask", None)  # import dask.array now raises ImportError
    monkeypatch.setitem(sys.modules, "dask.array", None)
    assert ndjit.generic_filter(np.arange(5.0), "max(x)", size=3).tolist() == [1.0, 2.0, 3.0, 4.0, 4.0]
    with pytest.raises(ImportError, match=r'pip install "\./python\[dask\]"'):
        ndjit.dask.generic_filter(np.arange(5.0), "max(x)", size=3)


def test_task_threads_outside_a_cluster_is_one():
    assert ndjit.dask._task_threads() == 1


@pytest.mark.parametrize("nthreads,running,want", [(4, 1, 4), (4, 2, 2), (4, 3, 1), (4, 4, 1), (1, 1, 1)])
def test_task_threads_share_the_workers_threads(monkeypatch, nthreads, running, want):
    distributed = pytest.importorskip("distributed",
                                      reason='distributed is not installed: pip install "./python[dask]"')
    state = type("State", (), {"nthreads": nthreads, "executing": set(range(running))})()
    monkeypatch.setattr(distributed, "get_worker", lambda: type("Worker", (), {"state": state})())
    assert ndjit.dask._task_threads() == want


# --- Zarr and the command line ---------------------------------------------------------------

def test_zarr_to_zarr(tmp_path):
    zarr = pytest.importorskip("zarr", reason='zarr is not installed: pip install "./python[dask]"')
    a = np.random.default_rng(5).standard_normal((30, 20)).astype(np.float32)
    src = zarr.create_array(str(tmp_path / "in.zarr"), shape=a.shape, chunks=(8, 6), dtype=a.dtype)
    src[...] = a
    ndjit.dask.filter_zarr(str(tmp_path / "in.zarr"), str(tmp_path / "out.zarr"), "np.median(x)", size=5, mode="wrap")
    out = zarr.open_array(str(tmp_path / "out.zarr"), mode="r")
    assert out.chunks == (8, 6)
    assert_same(out[...], ndi.generic_filter(a, np.median, size=5, mode="wrap"))


def test_command_line(tmp_path, capsys):
    zarr = pytest.importorskip("zarr", reason='zarr is not installed: pip install "./python[dask]"')
    from ndjit.__main__ import main
    a = np.arange(120, dtype=np.uint16).reshape(10, 12)
    zarr.create_array(str(tmp_path / "in.zarr"), shape=a.shape, chunks=(3, 5), dtype=a.dtype)[...] = a
    args = ["filter", str(tmp_path / "in.zarr"), str(tmp_path / "out.zarr"), "-e", "max(x) - min(x)",
            "--size", "3,5", "--mode", "mirror", "--dtype", "float32", "-q"]
    assert main(args) == 0
    want = ndi.generic_filter(a, lambda x: max(x) - min(x), size=(3, 5), mode="mirror", output=np.float32)
    assert_same(zarr.open_array(str(tmp_path / "out.zarr"), mode="r")[...], want)
    assert main(args) == 3  # the output exists (no --overwrite)
    assert main(args[:4] + ["max(x", "--size", "3", "--overwrite"]) == 2
    assert main(["filter", str(tmp_path / "missing.zarr"), str(tmp_path / "o.zarr"), "-e", "max(x)", "-s", "3"]) == 3
    assert main(args[:4] + ["1.0 / float(min(x))", "--size", "3", "--overwrite", "-q"]) == 4  # 0 at a corner
    assert "error:" in capsys.readouterr().err


def test_an_output_store_that_would_lose_data_is_refused(tmp_path, monkeypatch, capsys):
    # Once: the input overwritten by its own output (all zeros, success reported); any directory
    # named as the output deleted by --overwrite, the current one included.
    zarr = pytest.importorskip("zarr", reason='zarr is not installed: pip install "./python[dask]"')
    from ndjit.__main__ import main
    a = np.arange(1, 37.0).reshape(6, 6)
    src = str(tmp_path / "a.zarr")
    zarr.create_array(src, shape=a.shape, chunks=(3, 3), dtype=a.dtype)[...] = a
    for target in [src, str(tmp_path / "a.zarr" / "inner"), str(tmp_path)]:
        with pytest.raises(ValueError, match="is the input, lies inside it or holds it"):
            ndjit.dask.filter_zarr(src, target, "max(x)", size=3, overwrite=True)
        assert main(["filter", src, target, "-e", "max(x)", "-s", "3", "--overwrite", "-q"]) == 2
    np.testing.assert_array_equal(zarr.open_array(src, mode="r")[...], a)  # untouched
    precious = tmp_path / "w"
    precious.mkdir()
    (precious / "keep.txt").write_text("precious")
    with pytest.raises(FileExistsError, match="exists and is not a Zarr array"):
        ndjit.dask.filter_zarr(src, str(precious), "max(x)", size=3, overwrite=True)
    assert main(["filter", src, str(precious), "-e", "max(x)", "-s", "3", "--overwrite", "-q"]) == 3
    monkeypatch.chdir(precious)
    assert main(["filter", src, "", "-e", "max(x)", "-s", "3", "--overwrite", "-q"]) == 2
    assert main(["filter", src, ".", "-e", "max(x)", "-s", "3", "--overwrite", "-q"]) == 3
    assert (precious / "keep.txt").read_text() == "precious"
    # The input named otherwise: a file:// URL, a zarr.Array, a store object.
    for source, target in [(f"file://{src}", src), (zarr.open_array(src, mode="r"), src)]:
        with pytest.raises(ValueError, match="is the input"):
            ndjit.dask.filter_zarr(source, target, "max(x)", size=3, overwrite=True)
    store = pytest.importorskip("zarr.storage").LocalStore(src)
    with pytest.raises(ValueError, match="is the input"):
        ndjit.dask.filter_zarr(src, store, "max(x)", size=3, overwrite=True)
    assert main(["filter", f"file://{src}", src, "-e", "max(x)", "-s", "3", "--overwrite", "-q"]) == 2
    np.testing.assert_array_equal(zarr.open_array(src, mode="r")[...], a)  # untouched
    # A Zarr group is not replaced (its arrays would go).
    group = zarr.open_group(str(tmp_path / "g.zarr"), mode="w")
    group.create_array("precious", shape=(2,), dtype="f8")[...] = 1.0
    with pytest.raises(FileExistsError, match="is a Zarr group"):
        ndjit.dask.filter_zarr(src, str(tmp_path / "g.zarr"), "max(x)", size=3, overwrite=True)
    assert main(["filter", src, str(tmp_path / "g.zarr"), "-e", "max(x)", "-s", "3", "--overwrite", "-q"]) == 3
    assert zarr.open_array(str(tmp_path / "g.zarr" / "precious"), mode="r")[0] == 1.0
    # An empty directory, or a Zarr array with --overwrite, is written.
    (tmp_path / "empty").mkdir()
    assert main(["filter", src, str(tmp_path / "empty"), "-e", "max(x)", "-s", "3", "-q"]) == 0
    assert main(["filter", src, str(tmp_path / "empty"), "-e", "min(x)", "-s", "3", "--overwrite", "-q"]) == 0
    assert_same(zarr.open_array(str(tmp_path / "empty"), mode="r")[...], ndi.minimum_filter(a, size=3))
    assert "error:" in capsys.readouterr().err


def test_the_command_line_leaves_no_store_behind_when_the_filter_fails(tmp_path):
    zarr = pytest.importorskip("zarr", reason='zarr is not installed: pip install "./python[dask]"')
    from ndjit.__main__ import main
    src = str(tmp_path / "in.zarr")
    zarr.create_array(src, shape=(4, 4), chunks=(2, 2), dtype="f8")[...] = 0.0
    out = tmp_path / "out.zarr"
    assert main(["filter", src, str(out), "-e", "1.0 / float(x[0])", "-s", "3", "-q"]) == 4
    assert not out.exists()
    with pytest.raises(SystemExit) as e:  # argparse's usage error
        main(["filter", src, str(out), "-e", "max(x)", "-s", "3", "-q", "-j", "0"])
    assert e.value.code == 2
    assert main(["filter", src, str(out), "-e", "max(x)", "-s", "3", "-q"]) == 0  # no --overwrite needed


def never_on_real_windows(x):
    # True of no window of [0, 1, 2, 3] (or of the constant mode's), but of the windows the
    # halo's own pixels had when each block was filtered whole (reflected at the block's edge).
    if x[0] == x[1] and x[1] == x[2]:
        raise ValueError("a window the array does not have")
    return x[1]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("chunks", [4, 2, 1, (1, 3)])
def test_the_filter_sees_only_windows_the_whole_array_has(mode, chunks):
    # Once: each chunk's halo pixels were filtered too, and their windows raised where scipy
    # computes (and a loop could have run forever on them).
    a = np.arange(4.0)
    want = ndi.generic_filter(a, never_on_real_windows, size=3, mode=mode)
    got = ndjit.generic_filter(da.from_array(a, chunks=chunks), never_on_real_windows, size=3, mode=mode)
    assert_same(got.compute(scheduler="synchronous"), want)


def test_unknown_chunk_sizes_and_unsupported_types_fail_when_the_graph_is_built():
    x = da.from_array(np.arange(10.0), chunks=4)
    with pytest.raises(ValueError, match=r"chunk sizes are unknown.*compute_chunk_sizes"):
        ndjit.generic_filter(x[x > 2], "max(x)", size=3)
    for dtype, output, error in [(np.float16, None, RuntimeError), (np.float64, np.complex128, RuntimeError),
                                 (np.float64, np.float16, RuntimeError), (np.complex64, None, TypeError)]:
        with pytest.raises(error) as scipys:
            ndi.generic_filter(np.zeros(4, dtype), max, size=3, output=output)
        with pytest.raises(error, match=str(scipys.value)):
            ndjit.generic_filter(da.zeros(4, dtype=dtype, chunks=2), "max(x)", size=3, output=output)
        with pytest.raises(error, match=str(scipys.value)):
            ndjit.generic_filter(np.zeros(4, dtype), "max(x)", size=3, output=output)


# --- a process cluster -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed",
                                      reason='distributed is not installed: pip install "./python[dask]"')
    with distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as c:
        yield c


def test_process_workers_compile_once_and_are_exact(client):
    a = np.random.default_rng(6).standard_normal((40, 50))
    f = ndjit.jit_filter(lambda x, t: (x > t).sum() + x.min(), extra_arguments=(0.1,))
    got = client.compute(ndjit.generic_filter(da.from_array(a, chunks=(7, 9)), f, size=(3, 4), mode="wrap")).result()
    assert_same(got, ndi.generic_filter(a, f, size=(3, 4), mode="wrap"))
    key = f._spec.key()
    # Every worker that ran a chunk compiled the filter once, from source: one cache entry, not 30.
    cached = client.run(lambda: [k for k in ndjit._filter._cache if k[0] == key])
    assert all(len(v) <= 1 for v in cached.values()) and any(cached.values())
    assert client.submit(ndjit.dask._task_threads, pure=False).result() == 1  # threads_per_worker=1


def test_a_worker_killed_mid_computation_is_replaced_and_the_result_is_exact(client):
    from distributed import futures_of, wait
    a = np.random.default_rng(7).standard_normal((128, 128))
    y = ndjit.generic_filter(da.from_array(a, chunks=16), "np.median(x)", size=9, mode="reflect")
    pids = client.run(os.getpid)
    y = client.persist(y)
    futures = futures_of(y)
    while sum(f.done() for f in futures) < 2:
        time.sleep(0.01)
    done_at_kill = sum(f.done() for f in futures)
    victim = next(iter(pids.values()))
    os.kill(victim, signal.SIGKILL)
    wait(futures)
    assert done_at_kill < len(futures)  # it really died mid-computation
    assert_same(y.compute(), ndi.generic_filter(a, ndjit.jit_filter("np.median(x)"), size=9, mode="reflect"))
    client.wait_for_workers(2, timeout=60)
    assert victim not in client.run(os.getpid).values()  # replaced by a new process


def test_wrap_mode_dask_image_is_wrong_at_chunk_edges_ndjit_is_exact():
    ndfilters = pytest.importorskip("dask_image.ndfilters",
                                    reason="dask-image is not installed: pip install dask-image")
    a = np.random.default_rng(8).standard_normal((12, 12))
    want = ndi.generic_filter(a, asym, size=3, mode="wrap")
    x = da.from_array(a, chunks=6)
    theirs = ndfilters.generic_filter(x, asym, size=3, mode="wrap").compute(scheduler="sync")
    # map_overlap(boundary="none") gives the edge chunks no halo from the far side, and scipy then
    # wraps each edge chunk onto itself: every pixel on the array's border is wrong.
    border = np.ones_like(a, dtype=bool)
    border[1:-1, 1:-1] = False
    np.testing.assert_array_equal(theirs != want, border)
    assert_same(ndjit.generic_filter(x, asym, size=3, mode="wrap").compute(scheduler="sync"), want)


def test_cupy_chunks_run_on_the_gpu_with_no_host_copies():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed (the GPU chunk path needs it and a GPU)")
    if not ndjit.cuda.is_available():
        pytest.skip("no usable GPU: the CuPy chunk path cannot run here")
    a = np.random.default_rng(9).standard_normal((37, 29)).astype(np.float32)
    for mode in ["wrap", "constant", "reflect"]:
        x = da.from_array(cupy.asarray(a), chunks=((9, 2, 20, 6), (1, 14, 14)), asarray=False)
        y = ndjit.generic_filter(x, asym, size=(3, 5), mode=mode, cval=0.5, origin=(1, 0))
        assert isinstance(y._meta, cupy.ndarray)
        got = y.compute(scheduler="sync")
        assert isinstance(got, cupy.ndarray)  # the chunks stayed on the device
        assert_same(cupy.asnumpy(got), ndi.generic_filter(a, asym, size=(3, 5), mode=mode, cval=0.5, origin=(1, 0)))


def test_the_input_named_any_way_zarr_reads_it_is_never_the_output(tmp_path, monkeypatch):
    # Found by a hunt (stop 55): each of these spellings slipped past the guard, and the run
    # cleared the input before reading it (all zeros, success reported).
    zarr = pytest.importorskip("zarr", reason='zarr is not installed: pip install "./python[dask]"')
    storage = pytest.importorskip("zarr.storage")
    from ndjit.__main__ import main
    a = np.arange(1, 37.0).reshape(6, 6)
    src = str(tmp_path / "in.zarr")
    zarr.create_array(src, shape=a.shape, chunks=(3, 3), dtype=a.dtype)[...] = a
    monkeypatch.setenv("HOME", str(tmp_path))
    spellings = [(f"file:{src}", src), (f"local://{src}", src), (f"simplecache::file://{src}", src),
                 ("~/in.zarr", src), (src, f"local://{src}"), (src, f"simplecache::file://{src}"),
                 (src, "~/in.zarr")]
    for source, target in spellings:
        with pytest.raises(ValueError, match="is the input"):
            ndjit.dask.filter_zarr(source, target, "max(x)", size=3, overwrite=True)
        assert main(["filter", source, target, "-e", "max(x)", "-s", "3", "--overwrite", "-q"]) == 2
    stores = [storage.FsspecStore.from_url(f"file://{src}"), storage.LoggingStore(storage.LocalStore(src))]
    for store in stores:
        for source, target in [(store, src), (src, store), (zarr.open_array(store, mode="r"), src)]:
            with pytest.raises(ValueError, match="is the input"):
                ndjit.dask.filter_zarr(source, target, "max(x)", size=3, overwrite=True)
    np.testing.assert_array_equal(zarr.open_array(src, mode="r")[...], a)  # untouched


def test_a_failed_overwrite_keeps_the_previous_output(tmp_path):
    # Found by a hunt (stop 55): --overwrite cleared the old output first, so a filter failing
    # at run time left a readable mix of zeros and one chunk of new values.
    zarr = pytest.importorskip("zarr", reason='zarr is not installed: pip install "./python[dask]"')
    from ndjit.__main__ import main
    a = np.arange(1, 37.0).reshape(6, 6)
    src, out = str(tmp_path / "in.zarr"), tmp_path / "keep.zarr"
    zarr.create_array(src, shape=a.shape, chunks=(3, 3), dtype=a.dtype)[...] = a
    assert main(["filter", src, str(out), "-e", "max(x)", "-s", "3", "-q"]) == 0
    kept = zarr.open_array(str(out), mode="r")[...]
    failing = "1.0 / float(x[0] - 36)"  # one pixel of one chunk
    assert main(["filter", src, str(out), "-e", failing, "-s", "1", "--overwrite", "-q"]) == 4
    np.testing.assert_array_equal(zarr.open_array(str(out), mode="r")[...], kept)
    with pytest.raises(ZeroDivisionError):
        ndjit.dask.filter_zarr(src, str(out), failing, size=1, overwrite=True)
    np.testing.assert_array_equal(zarr.open_array(str(out), mode="r")[...], kept)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.zarr", "keep.zarr"]  # no partial stores
    # Without overwrite an existing array is refused; with it, replaced once complete.
    with pytest.raises(FileExistsError, match="holds a Zarr array"):
        ndjit.dask.filter_zarr(src, str(out), "min(x)", size=3)
    ndjit.dask.filter_zarr(src, str(out), "min(x)", size=3, overwrite=True)
    assert_same(zarr.open_array(str(out), mode="r")[...], ndi.minimum_filter(a, size=3))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.zarr", "keep.zarr"]


def test_the_command_line_tells_a_store_failure_from_the_filters(tmp_path, capsys):
    # Found by a hunt (stop 55): a corrupt chunk exited 4 ("the filter failed"), not 3 (the store).
    zarr = pytest.importorskip("zarr", reason='zarr is not installed: pip install "./python[dask]"')
    from ndjit.__main__ import main
    src = tmp_path / "in.zarr"
    zarr.create_array(str(src), shape=(6, 6), chunks=(3, 3), dtype="f8")[...] = 1.0
    (src / "c" / "1" / "1").write_bytes(b"garbage")
    assert main(["filter", str(src), str(tmp_path / "out.zarr"), "-e", "max(x)", "-s", "3", "-q"]) == 3
    assert not (tmp_path / "out.zarr").exists()
    capsys.readouterr()
    # A malformed size names its option.
    assert main(["filter", str(src), str(tmp_path / "o.zarr"), "-e", "max(x)", "-s", "3,", "-q"]) == 2
    assert "--size takes integers separated by commas" in capsys.readouterr().err
