#!/bin/sh
# Installs the built tree into a temporary prefix, then builds a consumer
# with find_package(alog) and another with pkg-config, and runs both.
set -eu
build=$1
src=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$src" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
out=$("$tmp/consumer/consumer" "$tmp/log1")
[ "$out" = 2 ] || { echo "cmake consumer printed '$out'"; exit 1; }
PKG_CONFIG_PATH=$(find "$tmp/prefix" -name alog.pc -exec dirname {} \;)
export PKG_CONFIG_PATH
# shellcheck disable=SC2046
c++ -std=c++20 "$src/consumer.cc" -o "$tmp/pc-consumer" $(pkg-config --cflags --libs --static alog)
out=$("$tmp/pc-consumer" "$tmp/log2")
[ "$out" = 2 ] || { echo "pkg-config consumer printed '$out'"; exit 1; }
test -f "$tmp/prefix/share/man/man5/alog-format.5"
test -x "$tmp/prefix/bin/alog"
echo "installed package works with find_package and pkg-config"
