// TruncateBefore and TruncateAfter, in the file-operation order of FORMAT.md
// so that a crash at any step leaves the old state, the new one, or a
// contiguous state in between.
#include <algorithm>

#include "log_impl.h"

namespace alog {

using namespace detail;
using namespace format;

namespace {
Status out_of_bounds(const std::string& dir, const std::string& what) {
  return Status(Errc::out_of_bounds, what).at(dir);
}
}  // namespace

// Writes slot s into the losing slot, syncs, then into the other one
// (counter + 1) and syncs again: no valid slot keeps the old fields, so a
// damaged newer slot can never bring back what a truncation removed. The
// file is synced first: the winning slot may be an unsynced write (the
// synced-offset update of a sync), and a crash must not find both slots
// damaged.
static Status write_both_slots(Segment& seg, const Slot& s) {
  ALOG_TRY(seg.file().datasync());
  for (int i = 0; i < 2; i++) {
    ALOG_TRY(seg.write_slot(s));
    ALOG_TRY(seg.file().datasync());
  }
  return {};
}

// Renames a segment to NAME.seg.del and syncs the directory; the unlink
// happens later, off the append path.
static Status retire(Fs& fs, Reaper& reaper, const std::string& dir, const Segment& seg) {
  std::string del = seg.path() + ".del";
  ALOG_TRY(fs.rename(seg.path(), del));
  ALOG_TRY(fs.sync_dir(dir));
  reaper.add(del);
  return {};
}

Result<LogImpl::BeforeCut> LogImpl::plan_truncate_before(uint64_t seq) const {
  uint64_t first = first_sequence(), next = next_sequence();
  BeforeCut c;
  if (seq <= first) return c;
  if (seq > next)
    return out_of_bounds(dir_, "truncate_before(" + std::to_string(seq) +
                                   ") is beyond the next sequence " + std::to_string(next));
  // The segment that will hold the first record: the first whose records
  // reach past seq (the active one for seq == next: that empties the log).
  auto v = view();
  for (const auto& s : *v)
    if (s->range().next > seq) {
      c.holder = s;
      break;
    }
  if (!c.holder) c.holder = v->back();
  auto r = c.holder->range();
  if (seq == r.first) return c;
  if (seq == r.next) {
    c.at = tail_;  // only the active segment can hold next_sequence()
  } else {
    // The walk to seq's frame, before any change: damage on the way is
    // refused with nothing removed (and a dry run, which calls this too,
    // refuses alike).
    ALOG_ASSIGN(Located l, c.holder->locate(seq));
    c.at = l.before;
  }
  c.move_read_offset = true;
  return c;
}

Status LogImpl::truncate_before(uint64_t seq) {
  ALOG_TRY(check_writable());
  ALOG_ASSIGN(BeforeCut c, plan_truncate_before(seq));
  if (!c.holder) return {};
  if (!reaper_) reaper_ = std::make_unique<Reaper>(fs_);
  // Whole sealed segments before the holder, oldest first.
  while (true) {
    auto v = view();
    if (v->size() < 2 || v->front() == c.holder) break;
    if (Status st = retire(*fs_, *reaper_, dir_, *v->front()); !st.is_ok()) return fail(st);
    set_view(SegmentList(v->begin() + 1, v->end()));
  }
  if (!c.move_read_offset) return {};
  const SegmentPtr& holder = c.holder;
  const WalkState& at = c.at;
  auto r = holder->range();
  Slot s = holder->slot();
  s.read_offset = at.offset;
  s.first_sequence = seq;
  s.read_crc = at.crc;
  s.read_pending = at.pending;
  if (s.synced_offset < at.offset) {
    // The slot will say every frame before the new read offset is synced:
    // make that true first, or a crash could keep the slot and lose the
    // frames (a synced offset beyond the end of the file: unopenable).
    if (Status st = holder->file().datasync(); !st.is_ok()) return fail(st);
    s.synced_offset = at.offset;
    s.synced_sequence = seq;
    s.synced_crc = at.crc;
    s.synced_pending = at.pending;
  }
  if (Status st = write_both_slots(*holder, s); !st.is_ok()) return fail(st);
  holder->set_range({at.offset, seq, at.crc, at.pending, r.end, r.next});
  return {};
}

Result<LogImpl::AfterCut> LogImpl::plan_truncate_after(uint64_t seq) const {
  uint64_t first = first_sequence(), next = next_sequence();
  if (next == first)
    return out_of_bounds(dir_, "truncate_after(" + std::to_string(seq) + ") on an empty log");
  if (seq < first || seq >= next)
    return out_of_bounds(dir_, "truncate_after(" + std::to_string(seq) +
                                   ") is outside the retained records [" + std::to_string(first) +
                                   ", " + std::to_string(next - 1) + "]");
  // The segment holding seq (the last that starts at or before it), and the
  // walk to seq's frame in it, before any change: damage on the way is
  // refused with nothing removed (and a dry run refuses alike).
  auto v = view();
  AfterCut c;
  for (const auto& s : *v)
    if (!c.holder || s->start_sequence() <= seq) c.holder = s;
  ALOG_ASSIGN(c.at, c.holder->locate(seq));
  return c;
}

Status LogImpl::truncate_after(uint64_t seq) {
  ALOG_TRY(check_writable());
  ALOG_ASSIGN(AfterCut c, plan_truncate_after(seq));
  if (!reaper_) reaper_ = std::make_unique<Reaper>(fs_);
  // Later segments, newest first.
  while (true) {
    auto v = view();
    if (v->size() < 2 || v->back() == c.holder) break;
    v->back()->mark_reaped();
    if (Status st = retire(*fs_, *reaper_, dir_, *v->back()); !st.is_ok()) return fail(st);
    set_view(SegmentList(v->begin(), v->end() - 1));
  }
  SegmentPtr seg = c.holder;
  const Located& l = c.at;
  const WalkState& after = l.after;
  File& f = seg->file();
  // 1. Make everything up to P durable and, unless P is already a batch
  //    boundary inside the synced range, mark it with the synced offset.
  if (Status st = f.datasync(); !st.is_ok()) return fail(st);
  Slot s = seg->slot();
  if (!l.batch_end || s.synced_offset > after.offset) {
    s.synced_offset = after.offset;
    s.synced_sequence = after.seq;
    s.synced_crc = after.crc;
    s.synced_pending = after.pending;
    if (Status st = write_both_slots(*seg, s); !st.is_ok()) return fail(st);
  }
  // 2. Cut the file at P; a checkpoint first when P is inside a batch.
  if (Status st = f.truncate(after.offset); !st.is_ok()) return fail(st);
  uint8_t frames[2 * kFrameHeaderSize];
  size_t n = encode_end(after.crc, after.pending, seg->generation(), !l.batch_end, frames);
  WalkState eof{after.offset + n - kFrameHeaderSize, after.seq, l.batch_end ? after.crc : 0,
                static_cast<uint16_t>(l.batch_end ? after.pending : 0), false};
  if (Status st = f.pwrite(frames, n, after.offset); !st.is_ok()) return fail(st);
  if (Status st = f.datasync(); !st.is_ok()) return fail(st);
  tail_ = eof;
  seg->set_file_length(after.offset + n);
  auto r = seg->range();
  seg->note_cut(after.seq);
  seg->set_range({r.read_offset, r.first, r.read_crc, r.read_pending, eof.offset, eof.seq});
  return {};
}

// Whether a walk from `from` in seg's file reaches its EOF at the end of its range.
static bool continues(const Segment& seg, const WalkState& from) {
  auto r = seg.range();
  if (from.offset > r.end) return false;
  FrameWindow w(&seg.file(), r.end + kFrameHeaderSize);
  Walker walk(&w, seg.generation(), from, /*read_payloads=*/true);
  return walk.run() == Stop::eof && walk.state().offset == r.end;
}

Status LogImpl::refresh() {
  if (writable_) return {};
  auto old = view();
  ALOG_ASSIGN(auto loaded, load_reader(dir_, opt_, [&](LogImpl& f) {
                if (old->empty()) return;
                f.resume_ = tail_;
                f.resume_name_ = old->back()->name();
              }));
  LogImpl& fresh = *loaded;
  fresh.settle_tail();
  auto now = fresh.view();
  const uint64_t next = now->empty() ? 0 : now->back()->range().next;
  // Keep the old segment objects (their scanners and indexes) for files that
  // are still the same, and tell scanners what happened to their records.
  SegmentList merged(now->begin(), now->end());
  for (const auto& o : *old) {
    SegmentPtr same;
    for (const auto& n : *now)
      if (n->name() == o->name() && n->header().generation == o->header().generation &&
          n->header().created_at_ms == o->header().created_at_ms)
        same = n;
    if (!same) {
      // Gone: removed by truncate_after when it held records at or after the
      // new end; recycled files are caught by the scanner's generation check;
      // truncate_before removals stay readable.
      if (o->start_sequence() >= next || !o->header_unchanged()) o->mark_reaped();
      continue;
    }
    auto ro = o->range(), rn = same->range();
    // A segment that now ends earlier, or whose old end no longer continues
    // to its EOF, was cut and rewritten by a truncate_after. Where exactly is
    // not known from outside, so no record of it read before is trusted.
    bool cut = rn.next < ro.next ||
               (o == old->back() && (same == now->back() ? fresh.rewritten_ : !continues(*same, tail_)));
    if (cut) o->note_cut(rn.first);
    o->adopt(*same);
    std::replace(merged.begin(), merged.end(), same, o);
  }
  set_view(std::move(merged));
  damage_ = fresh.damage_;
  torn_tail_ = fresh.torn_tail_;
  tail_cut_ = fresh.tail_cut_;
  repairs_ = fresh.repairs_;
  tail_ = fresh.tail_;
  return {};
}

}  // namespace alog
