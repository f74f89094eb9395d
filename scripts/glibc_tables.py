#!/usr/bin/env python3
"""Writes gpu/src/math/glibc_tables.rs: `__sincostab`, the table of glibc's sin and cos.

    python3 scripts/glibc_tables.py GLIBC_SRC [LIBM_SO] > gpu/src/math/glibc_tables.rs

GLIBC_SRC is glibc's source tree (2.36 was used: `glibc_2.36.orig.tar.xz` from Debian). With
LIBM_SO (glibc's `libm.so.6`), the table must occur byte for byte in that library, or the script
fails.
"""
import re
import struct
import sys


def main():
    path = sys.argv[1].rstrip('/') + '/sysdeps/ieee754/dbl-64/sincostab.c'
    src = open(path).read()
    # The big-endian block lists each double as (high word, low word).
    block = src[src.index('#ifdef BIG_ENDI'):src.index('#else')]
    words = [int(w, 16) for w in re.findall(r'0x([0-9A-Fa-f]{8})', block)]
    table = [(words[i] << 32) | words[i + 1] for i in range(0, len(words), 2)]
    assert len(table) == 440, len(table)
    if len(sys.argv) > 2:
        lib = open(sys.argv[2], 'rb').read()
        if struct.pack('<440Q', *table) not in lib:
            sys.exit('__sincostab does not occur in %s' % sys.argv[2])
    w = sys.stdout.write
    w('//! `__sincostab` of glibc\'s sin and cos (`sysdeps/ieee754/dbl-64/sincostab.c`, LGPL-2.1+,\n'
      '//! IBM Accurate Mathematical Library): for each of 110 points, `sin` and `cos` as a double\n'
      '//! and its correction. Written by `scripts/glibc_tables.py` from glibc 2.36\'s source, and\n'
      '//! found there byte for byte in glibc 2.36\'s `libm.so.6`.\n\n'
      '/// `{sn, ssn, cs, ccs}` per point, indexed by 4 × the low word of `|x| + big`.\n'
      'pub const SINCOSTAB: [u64; 440] = [\n')
    for i in range(0, len(table), 4):
        w('    ' + ', '.join('0x%016x' % x for x in table[i:i + 4]) + ',\n')
    w('];\n')


main()
