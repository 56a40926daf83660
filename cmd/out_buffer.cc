// The bulk output buffer (out_buffer.h).
#include "out_buffer.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cstring>

#include "cli.h"

namespace alog::cli {

OutBuffer::OutBuffer() : buf_(new char[kCapacity]) {
  // A pipe on stdout holds a whole buffer, not 64 KiB: this process and the
  // reader wake each other once per write (best effort: fs.pipe-max-size
  // caps it, and a user over its pipe budget is refused).
  struct stat st;
  if (::fstat(1, &st) == 0 && S_ISFIFO(st.st_mode)) (void)::fcntl(1, F_SETPIPE_SZ, int(kCapacity));
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
    out_write_direct(s);
    return;
  }
  std::memcpy(reserve(s.size()), s.data(), s.size());
  commit(s.size());
}

void OutBuffer::flush() {
  const size_t n = len_;
  len_ = 0;
  if (n) out_write_direct(std::string_view(buf_.get(), n));
}

}  // namespace alog::cli
