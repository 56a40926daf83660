#!/usr/bin/env bash
# Whole-process figures for the alog command-line tool: append of 1 M lines,
# verify, cat (raw and as NDJSON with base64 payloads), and seek on a 1 GiB
# 16-segment log, each beside a whole-process
# limit measured the same way (cp, cat, `alog --version`).
#
# Usage: bench/cli_bench.sh BUILD_DIR [BIG_LOG_DIR]
#   BIG_LOG_DIR: a 16-segment log of 1 KiB records (open_bench builds one);
#   without it the seek figure is skipped.
# Prints ROW/INFO lines (bench/harness.h) on stdout. Uses hyperfine when
# installed, else a loop of `date +%s%N`.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/timing.sh"

build=${1:?usage: cli_bench.sh BUILD_DIR [BIG_LOG_DIR]}
big=${2:-}
alog_bin=$build/alog
scale=${ALOG_BENCH_SCALE:-1}

if [[ ! -x $alog_bin ]] || ! "$alog_bin" --help 2>/dev/null | grep -qw append; then
  info "CLI figures skipped: $alog_bin has no 'append' subcommand yet"
  exit 0
fi

work=$(mktemp -d "${ALOG_BENCH_DIR:-/tmp}/alog-cli-XXXXXX")
trap 'rm -rf "$work"' EXIT

lines=$(awk -v s="$scale" 'BEGIN { n = int(1000000 * s); print (n < 10000 ? 10000 : n) }')
runs=9
line=$(printf 'r%.0s' $(seq 100))
awk -v n="$lines" -v l="$line" 'BEGIN { for (i = 0; i < n; i++) print l }' >"$work/input"
input_bytes=$(stat -c %s "$work/input")
payload_bytes=$((lines * 100))
log=$work/log
# No writeback of earlier files (the benches before this one, the appends
# below) running beside a figure: each group of figures starts after a sync.
sync

# append --no-sync of the lines, whole process, against cp of the input.
t_app=$(median_s $runs "rm -rf '$log'" "'$alog_bin' append --no-sync '$log' < '$work/input' > /dev/null")
t_cp=$(median_s $runs "rm -f '$work/copy'" "cp '$work/input' '$work/copy'")
rate=$(calc "%.2f" "$lines / $t_app / 1e6")
row "CLI: alog append --no-sync, $lines × 100 B lines" "$(ms "$t_app") = $rate M rec/s" \
  "$(ms "$t_cp") cp of the input" "$(calc "%.2f×" "$t_app / $t_cp")" \
  "≤ 2× (issue 14; ≤ 0.26 s)" "$(yesno "$t_app / $t_cp <= 2 && $lines / $t_app >= 3.9e6")"
# What bounds that ratio: cp copies in the kernel (copy_file_range: one copy
# of each byte), while a program that looks at the bytes reads them into its
# memory and writes them out again (two copies), as dd does with no work
# between its read and its write.
t_dd=$(median_s $runs "rm -f '$work/copy'" "dd if='$work/input' of='$work/copy' bs=512K status=none")
info "CLI append bound: read + write of the input through a 512 KiB buffer (dd, nothing else) $(ms "$t_dd") = $(calc "%.2f×" "$t_dd / $t_cp") cp, whose copy_file_range copies in the kernel; alog append is $(calc "%.2f×" "$t_app / $t_dd") dd"

# verify and cat of that log, against cat of its segment files.
rm -rf "$log"
"$alog_bin" append --no-sync "$log" <"$work/input" >/dev/null
sync
t_raw=$(median_s $runs true "cat '$log'/*.seg > /dev/null")
t_ver=$(median_s $runs true "'$alog_bin' verify '$log' > /dev/null")
row "CLI: alog verify of that log" "$(ms "$t_ver")" "$(ms "$t_raw") cat of the segments" \
  "$(calc "%.2f×" "$t_ver / $t_raw")" "≤ 2× (issue 14; ≤ 0.1 s)" \
  "$(yesno "$t_ver / $t_raw <= 2 && $t_ver <= 0.1")"
