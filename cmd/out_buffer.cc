// The bulk output buffer (out_buffer.h).
#include "out_buffer.h"

#include <cstring>

#include "cli.h"

namespace alog::cli {

OutBuffer::OutBuffer() : buf_(new char[kCapacity]) {
  grow_pipe(1, kCapacity);  // one wake-up of the reader per write
}

void OutBuffer::make_room(size_t n) {
  flush();
  if (n <= cap_) return;
  buf_.reset(new char[n]);
  cap_ = n;
}

void OutBuffer::append(std::string_view s) {
  if (s.size() >= cap_) {
    flush();
    writes_++;
    out_write_direct(s);
    return;
  }
  std::memcpy(reserve(s.size()), s.data(), s.size());
  commit(s.size());
}

void OutBuffer::flush() {
  const size_t n = len_;
  len_ = 0;
  if (!n) return;
  writes_++;
  out_write_direct(std::string_view(buf_.get(), n));
}

}  // namespace alog::cli
