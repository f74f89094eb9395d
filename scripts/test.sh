#!/usr/bin/env bash
# Runs every test of the project (the README's test command). Needs Rust 1.95 and Python >= 3.9;
# .ci/run installs the rest (valgrind, pkg-config, ptxas) first.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

# Rust: the core (unit, corpus, differential, property, error, semantics, signatures and driver
# tests, doc tests), the command-line tool (cli/, on real image files), the C ABI (ffi/tests: C
# examples built with cc, run under valgrind when installed, the library loaded with libloading)
# and the GPU crate (PTX checked with ptxas when installed; tests that need a GPU skip and say so).
# The Python extension is tested through pytest below.
cargo test --release --workspace --exclude ndjit-python
command -v valgrind >/dev/null || echo "valgrind not installed: the C examples ran without memcheck"

# The Python package, built and installed into a fresh virtual environment exactly as a user would
# (pip install ./python), then its pytest suite (which includes ../shared's acceptance corpus when
# that folder is present).
VENV=${NDJIT_TEST_VENV:-.venv}
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
# dask's own `distributed` extra pins the distributed release made with that dask: listed apart, pip
# pairs the newest dask with whatever distributed it can (dask 2026.11.0 with distributed 2021.4.1,
# which cannot import), as the CI of stop 72 found.
"$VENV/bin/pip" install -q --disable-pip-version-check numpy scipy pytest cloudpickle "dask[array,distributed]" zarr
"$VENV/bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps ./python
"$VENV/bin/python" tests/corpus/generate.py --check
"$VENV/bin/python" -m pytest -q python/tests
# The driver's own harness: the ndjit CLI (built by cargo test of ndjit-cli above) against scipy, byte for byte.
"$VENV/bin/python" tests/driver_scipy.py --cases 400
