#!/usr/bin/env python3
"""Regenerates tests/corpus/programs.toml: ndjit's data-driven corpus of filter callbacks.

    python3 tests/corpus/generate.py            # rewrite programs.toml next to this file
    python3 tests/corpus/generate.py --check    # fail if programs.toml is not what this would write

The PROGRAMS list below is the source of truth.  Each program is Python exactly as a user would hand it
to scipy.ndimage.generic_filter (an expression over `x`, a lambda, `name = lambda ...`, or one def whose
first parameter is the neighbourhood buffer) plus the values it reads from outside (`bindings`: module
constants, closure values, extra arguments; floats, ints or lists of floats, which become float64
arrays).  For every input, the expectation is what CPython + NumPy give: the source is exec'd with
`np`, `numpy` and `math` available and the bindings as globals, the function is called on
`np.array(values, dtype=np.float64)` (what scipy passes; extra parameters named in `bindings` are passed
as arguments, the others keep their defaults), and the result goes through `float()` as scipy does.  If
Python raises, the expectation is the string "error" (the exception type is kept as a TOML comment).
Warnings (mean of empty, invalid value ...) are silenced: NumPy's NaN result is the expectation.

Inputs per program: the hand-picked ones written next to it, a few fixed ones every program gets
(constant, single inf/nan), and random ones from a generator seeded by the program's name (so adding a
program does not change the others), for each of the program's natural sizes and value kinds.  The
TOML is hand-formatted (floats via repr(), nan/inf/-0.0 as TOML literals) and byte-for-byte
deterministic for a given NumPy version.
"""
import ast
import inspect
import math
import os
import sys
import types
import warnings
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "programs.toml")

nan = float("nan")
inf = float("inf")

# ---------------------------------------------------------------------------------------------------
# Shared bindings (real-world-style constants and kernels)

GAUSS3 = [1 / 16, 2 / 16, 1 / 16, 2 / 16, 4 / 16, 2 / 16, 1 / 16, 2 / 16, 1 / 16]
SPATIAL3 = [0.5, 0.75, 0.5, 0.75, 1.0, 0.75, 0.5, 0.75, 0.5]
CROSS_W = [0.0, 1.0, 0.0, 1.0, 4.0, 1.0, 0.0, 1.0, 0.0]
RAMP5 = [1.0, 2.0, 3.0, 2.0, 1.0]

PROGRAMS = []

# Default value kinds for random inputs; see make_values().
K_DEFAULT = ("u", "n", "q", "nan", "sp")


def P(name, source, bindings=None, *, kinds=K_DEFAULT, sizes=(9, 25, 5, 1, 0), hand=(), auto=True):
    """One corpus program.  `hand`: extra inputs written out; `auto`: also the fixed inputs every
    program gets (constant window, a lone nan, a lone inf)."""
    src = inspect.cleandoc(source) + "\n" if "\n" in source else source.strip() + "\n"
    PROGRAMS.append(dict(name=name, source=src, bindings=dict(bindings or {}), kinds=tuple(kinds),
                         sizes=tuple(sizes), hand=[list(map(float, h)) for h in hand], auto=auto))


# ===================================================================================================
# 1. One reduction, directly or nearly so
# ===================================================================================================

P("local_std", "np.std(x)")

P("local_range_methods", "x.max() - x.min()")

P("median_expr", "np.median(x)", hand=[[3, 1, 2, 5], [4, 1, 3, 2, 5, 6], [nan, 1, 2]])

P("interquartile_range", "np.percentile(x, 75) - np.percentile(x, 25)",
  hand=[[1, 2, 3, 4], [10, 0, 5]])

P("low_quantile_lambda", "lambda v: np.quantile(v, 0.1)")

P("sample_variance_method", "lambda v: v.var(ddof=1)", hand=[[2.0], [1.0, 3.0]])

P("std_ddof_two", "np.std(x, ddof=2)", hand=[[1.0, 2.0], [1.0, 2.0, 4.0]])

P("olympic_mean", """
    def olympic_mean(w):
        # drop the single largest and smallest value
        return (np.sum(w) - np.max(w) - np.min(w)) / (len(w) - 2)
""", hand=[[1.0, 2.0], [5.0, 1.0, 3.0]])

P("peak_to_peak_relative", """
    def peak_to_peak_relative(a):
        spread = np.ptp(a)
        level = np.mean(np.abs(a))
        return spread / level if level > 0 else 0.0
""", hand=[[0.0, 0.0, 0.0], [-1.0, 1.0]])

P("midrange_amin_amax", "lambda w: 0.5 * (np.amin(w) + np.amax(w))")

P("geometric_mean_log", """
    def geometric_mean_log(values):
        if (values <= 0).any():
            return 0.0
        return math.exp(np.log(values).mean())
""", kinds=("pos", "u", "sp"))

P("compound_growth", "lambda r: np.prod(1.0 + r) - 1.0", kinds=("u", "q", "nan", "sp"))

P("rms_math_sqrt", "math.sqrt(np.sum(x * x) / len(x))", kinds=("u", "n", "nan", "sp", "big"))

P("fraction_above", "np.count_nonzero(x > LEVEL) / x.size", {"LEVEL": 0.5})

P("argmax_minus_argmin", "lambda v: float(np.argmax(v) - np.argmin(v))",
  hand=[[1, 3, 3, 0, 0], [2, nan, 5, nan], [1.0, 2.0, 3.0]])

P("neighbour_mean_anomaly", "(x.sum() - x[x.shape[0] // 2]) / (x.shape[0] - 1) - x.mean()")

# ===================================================================================================
# 2. NaN-aware local statistics
# ===================================================================================================

P("nanmean_loop_guarded", """
    def nanmean_loop_guarded(values):
        total = 0.0
        n = 0
        for v in values:
            if math.isnan(v):
                continue
            total += v
            n += 1
        if n == 0:
            return np.nan
        return total / n
""", kinds=("u", "nan", "sp"))

P("finite_mean_unguarded", """
    def finite_mean_unguarded(values):
        # an all-NaN window leaves Python floats 0.0 / 0 -> ZeroDivisionError, as under scipy
        total = 0.0
        n = 0
        for v in values:
            if np.isfinite(v):
                total = total + v
                n = n + 1
        return total / n
""", kinds=("u", "nan", "sp"), hand=[[nan, inf, -inf], [nan, 2.0, nan]])

P("nan_p90_or_flag", "nan_p90 = lambda v: np.nanpercentile(v, 90) if np.any(~np.isnan(v)) else -1.0",
  kinds=("u", "nan", "sp"))

P("valid_mean_mask", """
    def valid_mean_mask(v):
        good = v[np.isfinite(v)]
        return good.mean() if good.size > 0 else 0.0
""", kinds=("u", "nan", "sp"))

P("nan_spread", """
    def nan_spread(w):
        if np.isnan(w).all():
            return np.nan
        return np.nanmax(w) - np.nanmin(w)
""", kinds=("u", "nan", "sp"))

P("nan_spread_unguarded", "np.nanmax(x) - np.nanmin(x)", kinds=("u", "nan", "sp"))

P("nan_centre_zscore", """
    def nan_centre_zscore(a):
        c = a[len(a) // 2]
        m = np.nanmean(a)
        s = np.nanstd(a, ddof=1)
        if np.isnan(c) or not s > 0:
            return 0.0
        return (c - m) / s
""", kinds=("u", "n", "nan", "sp"))

P("lee_speckle_default", """
    def lee_speckle(a, noise=0.05):
        mean = np.nanmean(a)
        var = np.nanvar(a)
        gain = var / (var + noise) if var + noise > 0 else 0.0
        centre = a[a.size // 2]
        return mean + gain * (centre - mean)
""", kinds=("u", "nan", "sp"))

P("fill_from_neighbours", """
    def fill_from_neighbours(window):
        centre = window[4]
        if not math.isnan(centre):
            return centre
        neighbours = np.delete(window, 4)
        if np.isnan(neighbours).all():
            return np.nan
        return np.nanmedian(neighbours)
""", kinds=("nan", "u", "sp"), hand=[[1, 2, 3, 4, nan, 6, 7, 8, 9], [nan, nan, 4, nan, nan, nan, 1, nan, 2]])

P("nansum_per_valid", "lambda v: np.nansum(v) / max(1, np.count_nonzero(~np.isnan(v)))",
  kinds=("u", "nan", "sp"))

P("nanstd_ddof1", "np.nanstd(x, ddof=1)", kinds=("u", "nan", "sp"), hand=[[nan, 1.0], [nan, 1.0, 3.0]])

P("nanmedian_guarded_iqr", """
    def nanmedian_guarded_iqr(v):
        finite = v[~np.isnan(v)]
        if len(finite) < 3:
            return np.nanmedian(v)
        q1 = np.nanpercentile(v, 25)
        q3 = np.nanpercentile(v, 75)
        return np.nanmedian(v[(v >= q1) & (v <= q3)])
""", kinds=("u", "nan", "sp"))

# ===================================================================================================
# 3. Centre against neighbours
# ===================================================================================================

P("abs_contrast_mean", "lambda w: np.sum(np.abs(w - w[4])) / (len(w) - 1)")

P("centre_zscore_delete", """
    def centre_zscore_delete(window):
        mid = len(window) // 2
        c = window[mid]
        others = np.delete(window, mid)
        sd = others.std()
        if sd == 0:
            return 0.0
        return (c - others.mean()) / sd
""", hand=[[1.0, 1.0, 1.0, 1.0, 9.0, 1.0, 1.0, 1.0, 1.0]])

P("despike_mad", """
    def despike_mad(w):
        c = w[4]
        ring = np.concatenate((w[:4], w[5:]))
        med = np.median(ring)
        mad = np.median(np.abs(ring - med))
        if abs(c - med) > K * 1.4826 * mad:
            return med
        return c
""", {"K": 3.0}, hand=[[1, 1.1, 0.9, 1, 50, 1.05, 0.95, 1, 1]])

P("clamp_to_neighbours", """
    def clamp_to_neighbours(x):
        c = x[4]
        nb = np.concatenate((x[0:4], x[5:9]))
        lo, hi = nb.min(), nb.max()
        if lo <= c <= hi:
            return c
        elif c < lo:
            return lo
        else:
            return hi
""", hand=[[1, 2, 3, 4, -5, 6, 7, 8, 9], [1, 2, 3, 4, 50, 6, 7, 8, 9], [1, 2, 3, 4, 5.5, 6, 7, 8, 9]])

