// Appending batches, rolling, recycling and syncing (FORMAT.md "Batches",
// "Rolling", "Recycling", "A failed append", "The synced offset").
#include <algorithm>
#include <climits>
#include <cstring>

#include "alog/crc32c.h"
#include "file_cache.h"
#include "log_impl.h"

namespace alog {

using namespace detail;
using namespace format;

namespace {
// Payloads at least this long are written from the caller's memory (an
// iovec each); shorter ones are copied into one contiguous buffer, which is
// about twice as fast for small frames.
constexpr uint64_t kCopyLimit = 2048;
}  // namespace

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
  ALOG_ASSIGN(auto f, fs_->open(path_join(dir_, segment_name(start) + ".tmp"), OpenMode::create_trunc));
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
  uint64_t created = std::max(now_ms(), v->back()->header().created_at_ms);
  uint16_t gen = old->generation() == 65535 ? 1 : static_cast<uint16_t>(old->generation() + 1);
  // The same inode, with the old frames (of the old generation) behind the new EOF.
  ALOG_ASSIGN(auto f, fs_->open(tmp, OpenMode::read_write));
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

Result<uint64_t> LogImpl::append_batch(const RecordRef* recs, size_t n) {
  ALOG_TRY(check_writable());
  if (n == 0) {
    if (tail_.seq == first_sequence())
      return Status(Errc::out_of_bounds, "empty batch on an empty log").at(dir_);
    return tail_.seq - 1;
  }
  // Sequences never wrap: the next sequence after the batch must still be a uint64.
  if (n > UINT64_MAX - tail_.seq)
    return Status(Errc::out_of_bounds, std::to_string(n) + " records from sequence " +
                                           std::to_string(tail_.seq) +
                                           " would pass the last sequence, 18446744073709551615")
        .at(dir_);
  if (n > kMaxBatchRecords)
    return Status(Errc::batch_too_large, std::to_string(n) + " records in one batch (at most 65535)")
        .at(dir_);
  uint64_t bytes = 0;
  for (size_t i = 0; i < n; i++) {
    if (recs[i].length > opt_.max_payload_size || recs[i].length > UINT32_MAX)
      return Status(Errc::payload_too_large,
                    "record " + std::to_string(i) + " of the batch has " +
                        std::to_string(recs[i].length) + " bytes (max payload size " +
                        std::to_string(opt_.max_payload_size) + ")")
          .at(dir_);
    bytes += kFrameHeaderSize + recs[i].length;
  }
  const uint64_t stride = opt_.checkpoint_stride;
  auto v = view();
  const uint64_t seg_count = v->size();
  bool cp_first = tail_.pending + n > kMaxPending;
  bool cp_after = (cp_first ? n : tail_.pending + n) >= stride;
  uint64_t size_here = tail_.offset + (cp_first ? 16 : 0) + bytes + (cp_after ? 16 : 0) + 16;
  bool need_roll = size_here > opt_.max_segment_size;
  uint64_t size_empty = kHeaderSize + bytes + (n >= stride ? 16 : 0) + 16;
  if (need_roll) {
    if (size_empty > opt_.max_segment_size)
      return Status(Errc::batch_too_large,
                    "batch of " + std::to_string(size_empty) +
                        " bytes does not fit in an empty segment (max segment size " +
                        std::to_string(opt_.max_segment_size) + ")")
          .joined(Errc::segment_full)
          .at(dir_);
    if (opt_.max_segments == 1)
      return Status(Errc::segment_full, "the only segment is full (max segments 1)").at(dir_);
  }
  if (opt_.max_disk_size != 0) {
    uint64_t disk = budget_size(v);
    uint64_t grow;
    if (!need_roll) {
      uint64_t len = v->back()->file_length();
      grow = size_here > len ? size_here - len : 0;
    } else if (opt_.max_segments > 1 && seg_count >= opt_.max_segments) {
      uint64_t len = v->front()->file_length();
      grow = size_empty > len ? size_empty - len : 0;
    } else {
      grow = size_empty;  // a new segment: 208 bytes of header and EOF, plus the batch
    }
    if (disk + grow > opt_.max_disk_size)
      return Status(Errc::disk_full, "append of " + std::to_string(grow) +
                                         " bytes would exceed the disk budget (" +
                                         std::to_string(disk) + " of " +
                                         std::to_string(opt_.max_disk_size) + " bytes used)")
          .at(dir_);
  }
  if (need_roll) {
    ALOG_TRY(roll(tail_.seq));
    v = view();
    cp_first = false;
    cp_after = n >= stride;
  }
  ALOG_TRY(write_batch(v->back(), recs, n, cp_first, cp_after));
  if (opt_.sync_on_append) ALOG_TRY(sync_active(/*sync_slot=*/false));
  return tail_.seq - 1;
}

// Every segment but the active one keeps its file length while it is in the
// chain (only the active segment grows or is cut; a truncation or a roll
// makes a new chain), so their sum is taken once per chain.
uint64_t LogImpl::budget_size(const std::shared_ptr<const SegmentList>& v) {
  const bool same = !sized_view_.expired() && !sized_view_.owner_before(v) && !v.owner_before(sized_view_);
  if (!same) {
    sealed_bytes_ = 0;
    for (size_t i = 0; i + 1 < v->size(); i++) sealed_bytes_ += (*v)[i]->file_length();
    sized_view_ = v;
  }
  return sealed_bytes_ + (v->empty() ? 0 : v->back()->file_length());
}

Status LogImpl::write_batch(const SegmentPtr& seg, const RecordRef* recs, size_t n, bool cp_first,
                            bool cp_after) {
  const uint16_t gen = seg->generation();
  const WalkState old = tail_;
  WalkState st = tail_;

  // Size the scratch buffer: every header, checkpoint and EOF, plus copied payloads.
  uint64_t scratch = (n + 3) * kFrameHeaderSize;
  for (size_t i = 0; i < n; i++)
    if (recs[i].length < kCopyLimit) scratch += recs[i].length;
  scratch_.resize(scratch);
  iov_.clear();
  uint8_t* base = scratch_.data();
  uint8_t* p = base;
  uint8_t* run = p;  // start of the current contiguous run in scratch
  auto flush_run = [&] {
    if (p > run) iov_.push_back({run, static_cast<size_t>(p - run)});
    run = p;
  };
  if (cp_first) {
    encode_checkpoint(st.crc, st.pending, gen, false, p);
    p += kFrameHeaderSize;
    st.crc = 0;
    st.pending = 0;
  }
  // Headers and copied payloads first. A copied one-part frame has its
  // header and payload in scratch: its CRC waits for the loop below, which
  // takes three such frames at a time.
  headers_.clear();
  deferred_.clear();
  for (size_t i = 0; i < n; i++) {
    const RecordRef& r = recs[i];
    FrameHeader h;
    h.word = static_cast<uint32_t>(r.length);
    h.stride = 1;
    h.generation = gen;
    h.flags = i + 1 == n ? (kFlagData | kFlagBatchEnd) : kFlagData;
    encode_frame_prefix(h, p);
    headers_.push_back(p);
    const bool copied = r.length < kCopyLimit;
    if (copied && r.nparts == 1) {
      deferred_.push_back(p);
    } else {
      uint32_t c = crc32c(p, 12);
      for (size_t k = 0; k < r.nparts; k++)
        if (!r.parts[k].empty()) c = crc32c_extend(c, r.parts[k].data(), r.parts[k].size());
      put32(p + 12, c);
    }
    p += kFrameHeaderSize;
    if (copied) {
      for (size_t k = 0; k < r.nparts; k++) {
        if (r.parts[k].empty()) continue;
        std::memcpy(p, r.parts[k].data(), r.parts[k].size());
        p += r.parts[k].size();
      }
    } else {
      flush_run();
      for (size_t k = 0; k < r.nparts; k++)
        if (!r.parts[k].empty())
          iov_.push_back({const_cast<char*>(r.parts[k].data()), r.parts[k].size()});
    }
  }
  // A deferred frame's CRC: its first 12 bytes, then the payload after the
  // CRC field (word, at offset 0, is the payload's length).
  auto payload_of = [](const uint8_t* h) { return h + kFrameHeaderSize; };
  size_t d = 0;
  for (; d + 3 <= deferred_.size(); d += 3) {
    uint8_t* const* f = &deferred_[d];
    uint32_t c[3] = {crc32c(f[0], 12), crc32c(f[1], 12), crc32c(f[2], 12)};
    const void* data[3] = {payload_of(f[0]), payload_of(f[1]), payload_of(f[2])};
    const size_t len[3] = {get32(f[0]), get32(f[1]), get32(f[2])};
    crc32c_extend_3(c, data, len);
    for (int k = 0; k < 3; k++) put32(f[k] + 12, c[k]);
  }
  for (; d < deferred_.size(); d++) {
    uint8_t* f = deferred_[d];
    put32(f + 12, crc32c_extend(crc32c(f, 12), payload_of(f), get32(f)));
  }
  // The checkpoint CRC runs over the finished headers, in order.
  st.crc = crc32c_extend_each(st.crc, headers_.data(), headers_.size(), kFrameHeaderSize);
  st.pending = static_cast<uint16_t>(st.pending + n);
  st.seq += n;
  if (cp_after) {
    encode_checkpoint(st.crc, st.pending, gen, false, p);
    p += kFrameHeaderSize;
    st.crc = 0;
    st.pending = 0;
  }
  encode_checkpoint(st.crc, st.pending, gen, true, p);
  p += kFrameHeaderSize;
  flush_run();
  uint64_t total = 0;
  for (const auto& io : iov_) total += io.iov_len;
  st.offset = old.offset + total - kFrameHeaderSize;
  st.open_batch = false;

  // One pwritev when the buffers fit IOV_MAX, else several, first to last.
  Status ws;
  uint64_t off = old.offset;
  for (size_t i = 0; i < iov_.size() && ws.is_ok(); i += IOV_MAX) {
    size_t k = std::min<size_t>(IOV_MAX, iov_.size() - i);
    ws = seg->file().pwritev(iov_.data() + i, static_cast<int>(k), off);
    for (size_t j = i; j < i + k; j++) off += iov_[j].iov_len;
  }
  if (!ws.is_ok()) {
    Status rb = rollback(old.offset, old);
    if (!rb.is_ok()) return fail(ws);
    return ws;
  }
  tail_ = st;
  seg->set_file_length(std::max(seg->file_length(), st.offset + kFrameHeaderSize));
  seg->publish_append(st.offset, st.seq);
  return {};
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
