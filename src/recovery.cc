// Recovery of the active segment on open (FORMAT.md "Opening for writing"),
// the read-only tail walk, cutting at a batch boundary and lost+found/.
#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <thread>
#include <utility>

#include "log_impl.h"
#include "lost_found.h"
#include "walk_split.h"

namespace alog {

using namespace detail;
using namespace format;

// Whether the frame that ends at `b` is data without BatchEnd. Only asked
// when b is the walk's start (the synced offset), where the walk cannot tell.
static Result<bool> ends_open_batch(const Segment& seg, const WalkState& b) {
  auto r = seg.range();
  if (b.seq <= r.first || b.offset <= r.read_offset) return false;
  ALOG_ASSIGN(Located l, seg.locate(b.seq - 1));
  return !l.batch_end && l.after.offset == b.offset;
}

Status LogImpl::plan_tail_cut(const SegmentPtr& seg, bool eof, const WalkState& at,
                              const WalkState& boundary, const char* why) {
  tail_cut_.reset();
  const uint64_t len = seg->file_length();
  TailCut c;
  c.file = seg->name();
  if (eof) {
    const uint64_t end = at.offset + kFrameHeaderSize;
    FrameWindow w(&seg->file(), len);
    if (len <= end || stale_after_eof(w, seg->generation(), end)) return {};
    c.offset = c.new_length = end;
    c.reason = "bytes after the EOF frame";
  } else {
    c.offset = boundary.offset;
    c.records = at.seq - boundary.seq;
    c.new_length = boundary.offset + (boundary.open_batch ? 2 : 1) * kFrameHeaderSize;
    c.reason = std::string("torn tail: ") + why;
  }
  c.bytes = len > c.offset ? len - c.offset : 0;
  tail_cut_ = std::move(c);
  return {};
}

Status LogImpl::cut_at(const SegmentPtr& seg, const WalkState& b, const char* reason) {
  File& f = seg->file();
  ALOG_ASSIGN(std::string saved, save_tail(*fs_, dir_, f, seg->name(), b.offset, reason, now_ms()));
  if (tail_cut_) tail_cut_->saved_to = saved;
  ALOG_TRY(f.truncate(b.offset));
  uint8_t frames[2 * kFrameHeaderSize];
  size_t n = encode_end(b.crc, b.pending, seg->generation(), b.open_batch, frames);
  ALOG_TRY(f.pwrite(frames, n, b.offset));
  ALOG_TRY(f.datasync());
  seg->set_file_length(b.offset + n);
  tail_ = WalkState{b.offset + n - kFrameHeaderSize, b.seq, b.open_batch ? 0 : b.crc,
                    static_cast<uint16_t>(b.open_batch ? 0 : b.pending), false};
  return {};
}

namespace {

// walk.run() over the window w of seg, on up to one thread per CPU (at most
// four) when what is left of the segment is long enough for SplitWalk's
// parts (two of 8 MiB at least). Only for walks nothing waits on part by
// part: a background tail walk publishes its range as it goes, and a scan
// reads behind it on the other CPU.
Stop run_split(Walker& walk, FrameWindow& w, const Segment& seg) {
  const size_t parts = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 4);
  SplitWalk split({w.file(), w.limit(), seg.generation(), walk.state().offset, 0, true}, parts);
  const std::function<bool(size_t, uint64_t)> take_all;
  RecordView scratch[256];
  Stop s;
  while ((s = walk.advance(scratch)) == Stop::none) split.join(walk, take_all);
  return s;
}

}  // namespace

Status LogImpl::recover_active(const SegmentPtr& seg) {
  slot_written_ = false;  // until this process writes one (below, or at the next roll)
  Slot slot = seg->slot();
  File& f = seg->file();
  uint64_t len = seg->file_length();
  WalkState start = synced_state(slot);
  FrameWindow w(&f, len);
  Walker walk(&w, seg->generation(), start, /*read_payloads=*/true);
  Stop stop = run_split(walk, w, *seg);
  if (stop == Stop::io_error) return w.error();
  auto r = seg->range();
  if (stop == Stop::eof) {
    tail_ = walk.state();
    uint64_t x = tail_.offset;
    if (len > x + kFrameHeaderSize) {
      // A lost batch, a lost truncate (both saved first) or a recycled file's
      // stale frames (dropped unsaved: never part of the log).
      ALOG_TRY(plan_tail_cut(seg, true, tail_, tail_, ""));
      if (tail_cut_) {
        ALOG_ASSIGN(tail_cut_->saved_to, save_tail(*fs_, dir_, f, seg->name(), x + kFrameHeaderSize,
                                                   "bytes after the EOF frame", now_ms()));
      }
      ALOG_TRY(f.truncate(x + kFrameHeaderSize));
      seg->set_file_length(x + kFrameHeaderSize);
      if (slot.synced_offset == x) ALOG_TRY(f.datasync());
    }
    if (slot.synced_offset != x) {
      // A failed fsync in an earlier process may have left these bytes only
      // in the page cache: write them again before trusting them.
      std::string bytes(x + kFrameHeaderSize - slot.synced_offset, '\0');
      ALOG_ASSIGN(size_t got, f.pread(bytes.data(), bytes.size(), slot.synced_offset));
      if (got != bytes.size()) return Status(Errc::io, "short re-read of the tail").at(seg->path(), slot.synced_offset);
      ALOG_TRY(f.pwrite(bytes.data(), bytes.size(), slot.synced_offset));
      ALOG_TRY(f.datasync());
    }
  } else {
    WalkState b = walk.boundary();
    if (b.offset == start.offset) {
      r.end = b.offset;
      r.next = b.seq;
      seg->set_range(r);
      ALOG_ASSIGN(b.open_batch, ends_open_batch(*seg, b));
    } else {
      // As in the clean branch: the bytes from the synced offset to B may be
      // only in the page cache (a failed fsync earlier); write them again so
      // the sync after the cut makes them durable before a slot says so.
      std::string bytes(b.offset - start.offset, '\0');
      ALOG_ASSIGN(size_t got, f.pread(bytes.data(), bytes.size(), start.offset));
      if (got != bytes.size())
        return Status(Errc::io, "short re-read of the tail").at(seg->path(), start.offset);
      ALOG_TRY(f.pwrite(bytes.data(), bytes.size(), start.offset));
    }
    ALOG_TRY(plan_tail_cut(seg, false, walk.state(), b, stop_text(stop)));
    ALOG_TRY(cut_at(seg, b, stop_text(stop)));
  }
  if (seg->slot().synced_offset != tail_.offset) {
    Slot s = seg->slot();
    s.synced_offset = tail_.offset;
    s.synced_sequence = tail_.seq;
    s.synced_crc = tail_.crc;
    s.synced_pending = tail_.pending;
    ALOG_TRY(seg->write_slot(s));
    ALOG_TRY(f.datasync());
    slot_written_ = true;
  }
  r = seg->range();
  r.end = tail_.offset;
  r.next = tail_.seq;
  seg->set_range(r);
  return {};
}

