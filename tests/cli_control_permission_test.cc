// The control socket's permissions (man/alog-append.1 "CONTROL SOCKET"):
// the holder serves its own uid and root only; another user's request is
// refused by the holder's own check, or by the socket's mode, and the
// holder keeps ingesting. The tests wait on what they can observe (the
// socket, the log, the child's pipes), never on a clock.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_child.h"
#include "cli_control_util.h"
#include "cli_util.h"
#include "control_service.h"
#include "control_socket.h"

using namespace alog;
using namespace alog::test;
using namespace alog::test::cli;
using namespace alog::test::control;
using nlohmann::json;

TEST_CASE("the holder serves its own uid and root only") {
  CHECK(alog::cli::peer_allowed(1000, 1000));
  CHECK(alog::cli::peer_allowed(0, 1000));
  CHECK(alog::cli::peer_allowed(0, 0));
  CHECK_FALSE(alog::cli::peer_allowed(1001, 1000));
  CHECK_FALSE(alog::cli::peer_allowed(65534, 0));
}

TEST_CASE("a request from another uid is refused with an error and the holder goes on") {
  // Where nobody cannot be had, only peer_allowed tests the check.
  const std::string nobody = alog_as_nobody();
  if (nobody.empty()) return;
  TempDir t;
  std::string d = t / "log";
  make_log(d, 20);
  Child c({"append", "--flush-interval", "20ms", d}, Child::Stdin::pipe);
  REQUIRE(wait_listening(d));
  // Let nobody reach the socket, so that the holder's own check decides.
  REQUIRE(::chmod(t.path().c_str(), 0755) == 0);
  REQUIRE(::chmod(d.c_str(), 0755) == 0);
  REQUIRE(::chmod(sock_of(d).c_str(), 0666) == 0);
  RunResult r = run(nobody + " truncate-before --keep 1 " + shq(d));
  CHECK(r.exit_code == 8);
  CHECK(r.out == "");
  CHECK(r.err == "alog: " + sock_of(d) +
                     ": the holder refused the request: uid 65534 may not send requests to this holder (uid 0): "
                     "only its own uid and root may\n");
  check_records(d, 0, 0, 20);
  c.write(records(20, 25));
  REQUIRE(wait_visible(d, 25));
  c.close_stdin();
  CHECK(c.wait_exit() == 0);
  check_records(d, 0, 0, 25);
}

TEST_CASE("another user whose connection the socket's mode refuses fails with permission_denied naming the socket") {
  const std::string nobody = alog_as_nobody();
  if (nobody.empty()) return;
  TempDir t;
  std::string d = t / "log";
  make_log(d, 20);
  Child c({"append", "--flush-interval", "20ms", d}, Child::Stdin::pipe);
  REQUIRE(wait_listening(d));
  // nobody may reach the directory; the socket keeps its mode 0600.
  REQUIRE(::chmod(t.path().c_str(), 0755) == 0);
  REQUIRE(::chmod(d.c_str(), 0755) == 0);
  for (const std::string& cmd : {"truncate-before --keep 1 " + shq(d), "truncate-after " + shq(d) + " 5",
                                 "roll " + shq(d)}) {
    RunResult r = run(nobody + " --json " + cmd);
    INFO(cmd << ": " << r.err);
    CHECK(r.exit_code == 8);
    json j = json::parse(r.out);
    CHECK(j["error"]["code"] == "permission_denied");
    CHECK(j["error"]["path"] == sock_of(d));
    CHECK(r.err == "alog: " + sock_of(d) +
                       ": connect: Permission denied: uid 65534 may not send requests to this holder: "
                       "only its own uid and root may\n");
  }
  check_records(d, 0, 0, 20);
  c.close_stdin();
  CHECK(c.wait_exit() == 0);
}
