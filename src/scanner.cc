// Reading records: Scanner and Log::read.
#include "alog/scanner.h"

#include "alog/crc32c.h"
#include "log_impl.h"

namespace alog {

using namespace detail;
using namespace format;

namespace {

Status corrupt_record(const Segment& seg, uint64_t off, uint64_t seq, const std::string& what) {
  Status st(Errc::corrupt, seg.path() + ":" + std::to_string(off) + ": sequence " +
                               std::to_string(seq) + ": " + what);
  st.at(seg.path(), off);
  return st;
}

// The segment holding seq in a view, or nullptr.
SegmentPtr find_segment(const SegmentList& v, uint64_t seq) {
  size_t lo = 0, hi = v.size();
  while (lo < hi) {  // first segment whose next > seq
    size_t mid = (lo + hi) / 2;
    if (v[mid]->range().next <= seq) lo = mid + 1;
    else hi = mid;
  }
  if (lo == v.size()) return nullptr;
  auto r = v[lo]->range();
  return seq >= r.first ? v[lo] : nullptr;
}

// Checks a data frame header read at off; payload must follow in memory.
Status check_data_frame(const Segment& seg, const uint8_t* p, uint64_t off, uint64_t seq,
                        uint64_t end) {
  FrameHeader h = decode_frame_header(p);
  if (data_frame_ok(h, seg.generation(), off, end)) return {};
  if (!h.is_data()) return corrupt_record(seg, off, seq, "expected a data frame, found " + std::string(frame_kind_name(h.flags)));
  if (h.generation != seg.generation()) return corrupt_record(seg, off, seq, "stale frame generation");
  if (h.reserved != 0 || h.stride != 1) return corrupt_record(seg, off, seq, "bad frame header fields");
  if (h.is_lost() && h.word != 0) return corrupt_record(seg, off, seq, "lost frame with a payload length");
  if (off + kFrameHeaderSize + h.word > end) return corrupt_record(seg, off, seq, "truncated payload");
  return {};
}

}  // namespace

class ScannerImpl {
 public:
  ScannerImpl(const LogImpl* log, uint64_t from, std::optional<uint64_t> to)
      : log_(log), pos_(from), to_(to) {}

  // The common case (next_in_window, accept, frame_crc_ok with the CRC
  // known ahead) is inline in next(), the rest out of line in next_slow()
  // and frame_crc_3(): as calls they were ~15 % of next() per 100 B record.
  Result<bool> next();
  Result<bool> next_slow();
  // Reads on in seg from the frame at off (pos_ its sequence), with seg's
  // range and cuts as seen then.
  void enter(SegmentPtr seg, const Segment::Range& r, uint64_t off, uint64_t cuts) {
    seg_ = std::move(seg);
    r_ = r;
    off_ = off;
    win_ = std::make_unique<FrameWindow>(&seg_->file(), r.end, 1 << 20);
    cuts_seen_ = cuts;
    file_ = seg_->path();
  }
  bool next_in_window();
  // At the end of a sealed segment's records: the frames from off_ to its
  // EOF position r.end are checkpoints, then the EOF, each sound on its
  // own (checkpoint_sound: a reader keeps no running CRC to check them
  // further). Once per segment. corrupt at the first that is not; io.
  Status check_sealed_end(const Segment::Range& r);
  // The window's frames from off_ that pass next()'s checks, as many as out
  // can take, in one loop (the cut count and the bounds checked once); the
  // last becomes the current record. The caller checks for a recycle or cut
  // after it (next_in_window, next_batch).
  size_t take_window(RecordView* out, size_t max);
  void accept(const uint8_t* p, const format::FrameHeader& h);
  Result<size_t> next_batch(std::span<RecordView> out);
  // Whether the CRC of the data frame at `at` (its header at f in the
  // window) matches. Taken with the next two frames' when they lie whole in
  // the window (next_two_data_frames), three side by side: those that match
  // are known for the calls that reach them next (next() takes one record
  // at a time; the walker's look-ahead does the same, Walker::data_crc).
  bool frame_crc_ok(const uint8_t* f, uint64_t at);
  bool frame_crc_3(const uint8_t* f, uint64_t at);  // frame_crc_ok when no CRC is known ahead

