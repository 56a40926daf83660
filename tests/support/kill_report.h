// The child's side of support/kill_protocol.h: report lines on stdout, one
// write(2) each, around the operations a kill helper performs on its log.
#pragma once

#include <unistd.h>

#include <cstdio>
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

// " <ok> <failed> <first> <next> <active_start> <second_start> <segments>"
inline std::string state(const Log& log, bool ok) {
  LiveState s = live_state(log);
  return " " + std::to_string(ok) + " " + std::to_string(s.failed) + " " + std::to_string(s.first) +
         " " + std::to_string(s.next) + " " + std::to_string(s.active_start) + " " +
         std::to_string(s.second_start) + " " + std::to_string(s.segments);
}

// " <segments> <second_start>": what the model needs before a roll or append.
inline std::string before(const Log& log) {
  LiveState s = live_state(log);
  return " " + std::to_string(s.segments) + " " + std::to_string(s.second_start);
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
  say("BA " + std::to_string(tag) + " " + std::to_string(n) + " " + std::to_string(min_len) + " " +
      std::to_string(max_len) + before(log));
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
