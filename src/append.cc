// Rolling, recycling, syncing and undoing a failed write (FORMAT.md
// "Rolling", "Recycling", "A failed append", "The synced offset"); the
// batches themselves are written by batch_write.cc.
#include <algorithm>

#include "file_cache.h"
#include "log_impl.h"

namespace alog {

using namespace detail;
using namespace format;

// Creating and recycling share the last steps: write the new header and an
// empty EOF to NAME.seg.tmp, sync it, rename it to NAME.seg, sync the directory.
Status LogImpl::install_segment(std::unique_ptr<File> f, const SegmentHeader& h,
                                uint64_t file_length, SegmentPtr* out) {
  uint8_t buf[kEmptySegmentSize];
  encode_new_segment(h, buf);
  std::string name = segment_name(h.start_sequence);
  ALOG_TRY(f->pwrite(buf, sizeof buf, 0));
  ALOG_TRY(f->datasync());
  ALOG_TRY(fs_->rename(path_join(dir_, name + ".tmp"), path_join(dir_, name)));
  ALOG_TRY(fs_->sync_dir(dir_));
  std::shared_ptr<File> file = cache_segment_file(*fs_, path_join(dir_, name), OpenMode::read_write, std::move(f));
  auto seg = std::make_shared<Segment>(dir_, name, std::move(file), h, buf);
  Slot slots[2] = {new_segment_slot(h.start_sequence), Slot{}};
  seg->set_slots(slots, 0);
  seg->set_file_length(std::max(file_length, kEmptySegmentSize));
  seg->set_range({kHeaderSize, h.start_sequence, 0, 0, kHeaderSize, h.start_sequence});
  *out = std::move(seg);
  return {};
}

Status LogImpl::create_segment(uint64_t start, SegmentPtr* out) {
  auto v = view();
  uint64_t created = now_ms();
  if (!v->empty()) created = std::max(created, v->back()->header().created_at_ms);
  ALOG_ASSIGN(auto f, open_shedding(*fs_, path_join(dir_, segment_name(start) + ".tmp"), OpenMode::create_trunc));
  return install_segment(std::move(f), SegmentHeader{start, created, 1}, kEmptySegmentSize, out);
}

Status LogImpl::recycle_oldest(uint64_t start, SegmentPtr* out) {
  auto v = view();
  SegmentPtr old = v->front();
  std::string tmp = path_join(dir_, segment_name(start) + ".tmp");
  // Scanners on the old segment stop from here on.
  old->mark_reaped();
  ALOG_TRY(fs_->rename(old->path(), tmp));
  ALOG_TRY(fs_->sync_dir(dir_));
  // From here on the old segment's records are gone.
  set_view(SegmentList(v->begin() + 1, v->end()));
  const auto gone = old->range();
  recycled_records_ += gone.next - gone.first;
  uint64_t created = std::max(now_ms(), v->back()->header().created_at_ms);
  uint16_t gen = old->generation() == 65535 ? 1 : static_cast<uint16_t>(old->generation() + 1);
  // The same inode, with the old frames (of the old generation) behind the new EOF.
  ALOG_ASSIGN(auto f, open_shedding(*fs_, tmp, OpenMode::read_write));
  return install_segment(std::move(f), SegmentHeader{start, created, gen}, old->file_length(), out);
}

Status LogImpl::sync_active(bool sync_slot, bool seal) {
  auto v = view();
  const SegmentPtr& seg = v->back();
  uint64_t eof = tail_.offset;  // the EOF position when this fdatasync starts
  if (Status st = seg->file().datasync(); !st.is_ok()) return fail(st);
  // A sealed segment's synced offset must be its EOF position on disk, not
  // just in a page cache that an earlier process's failed fsync left behind.
  if (seg->slot().synced_offset != eof || (seal && !slot_written_)) {
    Slot s = seg->slot();
    s.synced_offset = eof;
    s.synced_sequence = tail_.seq;
    s.synced_crc = tail_.crc;
    s.synced_pending = tail_.pending;
    if (Status st = seg->write_slot(s); !st.is_ok()) return fail(st);
    slot_written_ = true;
    if (sync_slot) {
      if (Status st = seg->file().datasync(); !st.is_ok()) return fail(st);
    }
  }
  return {};
}

Status LogImpl::sync() {
  ALOG_TRY(check_writable());
  return sync_active(/*sync_slot=*/false);
}

Status LogImpl::roll(uint64_t start) {
  // Seal the active segment durably: its synced offset becomes its EOF position.
  ALOG_TRY(sync_active(/*sync_slot=*/true, /*seal=*/true));
  auto v = view();
  SegmentPtr seg;
  Status st;
  if (opt_.max_segments > 1 && v->size() >= opt_.max_segments)
    st = recycle_oldest(start, &seg);
  else
    st = create_segment(start, &seg);
  // The old active segment is intact; a half-made new one is a .seg.tmp that
  // the next open deletes, or a complete empty segment. Either way the
  // in-memory chain no longer matches: fail the log.
  if (!st.is_ok()) return fail(st);
  SegmentList next(*view());
  next.push_back(seg);
  set_view(std::move(next));
  tail_ = WalkState{kHeaderSize, start, 0, 0, false};
  slot_written_ = true;  // the new segment's slot A, synced
  return {};
}

Status LogImpl::roll_now() {
  ALOG_TRY(check_writable());
  auto v = view();
  if (tail_.seq == v->back()->start_sequence()) return {};  // an empty active segment: nothing to seal
  if (opt_.max_segments == 1)
    return Status(Errc::segment_full, "the only segment cannot be sealed (max segments 1)").at(dir_);
  const bool recycles = opt_.max_segments > 1 && v->size() >= opt_.max_segments;
  const uint64_t grow = kHeaderSize + kFrameHeaderSize;
  if (opt_.max_disk_size != 0 && !recycles && disk_size() + grow > opt_.max_disk_size)
    return Status(Errc::disk_full, "a new segment would exceed the disk budget (" +
                                       std::to_string(disk_size()) + " of " +
                                       std::to_string(opt_.max_disk_size) + " bytes used)")
        .at(dir_);
  return roll(tail_.seq);
}

Status LogImpl::rollback(uint64_t old_eof, const WalkState& old_tail) {
  auto v = view();
  const SegmentPtr& seg = v->back();
  File& f = seg->file();
  ALOG_TRY(f.truncate(old_eof));
  uint8_t eof[kFrameHeaderSize];
  encode_checkpoint(old_tail.crc, old_tail.pending, seg->generation(), true, eof);
  ALOG_TRY(f.pwrite(eof, sizeof eof, old_eof));
  ALOG_TRY(f.datasync());
  seg->set_file_length(old_eof + kFrameHeaderSize);
  tail_ = old_tail;
  return {};
}

}  // namespace alog
