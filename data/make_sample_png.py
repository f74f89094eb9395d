"""Regenerates data/sample.png: a 256x256 8-bit RGB version of data/sample.pgm's synthetic terrain
(same seed), coloured by height, with salt-and-pepper noise in each channel, for the README's
`ndjit filter` demo.

    python3 data/make_sample_png.py

Deterministic and dependency-free beyond NumPy (the PNG is written with zlib).
"""
import os
import struct
import zlib

import numpy as np

rng = np.random.default_rng(20261121)
n = 256
y, x = np.mgrid[0:n, 0:n] / n
terrain = 0.5 + 0.25 * np.sin(6 * x) * np.cos(4 * y) + 0.15 * np.exp(-((x - 0.6) ** 2 + (y - 0.4) ** 2) * 30)
h = np.clip(terrain + rng.normal(0, 0.03, (n, n)), 0, 1)
rgb = np.stack([h, 1 - np.abs(h - 0.5) * 1.6, 1 - h], axis=-1)
for c in range(3):
    spikes = rng.random((n, n)) < 0.01
    rgb[..., c][spikes] = rng.choice([0.0, 1.0], spikes.sum())
data = (np.clip(rgb, 0, 1) * 255).round().astype(np.uint8)


def chunk(kind, payload):
    body = kind + payload
    return struct.pack(">I", len(payload)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


raw = b"".join(b"\x00" + data[r].tobytes() for r in range(n))
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", n, n, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sample.png")
with open(path, "wb") as f:
    f.write(png)
print("wrote", path)
