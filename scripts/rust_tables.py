"""Shared by `arm_tables.py` and `glibc_tables.py`: check tables against a `libm.so.6`, and write
them as Rust arrays of double bits."""
import struct
import sys


def check_in_library(path, tables):
    """Exits unless each `(name, [u64 bits])` occurs byte for byte (little-endian) in `path`."""
    lib = open(path, 'rb').read()
    for name, data in tables:
        if struct.pack('<%dQ' % len(data), *data) not in lib:
            sys.exit('%s does not occur in %s' % (name, path))


def write_table(name, doc, data, per_line=4, kind='const'):
    """`/// doc` and `pub <kind> NAME: [u64; n] = [...];` on standard output."""
    w = sys.stdout.write
    w('\n/// %s\npub %s %s: [u64; %d] = [\n' % (doc, kind, name, len(data)))
    for i in range(0, len(data), per_line):
        w('    ' + ', '.join('0x%016x' % x for x in data[i:i + per_line]) + ',\n')
    w('];\n')
