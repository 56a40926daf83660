// Cutting a rendered scan into parts and reading one (rendered_parts.h).
#include "rendered_parts.h"

#include <algorithm>

#include "walk_split.h"

namespace alog::detail {

using namespace format;

namespace {

constexpr size_t kWindow = 256 << 10;  // a worker's reads: in its core's cache when read back

// Adds `first` and the parts after it up to first.end, each starting just
// past a checkpoint found about part_bytes after the one before (none found
// in a stretch: the stretch stays in the part).
void cut_at_checkpoints(Part first, uint64_t part_bytes, std::vector<Part>& parts) {
  Part p = std::move(first);
  const uint64_t end = p.end;
  uint64_t search = p.start.offset + part_bytes;
  while (search + part_bytes / 2 < end) {  // the last part is at least half a part
    auto cp = find_checkpoint(p.seg->file(), p.seg->generation(), search,
                              std::min(end - kFrameHeaderSize, search + part_bytes));
    if (!cp) {
      search += part_bytes;
      continue;
    }
    Part next;
    next.seg = p.seg;
    next.cuts = p.cuts;
    next.limit = p.limit;
    next.seg_next = p.seg_next;
    next.tail = p.tail;
    next.start = WalkState{*cp + kFrameHeaderSize, 0, 0, 0, false};
    next.end = end;
    p.end = next.start.offset;
    parts.push_back(std::move(p));
    p = std::move(next);
    search = p.start.offset + part_bytes;
  }
  parts.push_back(std::move(p));
}

// Whether the frame at off lies whole in w (its header; a data frame's payload too).
bool in_window(const FrameWindow& w, uint64_t off) {
  if (!w.holds(off, kFrameHeaderSize)) return false;
  const FrameHeader h = decode_frame_header(w.at(off));
  return !h.is_data() || w.holds(off, kFrameHeaderSize + uint64_t{h.word});
}

// A part of confirmed records, read as a Scanner reads them (take_records),
// up to the first frame a Scanner would not return as a plain record.
void read_confirmed(Part& p, Reader& rd, FrameWindow& w, const RenderedScanOptions& o) {
  RenderedBytes& out = *p.out;
  const uint16_t gen = p.seg->generation();
  const uint64_t stop = p.end == p.limit ? p.end : p.end - kFrameHeaderSize;
  uint64_t off = p.start.offset, records = 0;
  bool lost = false;
  uint64_t resume = off;
  while (off < stop && !lost) {
    const uint64_t at = off;
    const size_t n = take_records(w, gen, stop, off, 0, rd.records.data(), rd.records.size());
    rd.payloads.clear();
    for (size_t k = 0; k < n && !(lost = rd.records[k].lost); k++) rd.payloads.push_back(rd.records[k].payload);
    if (!rd.payloads.empty()) o.render(rd.payloads, out);
    records += rd.payloads.size();
    resume = off;
    if (lost) {  // the lost record's frame
      const auto* h = reinterpret_cast<const uint8_t*>(rd.records[rd.payloads.size()].payload.data()) - kFrameHeaderSize;
      resume = at + uint64_t(h - w.at(at));
    }
    if (n || lost) continue;
    // What stopped the run: a frame not wholly in the window (read it, and
    // go on), or one a Scanner would not take here (the part ends there).
    if (in_window(w, off) || !w.ensure(off, kFrameHeaderSize)) break;
    const FrameHeader h = decode_frame_header(w.at(off));
    if (h.is_data() && !w.ensure(off, kFrameHeaderSize + uint64_t{h.word})) break;
  }
  p.records = records;
  p.rendered_all = !lost;
  p.complete = !lost && off == stop;
  if (p.complete && stop != p.end)  // the next part's checkpoint, as find_checkpoint found it
    p.complete = w.ensure(stop, kFrameHeaderSize) && decode_frame_header(w.at(stop)).is_checkpoint();
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
  auto render = [&] {
    if (rd.payloads.empty()) return;
    o.render(rd.payloads, out);
    rd.payloads.clear();
  };
  uint64_t taken = 0, confirmed = 0;
  uint64_t taken_to = p.start.offset, confirmed_to = taken_to;  // where the records taken end
  size_t confirmed_bytes = 0;
  bool taking = true;
  while (true) {
    const uint64_t off = walk.state().offset;
    if (off >= p.end) {
      const FrameInfo& f = walk.frame();
      p.complete = off == p.end && (p.end == p.limit ||
                                    (f.offset + kFrameHeaderSize == p.end && f.h.is_checkpoint()));
      break;
    }
    if (!in_window(w, off)) render();  // before the step reads another window over the payloads
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
    if (walk.boundary().offset == walk.state().offset) {
      render();
      confirmed = taken;
      confirmed_to = taken_to;
      confirmed_bytes = out.view().size();
    }
  }
  render();
  out.truncate(confirmed_bytes);
  p.records = confirmed;
  p.rendered_all = taking;
  p.resume = confirmed_to;
}

}  // namespace

bool plan_confirmed(const SegmentPtr& seg, uint64_t from, uint64_t part_bytes, std::vector<Part>& parts) {
  const Segment::Range r = seg->range();
  if (seg->reaped()) return false;
  Part p;
  p.seg = seg;
  p.cuts = seg->cuts();
  p.limit = p.end = r.end;
  p.seg_next = r.next;
  p.known = true;
  if (from <= r.first) {
    p.start = WalkState{r.read_offset, r.first, r.read_crc, r.read_pending, false};
  } else {
    auto l = seg->locate(from);
    if (!l.is_ok()) return false;
    p.start = l->before;
  }
  cut_at_checkpoints(std::move(p), part_bytes, parts);
  return true;
}

void plan_tail(const SegmentPtr& seg, const WalkState& at, uint64_t part_bytes, std::vector<Part>& parts) {
  Part p;
  p.seg = seg;
  p.cuts = seg->cuts();
  p.limit = p.end = seg->file_length();
  p.known = p.tail = true;
  p.start = at;
  cut_at_checkpoints(std::move(p), part_bytes, parts);
}

void read_part(Part& p, Reader& rd, const RenderedScanOptions& o) {
  if (rd.seg != p.seg.get() || rd.win->limit() != p.limit) {
    rd.win = std::make_unique<FrameWindow>(&p.seg->file(), p.limit, kWindow);
    rd.seg = p.seg.get();
  }
  p.out->clear();
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
