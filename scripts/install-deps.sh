#!/bin/sh
# Installs what building and testing alog needs on Debian 12 (run as root).
# Only Debian packages; nothing is pinned that Debian does not ship.
set -eu
pkgs="build-essential cmake ninja-build pkg-config libcli11-dev libfmt-dev nlohmann-json3-dev
doctest-dev libisal-dev libbenchmark-dev mandoc clang libclang-rt-14-dev util-linux
zsh fish"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $missing
fi
