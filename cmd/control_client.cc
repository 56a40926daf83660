// The client's side of the control socket (control_client.h).
#include "control_client.h"

#include <fmt/core.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "alog/format.h"
#include "append_ndjson.h"
#include "control_protocol.h"

namespace alog::cli {

namespace {

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

[[noreturn]] void broken(const std::string& path, const std::string& why) {
  fail("io", path, std::nullopt, why + "; the holder may or may not have carried out the request");
}

// The holder went away (exited or was killed: its end of the connection
// closed, or was reset with data unread) after taking the request and before
// its whole reply: the request ran to its end, in part, or not at all, as
// when the command alone is killed (man/alog-append.1 "Control socket").
[[noreturn]] void lost(const std::string& path) {
  fail("holder_lost", path, std::nullopt,
       "the holder went away (exited or was killed) before it replied; the request may or may "
       "not have been carried out, as when the command alone is killed");
}

// Sends the whole request; false when the holder went away before reading it.
bool send_all(int fd, std::string_view s) {
  while (!s.empty()) {
    ssize_t n = ::send(fd, s.data(), s.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) {
      check_interrupted();
      continue;
    }
    if (n <= 0) return false;
    s.remove_prefix(size_t(n));
  }
  return true;
}

// The reply line, waiting up to kReplyTimeoutMs (a signal stops the wait).
// unsent: the request could not be sent (the holder closed at once, having
// maybe replied with a refusal first); then no reply at all is nullopt.
std::optional<std::string> read_reply(int fd, const std::string& path, bool unsent) {
  std::string buf;
  const uint64_t deadline = now_ms() + uint64_t(control::kReplyTimeoutMs);
  char tmp[65536];
  while (true) {
    size_t nl = buf.find('\n');
    if (nl != std::string::npos) return buf.substr(0, nl);
    if (buf.size() > control::kMaxReplyBytes)
      broken(path,
             fmt::format("the holder's reply is longer than {} bytes", control::kMaxReplyBytes));
    uint64_t now = now_ms();
    if (now >= deadline)
      broken(path, fmt::format("the holder did not reply within {} ms", control::kReplyTimeoutMs));
    Wake w = wait_fd(fd, int(deadline - now));
    if (w == Wake::signal) check_interrupted();
    if (w != Wake::ready) continue;
    ssize_t n = ::recv(fd, tmp, sizeof tmp, MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n <= 0 && unsent && buf.empty()) return std::nullopt;
    if (n == 0 || (n < 0 && errno == ECONNRESET)) lost(path);
    if (n < 0) broken(path, std::string("read: ") + std::strerror(errno));
    buf.append(tmp, size_t(n));
  }
}

// Whether the server may be trusted with the request: our uid, root, or the
// owner of the log directory (root's cron asking a user's append).
bool server_allowed(int fd, const std::string& dir) {
  struct ucred cr;
  socklen_t len = sizeof cr;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 || len != sizeof cr) return false;
  if (cr.uid == ::geteuid() || cr.uid == 0) return true;
  struct stat st;
  return ::stat(dir.c_str(), &st) == 0 && st.st_uid == cr.uid;
}

}  // namespace

std::optional<int> ask_holder(const Global& g, const std::string& dir, const char* op,
                              const Json& args) {
  if (!writer_active(dir)) return std::nullopt;
  const std::string path = path_join(dir, std::string(format::kControlSocketName));
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) return std::nullopt;
  struct sockaddr_un addr;
  Fd dir_fd;
  if (!control::socket_address(dir, path, &addr, &dir_fd.fd)) return std::nullopt;
  Fd s;
  s.fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s.fd < 0) return std::nullopt;
  if (::connect(s.fd, reinterpret_cast<struct sockaddr*>(&addr), sizeof addr) != 0) {
    // The socket's mode (0600) keeps other users out before the holder's
    // own check can refuse them: the same refusal.
    const int e = errno;
    if (e == EACCES || e == EPERM)
      fail("permission_denied", path, std::nullopt,
           fmt::format("connect: {}: uid {} may not send requests to this holder: only its own "
                       "uid and root may",
                       std::strerror(e), ::geteuid()));
    return std::nullopt;
  }
  if (!server_allowed(s.fd, dir)) {
    warn(g, path, std::nullopt, "its server runs as another user; not sending the request there");
    return std::nullopt;
  }
  Json req;
  req["v"] = control::kVersion;
  req["op"] = op;
  req["args"] = args;
  req["json"] = g.json();
  req["quiet"] = g.quiet;
  // A holder that closed before reading, with no reply, did not answer.
  const bool sent = send_all(s.fd, json_line(req));
  std::optional<std::string> line = read_reply(s.fd, path, !sent);
  if (!line) return std::nullopt;
  Json r = Json::parse(*line, nullptr, /*allow_exceptions=*/false);
  if (!r.is_object() || !r.contains("v") || !r["v"].is_number_integer())
    broken(path, "the holder's reply is not a protocol reply");
  if (r.value("retry", false)) return std::nullopt;
  if (r.contains("error")) {
    const Json& e = r["error"];
    std::string code = e.is_object() && e.contains("code") && e["code"].is_string()
                           ? e["code"].get<std::string>()
                           : "io";
    std::string msg = e.is_object() && e.contains("message") && e["message"].is_string()
                          ? e["message"].get<std::string>()
                          : std::string("the holder refused the request");
    fail(code, path, std::nullopt, "the holder refused the request: " + msg);
  }
  if (!r.contains("exit") || !r["exit"].is_number_integer() || !r.contains("stdout") ||
      !r["stdout"].is_string() || !r.contains("stderr") || !r["stderr"].is_string())
    broken(path, "the holder's reply lacks exit, stdout or stderr");
  auto out = unbase64(r["stdout"].get<std::string>());
  auto err = unbase64(r["stderr"].get<std::string>());
  if (!out || !err) broken(path, "the holder's reply has invalid base64");
  out_write(*out);
  out_flush();
  if (!err->empty()) err_write(*err);
  return r["exit"].get<int>();
}

}  // namespace alog::cli
