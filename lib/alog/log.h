// The log: a directory of segment files holding records with uint64
// sequence numbers. Log::open for writing (one writer, with recovery),
// Log::open_read for reading (never writes, never locks).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "alog/fs.h"
#include "alog/status.h"

namespace alog {

inline constexpr uint64_t kKiB = 1024, kMiB = 1024 * kKiB, kGiB = 1024 * kMiB;

struct Options {
  uint64_t start_sequence = 0;           // sequence of the first record of a new log
  uint64_t max_segment_size = 128 * kMiB;  // a segment's size (end of its EOF) is at most this
  uint64_t max_disk_size = 10 * kGiB;    // sum of segment file lengths; 0: no limit
  uint32_t max_segments = 0;             // 0: no limit; 1: one segment; >1: recycle the oldest
  uint64_t max_payload_size = 16 * kMiB;  // larger records are refused (payload_too_large)
  uint32_t checkpoint_stride = 64;       // 1..65535
  bool sync_on_append = false;           // sync every batch before append returns
  // Read-only opens: an unsynced tail of more than 4 MiB is walked on a
  // thread of its own rather than in open_read, publishing the records it
  // confirms batch by batch, so a scan from the start reads them while the
  // walk goes on. Every accessor but first_sequence(), disk_size(), dir(),
  // read_only(), failed(), options() and scan() waits for the walk first;
  // an I/O error of the walk (which open_read would have returned) becomes
  // damage(), which scans report when they reach it. (Without it, and when
  // opening for writing, an unsynced tail of 16 MiB or more is walked on up
  // to one thread per CPU, at most four, the parts joined at checkpoints:
  // the same result, sooner.)
  bool walk_tail_in_background = false;
  Fs* fs = nullptr;                      // nullptr: posix_fs()
  // Milliseconds since the Unix epoch for segment `created at`; nullptr: the system clock.
  std::function<uint64_t()> clock_ms;
};

// What Log::segments() reports per segment, in log order.
struct SegmentInfo {
  std::string file;          // file name, e.g. "00000000000000000000.seg"
  uint64_t start_sequence;   // from the header
  uint64_t first_sequence;   // first live record (winning slot)
  uint64_t next_sequence;    // one past the last record
  uint64_t read_offset;      // position of the first live frame
  uint64_t size;             // end of the EOF frame
  uint64_t file_length;      // may exceed size for a recycled file
  uint64_t synced_offset;
  uint16_t generation;
  uint64_t created_at_ms;
  bool active;
};

// A record read back.
struct Record {
  uint64_t sequence = 0;
  std::string payload;
};

// What opening for writing cut at the active segment's tail (FORMAT.md
// "Opening for writing", steps 1 and 2): a torn tail from its batch
// boundary, or bytes after the EOF frame (other than a recycled file's
// stale frames). A read-only open tells what a write open would cut.
struct TailCut {
  std::string file;         // segment file name
  uint64_t offset = 0;      // where the removed bytes began
  uint64_t bytes = 0;       // bytes removed, all saved in lost+found/
  uint64_t records = 0;     // records of the incomplete batch among them
  uint64_t new_length = 0;  // the file's length afterwards (end frames included)
  std::string saved_to;     // write opens: "lost+found/NAME", relative to the log directory
  std::string reason;       // "torn tail: truncated header", "bytes after the EOF frame"
};

// A file opening for writing removed or renamed before its walk (FORMAT.md
// "Opening for writing", step 0). A read-only open tells what a write open
// would do.
struct OpenRepair {
  std::string action;  // "remove" (a *.seg.tmp or *.seg.del) or "rename" (a misnamed segment)
  std::string file;    // its name in the log directory
  std::string to;      // rename: the name its header gives
  std::string reason;
};

class Scanner;
class LogImpl;

class Log {
 public:
  // Opens (creating if needed) a log for writing: takes the LOCK flock, removes
  // *.seg.tmp and *.seg.del, renames misnamed segments and recovers the active
  // segment's unsynced tail (a torn tail is cut at its batch boundary, the cut
  // bytes saved in lost+found/). Errors: invalid_argument, locked, corrupt
  // (damage in synced data or headers: nothing is cut), not_a_log, io.
  static Result<std::unique_ptr<Log>> open(const std::string& dir, const Options& options = {});
  // Opens an existing log for reading: changes nothing, takes no lock, treats
  // a torn tail as the end. Only `fs` and `walk_tail_in_background` of the
  // options are used.
  static Result<std::unique_ptr<Log>> open_read(const std::string& dir,
                                                const Options& options = {});
  // Closes (see close()); errors are dropped.
  ~Log();
  Log(const Log&) = delete;
  Log& operator=(const Log&) = delete;

  // Syncs, records the synced offset, syncs again and releases the lock.
  // With sync = false it only releases the lock: what was not synced may be
  // lost in a crash (a later open recovers it). Idempotent. Scanners stay
  // usable until destroyed.
  Status close(bool sync = true);

