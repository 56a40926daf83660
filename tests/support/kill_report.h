// The child's side of support/kill_protocol.h: report lines on stdout, one
// write(2) each, around the operations a kill helper performs on its log.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "alog/log.h"
#include "support/kill_protocol.h"
#include "support/oracle.h"

namespace alog::test {

inline void say(const std::string& line) {
  std::string l = line + "\n";
  ssize_t n = ::write(1, l.data(), l.size());
  (void)n;
}

// " <n1> <n2> ...", appended piece by piece (g++ 12 -O3 warns falsely,
// -Wrestrict, on `" " + std::to_string(n)` chains).
inline std::string numbers(std::initializer_list<uint64_t> v) {
  std::string s;
  for (uint64_t n : v) {
    s.push_back(' ');
    s.append(std::to_string(n));
  }
  return s;
}

// " <ok> <failed> <first> <next> <active_start> <second_start> <segments>"
inline std::string state(const Log& log, bool ok) {
  LiveState s = live_state(log);
  return numbers({ok, s.failed, s.first, s.next, s.active_start, s.second_start, s.segments});
}

// " <segments> <second_start>": what the model needs before a roll or append.
inline std::string before(const Log& log) {
  LiveState s = live_state(log);
  return numbers({s.segments, s.second_start});
}

// Log::open, reported around; nullptr (after the failed report) when it fails.
inline std::unique_ptr<Log> reported_open(const std::string& dir, const Options& o) {
  say("BO");
  auto opened = Log::open(dir, o);
  if (!opened.is_ok()) {
    std::fprintf(stderr, "open: %s\n", opened.status().to_string().c_str());
    say("EO 0 1 0 0 0 0 0");
    return nullptr;
  }
  std::unique_ptr<Log> log = std::move(opened).value();
  say("EO" + state(*log, true));
  return log;
}

// A batch of `n` records tagged `tag`, reported around the append.
inline void reported_append(Log& log, uint64_t tag, uint64_t n, uint64_t min_len,
                            uint64_t max_len) {
  std::string line = "BA";
  line.append(numbers({tag, n, min_len, max_len})).append(before(log));
  say(line);
  std::vector<std::string> batch;
  const uint64_t seq = log.next_sequence();
  for (uint64_t i = 0; i < n; i++)
    batch.push_back(make_payload(seq + i, tag, batch_len(tag, i, min_len, max_len)));
  std::vector<std::string_view> v(batch.begin(), batch.end());
  bool ok = log.append(v).is_ok();
  say("EA" + state(log, ok));
}

inline void reported_sync(Log& log) {
  say("BS");
  bool ok = log.sync().is_ok();
  say("ES" + state(log, ok));
}

}  // namespace alog::test
