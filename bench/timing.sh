# Shared by the whole-process benchmarks (sourced, bash): ROW/INFO output
# (bench/harness.h's format) and a median wall-clock timer. The caller sets
# $work, a scratch directory.

info() { printf 'INFO\t%s\n' "$*"; }
row() { printf 'ROW\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@"; }

# median_s RUNS PREPARE COMMAND [noshell]: median wall-clock seconds of
# COMMAND, run by sh (hyperfine subtracts the shell's own start-up), or with
# "noshell" exec'd directly, split at spaces (its output is discarded either
# way).
median_s() {
  local runs=$1 prepare=$2 cmd=$3 shell=()
  [[ ${4:-} == noshell ]] && shell=(-N)
  if command -v hyperfine >/dev/null; then
    hyperfine "${shell[@]}" --style none --runs "$runs" --warmup 1 --prepare "$prepare" \
      --export-csv "$work/h.csv" "$cmd" >/dev/null 2>"$work/h.err" ||
      { cat "$work/h.err" >&2; return 1; }
    awk -F, 'NR == 2 { print $4 }' "$work/h.csv"  # command,mean,stddev,median,...
  else
    # Output goes to /dev/null here too: this function's own output is the
    # figure (a command that prints, like seek, made it unparsable).
    local i t0 t1 run=(sh -c "$cmd")
    [[ ${4:-} == noshell ]] && read -ra run <<<"$cmd"
    : >"$work/t"
    sh -c "$prepare" >/dev/null
    "${run[@]}" >/dev/null  # warm-up
    for ((i = 0; i < runs; i++)); do
      sh -c "$prepare" >/dev/null
      t0=$(date +%s%N)
      "${run[@]}" >/dev/null
      t1=$(date +%s%N)
      echo $(((t1 - t0))) >>"$work/t"
    done
    sort -n "$work/t" | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.6f\n", m / 1e9 }'
  fi
}
calc() { awk "BEGIN { printf \"$1\", $2 }"; }
ms() { calc "%.1f ms" "$1 * 1000"; }
yesno() { if awk "BEGIN { exit !($1) }"; then echo yes; else echo NO; fi; }
