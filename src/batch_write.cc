// Writing batches (FORMAT.md "Batches", "Checkpoints"): each batch is
// checked, placed (a checkpoint before or after it, a roll, the disk budget)
// and framed into one scratch buffer; the batches of one call are written
// together, with one pwritev where the buffers fit IOV_MAX, over the EOF
// frame, with the new EOF last. The bytes are those of one append per batch.
#include <algorithm>
#include <climits>
#include <cstring>

#include "alog/crc32c.h"
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

Result<uint64_t> LogImpl::append_batch(const RecordRef* recs, size_t n) {
  ALOG_TRY(check_writable());
  if (n == 0) {
    if (tail_.seq == first_sequence())
      return Status(Errc::out_of_bounds, "empty batch on an empty log").at(dir_);
    return tail_.seq - 1;
  }
  const BatchRef b{recs, n};
  auto done = append_batches(&b, 1);
  if (!done) return done.status();
  return tail_.seq - 1;
}

Result<LogImpl::BatchSize> LogImpl::check_batch(const BatchRef& b, uint64_t first_seq) const {
  // Sequences never wrap: the next sequence after the batch must still be a uint64.
  if (b.n > UINT64_MAX - first_seq)
    return Status(Errc::out_of_bounds, std::to_string(b.n) + " records from sequence " +
                                           std::to_string(first_seq) +
                                           " would pass the last sequence, 18446744073709551615")
        .at(dir_);
  if (b.n > kMaxBatchRecords)
    return Status(Errc::batch_too_large,
                  std::to_string(b.n) + " records in one batch (at most 65535)")
        .at(dir_);
  BatchSize size;
  for (size_t i = 0; i < b.n; i++) {
    const uint64_t len = b.recs[i].length;
    if (len > opt_.max_payload_size || len > UINT32_MAX)
      return Status(Errc::payload_too_large, "record " + std::to_string(i) + " of the batch has " +
                                                 std::to_string(len) + " bytes (max payload size " +
                                                 std::to_string(opt_.max_payload_size) + ")")
          .at(dir_);
    size.framed += kFrameHeaderSize + len;
    if (len < kCopyLimit) size.copied += len;
  }
  return size;
}

Result<size_t> LogImpl::append_batches(const BatchRef* batches, size_t count) {
  ALOG_TRY(check_writable());
  // Check every batch first, and size the scratch buffer once (the frames
  // point into it): every header, the checkpoints, copied payloads, the EOF.
  sizes_.clear();
  uint64_t scratch = kFrameHeaderSize;
  Status invalid;
  for (uint64_t seq = tail_.seq; sizes_.size() < count;) {
    const BatchRef& b = batches[sizes_.size()];
    auto size = check_batch(b, seq);
    if (!size) {
      invalid = size.status();
      break;
    }
    sizes_.push_back(*size);
    seq += b.n;
    scratch += (b.n + 2) * kFrameHeaderSize + size->copied;
  }
  if (sizes_.empty()) return invalid;
  // Grown, never shrunk: growing again after a smaller call's resize()
  // zeroed those bytes once more (48 MB of memset for 100 MB of lines).
  if (scratch_.size() < scratch) scratch_.resize(scratch);
  iov_.clear();
  FrameCursor cur{scratch_.data(), scratch_.data()};

  const uint64_t stride = opt_.checkpoint_stride;
  auto v = view();
  WalkState old = tail_;
  WalkState st = tail_;
  bool framed = false;  // some batch is in the scratch buffer
  size_t done = 0;
  for (; done < sizes_.size(); done++) {
    const BatchRef& b = batches[done];
    if (b.n == 0) continue;
    const uint64_t bytes = sizes_[done].framed;
    bool cp_first = st.pending + b.n > kMaxPending;
    bool cp_after = (cp_first ? b.n : st.pending + b.n) >= stride;
    const uint64_t size_here = st.offset + (cp_first ? 16 : 0) + bytes + (cp_after ? 16 : 0) + 16;
    const bool need_roll = size_here > opt_.max_segment_size;
    // A call rolls at most once, before its first batch: the caller sees
    // each roll between two calls (to apply its retention there).
    if (need_roll && framed) break;
    const uint64_t size_empty = kHeaderSize + bytes + (b.n >= stride ? 16 : 0) + 16;
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
      } else if (opt_.max_segments > 1 && v->size() >= opt_.max_segments) {
        uint64_t len = v->front()->file_length();
        grow = size_empty > len ? size_empty - len : 0;
      } else {
        grow = size_empty;  // a new segment: 208 bytes of header and EOF, plus the batch
      }
      if (disk + grow > opt_.max_disk_size) {
        if (framed) break;  // the next call reports it
        return Status(Errc::disk_full, "append of " + std::to_string(grow) +
                                           " bytes would exceed the disk budget (" +
                                           std::to_string(disk) + " of " +
                                           std::to_string(opt_.max_disk_size) + " bytes used)")
            .at(dir_);
      }
    }
    if (need_roll) {
      ALOG_TRY(roll(st.seq));
      v = view();
      old = st = tail_;
      cp_first = false;
      cp_after = b.n >= stride;
    }
    frame_batch(v->back()->generation(), b, cp_first, cp_after, st, cur);
    framed = true;
  }
  if (!framed) return done;  // empty batches only
  ALOG_TRY(write_frames(v->back(), old, st, cur));
  if (opt_.sync_on_append) ALOG_TRY(sync_active(/*sync_slot=*/false));
  return done;
}

