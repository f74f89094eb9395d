#!/usr/bin/env python3
"""Writes gpu/src/math/glibc_tables.rs: the tables of glibc's sin and cos (`__sincostab`), of its
atan and atan2 (`cij`), of its tan (`xfg`) and of its asin and acos (`asncs`, `inroot`).

    python3 scripts/glibc_tables.py GLIBC_SRC [LIBM_SO] > gpu/src/math/glibc_tables.rs && cargo fmt

GLIBC_SRC is glibc's source tree (2.36 was used: `glibc_2.36.orig.tar.xz` from Debian). With
LIBM_SO (glibc's `libm.so.6`), the table must occur byte for byte in that library, or the script
fails.
"""
import re
import struct
import sys

from rust_tables import check_in_library, write_table


def d2b(v):
    return struct.unpack('<Q', struct.pack('<d', v))[0]


def big_endian_doubles(path, n):
    """The doubles of the `#ifdef BIG_ENDI` block, each written as (high word, low word)."""
    src = open(path).read()
    block = src[src.index('#ifdef BIG_ENDI'):src.index('#else')]
    words = [int(w, 16) for w in re.findall(r'0[xX]([0-9A-Fa-f]{8})', block)]
    table = [(words[i] << 32) | words[i + 1] for i in range(0, len(words), 2)]
    assert len(table) == n, (path, len(table))
    return table


def main():
    src = sys.argv[1].rstrip('/') + '/sysdeps/ieee754/dbl-64/'
    table = big_endian_doubles(src + 'sincostab.c', 440)
    cij = big_endian_doubles(src + 'uatan.tbl', 241 * 7)
    xfg = big_endian_doubles(src + 'utan.tbl', 186 * 4)
    asncs = big_endian_doubles(src + 'asincos.tbl', 2568)
    root = open(src + 'root.tbl').read()
    root = root[root.index('inroot[128] = {'):]
    inroot = [d2b(float(v)) for v in re.findall(r'\d+\.\d+', root[:root.index('}')])]
    assert len(inroot) == 128, len(inroot)
    tables = [
        ('SINCOSTAB', '`{sn, ssn, cs, ccs}` per point, indexed by 4 × the low word of `|x| + big`.',
         table, 4),
        ('CIJ', '`cij` of glibc\'s atan and atan2 (`uatan.tbl`): for 241 points x0 in [1/16, 1],\n'
         '/// `{x0, atan(x0), c2..c6}` with the Taylor coefficients of atan at x0.', cij, 7),
        ('XFG', '`xfg` of glibc\'s tan (`utan.tbl`): for 186 points x0 in [0.0608, 0.787],\n'
         '/// `{x0, tan(x0), 1/tan(x0), the correction of tan(x0)}`.', xfg, 4),
        ('ASNCS', '`asncs` of glibc\'s asin and acos (`asincos.tbl`): per subinterval of\n'
         '/// [0.125, 0.96875), its point, the Taylor coefficients of asin there, and asin of the\n'
         '/// point.', asncs, 4),
        ('INROOT', '`inroot` of glibc\'s asin and acos (`root.tbl`): first guesses of 1/sqrt on\n'
         '/// [1, 4).', inroot, 4),
    ]
    if len(sys.argv) > 2:
        check_in_library(sys.argv[2], [(name, data) for name, _, data, _ in tables])
    sys.stdout.write(
        '//! Tables of glibc\'s sin, cos, tan, asin, acos, atan and atan2\n'
        '//! (`sysdeps/ieee754/dbl-64/sincostab.c`, `utan.tbl`, `asincos.tbl`, `root.tbl` and\n'
        '//! `uatan.tbl`, LGPL-2.1+, IBM Accurate Mathematical Library). Written by\n'
        '//! `scripts/glibc_tables.py` from glibc 2.36\'s source, and found there byte for byte in\n'
        '//! glibc 2.36\'s `libm.so.6`.\n')
    for name, doc, data, per_line in tables:
        write_table(name, doc, data, per_line, kind='static')


main()
