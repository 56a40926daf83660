#!/usr/bin/env bash
# Runs every benchmark and prints one table: each figure beside the limit it
# is divided by, measured in this same run (see bench/README.md).
#
# Usage: bench/run.sh [BUILD_DIR]   (default: build/ next to bench/)
# Environment: ALOG_BENCH_DIR  where temporary logs go (default /tmp; about
#                              18 GiB at peak for the scale rows, 1.5 GB
#                              without them, all removed at the end)
#              ALOG_BENCH_SCALE trial sizes, e.g. 0.2 for a quick look
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(cd "${1:-$here/../build}" && pwd)
bin=$build/bench
base=${ALOG_BENCH_DIR:-/tmp}

for b in limits_bench crc_bench append_bench read_bench open_bench retention_bench; do
  [[ -x $bin/$b ]] || { echo "run.sh: $bin/$b is missing: build with -DALOG_BUILD_BENCH=ON" >&2; exit 2; }
done

work=$(mktemp -d "$base/alog-run-XXXXXX")
trap 'rm -rf "$work"' EXIT
# Every program's temporary logs go under $work, so nothing outlives the run
# even when a program is killed.
export ALOG_BENCH_DIR=$work
out=$work/rows

step() {
  local name=$1
  shift
  local t0=$SECONDS
  echo "run.sh: $name ..." >&2
  "$@" >>"$out"
  echo "run.sh: $name done in $((SECONDS - t0)) s" >&2
}

start=$SECONDS
step limits "$bin/limits_bench"
step crc "$bin/crc_bench"
step append "$bin/append_bench"
[[ -x $bin/writer_bench ]] && step writer "$bin/writer_bench"
step read "$bin/read_bench"
step open "$bin/open_bench" "$work/big"
step retention "$bin/retention_bench"
step cli "$here/cli_bench.sh" "$build" "$work/big"
step follow "$here/follow_bench.sh" "$build"
step scale "$here/scale_bench.sh" "$build"
rm -rf "$work/big"

cpu=$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)
fs=$(df -T "$base" | awk 'NR == 2 { print $2 }')
rev=$(git -C "$here" describe --always --dirty 2>/dev/null || echo unknown)
echo "alog benchmarks, $(date -u '+%Y-%m-%d %H:%M UTC'), revision $rev"
echo "machine: $(nproc) CPUs ($cpu), $(uname -r), $fs at $base, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| figure | measured | limit measured in this run | ratio | target | met? |"
echo "|---|---|---|---|---|---|"
awk -F'\t' '$1 == "ROW" { printf "| %s | %s | %s | %s | %s | %s |\n", $2, $3, $4, $5, $6, $7 }' "$out"
echo
echo "Notes from this run:"
awk -F'\t' '$1 == "INFO" { printf "- %s\n", $2 }' "$out"
echo
met=$(awk -F'\t' '$1 == "ROW" && $7 == "yes"' "$out" | wc -l)
missed=$(awk -F'\t' '$1 == "ROW" && $7 == "NO"' "$out" | wc -l)
echo "$met targets met, $missed missed; whole run $((SECONDS - start)) s"
