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
  std::optional<TailCut> recovered;  // what opening for writing cuts at the tail
  std::vector<OpenRepair> repairs;   // what opening for writing removes and renames
};
void print_truncate(const TruncateResult& r, const Global& g);

// The "recovered" value of a JSON report: null, or the tail cut a write
// open made (file, offset, bytes, records, saved_to, reason).
Json tail_cut_json(const std::optional<TailCut>& c);
// The "open_repairs" value of a JSON report: what a write open removed and
// renamed ([] when nothing), each {action, file, to, reason}.
Json open_repairs_json(const std::vector<OpenRepair>& v);
// One warning per change a write open made (done) or would make: the tail
// cut, each removal and rename.
void warn_open_changes(const Global& g, const std::string& dir, const std::optional<TailCut>& cut,
                       const std::vector<OpenRepair>& repairs, bool done);

}  // namespace alog::cli
