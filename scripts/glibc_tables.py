#!/usr/bin/env python3
"""Writes gpu/src/math/glibc_tables.rs: the tables of glibc's sin and cos (`__sincostab`), of its
atan and atan2 (`cij`) and of its tan (`xfg`).

    python3 scripts/glibc_tables.py GLIBC_SRC [LIBM_SO] > gpu/src/math/glibc_tables.rs

GLIBC_SRC is glibc's source tree (2.36 was used: `glibc_2.36.orig.tar.xz` from Debian). With
LIBM_SO (glibc's `libm.so.6`), the table must occur byte for byte in that library, or the script
fails.
"""
import re
import struct
import sys


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
    if len(sys.argv) > 2:
        lib = open(sys.argv[2], 'rb').read()
        for name, t in (('__sincostab', table), ('cij', cij), ('xfg', xfg)):
            if struct.pack('<%dQ' % len(t), *t) not in lib:
                sys.exit('%s does not occur in %s' % (name, sys.argv[2]))
    w = sys.stdout.write
    w('//! Tables of glibc\'s sin, cos, tan, atan and atan2 (`sysdeps/ieee754/dbl-64/sincostab.c`,\n'
      '//! `utan.tbl` and `uatan.tbl`, LGPL-2.1+, IBM Accurate Mathematical Library). Written by\n'
      '//! `scripts/glibc_tables.py` from glibc 2.36\'s source, and found there byte for byte in\n'
      '//! glibc 2.36\'s `libm.so.6`.\n\n'
      '/// `{sn, ssn, cs, ccs}` per point, indexed by 4 × the low word of `|x| + big`.\n'
      'pub const SINCOSTAB: [u64; 440] = [\n')
    for i in range(0, len(table), 4):
        w('    ' + ', '.join('0x%016x' % x for x in table[i:i + 4]) + ',\n')
    w('];\n')
    w('\n/// `cij` of glibc\'s atan and atan2 (`uatan.tbl`): for 241 points x0 in [1/16, 1], `{x0,\n'
      '/// atan(x0), c2..c6}` with the Taylor coefficients of atan at x0.\n'
      'pub const CIJ: [u64; 1687] = [\n')
    for i in range(0, len(cij), 7):
        w('    ' + ', '.join('0x%016x' % x for x in cij[i:i + 7]) + ',\n')
    w('];\n')
    w('\n/// `xfg` of glibc\'s tan (`utan.tbl`): for 186 points x0 in [0.0608, 0.787], `{x0, tan(x0),\n'
      '/// 1/tan(x0), the correction of tan(x0)}`.\n'
      'pub const XFG: [u64; 744] = [\n')
    for i in range(0, len(xfg), 4):
        w('    ' + ', '.join('0x%016x' % x for x in xfg[i:i + 4]) + ',\n')
    w('];\n')


main()
