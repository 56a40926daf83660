// Plans of truncate-before and truncate-after (see truncate_plan.h).
#include "truncate_plan.h"

#include <fmt/core.h>

#include <algorithm>

#include "alog/format.h"
#include "alog/scanner.h"
#include "alog/write_plan.h"

namespace alog::cli {

namespace {

// A segment's length once the write open has cut its tail (live: the log
// is open for writing already, its lengths are current).
uint64_t length_after_open(const Log& log, const SegmentInfo& s, bool live) {
  const auto& c = log.tail_cut();
  return !live && c && c->file == s.file ? c->new_length : s.file_length;
}

// Bytes a cut right after seq's frame frees in its segment: the frame's end
// plus the new EOF (and a checkpoint when seq's frame has no BatchEnd).
uint64_t cut_bytes(const Log& log, const SegmentInfo& holder, uint64_t seq, bool live) {
  auto sc = log.scan(seq, seq);
  if (!sc) fail(sc.status(), log.dir());
  auto more = (*sc)->next();
  if (!more) fail(more.status(), log.dir());
  if (!*more) fail("out_of_bounds", log.dir(), std::nullopt, fmt::format("sequence {} not found", seq));
  uint64_t off = (*sc)->offset();
  uint64_t end = off + format::kFrameHeaderSize + (*sc)->payload().size();
  auto f = posix_fs().open(path_join(log.dir(), holder.file), OpenMode::read);
  if (!f) fail(f.status(), log.dir());
  uint8_t h[format::kFrameHeaderSize];
  auto got = (*f)->pread(h, sizeof h, off);
  if (!got) fail(got.status(), log.dir());
  bool batch_end = format::decode_frame_header(h).is_batch_end();
  uint64_t new_len = end + format::kFrameHeaderSize * (batch_end ? 1 : 2);
  uint64_t len = length_after_open(log, holder, live);
  return len > new_len ? len - new_len : 0;
}

// The directory as the user spelled it, without trailing slashes as the
// library keeps it (the holder's own log may spell it otherwise).
std::string spelled(const TruncateResult& r) {
  std::string p = r.path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

void finish(TruncateResult& r, const Log& log, uint64_t first, uint64_t next, bool live) {
  r.first_seq = first;
  r.last_seq = next > first ? std::optional<uint64_t>(next - 1) : std::nullopt;
  r.next_seq = next;
  if (live) return;  // its open made its changes long ago: none is ahead
  r.recovered = log.tail_cut();
  r.repairs = log.open_repairs();
  if (r.recovered) r.recovered->saved_to = std::string(format::kLostFoundName) + "/";
}

}  // namespace

std::unique_ptr<Log> open_for_plan(const std::string& dir, std::optional<uint64_t> wait_ms) {
  require_log_dir(dir);
  require_unlocked(dir, wait_ms);
  std::unique_ptr<Log> log = open_read_or_fail(dir);
  if (!log->damage().is_ok()) fail(log->damage(), dir);
  return log;
}

void plan_truncate_before(TruncateResult& r, const Log& log, uint64_t cut, bool live) {
  const uint64_t first = log.first_sequence(), next = log.next_sequence();
  if (cut > next)
    fail("out_of_bounds", spelled(r), std::nullopt,
         fmt::format("sequence {} is beyond the next sequence {}", cut, next));
  // The real run's refusals (its walk to the cut meeting damage), made here too.
  if (Status st = log.check_truncate_before(cut); !st) fail(st, log.dir());
  for (const auto& s : log.segments()) {
    if (s.active || s.next_sequence > cut) break;
    r.removed_files.push_back(s.file);
    r.bytes_freed += s.file_length;
  }
  r.records_removed = cut > first ? cut - first : 0;
  r.removed_first = first;
  finish(r, log, std::max(cut, first), next, live);
}

void plan_truncate_after(TruncateResult& r, const Log& log, uint64_t seq, bool live) {
  const uint64_t first = log.first_sequence(), next = log.next_sequence();
  if (seq < first || seq >= next)
    fail("out_of_bounds", spelled(r), std::nullopt,
         log.empty() ? fmt::format("sequence {} is not in the log: it is empty (next {})", seq, next)
                     : fmt::format("sequence {} is not in the log [{}, {}]", seq, first, next - 1));
  // The real run's refusals (its walk to seq's frame meeting damage), made here too.
  if (Status st = log.check_truncate_after(seq); !st) fail(st, log.dir());
  if (seq + 1 < next) {
    for (const auto& s : log.segments()) {
      if (s.start_sequence > seq) {
        r.removed_files.push_back(s.file);
        r.bytes_freed += length_after_open(log, s, live);
      } else if (s.next_sequence > seq) {
        r.bytes_freed += cut_bytes(log, s, seq, live);
      }
    }
    r.records_removed = next - 1 - seq;
  }
  r.removed_first = seq + 1;
  finish(r, log, first, seq + 1, live);
}

void check_carry_out(const TruncateResult& r) {
  (void)load_options(r.path, {});
  WritePlan w;
  w.write_open = true;
  w.lost_found = r.recovered.has_value();
  w.names = !r.removed_files.empty() || !r.repairs.empty();
  if (Status st = check_write_plan(r.path, w); !st) fail(st, r.path);
}

std::unique_ptr<Log> open_to_carry_out(const Global& g, TruncateResult& r,
                                       std::optional<uint64_t> wait_ms) {
  std::unique_ptr<Log> log = open_write_or_fail(g, r.path, {}, false, wait_ms);
  // What the open cut: the plan's cut, now with its lost+found/ name.
  r.recovered = log->tail_cut();
  r.repairs = log->open_repairs();
  return log;
}

}  // namespace alog::cli
