// InputReader (append_input.h): records from one input, read in blocks.
#include "append_input.h"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "alog/format.h"
#include "cli.h"

namespace alog::cli {

namespace {
constexpr size_t kBlock = 512 * 1024;
}

InputReader::InputReader(std::string name, int fd, Split split, uint64_t max_payload)
    : name_(std::move(name)), fd_(fd), split_(split), delim_(split == Split::nul ? '\0' : '\n'),
      max_payload_(max_payload) {
  // One wake-up of the writer per block (1 M lines through cat | alog
  // append: 100-106 -> 73-81 ms).
  grow_pipe(fd_, kBlock);
}

InputReader::Got InputReader::wait_and_fill(int timeout_ms) {
  switch (wait_fd(fd_, timeout_ms)) {
    case Wake::signal: return Got::signal;
    case Wake::timeout: return Got::timeout;
    case Wake::ready: break;
  }
  fill();
  return Got::record;
}

bool InputReader::next_buffered(std::string_view* out) {
  bool eof = eof_;
  eof_ = false;  // a stop: an unterminated last record stays partial
  bool got = take(out);
  eof_ = eof;
  return got;
}

bool InputReader::take_slow(std::string_view* out) {
  const uint64_t avail = len_ - pos_;
  const char* const buf = buf_.get();
  if (split_ == Split::newline || split_ == Split::nul) {
    // take() found no delimiter in buf_[pos_, len_), or one past max_payload_.
    size_t from = std::max(scanned_, pos_);
    const void* hit = from < len_ ? std::memchr(buf + from, delim_, len_ - from) : nullptr;
    if (hit) too_large(size_t(static_cast<const char*>(hit) - buf) - pos_, true);
    scanned_ = len_;
    if (avail > max_payload_) too_large(avail, false);
    if (!eof_ || avail == 0) return false;
    *out = std::string_view(buf + pos_, avail);  // the last record, without a delimiter
    consume(avail);
    return true;
  }
  if (split_ == Split::len32) {
    if (avail >= 4) {
      uint32_t len = format::get32(reinterpret_cast<const uint8_t*>(buf + pos_));
      if (len > max_payload_) too_large(len, true);
      if (avail >= 4 + uint64_t(len)) {
        *out = std::string_view(buf + pos_ + 4, len);
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
  *out = std::string_view(buf + pos_, avail);
  consume(avail);
  return true;
}

void InputReader::too_large(uint64_t length, bool exact) {
  fail("payload_too_large", name_, offset_,
       exact ? fmt::format("record {} of {} bytes is larger than max_payload_size {}", records_ + 1,
                           length, max_payload_)
             : fmt::format("record {} is larger than max_payload_size {} ({} bytes read, no end yet)",
                           records_ + 1, max_payload_, length));
}

bool InputReader::fill() {
  // The records handed out before this call are done with: move the unread
  // part to the front (it is shorter than one record), and grow the buffer
  // only for a record longer than it. Each byte moves at most once per
  // doubling: amortized linear.
  if (pos_ > 0 && (len_ + kBlock > cap_ || pos_ * 2 > cap_)) {
    std::memmove(buf_.get(), buf_.get() + pos_, len_ - pos_);
    len_ -= pos_;
    scanned_ -= pos_;
    pos_ = 0;
  }
  if (len_ + kBlock > cap_) {
    size_t cap = std::max(cap_ * 2, len_ + kBlock);
    std::unique_ptr<char[]> grown(new char[cap]);
    if (len_) std::memcpy(grown.get(), buf_.get(), len_);
    buf_ = std::move(grown);
    cap_ = cap;
  }
  while (true) {
    ssize_t n = ::read(fd_, buf_.get() + len_, cap_ - len_);
    if (n > 0) {
      len_ += size_t(n);
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
    fail("io", name_, offset_ + (len_ - pos_), std::string("read: ") + std::strerror(e));
  }
}

}  // namespace alog::cli
