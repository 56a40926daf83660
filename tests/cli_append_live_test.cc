// `alog append` on a live pipe (man/alog-append.1 "LIVE INPUT"): records
// visible within the flush interval, full batches from a full pipe, clean
// stops on SIGTERM, SIGINT and SIGHUP, the payload limit enforced as bytes
// arrive, and failed appends that leave nothing behind. The test waits on
// what it can observe (the log, the child's pipes), never on a clock.
#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "alog/log.h"
#include "cli_child.h"
#include "cli_util.h"
#include "control_socket.h"

using namespace alog;
using namespace alog::test;
using namespace alog::test::cli;
using nlohmann::json;

namespace {

std::string payload_at(const std::string& dir, uint64_t seq) {
  auto log = Log::open_read(dir);
  REQUIRE(log.is_ok());
  auto rec = (*log)->read(seq);
  REQUIRE(rec.is_ok());
  return std::string(rec->payload);
}

// SIGTERM and SIGINT both pending when the stopped child runs again, so
// that the second one meets the stop the first began; its exit status.
int second_signal(Child& c) {
  c.stop();
  c.signal(SIGTERM);
  c.signal(SIGINT);
  c.resume();
  return c.wait_exit();
}

}  // namespace

TEST_CASE("append writes a record read from a pipe within the flush interval although its batch is not full") {
  TempDir t;
  std::string d = t / "log";
  Child c({"append", "--flush-interval", "20ms", d}, Child::Stdin::pipe);
  c.write("first\n");
  REQUIRE(wait_visible(d, 1));
  CHECK(payload_at(d, 0) == "first");
  c.write("second\nthird\n");
  REQUIRE(wait_visible(d, 3));
  CHECK(payload_at(d, 2) == "third");
  c.close_stdin();
  CHECK(c.wait_exit() == 0);
  CHECK(c.rest(0) == "2\n");
}

TEST_CASE("append of a full pipe writes full batches") {
  TempDir t;
  std::string d = t / "log";
  int p[2];
  REQUIRE(::pipe(p) == 0);
  std::string data;
  for (int i = 0; i < 2000; i++) data += "line " + std::to_string(i) + "\n";
  REQUIRE(data.size() < 65536);  // fits the pipe: all of it is there before the child reads
  REQUIRE(::write(p[1], data.data(), data.size()) == ssize_t(data.size()));
  ::close(p[1]);
  Child c({"--json", "append", "--batch", "500", d}, Child::Stdin::pipe, p[0]);
  CHECK(c.wait_exit() == 0);
  json j = json::parse(c.rest(0));
  CHECK(j["records"] == 2000);
  CHECK(j["batches"] == 4);
}

TEST_CASE("append stops cleanly on SIGTERM, SIGINT and SIGHUP: every complete record read is appended and synced, a partial one is reported, exit 130, \"signal\" the last key") {
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
    CAPTURE(sig);
    TempDir t;
    std::string d = t / "log";
    // A flush interval no test waits for: only the stop writes the records.
    Child c({"--json", "append", "--flush-interval", "1h", d}, Child::Stdin::pipe);
    c.write("a\nb\npart");
    REQUIRE(c.wait_stdin_drained());
    c.signal(sig);
    CHECK(c.wait_exit() == 130);
    const std::string out = c.rest(0);
    json j = json::parse(out);
    CHECK(j["exit_status"] == 130);
    CHECK(j["records"] == 2);
    CHECK(j["last_seq"] == 1);
    CHECK(j["synced"] == true);
    const std::string name = sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "SIGHUP";
    CHECK(j["signal"] == name);
    CHECK(out.ends_with(",\"signal\":\"" + name + "\"}\n"));  // the last key
    std::string err = c.rest(1);
    CHECK(err.find("alog: stdin:4: warning: partial record of 4 bytes (no terminator yet) not appended") !=
          std::string::npos);
    CHECK(visible_next(d) == 2);
    CHECK(payload_at(d, 1) == "b");
  }
}

TEST_CASE("a second signal during the stop ends append at once without appending a partial batch") {
  TempDir t;
  std::string d = t / "log";
  Child c({"--json", "append", "--flush-interval", "1h", d}, Child::Stdin::pipe);
  c.write("a\nb\nc\n");
  REQUIRE(c.wait_stdin_drained());
  CHECK(second_signal(c) == 130);
  json j = json::parse(c.rest(0));
  CHECK(j["error"]["code"] == "interrupted");
  // Which of the two pending signals the kernel delivers first is its choice.
  CHECK((j["error"]["signal"] == "SIGTERM" || j["error"]["signal"] == "SIGINT"));
  CHECK(j["error"]["last_appended_seq"] == nullptr);
  CHECK(j["error"]["resume"]["record"] == 1);
  CHECK(j["error"]["resume"]["offset"] == 0);
  CHECK(visible_next(d) == 0);
}