P("count_above_centre", "lambda v: (v > v[v.size // 2] + THRESHOLD).sum()", {"THRESHOLD": 0.25},
  kinds=("u", "n", "lab", "nan"))

P("is_strict_local_max", """
    def is_strict_local_max(w):
        c = w[w.shape[0] // 2]
        return float(c == w.max() and np.count_nonzero(w == c) == 1)
""", kinds=("u", "q", "lab", "nan"))

P("centre_rank", """
    def centre_rank(v):
        c = v[len(v) // 2]
        below = np.sum(v < c)
        ties = np.sum(v == c)
        return (below + 0.5 * (ties - 1)) / (len(v) - 1)
""", kinds=("u", "q", "lab", "nan", "sp"))

P("sigma_mean_extra_arg", """
    def sigma_mean(x, two_sigma):
        xc = x[x.shape[0] // 2]
        close = x[np.abs(x - xc) <= two_sigma]
        return np.mean(close) if len(close) >= MIN_COUNT else xc
""", {"two_sigma": 0.8, "MIN_COUNT": 4}, kinds=("n", "q", "nan", "sp"))

P("end_to_end_gradient", "lambda r: (r[-1] - r[0]) / (len(r) - 1)")

P("neighbour_agreement", """
    def neighbour_agreement(p):
        c = p[len(p) // 2]
        agree = 0
        disagree = 0
        for v in p:
            if v == c:
                continue
            if abs(v - c) < TOL:
                agree += 1
            else:
                disagree += 1
        return agree - disagree
""", {"TOL": 0.5}, kinds=("u", "q", "lab", "nan", "sp"))

# ===================================================================================================
# 4. Cellular automata and counting rules
# ===================================================================================================

P("game_of_life_int", """
    def game_of_life_int(cells):
        alive = int(cells[4])
        n = int(cells.sum()) - alive
        if alive == 1 and (n == 2 or n == 3):
            return 1
        elif alive == 0 and n == 3:
            return 1
        return 0
""", kinds=("bin",), sizes=(9,), hand=[[0, 1, 0, 0, 1, 0, 0, 1, 0], [0, 0, 0, 1, 0, 1, 0, 0, 1],
                                       [1, 1, 1, 1, 1, 1, 1, 1, 1], [0, 1, 0, 0, nan, 0, 0, 1, 0]])

P("majority_vote", "lambda c: 1.0 if 2 * np.count_nonzero(c) > c.size else 0.0", kinds=("bin", "lab", "nan"))

P("erode_all", "np.all(x > 0)", kinds=("bin", "lab", "u", "nan"))

P("dilate_any_method", "float(x.any())", kinds=("bin", "lab", "nan"), hand=[[0.0, -0.0, 0.0], [0.0, 5e-324]])

P("brians_brain", """
    def brians_brain(s):
        state = s[4]
        if state == 1:
            return 2.0
        if state == 2:
            return 0.0
        firing = 0
        for i, v in enumerate(s):
            if i != 4 and v == 1:
                firing += 1
        return 1.0 if firing == 2 else 0.0
""", kinds=("lab3",), sizes=(9, 25, 5), hand=[[1, 0, 1, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 1, 0, 0, 0, 0]])

P("parity_rule", "lambda b: int(b.sum()) % 2", kinds=("bin", "lab", "nan"))

P("cyclic_automaton", """
    def cyclic_automaton(s):
        k = s.astype(int)
        me = k[4]
        nxt = me + 1
        nxt %= STATES
        hits = np.sum(k == nxt)
        return nxt if hits >= THRESHOLD else me
""", {"STATES": 5, "THRESHOLD": 3}, kinds=("lab",), sizes=(9, 25, 5, 1),
  hand=[[1, 1, 1, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 4, 0, 0, 0, 0]])

P("label_mode", """
    def label_mode(v):
        labels = v.astype(int)
        best = 0
        best_count = -1
        for k in range(NLABELS):
            cnt = np.count_nonzero(labels == k)
            if cnt > best_count:
                best, best_count = k, cnt
        return best
""", {"NLABELS": 5}, kinds=("lab", "lab3"))

P("same_quarter_bin", "lambda v: np.count_nonzero((v * 4).astype(int) == int(v[4] * 4)) - 1",
  kinds=("u",), sizes=(9, 25, 5))

# ===================================================================================================
# 5. Weighted kernels
# ===================================================================================================

P("gaussian3_closure", "np.sum(x * GAUSS3)", {"GAUSS3": GAUSS3})

P("weighted_mean_extra_arg", """
    def weighted_mean(values, weights):
        return np.sum(values * weights) / weights.sum()
""", {"weights": CROSS_W})

P("weighted_mean_zip_nan", """
    def weighted_mean_zip_nan(values):
        acc = 0.0
        wsum = 0.0
        for v, w in zip(values, KERNEL):
            if np.isnan(v):
                continue
            acc += v * w
            wsum += w
        return acc / wsum if wsum > 0 else np.nan
""", {"KERNEL": RAMP5}, kinds=("u", "nan", "sp"), sizes=(5, 9, 25, 1, 0))

P("triangular_enumerate", """
    def triangular_enumerate(row):
        c = len(row) // 2
        num = 0.0
        den = 0.0
        for i, v in enumerate(row):
            wt = c + 1 - abs(i - c)
            num += wt * v
            den += wt
        return num / den
""", sizes=(9, 25, 5, 1))

P("bilateral_bound_sigma", """
    def bilateral(w, sigma_r=0.25):
        d = w - w[w.size // 2]
        k = np.exp(-(d * d) / (2.0 * sigma_r ** 2)) * SPATIAL
        return np.sum(k * w) / np.sum(k)
""", {"sigma_r": 0.5, "SPATIAL": SPATIAL3})

P("sobel_magnitude", """
    def sobel_magnitude(p):
        gx = (p[2] + 2 * p[5] + p[8]) - (p[0] + 2 * p[3] + p[6])
        gy = (p[6] + 2 * p[7] + p[8]) - (p[0] + 2 * p[1] + p[2])
        return math.hypot(gx, gy)
""", kinds=("u", "dem", "nan", "sp", "big"))

P("aspect_degrees", """
    def aspect_degrees(z):
        dzdx = ((z[2] + 2 * z[5] + z[8]) - (z[0] + 2 * z[3] + z[6])) / (8 * CELL)
        dzdy = ((z[6] + 2 * z[7] + z[8]) - (z[0] + 2 * z[1] + z[2])) / (8 * CELL)
        a = math.degrees(math.atan2(dzdy, -dzdx))
        if a < 0:
            a += 360.0
        return a
""", {"CELL": 30.0}, kinds=("dem", "q", "nan", "sp"))

P("slope_numpy", """
    def slope_numpy(z):
        dzdx = ((z[2] + 2 * z[5] + z[8]) - (z[0] + 2 * z[3] + z[6])) / 8.0
        dzdy = ((z[6] + 2 * z[7] + z[8]) - (z[0] + 2 * z[1] + z[2])) / 8.0
        return np.degrees(np.arctan(np.sqrt(dzdx ** 2 + dzdy ** 2)))
""", kinds=("dem", "u", "nan", "sp"))

P("hillshade", """
    def hillshade(z, azimuth=315.0, altitude=45.0):
        zenith = math.radians(90.0 - altitude)
        az = math.radians(360.0 - azimuth + 90.0)
        dzdx = ((z[2] + 2 * z[5] + z[8]) - (z[0] + 2 * z[3] + z[6])) / 8.0
        dzdy = ((z[6] + 2 * z[7] + z[8]) - (z[0] + 2 * z[1] + z[2])) / 8.0
        slope = math.atan(math.sqrt(dzdx * dzdx + dzdy * dzdy))
        aspect = math.atan2(dzdy, -dzdx)
        shade = math.cos(zenith) * math.cos(slope) + math.sin(zenith) * math.sin(slope) * math.cos(az - aspect)
        return max(0.0, 255.0 * shade)
""", {"altitude": 30.0}, kinds=("dem", "u", "nan", "sp"))

P("laplacian_cross", "lambda p: p[1] + p[3] + p[5] + p[7] - 4 * p[4]", kinds=("u", "dem", "nan", "sp"))

P("edge_preserving_weights", """
    def edge_preserving_weights(x):
        c = x[4]
        w = 1.0 / (1.0 + np.abs(x - c) / SCALE)
        return np.sum(w * x) / np.sum(w)
""", {"SCALE": 0.2})

# ===================================================================================================
# 6. Loops, early exits and small algorithms
# ===================================================================================================

P("loop_extremes_skip_nan", """
    def loop_extremes_skip_nan(values):
        lo = math.inf
        hi = -math.inf
        for v in values:
            if v != v:
                continue
            if v < lo:
                lo = v
            if v > hi:
                hi = v
        return hi - lo
""", kinds=("u", "n", "nan", "sp"))

P("rms_newton_while", """
    def rms_newton_while(values):
        m = np.mean(values * values)
        if not m > 0:
            return 0.0 if m == 0 else np.nan
        if np.isinf(m):
            return m
        g = m if m > 1 else 1.0
        it = 0
        while it < 60:
            nxt = 0.5 * (g + m / g)
            if abs(nxt - g) <= 1e-15 * nxt:
                g = nxt
                break
            g = nxt
            it += 1
        return g
""", kinds=("u", "n", "nan", "sp", "big"))

P("longest_run_above", """
    def longest_run_above(v):
        best = 0
        run = 0
        for a in v:
            if a > LEVEL:
                run += 1
                if run > best:
                    best = run
            else:
                run = 0
        return best
""", {"LEVEL": 0.3}, kinds=("u", "n", "nan", "sp"))

P("nearest_valid_outward", """
    def nearest_valid_outward(w):
        c = len(w) // 2
        d = 0
        while d <= c:
            if not np.isnan(w[c - d]):
                return w[c - d]
            if c + d < len(w) and not np.isnan(w[c + d]):
                return w[c + d]
            d += 1
        return np.nan
""", kinds=("nan", "u"), hand=[[nan, nan, 3.0, nan, nan], [1.0, nan, nan, nan, nan, nan, nan], [nan, nan]])

