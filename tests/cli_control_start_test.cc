// The control socket's thread starts when the first client connects
// (cmd/control_service.h): an append that no client reaches runs on one
// thread, and a client that connected before the holder ever ran its
// service is still told to retry when the append ends, never dropped. The
// tests wait on what they can observe (records a reader sees, the
// process's state in /proc), never on a clock.
#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "cli_child.h"
#include "cli_util.h"
#include "control_socket.h"

using namespace alog::test;
using namespace alog::test::cli;
using nlohmann::json;

namespace {

size_t threads_of(pid_t pid) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    (void)e;
    n++;
  }
  return n;
}

void send_line(int fd, const std::string& line) {
  const std::string s = line + "\n";
  REQUIRE(::send(fd, s.data(), s.size(), MSG_NOSIGNAL) == ssize_t(s.size()));
}

// The reply on fd, which is closed then.
json reply_of(int fd) {
  json j = json::parse(read_reply_line(fd));
  ::close(fd);
  return j;
}

size_t segments_of(const std::string& dir) {
  auto log = alog::Log::open_read(dir);
  REQUIRE(log.is_ok());
  return (*log)->segments().size();
}

// A log of one record, "a", and an append holding it in its loop: "b" went
// in through it and a reader sees it (the socket listens from before the loop).
struct LiveAppend {
  TempDir t;
  std::string d = t / "log";
  bool made = run_alog("append -q " + shq(d), "a\n").exit_code == 0;
  Child c{{"append", "--flush-interval", "20ms", d}, Child::Stdin::pipe};
  LiveAppend() {
    REQUIRE(made);
    c.write("b\n");
    REQUIRE(wait_visible(d, 2));
  }
};

}  // namespace

TEST_CASE_FIXTURE(LiveAppend, "an append that no client reaches runs on one thread, and the first client to connect is served") {
  CHECK(threads_of(c.pid()) == 1);
  int fd = connect_when_listening(d);
  send_line(fd, R"({"v":1,"op":"roll"})");
  CHECK(reply_of(fd)["exit"] == 0);
  CHECK(segments_of(d) == 2);
  c.close_stdin();
  CHECK(c.wait_exit() == 0);
  CHECK(run_alog("cat " + shq(d)).out == "a\nb\n");
}

TEST_CASE_FIXTURE(LiveAppend, "a request queued before the holder's service ever ran is told to retry when the append ends") {
  REQUIRE(threads_of(c.pid()) == 1);
  // Stopped in its wait for input, the holder cannot notice the client: the
  // kernel queues the connection and the request, and the end of the input
  // is there at once when it goes on.
  c.pause_between_looks();
  int fd = try_connect(d);
  REQUIRE(fd >= 0);
  send_line(fd, R"({"v":1,"op":"roll"})");
  c.close_stdin();
  c.resume();
  json j = reply_of(fd);
  CHECK(j["error"]["code"] == "stopping");
  CHECK(j["retry"] == true);
  CHECK(c.wait_exit() == 0);
  CHECK(segments_of(d) == 1);  // the roll did not run
  CHECK(run_alog("cat " + shq(d)).out == "a\nb\n");
}

TEST_CASE_FIXTURE(LiveAppend, "when no thread can be had for the first client, it is told to retry and the append goes on without the socket, saying so") {
  // An address-space limit 4 MiB above what the holder maps now: room for
  // its small allocations, none for a thread's 8 MiB stack.
  std::string status = read_file("/proc/" + std::to_string(c.pid()) + "/status");
  size_t at = status.find("VmSize:");
  REQUIRE(at != std::string::npos);
  const rlim_t kib = std::stoull(status.substr(at + 7));
  struct rlimit lim = {(kib + 4096) * 1024, RLIM_INFINITY};
  REQUIRE(::prlimit(c.pid(), RLIMIT_AS, &lim, nullptr) == 0);
  // The request whole before the holder sees the client (it answers at once).
  c.pause_between_looks();
  int fd = connect_when_listening(d);
  send_line(fd, R"({"v":1,"op":"roll"})");
  c.resume();
  json j = reply_of(fd);
  CHECK(j["error"]["code"] == "stopping");
  CHECK(j["retry"] == true);
  c.write("c\n");
  REQUIRE(wait_visible(d, 3));
  CHECK_FALSE(std::filesystem::exists(sock_of(d)));  // later clients wait for the lock
  c.close_stdin();
  CHECK(c.wait_exit() == 0);
  const std::string err = c.rest(1);
  CHECK(err.find(sock_of(d) + ": warning: cannot start its thread: ") != std::string::npos);
  CHECK(err.find("; no control socket (maintenance commands wait for the lock)") != std::string::npos);
  CHECK(segments_of(d) == 1);
  CHECK(run_alog("cat " + shq(d)).out == "a\nb\nc\n");
}