  // Appends one batch (all or nothing after a crash); returns the last
  // sequence of the batch. No payloads: writes nothing and returns
  // next_sequence() - 1 (or an out_of_bounds error when the log is empty).
  // Errors: payload_too_large, batch_too_large (joined with segment_full when
  // it cannot fit an empty segment), segment_full, disk_full, log_failed, io,
  // busy (a Writer runs on this log: append through it).
  Result<uint64_t> append(std::span<const std::string_view> payloads);
  Result<uint64_t> append(std::initializer_list<std::string_view> payloads) {
    return append(std::span<const std::string_view>(payloads.begin(), payloads.size()));
  }
  Result<uint64_t> append_one(std::string_view payload) { return append({payload}); }
  // One record made of several parts, as one batch.
  Result<uint64_t> append_multipart(std::span<const std::string_view> parts);
  // Several multipart records as one batch.
  Result<uint64_t> append_multipart_batch(
      std::span<const std::span<const std::string_view>> records);
  // Appends batches in order, each all or nothing after a crash, leaving the
  // bytes that one append() per batch would leave, but written together (one
  // pwritev where they fit): for a caller with many small batches at hand.
  // Returns how many batches were appended: all of them, or fewer (but at
  // least one) when the next one would need a roll or a disk budget check
  // that fails (a call rolls at most once, before its first batch) or is
  // invalid; call again with the rest, which rolls or returns that batch's
  // error. Empty batches are skipped. next_sequence() - 1 is the last
  // sequence appended. Errors: those of append(), for the first batch only.
  Result<size_t> append_batches(std::span<const std::span<const std::string_view>> batches);

  // Makes everything appended so far durable. busy while a Writer runs.
  Status sync();
  // Seals the active segment now (synced, as a roll does) and starts a new
  // one, so that retention can remove it; nothing when it holds no record.
  // Errors: segment_full (max_segments 1), disk_full (no room for a new
  // segment), log_failed, io, busy (a Writer runs).
  Status roll();

  // Removes all records below seq (whole segments, then a slot moves the read
  // offset). seq <= first: nothing; seq == next_sequence(): empties the log;
  // beyond: out_of_bounds. busy while a Writer runs (as is truncate_after).
  Status truncate_before(uint64_t seq);
  // What truncate_before(seq) checks before its first change, on any open
  // log (a read-only one too: a dry run's refusals): out_of_bounds, and
  // damage on the walk to seq's frame in the segment that will hold the
  // first record, with the error truncate_before gives.
  Status check_truncate_before(uint64_t seq) const;
  // Removes all records after seq; seq must be a retained record (out_of_bounds otherwise).
  Status truncate_after(uint64_t seq);
  // What truncate_after(seq) checks before its first change, on any open
  // log, as check_truncate_before does for truncate_before.
  Status check_truncate_after(uint64_t seq) const;

  // First live sequence (== next_sequence() when the log is empty).
  uint64_t first_sequence() const;
  // Last sequence, or nullopt when empty.
  std::optional<uint64_t> last_sequence() const;
  uint64_t next_sequence() const;
  // Records this Log dropped by recycling its oldest segment (max_segments
  // > 1) since it was opened.
  uint64_t records_recycled() const;
  uint64_t count() const { return next_sequence() - first_sequence(); }
  bool empty() const { return count() == 0; }
  // Sum of the segment files' lengths.
  uint64_t disk_size() const;
  std::vector<SegmentInfo> segments() const;
  const std::string& dir() const;
  bool read_only() const;
  // True after a failure that needs a reopen (appends return log_failed).
  bool failed() const;
  const Options& options() const;

  // Reads one record (CRC-checked). not_found outside [first, next); lost
  // when a salvage left a lost frame at seq.
  Result<Record> read(uint64_t seq) const;
  // A scanner over [from, to] (to inclusive; nullopt: to the end as of each
  // call to next()). `from` below the first record starts at the first.
  Result<std::unique_ptr<Scanner>> scan(uint64_t from,
                                        std::optional<uint64_t> to = std::nullopt) const;

  // Read-only opens: damage that ends the readable records early (a corrupt
  // segment header, a sequence gap); scans report it when they reach it. Ok when none.
  const Status& damage() const;
  // Read-only opens: the torn tail treated as the end, as "FILE:OFFSET: what"
  // (empty when none). A live writer's batch in flight looks the same.
  const std::string& torn_tail() const;
  // What this open cut at the active segment's tail (write opens), or what
  // a write open would cut (read-only opens); nullopt when nothing.
  const std::optional<TailCut>& tail_cut() const;
  // What this open removed and renamed (write opens), or what a write open
  // would (read-only opens): the removals, then the renames.
  const std::vector<OpenRepair>& open_repairs() const;

  // For read-only logs: picks up records, segments and truncations that
  // another process made since open (or the last refresh), walking only what
  // was appended since. Scanners on a segment that another process recycled
  // or cut with truncate_after stop with segment_reaped at their next call
  // (from outside the cut's exact position is unknown, so every scanner of a
  // cut segment stops); scanners on segments removed by truncate_before
  // finish them.
  Status refresh();

  LogImpl& impl() { return *impl_; }
  const LogImpl& impl() const { return *impl_; }

 private:
  explicit Log(std::unique_ptr<LogImpl> impl);
  std::unique_ptr<LogImpl> impl_;
};

// Calls fn(seq, payload) for each record in [from, to] (to == 0: to the end),
// skipping lost records; stops at the first error from fn or from reading.
Status range_from(const Log& log, uint64_t from, uint64_t to,
                  const std::function<Status(uint64_t, std::string_view)>& fn);

}  // namespace alog