P("alternating_sums_range_step", """
    def alternating_sums_range_step(x):
        even = 0.0
        odd = 0.0
        for i in range(0, len(x), 2):
            even += x[i]
        for i in range(1, len(x), 2):
            odd -= x[i]
        return even + odd
""")

P("last_finite_reverse", """
    def last_finite_reverse(x):
        for i in range(len(x) - 1, -1, -1):
            if np.isfinite(x[i]):
                return x[i]
        return 0.0
""", kinds=("nan", "sp", "u"))

P("first_drop_index", """
    def first_drop_index(v):
        for i in range(1, len(v)):
            if v[i] < v[i - 1] - DROP:
                return i
        return -1
""", {"DROP": 0.5}, kinds=("u", "n", "q", "nan"))

P("median_of_three_swaps", """
    def median_of_three_swaps(x):
        a, b, c = x[3], x[4], x[5]
        if a > b:
            a, b = b, a
        if b > c:
            b, c = c, b
        if a > b:
            a, b = b, a
        return b
""", kinds=("u", "q", "nan", "sp"), hand=[[0, 0, 0, 3, 1, 2, 0, 0, 0], [0, 0, 0, 1, 3, 2, 0, 0, 0]])

P("classify_texture_elif", """
    def classify_texture_elif(v):
        s = np.std(v)
        m = np.mean(v)
        if np.isnan(s):
            return -1
        elif s < 0.1 * abs(m):
            return 0
        elif s < 0.5 * abs(m):
            return 1
        elif s < abs(m):
            return 2
        else:
            return 3
""", kinds=("pos", "u", "n", "nan", "sp"))

P("sign_changes_zip_chained", """
    def sign_changes_zip_chained(row):
        n = 0
        for a, b in zip(row[:-1], row[1:]):
            if a < 0 < b or a > 0 > b:
                n += 1
        return n
""", kinds=("n", "q", "nan", "sp"))

P("kahan_mean", """
    def kahan_mean(values):
        s = 0.0
        comp = 0.0
        for v in values:
            y = v - comp
            t = s + y
            comp = (t - s) - y
            s = t
        return s / len(values) if len(values) else np.nan
""", kinds=("u", "n", "nan", "sp"))

P("leading_sum_while_true", """
    def leading_sum_while_true(x):
        i = 0
        total = 0.0
        while True:
            if i >= len(x):
                break
            v = x[i]
            i += 1
            if v < 0:
                continue
            if np.isnan(v):
                break
            total += v
        return total
""", kinds=("n", "nan", "sp"))

P("multiscale_halving", """
    def multiscale_halving(x):
        acc = 0.0
        step = len(x) // 2
        while step >= 1:
            acc += abs(x[step] - x[0]) / step
            step //= 2
        return acc
""")

P("loop_product_scaled", """
    def loop_product_scaled(values):
        p = 1.0
        for v in values:
            p *= 1.0 + v
            p /= 2.0
        return p
""", kinds=("u", "q", "nan", "sp"))

# ===================================================================================================
# 7. Math functions and constants
# ===================================================================================================

P("log_sum_exp", """
    def log_sum_exp(v):
        m = np.max(v)
        if np.isinf(m):
            return m
        return m + math.log(np.sum(np.exp(v - m)))
""", kinds=("n", "u", "nan", "sp", "big"))

P("circular_mean_deg", """
    def circular_mean_deg(a):
        r = np.radians(a)
        return np.degrees(np.arctan2(np.mean(np.sin(r)), np.mean(np.cos(r))))
""", kinds=("deg", "nan", "sp"))

P("angular_spread_clip", """
    def angular_spread_clip(c):
        cc = np.clip(c, -1.0, 1.0)
        return np.max(np.arccos(cc)) - np.min(np.arcsin(cc)) + np.arctan(np.mean(cc))
""", kinds=("n", "u", "nan", "sp"))

P("phase_math_asin_acos", """
    def phase_math_asin_acos(v):
        # raises ValueError (math domain error) when the centre leaves [-1, 1]
        s = math.asin(v[4])
        c = math.acos(v[4] / 2.0)
        return math.atan(s) + c - math.pi / 2
""", kinds=("u", "n", "nan"))

P("soft_activation_hyperbolic", """
    def soft_activation_hyperbolic(v):
        m = np.mean(v)
        s = math.sinh(m) / math.cosh(m)
        return s - np.tanh(m) + np.sinh(v[0]) / np.cosh(v[0]) + math.tanh(v[-1])
""", kinds=("u", "n", "nan", "sp", "big"))

P("quantize_centre_floor_ceil", """
    def quantize_centre_floor_ceil(v):
        c = v[4]
        lo = math.floor(c / STEP) * STEP
        hi = math.ceil(c / STEP) * STEP
        return lo if c - lo <= hi - c else hi
""", {"STEP": 0.25}, kinds=("u", "n", "q", "nan", "sp"))

P("rounding_asymmetry_np", "lambda v: np.sum(np.floor(v)) + np.sum(np.ceil(v)) - 2 * np.sum(np.trunc(v))",
  kinds=("n", "q", "nan", "sp"))

P("integer_part_math_trunc", """
    def integer_part_math_trunc(v):
        c = v[len(v) // 2]
        whole = math.trunc(c)
        return whole + math.fabs(c - whole)
""", kinds=("n", "q", "nan", "sp"))

P("directional_strength", """
    def directional_strength(p):
        gx = p[5] - p[3]
        gy = p[7] - p[1]
        mag = math.hypot(gx, gy)
        return math.copysign(mag, gx) if math.fabs(gx) >= math.fabs(gy) else np.copysign(mag, gy)
""", kinds=("n", "q", "nan", "sp"))

P("profile_length_hypot", "lambda z: np.sum(np.hypot(z[1:] - z[:-1], SPACING))", {"SPACING": 2.0},
  kinds=("dem", "u", "nan", "sp", "big"))

P("local_entropy_log2", """
    def local_entropy_log2(v):
        p = np.abs(v)
        total = p.sum()
        if total == 0:
            return 0.0
        p = p[p > 0] / total
        return -np.sum(p * np.log2(p))
""", kinds=("u", "lab", "nan", "sp"))

P("power_decibels", "10.0 * np.log10(np.mean(x * x) + 1e-12)", kinds=("u", "n", "nan", "sp"))

P("log_ratio_math", "math.log10(np.max(x) / np.min(x)) + math.log2(len(x))", kinds=("pos", "u", "n", "nan"))

P("log1p_expm1_softmax", "np.log1p(np.mean(np.expm1(x)))", kinds=("u", "n", "nan", "sp"))

P("math_log1p_expm1_centre", """
    def math_log1p_expm1_centre(v):
        c = v[4]
        return math.expm1(math.log1p(abs(c))) - abs(c) + math.log(np.sum(np.abs(v)) + math.e)
""", kinds=("u", "n", "nan", "sp"))

P("tangent_mix", """
    def tangent_mix(v):
        t = math.tan(v[0]) + np.tan(v[-1])
        return np.arctan(t) / np.pi + math.atan(v[4])
""", kinds=("u", "n", "nan", "sp"))

P("power_mean", """
    def power_mean(v):
        m = np.mean(np.abs(v) ** P)
        return math.pow(m, 1.0 / P) + pow(abs(v[0]), 0.5) - np.pow(np.abs(v[-1]), 0.5) + 2 ** -1
""", {"P": 3.0}, kinds=("u", "n", "nan", "sp"))

P("sign_vs_median", "lambda v: np.sign(v[len(v) // 2] - np.median(v))", kinds=("u", "q", "nan", "sp"))

P("special_census", """
    def special_census(v):
        n_nan = np.count_nonzero(np.isnan(v))
        n_inf = np.sum(np.isinf(v))
        n_pos_inf = 0
        n_tiny = 0
        for a in v:
            if math.isinf(a) and a > 0:
                n_pos_inf += 1
            elif math.isfinite(a) and a != 0 and abs(a) < 2.2250738585072014e-308:
                n_tiny += 1
        return 1000 * n_nan + 100 * n_inf + 10 * n_pos_inf + n_tiny
""", kinds=("sp", "nan", "u"))

P("constants_mix", """
    def constants_mix(v):
        c = v[4]
        if c == np.inf or c == -math.inf:
            return math.nan
        if np.isnan(c):
            return np.e
        return c * math.pi / 180.0 + np.pi - math.e
""", kinds=("sp", "nan", "u"))

# ===================================================================================================
# 8. Casts, builtins and operators
# ===================================================================================================

P("int_float_bool_casts", """
    def int_float_bool_casts(v):
        c = int(v[4])
        return float(c % 2 == 0) + bool(v[0]) + float(c)
""", kinds=("n", "q", "nan", "sp"))

P("round_builtin", "lambda v: round(np.mean(v), 2) + round(v[len(v) // 2])",
  kinds=("u", "n", "q", "nan", "sp"), hand=[[0.5], [1.5], [2.5], [-0.5], [-1.5], [0.125, 2.5, 0.0]])

P("builtin_max_minus_min", "max(x) - min(x)",
  hand=[[nan, 1.0, 2.0], [1.0, nan, 2.0], [1.0, 2.0, nan], [2.0, nan, 1.0], [-0.0, 0.0], [0.0, -0.0]])

P("builtin_min_expr", "min(x)", kinds=("u", "nan", "sp"),
  hand=[[nan, 3.0, 1.0], [3.0, nan, 1.0], [3.0, 1.0, nan], [inf, nan, -inf], [-0.0, 0.0]])

P("builtin_min_pair_order", """
    def builtin_min_pair_order(v):
        a = v[0]
        b = v[-1]
        return min(a, b) + 10.0 * max(b, a)
""", kinds=("u", "nan", "sp"), hand=[[nan, 1.0], [1.0, nan], [nan, nan]])

P("mean_abs_deviation_builtins", """
    def mean_abs_deviation_builtins(v):
        m = sum(v) / len(v)
        return sum(abs(v - m)) / len(v)
""", sizes=(9, 25, 5, 1))

P("any_all_builtins", "lambda v: any(v > HIGH) and not all(v > LOW)", {"HIGH": 0.8, "LOW": 0.1},
  kinds=("u", "n", "nan", "sp"))

P("floor_div_mod_phase", """
    def floor_div_mod_phase(v):
        d = v[-1] - v[0]
        turns = d // PERIOD
        phase = d % PERIOD
        return phase - PERIOD / 2 + turns
""", {"PERIOD": 0.75}, kinds=("n", "q", "nan", "sp"))

