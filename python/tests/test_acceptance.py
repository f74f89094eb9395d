"""The shared acceptance corpus (../shared/corpus/run_corpus.py), when it is present."""
import os
import subprocess
import sys

import pytest

from conftest import REPO

RUNNER = os.path.join(os.path.dirname(REPO), "shared", "corpus", "run_corpus.py")


@pytest.mark.skipif(not os.path.exists(RUNNER), reason="../shared is absent (not part of this repository)")
@pytest.mark.parametrize("flags", [[], ["--native"]])
def test_shared_acceptance_corpus(flags):
    r = subprocess.run([sys.executable, RUNNER, *flags], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().splitlines()[-1].endswith(" 0 failed"), r.stdout
