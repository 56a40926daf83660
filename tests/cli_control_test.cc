// The control socket of a live `alog append` (man/alog-append.1 "CONTROL
// SOCKET"): truncate-before, truncate-after and roll reach the holder of
// the lock through DIR/control.sock and print what they print alone; the
// holder refuses other users and bad requests and keeps ingesting; a stale
// socket is replaced, anything else at the name is left alone. The tests
// wait on what they can observe (the socket, the log, the child's pipes),
// never on a clock.
#include <doctest/doctest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "alog/log.h"
#include "cli_child.h"
#include "cli_util.h"
#include "cli_control_util.h"
#include "control_service.h"
#include "control_socket.h"

using namespace alog;
using namespace alog::test;
using namespace alog::test::cli;
using namespace alog::test::control;
using nlohmann::json;

namespace {

// The inode of the socket at DIR/control.sock (0 when none is there).
ino_t socket_ino(const std::string& dir) {
  struct stat st;
  if (::lstat(sock_of(dir).c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) return 0;
  return st.st_ino;
}

// One exchange on the socket, as a client that speaks the protocol by hand:
// sends `bytes` and closes its side for writing (a request without its
// newline ends there), returns the reply line (without its newline).
std::string raw_exchange(const std::string& dir, const std::string& bytes) {
  int fd = try_connect(dir);
  REQUIRE(fd >= 0);
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0) break;  // the holder may stop reading an oversize request
    done += size_t(n);
  }
  ::shutdown(fd, SHUT_WR);
  std::string line = read_reply_line(fd);
  ::close(fd);
  return line;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t i = s.find(from); i != std::string::npos; i = s.find(from, i + to.size()))
    s.replace(i, from.size(), to);
  return s;
}

}  // namespace

TEST_CASE("truncate-before --keep through a live append prints what it prints alone and exits as it does") {
  TempDir t;
  std::string d = t / "log", alone = t / "alone";
  make_log(d, 200);
  copy_tree(d, alone);
  Child c({"append", "--flush-interval", "20ms", d}, Child::Stdin::pipe);
  REQUIRE(wait_listening(d));
  for (std::string args : {"truncate-before -n --keep 120", "--json truncate-before -n --keep 120",
                           "truncate-before -n --keep-segments 3", "--json truncate-before -n --keep-bytes 9k",
                           "truncate-before -n 999", "--json truncate-before -n 999",
                           "--json truncate-before --keep 150", "truncate-before --keep 120"}) {
    CAPTURE(args);
    RunResult live = run_alog(args + " " + shq(d));
    RunResult solo = run_alog(args + " " + shq(alone));
    CHECK(live.exit_code == solo.exit_code);
    CHECK(live.out == replace_all(solo.out, alone, d));
    CHECK(live.err == replace_all(solo.err, alone, d));
  }
  check_records(d, 80, 80, 200);
  // Spelled otherwise than the holder spells it (relative, a trailing
  // slash): the report and the errors name DIR as the client gave it.
  for (std::string args : {"--json truncate-before -n --keep 5", "truncate-before -n 999"}) {
    CAPTURE(args);
    RunResult live = run("cd " + shq(t.path()) + " && " + alog_cli() + " " + args + " log/");
    RunResult solo = run("cd " + shq(t.path()) + " && " + alog_cli() + " " + args + " alone/");
    CHECK(live.exit_code == solo.exit_code);
    CHECK(live.out == replace_all(solo.out, "alone", "log"));
    CHECK(live.err == replace_all(solo.err, "alone", "log"));
  }
  // --wait is not needed, and not waited for, when the holder serves.
  RunResult w = run_alog("truncate-before -n --wait 1h --keep 5 " + shq(d));
  CHECK(w.exit_code == 0);
  CHECK(w.out == run_alog("truncate-before -n --keep 5 " + shq(alone)).out);
  CHECK(w.out.rfind("would remove 115 records (80-194)", 0) == 0);
  // Ingest goes on after the requests, with the next sequence.
  c.write(records(200, 210));
  REQUIRE(wait_visible(d, 210));
  c.close_stdin();
  CHECK(c.wait_exit() == 0);
  check_records(d, 80, 80, 210);
  CHECK_FALSE(file_exists(sock_of(d)));
}

