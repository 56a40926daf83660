// Reading a log on several threads, for output made of each record's
// payload alone (alog cat's plain text): the log is cut into parts at
// checkpoints, each part is read and checked on a worker thread (confirmed
// records as a Scanner reads them, an unsynced tail as its walk does) and
// its records rendered there, and the rendered parts come back to the
// caller in log order. One read and one CRC of each frame, on every core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <span>
#include <string_view>

#include "alog/status.h"

namespace alog {

class Log;
class Scanner;

// The bytes rendered for one part of the log.
class RenderedBytes {
 public:
  // Room for n more bytes at the end: write them there, then commit() what
  // was written.
  char* reserve(size_t n) {
    if (cap_ - size_ < n) grow(n);
    return buf_.get() + size_;
  }
  void commit(size_t n) { size_ += n; }
  std::string_view view() const { return {buf_.get(), size_}; }
  void clear() { size_ = 0; }
  // Drops what follows the first n bytes.
  void truncate(size_t n) { size_ = n < size_ ? n : size_; }

 private:
  void grow(size_t n);
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> buf_;
  size_t size_ = 0, cap_ = 0;
};

struct RenderedScanOptions {
  // On worker threads, several at a time: appends the output of
  // consecutive records, given by their payloads in log order, to out.
  std::function<void(std::span<const std::string_view> payloads, RenderedBytes& out)> render;
  // On the calling thread, in log order: the output of `records` records
  // from sequence `first`, and the CRC32C of the last one's payload (for a
  // consumer that keeps a cursor). An error (or an exception) stops the
  // scan and is returned (thrown).
  std::function<Status(std::string_view bytes, uint64_t first, uint64_t records, uint32_t last_crc)> write;
  size_t threads = 0;                // threads reading parts, the caller's among them; 0: one per CPU, at most 8
  uint64_t part_bytes = 512 << 10;  // a part's size in the segment files, about
};

// Renders the records from `from` up to the end of the log as it is now,
// for as long as they are plainly intact, and returns a Scanner positioned
// just after the last record written (Scanner::position() is its
// sequence): at the end of the log when the scan went through. The scan
// stops before the first record a Scanner reading from `from` would not
// return as a plain record at that point (a lost record, damage, a segment
// recycled or cut under it), and in a tail it walks (below) at whatever
// that walk stops at; the Scanner returned meets what stopped it exactly
// as it would have met it reading in order. So the records written, then
// those the Scanner returns, and how it ends, are what a Scanner from
// `from` returns and how it ends. A tail still walked in the background
// (Options::walk_tail_in_background) is taken over: that walk stops at a
// batch boundary, the rest of the tail is walked in parts, and the log
// concludes it as the background walk would have (its end, torn_tail(),
// tail_cut(), damage()); meanwhile the log's accessors wait as they wait
// for the background walk. Errors: those of write() (when no worker
// thread can be started, the calling thread reads every part: that is not
// an error).
Result<std::unique_ptr<Scanner>> scan_rendered(const Log& log, uint64_t from, const RenderedScanOptions& o);

}  // namespace alog
