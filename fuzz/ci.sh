#!/bin/sh
# CI's bounded fuzz run: fuzz_reader for 5M executions split over two
# processes (one per core), then fuzz_frames, fuzz_model and fuzz_tools for a
# fixed time each. BUILD_DIR is a libFuzzer build with LSan and UBSan, for
# the targets that start no thread (reader, frames); the model and the tools
# come from THREADS_BUILD_DIR (default BUILD_DIR), in CI a libFuzzer build
# with ASan and UBSan. Why: clang 14's standalone LeakSanitizer runtime
# crashes in __lsan::CurrentThreadContext (a SEGV, always on thread 1023 or
# 2047 of the process's life): it reads its thread registry, it seems,
# while a new thread grows it (inferred from the crashes, not from the
# runtime's source). The tools target met it within the first 250-600
# executions in about one run in ten. ASan's runtime finds a
# thread's context through thread-specific data, and checks every memory
# access besides. Any crash, leak, UB report or OOM (64 MB; the model's and
# the tools' below) fails the run; each part is bounded in time so CI always
# finishes. Seeds are fixed, so a run can be repeated (up to where a time
# bound cuts it). Longer runs: README.md here.
# Usage: ci.sh BUILD_DIR [THREADS_BUILD_DIR]
set -eu
build=$1
threads_build=${2:-$1}
reader_time=${ALOG_FUZZ_READER_SECONDS:-1800}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export ASAN_OPTIONS=quarantine_size_mb=4:malloc_context_size=2:detect_leaks=1
export LSAN_OPTIONS=malloc_context_size=8
run() {  # name build target seed-dir flags...
  name=$1 bin=$2/fuzz/$3 seeds=$4
  shift 4
  mkdir -p "$work/$name" && cp "$seeds"/* "$work/$name/"
  "$bin" -max_len=4096 -rss_limit_mb=64 -timeout=60 -detect_leaks=1 -print_final_stats=1 \
    -artifact_prefix="$work/$name-" "$@" "$work/$name" \
    >"$work/$name.log" 2>&1
}
status=0
run reader1 "$build" fuzz_reader "$here/corpus/reader" -runs=2500000 -entropic=0 -max_total_time="$reader_time" -seed=1 &
p1=$!
run reader2 "$build" fuzz_reader "$here/corpus/reader" -runs=2500000 -entropic=0 -max_total_time="$reader_time" -seed=2 &
p2=$!
wait $p1 || status=1
wait $p2 || status=1
run frames "$build" fuzz_frames "$here/corpus/frames" -entropic=0 -seed=3 -max_total_time="${ALOG_FUZZ_FRAMES_SECONDS:-240}" || status=1
# The model's workloads start a reaper thread per truncating log, and the
# tools run every command in-process, each starting threads (a LOCK probe
# per log opened, verify's thread per core): ~2 and ~4 per execution. The
# sanitizer keeps bookkeeping per exited thread, so RSS grows with the runs
# (under ASan here: the model 99 MB after 17,600 executions, the tools 82 MB
# after 15,300): loose RSS limits, a single allocation capped instead, and
# at most 60k and 80k executions if the time bound has not stopped them
# first.
run model "$threads_build" fuzz_model "$here/corpus/model" -seed=4 -max_total_time="${ALOG_FUZZ_MODEL_SECONDS:-180}" \
  -runs=60000 -rss_limit_mb=1024 -malloc_limit_mb=64 || status=1
run tools "$threads_build" fuzz_tools "$here/corpus/reader" -entropic=0 -seed=5 \
  -max_total_time="${ALOG_FUZZ_TOOLS_SECONDS:-150}" -runs=80000 -rss_limit_mb=2048 -malloc_limit_mb=128 || status=1
for f in "$work"/*.log; do
  echo "== $(basename "$f" .log): $(grep -E 'stat::number_of_executed_units' "$f" | awk '{print $2}') executions"
  [ $status -eq 0 ] || tail -40 "$f"
done
# An input that failed, printed so that a CI log is enough to replay it:
# base64 -d > input && fuzz_TARGET input (fuzz/README.md).
for a in "$work"/*-crash-* "$work"/*-leak-* "$work"/*-timeout-* "$work"/*-oom-* "$work"/*-slow-unit-*; do
  [ -f "$a" ] || continue
  echo "== artifact $(basename "$a") (base64):"
  base64 -w0 "$a"
  echo
done
total=$(cat "$work"/reader*.log | awk '/stat::number_of_executed_units/ {s += $2} END {print s + 0}')
echo "fuzz_reader: $total executions in all (target 5000000)"
exit $status
