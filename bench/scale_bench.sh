#!/usr/bin/env bash
# Cost growth with the size of the log: open, seek, verify and cat of one
# log of 1 KiB records in 64 MiB segments, grown to 1, 4 and 16 GiB (times
# ALOG_BENCH_SCALE). Each figure is divided by the same figure at the first
# size, measured in this run: open and seek should stay flat (within 20 %),
# verify and cat should grow linearly (time per GiB within 15 %). Linear is
# time = fixed + size x per-GiB: the per-GiB time is taken net of the fixed
# cost, which is measured in the same run on a log of one record (process
# start, open, the lock probe); the gross per-GiB times are INFO lines.
#
# Usage: bench/scale_bench.sh BUILD_DIR
# Needs the largest size in free space under ALOG_BENCH_DIR (default /tmp),
# and as much page cache to measure warm. Prints ROW/INFO lines
# (bench/harness.h) on stdout.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/timing.sh"

build=${1:?usage: scale_bench.sh BUILD_DIR}
alog_bin=$build/alog
scale=${ALOG_BENCH_SCALE:-1}
runs=3

work=$(mktemp -d "${ALOG_BENCH_DIR:-/tmp}/alog-scale-XXXXXX")
trap 'rm -rf "$work"' EXIT
log=$work/log

# Sizes in bytes: 1, 4 and 16 GiB scaled, at least one chunk each.
chunk_lines=$(awk -v s="$scale" 'BEGIN { n = int(65536 * (s < 1 ? s : 1)); print (n < 1024 ? 1024 : n) }')
read -r -a sizes <<<"$(awk -v s="$scale" 'BEGIN { for (g = 1; g <= 16; g *= 4) printf "%.0f ", g * 2^30 * s }')"
need=$(( ${sizes[2]} + ${sizes[2]} / 8 ))
free=$(df -B1 --output=avail "$work" | tail -1)
mem=$(awk '/MemAvailable/ { printf "%.0f", $2 * 1024 }' /proc/meminfo)
if (( free < need )); then
  info "scale rows skipped: $need bytes needed under $work, $free free"
  exit 0
fi
(( mem < need )) && info "scale rows: only $mem bytes of memory available for $need bytes of log: the larger sizes may be read from the disk"

# One chunk of 1000-byte lines (1 KiB frames), appended again and again.
line=$(printf 'r%.0s' $(seq 1000))
awk -v n="$chunk_lines" -v l="$line" 'BEGIN { for (i = 0; i < n; i++) print l }' >"$work/chunk"

