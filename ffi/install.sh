#!/bin/sh
# Installs the C library: libndjit.so, libndjit.a, ndjit.h and the pkg-config file ndjit.pc.
#
#   cargo build --release -p ndjit-ffi
#   ffi/install.sh                       # into /usr/local
#   ffi/install.sh "$HOME/.local"        # or any prefix
#
# Environment: PREFIX (default /usr/local; the first argument wins), LIBDIR (default
# $PREFIX/lib), DESTDIR (staging root for packagers), PROFILE (default release: the cargo profile
# whose build is installed), CARGO_TARGET_DIR (default target), BUILD_DIR (the directory holding
# libndjit.so and libndjit.a; default $CARGO_TARGET_DIR/$PROFILE).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=${1:-${PREFIX:-/usr/local}}
LIBDIR=${LIBDIR:-$PREFIX/lib}
PROFILE=${PROFILE:-release}
DESTDIR=${DESTDIR:-}
target=${CARGO_TARGET_DIR:-$root/target}
build=${BUILD_DIR:-$target/$PROFILE}
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)

for f in libndjit.so libndjit.a; do
    if [ ! -f "$build/$f" ]; then
        echo "error: $build/$f not found; build it first: cargo build --release -p ndjit-ffi (PROFILE=debug installs a cargo build -p ndjit-ffi)" >&2
        exit 1
    fi
done

mkdir -p "$DESTDIR$PREFIX/include" "$DESTDIR$LIBDIR/pkgconfig"
cp "$root/ffi/include/ndjit.h" "$DESTDIR$PREFIX/include/ndjit.h"
cp "$build/libndjit.so" "$DESTDIR$LIBDIR/libndjit.so"
cp "$build/libndjit.a" "$DESTDIR$LIBDIR/libndjit.a"
sed -e "s|@PREFIX@|$PREFIX|g" -e "s|@LIBDIR@|$LIBDIR|g" -e "s|@VERSION@|$version|g" \
    "$root/ffi/ndjit.pc.in" > "$DESTDIR$LIBDIR/pkgconfig/ndjit.pc"
echo "installed ndjit $version under $DESTDIR$PREFIX"
echo "compile with: cc prog.c \$(pkg-config --cflags --libs ndjit)   (PKG_CONFIG_PATH=$LIBDIR/pkgconfig if needed)"