TEST_CASE("after a second signal, append --sync-each says the records it appended are durable: each was synced") {
  TempDir t;
  std::string d = t / "log";
  Child c({"--json", "append", "--sync-each", "--batch", "1", d}, Child::Stdin::pipe);
  c.write("a\nb\n");
  REQUIRE(wait_visible(d, 2));
  CHECK(second_signal(c) == 130);
  json j = json::parse(c.rest(0));
  CHECK(j["error"]["code"] == "interrupted");
  CHECK(j["error"]["last_appended_seq"] == 1);
  CHECK(j["error"]["last_durable_seq"] == 1);
  CHECK(j["error"]["resume"]["record"] == 3);
}

TEST_CASE("append enforces max_payload_size as the bytes of an endless line arrive") {
  TempDir t;
  std::string d = t / "log";
  // /dev/zero never ends a line: buffering it all would never finish.
  RunResult r = run("{ printf 'ok\\n'; cat /dev/zero; } | timeout 60 " + alog_cli() +
                    " --json append --batch 1 --max-payload-size 1KiB " + shq(d));
  CHECK(r.exit_code == 8);
  json j = json::parse(r.out);
  CHECK(j["error"]["code"] == "payload_too_large");
  CHECK(j["error"]["path"] == "stdin");
  CHECK(j["error"]["offset"] == 3);
  CHECK(j["error"]["last_durable_seq"] == 0);
  CHECK(j["error"]["resume"] == json{{"file", "stdin"}, {"record", 2}, {"offset", 3}});
  CHECK(r.err.find("record 2 is larger than max_payload_size 1024 (") != std::string::npos);
  CHECK(visible_next(d) == 1);
}

TEST_CASE("append takes a line of exactly max_payload_size bytes and refuses one a byte longer, with or without its terminator") {
  TempDir t;
  std::string d = t / "log";
  for (const char* split : {"", "-0 "}) {
    const char end = *split ? '\0' : '\n';
    RunResult ok = run_alog("--json append " + std::string(split) + "--max-payload-size 4 " + shq(d),
                            std::string("abcd") + end + "wxyz");
    CHECK(ok.exit_code == 0);
    RunResult r = run_alog("--json append " + std::string(split) + "--max-payload-size 4 " + shq(d),
                           std::string("abcd") + end + "abcde" + end);
    CHECK(r.exit_code == 8);
    json e = json::parse(r.out)["error"];
    CHECK(e["code"] == "payload_too_large");
    CHECK(e["message"] == "record 2 of 5 bytes is larger than max_payload_size 4 (nothing appended)");
    CHECK(e["offset"] == 5);
    CHECK(e["resume"]["record"] == 1);  // abcd was in the batch the refusal ended
  }
  CHECK(visible_next(d) == 4);  // abcd and wxyz, twice
}

TEST_CASE("a failed append to a new log leaves no log directory behind") {
  TempDir t;
  std::string d = t / "log";
  RunResult r = run_alog("--json append --max-payload-size 4 " + shq(d), "toolong\n");
  CHECK(r.exit_code == 8);
  CHECK(!file_exists(d));
  json j = json::parse(r.out);
  CHECK(j["error"]["last_durable_seq"] == nullptr);
  CHECK(j["error"]["resume"] == json{{"file", "stdin"}, {"record", 1}, {"offset", 0}});
  // An existing empty directory stays, and empty.
  std::string e = t / "empty";
  REQUIRE(run("mkdir " + shq(e)).exit_code == 0);
  CHECK(run_alog("append --max-payload-size 4 " + shq(e), "toolong\n").exit_code == 8);
  CHECK(list_dir(e).empty());
}

TEST_CASE("append takes --flush-interval and --sync-interval as durations and refuses others") {
  TempDir t;
  std::string d = t / "log";
  CHECK(run_alog("append --flush-interval 5ms --sync-interval 2s " + shq(d), "x\n").exit_code == 0);
  CHECK(run_alog("append --flush-interval 5 " + shq(d), "x\n").exit_code == 16);
  CHECK(run_alog("append --sync-interval 1s --no-sync " + shq(d), "x\n").exit_code == 16);
}
