// The expected-state oracle for crash, fault and kill tests: a model of what a
// log must, may and must not hold after a crash, fed with every operation a
// test performs on the log (and its outcome), and a checker that reopens the
// log and compares record by record.
//
// The model (FORMAT.md "Device model" and "What each operation does"):
//  * must survive: every record covered by an acknowledged sync (sync(), a
//    clean close, a roll, a completed truncate_after, a completed open), unless
//    an operation in flight or failed may have removed it;
//  * may survive: records appended but not synced, only as whole batches and
//    only as a prefix in order (the log ends at a batch end);
//  * must not come back: records removed by an acknowledged truncate_before,
//    truncate_after or recycle (a re-appended sequence must carry its new payload);
//  * the sequences are contiguous and the payloads byte-identical;
//  * verify() of the reopened log finds no damage.
//
// An operation that fails leaves the model "uncertain" in a bounded way: the
// failed operation may have happened in whole, in part, or not at all. That
// uncertainty is cleared when a crash and a reopen pin the log to an observed
// durable state. (After a failed fsync the page cache may show a state that a
// later crash does not keep, FORMAT.md: "A failed fsync is final"; a reopen
// without a crash therefore only narrows the model.)
//
// The model is plain data fed by begin_*/end_* events, so a test can drive it
// from another process's reports (tests/kill_test.cc); the wrappers that take
// a Log do both halves for in-process tests.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "alog/fs.h"
#include "alog/log.h"

namespace alog::test {

// A deterministic payload of `len` bytes for record `seq` written with `tag`
// (different tags give different bytes, so a stale version is told apart;
// payloads shorter than 8 bytes may still coincide).
std::string make_payload(uint64_t seq, uint64_t tag, size_t len);

// What the model needs to know about the live log around an operation.
struct LiveState {
  bool failed = false;
  uint64_t first = 0;
  uint64_t next = 0;
  uint64_t active_start = 0;   // start sequence of the active segment
  uint64_t second_start = 0;   // start of the second segment (== next with one segment)
  size_t segments = 0;
  std::vector<uint64_t> bounds;  // every segment's start sequence and next sequence
};
LiveState live_state(const Log& log);

// The outcome of one check.
struct CheckReport {
  std::vector<std::string> violations;  // empty: pass
  bool opened = false;
  uint64_t first = 0, next = 0;  // what the reopened log holds
  bool ok() const { return violations.empty(); }
  std::string text() const;  // violations, one per line
};

class Oracle {
 public:
  Oracle(uint64_t start_sequence, uint32_t max_segments);

  // ---- Events ----------------------------------------------------------------
  // `before` is the live state just before the operation, `after` right after.
  void begin_append(const std::vector<std::string>& batch, const LiveState& before);
  // ok: the append returned its last sequence; clean_error: it returned an
  // error and the log is not failed (nothing written, or rolled back);
  // otherwise the log failed mid-append.
  void end_append(bool ok, const LiveState& after);
  void begin_sync();
  void end_sync(bool ok, const LiveState& after);
  // roll(): seals (syncs) the active segment; at the segment limit it
  // recycles the oldest one. `before` needs segments and second_start.
  void begin_roll(const LiveState& before);
  void end_roll(bool ok, const LiveState& after);
  void begin_truncate_before(uint64_t seq);
  void end_truncate_before(bool ok, const LiveState& after);
  void begin_truncate_after(uint64_t seq);
  void end_truncate_after(bool ok, const LiveState& after);
  // close() syncs: an ok close is a sync.
  void end_close(bool ok);
  // A Log::open that failed (fault or crash during recovery): the model stays.
  void open_failed();

  // ---- In-process wrappers (begin, call, end) -------------------------------
  Result<uint64_t> append(Log& log, const std::vector<std::string>& batch);
  Status sync(Log& log);
  Status roll(Log& log);
  Status truncate_before(Log& log, uint64_t seq);
  Status truncate_after(Log& log, uint64_t seq);
  Status close(Log& log);

  // ---- Checking --------------------------------------------------------------
  struct CheckOptions {
    // The disk holds only durable state (a MemFs crash, or a killed process
    // whose page cache is trusted): what the log shows is final.
    bool after_crash = false;
    // The crash went beyond FORMAT.md's device model (zeroed or garbled
    // writes) while recovery was rewriting synced bytes: only the other
    // promises are checked.
    bool synced_may_be_lost = false;
    // An injected fault may still be armed: an I/O error while reading the
    // log back is not a violation (what could not be read stays uncertain).
    bool tolerate_io_errors = false;
  };
  // Checks a log just opened for writing against the model: records, first and
  // next sequence, and verify() of its directory (through `fs`, nullptr: the
  // real file system). Then pins the model to what it saw.
  CheckReport check_open(Log& log, Fs* fs, const CheckOptions& co);
  // Log::open(dir, options) then check_open; the open log is left in *out (if
  // out is not null and the open succeeded).
  CheckReport reopen_and_check(const std::string& dir, const Options& options,
                               const CheckOptions& co, std::unique_ptr<Log>* out = nullptr);

  // Disagreements between the live log and the model found by end_* events
  // (the in-process view must match the model whenever the log is not failed).
  const std::vector<std::string>& live_violations() const { return live_violations_; }

  uint64_t next() const { return s_.next; }
  uint64_t first() const { return s_.first; }
  uint64_t durable() const { return s_.durable; }
  bool uncertain() const { return uncertain_; }
  // The model, for failure messages.
  std::string describe() const;

 private:
  struct State {
    // Acceptable payloads by sequence, newest last (more than one only while
    // a failed truncate_after is unresolved).
    std::map<uint64_t, std::vector<std::string>> payloads;
    uint64_t floor = 0;     // no first sequence below this may reappear
    uint64_t first = 0;     // the live first sequence
    uint64_t first_hi = 0;  // highest first sequence a crash may leave
    uint64_t next = 0;      // the live next sequence
    uint64_t durable = 0;   // [first_hi, durable) must survive
    std::set<uint64_t> ends;  // sequences a crash may leave as the next sequence
  };
  void note_live(const char* op, const LiveState& after);
  void collapse_synced();
  void erase_below(uint64_t seq);
  void pin(Log& log, const std::vector<std::pair<uint64_t, std::string>>& seen, bool complete,
           bool after_crash);

  uint32_t max_segments_;
  State s_;
  State saved_;  // before the operation in flight (an append that fails cleanly restores it)
  bool uncertain_ = false;
  uint64_t pending_seq_ = 0;  // the truncation in flight
  std::string in_flight_;  // the operation between begin and end, for messages
  std::vector<std::string> live_violations_;
};

}  // namespace alog::test
