// verify(): the walk of one segment, and of all of them on `jobs` threads.
// verify.cc loads the headers, then puts the walks together in log order
// (sequence gaps, lost runs across segments, totals), so the report is the
// same whatever the number of jobs.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "alog/format.h"
#include "alog/fs.h"
#include "alog/verify.h"
#include "lock_probe.h"
#include "lost_runs.h"
#include "verify_internal.h"

namespace alog::detail {

// A segment file as verify loaded it.
struct Loaded {
  std::string name;
  std::shared_ptr<File> file;
  uint64_t length = 0;
  bool header_ok = false;
  format::SegmentHeader h;
  format::SlotChoice slots;
  uint64_t name_start = 0;
};

// What the walk of one segment found, on its own.
struct SegmentWalk {
  SegmentReport sr;  // records not yet less its lost ones (the merge counts them)
  SegmentDetail sd;
  std::vector<Problem> problems;  // in the order the walk met them
  LostRuns lost;                  // its lost frames, before the cut drops any
  Histogram payload_sizes{}, batch_sizes{};
  uint64_t bytes_read = 0;
  uint64_t next_after = 0;  // the start sequence the next segment must have
  uint64_t log_next = 0;    // the log's next sequence, were it the last segment
};

// Reads the header and slots of segment file `name` in dir (in_dir: dir is
// the log directory verify was given, not a file's): header_ok when both
// are sound, else the problem they make in `problems`, as do an invalid
// losing slot and a name that disagrees with the header. Errors: io.
Result<Loaded> load_segment(Fs& fs, const std::string& dir, const std::string& name, bool in_dir,
                            std::vector<Problem>& problems);

Problem problem(const std::string& file, std::optional<uint64_t> off, std::string kind,
                Classification c, std::string message, std::string expected = {},
                std::string found = {});

// Walks one segment whose header and slots are readable, on up to `parts`
// threads when it is long (walk_split.h; the same findings on any number);
// calls progress with the bytes of it walked now and then (may be empty);
// asks `writer` only at a torn tail of the active segment. Errors: io, and
// stopped (interrupt.h).
Result<SegmentWalk> walk_segment(const Loaded& l, bool active, size_t parts, const LockProbe& writer,
                                 const VerifyOptions& opt, const std::function<void(uint64_t)>& progress);

// walk_segment for every segment whose header is readable (the others get
// an empty report), on opt.jobs threads (a segment's walk split across the
// jobs left over when there are fewer segments than jobs); opt.progress gets the bytes of
// `total` walked (after each segment when jobs > 1).
std::vector<Result<SegmentWalk>> walk_segments(const std::vector<Loaded>& segs, const LockProbe& writer,
                                               const VerifyOptions& opt, uint64_t total);

}  // namespace alog::detail
