// Cutting a rendered scan into parts and reading one (rendered_parts.h).
#include "rendered_parts.h"

#include <algorithm>

#include "alog/crc32c.h"
#include "walk_split.h"

namespace alog::detail {

using namespace format;

namespace {

constexpr size_t kWindow = 256 << 10;  // a worker's reads: in its core's cache when read back

// Adds `first` and the parts after it to first.limit, part_bytes apart.
void cut(Part first, uint64_t part_bytes, std::vector<Part>& parts) {
  Part p = std::move(first);
  for (uint64_t at = p.start.offset + part_bytes; at + part_bytes / 2 < p.limit; at += part_bytes) {
    Part next;
    next.seg = p.seg;
    next.cuts = p.cuts;
    next.limit = p.limit;
    next.seg_next = p.seg_next;
    next.tail = p.tail;
    next.sealed = p.sealed;
    next.search = at;
    p.until = at;
    parts.push_back(std::move(p));
    p = std::move(next);
  }
  p.until = p.limit;
  parts.push_back(std::move(p));
}

// Whether the frame at off lies whole in w (its header; a data frame's payload too).
bool in_window(const FrameWindow& w, uint64_t off) {
  if (!w.holds(off, kFrameHeaderSize)) return false;
  const FrameHeader h = decode_frame_header(w.at(off));
  return !h.is_data() || w.holds(off, kFrameHeaderSize + uint64_t{h.word});
}

// Whether the EOF at a sealed segment's EOF position `at` is sound on its
// own, as a Scanner checks it when it passes (a read error: not, for the
// Scanner to report).
bool sealed_eof_sound(const Segment& seg, uint64_t at) {
  uint8_t b[kFrameHeaderSize];
  auto got = seg.file().pread(b, sizeof b, at);
  return got.is_ok() && *got == sizeof b && get16(b + 10) == (kFlagCheckpoint | kFlagEof) &&
         checkpoint_sound(b, seg.generation());
}

// A part of confirmed records, read as a Scanner reads them (take_records),
// up to the first frame a Scanner would not return as a plain record.
void read_confirmed(Part& p, Reader& rd, FrameWindow& w, const RenderedScanOptions& o) {
  RenderedBytes& out = *p.out;
  const uint16_t gen = p.seg->generation();
  uint64_t off = p.start.offset, resume = off, records = 0;
  bool lost = false;
  while (off < p.limit && !lost) {
    const uint64_t at = off;
    const size_t n = take_records(w, gen, p.limit, off, 0, rd.records.data(), rd.records.size(), p.until);
    rd.payloads.clear();
    for (size_t k = 0; k < n && !(lost = rd.records[k].lost); k++) rd.payloads.push_back(rd.records[k].payload);
    if (!rd.payloads.empty()) {
      o.render(rd.payloads, out);
      p.last_crc = crc32c(rd.payloads.back().data(), rd.payloads.back().size());
    }
    records += rd.payloads.size();
    resume = off;
    if (lost) {  // the lost record's frame
      const auto* h = reinterpret_cast<const uint8_t*>(rd.records[rd.payloads.size()].payload.data()) - kFrameHeaderSize;
      resume = at + uint64_t(h - w.at(at));
    }
    if (n || lost) continue;
    // What stopped the run: a frame not wholly in the window (read it, and
    // go on), the checkpoint that ends the part, or a frame a Scanner would
    // not take here (the part ends there).
    if (in_window(w, off)) {
      if (decode_frame_header(w.at(off)).is_checkpoint() && checkpoint_sound(w.at(off), gen)) {
        p.complete = true;
        p.end = off + kFrameHeaderSize;
      }
      break;
    }
    if (!w.ensure(off, kFrameHeaderSize)) break;
    const FrameHeader h = decode_frame_header(w.at(off));
    if (h.is_data() && !w.ensure(off, kFrameHeaderSize + uint64_t{h.word})) break;
  }
  // A sealed segment's end counts only with its EOF sound (else the
  // Scanner going on from here meets it, and reports it).
  if (off >= p.limit && !lost && (!p.sealed || sealed_eof_sound(*p.seg, p.limit))) {
    p.complete = true;
    p.end = p.limit;
  }
  p.records = records;
  p.rendered_all = !lost;
  p.resume = p.complete ? p.end : resume;
}

// A part of the unsynced tail, read by a walk; its records are rendered as
// their batches are confirmed (what follows the last batch boundary before
// a stop is not the log's). A lost record ends the rendering, not the walk.
void read_tail(Part& p, Reader& rd, FrameWindow& w, const RenderedScanOptions& o) {
  RenderedBytes& out = *p.out;
  p.walker = std::make_unique<Walker>(&w, p.seg->generation(), p.start, /*read_payloads=*/true);
  Walker& walk = *p.walker;
  rd.payloads.clear();
  uint32_t taken_crc = 0;  // of the last payload rendered
  auto render = [&] {
    if (rd.payloads.empty()) return;
    o.render(rd.payloads, out);
    taken_crc = crc32c(rd.payloads.back().data(), rd.payloads.back().size());
    rd.payloads.clear();
  };
  uint64_t taken = 0, confirmed = 0;
  uint64_t taken_to = p.start.offset, confirmed_to = taken_to;  // where the records taken end
  size_t confirmed_bytes = 0;
  bool taking = true;
  auto confirm = [&] {
    render();
    confirmed = taken;
    confirmed_to = taken_to;
    confirmed_bytes = out.view().size();
    p.last_crc = taken_crc;
  };
  auto take = [&](size_t from, size_t to) {
    for (size_t k = from; k < to; k++) rd.payloads.push_back(rd.records[k].payload);
    taken += to - from;
  };
  while (true) {
    // Runs of plain data frames at once; the walk's own step for the rest.
    const uint64_t first = walk.state().seq, was = walk.boundary().offset;
    if (const size_t n = walk.take_data(rd.records.data(), rd.records.size()); n > 0) {
      // Those up to the run's last batch boundary are confirmed there.
      const size_t upto = walk.boundary().offset != was ? size_t(walk.boundary().seq - first) : 0;
      if (upto > 0) {
        if (taking) {
          take(0, upto);
          taken_to = walk.boundary().offset;
        }
        confirm();
      }
      if (taking) {
        take(upto, n);
        taken_to = walk.state().offset;
      }
      continue;
    }
    if (!in_window(w, walk.state().offset)) render();  // before the step reads another window over the payloads
    p.stop = walk.step();
    if (p.stop != Stop::none) break;
    const FrameInfo& f = walk.frame();
    if (taking && f.h.is_data()) {
      taking = !f.h.is_lost();
      if (taking) {
        rd.payloads.emplace_back(reinterpret_cast<const char*>(f.payload), f.h.word);
        taken++;
      }
    }
    if (taking) taken_to = walk.state().offset;
    if (walk.boundary().offset == walk.state().offset) confirm();
    if (f.h.is_checkpoint() && f.offset >= p.until) {  // the next part begins here
      p.complete = true;
      p.end = walk.state().offset;
      break;
    }
  }
  render();
  out.truncate(confirmed_bytes);
  p.records = confirmed;
  p.rendered_all = taking;
  p.resume = confirmed_to;
}

}  // namespace

bool plan_confirmed(const SegmentPtr& seg, bool sealed, uint64_t from, uint64_t part_bytes,
                    std::vector<Part>& parts) {
  const Segment::Range r = seg->range();
  if (seg->reaped()) return false;
  Part p;
  p.seg = seg;
  p.cuts = seg->cuts();
  p.limit = r.end;
  p.seg_next = r.next;
  p.known = true;
  p.sealed = sealed;
  if (from <= r.first) {
    p.start = WalkState{r.read_offset, r.first, r.read_crc, r.read_pending, false};
  } else {
    auto l = seg->locate(from);
    if (!l.is_ok()) return false;
    p.start = l->before;
  }
  cut(std::move(p), part_bytes, parts);
  return true;
}

void plan_tail(const SegmentPtr& seg, const WalkState& at, uint64_t part_bytes, std::vector<Part>& parts) {
  Part p;
  p.seg = seg;
  p.cuts = seg->cuts();
  p.limit = seg->file_length();
  p.known = p.tail = true;
  p.start = at;
  cut(std::move(p), part_bytes, parts);
}

void read_part(Part& p, Reader& rd, const RenderedScanOptions& o) {
  if (rd.seg != p.seg.get() || rd.win->limit() != p.limit) {
    rd.win = std::make_unique<FrameWindow>(&p.seg->file(), p.limit, kWindow);
    rd.seg = p.seg.get();
  }
  p.out->clear();
  if (!p.known) {
    const uint64_t to = std::min(p.until, p.limit - std::min(p.limit, uint64_t{kFrameHeaderSize}));
    auto cp = find_checkpoint(p.seg->file(), p.seg->generation(), p.search, to);
    p.empty = !cp;
    if (p.empty) return;
    p.start = WalkState{*cp + kFrameHeaderSize, 0, 0, 0, false};
  }
  if (p.tail) read_tail(p, rd, *rd.win, o);
  else read_confirmed(p, rd, *rd.win, o);
  // A recycle or a cut while the part was read (a Scanner checks after its
  // reads too): none of it counts, the Scanner reports it.
  if (p.seg->reaped() || p.seg->cuts() != p.cuts) {
    p.records = 0;
    p.complete = p.rendered_all = false;
    p.resume = p.start.offset;
    p.out->clear();
  }
}

}  // namespace alog::detail
