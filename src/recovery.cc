// Recovery of the active segment on open (FORMAT.md "Opening for writing"),
// the read-only tail walk, cutting at a batch boundary and lost+found/.
#include <cstring>

#include "log_impl.h"

namespace alog {

using namespace detail;
using namespace format;

namespace {

WalkState synced_state(const Slot& s) {
  return WalkState{s.synced_offset, s.synced_sequence, s.synced_crc, s.synced_pending, false};
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += c;
    else if (static_cast<unsigned char>(c) < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      o += b;
    } else o += c;
  }
  return o;
}

}  // namespace

Status LogImpl::save_lost(const std::string& source_path, uint64_t offset, const std::string& bytes,
                          const char* reason) {
  std::string lf = path_join(dir_, std::string(kLostFoundName));
  ALOG_ASSIGN(FileStat st, fs_->stat(lf));
  if (!st.exists) {
    ALOG_TRY(fs_->mkdir(lf));
    ALOG_TRY(fs_->sync_dir(dir_));
  }
  std::string base = source_path.substr(source_path.find_last_of('/') + 1);
  std::string stem = base + "@" + std::to_string(offset) + "." + std::to_string(now_ms());
  std::string bin = path_join(lf, stem + ".bin");
  ALOG_ASSIGN(auto f, fs_->open(bin, OpenMode::create_trunc));
  if (!bytes.empty()) ALOG_TRY(f->pwrite(bytes.data(), bytes.size(), 0));
  ALOG_TRY(f->datasync());
  std::string manifest = "{\"source\":\"" + json_escape(base) + "\",\"offset\":" +
                         std::to_string(offset) + ",\"length\":" + std::to_string(bytes.size()) +
                         ",\"reason\":\"" + json_escape(reason) + "\",\"saved_at_ms\":" +
                         std::to_string(now_ms()) + ",\"data\":\"" + json_escape(stem) + ".bin\"}\n";
  ALOG_ASSIGN(auto m, fs_->open(path_join(lf, stem + ".json"), OpenMode::create_trunc));
  ALOG_TRY(m->pwrite(manifest.data(), manifest.size(), 0));
  ALOG_TRY(m->datasync());
  return fs_->sync_dir(lf);
}

// Whether the frame that ends at `b` is data without BatchEnd. Only asked
// when b is the walk's start (the synced offset), where the walk cannot tell.
static Result<bool> ends_open_batch(const Segment& seg, const WalkState& b) {
  auto r = seg.range();
  if (b.seq <= r.first || b.offset <= r.read_offset) return false;
  ALOG_ASSIGN(Located l, seg.locate(b.seq - 1));
  return !l.batch_end && l.after.offset == b.offset;
}

Status LogImpl::cut_at(const SegmentPtr& seg, const WalkState& b, uint64_t file_len,
                       const char* reason) {
  File& f = seg->file();
  std::string bytes(file_len - b.offset, '\0');
  if (!bytes.empty()) {
    ALOG_ASSIGN(size_t got, f.pread(bytes.data(), bytes.size(), b.offset));
    bytes.resize(got);
  }
  ALOG_TRY(save_lost(seg->path(), b.offset, bytes, reason));
  ALOG_TRY(f.truncate(b.offset));
  uint8_t frames[2 * kFrameHeaderSize];
  size_t n = 0;
  WalkState eof = b;
  if (b.open_batch) {
    encode_checkpoint(b.crc, b.pending, seg->generation(), false, frames);
    n += kFrameHeaderSize;
    eof.offset += kFrameHeaderSize;
    eof.crc = 0;
    eof.pending = 0;
    eof.open_batch = false;
  }
  encode_checkpoint(eof.crc, eof.pending, seg->generation(), true, frames + n);
  n += kFrameHeaderSize;
  ALOG_TRY(f.pwrite(frames, n, b.offset));
  ALOG_TRY(f.datasync());
  seg->set_file_length(b.offset + n);
  tail_ = eof;
  return {};
}

Status LogImpl::recover_active(const SegmentPtr& seg) {
  slot_written_ = false;  // until this process writes one (below, or at the next roll)
  Slot slot = seg->slot();
  File& f = seg->file();
  uint64_t len = seg->file_length();
  WalkState start = synced_state(slot);
  FrameWindow w(&f, len);
  Walker walk(&w, seg->generation(), start, /*read_payloads=*/true);
  Stop stop = walk.run();
  if (stop == Stop::io_error) return w.error();
  auto r = seg->range();
  if (stop == Stop::eof) {
    tail_ = walk.state();
    uint64_t x = tail_.offset;
    if (len > x + kFrameHeaderSize) {
      // A lost batch, a lost truncate or a recycled file's stale frames.
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
    }
    ALOG_TRY(cut_at(seg, b, len, stop_text(stop)));
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

Status LogImpl::walk_active_for_read(const SegmentPtr& seg) {
  Slot slot = seg->slot();
  uint64_t len = seg->file_length();
  WalkState start = synced_state(slot);
  FrameWindow w(&seg->file(), len);
  Walker walk(&w, seg->generation(), start, /*read_payloads=*/true);
  Stop stop = walk.run();
  if (stop == Stop::io_error) return w.error();
  auto r = seg->range();
  // A torn tail is the end for a reader.
  tail_ = stop == Stop::eof ? walk.state() : walk.boundary();
  if (stop != Stop::eof)
    torn_tail_ = seg->path() + ":" + std::to_string(walk.state().offset) + ": " + stop_text(stop);
  r.end = tail_.offset;
  r.next = tail_.seq;
  seg->set_range(r);
  return {};
}

}  // namespace alog
