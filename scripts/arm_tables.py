#!/usr/bin/env python3
"""Writes src/math/arm_tables.rs: the data of ARM's optimized-routines exp, exp2, log, log2
and pow, which glibc (since 2.28) and musl (since 1.1.20) both ship.

    python3 scripts/arm_tables.py MUSL_SRC_MATH_DIR [LIBM_SO] > src/math/arm_tables.rs && cargo fmt

MUSL_SRC_MATH_DIR is musl's `src/math` (musl 1.2.3 was used: `musl_1.2.3.orig.tar.gz` from
Debian). With LIBM_SO (glibc's `libm.so.6`), every table and constant must occur byte for byte in
that library, or the script fails: the device transcribes glibc's routines, so it needs glibc's
data, not merely musl's.
"""
import re
import struct
import sys

from rust_tables import check_in_library, write_table


def clean(src):
    src = re.sub(r'/\*.*?\*/', '', src, flags=re.S)
    src = re.sub(r'//[^\n]*', '', src)
    # The tab2 tables serve only the builds without FMA, which the device does not transcribe.
    return re.sub(r'#if !__FP_FAST_FMA.*?#endif', '', src, flags=re.S)


def block(src, name):
    """The text between the braces of `.name = { ... }` (nested braces allowed)."""
    start = src.index('{', src.index('.' + name + ' = {'))
    depth = 0
    for p in range(start, len(src)):
        depth += {'{': 1, '}': -1}.get(src[p], 0)
        if depth == 0:
            return src[start + 1:p]
    raise ValueError(name)


def d2b(v):
    return struct.unpack('<Q', struct.pack('<d', v))[0]


def value(tok):
    """A C literal (hex float, hex integer, or hex float times a power of two) as u64 bits."""
    parts = [p.strip() for p in tok.split('*')]
    if 'p' not in parts[0] and parts[0].lstrip('-').startswith('0x'):
        return int(parts[0], 16) & (2**64 - 1)
    v = float.fromhex(parts[0])
    for f in parts[1:]:
        v *= float(f)  # exact: the factors are powers of two
    return d2b(v)


def items(text):
    return [value(t) for t in text.replace('{', ',').replace('}', ',').split(',') if t.strip()]


def scalar(src, name):
    return value(re.search(r'\.' + name + r' = ([^,]*),', src).group(1))


def main():
    math_dir = sys.argv[1].rstrip('/') + '/'
    read = lambda f: clean(open(math_dir + f).read())
    exp, log, log2, pw = (read(f) for f in ('exp_data.c', 'log_data.c', 'log2_data.c', 'pow_data.c'))
    pow_tab = []
    for m in re.finditer(r'A\(([^)]*)\)', re.sub(r'#define[^\n]*', '', block(pw, 'tab'))):
        invc, logc, logctail = (value(t) for t in m.group(1).split(','))
        pow_tab += [invc, 0, logc, logctail]
    n = 1 << 7  # EXP_TABLE_BITS
    scalars = {
        'EXP_INVLN2N': d2b(float.fromhex('0x1.71547652b82fep0') * n),
        'EXP_NEGLN2HIN': scalar(exp, 'negln2hiN'),
        'EXP_NEGLN2LON': scalar(exp, 'negln2loN'),
        'EXP_SHIFT': d2b(float.fromhex('0x1.8p52')),
        'EXP2_SHIFT': d2b(float.fromhex('0x1.8p52') / n),
        'LOG_LN2HI': scalar(log, 'ln2hi'),
        'LOG_LN2LO': scalar(log, 'ln2lo'),
        'LOG2_INVLN2HI': scalar(log2, 'invln2hi'),
        'LOG2_INVLN2LO': scalar(log2, 'invln2lo'),
        'POW_LN2HI': scalar(pw, 'ln2hi'),
        'POW_LN2LO': scalar(pw, 'ln2lo'),
    }
    tables = [
        ('EXP_POLY', 'exp: C2..C5.', items(block(exp, 'poly'))),
        ('EXP2_POLY', 'exp2: C1..C5.', items(block(exp, 'exp2_poly'))),
        ('EXP_TAB', 'exp, exp2 and pow: `2^(i/128) ~= asdouble(TAB[2i+1] + (i << 45)) * '
                    '(1 + asdouble(TAB[2i]))`.', items(block(exp, 'tab'))),
        ('LOG_POLY', 'log: A0..A4 (A0 = -0.5).', items(block(log, 'poly'))),
        ('LOG_POLY1', 'log near 1: B0..B10 (B0 = -0.5).', items(block(log, 'poly1'))),
        ('LOG_TAB', 'log: `{invc, logc}` of 128 subintervals.', items(block(log, 'tab'))),
        ('LOG2_POLY', 'log2: A0..A5.', items(block(log2, 'poly'))),
        ('LOG2_POLY1', 'log2 near 1: B0..B9.', items(block(log2, 'poly1'))),
        ('LOG2_TAB', 'log2: `{invc, logc}` of 64 subintervals.', items(block(log2, 'tab'))),
        ('POW_POLY', "pow's log: A0..A6, scaled as evaluated.", items(block(pw, 'poly'))),
        ('POW_TAB', "pow's log: `{invc, pad, logc, logctail}` of 128 subintervals.", pow_tab),
    ]
    if len(sys.argv) > 2:
        check_in_library(sys.argv[2], [(k, [v]) for k, v in scalars.items()]
                         + [(k, d) for k, _, d in tables])
    w = sys.stdout.write
    w('//! The data of ARM\'s optimized-routines exp, exp2, log, log2 and pow (MIT licence,\n'
      '//! Arm Limited 2018), which glibc (since 2.28) and musl (since 1.1.20) both ship. Written by\n'
      '//! `scripts/arm_tables.py` from musl 1.2.3\'s `src/math/*_data.c`; each table and constant was\n'
      '//! found there byte for byte in glibc 2.36\'s `libm.so.6`. The `tab2` tables of the builds\n'
      '//! without FMA are left out: the device transcribes the FMA builds.\n\n')
    for k, v in scalars.items():
        w('pub const %s: u64 = 0x%016x;\n' % (k, v))
    for k, doc, data in tables:
        write_table(k, doc, data)


main()
