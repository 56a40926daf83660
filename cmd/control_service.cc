// The holder's side of the control socket (control_service.h).
#include "control_service.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "alog/format.h"
#include "control_protocol.h"

namespace alog::cli {

namespace {

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

int64_t remaining_ms(uint64_t deadline) {
  uint64_t now = now_ms();
  return deadline > now ? int64_t(deadline - now) : 0;
}

// Writes all of s to the non-blocking conn within the time bound (or until
// the stop pipe is readable); false when it could not.
bool send_all(int conn, std::string_view s, int stop_fd) {
  const uint64_t deadline = now_ms() + uint64_t(control::kIoTimeoutMs);
  while (!s.empty()) {
    ssize_t n = ::send(conn, s.data(), s.size(), MSG_NOSIGNAL);
    if (n > 0) {
      s.remove_prefix(size_t(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return false;
    int64_t left = remaining_ms(deadline);
    if (left == 0) return false;
    struct pollfd p[2] = {{conn, POLLOUT, 0}, {stop_fd, POLLIN, 0}};
    if (::poll(p, 2, int(left)) < 0 && errno != EINTR) return false;
    if (p[1].revents) return false;
  }
  return true;
}

Json error_reply(const std::string& code, const std::string& message) {
  Json j;
  j["v"] = control::kVersion;
  j["error"] = {{"code", code}, {"message", message}};
  j["versions"] = Json::array({control::kVersion});
  return j;
}

bool known_op(const std::string& op) {
  return op == control::kOpTruncateBefore || op == control::kOpTruncateAfter ||
         op == control::kOpRoll;
}

// How deeply arrays and objects nest in the JSON text (strings skipped), so
// that a hostile request cannot make a deep value that copying recurses on.
int nesting(std::string_view s) {
  int depth = 0, most = 0;
  bool in_string = false;
  for (size_t i = 0; i < s.size(); i++) {
    char c = s[i];
    if (in_string) {
      if (c == '\\') {
        i++;  // the escaped character
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      most = std::max(most, ++depth);
    } else if (c == ']' || c == '}') {
      depth--;
    }
  }
  return most;
}

// "" when the request is one the holder serves (then in *out), else why not.
std::string check_request(const std::string& line, Json* out, std::string* code) {
  *code = "bad_request";
  if (nesting(line) > control::kMaxRequestNesting)
    return fmt::format("the request nests more than {} levels deep", control::kMaxRequestNesting);
  Json j;
  try {
    j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  } catch (const std::exception&) {
    j = Json(Json::value_t::discarded);
  }
  if (j.is_discarded()) return "the request is not a JSON object on one line";
  if (!j.is_object()) return "the request is not a JSON object";
  if (!j.contains("v") || !j["v"].is_number_integer())
    return "the request has no integer \"v\" (protocol version)";
  if (j["v"].get<int64_t>() != control::kVersion) {
    *code = "unsupported_version";
    return fmt::format("protocol version {} is not served; this holder serves version {}",
                       j["v"].dump(), control::kVersion);
  }
  if (!j.contains("op") || !j["op"].is_string()) return "the request has no string \"op\"";
  if (!known_op(j["op"].get<std::string>())) {
    *code = "unsupported_op";
    return fmt::format("operation {} is not served; this holder serves {}, {} and {}",
                       j["op"].dump(), control::kOpTruncateBefore, control::kOpTruncateAfter,
                       control::kOpRoll);
  }
  if (j.contains("args") && !j["args"].is_object()) return "\"args\" is not an object";
  for (const char* k : {"json", "quiet"})
    if (j.contains(k) && !j[k].is_boolean()) return fmt::format("\"{}\" is not a boolean", k);
  *out = std::move(j);
  return "";
}

}  // namespace

bool peer_allowed(uid_t peer, uid_t holder) { return peer == holder || peer == 0; }

int ControlService::stat_socket(struct stat* st) const {
  return ::fstatat(dir_fd_, name_.c_str(), st, AT_SYMLINK_NOFOLLOW);
}

void ControlService::remove_socket() {
  struct stat st;
  if (stat_socket(&st) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == dev_ && st.st_ino == ino_)
    (void)::unlinkat(dir_fd_, name_.c_str(), 0);
}

std::unique_ptr<ControlService> ControlService::start(const Global& g, const std::string& dir,
                                                      std::shared_ptr<DirAnchor> anchor) {
  std::unique_ptr<ControlService> s(new ControlService());
  s->path_ = path_join(dir, std::string(format::kControlSocketName));
  const std::string& path = s->path_;
  s->anchor_ = std::move(anchor);
  // bind(2) takes a path: an anchored directory's is its descriptor's in
  // /proc (without /proc, DIR's path as given).
  const bool anchored = s->anchor_ && s->anchor_->fd() >= 0 && ::access("/proc/self/fd", X_OK) == 0;
  s->dir_fd_ = anchored ? s->anchor_->fd() : AT_FDCWD;
  s->name_ = anchored ? std::string(format::kControlSocketName) : path;
  struct stat st;
  if (s->stat_socket(&st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      warn(g, path, std::nullopt,
           fmt::format("is {}, not a socket; left alone, and no control socket (maintenance "
                       "commands wait for the lock)",
                       S_ISLNK(st.st_mode)   ? "a symbolic link"
                       : S_ISDIR(st.st_mode) ? "a directory"
                                             : "a file"));
      return nullptr;
    }
    // A socket here while we hold LOCK was left by a holder that died.
    if (::unlinkat(s->dir_fd_, s->name_.c_str(), 0) != 0 && errno != ENOENT) {
      warn(g, path, std::nullopt,
           fmt::format("cannot remove the stale control socket: {}", std::strerror(errno)));
      return nullptr;
    }
  }
  auto give_up = [&](const char* what) {
    warn(g, path, std::nullopt,
         fmt::format("{}: {}; no control socket (maintenance commands wait for the lock)", what,
                     std::strerror(errno)));
    return nullptr;
  };
  s->listen_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (s->listen_ < 0) return give_up("socket");
  struct sockaddr_un addr;
  int dir_fd = -1;
  const std::string at = anchored ? "/proc/self/fd/" + std::to_string(s->dir_fd_) + "/" + s->name_ : path;
  if (!control::socket_address(dir, at, &addr, &dir_fd)) {
    errno = ENAMETOOLONG;
    return give_up("address");
  }
  // Only the owner may connect (the peer check is the rule; this is a fence).
  mode_t old = ::umask(0177);
  int b = ::bind(s->listen_, reinterpret_cast<struct sockaddr*>(&addr), sizeof addr);
  ::umask(old);
  if (dir_fd >= 0) ::close(dir_fd);
  if (b != 0) return give_up("bind");
  if (s->stat_socket(&st) != 0 || !S_ISSOCK(st.st_mode)) return give_up("stat");
  s->dev_ = st.st_dev;
  s->ino_ = st.st_ino;
  if (::listen(s->listen_, 8) != 0) return give_up("listen");
  if (::pipe2(s->wake_, O_CLOEXEC | O_NONBLOCK) != 0 ||
      ::pipe2(s->stop_, O_CLOEXEC | O_NONBLOCK) != 0)
    return give_up("pipe");
  s->g_ = g;
  return s;
}

bool ControlService::start_thread() {
  sigset_t all, prev;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &prev);
  bool started = true;
  try {
    thread_ = std::thread([this] { loop(); });
  } catch (const std::system_error& e) {
    errno = e.code().value();
    started = false;
  }
  int err = errno;
  ::pthread_sigmask(SIG_SETMASK, &prev, nullptr);
  errno = err;
  return started;
}

int ControlService::wake_fd() const {
  if (thread_.joinable()) return wake_[0];
  return off_ ? -1 : listen_;
}

bool ControlService::pending() {
  if (thread_.joinable()) return waiting_.load(std::memory_order_acquire);
  if (off_) return false;
  struct pollfd p = {listen_, POLLIN, 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  if (!start_thread()) {
    warn(g_, path_, std::nullopt,
         fmt::format("cannot start its thread: {}; no control socket (maintenance commands wait "
                     "for the lock)",
                     std::strerror(errno)));
    off_ = true;
    signal_stop();
    answer_queued();
    remove_socket();  // later clients find no holder to ask and wait for the lock
    close_fd(listen_);
  }
  return false;
}

void ControlService::signal_stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_flag_ = true;
  }
  cv_.notify_all();
  char c = 1;
  (void)!::write(stop_[1], &c, 1);
}

void ControlService::answer_queued() {
  int conn;
  while ((conn = ::accept4(listen_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
    handle(conn);
    ::close(conn);
  }
}

ControlService::~ControlService() {
  signal_stop();
  if (thread_.joinable()) thread_.join();
  if (listen_ >= 0) {
    answer_queued();  // those the thread did not take (or no thread ever ran)
    remove_socket();
  }
  for (int* fd : {&listen_, &wake_[0], &wake_[1], &stop_[0], &stop_[1]}) close_fd(*fd);
}

bool ControlService::stopping() {
  std::lock_guard<std::mutex> l(mu_);
  return stop_flag_;
}

void ControlService::loop() {
  while (!stopping()) {
    struct pollfd p[2] = {{listen_, POLLIN, 0}, {stop_[0], POLLIN, 0}};
    if (::poll(p, 2, -1) < 0 && errno != EINTR) break;
    if (p[1].revents) break;
    int conn = ::accept4(listen_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (conn < 0) continue;
    handle(conn);
    ::close(conn);
  }
}

namespace {

// The reply to a request the holder will not run because it is ending:
// the client goes on as if no holder had answered.
std::string stopping_reply() {
  Json r = error_reply("stopping", "the holder is stopping; the request did not run");
  r["retry"] = true;
  return json_line(r);
}

}  // namespace

std::string ControlService::read_request(int conn, std::string* why, bool* stopping) {
  std::string buf;
  const uint64_t deadline = now_ms() + uint64_t(control::kIoTimeoutMs);
  char tmp[4096];
  while (true) {
    size_t nl = buf.find('\n');
    if (nl != std::string::npos) return buf.substr(0, nl);
    if (buf.size() >= control::kMaxRequestBytes) {
      *why = fmt::format("the request is longer than {} bytes", control::kMaxRequestBytes);
      return "";
    }
    ssize_t n = ::recv(conn, tmp, std::min(sizeof tmp, control::kMaxRequestBytes - buf.size()), 0);
    if (n > 0) {
      buf.append(tmp, size_t(n));
      continue;
    }
    if (n == 0) {
      *why = "the connection closed before a whole request line (ending in a newline)";
      return "";
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      *why = std::string("read: ") + std::strerror(errno);
      return "";
    }
    int64_t left = remaining_ms(deadline);
    if (left > 0) {
      struct pollfd p[2] = {{conn, POLLIN, 0}, {stop_[0], POLLIN, 0}};
      if (::poll(p, 2, int(left)) < 0 && errno != EINTR) left = 0;
      if (p[1].revents) {
        *why = "the holder is stopping";
        *stopping = true;
        return "";
      }
    }
    if (left == 0) {
      *why = fmt::format("no whole request within {} ms", control::kIoTimeoutMs);
      return "";
    }
  }
}

void ControlService::handle(int conn) {
  struct ucred cr;
  socklen_t len = sizeof cr;
  if (::getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 || len != sizeof cr) {
    (void)send_all(
        conn, json_line(error_reply("permission_denied", "the peer's credentials are unknown")),
        stop_[0]);
    return;
  }
  if (!peer_allowed(cr.uid, ::geteuid())) {
    (void)send_all(
        conn,
        json_line(error_reply("permission_denied",
                              fmt::format("uid {} may not send requests to this holder (uid {}): "
                                          "only its own uid and root may",
                                          cr.uid, ::geteuid()))),
        stop_[0]);
    return;
  }
  std::string why;
  bool stopping = false;
  std::string line = read_request(conn, &why, &stopping);
  if (stopping) {
    (void)send_all(conn, stopping_reply(), stop_[0]);
    return;
  }
  Json req;
  std::string code = "bad_request";
  if (why.empty()) why = check_request(line, &req, &code);
  if (!why.empty()) {
    (void)send_all(conn, json_line(error_reply(code, why)), stop_[0]);
    return;
  }
  std::string reply;
  {
    std::unique_lock<std::mutex> l(mu_);
    request_ = std::move(req);
    reply_.reset();
    waiting_.store(true, std::memory_order_release);
    char c = 1;
    (void)!::write(wake_[1], &c, 1);
    cv_.wait(l, [&] { return reply_.has_value() || stop_flag_; });
    if (reply_) {
      reply = std::move(*reply_);
    } else {
      reply = stopping_reply();
    }
    request_.reset();
    reply_.reset();
    waiting_.store(false, std::memory_order_release);
  }
  (void)send_all(conn, reply, stop_[0]);
}

void ControlService::serve(const ControlHandler& h) {
  char drain[64];
  while (::read(wake_[0], drain, sizeof drain) > 0) {
  }
  Json req;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!request_ || reply_) return;
    req = *request_;
  }
  Global g;
  g.quiet = req.value("quiet", false);
  g.json_flag = req.value("json", false);
  const std::string op = req["op"].get<std::string>();
  const Json args = req.contains("args") ? req["args"] : Json::object();
  Json r;
  {
    OutputCapture cap;
    int exit = run_command(op, g, false, [&] { return h(op, args, g); });
    r["v"] = control::kVersion;
    r["exit"] = exit;
    r["stdout"] = base64(cap.out);
    r["stderr"] = base64(cap.err);
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    reply_ = json_line(r);
    waiting_.store(false, std::memory_order_release);
  }
  cv_.notify_all();
}

std::optional<std::string> request_arg(const Json& args, const char* key,
                                       const std::function<std::string(std::string&)>& check) {
  if (!args.contains(key) || args[key].is_null()) return std::nullopt;
  if (!args[key].is_string())
    throw UsageError(fmt::format("request argument \"{}\" is not a string", key));
  std::string v = args[key].get<std::string>();
  if (check) {
    std::string copy = v;
    if (std::string e = check(copy); !e.empty())
      throw UsageError(fmt::format("request argument \"{}\": {}", key, e));
  }
  return v;
}

bool request_flag(const Json& args, const char* key) {
  if (!args.contains(key) || args[key].is_null()) return false;
  if (!args[key].is_boolean())
    throw UsageError(fmt::format("request argument \"{}\" is not a boolean", key));
  return args[key].get<bool>();
}

int serve_request(Log& log, const std::string& op, const Json& args, const Global& g) {
  if (op == control::kOpTruncateBefore) return serve_truncate_before(log, args, g);
  if (op == control::kOpTruncateAfter) return serve_truncate_after(log, args, g);
  return serve_roll(log, args, g);
}

}  // namespace alog::cli
