#!/usr/bin/env python3
"""Writes gpu/src/math/glibc_tables.rs: the tables of glibc's sin and cos (`__sincostab`), of its
atan and atan2 (`cij`), of its tan (`xfg`) and of its asin and acos (`asncs`, `inroot`).

    python3 scripts/glibc_tables.py GLIBC_SRC [LIBM_SO] > gpu/src/math/glibc_tables.rs

GLIBC_SRC is glibc's source tree (2.36 was used: `glibc_2.36.orig.tar.xz` from Debian). With
LIBM_SO (glibc's `libm.so.6`), the table must occur byte for byte in that library, or the script
fails.
"""
import re
import struct
import sys


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
    if len(sys.argv) > 2:
        lib = open(sys.argv[2], 'rb').read()
        for name, t in (('__sincostab', table), ('cij', cij), ('xfg', xfg), ('asncs', asncs),
                        ('inroot', inroot)):
            if struct.pack('<%dQ' % len(t), *t) not in lib:
                sys.exit('%s does not occur in %s' % (name, sys.argv[2]))
    w = sys.stdout.write
    w('//! Tables of glibc\'s sin, cos, tan, asin, acos, atan and atan2\n'
      '//! (`sysdeps/ieee754/dbl-64/sincostab.c`, `utan.tbl`, `asincos.tbl`, `root.tbl` and\n'
      '//! `uatan.tbl`, LGPL-2.1+, IBM Accurate Mathematical Library). Written by\n'
      '//! `scripts/glibc_tables.py` from glibc 2.36\'s source, and found there byte for byte in\n'
      '//! glibc 2.36\'s `libm.so.6`.\n\n'
      '/// `{sn, ssn, cs, ccs}` per point, indexed by 4 × the low word of `|x| + big`.\n'
      'pub static SINCOSTAB: [u64; 440] = [\n')
    for i in range(0, len(table), 4):
        w('    ' + ', '.join('0x%016x' % x for x in table[i:i + 4]) + ',\n')
    w('];\n')
    w('\n/// `cij` of glibc\'s atan and atan2 (`uatan.tbl`): for 241 points x0 in [1/16, 1], `{x0,\n'
      '/// atan(x0), c2..c6}` with the Taylor coefficients of atan at x0.\n'
      'pub static CIJ: [u64; 1687] = [\n')
    for i in range(0, len(cij), 7):
        w('    ' + ', '.join('0x%016x' % x for x in cij[i:i + 7]) + ',\n')
    w('];\n')
    w('\n/// `xfg` of glibc\'s tan (`utan.tbl`): for 186 points x0 in [0.0608, 0.787], `{x0, tan(x0),\n'
      '/// 1/tan(x0), the correction of tan(x0)}`.\n'
      'pub static XFG: [u64; 744] = [\n')
    for i in range(0, len(xfg), 4):
        w('    ' + ', '.join('0x%016x' % x for x in xfg[i:i + 4]) + ',\n')
    w('];\n')
    w('\n/// `asncs` of glibc\'s asin and acos (`asincos.tbl`): per subinterval of [0.125, 0.96875),\n'
      '/// its point, the Taylor coefficients of asin there, and asin of the point.\n'
      'pub static ASNCS: [u64; 2568] = [\n')
    for i in range(0, len(asncs), 4):
        w('    ' + ', '.join('0x%016x' % x for x in asncs[i:i + 4]) + ',\n')
    w('];\n')
    w('\n/// `inroot` of glibc\'s asin and acos (`root.tbl`): first guesses of 1/sqrt on [1, 4).\n'
      'pub static INROOT: [u64; 128] = [\n')
    for i in range(0, len(inroot), 4):
        w('    ' + ', '.join('0x%016x' % x for x in inroot[i:i + 4]) + ',\n')
    w('];\n')


main()
