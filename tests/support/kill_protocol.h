// What the kill helpers (tests/kill_helper.cc, tests/holder_kill_helper.cc:
// child processes driving a real log) and their parents (tests/kill_test.cc,
// tests/holder_kill_test.cc) agree on: the report lines and how a batch's
// payload lengths follow from its tag. The child's side is
// support/kill_report.h, the parent's support/kill_parent.h.
//
// The child writes one line per event, in one write(2) each, before it starts
// an operation and after it returns:
//   BA <tag> <records> <min_len> <max_len> <segments> <second_start>   append begins
//   BR <segments> <second_start>                                   roll begins
//   BS | BTB <seq> | BTA <seq> | BC | BO                         sync, truncations, close, open begin
//   E<op> <ok> <failed> <first> <next> <active_start> <second_start> <segments>
//                                                                 the operation returned
//   LISTEN                                                         a holder serves its control socket
//   SERVED                                                         a holder replied to the request
//   DONE                                                           the workload ended
// Record i of a batch tagged t at sequence s has payload
// make_payload(s, t, batch_len(t, i, min_len, max_len)).
#pragma once

#include <cstdint>
#include <cstddef>

namespace alog::test {

inline size_t batch_len(uint64_t tag, uint64_t i, uint64_t min_len, uint64_t max_len) {
  uint64_t x = (tag * 0x9E3779B97F4A7C15ull) ^ (i + 1) * 0xBF58476D1CE4E5B9ull;
  x ^= x >> 31;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 29;
  return static_cast<size_t>(min_len + x % (max_len - min_len + 1));
}

}  // namespace alog::test