P("centroid_offset_int_ops", """
    def centroid_offset_int_ops(p):
        side = int(math.sqrt(len(p)))
        total = 0.0
        cx = 0.0
        cy = 0.0
        for i in range(side * side):
            r = i // side - side // 2
            c = i % side - side // 2
            total += p[i]
            cx += c * p[i]
            cy += r * p[i]
        if total == 0:
            return 0.0
        return math.sqrt(cx ** 2 + cy ** 2) / total
""", kinds=("u", "pos", "nan", "sp"))

P("band_mean_masks", """
    def band_mean_masks(x):
        inside = (x >= LOW) & (x <= HIGH)
        outside = ~inside | np.isnan(x)
        return np.where(inside, x, 0.0).sum() / max(1, np.count_nonzero(inside)) - 0.001 * np.count_nonzero(outside)
""", {"LOW": 0.2, "HIGH": 0.7})

P("winsorized_mean_clip", "lambda v: np.clip(v, np.percentile(v, 10), np.percentile(v, 90)).mean()")

P("vertical_curvature_slices", """
    def vertical_curvature_slices(x):
        top = x[:3].mean()
        mid = x[3:6].mean()
        bottom = x[-3:].mean()
        return top - 2 * mid + bottom
""", kinds=("u", "dem", "nan", "sp"))

P("checker_slices_step", "lambda v: np.sum(v[::2]) - np.sum(v[1::2]) + 0.5 * (v[::-1][0] - v[0])")

P("numpy_prefix_import", """
    import numpy

    def numpy_prefix_import(x):
        return numpy.mean(x) - numpy.median(x)
""")

P("import_as_np_def", """
    import numpy as np

    def import_as_np_def(values):
        "Robust local scale: 1.4826 * median absolute deviation."
        med = np.median(values)
        return 1.4826 * np.median(np.abs(values - med))
""")

P("chained_band_count", """
    def chained_band_count(v):
        n = 0
        for a in v:
            if LOW < a <= HIGH:
                n += 1
            elif a <= LOW or a != a:
                n -= 1
        return n
""", {"LOW": -0.5, "HIGH": 0.5}, kinds=("n", "q", "nan", "sp"))

P("ternary_nested", "lambda v: v[0] if v[0] > v[-1] else (v[-1] if v[-1] > 0 else -v[-1])",
  kinds=("n", "q", "nan", "sp"))

P("masked_median_threshold", "np.median(x[x > T]) if np.any(x > T) else np.nan", {"T": 0.5})

P("variance_without_centre", "lambda w: np.var(np.delete(w, IDX)) / (np.var(w) + EPS)", {"IDX": 4, "EPS": 1e-12},
  hand=[[1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0, 5.0]])

P("int_power_and_neg_int", """
    def int_power_and_neg_int(v):
        k = len(v)
        scale = 2 ** -k + k ** 2 - k % 4 - (-k) // 3 - (-k) % 3
        return scale * v.min() + (v ** 2).sum()
""", sizes=(9, 25, 5, 1, 0))


# ===================================================================================================
# 9. Python's own semantics where they differ from NumPy's
# ===================================================================================================

P("builtin_sum_in_order", "lambda v: sum(v) - np.sum(v) + 1e-3 * sum(v[:0]) + 1e-6 * v.sum()",
  hand=[[1e16] + [1.0] * 8 + [-1e16], [-0.0], [1e16, 1.0, -1e16], [1.0] * 7 + [1e16, -1e16]])

# (A negative base with a fractional exponent gives a complex number in Python: see tests/semantics.rs.)
P("python_float_power", "lambda v: float(v[0]) ** float(v[-1]) + np.abs(v[0] ** v[-1]) * 0.0",
  kinds=("pos",), sizes=(2, 5), auto=False,
  hand=[[0.0, -1.0], [-0.0, -3.0], [10.0, 400.0], [2.0, -2.0], [-2.0, 3.0], [inf, -1.0], [0.0, 2.0]])

P("math_pow_errors", "lambda v: math.pow(v[0], v[-1])", kinds=("n", "q", "sp"), sizes=(2, 5),
  hand=[[0.0, -1.0], [-0.0, -3.0], [10.0, 400.0], [2.0, 0.5], [-2.0, 0.5], [-2.0, 3.0]])

# Python ints near the 64-bit edges (results past them raise in ndjit: see tests/semantics.rs).
P("python_int_exact", """
    def python_int_exact(v):
        a = int(v[0])
        b = int(v[-1])
        n = 0
        for w in v:
            if w > 0:
                n = n * 3 + 1
        return (a * b) % 1000003 + (a >> 70) - (len(v) ** 19) % 1009 + abs(-a) // 7 + (n << 40) % 997
""", kinds=("n", "q", "lab"), sizes=(9, 5, 1),
  hand=[[3e9, -3e9], [-3e9, 3e9], [4611686018427387904.0, 1.0], [-9.2e18, 1.0], [2.5e9, 3.6e9]])

P("numpy_int_wraps", "lambda v: float(v.astype(int)[0] * v.astype(int)[-1]) + (v.astype(int)[0] << 70)",
  kinds=("n", "lab"), sizes=(2, 5),
  hand=[[3e9, 4e9], [inf, 1.0], [nan, 1.0], [1e19, 1.0], [-1e19, 2.0], [9.3e18, -1.0]])

P("python_round_digits", "lambda v: round(float(v[0]), 2) + 1000 * round(float(v[-1]), -1) + 1e6 * round(v[0], 2)",
  kinds=("u", "n", "q", "sp"), sizes=(1, 2, 5),
  hand=[[2.675, 25.0], [0.125, 35.0], [1.005, -15.0], [-2.675, 5.0], [0.285, 45.0], [1.115, -25.0]])

P("numpy_sign_zero", "lambda v: 1.0 / np.sign(v[0]) + np.sign(v).sum()", kinds=("q", "sp"),
  hand=[[-0.0, 1.0], [0.0, -0.0], [nan, 1.0]])

# --- added by callbacks ---
# Issue 15: the callbacks people write. Rebinding a parameter and writing into the window (the
# buffer is the callback's own copy for each pixel).

P("cb_majority_astype_int", """
    def cb_majority_astype_int(values):
        values = values.astype(int)
        return np.bincount(values).argmax()
""", kinds=("lab", "lab3"), sizes=(9, 5, 1))

P("cb_rebind_reshape_rows", """
    def cb_rebind_reshape_rows(w):
        w = w.reshape(3, 3)
        return w[0, 0] + 2 * w[1, 1] - w[2, 2]
""", sizes=(9,))

P("cb_rebind_finite_only", """
    def cb_rebind_finite_only(x):
        x = x[np.isfinite(x)]
        if x.size == 0:
            return np.nan
        return x.mean()
""", kinds=("nan", "sp", "u"))

P("cb_clip_outliers_in_window", """
    def cb_clip_outliers_in_window(arr, t=0.8):
        arr[arr > t] = 0
        return arr.sum()
""")

P("cb_zero_centre_then_max", """
    def cb_zero_centre_then_max(buf):
        buf[len(buf) // 2] = 0
        return buf.max()
""", sizes=(9, 25, 5, 1))

P("cb_fixed_index_write", """
    def cb_fixed_index_write(buf):
        buf[4] = 0
        return np.median(buf)
""", sizes=(9, 5, 3), hand=[[1, 2, 3]])

P("cb_augmented_store_loop", """
    def cb_augmented_store_loop(w):
        for i in range(len(w)):
            w[i] *= 2
            w[i] -= 1
        return w.sum() - w[-1]
""")

P("cb_inplace_scale_window", """
    def cb_inplace_scale_window(w):
        m = w.mean()
        w -= m
        w /= 2
        return np.abs(w).max()
""")

P("cb_nan_fill_then_mean", """
    def cb_nan_fill_then_mean(v):
        v[np.isnan(v)] = np.nanmean(v) if not np.isnan(v).all() else 0.0
        return v.mean()
""", kinds=("nan", "u", "sp"))

P("cb_rebind_twice_types", """
    def cb_rebind_twice_types(values):
        values = values * 10
        values = values.astype(int)
        values = values % 7
        return float(values.sum()) / len(values) if len(values) else -1.0
""", kinds=("u", "n", "q", "sp"))

P("cb_rebind_in_branch", """
    def cb_rebind_in_branch(x):
        if x[0] > 0.5:
            x = x * 2
        return x.sum()
""")

P("cb_scalar_param_rebind", """
    def cb_scalar_param_rebind(x, k=2):
        k = int(k) + 1
        x = np.sort(x)
        return x[-min(k, len(x))] if len(x) else 0.0
""", {"k": 3})

# raise and assert: the same exception class and message at run time.

P("cb_raise_on_nan_window", """
    def cb_raise_on_nan_window(w):
        if np.isnan(w).any():
            raise ValueError("window contains NaN")
        return w.max() - w.min()
""", kinds=("nan", "u"))

P("cb_assert_window_size", """
    def cb_assert_window_size(w):
        assert len(w) == 9, "expected a 3x3 window"
        return w[4] - w.mean()
""", sizes=(9, 5))

P("cb_assert_no_message", """
    def cb_assert_no_message(w):
        assert w.min() >= 0
        return np.sqrt(w).sum()
""", kinds=("u", "n"))

P("cb_raise_bare_class", """
    def cb_raise_bare_class(w):
        total = w.sum()
        if total > 6:
            raise OverflowError
        return total
""", kinds=("u", "pos"))

# Helper functions, inlined at compile time: module-level functions (the filter comes first), lambdas
# assigned at the top level, chains of helpers, helpers with loops and early returns.

P("cb_helper_clamp", """
    def cb_helper_clamp(w):
        return cb_clamp_value(w.mean(), 0.2, 0.7)

    def cb_clamp_value(v, lo, hi):
        return min(max(v, lo), hi)
""")

P("cb_helper_lambda_square", """
    def cb_helper_lambda_square(w):
        return cb_sq(w[0]) + cb_sq(w[-1]) if len(w) else 0.0

    cb_sq = lambda v: v * v
""")

