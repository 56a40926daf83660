// scan_rendered (alog/rendered_scan.h): the parts (rendered_parts.h) read by
// the calling thread and helpers, written in order by the calling thread,
// which also decides how far they hold: a part that does not begin at a
// known frame boundary counts only when the part before it ended exactly on
// its checkpoint. A background walk of the active segment's tail still
// going on is stopped and its rest read in parts too, each part's walk
// taken over by the log's own walk in order (Walker::adopt, as a split walk
// joins its parts), which then concludes the tail as the background walk
// would have.
#include "alog/rendered_scan.h"

#include <sys/mman.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <new>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <vector>

#include "log_impl.h"
#include "rendered_parts.h"

namespace alog {

using namespace detail;
using namespace format;

void RenderedBytes::grow(size_t n) {
  // In 2 MiB steps, each a transparent huge page where the kernel gives them
  // when asked (madvise): a part's bytes fault in once, not in 512 pages.
  constexpr size_t kHuge = size_t{2} << 20;
  const size_t cap = (std::max(cap_ * 2, size_ + n) + kHuge - 1) / kHuge * kHuge;
  std::unique_ptr<char, Free> b(static_cast<char*>(std::aligned_alloc(kHuge, cap)));
  if (!b) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  (void)madvise(b.get(), cap, MADV_HUGEPAGE);  // a hint: without it, small pages
#endif
  if (size_) std::memcpy(b.get(), buf_.get(), size_);
  buf_ = std::move(b);
  cap_ = cap;
}

namespace {

// The log's walk of the active segment's tail, taken over from a background
// walk: it adopts the tail parts' walks in order, walks on itself where they
// do not join, and concludes the tail in any case (also when the scan ends
// early: an error, an exception).
class TailTakeover {
 public:
  TailTakeover(LogImpl& log, SegmentPtr seg, const WalkState& at)
      : log_(log), seg_(std::move(seg)), win_(&seg_->file(), seg_->file_length()),
        walk_(&win_, seg_->generation(), at, /*read_payloads=*/true) {}
  // An error of the walk is the log's damage() (conclude_tail_walk).
  ~TailTakeover() { (void)conclude(); }
  // Stands where the tail part p's walk stands: p begins at the walk's
  // state (the first part), or just past the checkpoint the walk stepped
  // onto as the part before ended (Run::go adopts no other).
  void adopt(const Part& p) { walk_.adopt(*p.walker, p.known ? 0 : walk_.state().seq); }
  uint64_t sequence() const { return walk_.state().seq; }
  // Walks on from where the walk stands (an adopted stop is met again) and
  // sets the log's tail as a read-only open's walk does.
  Status conclude() {
    if (concluded_) return status_;
    concluded_ = true;
    const Stop s = walk_.run();
    status_ = log_.conclude_tail_walk(seg_, s, walk_, win_.error());
    return status_;
  }

 private:
  LogImpl& log_;
  SegmentPtr seg_;
  FrameWindow win_;
  Walker walk_;
  bool concluded_ = false;
  Status status_;
};

// The parts read by the calling thread and n - 1 helpers, each taking the
// next part not yet taken while at most 2n are read and not yet written.
class Run {
 public:
  Run(std::vector<Part> parts, const RenderedScanOptions& o, TailTakeover* tail)
      : parts_(std::move(parts)), o_(o), tail_(tail) {}
  ~Run() {
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  // Where the Scanner goes on: the frame after the last record written, in
  // its segment (none written: none).
  struct Resume {
    SegmentPtr seg;
    uint64_t offset = 0, cuts = 0;
  };

  Result<uint64_t> go(uint64_t from, Resume& resume) {
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
    bool any = false, writing = true;
    const Part* prev = nullptr;  // the last part read that was not empty
    for (size_t i = 0; i < parts_.size() && (writing || tail_); i++) {
      Part& p = parts_[i];
      read_until_done(p);
      if (p.error) std::rethrow_exception(p.error);
      if (p.empty) {
        give_back(std::move(p.out));
        continue;
      }
      // A part counts when it begins at a known frame, or where the part
      // before it ended, on its checkpoint.
      const bool joins = p.known || (prev && prev->complete && prev->seg == p.seg && prev->end == p.start.offset);
      const uint64_t first = p.known ? p.start.seq : p.tail ? tail_->sequence() : pos;
      if (p.tail) {
        if (!joins) break;  // the log's walk goes on from where it stands itself
        tail_->adopt(p);
      }
      if (!joins || (p.known && (any ? first != pos : first < pos))) writing = false;
      if (!p.tail && first + p.records > p.seg_next) writing = false;  // more frames than records: damage
      if (writing) {
        any = true;
        pos = first;
        if (p.records) {
          Status st = o_.write(p.out->view(), pos, p.records, p.last_crc);
          if (!st.is_ok()) return st;
          pos += p.records;
        }
        resume = {p.seg, p.resume, p.cuts};
        writing = p.rendered_all && p.complete && (p.tail || p.end != p.limit || pos == p.seg_next);
      }
      give_back(std::move(p.out));
      prev = &p;
      if (p.tail && !p.complete) break;  // its walk stopped: the log's walk concludes from there
    }
    // Its error is the log's damage(), which the Scanner meets where the records end.
    if (tail_) (void)tail_->conclude();
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
  // A written part's buffer, for a later part (its pages are touched once,
  // not once per part).
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
  TailTakeover* tail_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::thread> threads_;
  std::vector<std::unique_ptr<RenderedBytes>> free_;
  Reader own_;  // the calling thread's
  size_t next_ = 0, delivered_ = 0, ahead_ = 0;
  bool stop_ = false;
};

}  // namespace

Result<std::unique_ptr<Scanner>> scan_rendered(const Log& log, uint64_t from, const RenderedScanOptions& o) {
  // The tail's walk is the log's own state, which a background walk changes
  // behind a const Log too.
  LogImpl& impl = const_cast<LogImpl&>(log.impl());
  const uint64_t part_bytes = std::max<uint64_t>(o.part_bytes, kFrameHeaderSize);
  const auto view = impl.view();
  std::optional<TailTakeover> tail;
  std::vector<Part> parts;
  std::optional<WalkState> at = view->empty() ? std::nullopt : impl.take_over_tail_walk();
  if (at) {
    tail.emplace(impl, view->back(), *at);
    if (from > at->seq) {  // records from `from` inside the tail: found by a walk in order
      (void)tail->conclude();  // an error is the log's damage()
      at.reset();
    }
  }
  for (const SegmentPtr& seg : *view) {
    const Segment::Range r = seg->range();
    if (r.next <= from || r.next <= r.first) continue;
    if (!plan_confirmed(seg, seg != view->back(), from, part_bytes, parts)) break;
  }
  if (at) plan_tail(view->back(), *at, part_bytes, parts);
  Run::Resume resume;
  uint64_t pos;
  {
    Run run(std::move(parts), o, tail ? &*tail : nullptr);
    ALOG_ASSIGN(pos, run.go(from, resume));
  }
  tail.reset();  // concluded (go() does it; an error or exception above: here)
  if (!resume.seg) return log.scan(from);
  return impl.scan_at(pos, resume.seg, resume.offset, resume.cuts);
}

}  // namespace alog
