#!/usr/bin/env bash
# The GPU round trip: build the GPU test and benchmark binaries here, carry them to the device
# machine, run them there.
#
#   bash scripts/gpu_device.sh build   # here: builds into .device/ (git-ignored, carried): the
#                                      #   device test and benchmark binaries and the abi3 wheel
#   bash scripts/gpu_device.sh run     # on the device, with .device carried:
#                                      #   device tool: command "bash scripts/gpu_device.sh run",
#                                      #   carry [".device"]
#
# `run` writes logs to $OUT (the device tool's output folder) and prints the summaries last.
# Sections can be limited with NDJIT_DEVICE_ONLY=minmax,math,corpus,api,passes and
# NDJIT_SKIP=device,python,dask,bench,percall,window,cupy; the window benchmark's filters with
# NDJIT_WINDOW_FILTERS=min,max,min+nan,range,median,mean,nanmean and its other options with
# NDJIT_WINDOW_ARGS (e.g. "--footprint disk --dtypes float32,uint8"); benches/percall_gpu.py's options with
# NDJIT_PERCALL_ARGS (e.g. "--split").
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
build)
    mkdir -p .device
    # .device/ must be ignored by git (the device tool carries ignored paths only when named).
    exclude=$(git rev-parse --git-path info/exclude 2>/dev/null || true)
    if [ -n "$exclude" ] && ! grep -qx '/.device/' "$exclude" 2>/dev/null; then
        mkdir -p "$(dirname "$exclude")" && echo '/.device/' >>"$exclude"
    fi
    rm -f .device/device .device/gpu_stencil
    list() { python3 -c '
import json, sys
for line in sys.stdin:
    try: m = json.loads(line)
    except ValueError: continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] in sys.argv[1:]:
        print(m["target"]["name"], m["executable"])' "$@"; }
    cargo test -p ndjit-gpu --release --no-run --message-format=json 2>/dev/null | list device >.device/bins
    cargo bench -p ndjit-gpu --no-run --message-format=json 2>/dev/null | list gpu_stencil >>.device/bins
    while read -r name path; do cp "$path" ".device/$name"; done <.device/bins
    cp tests/corpus/programs.toml .device/programs.toml
    # The Python package, for `target="cuda"` against scipy there (abi3: any CPython >= 3.9).
    rm -rf .device/wheel
    "${PYTHON:-python3}" -m pip wheel -q --disable-pip-version-check --no-deps -w .device/wheel ./python
    # Dask for the GPU-chunk test there (the device image has none): its wheels for the image's
    # Python (3.12), NumPy left to the image's own.
    rm -rf .device/pydeps
    "${PYTHON:-python3}" -m pip download -q --disable-pip-version-check --only-binary=:all: \
        --python-version 3.12 --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux_2_28_x86_64 --dest .device/pydeps "dask[array,distributed]" \
        || echo "no Dask wheels (no index?): the device's dask section will be skipped"
    rm -f .device/pydeps/numpy-*.whl
    for f in ../shared/bench/gpu_anchor.py shared/bench/gpu_anchor.py /work/shared/bench/gpu_anchor.py; do
        if [ -f "$f" ]; then cp "$f" .device/gpu_anchor.py; break; fi
    done
    # The binaries must run under the device image's glibc: show the newest version they need.
    for b in .device/device .device/gpu_stencil; do
        echo "$b needs $(objdump -T "$b" 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sort -V | tail -1)"
    done
    ls -la .device
    ;;