P("cb_helper_chain_zscore", """
    def cb_helper_chain_zscore(w):
        return cb_zscore_of(w, len(w) // 2)

    def cb_zscore_of(a, i):
        s = cb_spread(a)
        return (a[i] - a.mean()) / s if s > 0 else 0.0

    def cb_spread(a):
        return a.std()
""")

P("cb_helper_first_above_loop", """
    def cb_helper_first_above_loop(w):
        return cb_first_above(w, 0.5) + 10 * cb_first_above(w, 0.9)

    def cb_first_above(a, t):
        for i in range(len(a)):
            if a[i] > t:
                return i
        return -1
""")

P("cb_helper_nested_loops_return", """
    def cb_helper_nested_loops_return(w):
        return cb_pair_sum_index(w, 1.0)

    def cb_pair_sum_index(a, target):
        n = len(a)
        for i in range(n):
            for j in range(i + 1, n):
                if a[i] + a[j] > target:
                    return i * 100 + j
        return -1
""", kinds=("u", "q"))

P("cb_helper_keyword_default", """
    def cb_helper_keyword_default(w):
        return cb_trimmed(w) + cb_trimmed(w, k=2)

    def cb_trimmed(a, k=1):
        s = np.sort(a)
        if len(s) <= 2 * k:
            return np.nan
        return s[k:len(s) - k].mean()
""", hand=[[1, 2, 3, 4, 5]])

P("cb_helper_returns_array", """
    def cb_helper_returns_array(w):
        d = cb_deviations(w)
        return d.max()

    def cb_deviations(a):
        return np.abs(a - np.median(a))
""", sizes=(9, 25, 5, 1))

P("cb_helper_if_else_returns", """
    def cb_helper_if_else_returns(w):
        c = w[len(w) // 2]
        return cb_classify(c) * 10 + cb_classify(w.mean())

    def cb_classify(v):
        "0 below, 1 inside, 2 above the band"
        if v < 0.25:
            return 0
        elif v > 0.75:
            return 2
        else:
            return 1
""", sizes=(9, 5, 1))

P("cb_helper_alias_passed", """
    def cb_helper_alias_passed(w):
        return cb_apply(cb_range_of, w) + cb_apply(cb_mid_of, w)

    def cb_apply(func, a):
        return func(a)

    def cb_range_of(a):
        return a.max() - a.min()

    def cb_mid_of(a):
        return (a.max() + a.min()) / 2
""")

P("cb_helper_uses_global", """
    def cb_helper_uses_global(w):
        return cb_scaled_sum(w) - w.sum()

    def cb_scaled_sum(a):
        return (a * CB_GAIN).sum()
""", {"CB_GAIN": 1.5})

P("cb_helper_raises", """
    def cb_helper_raises(w):
        return cb_checked_log(w.min())

    def cb_checked_log(v):
        if v <= 0:
            raise ValueError("log of a non-positive value")
        return math.log(v)
""", kinds=("u", "pos", "n"))

# Strings folded at compile time, tuples as values, `in` over literal lists, annotations.

P("cb_method_string_default", """
    def cb_method_string_default(w, method="median"):
        if method == "mean":
            return w.mean()
        elif method in ("median", "med"):
            return np.median(w)
        else:
            raise ValueError("unknown method")
""")

P("cb_method_string_not_equal", """
    def cb_method_string_not_equal(w, mode='max'):
        if mode != 'max':
            return w.min()
        return w.max() if mode not in ['min'] else 0.0
""")

P("cb_tuple_bounds_indexed", """
    def cb_tuple_bounds_indexed(w):
        bounds = (0.25, 0.75)
        return np.clip(w, bounds[0], bounds[1]).mean() + bounds[-1]
""")

P("cb_tuple_unpack_literal", """
    def cb_tuple_unpack_literal(w):
        lo, hi = (0.2, 0.8)
        inside = w[(w >= lo) & (w <= hi)]
        return inside.size / w.size if w.size else 0.0
""")

P("cb_tuple_returned_by_helper", """
    def cb_tuple_returned_by_helper(w):
        m, s = cb_mean_std(w)
        return (w[len(w) // 2] - m) / s if s > 0 else 0.0

    def cb_mean_std(a):
        return a.mean(), a.std()
""")

P("cb_tuple_loop_offsets", """
    def cb_tuple_loop_offsets(w):
        offsets = (1, 3, 5, 7)
        total = 0.0
        for i in offsets:
            total += w[i]
        return total / len(offsets)
""", sizes=(9,))

P("cb_in_literal_list", """
    def cb_in_literal_list(w):
        c = w[len(w) // 2]
        return 1.0 if c in [0.0, 1.0] else (2.0 if c not in (3.0, 4.0) else 3.0)
""", kinds=("lab", "bin", "q"))

P("cb_annotated_filter", """
    def cb_annotated_filter(w: np.ndarray, k: int = 2) -> float:
        total: float = 0.0
        for v in np.sort(w)[-k:]:
            total += v
        return total
""")

P("cb_typing_cast", """
    import typing
    from typing import cast

    def cb_typing_cast(w: np.ndarray) -> float:
        m = typing.cast(float, w.mean())
        return cast("float", m * 2) - w[0]
""")
# --- added by numpy ---
# NumPy's array functions as majority, entropy and texture filters use them (issue 15, item 7).

P("majority_unique_counts", """
    def majority(values):
        vals, counts = np.unique(values, return_counts=True)
        return vals[np.argmax(counts)]
""", kinds=("lab", "lab3", "q", "nan", "sp"), hand=[[-0.0, 0.0, 1.0], [0.0, -0.0, 2.0, 2.0], [nan, nan, 1.0]])

P("unique_first_index", """
    def first_seen(w):
        vals, first = np.unique(w, return_index=True)
        return first.sum() + 100.0 * vals[-1] + len(vals)
""", kinds=("lab3", "q", "nan", "sp"), hand=[[2.0, 1.0, 2.0, nan, 1.0, nan], [-0.0, 0.0]])

P("unique_count_labels", "lambda x: len(np.unique(x))", kinds=("lab", "q", "nan", "sp"))

P("unique_inverse_centre", """
    def rank_of_centre(w):
        vals, inv = np.unique(w, return_inverse=True)
        return inv[len(w) // 2] + 10 * vals.size
""", kinds=("lab", "q", "nan", "sp"))

P("unique_all_outputs", """
    def unique_all(w):
        u, i, inv, c = np.unique(w, return_index=True, return_inverse=True, return_counts=True)
        return float(u @ c) + i.max() - inv.min() + c.max()
""", kinds=("lab3", "q", "nan"))

P("unique_nan_kept_apart", "lambda w: len(np.unique(w, equal_nan=False)) - len(np.unique(w))",
  kinds=("nan", "sp", "lab"))

P("unique_of_ints", """
    def label_diversity(w):
        labels = np.unique(w.astype(int))
        return labels.max() - labels.min() + labels.size
""", kinds=("lab", "q", "n"))

P("where_one_argument", """
    def bright_positions(w):
        idx = np.where(w > 0.5)[0]
        if len(idx) == 0:
            return -1.0
        return idx.sum() / len(idx)
""", kinds=("u", "nan", "sp"))

P("nonzero_first_index", "lambda x: float(np.nonzero(x)[0][0]) if np.count_nonzero(x) else np.nan",
  kinds=("bin", "q", "sp"), hand=[[0.0, -0.0, nan], [0.0, 0.0]])

P("argwhere_rows", "lambda x: np.argwhere(x > 0).sum() + len(np.argwhere(x > 0))", kinds=("q", "n", "sp"))

P("argwhere_2d", """
    def mass_centre(w):
        pts = np.argwhere(w.reshape(3, 3) > 0)
        if len(pts) == 0:
            return 0.0
        return pts[:, 0].mean() * 10 + pts[:, 1].mean()
""", kinds=("q", "n", "bin"), sizes=(9,))

P("nonzero_2d_tuple", """
    def spread(w):
        rows, cols = np.nonzero(w.reshape(3, 3))
        return float(rows.sum() * 100 + cols.sum()) + 0.5 * len(rows)
""", kinds=("bin", "q"), sizes=(9,))

P("fancy_index_list", "lambda x: x[[0, 2, -1]].sum() - x[[1]][0]", kinds=("n", "q", "sp"), sizes=(9, 25, 5, 2))

P("fancy_index_from_mask", "lambda x: x[np.nonzero(x > 0)].mean() if np.any(x > 0) else 0.0",
  kinds=("n", "q", "sp"))

P("fancy_index_flatnonzero", """
    def above_median(w):
        idx = np.flatnonzero(w > np.median(w))
        return w[idx].sum() + idx.size
""", kinds=("n", "q", "u"))

P("histogram_bound_bins_entropy", """
    def local_entropy(values):
        hist, _ = np.histogram(values, bins=NBINS, range=(0.0, 1.0))
        p = hist / len(values)
        p = p[p > 0]
        return -np.sum(p * np.log2(p))
""", {"NBINS": 8}, kinds=("u", "nan"), sizes=(9, 25, 5, 1))

P("histogram_auto_range_mode", """
    def histogram_mode(w):
        hist, edges = np.histogram(w, bins=NB)
        k = np.argmax(hist)
        return 0.5 * (edges[k] + edges[k + 1])
""", {"NB": 5}, kinds=("n", "u", "q", "sp"), hand=[[1.0, 1.0, 1.0], [0.1, 0.2, 0.30000000000000004]])

P("histogram_edges_list", """
    def coarse_classes(w):
        counts, edges = np.histogram(w, bins=[-1.0, -0.5, 0.0, 0.5, 1.0])
        return counts[0] + 10 * counts[1] + 100 * counts[2] + 1000 * counts[3] + edges[-1]
""", kinds=("q", "n", "sp"), hand=[[1.0, -1.0, 0.0, -0.0, nan, 0.5]])

P("histogram_edges_bound", "lambda w: np.histogram(w, EDGES)[0].argmax() + np.histogram(w, EDGES)[0].max()",
  {"EDGES": [0.0, 0.1, 0.3, 0.7, 1.0]}, kinds=("u", "nan"))

P("axis_sum_columns", "lambda w: w.reshape(3, 3).sum(axis=0)[2] - w.reshape(3, 3).sum(axis=0)[0]",
  kinds=("n", "q", "sp", "dem"), sizes=(9,), hand=[[-0.0] * 9, [1e16, 1.0, -1.0, 1.0, 1.0, 1.0, -1e16, 1.0, 1.0]])

