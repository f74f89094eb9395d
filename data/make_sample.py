"""Regenerates data/sample.pgm: a 256x256 8-bit synthetic terrain with noise, spikes and a gap.

    python3 data/make_sample.py

Deterministic (fixed seed) and dependency-free beyond NumPy, so the committed file can be checked.
"""
import os
import numpy as np

rng = np.random.default_rng(20261121)
n = 256
y, x = np.mgrid[0:n, 0:n] / n
terrain = 0.5 + 0.25 * np.sin(6 * x) * np.cos(4 * y) + 0.15 * np.exp(-((x - 0.6) ** 2 + (y - 0.4) ** 2) * 30)
img = terrain + rng.normal(0, 0.03, (n, n))
spikes = rng.random((n, n)) < 0.01
img[spikes] = rng.choice([0.0, 1.0], spikes.sum())
img = np.clip(img, 0, 1)
data = (img * 255).round().astype(np.uint8)
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sample.pgm")
with open(path, "wb") as f:
    f.write(b"P5\n%d %d\n255\n" % (n, n))
    f.write(data.tobytes())
print("wrote", path)
