// verify(): walks every segment from its read offset and reports each
// problem with file, offset, batch boundary, sequences and classification
// (FORMAT.md "Walking a segment"). Never writes.
#include "alog/verify.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "alog/format.h"
#include "file_cache.h"
#include "frame_reader.h"
#include "lock_probe.h"
#include "lost_runs.h"
#include "sector_reader.h"
#include "verify_internal.h"
#include "verify_segment.h"

namespace alog {

using namespace detail;
using namespace format;

const char* classification_name(Classification c) {
  switch (c) {
    case Classification::torn_tail: return "torn_tail";
    case Classification::corruption: return "corruption";
    case Classification::warning: return "warning";
  }
  return "?";
}

bool VerifyReport::has(Classification c) const {
  for (const auto& p : problems)
    if (p.classification == c) return true;
  return false;
}

namespace detail {

namespace {
Result<VerifyDetail> verify_once(const std::string& path, const VerifyOptions& opt,
                                 bool lock_is_ours);
}  // namespace

Result<std::shared_ptr<DirAnchor>> anchor_if_dir(Fs& fs, const std::string& path) {
  ALOG_ASSIGN(FileStat st, fs.stat(path));
  if (!st.is_dir) return std::shared_ptr<DirAnchor>();
  return fs.anchor(path);
}

// A writer that opens between the lock check and the walk of the active
// segment makes its batch in flight look like a torn tail: when the walk met
// one and the lock is taken now, or the active segment's length changed,
// the whole check runs once more (a second race in a row is reported as is).
Result<VerifyDetail> verify_detail(const std::string& path, const VerifyOptions& opt,
                                   bool lock_is_ours) {
  Fs& fs = opt.fs ? *opt.fs : posix_fs();
  // A log directory is held open for both looks (Fs::anchor); recovery and
  // salvage hold it longer, across their changes too.
  ALOG_ASSIGN(std::shared_ptr<DirAnchor> anchor, anchor_if_dir(fs, path));
  ALOG_ASSIGN(VerifyDetail d, verify_once(path, opt, lock_is_ours));
  const VerifyReport& r = d.report;
  if (lock_is_ours || r.segments.empty() || r.writer_active) return d;
  bool torn = std::any_of(r.problems.begin(), r.problems.end(), [](const Problem& p) {
    return p.classification == Classification::torn_tail;
  });
  if (!torn) return d;
  const std::string active = path_join(d.dir, r.segments.back().file);
  ALOG_ASSIGN(FileStat now, fs.stat(active));
  if (!fs.is_locked(path_join(d.dir, std::string(kLockName))) && now.size == r.segments.back().file_length)
    return d;
  return verify_once(path, opt, lock_is_ours);
}

namespace {

Result<VerifyDetail> verify_once(const std::string& path, const VerifyOptions& opt,
                                 bool lock_is_ours) {
  Fs& fs = opt.fs ? *opt.fs : posix_fs();
  VerifyDetail out;
  VerifyReport& rep = out.report;
  rep.path = path;
  rep.headers_only = opt.headers_only;
  ALOG_ASSIGN(FileStat st, fs.stat(path));
  if (!st.exists) return Status(Errc::not_found, path + ": no such file or directory").at(path);
  std::string dir = path;
  std::vector<std::string> names;
  if (st.is_dir) {
    ALOG_ASSIGN(auto all, fs.list(path));
    std::sort(all.begin(), all.end());
    for (const auto& n : all) {
      if (parse_segment_name(n)) names.push_back(n);
      else if (n.ends_with(kTmpSuffix) || n.ends_with(kDelSuffix))
        rep.problems.push_back(problem(n, std::nullopt, "leftover_file", Classification::warning,
                                       "not part of the log; a writer deletes it on open"));
    }
    if (names.empty())
      return Status(Errc::not_a_log, path + ": no segment files (not an alog log)").at(path);
  } else if (st.is_regular) {
    auto slash = path.find_last_of('/');
    dir = slash == std::string::npos ? "." : path.substr(0, slash);
    names.push_back(slash == std::string::npos ? path : path.substr(slash + 1));
  } else {
    return Status(Errc::not_a_log, path + ": not a directory or segment file").at(path);
  }
  out.dir = dir;

  // Headers and slots of every segment.
  std::vector<Loaded> segs;
  for (const auto& n : names) {
    ALOG_ASSIGN(Loaded l, load_segment(fs, dir, n, st.is_dir, rep.problems));
    segs.push_back(std::move(l));
  }
  // Log order: by header start sequence; unreadable headers by their name.
  std::stable_sort(segs.begin(), segs.end(), [](const Loaded& a, const Loaded& b) {
    uint64_t sa = a.header_ok ? a.h.start_sequence : a.name_start;
    uint64_t sb = b.header_ok ? b.h.start_sequence : b.name_start;
    return sa < sb;
  });

  uint64_t total = 0;
  for (const auto& l : segs) total += l.length;
  // Asked beside the walk: the walk needs the answer only at a torn tail.
  const LockProbe writer =
      lock_is_ours ? LockProbe() : LockProbe(fs, path_join(dir, std::string(kLockName)), total);
  bool have_prev = false;
  LostRuns lost;
  uint64_t lost_total = 0;
  uint64_t prev_next = 0;
  std::string prev_name;
  std::vector<Result<SegmentWalk>> walks = walk_segments(segs, writer, opt, total);
  rep.writer_active = writer.held();
  for (size_t i = 0; i < segs.size(); i++) {
    const Loaded& l = segs[i];
    if (!l.header_ok) {
      SegmentReport sr;
      sr.file = l.name;
      sr.active = i + 1 == segs.size();
      sr.file_length = l.length;
      SegmentDetail sd;
      sd.name = l.name;
      rep.segments.push_back(sr);
      out.segments.push_back(sd);
      have_prev = false;
      continue;
    }
    if (!walks[i].is_ok()) return walks[i].status();
    SegmentWalk& sw = *walks[i];
    SegmentReport& sr = sw.sr;
    if (!rep.first_sequence) rep.first_sequence = sr.first_sequence;
    if (have_prev && prev_next != l.h.start_sequence) {
      Problem p = problem(l.name, 0, "sequence_gap", Classification::corruption,
                          prev_name + " ends at sequence " + std::to_string(prev_next) +
                              " but this segment starts at " + std::to_string(l.h.start_sequence),
                          std::to_string(prev_next), std::to_string(l.h.start_sequence));
      if (l.h.start_sequence > prev_next) {
        p.first_seq = prev_next;
        p.last_seq = l.h.start_sequence - 1;
      }
      rep.problems.push_back(p);
      sw.sd.gap_before = true;
    }
    rep.problems.insert(rep.problems.end(), sw.problems.begin(), sw.problems.end());
    for (size_t k = 0; k < kHistBuckets; k++) {
      rep.payload_sizes[k] += sw.payload_sizes[k];
      rep.batch_sizes[k] += sw.batch_sizes[k];
    }
    // Lost records are counted apart (those a cut leaves out are gone from both counts).
    const uint64_t lost_before = lost_total;
    lost.append(sw.lost);
    lost.drop_from(sr.next_sequence);
    lost_total = lost.count();
    sr.lost_records = lost_total - lost_before;
    sr.records -= sr.lost_records;
    rep.records += sr.records;
    rep.lost_records += sr.lost_records;
    rep.bytes_read += sw.bytes_read;
    prev_next = sw.next_after;
    have_prev = true;
    prev_name = l.name;
    rep.next_sequence = sw.log_next;
    rep.segments.push_back(sr);
    out.segments.push_back(sw.sd);
  }
  lost.report(rep.problems);
  fill_problem_ranges(out, fs);
  return out;
}

}  // namespace

}  // namespace detail

Result<VerifyReport> verify(const std::string& path, const VerifyOptions& options) {
  ALOG_ASSIGN(auto d, detail::verify_detail(path, options));
  return std::move(d.report);
}

}  // namespace alog
