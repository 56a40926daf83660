#!/bin/sh
# run_fuzz.sh FUZZER SEED_CORPUS WORK_DIR [libFuzzer flags...]: fuzzes from a
# copy of the seed corpus (the committed one stays as it is). Defaults: 5M
# executions for the reader and frames targets, an hour for the model target,
# a 64 MB RSS limit (256 MB for the model target).
set -e
fuzzer=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") seeds=$2 work=$3
shift 3
rm -rf "$work" && mkdir -p "$work/corpus" && cp "$seeds"/* "$work/corpus/"
cd "$work"
case "$fuzzer" in
  *fuzz_model) set -- -max_total_time=3600 -rss_limit_mb=256 "$@" ;;
  *) set -- -runs=5000000 -rss_limit_mb=64 -entropic=0 "$@" ;;
esac
exec "$fuzzer" -max_len=4096 -print_final_stats=1 "$@" corpus
