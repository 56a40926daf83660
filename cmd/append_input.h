// The input side of alog append: one file or stdin split into records, read
// in large blocks, waiting in poll(2) so that the caller can flush by time
// and stop on a signal while no input arrives.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

namespace alog::cli {

enum class Split { newline, nul, len32, whole };

class InputReader {
 public:
  // fd is not closed by the reader. max_payload: a record longer than this
  // fails payload_too_large as soon as that many bytes of it have arrived.
  InputReader(std::string name, int fd, Split split, uint64_t max_payload);

  enum class Got { record, eof, timeout, signal };
  // The next record into *out (record), the end of the input (eof), or
  // nothing yet: no complete record arrived within timeout_ms() (negative:
  // no limit) or a signal arrived. timeout_ms is asked only when the
  // buffer holds no complete record, just before waiting for input. *out
  // points into the reader's buffer and stays valid until the reader reads
  // again (right after it asks timeout_ms) or is destroyed: records can be
  // kept without a copy until then. Each byte is scanned once, so the cost
  // is linear in the input. Throws the Failures bad_input,
  // payload_too_large and io, located at the record's input offset.
  template <class Timeout>
  Got next(std::string_view* out, Timeout&& timeout_ms) {
    while (true) {
      if (take(out)) return Got::record;
      if (eof_) return Got::eof;
      if (Got g = wait_and_fill(timeout_ms()); g != Got::record) return g;
    }
  }
  // A complete record already in the buffer, without reading (for a clean
  // stop): false when none is.
  bool next_buffered(std::string_view* out);

  const std::string& name() const { return name_; }
  // Input offset and number (1-based) of the record next() returned last.
  uint64_t record_offset() const { return record_offset_; }
  uint64_t record_number() const { return records_; }
  // Input offset where the next record starts, and how many bytes of it
  // were read (a partial record when the input stops here).
  uint64_t offset() const { return offset_; }
  uint64_t partial_bytes() const { return len_ - pos_; }

 private:
  // A complete record at buf_[pos_] into *out; at the end of the input also
  // the last one without a terminator. Inline, the common case: a
  // delimited record in the buffer (one per call, a million per second in a
  // pipeline); take_slow() the rest.
  bool take(std::string_view* out) {
    if (split_ == Split::newline || split_ == Split::nul) {
      const size_t from = scanned_ > pos_ ? scanned_ : pos_;
      const char* const buf = buf_.get();
      const void* hit = from < len_ ? std::memchr(buf + from, delim_, len_ - from) : nullptr;
      if (!hit) {
        scanned_ = len_;  // each byte is scanned once
      } else if (size_t at = size_t(static_cast<const char*>(hit) - buf); at - pos_ <= max_payload_) {
        *out = std::string_view(buf + pos_, at - pos_);
        consume(at + 1 - pos_);
        return true;
      }
    }
    return take_slow(out);
  }
  bool take_slow(std::string_view* out);
  void consume(uint64_t n) {
    record_offset_ = offset_;
    records_++;
    pos_ += n;
    offset_ += n;
    scanned_ = pos_;
  }
  // Waits up to timeout_ms for input and reads one block: record when it
  // read (or reached the end), else timeout or signal.
  Got wait_and_fill(int timeout_ms);
  // exact: length is the record's; else the bytes of it read so far.
  [[noreturn]] void too_large(uint64_t length, bool exact);
  // Reads one block into the buffer (moving the unread part to its front
  // first); false at the end of the input.
  bool fill();

  std::string name_;
  int fd_;
  Split split_;
  char delim_;  // newline and nul
  uint64_t max_payload_;
  // The input read and not yet consumed, read(2) straight into it: bytes
  // [0, len_) of cap_; records handed out still point into it.
  std::unique_ptr<char[]> buf_;
  size_t cap_ = 0, len_ = 0;
  size_t pos_ = 0;      // start of the next record in buf_
  size_t scanned_ = 0;  // buf_[pos_, scanned_) holds no terminator
  uint64_t offset_ = 0;         // input offset of buf_[pos_]
  uint64_t record_offset_ = 0;  // input offset of the record returned last
  uint64_t records_ = 0;
  bool eof_ = false, done_ = false;
};

}  // namespace alog::cli
