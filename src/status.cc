// Status helpers: code names and messages.
#include "alog/status.h"

#include <cerrno>
#include <cstring>

namespace alog {

const char* errc_name(Errc c) {
  switch (c) {
    case Errc::ok: return "ok";
    case Errc::invalid_argument: return "invalid_argument";
    case Errc::payload_too_large: return "payload_too_large";
    case Errc::batch_too_large: return "batch_too_large";
    case Errc::segment_full: return "segment_full";
    case Errc::disk_full: return "disk_full";
    case Errc::log_failed: return "log_failed";
    case Errc::out_of_bounds: return "out_of_bounds";
    case Errc::corrupt: return "corrupt";
    case Errc::locked: return "locked";
    case Errc::io: return "io";
    case Errc::not_found: return "not_found";
    case Errc::not_a_log: return "not_a_log";
    case Errc::segment_reaped: return "segment_reaped";
    case Errc::stopped: return "stopped";
    case Errc::busy: return "busy";
    case Errc::read_only: return "read_only";
    case Errc::lost: return "lost";
  }
  return "unknown";
}

Status::Status(Errc code, std::string message, int sys_errno)
    : rep_(new Rep{code, Errc::ok, sys_errno, std::move(message), {}, std::nullopt}) {}

Status::Rep* Status::copy(const Rep& r) { return new Rep(r); }
void Status::destroy(Rep* r) noexcept { delete r; }

const std::string& Status::empty() {
  static const std::string kEmpty;
  return kEmpty;
}

Status Status::io_error(const std::string& what, const std::string& path, int err) {
  Errc code = Errc::io;
  if (err == ENOENT) code = Errc::not_found;
  Status st(code, what + ": " + std::strerror(err), err);
  st.at(path);
  return st;
}

std::string Status::to_string() const {
  if (is_ok()) return "ok";
  return std::string(errc_name(rep_->code)) + ": " + rep_->message;
}

}  // namespace alog
