// cat --cursor-file (man/alog-cat.1): a consumer that restarts gets every
// record once, and is told when the record at its cursor is gone or differs.
#include <doctest/doctest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "alog/crc32c.h"
#include "alog/log.h"
#include "cli_child.h"
#include "cli_util.h"

using namespace alog;
using namespace alog::test;
using namespace alog::test::cli;
using nlohmann::json;

namespace {

std::string payload(uint64_t seq) { return "record " + std::to_string(seq); }

void append_n(Log& log, int n) {
  for (int i = 0; i < n; i++) REQUIRE(log.append_one(payload(log.next_sequence())).is_ok());
}

uint64_t cursor_seq(const std::string& file) {
  if (!file_exists(file)) return UINT64_MAX;
  json j = json::parse(read_file(file), nullptr, false);
  return j.is_object() && j.contains("seq") ? j["seq"].get<uint64_t>() : UINT64_MAX;
}

}  // namespace

TEST_CASE("cat --cursor-file starts after the record the cursor names and rewrites the cursor") {
  TempDir t;
  std::string d = t / "log", cur = t / "cursor";
  auto log = Log::open(d);
  REQUIRE(log.is_ok());
  append_n(**log, 3);
  RunResult r = run_alog("cat --cursor-file " + shq(cur) + " " + shq(d));
  CHECK(r.exit_code == 0);
  CHECK(r.out == "record 0\nrecord 1\nrecord 2\n");
  uint32_t crc = crc32c(payload(2).data(), payload(2).size());
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%08x", crc);
  CHECK(read_file(cur) == "{\"seq\":2,\"crc\":\"" + std::string(hex) + "\"}\n");
  CHECK(run_alog("cat --cursor-file " + shq(cur) + " " + shq(d)).out == "");
  append_n(**log, 2);
  CHECK(run_alog("cat --cursor-file " + shq(cur) + " " + shq(d)).out == "record 3\nrecord 4\n");
  CHECK(cursor_seq(cur) == 4);
}

TEST_CASE("cat --cursor-file exits 4 when the record at the cursor is gone or differs, unless --from overrides") {
  TempDir t;
  std::string d = t / "log", cur = t / "cursor";
  auto log = Log::open(d);
  REQUIRE(log.is_ok());
  append_n(**log, 5);
  REQUIRE(run_alog("cat --to 2 --cursor-file " + shq(cur) + " " + shq(d)).exit_code == 0);
  REQUIRE(cursor_seq(cur) == 2);
  // Cut after 1, then another record 2: not the one the consumer was given.
  REQUIRE((*log)->truncate_after(1).is_ok());
  REQUIRE((*log)->append_one("other").is_ok());
  RunResult r = run_alog("--json cat --cursor-file " + shq(cur) + " " + shq(d));
  CHECK(r.exit_code == 4);
  json e = json::parse(r.out);
  CHECK(e["error"]["code"] == "cursor_mismatch");
  CHECK(r.err.find("differs") != std::string::npos);
  CHECK(cursor_seq(cur) == 2);  // unchanged
  // Gone: truncated before.
  append_n(**log, 2);
  REQUIRE((*log)->truncate_before(3).is_ok());
  r = run_alog("cat --cursor-file " + shq(cur) + " " + shq(d));
  CHECK(r.exit_code == 4);
  CHECK(r.err.find("is no longer in the log") != std::string::npos);
  r = run_alog("cat --from 0 --cursor-file " + shq(cur) + " " + shq(d));
  CHECK(r.exit_code == 0);
  CHECK(r.out == payload(3) + "\n" + payload(4) + "\n");
  CHECK(cursor_seq(cur) == 4);
}

TEST_CASE("cat --cursor-file refuses a file that is not a cursor") {
  TempDir t;
  std::string d = t / "log", cur = t / "cursor";
  auto log = Log::open(d);
  REQUIRE(log.is_ok());
  append_n(**log, 1);
  write_file(cur, "garbage\n");
  RunResult r = run_alog("cat --cursor-file " + shq(cur) + " " + shq(d));
  CHECK(r.exit_code == 8);
  check_one_line_error(r, cur);
}

TEST_CASE("cat -f --cursor-file rewrites the cursor as records are written, and a restart gets no record twice") {
  TempDir t;
  std::string d = t / "log", cur = t / "cursor";
  auto log = Log::open(d);
  REQUIRE(log.is_ok());
  append_n(**log, 2);
  {
    Child c({"cat", "-f", "--cursor-file", cur, d});
    CHECK(c.line(0) == payload(0));
    CHECK(c.line(0) == payload(1));
    append_n(**log, 1);
    CHECK(c.line(0) == payload(2));
    // The cursor follows the output (written after it, so wait for it).
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kFailsafeMs);
    while (cursor_seq(cur) != 2 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
    CHECK(cursor_seq(cur) == 2);
    CHECK(c.interrupt() == 130);
  }
  append_n(**log, 1);
  CHECK(run_alog("cat --cursor-file " + shq(cur) + " " + shq(d)).out == payload(3) + "\n");
}

