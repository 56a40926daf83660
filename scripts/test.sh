#!/bin/sh
# Builds alog and runs every test of the fast tier (the command CI runs).
# Usage: scripts/test.sh [BUILD_DIR] [extra cmake arguments...]
# The build type is RelWithDebInfo unless the extra arguments say otherwise
# (it is set every time, so a directory configured otherwise is reset).
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
[ $# -gt 0 ] && shift
cmake -S . -B "$build" -G Ninja -DALOG_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$build"
ctest --test-dir "$build" --output-on-failure -j2 --label-exclude slow
