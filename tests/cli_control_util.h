// Shared by the control socket tests: the records they append and check.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "alog/log.h"
#include "cli_util.h"

namespace alog::test::control {

inline std::string record(int i) { return "record " + std::to_string(i) + " " + std::string(90, 'x'); }

inline std::string records(int from, int to) {
  std::string s;
  for (int i = from; i < to; i++) s += record(i) + "\n";
  return s;
}

// A closed log of `n` records in several 4 KiB segments.
inline void make_log(const std::string& dir, int n) {
  RunResult r = cli::run_alog("append -q --segment-size 4k --batch 10 " + shq(dir), records(0, n));
  REQUIRE(r.exit_code == 0);
}

// Every record of the log, in order, is record(first + i).
inline void check_records(const std::string& dir, uint64_t first_seq, int first, uint64_t next) {
  auto log = Log::open_read(dir);
  REQUIRE(log.is_ok());
  CHECK((*log)->first_sequence() == first_seq);
  CHECK((*log)->next_sequence() == next);
  for (uint64_t s = first_seq; s < next; s++) {
    auto rec = (*log)->read(s);
    REQUIRE(rec.is_ok());
    CHECK(std::string(rec->payload) == record(first + int(s - first_seq)));
  }
}

}  // namespace alog::test::control
