#!/usr/bin/env bash
# Runs every test of the project (the README's test command).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

# Rust: unit, integration (corpus, differential, property, error) and doc tests, in release
# mode so that the differential and property tests run many cases quickly.
cargo test --release --workspace

# The corpus expectations are reproducible from NumPy (skipped when NumPy is missing).
if python3 -c "import numpy" 2>/dev/null; then
    python3 tests/corpus/generate.py --check
else
    echo "numpy not installed: skipping the corpus regeneration check"
fi
