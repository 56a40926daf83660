#!/bin/sh
# A short demonstration of the main job on a temporary log:
# append, cat, verify, stats.
set -eu
alog=${1:-build}/alog
dir=$(mktemp -d)/demo-log
trap 'rm -rf "$(dirname "$dir")"' EXIT
set -x
printf 'alpha\nbeta\ngamma\n' | "$alog" append "$dir"
seq 1 1000 | "$alog" append --batch 100 "$dir"
"$alog" cat --seq --last 3 "$dir"
"$alog" verify "$dir"
"$alog" stats "$dir"