TEST_CASE("a dry run through a live append changes nothing") {
  TempDir t;
  std::string d = t / "log";
  make_log(d, 200);
  Child c({"append", d}, Child::Stdin::pipe);
  REQUIRE(wait_listening(d));
  auto before = snapshot_tree(d);
  RunResult r = run_alog("--json truncate-before --dry-run --keep 10 " + shq(d));
  CHECK(r.exit_code == 0);
  json j = json::parse(r.out);
  CHECK(j["dry_run"] == true);
  CHECK(j["records_removed"] == 190);
  CHECK(j["segments_removed"] == 6);
  r = run_alog("truncate-after -n " + shq(d) + " 5");
  CHECK(r.exit_code == 0);
  CHECK(r.out.rfind("would remove 194 records (6-199)", 0) == 0);
  CHECK(snapshot_tree(d) == before);
  c.close_stdin();
  CHECK(c.wait_exit() == 0);
  check_records(d, 0, 0, 200);
}

TEST_CASE("truncate-after through a live append removes the records above SEQ and the append goes on after them") {
  TempDir t;
  std::string d = t / "log", alone = t / "alone";
  make_log(d, 100);
  copy_tree(d, alone);
  Child c({"append", "--flush-interval", "20ms", d}, Child::Stdin::pipe);
  REQUIRE(wait_listening(d));
  RunResult live = run_alog("--json truncate-after " + shq(d) + " 40");
  RunResult solo = run_alog("--json truncate-after " + shq(alone) + " 40");
  CHECK(live.exit_code == 0);
  CHECK(live.out == replace_all(solo.out, alone, d));
  CHECK(visible_next(d) == 41);
  c.write(records(41, 60));
  REQUIRE(wait_visible(d, 60));
  c.close_stdin();
  CHECK(c.wait_exit() == 0);
  check_records(d, 0, 0, 60);
}

TEST_CASE("roll through a live append seals the active segment and the append writes into the new one") {
  TempDir t;
  std::string d = t / "log";
  make_log(d, 10);
  Child c({"append", "--flush-interval", "20ms", d}, Child::Stdin::pipe);
  REQUIRE(wait_listening(d));
  RunResult r = run_alog("roll " + shq(d));
  CHECK(r.exit_code == 0);
  CHECK(r.out == "sealed 00000000000000000000.seg (records 0-9); new active segment 00000000000000000010.seg\n");
  c.write(records(10, 15));
  REQUIRE(wait_visible(d, 15));
  c.close_stdin();
  CHECK(c.wait_exit() == 0);
  check_records(d, 0, 0, 15);
  CHECK(file_exists(d + "/00000000000000000010.seg"));
}

TEST_CASE("a bad request gets an error reply and the holder keeps ingesting and serving") {
  TempDir t;
  std::string d = t / "log";
  make_log(d, 20);
  Child c({"append", "--flush-interval", "20ms", d}, Child::Stdin::pipe);
  REQUIRE(wait_listening(d));
  struct Case {
    std::string request, code;
  };
  for (const Case& k : {Case{"garbage\n", "bad_request"}, Case{"[1,2]\n", "bad_request"},
                        Case{"{\"v\":2,\"op\":\"roll\"}\n", "unsupported_version"},
                        Case{"{\"v\":1,\"op\":\"recover\"}\n", "unsupported_op"},
                        Case{"{\"v\":1,\"op\":\"roll\",\"json\":7}\n", "bad_request"},
                        Case{std::string(70000, 'x'), "bad_request"},
                        Case{"{\"v\":1,\"op\":\"roll\",\"args\":{\"x\":" + std::string(3000, '[') +
                                 std::string(3000, ']') + "}}\n",
                             "bad_request"},
                        Case{"{\"v\":1,\"op\":\"roll\"}", "bad_request"}}) {
    CAPTURE(k.request.substr(0, 40));
    std::string reply = raw_exchange(d, k.request);
    json j = json::parse(reply);
    CHECK(j["v"] == 1);
    CHECK(j["error"]["code"] == k.code);
    CHECK(j["versions"] == json::array({1}));
  }
  // A request the command would refuse: its usage error, exit 16.
  json j = json::parse(raw_exchange(d, "{\"v\":1,\"op\":\"truncate-after\",\"args\":{\"seq\":\"x\"}}\n"));
  CHECK(j["exit"] == 16);
  c.write(records(20, 30));
  REQUIRE(wait_visible(d, 30));
  RunResult r = run_alog("truncate-before --keep 5 " + shq(d));
  CHECK(r.exit_code == 0);
  CHECK(r.out == "removed 25 records (0-24), 0 segments, 0 bytes freed; log now 25-29, next 30\n");
  c.close_stdin();
  CHECK(c.wait_exit() == 0);
  check_records(d, 25, 25, 30);
}

