"""ndjit's main job on the bundled sample image: real-world-style callbacks through
scipy.ndimage.generic_filter, plain Python versus ndjit, and the before/after images.

    python python/examples/demo.py data/sample.pgm out/
"""
import os
import struct
import sys
import time
import zlib

import numpy as np
from scipy import ndimage as ndi

import ndjit

THRESHOLD = 0.08


def local_range(x):
    return x.max() - x.min()


def despike(w):
    c = w[len(w) // 2]
    others = np.delete(w, len(w) // 2)
    med = np.median(others)
    if abs(c - med) > 3 * np.std(others):
        return med
    return c


def fill_gaps(window):
    centre = window[len(window) // 2]
    if not np.isnan(centre):
        return centre
    good = window[~np.isnan(window)]
    if len(good) == 0:
        return 0.0
    return np.mean(good)


def ruggedness(x):
    return np.sqrt(np.mean((x - x[x.size // 2]) ** 2))


def edges_above(vals):
    c = vals[len(vals) // 2]
    return float(np.count_nonzero(np.abs(vals - c) > THRESHOLD)) / (len(vals) - 1)


FILTERS = [("local_range", local_range, 3), ("despike", despike, 3), ("fill_gaps", fill_gaps, 3),
           ("ruggedness", ruggedness, 5), ("edges_above", edges_above, 5)]


def read_pgm(path):
    with open(path, "rb") as f:
        data = f.read()
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    w, h = int(fields[1]), int(fields[2])
    return np.frombuffer(data[pos + 1:pos + 1 + w * h], np.uint8).reshape(h, w) / 255.0


def write_png(path, img):
    """An 8-bit greyscale PNG, scaled to the image's finite range (no imaging library needed)."""
    finite = img[np.isfinite(img)]
    lo, hi = (finite.min(), finite.max()) if finite.size else (0.0, 1.0)
    scaled = np.where(np.isfinite(img), (img - lo) / ((hi - lo) or 1.0), 0.0)
    px = (np.clip(scaled, 0, 1) * 255).round().astype(np.uint8)
    raw = b"".join(b"\0" + row.tobytes() for row in px)
    chunk = lambda tag, body: struct.pack(">I", len(body)) + tag + body + struct.pack(">I", zlib.crc32(tag + body))  # noqa: E731
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", px.shape[1], px.shape[0], 8, 0, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def best_of(fn, reps):
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t)
    return out, min(ts)


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "data/sample.pgm"
    out_dir = sys.argv[2] if len(sys.argv) > 2 else "out"
    os.makedirs(out_dir, exist_ok=True)
    img = read_pgm(src)
    gappy = img.copy()
    gappy[np.random.default_rng(1).random(img.shape) < 0.05] = np.nan  # gaps for fill_gaps
    write_png(os.path.join(out_dir, "input.png"), img)
    print(f"{src}: {img.shape[0]}x{img.shape[1]}; ndjit {ndjit.__version__}\n")
    print(f"{'filter':12s} {'size':>4s} {'Python':>10s} {'ndjit (scipy)':>14s} {'ndjit native':>13s} {'speed-up':>9s}  same result")
    for name, func, size in FILTERS:
        x = gappy if name == "fill_gaps" else img
        ref, t_py = best_of(lambda: ndi.generic_filter(x, func, size=size), 1)
        t0 = time.perf_counter()
        f = ndjit.jit_filter(func)
        t_compile = time.perf_counter() - t0
        got, t_nd = best_of(lambda: ndi.generic_filter(x, f, size=size), 3)
        nat, t_nat = best_of(lambda: ndjit.generic_filter(x, f, size=size), 3)
        same = np.allclose(got, ref, rtol=1e-10, atol=1e-12, equal_nan=True) and np.array_equal(nat, got, equal_nan=True)
        print(f"{name:12s} {size:>4d} {t_py * 1e3:8.0f}ms {t_nd * 1e3:12.1f}ms {t_nat * 1e3:11.1f}ms {t_py / t_nat:8.0f}x  "
              f"{'yes' if same else 'NO'} (compiled in {t_compile * 1e3:.2f} ms)")
        write_png(os.path.join(out_dir, f"{name}.png"), nat)
        if not same:
            sys.exit(f"{name}: ndjit differs from scipy running the Python callback")
    print(f"\nbefore/after images written to {out_dir}/ (input.png, " + ", ".join(f"{n}.png" for n, *_ in FILTERS) + ")")


if __name__ == "__main__":
    main()