records=0
log_bytes() { if [[ -d $log ]]; then du -sb "$log" | cut -f1; else echo 0; fi; }
grow_to() {
  while (( $(log_bytes) < $1 )); do
    # No disk budget: the default (10 GiB) is less than the largest size.
    "$alog_bin" append --no-sync --segment-size 64MiB --max-disk-size 0 "$log" <"$work/chunk" >/dev/null
    records=$((records + chunk_lines))
  done
  printf 'x\n' | "$alog_bin" append "$log" >/dev/null  # synced, so opening walks no long tail
  records=$((records + 1))
  sync  # no writeback of the growth beside the figures
  cat "$log"/*.seg >/dev/null  # into the page cache
}

declare -A fig
names=(open seek verify cat)
# The fixed cost of verify and cat: the same commands on a log of one record.
printf 'x\n' | "$alog_bin" append "$work/one" >/dev/null
for n in verify cat; do fig[$n,fixed]=$(median_s $runs true "'$alog_bin' $n '$work/one' > /dev/null"); done
info "scale: fixed cost (a log of one record): verify $(ms "${fig[verify,fixed]}"), cat $(ms "${fig[cat,fixed]}")"
for i in 0 1 2; do
  grow_to "${sizes[$i]}"
  bytes=$(log_bytes)
  gib[$i]=$(calc "%.3f" "$bytes / 2^30")
  fig[open,$i]=$(median_s $runs true "'$alog_bin' append --no-sync '$log' < /dev/null")
  # The floor of an open that reads every header (FORMAT.md), by a bare program.
  [[ -x $build/bench/open_bench ]] && floor[$i]=$("$build/bench/open_bench" --floor "$log")
  fig[seek,$i]=$(median_s $runs true "'$alog_bin' seek '$log' $((records / 2)) > /dev/null")
  fig[verify,$i]=$(median_s $runs true "'$alog_bin' verify '$log' > /dev/null")
  fig[cat,$i]=$(median_s $runs true "'$alog_bin' cat '$log' > /dev/null")
  segs[$i]=$(ls "$log" | grep -c '\.seg$')
  if (( i == 1 )); then
    # verify on every core (issue 14: a 4 GiB log in the page cache).
    t_j1=$(median_s $runs true "'$alog_bin' verify -j 1 '$log' > /dev/null")
    t_j2=$(median_s $runs true "'$alog_bin' verify -j 2 '$log' > /dev/null")
    row "scale: alog verify -j 2 at ${gib[$i]} GiB, ${segs[$i]} segments" "$(ms "$t_j2")" \
      "$(ms "$t_j1") verify -j 1 ($(nproc) cores)" "$(calc "%.2f× faster" "$t_j1 / $t_j2")" \
      "≥ 1.7× faster" "$(yesno "$t_j1 / $t_j2 >= 1.7")"
  fi
  info "scale: ${gib[$i]} GiB, ${segs[$i]} segments, $records records: open $(ms "${fig[open,$i]}"), seek $(ms "${fig[seek,$i]}"), verify $(ms "${fig[verify,$i]}"), cat $(ms "${fig[cat,$i]}")"
done

if [[ -n ${floor[2]:-} ]]; then
  added=$((segs[2] - segs[0]))
  info "scale: open bound: a bare program that lists the log, takes the lock, and opens, reads and closes every segment's header takes $(calc "%.2f ms" "${floor[0]} * 1000") at ${gib[0]} GiB and $(calc "%.2f ms" "${floor[2]} * 1000") at ${gib[2]} GiB, $(calc "%.1f" "(${floor[2]} - ${floor[0]}) / $added * 1e6") µs per segment added (alog open: $(calc "%.1f" "(${fig[open,2]} - ${fig[open,0]}) / $added * 1e6") µs); that floor's growth alone puts open at ${gib[2]} GiB at $(calc "%.2f×" "(${fig[open,0]} + ${floor[2]} - ${floor[0]}) / ${fig[open,0]}") of its ${gib[0]} GiB figure"
fi
for i in 1 2; do
  for n in open seek; do
    r=$(calc "%.3f" "${fig[$n,$i]} / ${fig[$n,0]}")
    what=$n
    [[ $n == open ]] && what="open (append of no input)"
    row "scale: alog $what at ${gib[$i]} GiB" "$(ms "${fig[$n,$i]}")" \
      "$(ms "${fig[$n,0]}") at ${gib[0]} GiB" "$(calc "%.2f×" "$r")" "flat (0.8-1.2×)" \
      "$(yesno "$r >= 0.8 && $r <= 1.2")"
  done
  for n in verify cat; do
    per=$(calc "%.6f" "(${fig[$n,$i]} - ${fig[$n,fixed]}) / ${gib[$i]}")
    per0=$(calc "%.6f" "(${fig[$n,0]} - ${fig[$n,fixed]}) / ${gib[0]}")
    r=$(calc "%.3f" "$per / $per0")
    row "scale: alog $n at ${gib[$i]} GiB, time per GiB net of the fixed cost" "$(ms "$per")" \
      "$(ms "$per0") per GiB at ${gib[0]} GiB" "$(calc "%.2f×" "$r")" "linear (0.85-1.15×)" \
      "$(yesno "$r >= 0.85 && $r <= 1.15")"
    gross=$(calc "%.6f" "${fig[$n,$i]} / ${gib[$i]}")
    gross0=$(calc "%.6f" "${fig[$n,0]} / ${gib[0]}")
    info "scale: alog $n at ${gib[$i]} GiB, gross time per GiB $(ms "$gross") against $(ms "$gross0") at ${gib[0]} GiB ($(calc "%.2f×" "$gross / $gross0"))"
  done
done
