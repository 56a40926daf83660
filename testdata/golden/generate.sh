#!/bin/sh
# Regenerates the golden outputs in out/ (see README.md): for every log in
# cases.tsv, the stdout and exit status of `alog ARGS log`, run from the
# log's parent directory so that paths in the output are just "log".
# Check every diff by eye before committing.
set -eu
ALOG=${ALOG:-$(cd "$(dirname "$0")" && cd ../../build && pwd)/alog}
cd "$(dirname "$0")"
rm -rf out && mkdir out
while IFS='	' read -r name dir args; do
  case "$name" in ''|'#'*) continue ;; esac
  set +e
  (cd "$dir/.." && "$ALOG" $args "$(basename "$dir")") > "out/$name" 2>/dev/null
  echo $? > "out/$name.status"
  set -e
done < cases.tsv