# verify --jobs 2 against --jobs 1 on the same records in 16 MiB segments:
# a small log, where whole segments bound the speed-up (7 segments on 2
# threads: one walks 4 of them). The issue's figure, on a 4 GiB log, is a
# row of scale_bench.sh.
rm -rf "$work/segs"
"$alog_bin" append --no-sync --segment-size 16MiB "$work/segs" <"$work/input" >/dev/null
cat "$work/segs"/*.seg >/dev/null
t_j1=$(median_s $runs true "'$alog_bin' verify -j 1 '$work/segs' > /dev/null")
t_j2=$(median_s $runs true "'$alog_bin' verify -j 2 '$work/segs' > /dev/null")
info "CLI verify -j 2 of $(ls "$work/segs" | grep -c '\.seg$') segments of 16 MiB: $(ms "$t_j2") against $(ms "$t_j1") with -j 1 = $(calc "%.2f× faster" "$t_j1 / $t_j2") ($(nproc) cores)"
rm -rf "$work/segs"
t_cat=$(median_s $runs true "'$alog_bin' cat '$log' > /dev/null")
row "CLI: alog cat > /dev/null of that log" \
  "$(ms "$t_cat") = $(calc "%.2f" "$payload_bytes / $t_cat / 1e9") GB/s of payload" \
  "$(ms "$t_raw") cat of the segments" "$(calc "%.2f×" "$t_cat / $t_raw")" \
  "≤ 2.5×, ≥ 1 GB/s of payload" "$(yesno "$t_cat / $t_raw <= 2.5 && $payload_bytes / $t_cat >= 1e9")"
t_json=$(median_s $runs true "'$alog_bin' --json cat --payload base64 '$log' > /dev/null")
row "CLI: alog --json cat --payload base64 > /dev/null of that log" "$(ms "$t_json")" \
  "$(ms "$t_raw") cat of the segments" "$(calc "%.2f×" "$t_json / $t_raw")" "≤ 6×" \
  "$(yesno "$t_json / $t_raw <= 6")"
# That NDJSON read back (a log copied through a pipeline), beside the plain append.
"$alog_bin" --json cat --payload base64 "$log" >"$work/ndjson"
t_nd=$(median_s $runs "rm -rf '$work/nd'" "'$alog_bin' append --ndjson --no-sync '$work/nd' < '$work/ndjson' > /dev/null")
info "CLI: alog append --ndjson --no-sync of that NDJSON ($(stat -c %s "$work/ndjson") bytes) $(ms "$t_nd") = $(calc "%.2f×" "$t_nd / $t_app") the plain append of the lines"
rm -rf "$work/nd" "$work/ndjson"
# The same records synced: with --no-sync nothing is marked synced, and
# cat reads the whole log as an unsynced tail, walked in parts (every
# check a walk makes: the running CRC, each batch confirmed) instead of
# scanned as confirmed records.
rm -rf "$work/synced"
"$alog_bin" append "$work/synced" <"$work/input" >/dev/null
t_cat_synced=$(median_s $runs true "'$alog_bin' cat '$work/synced' > /dev/null")
info "CLI cat of the same records appended with the final sync: $(ms "$t_cat_synced") (vs $(ms "$t_cat") after --no-sync, whose whole log is an unsynced tail, walked in parts)"
rm -rf "$work/synced"

# The same through pipes, as pipelines use the tool: each beside the same
# pipe with cat in alog's place (INFO: the issue sets no target for these).
sync
t_papp=$(median_s $runs "rm -rf '$log.p'" "cat '$work/input' | '$alog_bin' append --no-sync '$log.p' > /dev/null")
t_pcp=$(median_s $runs "rm -f '$work/copy'" "cat '$work/input' | cat > '$work/copy'")
info "CLI through a pipe: cat input | alog append --no-sync $(ms "$t_papp") against cat input | cat > file $(ms "$t_pcp") = $(calc "%.2f×" "$t_papp / $t_pcp")"
t_pcat=$(median_s $runs true "'$alog_bin' cat '$log' | cat > /dev/null")
t_praw=$(median_s $runs true "cat '$log'/*.seg | cat > /dev/null")
info "CLI through a pipe: alog cat | cat > /dev/null $(ms "$t_pcat") against cat of the segments | cat $(ms "$t_praw") = $(calc "%.2f×" "$t_pcat / $t_praw")"
rm -rf "$log.p" "$work/copy"

# seek on the big log: a record in the middle of a sealed segment.
if [[ -n $big && -d $big ]]; then
  segs=("$big"/*.seg)
  mid=$(basename "${segs[$((${#segs[@]} / 2))]}" .seg)
  next=$(basename "${segs[$((${#segs[@]} / 2 + 1))]}" .seg)
  seq=$(((10#$mid + 10#$next) / 2))
  t_seek=$(median_s 11 true "$alog_bin seek $big $seq" noshell)
  t_start=$(median_s 11 true "$alog_bin --version" noshell)
  row "CLI: alog seek on a ${#segs[@]}-segment log of 1 KiB records (p50)" "$(ms "$t_seek")" \
    "$(ms "$t_start") alog --version" "$(calc "%.2f×" "$t_seek / $t_start")" "≤ 20 ms" \
    "$(yesno "$t_seek <= 0.02")"
  if command -v strace >/dev/null; then
    preads=$(strace -f -c -e trace=pread64 "$alog_bin" seek "$big" "$seq" 2>&1 >/dev/null |
      awk '$NF == "pread64" { print $(NF - 1) }')
    info "CLI seek of sequence $seq: ${preads:-?} pread calls (strace)"
  fi
else
  info "CLI seek skipped: no big log directory given"
fi
# What every command pays before its work: each on a log of one record,
# beside the tool's start alone (all through sh, whose start is in each).
printf 'x\n' >"$work/line"
"$alog_bin" append -q "$work/one" <"$work/line" >/dev/null
fixed=""
for c in "append --no-sync $work/one <$work/line" "cat $work/one" "verify $work/one" "stats $work/one" \
  "cat -f --to 0 $work/one"; do
  fixed+="${fixed:+, }${c%% "$work"*} $(ms "$(median_s 21 true "$alog_bin $c")")"
done
info "CLI fixed cost, a log of one record (p50 of 21): $fixed; alog --version $(ms "$(median_s 21 true "$alog_bin --version")")"
info "CLI input: $lines lines, $input_bytes bytes; timer: $(command -v hyperfine >/dev/null && echo "hyperfine $(hyperfine --version | cut -d' ' -f2), median of $runs" || echo "date +%s%N, median of $runs")"
