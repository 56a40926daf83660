#!/bin/sh
# Fresh Debian 12, as root: install what is missing, build (Release, in its
# own build directory, so scripts/test.sh's build/ never inherits its build
# type), run the demo.
set -eu
cd "$(dirname "$0")/.."
sh scripts/install-deps.sh
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-release
sh scripts/demo.sh build-release
