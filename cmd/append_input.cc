// InputReader (append_input.h): records from one input, read in blocks.
#include "append_input.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "alog/format.h"
#include "cli.h"

namespace alog::cli {

namespace {
constexpr size_t kBlock = 256 * 1024;
}

InputReader::InputReader(std::string name, int fd, Split split, uint64_t max_payload)
    : name_(std::move(name)), fd_(fd), split_(split), max_payload_(max_payload) {}

InputReader::Got InputReader::next(std::string* out, int timeout_ms) {
  while (true) {
    if (take(out)) return Got::record;
    if (eof_) return Got::eof;
    switch (wait_fd(fd_, timeout_ms)) {
      case Wake::signal: return Got::signal;
      case Wake::timeout: return Got::timeout;
      case Wake::ready: break;
    }
    fill();
  }
}

bool InputReader::next_buffered(std::string* out) {
  bool eof = eof_;
  eof_ = false;  // a stop: an unterminated last record stays partial
  bool got = take(out);
  eof_ = eof;
  return got;
}

bool InputReader::take(std::string* out) {
  const uint64_t avail = buf_.size() - pos_;
  if (split_ == Split::newline || split_ == Split::nul) {
    const char delim = split_ == Split::newline ? '\n' : '\0';
    size_t from = std::max(scanned_, pos_);
    const void* hit = from < buf_.size() ? std::memchr(buf_.data() + from, delim, buf_.size() - from)
                                         : nullptr;
    if (hit) {
      size_t at = size_t(static_cast<const char*>(hit) - buf_.data());
      if (at - pos_ > max_payload_) too_large(at - pos_, true);
      out->assign(buf_, pos_, at - pos_);
      consume(at + 1 - pos_);
      return true;
    }
    scanned_ = buf_.size();
    if (avail > max_payload_) too_large(avail, false);
    if (!eof_ || avail == 0) return false;
    out->assign(buf_, pos_, std::string::npos);  // the last record, without a delimiter
    consume(avail);
    return true;
  }
  if (split_ == Split::len32) {
    if (avail >= 4) {
      uint32_t len = format::get32(reinterpret_cast<const uint8_t*>(buf_.data() + pos_));
      if (len > max_payload_) too_large(len, true);
      if (avail >= 4 + uint64_t(len)) {
        out->assign(buf_, pos_ + 4, len);
        consume(4 + uint64_t(len));
        return true;
      }
      if (eof_)
        fail("bad_input", name_, offset_,
             fmt::format("record of {} bytes cut short: {} bytes left", len, avail - 4));
    } else if (eof_ && avail > 0) {
      fail("bad_input", name_, offset_, fmt::format("length prefix cut short: {} of 4 bytes", avail));
    }
    return false;
  }
  // whole: the entire input is one record
  if (avail > max_payload_) too_large(avail, false);
  if (!eof_ || done_) return false;
  done_ = true;
  out->assign(buf_, pos_, std::string::npos);
  consume(avail);
  return true;
}

void InputReader::consume(uint64_t n) {
  record_offset_ = offset_;
  records_++;
  pos_ += n;
  offset_ += n;
  scanned_ = pos_;
  // Drop what was consumed once it is most of the buffer: amortized linear.
  if (pos_ > (1u << 20) && pos_ * 2 > buf_.size()) {
    buf_.erase(0, pos_);
    pos_ = scanned_ = 0;
  }
}

void InputReader::too_large(uint64_t length, bool exact) {
  fail("payload_too_large", name_, offset_,
       exact ? fmt::format("record {} of {} bytes is larger than max_payload_size {}", records_ + 1,
                           length, max_payload_)
             : fmt::format("record {} is larger than max_payload_size {} ({} bytes read, no end yet)",
                           records_ + 1, max_payload_, length));
}

bool InputReader::fill() {
  if (!block_) block_ = std::make_unique<char[]>(kBlock);
  while (true) {
    ssize_t n = ::read(fd_, block_.get(), kBlock);
    if (n > 0) {
      buf_.append(block_.get(), size_t(n));
      return true;
    }
    if (n == 0) {
      eof_ = true;
      return false;
    }
    if (errno == EINTR) {
      if (interrupted()) return true;  // the caller's next wait sees the signal
      continue;
    }
    int e = errno;
    fail("io", name_, offset_ + (buf_.size() - pos_), std::string("read: ") + std::strerror(e));
  }
}

}  // namespace alog::cli
