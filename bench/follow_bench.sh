#!/usr/bin/env bash
# Follow latency: from `alog append` of one record returning to that record
# on `alog cat -f`'s standard output (p50, p99), beside the same round trip
# through a bare pipe (a line written by `printf` and read back), measured
# the same way in this run. The clock is bash's EPOCHREALTIME (no fork).
#
# Usage: bench/follow_bench.sh BUILD_DIR
# Prints ROW/INFO lines (bench/harness.h) on stdout.
set -euo pipefail

build=${1:?usage: follow_bench.sh BUILD_DIR}
alog_bin=$build/alog
scale=${ALOG_BENCH_SCALE:-1}
rounds=$(awk -v s="$scale" 'BEGIN { n = int(200 * s); print (n < 20 ? 20 : n) }')

. "$(dirname "${BASH_SOURCE[0]}")/timing.sh"

work=$(mktemp -d "${ALOG_BENCH_DIR:-/tmp}/alog-follow-XXXXXX")
follower=
trap '[[ -n $follower ]] && kill "$follower" 2>/dev/null; rm -rf "$work"' EXIT

# p50 and p99 (in ms) of the microsecond figures in a file.
quantiles() {
  sort -n "$1" | awk '{ v[NR] = $1 } END { printf "%.2f %.2f\n", v[int((NR + 1) * 0.5)] / 1000, v[int(NR * 0.99 + 0.5)] / 1000 }'
}

# The limit: one line through a pipe, written and read back by this shell.
mkfifo "$work/pipe"
exec 4<>"$work/pipe"
: >"$work/bare"
for ((i = 0; i < rounds; i++)); do
  t0=${EPOCHREALTIME/[.,]/}
  printf 'x\n' >&4
  read -r _ <&4
  t1=${EPOCHREALTIME/[.,]/}
  echo $((t1 - t0)) >>"$work/bare"
done
exec 4>&-

# The figure: append one record, then wait for it on cat -f's output.
log=$work/log
printf 'first\n' | "$alog_bin" append -q "$log" >/dev/null
mkfifo "$work/out"
"$alog_bin" cat -f --from 1 "$log" >"$work/out" 2>/dev/null &
follower=$!
exec 3<"$work/out"
: >"$work/lat"
for ((i = 0; i < rounds; i++)); do
  printf 'record-%d\n' "$i" | "$alog_bin" append -q --sync-each "$log" >/dev/null
  t0=${EPOCHREALTIME/[.,]/}
  read -r line <&3
  t1=${EPOCHREALTIME/[.,]/}
  [[ $line == "record-$i" ]] || { echo "follow_bench: read '$line', expected record-$i" >&2; exit 1; }
  echo $((t1 - t0)) >>"$work/lat"
done
exec 3<&-
read -r p50 p99 < <(quantiles "$work/lat")
read -r b50 b99 < <(quantiles "$work/bare")
row "CLI: cat -f latency, append returned to the record on stdout ($rounds records, p50 / p99)" \
  "$p50 / $p99 ms" "$b50 / $b99 ms a line through a pipe" "$(awk -v a="$p50" -v b="$b50" 'BEGIN { printf "%.0f×", (b > 0 ? a / b : 0) }')" \
  "p50 ≤ 5 ms" "$(awk -v a="$p50" 'BEGIN { print (a <= 5 ? "yes" : "NO") }')"
