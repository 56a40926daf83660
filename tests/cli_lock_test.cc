// The lock seen from the CLI: the holder's pid in LOCK, the `locked` error
// naming it, and --wait on every command that takes the lock.
#include <doctest/doctest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>

#include "alog/log.h"
#include "cli_child.h"
#include "cli_util.h"

using namespace alog;
using namespace alog::test;
using namespace alog::test::cli;
using nlohmann::json;

TEST_CASE("a writer writes its pid into LOCK") {
  TempDir t;
  std::string d = t / "log";
  auto log = Log::open(d);
  REQUIRE(log.is_ok());
  CHECK(read_file(d + "/LOCK") == std::to_string(::getpid()) + "\n");
}

TEST_CASE("the locked error names the holder's pid") {
  TempDir t;
  std::string d = t / "log";
  auto log = Log::open(d);
  REQUIRE(log.is_ok());
  REQUIRE((*log)->append_one("x").is_ok());
  RunResult r = run_alog("--json append " + shq(d), "y\n");
  CHECK(r.exit_code == 8);
  json j = json::parse(r.out);
  CHECK(j["error"]["code"] == "locked");
  CHECK(j["error"]["holder_pid"] == ::getpid());
  CHECK(r.err == "alog: " + d + "/LOCK: another process (pid " + std::to_string(::getpid()) +
                     ") holds the lock (nothing appended)\n");
  CHECK(j["error"]["resume"] == json{{"file", "stdin"}, {"record", 1}, {"offset", 0}});
}

TEST_CASE("--wait gives up after its duration with an error naming the holder's pid, on every command that takes the lock") {
  TempDir t;
  std::string d = t / "log";
  auto log = Log::open(d);
  REQUIRE(log.is_ok());
  REQUIRE((*log)->append_one("x").is_ok());
  REQUIRE((*log)->append_one("y").is_ok());
  const std::string pid = std::to_string(::getpid());
  for (std::string cmd : {"append --wait 50ms " + shq(d), "truncate-before --wait 50ms --keep 1 " + shq(d),
                          "truncate-before -n --wait 50ms --keep 1 " + shq(d),
                          "truncate-after --wait 50ms " + shq(d) + " 0", "recover --wait 50ms " + shq(d),
                          "recover -n --wait 50ms " + shq(d), "roll --wait 50ms " + shq(d)}) {
    CAPTURE(cmd);
    RunResult r = run_alog(cmd, "z\n");
    CHECK(r.exit_code == 8);
    const std::string got = cmd.rfind("append", 0) == 0 ? " (nothing appended)" : "";  // alog-append(1)
    CHECK(r.err == "alog: " + d + "/LOCK: another process (pid " + pid +
                       ") still holds the lock after waiting 50 ms" + got + "\n");
  }
}

TEST_CASE("--wait takes the lock once the holder lets go") {
  TempDir t;
  std::string d = t / "log";
  auto log = Log::open(d);
  REQUIRE(log.is_ok());
  REQUIRE((*log)->append_one("x").is_ok());
  Child c({"append", "--wait", "30s", d}, Child::Stdin::pipe);
  c.write("y\n");
  c.close_stdin();
  log->reset();  // closes: the flock goes
  CHECK(c.wait_exit() == 0);
  CHECK(c.rest(0) == "1\n");
}

TEST_CASE("a signal ends a --wait for the lock at once with exit 130, changing nothing") {
  TempDir t;
  std::string d = t / "log";
  auto log = Log::open(d);
  REQUIRE(log.is_ok());
  REQUIRE((*log)->append_one("x").is_ok());
  Child c({"truncate-after", "--wait", "1h", d, "0"});
  c.pause_between_looks();  // it waits between two tries for the lock
  c.resume();
  c.signal(SIGTERM);
  CHECK(c.wait_exit() == 130);
  CHECK(c.rest(1).find("interrupted by SIGTERM") != std::string::npos);
  CHECK((*log)->next_sequence() == 1);
}
