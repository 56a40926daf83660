// scan_rendered (alog/rendered_scan.h): the log cut into parts at
// checkpoints found ahead (find_checkpoint, as a split walk finds them),
// each part walked with payloads and rendered by a worker, the parts
// written in order by the calling thread, which also decides how far they
// hold: a part that does not begin at a known frame boundary counts only
// when the part before it stepped onto its checkpoint.
#include "alog/rendered_scan.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <span>
#include <system_error>
#include <thread>
#include <vector>

#include "log_impl.h"
#include "walk_split.h"

namespace alog {

using namespace detail;
using namespace format;

void RenderedBytes::grow(size_t n) {
  const size_t cap = std::max({cap_ * 2, size_ + n, size_t{64} << 10});
  std::unique_ptr<char[]> b(new char[cap]);
  if (size_) std::memcpy(b.get(), buf_.get(), size_);
  buf_ = std::move(b);
  cap_ = cap;
}

namespace {

constexpr size_t kWindow = 256 << 10;  // a worker's reads: in its core's cache when read back

// One part of a segment: its frames from `start` to `end`.
struct Part {
  SegmentPtr seg;
  uint64_t cuts = 0;       // seg->cuts() when planned
  uint64_t limit = 0;      // the segment's committed end when planned
  uint64_t seg_next = 0;   // and its next sequence
  WalkState start;         // known: the walk's state there; else a checkpoint's reset state
  bool known = false;      // start is a frame boundary for sure: the segment's read offset, or `from`
  uint64_t end = 0;        // limit, or just past the checkpoint where the next part begins
  // The worker's results.
  std::unique_ptr<RenderedBytes> out;
  uint64_t records = 0;
  bool complete = false;  // the walk reached `end`, onto the next part's checkpoint
  bool done = false;
  std::exception_ptr error;  // thrown by render
};

// Parts of every segment from the one holding `from`, at most `part_bytes`
// apart where a checkpoint is found (a segment with none found in a stretch
// keeps the stretch in one part).
std::vector<Part> plan(const LogImpl& log, uint64_t from, uint64_t part_bytes) {
  std::vector<Part> parts;
  const auto view = log.view();
  // The last segment is left to the Scanner, which reads it from its start
  // (a Scanner starting inside a segment walks the headers before), while a
  // walk in the background confirms its tail (the Scanner reads behind the
  // walk), and when damage ends the readable log there (a Scanner meets
  // that end differently reading up to it and starting at it).
  const bool last_to_scanner = log.tail_walk_running() || !log.damage().is_ok();
  const size_t whole = view->size() - (last_to_scanner && !view->empty());
  for (const SegmentPtr& seg : std::span(view->data(), whole)) {
    const Segment::Range r = seg->range();
    if (r.next <= from || r.next <= r.first) continue;
    if (seg->reaped()) break;
    Part p;
    p.seg = seg;
    p.cuts = seg->cuts();
    p.limit = r.end;
    p.seg_next = r.next;
    p.known = true;
    if (from <= r.first) {
      p.start = WalkState{r.read_offset, r.first, r.read_crc, r.read_pending, false};
    } else {
      auto l = seg->locate(from);
      if (!l.is_ok()) break;  // the Scanner reports it
      p.start = l->before;
    }
    uint64_t search = p.start.offset + part_bytes;
    while (search + part_bytes / 2 < r.end) {  // the last part is at least half a part
      auto cp = find_checkpoint(seg->file(), seg->generation(), search,
                                std::min(r.end - kFrameHeaderSize, search + part_bytes));
      if (!cp) {
        search += part_bytes;
        continue;
      }
      p.end = *cp + kFrameHeaderSize;
      Part next;
      next.seg = seg;
      next.cuts = p.cuts;
      next.limit = p.limit;
      next.seg_next = p.seg_next;
      next.start = WalkState{p.end, 0, 0, 0, false};
      parts.push_back(std::move(p));
      p = std::move(next);
      search = p.start.offset + part_bytes;
    }
    p.end = r.end;
    parts.push_back(std::move(p));
  }
  return parts;
}

// What a worker keeps from part to part: the window on the segment it read
// last, and room for the records of a window.
struct Reader {
  const Segment* seg = nullptr;
  std::unique_ptr<FrameWindow> win;
  std::vector<RecordView> records = std::vector<RecordView>(4096);
  std::vector<std::string_view> payloads;
};

// Reads one part as a Scanner reads (take_records) and renders its records,
// up to the first frame a Scanner would not return as a plain record. The
// part is complete when the reading reaches its end: the segment's, or the
// checkpoint where the next part begins.
void read_part(Part& p, Reader& rd, const RenderedScanOptions& o) {
  if (rd.seg != p.seg.get() || rd.win->limit() != p.limit) {
    rd.win = std::make_unique<FrameWindow>(&p.seg->file(), p.limit, kWindow);
    rd.seg = p.seg.get();
  }
  FrameWindow& w = *rd.win;
  RenderedBytes& out = *p.out;
  out.clear();
  const uint16_t gen = p.seg->generation();
  const uint64_t stop = p.end == p.limit ? p.end : p.end - kFrameHeaderSize;
  uint64_t off = p.start.offset, records = 0;
  bool lost = false;
  while (off < stop && !lost) {
    const size_t n = take_records(w, gen, stop, off, 0, rd.records.data(), rd.records.size());
    rd.payloads.clear();
    for (size_t k = 0; k < n && !(lost = rd.records[k].lost); k++) rd.payloads.push_back(rd.records[k].payload);
    if (!rd.payloads.empty()) o.render(rd.payloads, out);
    records += rd.payloads.size();
    if (n || lost) continue;
    // What stopped the run: a frame not wholly in the window (read it, and
    // go on), or one a Scanner would not take here (the part ends there).
    auto in_window = [&] {
      if (!w.holds(off, kFrameHeaderSize)) return false;
      const FrameHeader h = decode_frame_header(w.at(off));
      return !h.is_data() || w.holds(off, kFrameHeaderSize + uint64_t{h.word});
    };
    if (in_window() || !w.ensure(off, kFrameHeaderSize)) break;
    const FrameHeader h = decode_frame_header(w.at(off));
    if (h.is_data() && !w.ensure(off, kFrameHeaderSize + uint64_t{h.word})) break;
  }
  bool complete = !lost && off == stop;
  if (complete && stop != p.end)  // the next part's checkpoint, as find_checkpoint found it
    complete = w.ensure(stop, kFrameHeaderSize) && decode_frame_header(w.at(stop)).is_checkpoint();
  // A recycle or a cut while the part was read (a Scanner checks after
  // its reads too): none of it counts, the Scanner reports it.
  if (p.seg->reaped() || p.seg->cuts() != p.cuts) {
    records = 0;
    complete = false;
    out.clear();
  }
  p.records = records;
  p.complete = complete;
}

// The parts read by the calling thread and n - 1 helpers, each taking the
// next part not yet taken while at most 2n parts are read and not yet
// written; the calling thread also writes them out in order.
class Run {
 public:
  Run(std::vector<Part> parts, const RenderedScanOptions& o) : parts_(std::move(parts)), o_(o) {}
  ~Run() {
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  Result<uint64_t> go(uint64_t from) {
    size_t n = o_.threads ? o_.threads : std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
    n = std::min(n, parts_.size());
    ahead_ = 2 * std::max<size_t>(n, 1);
    for (size_t k = 1; k < n; k++) {
      try {
        threads_.emplace_back([this] { help(); });
      } catch (const std::system_error&) {
        break;  // fewer helpers; with none, the calling thread reads them all
      }
    }
    uint64_t pos = from;
    bool any = false, prev_complete = false;
    for (size_t i = 0; i < parts_.size(); i++) {
      Part& p = parts_[i];
      read_until_done(p);
      if (p.error) std::rethrow_exception(p.error);
      if (p.known ? (any ? p.start.seq != pos : p.start.seq < pos) : !prev_complete) break;
      if (p.known) pos = p.start.seq;
      if (pos + p.records > p.seg_next) break;  // more frames than the segment's records: damage
      any = true;
      if (p.records) {
        Status st = o_.write(p.out->view(), pos, p.records);
        if (!st.is_ok()) return st;
        pos += p.records;
      }
      give_back(std::move(p.out));
      if (!p.complete || (p.end == p.limit && pos != p.seg_next)) break;
      prev_complete = true;
    }
    return pos;
  }

 private:
  // The calling thread reads parts itself until p is read (by it or by a
  // helper): it only sleeps when there is none it may take.
  void read_until_done(const Part& p) {
    std::unique_lock<std::mutex> lk(mu_);
    while (!p.done)
      if (!take_and_read(lk, own_)) cv_.wait(lk, [&] { return p.done; });
  }
  void help() {
    Reader rd;
    std::unique_lock<std::mutex> lk(mu_);
    while (true) {
      cv_.wait(lk, [&] { return stop_ || next_ >= parts_.size() || next_ < delivered_ + ahead_; });
      if (stop_ || next_ >= parts_.size()) return;
      take_and_read(lk, rd);
    }
  }
  // Takes the next part, when the look-ahead allows, and reads it (lk is
  // released meanwhile): false when there is none to take.
  bool take_and_read(std::unique_lock<std::mutex>& lk, Reader& rd) {
    if (stop_ || next_ >= parts_.size() || next_ >= delivered_ + ahead_) return false;
    Part& p = parts_[next_++];
    p.out = take_buffer_locked();
    lk.unlock();
    try {
      read_part(p, rd, o_);
    } catch (...) {
      p.error = std::current_exception();
    }
    lk.lock();
    p.done = true;
    cv_.notify_all();
    return true;
  }
  std::unique_ptr<RenderedBytes> take_buffer_locked() {
    if (free_.empty()) return std::make_unique<RenderedBytes>();
    auto b = std::move(free_.back());
    free_.pop_back();
    return b;
  }
  // A delivered part's buffer, for a later part (so the buffers' pages are
  // touched once, not once per part).
  void give_back(std::unique_ptr<RenderedBytes> b) {
    {
      std::lock_guard<std::mutex> g(mu_);
      free_.push_back(std::move(b));
      delivered_++;
    }
    cv_.notify_all();
  }

  std::vector<Part> parts_;
  const RenderedScanOptions& o_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::thread> threads_;
  std::vector<std::unique_ptr<RenderedBytes>> free_;
  Reader own_;  // the calling thread's
  size_t next_ = 0, delivered_ = 0, ahead_ = 0;
  bool stop_ = false;
};

}  // namespace

Result<uint64_t> scan_rendered(const Log& log, uint64_t from, const RenderedScanOptions& o) {
  const LogImpl& impl = log.impl();
  Run run(plan(impl, from, std::max<uint64_t>(o.part_bytes, kFrameHeaderSize)), o);
  return run.go(from);
}

}  // namespace alog
