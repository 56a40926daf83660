// The control socket's thread starts when the first client connects
// (cmd/control_service.h): an append that no client reaches runs on one
// thread, and a client that connected before the holder ever ran its
// service is still told to retry when the append ends, never dropped. The
// tests wait on what they can observe (records a reader sees, the
// process's state in /proc), never on a clock.
#include <doctest/doctest.h>
#include <signal.h>
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

// The state letter of /proc/PID/stat (R, S, T, ...).
char state_of(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  size_t close = stat.rfind(')');  // the command name may hold spaces
  return close != std::string::npos && close + 2 < stat.size() ? stat[close + 2] : '?';
}

bool wait_stopped(pid_t pid) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kFailsafeMs);
  while (std::chrono::steady_clock::now() < until) {
    if (state_of(pid) == 'T') return true;
    std::this_thread::yield();
  }
  return false;
}

void send_line(int fd, const std::string& line) {
  const std::string s = line + "\n";
  REQUIRE(::send(fd, s.data(), s.size(), MSG_NOSIGNAL) == ssize_t(s.size()));
}

size_t segments_of(const std::string& dir) {
  auto log = alog::Log::open_read(dir);
  REQUIRE(log.is_ok());
  return (*log)->segments().size();
}

}  // namespace

TEST_CASE("an append that no client reaches runs on one thread, and the first client to connect is served") {
  TempDir t;
  std::string d = t / "log";
  REQUIRE(run_alog("append -q " + shq(d), "a\n").exit_code == 0);
  Child c({"append", "--flush-interval", "20ms", d}, Child::Stdin::pipe);
  c.write("b\n");
  REQUIRE(wait_visible(d, 2));  // in its loop: the socket listens from before it
  CHECK(threads_of(c.pid()) == 1);
  int fd = connect_when_listening(d);
  send_line(fd, R"({"v":1,"op":"roll"})");
  json j = json::parse(read_reply_line(fd));
  ::close(fd);
  CHECK(j["exit"] == 0);
  CHECK(segments_of(d) == 2);
  c.close_stdin();
  CHECK(c.wait_exit() == 0);
  CHECK(run_alog("cat " + shq(d)).out == "a\nb\n");
}

TEST_CASE("a request queued before the holder's service ever ran is told to retry when the append ends") {
  TempDir t;
  std::string d = t / "log";
  REQUIRE(run_alog("append -q " + shq(d), "a\n").exit_code == 0);
  Child c({"append", "--flush-interval", "20ms", d}, Child::Stdin::pipe);
  c.write("b\n");
  REQUIRE(wait_visible(d, 2));
  REQUIRE(threads_of(c.pid()) == 1);
  // Stopped, the holder cannot notice the client: the kernel queues the
  // connection and the request, and the end of the input is there at once
  // when it goes on.
  REQUIRE(::kill(c.pid(), SIGSTOP) == 0);
  REQUIRE(wait_stopped(c.pid()));
  int fd = try_connect(d);
  REQUIRE(fd >= 0);
  send_line(fd, R"({"v":1,"op":"roll"})");
  c.close_stdin();
  REQUIRE(::kill(c.pid(), SIGCONT) == 0);
  json j = json::parse(read_reply_line(fd));
  ::close(fd);
  CHECK(j["error"]["code"] == "stopping");
  CHECK(j["retry"] == true);
  CHECK(c.wait_exit() == 0);
  CHECK(segments_of(d) == 1);  // the roll did not run
  CHECK(run_alog("cat " + shq(d)).out == "a\nb\n");
}