P("axis_mean_rows", "lambda w: np.mean(w.reshape(3, 3), axis=1).max() - np.mean(w.reshape(3, -1), axis=-1).min()",
  kinds=("n", "nan", "dem"), sizes=(9,))

P("axis_std_5x5", """
    def column_texture(w):
        m = w.reshape(5, 5)
        return m.std(axis=0).mean() + m.var(axis=1, ddof=1).max()
""", kinds=("n", "dem", "nan"), sizes=(25,))

P("axis_extremes_and_median", """
    def row_contrast(w):
        m = w.reshape(3, 3)
        return (m.max(axis=0) - m.min(axis=0)).sum() + np.median(m, axis=1)[1] + np.nanmean(m, axis=0)[0]
""", kinds=("n", "q", "nan", "sp"), sizes=(9,))

P("axis_argmax_any", """
    def strongest_row(w):
        m = w.reshape(3, 3)
        return float(np.argmax(m.sum(axis=1))) + 10 * np.any(m > 1.0, axis=0).sum() + np.ptp(m, axis=1)[0]
""", kinds=("n", "q"), sizes=(9,))

P("norm_default", "lambda x: np.linalg.norm(x - x.mean())", kinds=("n", "u", "sp", "big"))

P("norm_orders", "lambda x: np.linalg.norm(x, 1) + 10 * np.linalg.norm(x, np.inf) + np.linalg.norm(x, ord=0) - np.linalg.norm(x, -np.inf)",
  kinds=("n", "q", "sp"), sizes=(9, 25, 5, 1))

P("norm_inf_of_the_rest", "lambda x: np.linalg.norm(x[1:], np.inf) + np.linalg.norm(x[:0]) + np.linalg.norm(x[:0], 1)",
  kinds=("n", "sp"), sizes=(9, 5, 1))

P("norm_frobenius", "lambda x: np.linalg.norm(x.reshape(3, 3)) + np.linalg.norm(x.reshape(3, 3), 'fro')",
  kinds=("n", "sp"), sizes=(9,))

P("matmul_weights", "lambda x: x @ W", {"W": GAUSS3}, kinds=("n", "u", "sp"), sizes=(9, 5))

# Products of float matrices are refused (NumPy's gemm/gemv order): the sums written out, and
# products of integer matrices, which add exactly in any order.
P("matmul_rows_as_sums", """
    def sobel_like(w):
        m = w.reshape(3, 3)
        gx = np.sum(m * np.array([-1.0, 0.0, 1.0]), axis=1)
        gy = m[2] - m[0]
        return np.hypot(gx @ np.array([1.0, 2.0, 1.0]), gy @ np.array([1.0, 2.0, 1.0]))
""", kinds=("n", "dem", "q"), sizes=(9,))

P("matmul_integer_matrices", """
    def f(w):
        k = (w * 4.0).astype(np.int64).reshape(3, 3)
        return float((k @ k)[1, 2] + (k @ k.T)[0, 0] + (k.T @ k[0])[2])
""", kinds=("n", "q"), sizes=(9,))

P("r_without_centre", "lambda x: np.r_[x[:len(x) // 2], x[len(x) // 2 + 1:]].std()", kinds=("n", "u", "nan"))

P("r_numbers_and_arrays", "lambda x: np.r_[x[0], x, 0.0, [1.0, 2.0]].mean() + np.r_[x].size", kinds=("n", "q"))

P("r_index_ranges", "lambda x: x[np.r_[0:3, 6:9]].sum() - x[np.r_[1:8:3]].max()",
  kinds=("n", "q"), sizes=(9,))

P("cumsum_running_max", "lambda x: np.cumsum(x).max() - x.cumsum()[0]", kinds=("n", "q", "sp"),
  hand=[[-0.0, -0.0], [1e16, 1.0, -1e16]])

P("cumprod_growth", "lambda x: np.cumprod(1.0 + 0.1 * x)[-1] + np.cumsum(x > 0)[-1]", kinds=("n", "q", "nan"))

P("isin_class_list", "lambda x: np.isin(x, [0.0, 1.0, 2.0]).sum() + np.isin(x[0], (3, 4))", kinds=("lab", "q", "nan"))

P("isin_bound_labels", "lambda x: np.mean(np.isin(x, LABELS, invert=True))", {"LABELS": [1.0, 3.0, -0.0]},
  kinds=("lab", "q", "nan"))

P("roll_differences", "lambda x: np.abs(x - np.roll(x, 1)).max() + np.roll(x, -2)[0] + np.roll(x, 11)[1]",
  kinds=("n", "q", "sp"))

P("histogram_linspace_edges", """
    def band_counts(w):
        counts, edges = np.histogram(w, bins=np.linspace(0.0, 1.0, 6))
        return counts.argmax() + 10 * counts.max() + edges[3]
""", kinds=("u", "nan"), hand=[[0.6, 0.6000000000000001, 0.5999999999999999, 1.0, 0.0]])

P("linspace_ramps", "lambda x: np.dot(x, np.linspace(-1.0, 1.0, len(x))) + np.linspace(0, 1, 7, endpoint=False)[3] + np.linspace(2.0, 3.0, 1)[0]",
  kinds=("n", "q", "sp"), sizes=(9, 5, 2, 1, 0))

P("roll_matrix_shape", "lambda x: np.roll(x.reshape(3, 3), -2)[0, 0] + np.roll(x.reshape(3, 3), 4)[2, 1]",
  kinds=("n", "q"), sizes=(9,))

# NumPy's kinds (each was once silently wrong): int64 products and dtype= casts that wrap, NumPy's
# bools (+ is or, * is and, diff is !=), integer fmod and reciprocal, weighted averages taken in
# float64, and nanmedian along an axis, which averages an odd count's middle value with itself.
P("numpy_kinds_int_products",
  "lambda x: np.prod((x * 1e6).astype(int)) + np.sum(x * 1e3, dtype=int) + np.nansum(x * 7.5, dtype=int)",
  kinds=("u", "n", "nan", "sp"), sizes=(9, 5, 1, 0))

P("numpy_kinds_bool_masks",
  "lambda x: np.sum((x > 0.5) + (x > 0.2)) + 10 * np.sum((x > 0.1) * (x < 0.9)) + 100 * np.diff(x > 0.5).sum()",
  kinds=("u", "n", "nan"))

P("numpy_kinds_int_remainders",
  "lambda x: np.fmod((x * 10).astype(int), 3).sum() + 1000 * np.reciprocal((x * 2).astype(int)).sum()",
  kinds=("n", "q", "u"), sizes=(9, 5, 1))

P("numpy_kinds_weighted_int_average",
  "lambda x: np.average((x * 4).astype(int), weights=[1, 2, 3, 4, 5, 4, 3, 2, 1])",
  kinds=("n", "q"), sizes=(9,))

P("numpy_kinds_nanmedian_columns",
  "lambda x: np.nanmedian(x.reshape(3, 3), axis=0)[1] + np.nanmedian(x.reshape(3, 3), axis=1)[2]",
  kinds=("big", "nan", "sp"), sizes=(9,),
  hand=[[1.7e308, -1.7e308, 1e308, 9e307, nan, 1.0, -9e307, 2.0, 3.0],
        [1.0, 1.7e308, 2.0, 3.0, 1.7e308, 4.0, 5.0, 1.7e308, 6.0]])

P("numpy_kinds_one_sided_clip",
  "lambda x: np.copysign(1.0, np.clip(-(x * 0), 0.0, None)[0]) + 10 * np.copysign(1.0, np.clip(x * 0, None, -0.0)[1]) + 100 * np.copysign(1.0, np.clip(-(x * 0), 0.0, 1.0)[2])",
  kinds=("u", "n"), sizes=(9, 5, 3))

P("numpy_kinds_int_power",
  "lambda x: np.power((x * 1e4).astype(int), 5)[0] + np.power((x * 10).astype(int), 3).sum()",
  kinds=("u", "n"), sizes=(9, 5, 1))


# ===================================================================================================
# Input generation
# ===================================================================================================

SPECIALS = [nan, inf, -inf, -0.0, 0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1e-310]


def make_values(kind, n, rng):
    if kind == "u":      # uniform [0, 1), three decimals (ties happen)
        return np.round(rng.random(n), 3)
    if kind == "n":      # standard normal, full precision
        return rng.normal(0.0, 1.0, n)
    if kind == "q":      # multiples of 0.5 in [-2, 2]: ties, exact zeros
        return rng.integers(-4, 5, n) * 0.5
    if kind == "pos":    # strictly positive
        return np.round(rng.uniform(0.1, 10.0, n), 4)
    if kind == "nan":    # uniform with about 30% NaN
        a = np.round(rng.random(n), 3)
        a[rng.random(n) < 0.3] = nan
        return a
    if kind == "sp":     # normal, with inf/-inf/nan/-0.0/subnormals sprinkled in
        a = rng.normal(0.0, 1.0, n)
        hit = rng.random(n) < 0.35
        if n and not hit.any():
            hit[rng.integers(0, n)] = True
        for i in np.flatnonzero(hit):
            a[i] = SPECIALS[rng.integers(0, len(SPECIALS))]
        return a
    if kind == "bin":
        return rng.integers(0, 2, n).astype(float)
    if kind == "lab":
        return rng.integers(0, 5, n).astype(float)
    if kind == "lab3":
        return rng.integers(0, 3, n).astype(float)
    if kind == "deg":
        return np.round(rng.uniform(0.0, 360.0, n), 2)
    if kind == "dem":    # elevations around 100 m
        return np.round(100.0 + rng.normal(0.0, 2.0, n), 3)
    if kind == "big":    # magnitudes where squares overflow or underflow
        return rng.normal(0.0, 1.0, n) * np.array([10.0 ** rng.choice([0, 150, 200, -200]) for _ in range(n)])
    raise ValueError(kind)


