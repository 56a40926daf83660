#!/bin/sh
# Fresh Debian 12, as root: install what is missing, build, run the demo.
set -eu
cd "$(dirname "$0")/.."
sh scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build
sh scripts/demo.sh build
