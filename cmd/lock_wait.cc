// The lock as the commands see it: the holder's pid read from DIR/LOCK (the
// holder writes it there, for messages only: the flock decides), the
// `locked` error that names it, and --wait DURATION, which retries until the
// holder lets go or the time is up.
#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>

#include "alog/format.h"
#include "cli.h"

namespace alog::cli {

std::optional<uint64_t> lock_holder_pid(const std::string& dir) {
  std::string path = path_join(dir, std::string(format::kLockName));
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  char buf[32];
  ssize_t n = ::pread(fd, buf, sizeof buf, 0);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  std::string_view s(buf, size_t(n));
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  auto pid = parse_u64(s);
  if (!pid || *pid == 0) return std::nullopt;
  return pid;
}

void fail_locked(const std::string& dir, std::optional<uint64_t> waited_ms) {
  auto pid = lock_holder_pid(dir);
  std::string who = pid ? fmt::format("another process (pid {})", *pid) : "another process";
  std::string msg = waited_ms ? fmt::format("{} still holds the lock after waiting {} ms", who, *waited_ms)
                              : who + " holds the lock";
  Failure f("locked", path_join(dir, std::string(format::kLockName)), std::nullopt, msg);
  f.detail = Json::object();
  f.detail["holder_pid"] = opt_json(pid);
  throw f;
}

void add_wait_option(CLI::App& sub, std::optional<std::string>& wait) {
  sub.add_option("--wait", wait, "Wait up to DURATION for the lock (e.g. 500ms, 30s) instead of failing")
      ->type_name("DURATION")
      ->check(CLI::Validator(check_duration_ms(), "DURATION"));
}

std::optional<uint64_t> wait_ms(const std::optional<std::string>& wait) {
  if (!wait) return std::nullopt;
  return parse_duration_ms(*wait);
}

bool lock_wait_retry(std::optional<uint64_t> wait, uint64_t start_ms, int& nap) {
  if (!wait) return false;
  uint64_t now = now_ms();
  if (now - start_ms >= *wait) return false;
  // Short naps first (a batch or a command ends soon), then at most 100 ms.
  nap_ms(int(std::min<uint64_t>(uint64_t(nap), start_ms + *wait - now)));
  check_interrupted();
  nap = std::min(nap * 2, 100);
  return true;
}

}  // namespace alog::cli