namespace {

// Published ranges of a background walk are at least this far apart.
constexpr uint64_t kPublishEvery = 256 * 1024;

// walk.run(), publishing seg's range at batch boundaries kPublishEvery apart;
// Stop::none when `stop` is set first (the range then ends at the walk's
// last batch boundary).
Stop run_publishing(Walker& walk, Segment& seg, TailWalk& progress, const std::atomic<bool>& stop) {
  uint64_t told = walk.boundary().offset;
  RecordView scratch[256];
  while (true) {
    if (stop.load(std::memory_order_relaxed)) {
      seg.publish_append(walk.boundary().offset, walk.boundary().seq);
      return Stop::none;
    }
    Stop s = walk.advance(scratch);
    if (s != Stop::none) return s;
    const WalkState& b = walk.boundary();
    if (b.offset >= told + kPublishEvery) {
      seg.publish_append(b.offset, b.seq);
      progress.moved();
      told = b.offset;
    }
  }
}

}  // namespace

Status LogImpl::walk_active_for_read(const SegmentPtr& seg, TailWalk* progress) {
  Slot slot = seg->slot();
  uint64_t len = seg->file_length();
  FrameWindow w(&seg->file(), len);
  std::optional<Walker> done;
  Stop stop = Stop::none;
  // A refresh resumes where the previous look ended, so following a live log
  // costs what was appended since, not the whole unsynced tail. From there
  // the walk must reach an EOF, or stop no earlier than the synced offset (a
  // batch in flight); anything else means the log was cut and rewritten
  // behind the old end (a truncate_after in another process).
  if (resume_ && resume_name_ == seg->name()) {
    if (resume_->offset + format::kFrameHeaderSize > len) {
      rewritten_ = true;
    } else {
      Walker walk(&w, seg->generation(), *resume_, /*read_payloads=*/true);
      stop = run_split(walk, w, *seg);
      if (stop == Stop::io_error) return w.error();
      if (stop == Stop::eof || walk.state().offset >= slot.synced_offset) done = walk;
      else rewritten_ = true;
    }
  }
  if (!done) {
    Walker walk(&w, seg->generation(), synced_state(slot), /*read_payloads=*/true);
    stop = progress ? run_publishing(walk, *seg, *progress, stop_tail_walk_) : run_split(walk, w, *seg);
    if (stop == Stop::io_error) return w.error();
    if (stop == Stop::none) {  // stopped: take_over_tail_walk's caller goes on from here
      tail_walk_stopped_at_ = walk.boundary();
      return {};
    }
    done = walk;
  }
  return conclude_walk(seg, stop, *done, {});
}

std::optional<WalkState> LogImpl::take_over_tail_walk() {
  if (!tail_walk_.take_over(stop_tail_walk_)) return std::nullopt;
  auto at = std::exchange(tail_walk_stopped_at_, std::nullopt);
  if (!at) tail_walk_.release({});  // it had ended on its own
  return at;
}

Status LogImpl::conclude_tail_walk(const SegmentPtr& seg, Stop stop, const Walker& done, const Status& error) {
  Status st = conclude_walk(seg, stop, done, error);
  if (!st.is_ok() && damage_.is_ok()) damage_ = st;  // as a background walk's error
  tail_walk_.release(st);
  return st;
}

Status LogImpl::conclude_walk(const SegmentPtr& seg, Stop stop, const Walker& done, const Status& error) {
  auto r = seg->range();
  if (stop == Stop::io_error) {  // the records end at the last batch boundary before it
    seg->publish_append(done.boundary().offset, done.boundary().seq);
    return error;
  }
  // A torn tail is the end for a reader.
  tail_ = stop == Stop::eof ? done.state() : done.boundary();
  torn_tail_.clear();
  if (stop != Stop::eof)
    torn_tail_ = seg->path() + ":" + std::to_string(done.state().offset) + ": " + stop_text(stop);
  r.end = tail_.offset;
  r.next = tail_.seq;
  seg->set_range(r);
  // What a write open would cut here, told as recover_active does it.
  if (stop == Stop::eof) return plan_tail_cut(seg, true, tail_, tail_, "");
  WalkState b = done.boundary();
  if (b.offset == seg->slot().synced_offset) {
    ALOG_ASSIGN(b.open_batch, ends_open_batch(*seg, b));
  }
  return plan_tail_cut(seg, false, done.state(), b, stop_text(stop));
}

}  // namespace alog