def inputs_for(prog):
    rng = np.random.default_rng(zlib.crc32(prog["name"].encode()))
    out = [list(h) for h in prog["hand"]]
    sizes = prog["sizes"]
    kinds = prog["kinds"]
    if prog["auto"] and 9 in sizes:
        first = kinds[0]
        if first in ("bin", "lab", "lab3"):
            out.append([1.0] * 9)
        else:
            out.append([0.5] * 9)
        if "nan" in kinds or "sp" in kinds:
            out.append([nan] * 9)
            one_inf = [0.25 * i for i in range(9)]
            one_inf[4] = inf
            out.append(one_inf)
            one_nan = [0.25 * i for i in range(9)]
            one_nan[0] = nan
            out.append(one_nan)
    for n in sizes:
        if n == 0:
            out.append([])
            continue
        if n == 1:
            for kind in kinds[:2]:
                out.append([float(v) for v in make_values(kind, 1, rng)])
            continue
        reps = (2 if n == 9 else 1) * (2 if len(kinds) <= 2 else 1)
        for kind in kinds:
            for _ in range(reps):
                out.append([float(v) for v in make_values(kind, n, rng)])
    # dedupe, keeping order (NaN-aware: compare reprs)
    seen = set()
    uniq = []
    for inp in out:
        key = tuple(repr(v) for v in inp)
        if key not in seen:
            seen.add(key)
            uniq.append(inp)
    return uniq


# ===================================================================================================
# Running the Python reference
# ===================================================================================================

ALLOWED_ERRORS = (IndexError, ValueError, OverflowError, ZeroDivisionError, AssertionError)


