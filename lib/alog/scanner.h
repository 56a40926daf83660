// Sequential reading of a log: Scanner over [from, to].
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "alog/status.h"

namespace alog {

class ScannerImpl;

// One record of a batch (Scanner::next_batch): the same values sequence(),
// lost() and payload() give after next().
struct RecordView {
  uint64_t sequence = 0;
  std::string_view payload;  // empty for a lost record
  bool lost = false;
};

// Reads records in order, CRC-checking each payload; lost records come in
// order too, marked by lost(). A scanner keeps the
// segment it is reading open, so a segment removed by truncate_before stays
// readable until the scanner moves on. A recycled segment, or a
// truncate_after cut behind the scanner's position, stops it with
// segment_reaped. Not thread-safe itself; many scanners may run in threads
// other than the writer's.
class Scanner {
 public:
  explicit Scanner(std::unique_ptr<ScannerImpl> impl);
  ~Scanner();
  // Advances to the next record: true with sequence()/payload() set, false at
  // the end (past `to`, or the end of the log as it is now: call again later
  // to see records appended since). Errors: corrupt (file, offset, sequence),
  // segment_reaped, io.
  Result<bool> next();
  uint64_t sequence() const;
  // Whether the current record is lost (a lost frame that salvage wrote in
  // its place): it has its sequence but no payload.
  bool lost() const;
  // Valid until the next call to next(); empty for a lost record.
  std::string_view payload() const;
  // The file and byte offset of the current record's frame.
  const std::string& file() const;
  uint64_t offset() const;
  // As many next() calls as the records already in the scanner's read window
  // allow, at most out.size(): fills out[0, n) and returns n, 0 at the end
  // (where next() returns false). The records, their order, the errors and
  // where they arise are those of next(); an error after some records comes
  // at the following call. Payloads stay valid until the next call of next()
  // or next_batch(); sequence(), payload() and the rest describe the batch's
  // last record.
  Result<size_t> next_batch(std::span<RecordView> out);
  // The sequence next() will try to read.
  uint64_t position() const;

 private:
  std::unique_ptr<ScannerImpl> impl_;
};

}  // namespace alog
