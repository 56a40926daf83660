// A client whose holder goes away mid-request (man/alog-append.1 "Control
// socket"): the holder took the request and then its end of the connection
// closed (EOF) or was reset (closed with the request unread); the client
// fails with `holder_lost`, exit 8, on one line, instead of waiting or going
// on as if no holder had answered. The test process plays the holder: it
// takes DIR/LOCK and listens on DIR/control.sock; the client is the real
// `alog`. (A real holder killed mid-request: holder_kill_test.cc.)
#include <doctest/doctest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "alog/fs.h"
#include "cli_child.h"
#include "cli_util.h"
#include "control_socket.h"

using namespace alog;
using namespace alog::test;
using namespace alog::test::cli;
using nlohmann::json;

namespace {

// A holder of the log's lock listening on its control socket.
struct FakeHolder {
  std::unique_ptr<FileLock> lock;
  int listen_fd = -1;
  explicit FakeHolder(const std::string& dir) {
    auto l = posix_fs().lock(dir + "/LOCK");
    REQUIRE(l.is_ok());
    lock = std::move(*l);
    listen_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(listen_fd >= 0);
    const sockaddr_un a = control_address(dir);
    REQUIRE(::bind(listen_fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(listen_fd, 1) == 0);
  }
  ~FakeHolder() { ::close(listen_fd); }
  // The client's connection, once its whole request line has arrived (still
  // unread: peeked at only).
  int take_request() {
    struct pollfd p {
      listen_fd, POLLIN, 0
    };
    REQUIRE(::poll(&p, 1, kFailsafeMs) == 1);
    int conn = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    REQUIRE(conn >= 0);
    std::string peek;
    while (peek.find('\n') == std::string::npos) {
      struct pollfd c {
        conn, POLLIN, 0
      };
      REQUIRE(::poll(&c, 1, kFailsafeMs) == 1);
      char buf[4096];
      ssize_t n = ::recv(conn, buf, sizeof buf, MSG_PEEK);
      REQUIRE(n > 0);
      peek.assign(buf, size_t(n));
    }
    return conn;
  }
};

// The client ran a request its holder never answered: holder_lost, exit 8.
void check_lost(Child& client, const std::string& dir) {
  const int code = client.wait_exit();
  const std::string out = client.rest(0), err = client.rest(1);
  INFO("stdout: " << out << "stderr: " << err);
  CHECK(code == 8);
  check_one_line_error(RunResult{code, out, err}, dir + "/control.sock");
  CHECK(err.find("the holder went away") != std::string::npos);
  json j = json::parse(out, nullptr, /*allow_exceptions=*/false);
  REQUIRE(j.is_object());
  CHECK(j["exit_status"] == 8);
  CHECK(j["error"]["code"] == "holder_lost");
}

void make_log(const std::string& dir) {
  RunResult r = run_alog("append -q " + shq(dir), "a\nb\nc\n");
  REQUIRE(r.exit_code == 0);
}

}  // namespace

TEST_CASE(
    "a client whose holder closes the connection after reading the request fails with holder_lost, "
    "exit 8") {
  TempDir tmp;
  const std::string dir = tmp / "log";
  make_log(dir);
  FakeHolder h(dir);
  Child client({"truncate-after", "--json", dir, "0"});
  int conn = h.take_request();
  char buf[4096];
  REQUIRE(::recv(conn, buf, sizeof buf, 0) > 0);  // the request, read
  ::close(conn);                                  // and no reply: EOF
  check_lost(client, dir);
}

TEST_CASE(
    "a client whose holder goes away with the request unread (connection reset) fails with "
    "holder_lost, exit 8") {
  TempDir tmp;
  const std::string dir = tmp / "log";
  make_log(dir);
  FakeHolder h(dir);
  Child client({"roll", "--json", dir});
  ::close(h.take_request());  // closed with data unread: the client's read is reset
  check_lost(client, dir);
}
