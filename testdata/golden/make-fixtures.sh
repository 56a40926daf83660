#!/bin/sh
# Makes the damaged fixture logs in fixtures/ from the conformance vectors
# (see README.md). Run once from this directory; the results are committed,
# so their bytes (created_at included) stay fixed. Needs python3 and a built alog.
set -eu
ALOG=${ALOG:-../../build/alog}
V=../vectors
rm -rf fixtures && mkdir fixtures
poke() {  # poke FILE OFFSET XOR: flips bits of one byte
  python3 - "$1" "$2" "$3" <<'PY'
import sys
p, off, x = sys.argv[1], int(sys.argv[2]), int(sys.argv[3], 0)
b = bytearray(open(p, 'rb').read()); b[off] ^= x; open(p, 'wb').write(bytes(b))
PY
}
# A bit flipped in a payload of a sealed segment (record 3's payload, byte 10).
cp -r $V/multi-segment/log fixtures/sealed-payload-flip
poke fixtures/sealed-payload-flip/00000000000000000000.seg 266 0x01
# A bad segment header: a start-sequence bit of a sealed segment's header (CRC now fails).
cp -r $V/multi-segment/log fixtures/bad-segment-header
poke fixtures/bad-segment-header/00000000000000000061.seg 15 0x04
# One bad slot: slot A (the losing one) of the first segment has a flipped counter bit.
cp -r $V/multi-segment/log fixtures/bad-losing-slot
poke fixtures/bad-losing-slot/00000000000000000000.seg 87 0x01
# A gap between segments: a middle segment removed.
cp -r $V/multi-segment/log fixtures/segment-gap
rm fixtures/segment-gap/00000000000000000087.seg
# A recycled segment with stale frames behind its EOF: two 512-byte segments
# at most, written by one process (a later writer's open would trim them).
i=0
while [ $i -lt 14 ]; do
  printf 'record-%02d-%s\n' $i "abcdefghijklmnopqrstuvwxyz"
  i=$((i + 1))
done | $ALOG append --batch 1 --max-segments 2 --segment-size 512 --max-disk-size 0 fixtures/recycled >/dev/null
rm -f fixtures/recycled/LOCK
