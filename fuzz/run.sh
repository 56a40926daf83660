#!/bin/sh
# fuzz/run.sh BUILD_DIR: the CI's bounded fuzzing (.ci/run calls it after
# building BUILD_DIR with ALOG_BUILD_FUZZ=ON and clang). Each target fuzzes
# from a copy of its seed corpus:
#   fuzz_reader  FUZZ_READER_RUNS executions (default 5,000,000), 64 MB RSS limit
#   fuzz_frames  FUZZ_FRAMES_RUNS executions (default 2,000,000), 64 MB RSS limit
#   fuzz_model   FUZZ_MODEL_SECONDS seconds (default 300), 256 MB RSS limit
# Any crash, leak, sanitizer report, invariant violation, OOM or timeout fails
# the run; libFuzzer leaves the input in BUILD_DIR/fuzz-work/TARGET/.
set -eu
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
export ASAN_OPTIONS="${ASAN_OPTIONS:-quarantine_size_mb=4:malloc_context_size=2}"
run() {
  t=$1
  shift
  echo "fuzz_$t: $*"
  "$here/run_fuzz.sh" "$build/fuzz/fuzz_$t" "$here/corpus/$t" "$build/fuzz-work/$t" -timeout=60 "$@"
}
run reader -runs="${FUZZ_READER_RUNS:-5000000}"
run frames -runs="${FUZZ_FRAMES_RUNS:-2000000}"
run model -max_total_time="${FUZZ_MODEL_SECONDS:-300}" -runs=100000000
