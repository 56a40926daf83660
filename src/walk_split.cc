#include "walk_split.h"

#include <algorithm>
#include <cstring>
#include <system_error>

#include "alog/crc32c.h"

namespace alog::detail {

using namespace format;

namespace {

// Below this a part is not worth a thread: it walks in about a millisecond.
constexpr uint64_t kMinPart = 8 << 20;
// How far past a part's target offset a checkpoint is looked for (they are
// `CheckpointStride` records apart: 4 MiB at the default of 64 records of
// 64 KiB).
constexpr uint64_t kMaxSearch = 16 << 20;

}  // namespace

std::optional<uint64_t> find_checkpoint(File& file, uint16_t generation, uint64_t from, uint64_t to) {
  // Reads of 8 KiB first, then 64 KiB: checkpoints are usually near (every
  // 64 records by default), and a rendered scan looks for one per part.
  constexpr size_t kChunk = 64 << 10;
  std::unique_ptr<uint8_t[]> buf(new uint8_t[kChunk]);
  for (uint64_t at = from, chunk = 8 << 10; at < to; chunk = kChunk) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(chunk, to - at + kFrameHeaderSize - 1));
    auto got = file.pread(buf.get(), want, at);
    if (!got.is_ok() || *got < kFrameHeaderSize) return std::nullopt;
    // Candidates by their flags byte (memchr: payloads rarely hold it).
    const uint8_t* const b = buf.get();
    const size_t last = *got - kFrameHeaderSize;  // the last header start in the buffer
    for (size_t i = 0; i <= last && at + i < to; i++) {
      const void* q = std::memchr(b + i + 11, kFlagCheckpoint, last - i + 1);
      if (!q) break;
      i = size_t(static_cast<const uint8_t*>(q) - b) - 11;
      const uint8_t* p = b + i;
      if (at + i >= to) break;
      if (p[10] != 0 || get16(p + 8) != generation || get16(p + 6) != 0) continue;
      if (crc32c(p, 12) == get32(p + 12)) return at + i;
    }
    at += *got - (kFrameHeaderSize - 1);
  }
  return std::nullopt;
}

SplitWalk::SplitWalk(const Setup& s, size_t parts, OnFrame on_frame)
    : on_frame_(std::move(on_frame)), boundary_(s.boundary) {
  if (s.limit < s.from + kFrameHeaderSize) return;
  parts = static_cast<size_t>(std::min<uint64_t>(parts, (s.limit - s.from) / kMinPart));
  if (parts <= 1) return;
  const uint64_t part = (s.limit - s.from) / parts;
  uint64_t after = s.from;  // a part's checkpoint lies at or after this
  for (size_t j = 1; j < parts; j++) {
    const uint64_t target = std::max(s.from + part * j, after);
    const uint64_t to = std::min(s.limit - kFrameHeaderSize, target + std::min(part / 4, kMaxSearch));
    auto at = find_checkpoint(*s.file, s.generation, target, to);
    if (!at) continue;
    auto p = std::make_unique<Part>();
    p->start = *at;
    after = *at + kFrameHeaderSize;
    parts_.push_back(std::move(p));
  }
  for (size_t i = 0; i < parts_.size(); i++) {
    Part& p = *parts_[i];
    p.end = i + 1 < parts_.size() ? parts_[i + 1]->start : UINT64_MAX;
    p.window = std::make_unique<FrameWindow>(s.file, s.limit);
    p.walker = std::make_unique<Walker>(p.window.get(), s.generation,
                                        WalkState{p.start + kFrameHeaderSize, 0, 0, 0, false}, s.read_payloads);
    p.walker->add_boundary(s.boundary);
    try {
      p.thread = std::thread([this, i] { run(i); });
    } catch (const std::system_error&) {
      // The part before hands off at this one's checkpoint, and the main
      // walk goes on from there itself.
      parts_.resize(i);
      break;
    }
  }
  if (!parts_.empty()) next_ = parts_[0]->start;
}

SplitWalk::~SplitWalk() { stop_from(0); }

void SplitWalk::run(size_t i) {
  Part& p = *parts_[i];
  Walker& w = *p.walker;
  RecordView run[256];
  while (!p.stop.load(std::memory_order_relaxed)) {
    const uint64_t at = w.state().offset;
    if (const size_t n = w.take_data(run, std::size(run), at < boundary_ ? boundary_ : UINT64_MAX)) {
      if (on_frame_) on_frame_(i + 1, w, {run, n});
      continue;
    }
    if (w.step() != Stop::none) return;
    if (on_frame_) on_frame_(i + 1, w, {});
    if (at == p.end && w.frame().h.is_checkpoint()) {
      p.handed_off = true;
      return;
    }
  }
}

void SplitWalk::stop_from(size_t i) {
  for (size_t k = i; k < parts_.size(); k++) parts_[k]->stop.store(true, std::memory_order_relaxed);
  for (size_t k = i; k < parts_.size(); k++)
    if (parts_[k]->thread.joinable()) parts_[k]->thread.join();
}

bool SplitWalk::join_parts(Walker& walk, const std::function<bool(size_t part, uint64_t seq_base)>& accept) {
  const FrameInfo& f = walk.frame();
  bool took = false;
  size_t i = joined_;
  if (f.offset == next_ && f.h.is_checkpoint() && walk.state().offset == next_ + kFrameHeaderSize) {
    uint64_t base = walk.state().seq;
    while (i < parts_.size()) {
      Part& p = *parts_[i];
      p.thread.join();
      if (accept && !accept(i + 1, base)) break;
      walk.adopt(*p.walker, base);
      took = true;
      i++;
      if (!p.handed_off) break;
      base += p.walker->state().seq;
    }
  }
  // Whatever was not taken now never will be: the walk is past it.
  stop_from(i);
  joined_ = parts_.size();
  next_ = UINT64_MAX;
  return took;
}

}  // namespace alog::detail