TEST_CASE("cat --cursor-file fails with io when the cursor cannot be written, after the records it printed") {
  TempDir t;
  std::string d = t / "log";
  auto log = Log::open(d);
  REQUIRE(log.is_ok());
  append_n(**log, 1);
  RunResult r = run_alog("cat --cursor-file " + shq(t / "missing/cursor") + " " + shq(d));
  CHECK(r.exit_code == 8);
  CHECK(r.out == payload(0) + "\n");
  check_one_line_error(r, t / "missing/cursor");
}

TEST_CASE("cat --cursor-file on every core prints and leaves the cursor a reading in order does, from any cursor") {
  // --to disables the parallel reading: the reading in order is the reference.
  TempDir t;
  std::string lines;
  for (int i = 0; i < 60000; i++) lines += "line " + std::to_string(i) + std::string(80 + i % 23, 'c') + "\n";
  const std::string many = t / "many", tail = t / "tail";
  // Many small segments; and one segment whose ~6 MB are all unsynced, its
  // tail walked in the background and taken over by the parallel reading.
  REQUIRE(run_alog("append --segment-size 256KiB --checkpoint-stride 8 " + shq(many), lines).exit_code == 0);
  REQUIRE(run_alog("append --no-sync " + shq(tail), lines).exit_code == 0);
  for (const std::string& d : {many, tail})
    for (const char* start : {"", "0", "1", "29999", "59998", "59999"}) {
      INFO(d << " cursor after " << (*start ? start : "nothing"));
      const std::string fast = t / "fast", slow = t / "slow";
      std::remove(fast.c_str());
      std::remove(slow.c_str());
      if (*start) {  // a cursor at that record, as cat leaves it
        REQUIRE(run_alog("cat --count " + std::to_string(std::stoull(start) + 1) + " --cursor-file " + shq(fast) +
                         " " + shq(d)).exit_code == 0);
        REQUIRE(cursor_seq(fast) == std::stoull(start));
        write_file(slow, read_file(fast));
      }
      RunResult want = run_alog("cat --to 18446744073709551615 --cursor-file " + shq(slow) + " " + shq(d));
      RunResult got = run_alog("cat -j 2 --cursor-file " + shq(fast) + " " + shq(d));
      CHECK(got.exit_code == want.exit_code);
      CHECK(got.out.size() == want.out.size());
      CHECK(got.out == want.out);
      CHECK(got.err == want.err);
      CHECK(read_file(fast) == read_file(slow));
      CHECK(cursor_seq(fast) == 59999);
    }
}

TEST_CASE("cat --cursor-file saves the cursor each time a chunk reaches standard output, so a consumer killed mid-read gets no record twice") {
  TempDir t;
  const std::string d = t / "log";
  std::string input;
  char line[128];
  for (int i = 0; i < 30000; i++) {  // 100 bytes a line: 3 MB, about three chunks
    std::snprintf(line, sizeof line, "%099d\n", i);
    input += line;
  }
  REQUIRE(run_alog("append -q " + shq(d), input).exit_code == 0);
  // Plain text goes out in parts from every core; --seq through the scanner.
  for (const std::string style : {"", "--seq "}) {
    CAPTURE(style);
    const std::string cur = t / ("cursor" + std::to_string(style.size()));
    // The reader stops after 2 MB: the first chunk (1 MiB) and the rest of
    // its batch are out, the cursor saved after them; cat dies of SIGPIPE.
    RunResult first = run(alog_cli() + " cat " + style + "--cursor-file " + shq(cur) + " " + shq(d) +
                          " | head -c 2000000 > /dev/null");
    CHECK(first.exit_code == 0);
    const uint64_t s = cursor_seq(cur);
    REQUIRE(s != UINT64_MAX);
    CHECK(s >= (1u << 20) / 100 - 1);
    CHECK(s < 30000);
    // The restart prints exactly the records after the cursor.
    RunResult rest = run_alog("cat " + style + "--cursor-file " + shq(cur) + " " + shq(d));
    CHECK(rest.exit_code == 0);
    CHECK(count_lines(rest.out) == 30000 - (s + 1));
    std::snprintf(line, sizeof line, "%099d\n", int(s + 1));
    CHECK(rest.out.substr(style.empty() ? 0 : rest.out.find('\t') + 1, 100) == line);
    CHECK(cursor_seq(cur) == 29999);
  }
}
