// One segment as verify() sees it: loading its header and slots
// (load_segment, for verify's own loading too), and verify_segment(): the
// problems of one segment's walk alone, for a reader that met damage there.
#include <algorithm>

#include "alog/verify.h"
#include "file_cache.h"
#include "lock_probe.h"
#include "sector_reader.h"
#include "verify_internal.h"
#include "verify_segment.h"

namespace alog {

using namespace detail;
using namespace format;

namespace detail {

Result<Loaded> load_segment(Fs& fs, const std::string& dir, const std::string& n, bool in_dir,
                            std::vector<Problem>& problems) {
  Loaded l;
  l.name = n;
  l.name_start = parse_segment_name(n).value_or(0);
  std::string p = path_join(dir, n);
  ALOG_ASSIGN(auto f, open_shedding(fs, p, OpenMode::read));
  l.file = cache_segment_file(fs, p, OpenMode::read, std::move(f));
  ALOG_ASSIGN(l.length, l.file->size());
  uint8_t hdr[kHeaderSize];
  auto read = l.file->pread(hdr, kHeaderSize, 0);
  if (!read.is_ok() && is_read_error(read.status())) {
    // An unreadable sector: damage, as salvage treats it (step 4).
    problems.push_back(problem(n, 0, "io_error", Classification::corruption,
                               "segment header: read error (" + read.status().message() + ")"));
    return l;
  }
  ALOG_ASSIGN(size_t got, std::move(read));
  if (got < kHeaderSize) {
    problems.push_back(problem(n, 0, "segment_header", Classification::corruption,
                               "file has " + std::to_string(l.length) +
                                   " bytes, less than the 192-byte segment header",
                               "192 bytes", std::to_string(l.length) + " bytes"));
    return l;
  }
  HeaderError he = decode_segment_header(hdr, &l.h);
  if (he != HeaderError::none) {
    problems.push_back(problem(n, 0, "segment_header", Classification::corruption, header_error_text(he)));
    return l;
  }
  l.slots = choose_slot(hdr, l.h.start_sequence);
  if (l.slots.winner < 0) {
    problems.push_back(problem(n, 0, "metadata_slots", Classification::corruption, l.slots.error));
    return l;
  }
  l.header_ok = true;
  int loser = 1 - l.slots.winner;
  if (l.slots.state[loser] == SlotState::invalid)
    problems.push_back(problem(n, kSlotAOffset + uint64_t(loser) * kSlotSize, "slot_warning",
                               Classification::warning,
                               std::string("losing slot ") + (loser ? "B" : "A") + " is invalid: " +
                                   l.slots.why[loser]));
  if (in_dir && segment_name(l.h.start_sequence) != n)
    problems.push_back(problem(n, 8, "name_mismatch", Classification::warning,
                               "file name disagrees with the header's start sequence",
                               segment_name(l.h.start_sequence), n));
  return l;
}

}  // namespace detail

Result<std::vector<Problem>> verify_segment(const std::string& dir, const std::string& name,
                                            const VerifyOptions& opt) {
  Fs& fs = opt.fs ? *opt.fs : posix_fs();
  ALOG_ASSIGN(auto names, fs.list(dir));
  // The segment after it by name: whether it is the active one, and where
  // the range of a damaged header ends (verify orders unreadable headers
  // by name too).
  const uint64_t start = parse_segment_name(name).value_or(0);
  std::optional<std::string> next;
  for (const auto& n : names) {
    auto s = parse_segment_name(n);
    if (s && *s > start && (!next || *s < *parse_segment_name(*next))) next = n;
  }
  VerifyDetail d;
  d.dir = dir;
  d.report.path = dir;
  ALOG_ASSIGN(Loaded l, load_segment(fs, dir, name, /*in_dir=*/true, d.report.problems));
  SegmentDetail sd;
  sd.name = name;
  if (l.header_ok) {
    const LockProbe writer(fs, path_join(dir, std::string(kLockName)), l.length);
    VerifyOptions one = opt;
    one.progress = nullptr;
    ALOG_ASSIGN(SegmentWalk sw, walk_segment(l, /*active=*/!next, /*parts=*/1, writer, one, {}));
    d.report.problems.insert(d.report.problems.end(), sw.problems.begin(), sw.problems.end());
    sd = sw.sd;
  }
  d.segments.push_back(sd);
  if (next) {
    SegmentDetail after;
    after.name = *next;
    d.segments.push_back(after);
  }
  fill_problem_ranges(d, fs);
  return std::move(d.report.problems);
}

}  // namespace alog
