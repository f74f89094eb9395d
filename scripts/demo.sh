#!/usr/bin/env bash
# The main job on a fresh machine: builds everything (the Rust workspace: core, CLI, C library;
# the Python package into a fresh virtual environment), then filters the bundled sample image
# with real-world-style callbacks, plain Python against ndjit, and writes before/after images
# to out/.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

echo "== Building the Rust workspace (core, CLI, C library, GPU crate): several minutes on 2 cores =="
cargo build --release --workspace --exclude ndjit-python
echo "== Building the Python package into .venv-demo (compiles the extension: a few minutes) =="
python3 -m venv .venv-demo
.venv-demo/bin/pip install -q --disable-pip-version-check numpy scipy
.venv-demo/bin/pip install --disable-pip-version-check --progress-bar off ./python

echo "== Python: scipy.ndimage.generic_filter with plain Python callbacks vs ndjit =="
.venv-demo/bin/python python/examples/demo.py data/sample.pgm out

# The Rust core through the `ndjit` command built above (the Rust example in examples/ would
# rebuild the workspace with its dev-dependencies first).
echo "== Rust core (the ndjit command): the same image, median 5x5 and range 5x5 =="
target/release/ndjit filter data/sample.pgm out/rust_median5.pgm -e 'np.median(x)' --size 5
target/release/ndjit filter data/sample.png out/cli_range5.png -e 'max(x) - min(x)' --size 5
echo "== Done: before/after images in out/ =="
