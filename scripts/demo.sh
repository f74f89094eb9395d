#!/usr/bin/env bash
# The main job on a fresh machine: builds everything (the Rust workspace: core, CLI, C library;
# the Python package into a fresh virtual environment), then filters the bundled sample image
# with real-world-style callbacks, plain Python against ndjit, and writes before/after images
# to out/.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

cargo build --release --workspace --exclude ndjit-python
python3 -m venv .venv-demo
.venv-demo/bin/pip install -q --disable-pip-version-check numpy scipy
.venv-demo/bin/pip install -q --disable-pip-version-check ./python

echo "== Python: scipy.ndimage.generic_filter with plain Python callbacks vs ndjit =="
.venv-demo/bin/python python/examples/demo.py data/sample.pgm out

echo "== Rust core: a filter compiled from Python source, applied to the same image =="
cargo run -q --release --example filter_image -- data/sample.pgm out/rust_median5.pgm 'np.median(x)' 5
if [ -x target/release/ndjit ] && [ -f data/sample.png ]; then
    echo "== CLI =="
    target/release/ndjit filter data/sample.png out/cli_range5.png -e 'max(x) - min(x)' --size 5
fi