TEST_CASE("no record is lost across requests served while records stream in (the service thread beside the ingest loop)") {
  TempDir t;
  std::string d = t / "log";
  Child c({"append", "--batch", "7", "--flush-interval", "5ms", "--segment-size", "4k", d}, Child::Stdin::pipe);
  REQUIRE(wait_listening(d));
  int sent = 0;
  for (int round = 0; round < 20; round++) {
    c.write(records(sent, sent + 23));  // not a multiple of the batch: requests come mid-batch
    sent += 23;
    RunResult r = run_alog("--json truncate-before " + std::string(round % 2 ? "-n " : "") + "--keep 1000 " + shq(d));
    CHECK(r.exit_code == 0);
    if (round % 5 == 4) CHECK(run_alog("roll " + shq(d)).exit_code == 0);
  }
  REQUIRE(wait_visible(d, uint64_t(sent)));
  c.close_stdin();
  CHECK(c.wait_exit() == 0);
  check_records(d, 0, 0, uint64_t(sent));
}

TEST_CASE("a control socket left by a killed append is replaced by the next append") {
  TempDir t;
  std::string d = t / "log";
  make_log(d, 20);
  ino_t old;
  {
    Child c({"append", d}, Child::Stdin::pipe);
    REQUIRE(wait_listening(d));
    old = socket_ino(d);
    c.signal(SIGKILL);
    CHECK(c.wait_exit() == 128 + SIGKILL);
  }
  REQUIRE(socket_ino(d) == old);  // left behind, and no one listens on it
  CHECK_FALSE(listening(d));
  // Readers and verify ignore it.
  CHECK(run_alog("verify " + shq(d)).exit_code == 0);
  CHECK(run_alog("cat " + shq(d)).out == records(0, 20));
  Child c({"append", d}, Child::Stdin::pipe);
  REQUIRE(wait_listening(d));
  RunResult r = run_alog("truncate-before --keep 5 " + shq(d));
  CHECK(r.exit_code == 0);
  CHECK(r.out.rfind("removed 15 records (0-14)", 0) == 0);
  c.close_stdin();
  CHECK(c.wait_exit() == 0);
  CHECK(socket_ino(d) == 0);
}

TEST_CASE("a file or a symbolic link at the socket name is never removed or followed: the append goes on without the service and says so") {
  for (bool link : {false, true}) {
    CAPTURE(link);
    TempDir t;
    std::string d = t / "log", target = t / "target";
    make_log(d, 5);
    if (link) REQUIRE(::symlink(target.c_str(), sock_of(d).c_str()) == 0);
    else write_file(sock_of(d), "mine");
    Child c({"append", "--flush-interval", "20ms", d}, Child::Stdin::pipe);
    auto w = c.line(1);
    REQUIRE(w);
    CHECK(*w == "alog: " + sock_of(d) + ": warning: is " + (link ? "a symbolic link" : "a file") +
                    ", not a socket; left alone, and no control socket (maintenance commands wait for the lock)");
    c.write(records(5, 8));
    REQUIRE(wait_visible(d, 8));
    // No holder answers: the lock error, as without the service.
    RunResult r = run_alog("truncate-before -n --keep 1 " + shq(d));
    CHECK(r.exit_code == 8);
    CHECK(r.err.find("holds the lock") != std::string::npos);
    c.close_stdin();
    CHECK(c.wait_exit() == 0);
    struct stat st;
    REQUIRE(::lstat(sock_of(d).c_str(), &st) == 0);
    if (link) {
      CHECK(S_ISLNK(st.st_mode));
      CHECK_FALSE(file_exists(target));
    } else {
      CHECK(read_file(sock_of(d)) == "mine");
    }
    check_records(d, 0, 0, 8);
  }
}

