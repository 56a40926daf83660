// A live append that ends while a client's request is still arriving on its
// control socket (man/alog-append.1 "Control socket"): the holder answers
// `stopping` with "retry": true, as for a request it took and did not run,
// so the client goes on as if no holder had answered, never a refusal. The
// test waits on what it can observe (the socket, the holder's connections
// in /proc), never on a clock.
#include <doctest/doctest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "cli_child.h"
#include "cli_util.h"
#include "control_socket.h"

using namespace alog::test;
using namespace alog::test::cli;
using nlohmann::json;

namespace {

// How many connected (not listening) Unix sockets process `pid` holds:
// its descriptors' inodes looked up in /proc/net/unix (state 03: connected).
int connected_sockets(pid_t pid) {
  std::set<std::string> inodes;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    std::string target = std::filesystem::read_symlink(e.path(), ec).string();
    if (target.rfind("socket:[", 0) == 0) inodes.insert(target.substr(8, target.size() - 9));
  }
  std::ifstream unix_sockets("/proc/net/unix");
  std::string line;
  std::getline(unix_sockets, line);  // the column names
  int n = 0;
  while (std::getline(unix_sockets, line)) {
    std::istringstream f(line);
    std::string num, refs, proto, flags, type, state, inode;
    f >> num >> refs >> proto >> flags >> type >> state >> inode;
    if (state == "03" && inodes.count(inode)) n++;
  }
  return n;
}

}  // namespace

TEST_CASE("a request still arriving when the append ends is told to retry, not refused") {
  TempDir t;
  std::string d = t / "log";
  REQUIRE(run_alog("append -q " + shq(d), "a\nb\nc\n").exit_code == 0);
  Child c({"append", "--flush-interval", "20ms", d}, Child::Stdin::pipe);
  // Ours is the only connection ever made to this holder, so one connected
  // socket in it is ours, taken: the holder is reading the request.
  int fd = connect_when_listening(d);
  const std::string part = R"({"v":1,"op":"roll")";  // no newline: not whole yet
  REQUIRE(::send(fd, part.data(), part.size(), MSG_NOSIGNAL) == ssize_t(part.size()));
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kFailsafeMs);
  while (connected_sockets(c.pid()) == 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::yield();
  REQUIRE(connected_sockets(c.pid()) == 1);
  c.close_stdin();  // the append ends, and stops its service
  const std::string reply = read_reply_line(fd);
  ::close(fd);
  json j = json::parse(reply);
  CHECK(j["error"]["code"] == "stopping");
  CHECK(j["retry"] == true);
  CHECK(c.wait_exit() == 0);
  CHECK(run_alog("cat " + shq(d)).out == "a\nb\nc\n");
}
