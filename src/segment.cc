// Segment: committed range, slots and the lazily built sparse index.
#include "segment.h"

#include "alog/crc32c.h"

#include <algorithm>
#include <cstring>

namespace alog::detail {

using namespace format;

Segment::Segment(std::string dir, std::string name, std::shared_ptr<File> file,
                 const SegmentHeader& h, const uint8_t raw_header[kHeaderSize])
    : path_(path_join(dir, name)), name_(std::move(name)), file_(std::move(file)), header_(h) {
  (void)raw_header;
}

int Segment::winner() const {
  std::lock_guard<std::mutex> g(mu_);
  return winner_;
}

Slot Segment::slot() const {
  std::lock_guard<std::mutex> g(mu_);
  return slots_[winner_];
}

void Segment::set_slots(const Slot slots[2], int winner) {
  std::lock_guard<std::mutex> g(mu_);
  slots_[0] = slots[0];
  slots_[1] = slots[1];
  winner_ = winner;
}

Status Segment::write_slot(Slot s) {
  int loser = 1 - winner();
  s.counter = static_cast<uint16_t>(slot().counter + 1);
  uint8_t buf[kSlotSize];
  encode_slot(s, buf);
  ALOG_TRY(file_->pwrite(buf, kSlotSize, kSlotAOffset + uint64_t(loser) * kSlotSize));
  std::lock_guard<std::mutex> g(mu_);
  slots_[loser] = s;
  winner_ = loser;
  return {};
}

void Segment::adopt(const Segment& fresh) {
  Slot slots[2];
  int winner;
  {
    std::lock_guard<std::mutex> g(fresh.mu_);
    slots[0] = fresh.slots_[0];
    slots[1] = fresh.slots_[1];
    winner = fresh.winner_;
  }
  set_slots(slots, winner);
  set_range(fresh.range());
  set_file_length(fresh.file_length());
}

bool Segment::header_unchanged() const {
  uint8_t b[kFixedSize];
  auto r = file_->pread(b, kFixedSize, 0);
  if (!r.is_ok() || *r != kFixedSize) return false;
  SegmentHeader h;
  if (decode_segment_header(b, &h) != HeaderError::none) return false;
  return h.start_sequence == header_.start_sequence && h.generation == header_.generation &&
         h.created_at_ms == header_.created_at_ms;
}

Segment::Range Segment::range() const {
  std::lock_guard<std::mutex> g(mu_);
  return range_;
}

void Segment::set_range(const Range& r) {
  std::lock_guard<std::mutex> g(mu_);
  if (r.read_offset != range_.read_offset || r.first != range_.first) {
    index_.clear();
    indexed_to_ = 0;
  } else if (r.end < indexed_to_) {
    while (!index_.empty() && index_.back().offset > r.end) index_.pop_back();
    if (index_.empty()) {
      indexed_to_ = 0;
    } else {
      const IndexEntry& e = index_.back();
      indexed_to_ = e.offset;
      index_tail_ = WalkState{e.offset, e.seq, e.crc, e.pending, false};
    }
  }
  range_ = r;
}

void Segment::publish_append(uint64_t end, uint64_t next) {
  std::lock_guard<std::mutex> g(mu_);
  range_.end = end;
  range_.next = next;
}

void Segment::note_cut(uint64_t next_after_cut) {
  std::lock_guard<std::mutex> g(mu_);
  // Index entries past the cut describe frames that may be rewritten.
  if (indexed_to_ != 0) {
    while (index_.size() > 1 && index_.back().seq > next_after_cut) index_.pop_back();
    const IndexEntry& e = index_.back();
    if (e.seq <= next_after_cut) {
      indexed_to_ = e.offset;
      index_tail_ = WalkState{e.offset, e.seq, e.crc, e.pending, false};
    } else {
      index_.clear();
      indexed_to_ = 0;
    }
  }
  cut_next_.push_back(next_after_cut);
  cuts_.store(cut_next_.size());
}

uint64_t Segment::lowest_cut_since(uint64_t seen) const {
  std::lock_guard<std::mutex> g(mu_);
  uint64_t low = UINT64_MAX;
  for (size_t i = seen; i < cut_next_.size(); i++) low = std::min(low, cut_next_[i]);
  return low;
}

Status Segment::corrupt_at(uint64_t offset, uint64_t seq, const std::string& what) const {
  Status st(Errc::corrupt, path_ + ":" + std::to_string(offset) + ": sequence " +
                               std::to_string(seq) + ": " + what);
  st.at(path_, offset);
  return st;
}

Status Segment::build_index_locked() const {
  if (indexed_to_ == 0) {
    index_.clear();
    index_.push_back({range_.read_offset, range_.first, range_.read_crc, range_.read_pending});
    indexed_to_ = range_.read_offset;
    index_tail_ = WalkState{range_.read_offset, range_.first, range_.read_crc,
                            range_.read_pending, false};
  }
  if (indexed_to_ >= range_.end) return {};
  // One sequential read of the unindexed part (in large chunks), headers only.
  FrameWindow w(file_.get(), range_.end + kFrameHeaderSize, 4 << 20);
  Walker walk(&w, header_.generation, index_tail_, /*read_payloads=*/false);
  while (walk.state().offset < range_.end) {
    Stop s = walk.step();
    if (s == Stop::none) {
      if (walk.frame().h.is_checkpoint()) {
        const WalkState& st = walk.state();
        index_.push_back({st.offset, st.seq, st.crc, st.pending});
      }
      continue;
    }
    if (s == Stop::io_error) return w.error();
    // Damage: index up to the stop; readers past it get the error from locate().
    break;
  }
  index_tail_ = walk.state();
  indexed_to_ = walk.state().offset;
  return {};
}

size_t Segment::index_size() const {
  std::lock_guard<std::mutex> g(mu_);
  return index_.size();
}

Result<IndexEntry> Segment::entry_for(uint64_t seq, IndexEntry* gap_end) const {
  std::lock_guard<std::mutex> g(mu_);
  ALOG_TRY(build_index_locked());
  // The first entry past seq. Checkpoints come at about even steps of
  // sequence, so the entry the first and last entries' sequences point to
  // lies next to it: a search galloping out from there reads a few entries
  // where a binary search of the whole index read log2(n) of them, each a
  // likely cache miss (issue 14: read(seq) at a 4 KiB gap).
  const size_t n = index_.size();
  size_t lo = 0, hi = n;
  if (n > 1 && seq >= index_.front().seq && index_.back().seq > index_.front().seq) {
    const uint64_t span = index_.back().seq - index_.front().seq;
    const uint64_t d = std::min(seq - index_.front().seq, span);
    // Any guess is corrected below: floating point is precise enough.
    const size_t guess = std::min(n - 1, static_cast<size_t>(double(d) / double(span) * double(n - 1)));
    size_t step = 1;
    if (index_[guess].seq <= seq) {  // past the guess
      size_t b = guess;
      for (; b + step < n && index_[b + step].seq <= seq; step *= 2) b += step;
      lo = b + 1;
      hi = std::min(n, b + step);
    } else {  // at or before the guess
      size_t a = guess;
      for (; a >= step && index_[a - step].seq > seq; step *= 2) a -= step;
      lo = a >= step ? a - step + 1 : 0;
      hi = a;
    }
  }
  auto it = std::upper_bound(index_.begin() + static_cast<std::ptrdiff_t>(lo),
                             index_.begin() + static_cast<std::ptrdiff_t>(hi), seq,
                             [](uint64_t s, const IndexEntry& e) { return s < e.seq; });
  if (it == index_.begin()) return corrupt_at(range_.read_offset, seq, "no index entry");
  // Several entries may share a sequence (checkpoints with no data between):
  // the last one at or before seq starts the shortest walk.
  auto prev = std::prev(it);
  if (gap_end) *gap_end = it == index_.end() ? IndexEntry{range_.end, range_.next, 0, 0} : *it;
  return *prev;
}

namespace {

// The common case of locate: every frame from the entry to seq's is a data
// frame in the window that passes Walker::step's checks. Walks their
// headers in place, with the running CRC over them taken a run of headers
// at a time; false when anything else comes (the Walker then walks from the
// entry again and reports it).
bool locate_in_window(const FrameWindow& w, uint16_t gen, const IndexEntry& e, uint64_t seq,
                      bool crc, Located* out) {
  constexpr size_t kRun = 64;
  const uint8_t* run[kRun];
  size_t n = 0;
  WalkState st{e.offset, e.seq, e.crc, e.pending, false};
  const uint64_t wend = w.end(), limit = w.limit();
  uint64_t walked = 0;
  while (true) {
    if (st.offset >= limit || st.offset + kFrameHeaderSize > wend) return false;
    const uint8_t* p = w.at(st.offset);
    FrameHeader h = decode_frame_header(p);
    if (!data_frame_ok(h, gen, st.offset, limit)) return false;
    walked++;
    if (st.seq == seq) {
      if (crc) st.crc = crc32c_extend_each(st.crc, run, n, kFrameHeaderSize);
      else st.crc = 0;
      out->offset = st.offset;
      out->length = h.word;
      out->batch_end = h.is_batch_end();
      out->before = st;
      out->after = WalkState{st.offset + kFrameHeaderSize + h.word, st.seq + 1,
                             crc ? crc32c_extend(st.crc, p, kFrameHeaderSize) : 0,
                             static_cast<uint16_t>(st.pending + 1), !h.is_batch_end()};
      out->entry = e;
      out->headers_walked = walked;
      return true;
    }
    if (crc) {
      run[n++] = p;
      if (n == kRun) {
        st.crc = crc32c_extend_each(st.crc, run, n, kFrameHeaderSize);
        n = 0;
      }
    }
    st.seq++;
    st.pending = static_cast<uint16_t>(st.pending + 1);
    st.offset += kFrameHeaderSize + h.word;
    st.open_batch = !h.is_batch_end();
  }
}

}  // namespace

Result<Located> Segment::locate(uint64_t seq, std::string* frame) const {
  return locate_walking(seq, frame, /*crc=*/true);
}

Result<Located> Segment::locate_frame(uint64_t seq, std::string* frame) const {
  return locate_walking(seq, frame, /*crc=*/false);
}

Result<Located> Segment::locate_walking(uint64_t seq, std::string* frame, bool crc) const {
  IndexEntry gap_end{};
  ALOG_ASSIGN(IndexEntry e, entry_for(seq, &gap_end));
  uint64_t end = range().end;
  // Read the gap to the next checkpoint with one pread. The first read
  // stops about where seq's frame ends if the gap's frames are all of one
  // size, one frame later (at a random record, half the gap on average);
  // when that falls short, the next read takes the rest of the gap.
  const uint64_t gap = gap_end.offset > e.offset ? gap_end.offset - e.offset : 0;
  const uint64_t chunk = std::min<uint64_t>(std::max<uint64_t>(gap, 4096), 1 << 20);
  uint64_t first = chunk;
  if (gap_end.seq > e.seq && seq >= e.seq && seq < gap_end.seq) {
    const uint64_t frame_bytes = gap / (gap_end.seq - e.seq);
    first = std::min<uint64_t>(chunk, (seq - e.seq + 2) * frame_bytes + kFrameHeaderSize);
  }
  FrameWindow w(file_.get(), end, first);
  const bool held = w.ensure(e.offset, kFrameHeaderSize);
  w.set_chunk(chunk);
  Located fast;
  if (held && locate_in_window(w, header_.generation, e, seq, crc, &fast)) {
    // The gap read usually holds the payload too: spare the caller a pread.
    const uint64_t n = kFrameHeaderSize + fast.length;
    if (frame && w.holds(fast.offset, n))
      frame->assign(reinterpret_cast<const char*>(w.at(fast.offset)), n);
    return fast;
  }
  Walker walk(&w, header_.generation, WalkState{e.offset, e.seq, e.crc, e.pending, false},
              /*read_payloads=*/false);
  uint64_t walked = 0;
  while (true) {
    WalkState before = walk.state();
    if (before.offset >= end) return corrupt_at(before.offset, seq, "record not found before end");
    Stop s = walk.step();
    walked++;
    if (s == Stop::io_error) return w.error();
    if (s != Stop::none) return corrupt_at(before.offset, before.seq, stop_text(s));
    const FrameInfo& f = walk.frame();
    if (f.h.is_data() && f.seq == seq) {
      Located l;
      l.offset = f.offset;
      l.length = f.h.word;
      l.batch_end = f.h.is_batch_end();
      l.before = before;
      l.after = walk.state();
      l.entry = e;
      l.headers_walked = walked;
      // The gap read usually holds the payload too: spare the caller a pread.
      const uint64_t n = kFrameHeaderSize + f.h.word;
      if (frame && f.offset + n <= w.limit() && w.holds(f.offset, n))
        frame->assign(reinterpret_cast<const char*>(w.at(f.offset)), n);
      return l;
    }
  }
}

SegmentInfo Segment::info(bool active) const {
  Range r = range();
  SegmentInfo i;
  i.file = name_;
  i.start_sequence = header_.start_sequence;
  i.first_sequence = r.first;
  i.next_sequence = r.next;
  i.read_offset = r.read_offset;
  i.size = r.end + kFrameHeaderSize;
  i.file_length = file_length();
  i.synced_offset = slot().synced_offset;
  i.generation = header_.generation;
  i.created_at_ms = header_.created_at_ms;
  i.active = active;
  return i;
}

}  // namespace alog::detail