  const LogImpl* log_;
  uint64_t pos_;
  std::optional<uint64_t> to_;
  SegmentPtr seg_;
  std::unique_ptr<FrameWindow> win_;
  uint64_t cuts_seen_ = 0;
  Segment::Range r_{};  // the segment's committed range as last read
  uint64_t off_ = 0;
  uint64_t cur_seq_ = 0;
  uint64_t cur_off_ = 0;
  bool lost_ = false;
  std::string_view payload_;
  std::string file_;
  // The two frames after the one frame_crc_ok() was asked for, as far as
  // their CRCs matched, while the window holds the same bytes
  // (ahead_fills_). (Measured with 100-byte records, next() per record:
  // 21 ns; looking 5 frames ahead 22.3 ns, 30 24.4 ns.)
  uint64_t ahead_[2] = {};
  size_t ahead_i_ = 0, ahead_n_ = 0;
  uint64_t ahead_fills_ = 0;
};

inline bool ScannerImpl::frame_crc_ok(const uint8_t* f, uint64_t at) {
  if (ahead_i_ < ahead_n_ && ahead_[ahead_i_] == at && ahead_fills_ == win_->fills()) {
    ahead_i_++;
    return true;
  }
  return frame_crc_3(f, at);
}

bool ScannerImpl::frame_crc_3(const uint8_t* f, uint64_t at) {
  ahead_i_ = ahead_n_ = 0;
  const uint8_t* fr[3];
  uint64_t off[3];
  if (!next_two_data_frames(*win_, f, at, std::min(win_->end(), r_.end), fr, off))
    return frame_crc(f, f + kFrameHeaderSize, get32(f)) == get32(f + 12);  // this frame alone
  uint32_t c[3];
  crc32c_frames_3(fr, c);
  ahead_fills_ = win_->fills();
  for (size_t k = 1; k < 3 && c[k] == get32(fr[k] + 12); k++) ahead_[ahead_n_++] = off[k];
  return c[0] == get32(f + 12);
}

// Makes the checked data frame at off_ (header h, bytes at p) the current
// record and moves past it.
inline void ScannerImpl::accept(const uint8_t* p, const FrameHeader& h) {
  payload_ = std::string_view(reinterpret_cast<const char*>(p + kFrameHeaderSize), h.word);
  lost_ = h.is_lost();
  cur_seq_ = pos_;
  cur_off_ = off_;
  pos_++;
  off_ += kFrameHeaderSize + h.word;
}

// The common case of next(), in the same segment: the frame lies whole in
// the window, inside the committed range read last, nothing was cut or
// recycled, and the frame passes next()'s checks. false when anything else
// holds (next() then does the full work, and reports what it finds).
inline bool ScannerImpl::next_in_window() {
  if (!seg_ || seg_->cuts() != cuts_seen_ || !win_->holds(off_, 0)) return false;
  const uint64_t next = to_ && *to_ < r_.next ? *to_ + 1 : r_.next;
  const uint64_t end = r_.end, wend = win_->end();
  if (pos_ >= next) return false;
  // take_window(.., 1) without its batch's bookkeeping: next() takes one
  // record per call, and this is most of its cost.
  uint64_t off = off_;
  const uint8_t* p;
  FrameHeader h;
  while (true) {
    if (off >= end || off + kFrameHeaderSize > wend) return false;
    p = win_->at(off);
    h = decode_frame_header(p);
    if (!h.is_checkpoint()) break;
    if (!checkpoint_sound(p, seg_->generation())) return false;  // next() reports it
    off += kFrameHeaderSize;
  }
  const uint64_t after = off + kFrameHeaderSize + h.word;
  if (!data_frame_ok(h, seg_->generation(), off, end) || after > wend || !frame_crc_ok(p, off)) return false;
  // A recycle began while we read: what we read is meaningless (next() reports it).
  if (seg_->reaped()) return false;
  off_ = off;
  accept(p, h);
  return true;
}

Result<bool> ScannerImpl::next() {
  if (next_in_window()) return true;
  return next_slow();
}

Result<bool> ScannerImpl::next_slow() {
  payload_ = {};
  lost_ = false;
  while (true) {
    if (to_ && pos_ > *to_) return false;
    if (!seg_) {
      auto v = log_->view();
      if (v->empty()) return false;
      auto first = v->front()->range().first;
      if (pos_ < first) pos_ = first;
      if (to_ && pos_ > *to_) return false;
      seg_ = find_segment(*v, pos_);
      if (!seg_) {
        if (pos_ >= v->back()->range().next) {
          // Past what a tail walk in the background has confirmed so far.
          ALOG_ASSIGN(bool moved, log_->await_tail(*v->back(), v->back()->range().end));
          if (moved) continue;
          if (!log_->damage().is_ok()) return log_->damage();
          return false;
        }
        return Status(Errc::not_found, "no segment holds sequence " + std::to_string(pos_)).at(log_->dir());
      }
      auto r = seg_->range();
      uint64_t off = r.read_offset;
      if (pos_ != r.first) {
        ALOG_ASSIGN(Located l, seg_->locate_frame(pos_));
        off = l.offset;
      }
      enter(seg_, r, off, seg_->cuts());
    }
    if (seg_->reaped())
      return Status(Errc::segment_reaped, seg_->path() + ": segment was recycled or removed under the scanner at sequence " + std::to_string(pos_)).at(seg_->path());
    if (seg_->cuts() != cuts_seen_) {
      // A truncate_after since we last looked: records we returned beyond its
      // cut no longer exist, and the bytes after it may have been rewritten.
      if (pos_ > seg_->lowest_cut_since(cuts_seen_))
        return Status(Errc::segment_reaped, seg_->path() + ": truncate_after cut the log behind the scanner at sequence " + std::to_string(pos_)).at(seg_->path());
      cuts_seen_ = seg_->cuts();
      win_->invalidate();
      r_ = seg_->range();
    }
    // The committed range only grows while nothing is cut (cuts are caught
    // above): re-read it, under the segment's lock, only at its known end.
    if (off_ >= r_.end || pos_ >= r_.next) r_ = seg_->range();
    // The cut of a truncate_after is noted before the range shrinks, so the
    // cached range can still be the old one: look again before reporting damage.
    auto range_moved = [&] {
      Segment::Range now = seg_->range();
      bool moved = now.end != r_.end || now.next != r_.next;
      r_ = now;
      return moved;
    };
    const Segment::Range& r = r_;
    if (off_ >= r.end || pos_ >= r.next) {
      // End of this segment: move on if a later one holds pos_.
      auto v = log_->view();
      if (!v->empty() && v->back() != seg_ && pos_ >= r.next) {
        Status st = check_sealed_end(r);
        if (st.is(Errc::corrupt) && !seg_->header_unchanged())
          return Status(Errc::segment_reaped, seg_->path() + ": segment was recycled").at(seg_->path());
        if (st.is(Errc::corrupt) && range_moved()) continue;
        if (!st.is_ok()) return st;
        seg_.reset();
        continue;
      }
      if (!v->empty() && v->back() == seg_) {
        // The end of what a tail walk in the background has confirmed so far.
        ALOG_ASSIGN(bool moved, log_->await_tail(*seg_, r.end));
        if (!moved) return false;
        r_ = seg_->range();
        continue;
      }
      log_->settle_tail();  // a walk in the background sets damage() at its end
      if (!log_->damage().is_ok() && (v->empty() || v->back()->range().next <= pos_)) return log_->damage();
      if (v->empty()) return false;
      seg_.reset();
      continue;
    }
    win_->set_limit(r.end);
    if (!win_->ensure(off_, kFrameHeaderSize)) {
      if (!win_->error().is_ok()) return win_->error();
      if (range_moved()) continue;
      return corrupt_record(*seg_, off_, pos_, "truncated header");
    }
    FrameHeader h = decode_frame_header(win_->at(off_));
    if (h.is_checkpoint()) {
      if (!checkpoint_sound(win_->at(off_), seg_->generation())) {
        if (!seg_->header_unchanged())
          return Status(Errc::segment_reaped, seg_->path() + ": segment was recycled").at(seg_->path());
        if (range_moved()) continue;
        return corrupt_record(*seg_, off_, pos_, "damaged checkpoint frame");
      }
      off_ += kFrameHeaderSize;
      continue;
    }
    if (!data_frame_ok(h, seg_->generation(), off_, r.end)) {
      Status st = check_data_frame(*seg_, win_->at(off_), off_, pos_, r.end);
      // Another process may have recycled the file under us.
      if (!seg_->header_unchanged())
        return Status(Errc::segment_reaped, seg_->path() + ": segment was recycled").at(seg_->path());
      if (range_moved()) continue;
      return st;
    }
    if (!win_->ensure(off_, kFrameHeaderSize + h.word)) {
      if (!win_->error().is_ok()) return win_->error();
      if (range_moved()) continue;
      return corrupt_record(*seg_, off_, pos_, "truncated payload");
    }
    const uint8_t* p = win_->at(off_);
    uint32_t c = frame_crc(p, p + kFrameHeaderSize, h.word);
    if (c != h.crc && range_moved()) continue;
    if (c != h.crc)
      return corrupt_record(*seg_, off_, pos_,
                            "frame crc mismatch (stored " + hex32(h.crc) + ", computed " + hex32(c) + ")");
    // A recycle that began while we read makes what we read meaningless.
    if (seg_->reaped())
      return Status(Errc::segment_reaped, seg_->path() + ": segment was recycled").at(seg_->path());
    accept(p, h);
    return true;
  }
}

Status ScannerImpl::check_sealed_end(const Segment::Range& r) {
  win_->set_limit(r.end + kFrameHeaderSize);
  for (uint64_t at = off_;; at += kFrameHeaderSize) {
    const bool eof = at >= r.end;
    if (!win_->ensure(at, kFrameHeaderSize)) {
      if (!win_->error().is_ok()) return win_->error();
      return corrupt_record(*seg_, at, pos_, "truncated header");
    }
    const uint8_t* p = win_->at(at);
    const uint16_t flags = get16(p + 10);
    if (flags != (eof ? kFlagCheckpoint | kFlagEof : kFlagCheckpoint))
      return corrupt_record(*seg_, at, pos_,
                            std::string(eof ? "expected the EOF" : "expected a checkpoint or the EOF") +
                                ", found " + frame_kind_name(flags));
    if (!checkpoint_sound(p, seg_->generation()))
      return corrupt_record(*seg_, at, pos_, eof ? "damaged EOF frame" : "damaged checkpoint frame");
    if (eof) return {};
  }
}

size_t ScannerImpl::take_window(RecordView* out, size_t max) {
  if (!seg_ || seg_->cuts() != cuts_seen_ || !win_->holds(off_, 0)) return 0;
  uint64_t next = r_.next;
  if (to_ && *to_ < next) next = *to_ + 1;
  if (pos_ >= next) return 0;
  const uint64_t from = off_;
  const size_t n = take_records(*win_, seg_->generation(), r_.end, off_, pos_,
                                out, size_t(std::min<uint64_t>(max, next - pos_)));
  if (n > 0) {
    const auto* last = reinterpret_cast<const uint8_t*>(out[n - 1].payload.data()) - kFrameHeaderSize;
    cur_off_ = from + uint64_t(last - win_->at(from));
    cur_seq_ = pos_ + n - 1;
    payload_ = out[n - 1].payload;
    lost_ = out[n - 1].lost;
  }
  pos_ += n;
  return n;
}

// The first record by next(), which does every check, reads the window and
// moves between segments; then what next_in_window() takes from that window.
// Anything else (a refill, the range's end, a frame next() would reject,
// `to`) ends the batch, and the next call's next() deals with it.
Result<size_t> ScannerImpl::next_batch(std::span<RecordView> out) {
  if (out.empty()) return size_t{0};
  ALOG_ASSIGN(bool more, next());
  if (!more) return size_t{0};
  out[0] = {cur_seq_, payload_, lost_};
  size_t n = 1;
  const uint64_t pos_after_first = pos_, off_after_first = off_, first_off = cur_off_;
  n += take_window(out.data() + n, out.size() - n);
  if (n > 1 && (seg_->reaped() || seg_->cuts() != cuts_seen_)) {
    // A recycle or a cut began during the batch: only the first record was
    // read before it for certain; next() reports the rest.
    pos_ = pos_after_first;
    off_ = off_after_first;
    payload_ = out[0].payload;
    lost_ = out[0].lost;
    cur_seq_ = out[0].sequence;
    cur_off_ = first_off;
    return size_t{1};
  }
  return n;
}

Scanner::Scanner(std::unique_ptr<ScannerImpl> impl) : impl_(std::move(impl)) {}
Scanner::~Scanner() = default;
Result<bool> Scanner::next() { return impl_->next(); }
Result<size_t> Scanner::next_batch(std::span<RecordView> out) { return impl_->next_batch(out); }
uint64_t Scanner::sequence() const { return impl_->cur_seq_; }
bool Scanner::lost() const { return impl_->lost_; }
std::string_view Scanner::payload() const { return impl_->payload_; }
const std::string& Scanner::file() const { return impl_->file_; }
uint64_t Scanner::offset() const { return impl_->cur_off_; }
uint64_t Scanner::position() const { return impl_->pos_; }

Result<std::unique_ptr<Scanner>> Log::scan(uint64_t from, std::optional<uint64_t> to) const {
  return std::make_unique<Scanner>(std::make_unique<ScannerImpl>(impl_.get(), from, to));
}

std::unique_ptr<Scanner> LogImpl::scan_at(uint64_t seq, const SegmentPtr& seg, uint64_t off,
                                          uint64_t cuts) const {
  auto impl = std::make_unique<ScannerImpl>(this, seq, std::nullopt);
  impl->enter(seg, seg->range(), off, cuts);
  return std::make_unique<Scanner>(std::move(impl));
}

Result<Record> LogImpl::read(uint64_t seq) const {
  auto v = view();
  SegmentPtr seg = find_segment(*v, seq);
  if (!seg)
    return Status(Errc::not_found, "sequence " + std::to_string(seq) + " is not in the log [" +
                                       std::to_string(first_sequence()) + ", " +
                                       std::to_string(next_sequence()) + ")")
        .at(dir_);
  std::string buf;
  ALOG_ASSIGN(Located l, seg->locate_frame(seq, &buf));
  if (buf.size() != kFrameHeaderSize + l.length) {
    // The walk checked the length against the committed range, which a slot
    // claims: allocate only what the file holds.
    ALOG_ASSIGN(uint64_t size, seg->file().size());
    if (l.offset > size || kFrameHeaderSize + l.length > size - l.offset)
      return corrupt_record(*seg, l.offset, seq, "truncated payload");
    buf.assign(kFrameHeaderSize + l.length, '\0');
    ALOG_ASSIGN(size_t got, seg->file().pread(buf.data(), buf.size(), l.offset));
    if (got != buf.size()) return corrupt_record(*seg, l.offset, seq, "truncated payload");
  }
  const auto* p = reinterpret_cast<const uint8_t*>(buf.data());
  ALOG_TRY(check_data_frame(*seg, p, l.offset, seq, seg->range().end));
  FrameHeader h = decode_frame_header(p);
  uint32_t c = frame_crc(p, p + kFrameHeaderSize, h.word);
  if (c != h.crc)
    return corrupt_record(*seg, l.offset, seq,
                          "frame crc mismatch (stored " + hex32(h.crc) + ", computed " + hex32(c) + ")");
  if (seg->reaped())
    return Status(Errc::segment_reaped, seg->path() + ": segment was recycled").at(seg->path());
  if (h.is_lost())
    return Status(Errc::lost, seg->path() + ":" + std::to_string(l.offset) + ": sequence " +
                                  std::to_string(seq) + " is lost (salvage could not read it)")
        .at(seg->path(), l.offset);
  Record r;
  r.sequence = seq;
  buf.erase(0, kFrameHeaderSize);
  r.payload = std::move(buf);
  return r;
}

}  // namespace alog
