// A test's side of a live append's control socket (man/alog-append.1
// "Control socket"): its address, a client connection, reading the one-line
// reply, and waiting (failsafe bounded, never on a clock) until the holder
// listens or a reader sees records. Shared by the cli_control* and
// cli_append_live tests.
#pragma once

#include <doctest/doctest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>

#include "alog/log.h"
#include "cli_util.h"

namespace alog::test::cli {

inline std::string sock_of(const std::string& dir) { return dir + "/control.sock"; }

// The address of DIR/control.sock (which must fit in one).
inline sockaddr_un control_address(const std::string& dir) {
  sockaddr_un a;
  std::memset(&a, 0, sizeof a);
  a.sun_family = AF_UNIX;
  const std::string p = sock_of(dir);
  REQUIRE(p.size() < sizeof a.sun_path);
  std::memcpy(a.sun_path, p.c_str(), p.size() + 1);
  return a;
}

// A connection to DIR/control.sock, or -1 when nothing listens there.
inline int try_connect(const std::string& dir) {
  const sockaddr_un a = control_address(dir);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0) return fd;
  ::close(fd);
  return -1;
}

// Whether something listens on DIR/control.sock (a connection made and
// closed at once: the holder answers it with an error no one reads).
inline bool listening(const std::string& dir) {
  int fd = try_connect(dir);
  if (fd >= 0) ::close(fd);
  return fd >= 0;
}

// A connection to DIR/control.sock once something listens there (connect
// is refused between the holder's bind and listen; asked until served).
inline int connect_when_listening(const std::string& dir) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kFailsafeMs);
  while (std::chrono::steady_clock::now() < until) {
    int fd = try_connect(dir);
    if (fd >= 0) return fd;
    std::this_thread::yield();
  }
  FAIL("nothing listened on " << sock_of(dir));
  return -1;
}

inline bool wait_listening(const std::string& dir) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kFailsafeMs);
  while (std::chrono::steady_clock::now() < until) {
    if (listening(dir)) return true;
    std::this_thread::yield();
  }
  return false;
}

// The reply line on `fd` (without its newline), read until the newline.
inline std::string read_reply_line(int fd) {
  std::string got;
  while (got.find('\n') == std::string::npos) {
    struct pollfd pf {
      fd, POLLIN, 0
    };
    if (::poll(&pf, 1, kFailsafeMs) <= 0) break;
    char buf[4096];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    got.append(buf, size_t(n));
  }
  REQUIRE(got.find('\n') != std::string::npos);
  return got.substr(0, got.find('\n'));
}

// The log's next sequence as a reader sees it (0 when it cannot be opened yet).
inline uint64_t visible_next(const std::string& dir) {
  auto log = Log::open_read(dir);
  return log.is_ok() ? (*log)->next_sequence() : 0;
}

// Waits (failsafe bounded) until a reader sees at least `n` records.
inline bool wait_visible(const std::string& dir, uint64_t n) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kFailsafeMs);
  while (std::chrono::steady_clock::now() < until) {
    if (visible_next(dir) >= n) return true;
    std::this_thread::yield();
  }
  return false;
}

}  // namespace alog::test::cli
