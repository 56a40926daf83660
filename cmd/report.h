// Rendering of verify reports, shared by verify, recover and stats: problem
// lines and objects (man/alog-verify.1 "PROBLEMS", "OUTPUT"); and what
// truncate-before and truncate-after share.
#pragma once

#include <string>

#include "alog/verify.h"
#include "cli.h"
#include "alog/retention.h"

namespace alog::cli {

// A live writer's torn tail is a batch in flight: not reported.
void drop_in_flight(VerifyReport& r);

struct ProblemCounts {
  uint64_t torn_tail = 0, corruption = 0, warning = 0;
};
ProblemCounts count_problems(const VerifyReport& r);

// "FILE:OFFSET: CLASSIFICATION: KIND: MESSAGE (expected E, found F) [seq A-B] [cut at C]".
std::string problem_text(const Problem& p, const std::string& path, bool color);
// The problem object, keys in the documented order; with a type, "type" comes first.
Json problem_json(const Problem& p, const char* type = nullptr);
// "verified 9 segments, 169 records (0-168), next 169: clean".
std::string verify_summary(const VerifyReport& r);
// 0 or 4.
int verify_exit(const VerifyReport& r);
// Progress callback for verify/recover, drawing on `p`.
std::function<void(uint64_t, uint64_t)> progress_fn(Progress& p);

// What truncate-before and truncate-after did (or, with --dry-run, would do).
struct TruncateResult {
  std::string path;
  bool dry_run = false;
  std::string policy;              // "seq" or the retention policy that decided the cut
  uint64_t seq = 0;                // the SEQ argument, or the retention cut
  std::vector<RetentionCut> cuts;  // retention only: each policy's own cut
  std::vector<std::string> removed_files;  // segment files removed whole
  uint64_t records_removed = 0;
  uint64_t removed_first = 0;      // the first record removed (when any)
  uint64_t bytes_freed = 0;
  std::optional<uint64_t> first_seq, last_seq;  // afterwards
  uint64_t next_seq = 0;
};
void print_truncate(const TruncateResult& r, const Global& g);
// Opens DIR for truncate-before/after: for a dry run read-only (refusing a
// log a writer holds: its plan would be stale at once), else for writing.
// wait_ms: how long to wait for the lock (--wait).
std::unique_ptr<Log> open_for_truncate(const Global& g, const std::string& dir, bool dry_run,
                                       std::optional<uint64_t> wait_ms = std::nullopt);
// After a cut: the files of `before` the log no longer has, the records and
// bytes (by disk size, `disk_before` before the cut) it freed, and the log's
// range now.
void measure_cut(TruncateResult& r, const std::vector<SegmentInfo>& before, uint64_t disk_before,
                 const Log& log);

}  // namespace alog::cli
