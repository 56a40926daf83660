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

Status Status::io_error(const std::string& what, const std::string& path, int err) {
  Errc code = Errc::io;
  if (err == ENOENT) code = Errc::not_found;
  Status st(code, what + ": " + std::strerror(err), err);
  st.at(path);
  return st;
}

std::string Status::to_string() const {
  if (is_ok()) return "ok";
  return std::string(errc_name(code_)) + ": " + message_;
}

}  // namespace alog