run)
    out=${OUT:-/tmp/ndjit-out}
    mkdir -p "$out"
    export NDJIT_CORPUS_PATH=.device/programs.toml NDJIT_OUT="$out"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv || true
    status=0
    # The wheel into a private folder (the device image has numpy, scipy, cupy and pytest), for
    # every Python section, whichever of them run.
    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/ndjit-site .device/wheel/*.whl
    case ",${NDJIT_SKIP:-}," in *,device,*) ;; *)
        timeout "${NDJIT_DEVICE_TIMEOUT:-400}" .device/device 2>&1 | tee "$out/device.log" || status=$? ;;
    esac
    case ",${NDJIT_SKIP:-}," in *,python,*) ;; *)
        PYTHONPATH=/tmp/ndjit-site timeout "${NDJIT_PYTEST_TIMEOUT:-200}" python3 -m pytest -q -p no:cacheprovider \
            python/tests/test_cuda.py 2>&1 | tee "$out/python.log" || status=$? ;;
    esac
    case ",${NDJIT_SKIP:-}," in *,dask,*) ;; *)
        # Dask arrays of CuPy chunks through ndjit.dask on this GPU (issue 16), exact against scipy.
        if ls .device/pydeps/*.whl >/dev/null 2>&1; then
            python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/ndjit-site \
                .device/wheel/*.whl .device/pydeps/*.whl
            PYTHONPATH=/tmp/ndjit-site timeout "${NDJIT_DASK_TIMEOUT:-200}" python3 -m pytest -v -p no:cacheprovider \
                python/tests/test_dask.py -k cupy 2>&1 | tee "$out/dask.log" || status=$?
        fi ;;
    esac
    case ",${NDJIT_SKIP:-}," in *,bench,*) ;; *)
        CUDA_CACHE_DISABLE=1 timeout "${NDJIT_BENCH_TIMEOUT:-200}" .device/gpu_stencil 2>&1 | tee "$out/bench.log" || status=$? ;;
    esac
    case ",${NDJIT_SKIP:-}," in *,percall,*) ;; *)
        # Host time per target="cuda" call beyond the GPU work (issue 13: at most 30 µs).
        PYTHONPATH=/tmp/ndjit-site timeout "${NDJIT_PERCALL_TIMEOUT:-200}" python3 benches/percall_gpu.py \
            ${NDJIT_PERCALL_ARGS:-} 2>&1 | tee "$out/percall.log" || status=$? ;;
    esac
    case ",${NDJIT_SKIP:-}," in *,window,*) ;; *)
        # Time against the window size, k = 3..31, beside cupyx (issue 18).
        PYTHONPATH=/tmp/ndjit-site PYTHONUNBUFFERED=1 timeout "${NDJIT_WINDOW_TIMEOUT:-300}" python3 \
            benches/gpu_window.py --budget "${NDJIT_WINDOW_BUDGET:-240}" \
            --filters "${NDJIT_WINDOW_FILTERS:-min,max,min+nan,range,median,percentile,mean,nanmean}" \
            ${NDJIT_WINDOW_ARGS:-} 2>&1 | tee "$out/window.log" || status=$? ;;
    esac
    case ",${NDJIT_SKIP:-}," in *,cupy,*) ;; *)
        if [ -f .device/gpu_anchor.py ]; then
            PYTHONUNBUFFERED=1 timeout "${NDJIT_CUPY_TIMEOUT:-200}" python3 .device/gpu_anchor.py 2>&1 | tee "$out/cupy.log" || true
        fi ;;
    esac
    echo
    echo "== summaries =="
    sed -n '/== device summary ==/,$p' "$out/device.log" 2>/dev/null || true
    tail -n 3 "$out/python.log" 2>/dev/null || true
    grep -E "PASSED|FAILED|SKIPPED" "$out/dask.log" 2>/dev/null || true
    tail -n 4 "$out/percall.log" 2>/dev/null || true
    sed -n '/== ndjit-gpu on/,$p' "$out/bench.log" 2>/dev/null || true
    sed -n '/== gpu_window table/,$p' "$out/window.log" 2>/dev/null || true
    grep -E "copy|minimum_filter|median_filter|RawKernel|first call" "$out/cupy.log" 2>/dev/null || true
    exit $status
    ;;
*)
    echo "usage: $0 build|run" >&2
    exit 2
    ;;
esac