// Every segment but the active one keeps its file length while it is in the
// chain (only the active segment grows or is cut; a truncation or a roll
// makes a new chain), so their sum is taken once per chain.
uint64_t LogImpl::budget_size(const std::shared_ptr<const SegmentList>& v) {
  const bool same =
      !sized_view_.expired() && !sized_view_.owner_before(v) && !v.owner_before(sized_view_);
  if (!same) {
    sealed_bytes_ = 0;
    for (size_t i = 0; i + 1 < v->size(); i++) sealed_bytes_ += (*v)[i]->file_length();
    sized_view_ = v;
  }
  return sealed_bytes_ + (v->empty() ? 0 : v->back()->file_length());
}

void LogImpl::FrameCursor::end_run(std::vector<struct iovec>& iov) {
  if (p > run) iov.push_back({run, static_cast<size_t>(p - run)});
  run = p;
}

void LogImpl::frame_batch(uint16_t gen, const BatchRef& b, bool cp_first, bool cp_after,
                          WalkState& st, FrameCursor& cur) {
  const RecordRef* const recs = b.recs;
  const size_t n = b.n;
  uint8_t*& p = cur.p;
  auto checkpoint = [&] {
    encode_checkpoint(st.crc, st.pending, gen, false, p);
    p += kFrameHeaderSize;
    st.offset += kFrameHeaderSize;
    st.crc = 0;
    st.pending = 0;
  };
  if (cp_first) checkpoint();
  // Headers and copied payloads first. A copied one-part frame (the common
  // case) has its header and payload in scratch: its CRC waits for the loop
  // below, which takes three such frames at a time.
  headers_.resize(n);
  deferred_.clear();
  deferred_.reserve(n);
  // Bytes 4-11 of a data frame: stride 1, reserved 0, the generation, and
  // flags Data, with BatchEnd on the last.
  uint8_t mid[8], last[8];
  put16(mid, 1);
  put16(mid + 2, 0);
  put16(mid + 4, gen);
  put16(mid + 6, kFlagData);
  std::memcpy(last, mid, sizeof mid);
  put16(last + 6, kFlagData | kFlagBatchEnd);
  for (size_t i = 0; i < n; i++) {
    const RecordRef& r = recs[i];
    headers_[i] = p;
    if (r.nparts == 1 && r.length < kCopyLimit) {
      // The common frame, as the general case below would write it: a
      // one-part payload, copied, its CRC deferred.
      put32(p, static_cast<uint32_t>(r.length));
      std::memcpy(p + 4, i + 1 < n ? mid : last, sizeof mid);
      deferred_.push_back(p);
      if (r.length != 0) std::memcpy(p + kFrameHeaderSize, r.parts[0].data(), r.length);
      p += kFrameHeaderSize + r.length;
      st.offset += kFrameHeaderSize + r.length;
      continue;
    }
    // A payload in several parts, or one written from the caller's memory:
    // its CRC now, over the parts.
    FrameHeader h;
    h.word = static_cast<uint32_t>(r.length);
    h.stride = 1;
    h.generation = gen;
    h.flags = i + 1 == n ? (kFlagData | kFlagBatchEnd) : kFlagData;
    encode_frame_prefix(h, p);
    uint32_t c = crc32c(p, 12);
    for (size_t k = 0; k < r.nparts; k++)
      if (!r.parts[k].empty()) c = crc32c_extend(c, r.parts[k].data(), r.parts[k].size());
    put32(p + 12, c);
    p += kFrameHeaderSize;
    if (r.length < kCopyLimit) {
      for (size_t k = 0; k < r.nparts; k++) {
        if (r.parts[k].empty()) continue;
        std::memcpy(p, r.parts[k].data(), r.parts[k].size());
        p += r.parts[k].size();
      }
    } else {
      cur.end_run(iov_);
      for (size_t k = 0; k < r.nparts; k++)
        if (!r.parts[k].empty())
          iov_.push_back({const_cast<char*>(r.parts[k].data()), r.parts[k].size()});
    }
    st.offset += kFrameHeaderSize + r.length;
  }
  // A deferred frame's CRC: its first 12 bytes, then the payload after the
  // CRC field (word, at offset 0, is the payload's length). The checkpoint
  // CRC runs over the finished headers, in order: when every frame was
  // deferred, three at a time as their CRCs are taken, where that serial
  // chain overlaps the next frames' CRCs in the CPU.
  const bool all = deferred_.size() == n;
  size_t d = 0;
  for (; d + 3 <= deferred_.size(); d += 3) {
    if (all) {
      crc32c_seal_frames_3(&deferred_[d], &st.crc);
      continue;
    }
    uint32_t c[3];
    crc32c_frames_3(&deferred_[d], c);
    for (int k = 0; k < 3; k++) put32(deferred_[d + k] + 12, c[k]);
  }
  for (; d < deferred_.size(); d++) {
    uint8_t* f = deferred_[d];
    if (all) {
      crc32c_seal_frame(f, &st.crc);
      continue;
    }
    put32(f + 12, crc32c_extend(crc32c(f, 12), f + kFrameHeaderSize, get32(f)));
  }
  if (!all) st.crc = crc32c_extend_each(st.crc, headers_.data(), headers_.size(), kFrameHeaderSize);
  st.pending = static_cast<uint16_t>(st.pending + n);
  st.seq += n;
  if (cp_after) checkpoint();
  st.open_batch = false;
}

Status LogImpl::write_frames(const SegmentPtr& seg, const WalkState& old, const WalkState& st,
                             FrameCursor& cur) {
  encode_checkpoint(st.crc, st.pending, seg->generation(), true, cur.p);
  cur.p += kFrameHeaderSize;
  cur.end_run(iov_);
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

}  // namespace alog
