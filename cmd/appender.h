// The batching side of alog append: records collected into batches, a
// batch closed when it is full or before a record that would not let it fit
// an empty segment; closed batches written together (Log::append_batches)
// when they reach kGroupBytes or the input has to be read again, and every
// batch once its first record has waited the flush interval; syncs within
// the sync interval; retention after each roll.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "append_input.h"
#include "append_retention.h"
#include "cli.h"

namespace alog::cli {

struct AppendResult {
  std::string path;
  bool created = false;
  std::optional<uint64_t> first_seq, last_seq;
  uint64_t records = 0, batches = 0, bytes = 0, next_seq = 0;
  bool synced = false;
  bool retention = false;        // policies apply (given or stored)
  uint64_t retention_removed = 0;  // records they removed during this run
  std::optional<uint64_t> recycled;  // with max_segments > 1: records recycling dropped during this run
  std::optional<TailCut> recovered;  // what the open cut at the tail
  std::vector<OpenRepair> repairs;   // what the open removed and renamed
};

class Appender {
 public:
  // periodic_sync: sync within sync_ms of a write (not with --sync-each or
  // --no-sync). r, log and ret outlive the Appender.
  Appender(const Global& g, Log& log, AppendResult& r, size_t batch, uint64_t flush_ms,
           uint64_t sync_ms, bool periodic_sync, const StoredRetention& ret);

  // Adds a record read from `in` (where the input resumes if it is lost).
  // rec must stay valid until tick() or input_moves() is called: the
  // closed batches are written then, and the open one's records copied.
  void add(std::string_view rec, const InputReader& in);
  // The same for a record whose bytes the Appender keeps.
  void add_owned(std::string rec, const InputReader& in);
  // Before the bytes of the records added change (another input, or more
  // of it read): writes the closed batches and copies the open one's.
  void input_moves();
  // Writes every batch, the one being collected too.
  void flush();
  // Before the input is read again: input_moves(), writes what is due, and
  // syncs what is due; returns how long the caller may wait for
  // input before the next thing falls due (-1: nothing is pending).
  int tick();
  // Before an error ends the command: write the closed batches (unless it
  // was a second signal), make what was appended durable (unless sync is
  // false), and say in the error how far it got and where the input resumes
  // (the first record not appended). in_fed: the record `in` returned last
  // was handed to add() (or skipped on purpose); false when it failed before
  // (a bad NDJSON line), so that the input resumes at it.
  void salvage(bool sync, Failure& f, const InputReader* in, bool in_fed);

 private:
  // Where a batch starts in the input (where the input resumes if it is
  // lost), and when its first record must be written.
  struct BatchStart {
    std::string file;
    uint64_t record = 0, offset = 0;  // record: 1-based number in its input
    uint64_t due_ms = 0;
  };
  static constexpr uint64_t kAgeCheckMs = 1000;  // --segment-age while idle
  // Closed batches are written once their frames reach this many bytes
  // (the kernel's cost per write(2) is several microseconds: bench/README).
  static constexpr uint64_t kGroupBytes = 512 * 1024;
  size_t open_first() const { return closed_.empty() ? 0 : closed_.back(); }
  // Closes the open batch; close_batch() also writes when it is time.
  void end_open_batch();
  void close_batch();
  // Writes the closed batches, in as few calls as rolls allow.
  void write_closed();
  // Forgets the first n closed batches (written).
  void drop(size_t n);

  Log& log_;
  AppendResult& r_;
  const StoredRetention& ret_;
  size_t batch_;
  uint64_t flush_ms_, sync_ms_;
  bool periodic_sync_, group_;
  // The records not yet written, in order: where add() found them (the
  // input's buffer) or in kept_. The closed batches end at records
  // closed_[0] < closed_[1] < ...; the records after the last one are the
  // open batch. starts_[b]: where batch b (closed, then the open one)
  // starts in the input. views_[i] is record written_ + i of the run.
  std::vector<std::string_view> views_;
  std::vector<size_t> closed_;
  std::vector<BatchStart> starts_;
  // Bytes kept for records not yet written: a piece per input_moves() (the
  // records it copied) or per add_owned(), holding records up to number
  // `last`; dropped once those are written. A deque: its elements never
  // move, so the views into them (short strings' inline bytes too) hold.
  struct Kept {
    uint64_t last;
    std::string bytes;
  };
  std::deque<Kept> kept_;
  uint64_t written_ = 0;  // records of the run written so far
  size_t owned_ = 0;      // views_[0, owned_) point into kept_: each record is copied once
  std::vector<std::span<const std::string_view>> spans_;  // write_closed's, kept for its capacity
  uint64_t open_size_ = 0;                                // the open batch's framed size
  uint64_t closed_size_ = 0;                              // the closed batches' framed size
  uint64_t age_due_ = 0;
  bool adding_ = false;  // add() failed before it kept its record
  std::optional<uint64_t> sync_due_;
  Progress progress_;
};

// Says in an append's error how far it got: the line's "(appended up to
// sequence N)" or "(nothing appended)", and the JSON object's
// last_appended_seq, last_durable_seq (durable: what was appended is
// synced) and resume (where the input starts again; null when unknown).
void add_append_state(Failure& f, std::optional<uint64_t> last_seq, bool durable, Json resume);

}  // namespace alog::cli