def load_function(prog):
    """The callable a user would pass to scipy, built from the source with the bindings as globals."""
    env = {"np": np, "numpy": np, "math": math}
    for k, v in prog["bindings"].items():
        env[k] = np.array(v, dtype=np.float64) if isinstance(v, list) else v
    src = prog["source"]
    tree = ast.parse(src)
    stmts = [s for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
    if len(stmts) == 1 and isinstance(stmts[0], ast.Expr) and not isinstance(stmts[0].value, ast.Lambda):
        code = compile(ast.Expression(stmts[0].value), prog["name"], "eval")
        fn = lambda x: eval(code, env, {"x": x})  # noqa: E731  (an expression over x)
        params = ["x"]
    else:
        before = set(env)
        if len(stmts) == 1 and isinstance(stmts[0], ast.Expr):
            env["__lambda__"] = eval(compile(ast.Expression(stmts[0].value), prog["name"], "eval"), env)
        else:
            exec(compile(src, prog["name"], "exec"), env)
        fns = [v for k, v in env.items() if k not in before and isinstance(v, types.FunctionType)
               and v.__code__.co_filename == prog["name"]]  # not imported ones (`from typing import cast`)
        assert fns, f"{prog['name']}: expected a function"
        fn = fns[0]  # the filter comes first; the other functions are helpers it calls
        params = list(inspect.signature(fn).parameters)
    extra = {p: env[p] for p in params[1:] if p in prog["bindings"]}
    return lambda a: fn(a, **extra)


def expectation(fn, values, name):
    arr = np.array(values, dtype=np.float64)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with np.errstate(all="ignore"):
                r = fn(arr)
    except ALLOWED_ERRORS as e:
        return ("error", type(e).__name__)
    except Exception as e:
        raise SystemExit(f"corpus bug in {name} for input {values!r}: {type(e).__name__}: {e}")
    if isinstance(r, np.ndarray) or not isinstance(r, (bool, int, float, np.generic)):
        raise SystemExit(f"corpus bug in {name}: returned {type(r).__name__} {r!r}, not a scalar")
    try:
        return (float(r), None)
    except OverflowError as e:  # a Python int too large for a double
        raise SystemExit(f"corpus bug in {name} for {values!r}: {e}")


# ===================================================================================================
# TOML output
# ===================================================================================================

def tf(v):
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return repr(v)


def tarray(vals):
    return "[" + ", ".join(tf(v) for v in vals) + "]"


def tkey(k):
    assert k.replace("_", "").isalnum() and k.isascii(), k
    return k


# --- new arrays: np.zeros / np.ones / np.full (and _like), np.arange ---

P("new_zeros_filled_in_a_loop", """
    def new_zeros_filled_in_a_loop(x):
        y = np.zeros(len(x))
        for i in range(len(x)):
            if x[i] > 0:
                y[i] = x[i] * 2
        return y.sum() - y.max()
""", kinds=("u", "n", "sp"))

P("arange_weights", "lambda v: np.sum(v * np.arange(len(v))) / max(len(v), 1)")

P("arange_float_steps", """
    def arange_float_steps(x):
        t = np.arange(0.0, 1.0, 0.1)
        return np.dot(x[:3], t[:3]) + len(np.arange(x[0], 5.0, 0.75)) if len(x) >= 3 else np.arange(3)[-1]
""", kinds=("u", "n"), sizes=(9, 5, 1))

P("full_like_baseline", "lambda v: np.sum(np.abs(v - np.full_like(v, np.median(v))))", kinds=("u", "n", "q"))

# --- slice assignment ---

P("slice_assign_clear_border", """
    def slice_assign_clear_border(x):
        y = x.copy()
        y[:2] = 0
        y[-2:] = y[2:4]
        return y.sum() - y[::-3].max()
""", kinds=("u", "n", "sp"), sizes=(9, 5, 4))

P("slice_assign_shift", """
    def slice_assign_shift(x):
        y = x.copy()
        y[1:] = y[:-1]
        y[::2] = x[len(x) // 2]
        return y[0] * 10 + y[-1]
""", kinds=("u", "n"), sizes=(9, 5, 1))


# --- comprehensions, generator expressions, sorted() ---

P("gen_sum_of_squares", "lambda x: sum(v * v for v in x) / len(x)", kinds=("u", "n", "nan", "sp"))

P("gen_count_above_center", """
    def count_above_center(x):
        c = x[len(x) // 2]
        return sum(1 for v in x if v > c)
""", sizes=(9, 25, 5, 1))

P("gen_max_abs_deviation", """
    def max_abs_deviation(x):
        center = x[len(x) // 2]
        return max(abs(v - center) for v in x)
""", sizes=(9, 25, 5, 1, 0))

P("listcomp_valid_mean", """
    def valid_mean(values):
        valid = [v for v in values if not np.isnan(v)]
        if len(valid) == 0:
            return np.nan
        return np.mean(valid)
""", kinds=("u", "n", "nan", "sp"))

P("listcomp_trimmed_mean", """
    def trimmed_mean(x):
        s = sorted(x)
        core = s[1:-1]
        return sum(core) / len(core)
""", kinds=("u", "n", "q"), sizes=(9, 25, 5, 1), hand=([0.0, -0.0, 1.0, -0.0, 0.0, 2.0, -1.0, 0.0, -0.0], [inf, -inf, 0.5, 1.0, 0.0, -0.0, 3.0, 2.0, 1.0]), auto=False)

P("sorted_middle", """
    def sorted_middle(x):
        s = sorted(x)
        return s[len(s) // 2]
""", kinds=("u", "n", "q"), sizes=(9, 25, 5, 1, 0), hand=([0.0, -0.0, 1.0, -0.0, 0.0, 2.0, -1.0, 0.0, -0.0], [inf, -inf, 0.5, 1.0, 0.0, -0.0, 3.0, 2.0, 1.0]), auto=False)

P("sorted_descending_gap", """
    def top_gap(x):
        s = sorted(x, reverse=True)
        return s[0] - s[1]
""", kinds=("u", "n", "q"), sizes=(9, 25, 5, 1), hand=([0.0, -0.0, 1.0, -0.0, 0.0, 2.0, -1.0, 0.0, -0.0], [inf, -inf, 0.5, 1.0, 0.0, -0.0, 3.0, 2.0, 1.0]), auto=False)

P("gen_any_spike", """
    def any_spike(x, t=1.5):
        c = x[len(x) // 2]
        return 1.0 if any(abs(v - c) > t for v in x) else 0.0
""", kinds=("u", "n", "nan"))

P("gen_all_positive_reciprocal", """
    def all_positive(x):
        return float(all(1.0 / v > 0 for v in x))
""", kinds=("u", "n", "q", "sp"))

P("listcomp_weighted_ring", """
    def weighted_ring(x):
        n = len(x)
        w = [x[i] * (i % 3 + 1) for i in range(n) if i != n // 2]
        return sum(w) / max(len(w), 1)
""", sizes=(9, 25, 5, 1))

P("gen_enumerate_moment", "lambda x: sum(i * v for i, v in enumerate(x))", kinds=("u", "n", "q"))

P("listcomp_int_histogram_mode", """
    def mode_of_ints(x):
        ints = [int(v) for v in x]
        best, best_count = ints[0], 0
        for k in sorted(ints):
            c = sum(1 for j in ints if j == k)
            if c > best_count:
                best, best_count = k, c
        return best
""", kinds=("q",), sizes=(9, 25, 5, 1))

P("gen_pairwise_any", """
    def any_close_pair(x, tol=0.05):
        n = len(x)
        return float(any(abs(x[i] - x[j]) < tol for i in range(n) for j in range(i)))
""", kinds=("u", "n", "q"), sizes=(9, 25, 5, 1))

P("listcomp_clipped_median", """
    def clipped_median(x):
        clipped = [min(max(v, 0.0), 1.0) for v in x]
        return np.median(clipped)
""", kinds=("u", "n", "nan", "sp"))


# --- lists grown by append() ---

P("append_valid_mean", """
    def nan_aware_mean(values):
        valid = []
        for v in values:
            if not np.isnan(v):
                valid.append(v)
        if len(valid) == 0:
            return np.nan
        return sum(valid) / len(valid)
""", kinds=("u", "n", "nan", "sp"))

P("append_neighbours_median", """
    def median_of_similar(x, tol=0.25):
        centre = x[len(x) // 2]
        similar = []
        for v in x:
            if abs(v - centre) <= tol:
                similar.append(v)
        return np.median(similar)
""", kinds=("u", "n", "q"), sizes=(9, 25, 5, 1))

P("append_differences", """
    def mean_abs_step(x):
        steps = []
        for i in range(1, len(x)):
            steps.append(abs(x[i] - x[i - 1]))
        if not steps:
            return 0.0
        return max(steps) - min(steps) + np.mean(steps)
""", kinds=("u", "n", "nan"))

P("append_int_labels_mode", """
    def label_mode(x):
        labels = []
        counts = []
        for v in x:
            k = int(v)
            if k in labels:
                continue
            labels.append(k)
            counts.append(sum(1 for w in x if int(w) == k))
        best = 0
        for i in range(len(labels)):
            if counts[i] > counts[best]:
                best = i
        return labels[best]
""", kinds=("q",), sizes=(9, 25, 5, 1))

P("append_then_sorted_trim", """
    def trimmed_positive_mean(x):
        pos = []
        for v in x:
            if v > 0:
                pos.append(v)
        pos = sorted(pos)
        if len(pos) < 3:
            return np.nan
        core = pos[1:-1]
        return np.mean(core)
""", kinds=("u", "n", "q"), sizes=(9, 25, 5))

P("append_while_growing", """
    def first_rising(x):
        run = [x[0]]
        i = 1
        while i < len(x) and x[i] > run[-1]:
            run.append(x[i])
            i += 1
        return len(run) + run[-1]
""", kinds=("u", "n", "q"), sizes=(9, 25, 5, 1))


# --- np.argsort ---

P("argsort_centre_rank_stable", """
    def centre_rank(x):
        order = np.argsort(x, kind="stable")
        return float(np.flatnonzero(order == len(x) // 2)[0]) / max(len(x) - 1, 1)
""", kinds=("u", "n", "q", "nan", "sp"), sizes=(9, 25, 5, 1))

P("argsort_median_position", "lambda x: np.argsort(x, kind=\"mergesort\")[len(x) // 2]",
  kinds=("u", "n"), sizes=(9, 25, 5, 1), auto=False)


# --- rows, columns and blocks of 2-D arrays; index arrays as targets ---

P("assign_clear_centre_row", """
    def centre_row_removed(x):
        w = x.reshape(3, 3).copy()
        w[1] = 0
        w[:, 0] = w[:, 2]
        return w.sum() - w[0, 0]
""", kinds=("u", "n", "nan"), sizes=(9,))

P("assign_block_from_row", """
    def block_from_row(x):
        w = x.reshape(5, 5).copy()
        w[1:4, 1:4] = x[:3]
        return np.sum(w * np.arange(25).reshape(5, 5)) / 100.0
""", kinds=("u", "n", "q"), sizes=(25,))

P("assign_index_array_extremes", """
    def without_extremes(x):
        y = x.copy()
        order = np.argsort(y, kind="stable")
        y[[order[0], order[-1]]] = np.median(y)
        return np.mean(y)
""", kinds=("u", "n", "q"), sizes=(9, 25, 5))


P("cumsum_columns_profile", """
    def column_profile(x):
        m = x.reshape(3, 3)
        down = np.cumsum(m, axis=0)
        across = np.cumsum(m, axis=1)
        return down[2].max() - across[:, 2].min()
""", kinds=("u", "n", "nan"), sizes=(9,))


P("kernel_literal_2d", """
    def gaussian3(x):
        kernel = np.array([[1, 2, 1],
                           [2, 4, 2],
                           [1, 2, 1]]) / 16.0
        return np.sum(x.reshape(3, 3) * kernel)
""", kinds=("u", "n", "nan", "sp"), sizes=(9,))

P("power_two_scalar_loop", """
    def two_pass_variance(values):
        n = len(values)
        mean = sum(values) / n
        return sum((v - mean) ** 2 for v in values) / (n - 1)
""", kinds=("u", "n", "q"), sizes=(9, 25, 5, 2))


P("percentile_list_iqr", """
    def interquartile(values):
        q75, q25 = np.percentile(values, [75, 25])
        return q75 - q25
""", kinds=("u", "n", "q", "nan"), sizes=(9, 25, 5, 1))


def render(results):
    lines = [
        "# ndjit corpus: filter programs with CPython/NumPy expectations.",
        "# GENERATED by tests/corpus/generate.py; edit that file and rerun it, do not edit this one.",
        f"# NumPy {np.__version__}; {len(results)} programs, {sum(len(c) for _, c in results)} cases.",
        "",
    ]
    for prog, cases in results:
        src = prog["source"]
        assert "'''" not in src and src.endswith("\n")
        lines.append("[[programs]]")
        lines.append(f'name = "{prog["name"]}"')
        lines.append("source = '''")
        lines.append(src.rstrip("\n"))
        lines.append("'''")
        if prog["bindings"]:
            lines.append("[programs.bindings]")
            for k, v in prog["bindings"].items():
                if isinstance(v, bool):
                    raise SystemExit(f"{prog['name']}: bool binding {k}")
                if isinstance(v, int):
                    lines.append(f"{tkey(k)} = {v}")
                elif isinstance(v, float):
                    lines.append(f"{tkey(k)} = {tf(v)}")
                else:
                    lines.append(f"{tkey(k)} = {tarray(v)}")
        for values, (want, err) in cases:
            lines.append("[[programs.cases]]")
            lines.append(f"input = {tarray(values)}")
            if want == "error":
                lines.append(f'expect = "error"  # {err}')
            else:
                lines.append(f"expect = {tf(want)}")
        lines.append("")
    return "\n".join(lines)


REQUIRED = """
for range( enumerate( zip( while break continue elif else += -= *= /= //= %= , lambda // % ** < <= > >= == != and or not
 if ~ & | np.where( np.clip( np.delete( np.concatenate( [-1] [::2] [:3] [-3:] [1:] [::-1]
 np.sum( np.prod( np.mean( np.var( np.std( ddof= np.min( np.max( np.amin( np.amax( np.ptp( np.median(
 np.percentile( np.quantile( np.any( np.all( np.count_nonzero( np.argmin( np.argmax( np.nansum( np.nanmean(
 np.nanvar( np.nanstd( np.nanmin( np.nanmax( np.nanmedian( np.nanpercentile( sum( min( max( any( all( abs(
 len( round( .sum() .mean() .max() .min() .std() .var( .any() .all() .astype(int) .size .shape[0]
 np.sqrt math.sqrt np.exp math.exp np.log( math.log( np.log2 math.log2 np.log10 math.log10 np.log1p
 math.log1p np.expm1 math.expm1 np.sin math.sin np.cos math.cos np.tan math.tan np.arcsin math.asin
 np.arccos math.acos np.arctan( math.atan( np.arctan2 math.atan2 np.sinh math.sinh np.cosh math.cosh np.tanh
 math.tanh np.hypot math.hypot math.pow np.pow pow( np.floor math.floor np.ceil math.ceil np.trunc
 math.trunc math.fabs np.copysign math.copysign np.degrees math.degrees np.radians math.radians np.sign
 np.isnan math.isnan np.isfinite math.isfinite np.isinf math.isinf np.pi math.pi np.e math.e np.inf
 math.inf np.nan math.nan float( int( bool( numpy.
""".split()


def verify(results):
    """Reads programs.toml back with the standard TOML parser and checks it says what we meant."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11: skip the self-check
        return
    with open(OUT, "rb") as f:
        data = tomllib.load(f)
    same = lambda a, b: repr(float(a)) == repr(float(b))  # noqa: E731  (bitwise; nan == nan)
    assert len(data["programs"]) == len(results)
    for got, (prog, cases) in zip(data["programs"], results):
        assert got["name"] == prog["name"] and got["source"] == prog["source"], prog["name"]
        for k, v in prog["bindings"].items():
            g = got["bindings"][k]
            assert type(g) is type(v) and (g == v if not isinstance(v, float) else same(g, v)), (prog["name"], k)
        assert len(got["cases"]) == len(cases), prog["name"]
        for gc, (values, (want, _)) in zip(got["cases"], cases):
            assert len(gc["input"]) == len(values) and all(same(a, b) for a, b in zip(gc["input"], values))
            assert gc["expect"] == "error" if want == "error" else same(gc["expect"], want), prog["name"]


# How far an expectation may move between machines: programs that call NumPy's BLAS
# (`np.dot`, `np.linalg.norm`) get the accumulation order of the kernel OpenBLAS picks for the
# CPU, so their last bits differ from one machine to another (the Rust corpus test compares
# within 1e-10 anyway).
CHECK_ULPS = 4


def _stale_lines(old: str, new: str) -> list:
    """The lines where ``old`` is not what this script writes, ignoring expectations that moved
    by at most ``CHECK_ULPS`` ulps."""
    a, b = old.splitlines(), new.splitlines()
    if len(a) != len(b):
        return [f"{len(a)} lines, {len(b)} expected"]

    def moved_a_little(x: str, y: str) -> bool:
        if not (x.startswith("expect = ") and y.startswith("expect = ")):
            return False
        try:
            u, v = float(x[9:]), float(y[9:])
        except ValueError:
            return False
        if not (math.isfinite(u) and math.isfinite(v)) or (u < 0) != (v < 0):
            return False
        return abs(np.float64(u).view(np.int64) - np.float64(v).view(np.int64)) <= CHECK_ULPS

    return [f"line {i + 1}" for i, (x, y) in enumerate(zip(a, b)) if x != y and not moved_a_little(x, y)]


def main():
    check = "--check" in sys.argv[1:]
    names = [p["name"] for p in PROGRAMS]
    dup = {n for n in names if names.count(n) > 1}
    assert not dup, f"duplicate names: {dup}"
    everything = "".join(p["source"] for p in PROGRAMS)
    missing = [t for t in REQUIRED if t not in everything]
    if missing:
        raise SystemExit(f"constructs not exercised by any program: {missing}")

    results = []
    summary = []
    for prog in PROGRAMS:
        fn = load_function(prog)
        cases = [(vals, expectation(fn, vals, prog["name"])) for vals in inputs_for(prog)]
        numeric = [w for _, (w, _) in cases if w != "error"]
        if not numeric:
            raise SystemExit(f"{prog['name']}: every case raises")
        errs = {}
        for _, (w, e) in cases:
            if w == "error":
                errs[e] = errs.get(e, 0) + 1
        n_nan = sum(1 for w in numeric if math.isnan(w))
        summary.append(f"  {prog['name']:32s} {len(cases):3d} cases  nan={n_nan:<3d} errors={errs or '-'}")
        results.append((prog, cases))

    text = render(results)
    if check:
        with open(OUT) as f:
            stale = _stale_lines(f.read(), text)
        if stale:
            raise SystemExit(f"programs.toml is stale ({stale[0]}): rerun tests/corpus/generate.py")
        print("programs.toml is up to date")
        return
    with open(OUT, "w", newline="\n") as f:
        f.write(text)
    verify(results)
    print("\n".join(summary))
    print(f"wrote {OUT}: {len(results)} programs, {sum(len(c) for _, c in results)} cases")


if __name__ == "__main__":
    main()
