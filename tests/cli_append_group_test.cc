// `alog append` writes the batches it has collected together
// (Log::append_batches) and still keeps --batch records per batch, writes
// every whole batch before an input error ends it, and on a log error says
// exactly which batches were appended and where the input resumes; a pipe
// it reads from holds a whole input block.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <fstream>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_child.h"
#include "cli_util.h"
#include "control_socket.h"

using namespace alog;
using namespace alog::test;
using namespace alog::test::cli;
using nlohmann::json;

namespace {

std::string numbered_lines(int n, size_t width) {
  std::string s;
  for (int i = 0; i < n; i++) {
    std::string line = std::to_string(i);
    line.resize(width, '.');
    s += line;
    s += '\n';
  }
  return s;
}

}  // namespace

TEST_CASE("append of many lines at once keeps --batch records per batch and every line in order") {
  TempDir t;
  std::string d = t / "log";
  const std::string input = numbered_lines(10000, 60);
  RunResult r = run_alog("append --batch 7 " + shq(d), input);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "9999\n");
  json s = json::parse(run_alog("--json stats " + shq(d)).out);
  CHECK(s["totals"]["batches"] == (10000 + 6) / 7);
  CHECK(s["totals"]["records"] == 10000);
  CHECK(run_alog("cat " + shq(d)).out == input);
  CHECK(run_alog("verify " + shq(d)).exit_code == 0);
}

TEST_CASE("append writes the whole batches read before an input error and not the open one") {
  TempDir t;
  std::string d = t / "log";
  // Five lines, then a line longer than max_payload_size: batches {a b} and
  // {c d} are whole, {e} is still open when the input fails.
  RunResult r = run_alog("--json append --batch 2 --max-payload-size 1KiB " + shq(d),
                         "a\nb\nc\nd\ne\n" + std::string(2000, 'z'));
  CHECK(r.exit_code == 8);
  json j = json::parse(r.out);
  CHECK(j["error"]["code"] == "payload_too_large");
  CHECK(j["error"]["last_appended_seq"] == 3);
  CHECK(j["error"]["last_durable_seq"] == 3);
  CHECK(j["error"]["resume"] == json{{"file", "stdin"}, {"record", 5}, {"offset", 8}});
  CHECK(visible_next(d) == 4);
  CHECK(run_alog("cat " + shq(d)).out == "a\nb\nc\nd\n");
}

TEST_CASE(
    "append over the disk budget in the middle of a write appends the batches that fit and resumes "
    "at the first that did not") {
  TempDir t;
  std::string d = t / "log";
  // An empty segment is 208 bytes and each 100-byte line a 116-byte frame:
  // a budget of 208 + 10 * 116 bytes holds ten one-record batches.
  const std::string input = numbered_lines(20, 100);
  RunResult r = run_alog(
      "--json append --batch 1 --max-disk-size " + std::to_string(208 + 10 * 116) + " " + shq(d),
      input);
  CHECK(r.exit_code == 8);
  json j = json::parse(r.out);
  CHECK(j["error"]["code"] == "disk_full");
  CHECK(j["error"]["last_appended_seq"] == 9);
  CHECK(j["error"]["last_durable_seq"] == 9);
  CHECK(j["error"]["resume"] == json{{"file", "stdin"}, {"record", 11}, {"offset", 10 * 101}});
  CHECK(run_alog("cat " + shq(d)).out == input.substr(0, 10 * 101));
  CHECK(run_alog("verify " + shq(d)).exit_code == 0);
}

TEST_CASE("append keeps the open batch's records when it goes on to the next input file") {
  TempDir t;
  std::string d = t / "log";
  std::string f1 = t / "one", f2 = t / "two", f3 = t / "three";
  write_file(f1, "a\nbb\n");  // short records: a copy must not point into the object
  write_file(f2, "ccc\n");
  write_file(f3, numbered_lines(3000, 40));
  RunResult r =
      run_alog("append --batch 4 " + shq(d) + " " + shq(f1) + " " + shq(f2) + " " + shq(f3));
  REQUIRE(r.exit_code == 0);
  CHECK(run_alog("cat " + shq(d)).out == "a\nbb\nccc\n" + numbered_lines(3000, 40));
  json s = json::parse(run_alog("--json stats " + shq(d)).out);
  CHECK(s["totals"]["batches"] == (3003 + 3) / 4);
}

TEST_CASE("append --ndjson keeps decoded payloads of the open batch across reads of the input") {
  TempDir t;
  std::string src = t / "src", dst = t / "dst";
  const std::string input = numbered_lines(20000, 30);
  REQUIRE(run_alog("append " + shq(src), input).exit_code == 0);
  RunResult c = run_alog("--json cat " + shq(src));
  REQUIRE(c.exit_code == 0);
  REQUIRE(c.out.size() > 1024 * 1024);  // more than one read of the input
  REQUIRE(run_alog("append --ndjson --batch 333 " + shq(dst), c.out).exit_code == 0);
  CHECK(run_alog("cat " + shq(dst)).out == input);
}

TEST_CASE("append from a pipe makes the pipe hold a whole input block, so that writer and reader wake once per block") {
  TempDir t;
  std::string d = t / "log";
  std::ifstream max_file("/proc/sys/fs/pipe-max-size");
  long max = 0;
  max_file >> max;
  if (max < 512 * 1024) return;  // the system caps pipes below a block: nothing to see
  int p[2];
  REQUIRE(::pipe2(p, O_CLOEXEC) == 0);  // the child keeps no write end open
  REQUIRE(::fcntl(p[1], F_GETPIPE_SZ) < 512 * 1024);
  Child c({"append", "--flush-interval", "1ms", d}, Child::Stdin::pipe, p[0]);
  REQUIRE(::write(p[1], "first\n", 6) == 6);
  REQUIRE(wait_visible(d, 1));  // the reader was made before it read the record
  CHECK(::fcntl(p[1], F_GETPIPE_SZ) >= 512 * 1024);
  ::close(p[1]);
  CHECK(c.wait_exit() == 0);
}