TEST_CASE("SIGTERM stops an append that serves the control socket cleanly and removes the socket") {
  TempDir t;
  std::string d = t / "log";
  Child c({"append", "--flush-interval", "20ms", d}, Child::Stdin::pipe);
  REQUIRE(wait_listening(d));
  c.write(records(0, 3));
  REQUIRE(wait_visible(d, 3));
  CHECK(run_alog("truncate-before -n --keep 1 " + shq(d)).exit_code == 0);
  c.signal(SIGTERM);
  CHECK(c.wait_exit() == 130);
  CHECK(socket_ino(d) == 0);
  CHECK_FALSE(file_exists(sock_of(d)));
  check_records(d, 0, 0, 3);
}

TEST_CASE("the control socket is removed from the directory append opened even after DIR names another") {
  TempDir t;
  std::string d = t / "log", moved = t / "moved", decoy = t / "decoy";
  Child c({"append", "--flush-interval", "20ms", d}, Child::Stdin::pipe);
  REQUIRE(wait_listening(d));
  c.write(records(0, 3));
  REQUIRE(wait_visible(d, 3));
  // The directory is renamed away and DIR made a link to another one.
  REQUIRE(::rename(d.c_str(), moved.c_str()) == 0);
  REQUIRE(::mkdir(decoy.c_str(), 0755) == 0);
  REQUIRE(::symlink(decoy.c_str(), d.c_str()) == 0);
  c.signal(SIGTERM);
  CHECK(c.wait_exit() == 130);
  CHECK(socket_ino(moved) == 0);
  CHECK(std::filesystem::is_empty(decoy));
  check_records(moved, 0, 0, 3);
}

TEST_CASE("a new log's directory with a leftover control socket in it is still a place for a log") {
  TempDir t;
  std::string d = t / "log";
  REQUIRE(::mkdir(d.c_str(), 0755) == 0);
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  const sockaddr_un a = control_address(d);
  REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0);
  ::close(fd);
  RunResult r = run_alog("append " + shq(d), "a\nb\n");
  CHECK(r.exit_code == 0);
  CHECK(r.err == "");
  CHECK(socket_ino(d) == 0);  // replaced, then removed on exit
  CHECK(run_alog("cat " + shq(d)).out == "a\nb\n");
}

TEST_CASE("a log whose socket path is longer than a socket address holds is served too") {
  TempDir t;
  std::string parent = t / std::string(60, 'd');
  REQUIRE(::mkdir(parent.c_str(), 0755) == 0);
  parent += "/" + std::string(60, 'e');
  REQUIRE(::mkdir(parent.c_str(), 0755) == 0);
  std::string d = parent + "/log";
  REQUIRE(sock_of(d).size() > sizeof(sockaddr_un::sun_path));
  make_log(d, 10);
  Child c({"append", "--flush-interval", "20ms", d}, Child::Stdin::pipe);
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kFailsafeMs);
  while (socket_ino(d) == 0 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
  REQUIRE(socket_ino(d) != 0);
  // Between bind and listen a client is refused and fails `locked`: ask
  // until served (bounded).
  RunResult r;
  do {
    r = run_alog("truncate-before --keep 3 " + shq(d));
  } while (r.exit_code == 8 && std::chrono::steady_clock::now() < until);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "removed 7 records (0-6), 0 segments, 0 bytes freed; log now 7-9, next 10\n");
  c.close_stdin();
  CHECK(c.wait_exit() == 0);
  CHECK(c.rest(1) == "");
  CHECK(socket_ino(d) == 0);
}
