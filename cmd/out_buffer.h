// Bulk output to stdout (cat's records): bytes gather in a large buffer that
// goes out with one write(2) when it is full or flushed, instead of a stdio
// call per piece. Whatever stdio holds goes out first, so the two never
// interleave out of order as long as the buffer is flushed before stdio is
// written to again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace alog::cli {

class OutBuffer {
 public:
  static constexpr size_t kCapacity = size_t{1} << 20;
  OutBuffer();

  // Room for n bytes at the end of the buffer (flushing first when there is
  // not; growing it for a piece larger than the buffer). Write them there,
  // then commit() what was written.
  char* reserve(size_t n) {
    if (cap_ - len_ < n) make_room(n);
    return buf_.get() + len_;
  }
  void commit(size_t n) { len_ += n; }
  void append(std::string_view s);

  // Writes out the buffer; a failed write throws the Failure out_write
  // throws (cli.h), and what the buffer held is dropped.
  void flush();
  size_t size() const { return len_; }
  // What the buffer holds (not yet written).
  std::string_view view() const { return {buf_.get(), len_}; }
  // How many times it wrote to standard output so far.
  uint64_t writes() const { return writes_; }

 private:
  void make_room(size_t n);
  std::unique_ptr<char[]> buf_;
  size_t cap_ = kCapacity;
  size_t len_ = 0;
  uint64_t writes_ = 0;
};

}  // namespace alog::cli
