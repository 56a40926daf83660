// The batching side of alog append: records collected into batches and
// written when a batch is full, when its first record has waited the flush
// interval, or before a roll would split it; syncs within the sync
// interval; retention after each roll.
#pragma once

#include <cstdint>
#include <optional>
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
  std::optional<TailCut> recovered;  // what the open cut at the tail
  std::vector<OpenRepair> repairs;   // what the open removed and renamed
};

class Appender {
 public:
  // periodic_sync: sync within sync_ms of a write (not with --sync-each or
  // --no-sync). r, log and ret outlive the Appender.
  Appender(const Global& g, Log& log, AppendResult& r, size_t batch, uint64_t flush_ms,
           uint64_t sync_ms, bool periodic_sync, const StoredRetention& ret);

  // Adds (a copy of) a record read from `in` (where the input resumes if it
  // is lost).
  void add(std::string_view rec, const InputReader& in);
  // Writes the batch being collected, if any.
  void flush();
  // Writes and syncs what is due; returns how long the caller may wait for
  // input before the next thing falls due (-1: nothing is pending).
  int tick();
  // Before an error ends the command: make what was appended durable (unless
  // sync is false), and say in the error how far it got and where the input
  // resumes (the first record not appended).
  void salvage(bool sync, Failure& f, const InputReader* in);

 private:
  struct Position {
    std::string file;
    uint64_t record = 0, offset = 0;  // record: 1-based number in its input
  };
  static constexpr uint64_t kAgeCheckMs = 1000;  // --segment-age while idle
  Log& log_;
  AppendResult& r_;
  const StoredRetention& ret_;
  size_t batch_;
  uint64_t flush_ms_, sync_ms_;
  bool periodic_sync_;
  // The batch being collected: its payloads one after another in arena_,
  // each ending at ends_[i] (no allocation per record).
  std::string arena_;
  std::vector<size_t> ends_;
  std::vector<std::string_view> views_;  // flush()'s, kept for its capacity
  uint64_t pending_size_ = 0;  // framed size
  uint64_t flush_due_ = 0;
  uint64_t age_due_ = 0;
  std::optional<uint64_t> sync_due_;
  Position resume_;
  Progress progress_;
};

}  // namespace alog::cli
