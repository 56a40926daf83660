// LogImpl: opening (segment discovery, header checks), accessors and close;
// the public Log forwards to it (log_api.cc).
#include <algorithm>
#include <chrono>
#include <cstring>

#include "alog/scanner.h"
#include "file_cache.h"
#include "log_impl.h"
#include "lost_found.h"

namespace alog {

using namespace detail;
using namespace format;

namespace {

// A read-only open walks an unsynced tail longer than this in the background
// when asked to (Options::walk_tail_in_background); shorter ones inline.
constexpr uint64_t kBackgroundTail = 4 * kMiB;

Status corrupt(const std::string& path, std::optional<uint64_t> off, const std::string& what) {
  Status st(Errc::corrupt, off ? path + ":" + std::to_string(*off) + ": " + what : path + ": " + what);
  st.at(path, off);
  return st;
}

}  // namespace

// ---- LogImpl: opening ----

LogImpl::LogImpl(std::string dir, const Options& opt, bool writable)
    : dir_(std::move(dir)), opt_(opt), fs_(opt.fs ? opt.fs : &posix_fs()), writable_(writable) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  set_view({});
}

LogImpl::~LogImpl() { (void)close(); }

uint64_t LogImpl::now_ms() const {
  if (opt_.clock_ms) return opt_.clock_ms();
  using namespace std::chrono;
  return static_cast<uint64_t>(
      duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count());
}

Status LogImpl::check_options() const {
  auto bad = [&](const std::string& w) { return Status(Errc::invalid_argument, w).at(dir_); };
  if (opt_.checkpoint_stride < 1 || opt_.checkpoint_stride > kMaxPending)
    return bad("checkpoint stride must be 1..65535, not " + std::to_string(opt_.checkpoint_stride));
  // One empty record: header, a 16-byte data frame, a checkpoint when the stride is 1, the EOF.
  uint64_t min_size = kHeaderSize + kFrameHeaderSize + (opt_.checkpoint_stride == 1 ? 16 : 0) +
                      kFrameHeaderSize;
  if (opt_.max_segment_size < min_size)
    return bad("max segment size " + std::to_string(opt_.max_segment_size) +
               " is too small for one empty record (" + std::to_string(min_size) + " bytes)");
  if (opt_.max_payload_size > UINT32_MAX)
    return bad("max payload size must be at most 4294967295");
  if (opt_.max_disk_size != 0 && opt_.max_disk_size < kEmptySegmentSize)
    return bad("max disk size " + std::to_string(opt_.max_disk_size) +
               " is smaller than one empty segment (208 bytes)");
  return {};
}

void LogImpl::set_view(SegmentList segs) {
  auto v = std::make_shared<const SegmentList>(std::move(segs));
  std::lock_guard<std::mutex> g(view_mu_);
  view_ = std::move(v);
}

std::shared_ptr<const SegmentList> LogImpl::view() const {
  std::lock_guard<std::mutex> g(view_mu_);
  return view_;
}

uint64_t LogImpl::first_sequence() const {
  auto v = view();
  return v->empty() ? opt_.start_sequence : v->front()->range().first;
}

uint64_t LogImpl::next_sequence() const {
  auto v = view();
  return v->empty() ? opt_.start_sequence : v->back()->range().next;
}

uint64_t LogImpl::disk_size() const {
  auto v = view();
  uint64_t n = 0;
  for (const auto& s : *v) n += s->file_length();
  return n;
}

Result<std::unique_ptr<LogImpl>> LogImpl::load_reader(const std::string& dir, const Options& opt,
                                                       const std::function<void(LogImpl&)>& prime) {
  constexpr int kAttempts = 64;
  for (int attempt = 1;; attempt++) {
    auto impl = std::make_unique<LogImpl>(dir, opt, /*writable=*/false);
    if (prime) prime(*impl);
    Status st = impl->load();
    if (st.is_ok()) return impl;
    const bool raced = st.code() == Errc::not_found && !st.path().empty() && st.path() != impl->dir_;
    if (!raced || attempt == kAttempts) return st;
  }
}

Status LogImpl::load() {
  if (writable_) ALOG_TRY(check_options());
  Status st = load_segments(writable_);
  // A failed open changes nothing more: closing must not write a slot for
  // a tail it never recovered.
  if (!st.is_ok()) failed_ = true;
  return st;
}

namespace {

// Finishes a truncation a crash interrupted between its two slot writes:
// the winner's fields go into the losing slot too (the file synced first, as
// truncations do), so no valid slot is left behind.
Status finish_slots(Segment& seg) {
  ALOG_TRY(seg.file().datasync());
  ALOG_TRY(seg.write_slot(seg.slot()));
  return seg.file().datasync();
}

}  // namespace

Status LogImpl::open_segment(const std::string& name, SegmentPtr* out, Status* damage) {
  std::string path = path_join(dir_, name);
  const OpenMode mode = writable_ ? OpenMode::read_write : OpenMode::read;
  ALOG_ASSIGN(auto f, open_shedding(*fs_, path, mode));
  uint8_t hdr[kHeaderSize];
  ALOG_ASSIGN(size_t got, f->pread(hdr, kHeaderSize, 0));
  std::shared_ptr<File> file = cache_segment_file(*fs_, path, mode, std::move(f), hdr, got);
  ALOG_ASSIGN(uint64_t len, file->size());
  if (got < kHeaderSize) {
    *damage = corrupt(path, 0, "segment header: file has " + std::to_string(len) +
                                   " bytes, less than the 192-byte header");
    return {};
  }
  SegmentHeader h;
  HeaderError he = decode_segment_header(hdr, &h);
  if (he != HeaderError::none) {
    *damage = corrupt(path, 0, std::string("segment header: ") + header_error_text(he));
    if (he == HeaderError::bad_magic && len > 0) damage->joined(Errc::not_a_log);
    return {};
  }
  SlotChoice c = choose_slot(hdr, h.start_sequence);
  if (c.winner < 0) {
    *damage = corrupt(path, 0, "metadata slots: " + c.error);
    return {};
  }
  const Slot& s = c.slot[c.winner];
  // A truncation that a crash cut between its two slot writes leaves the
  // losing slot behind (an older first sequence or read offset, a synced
  // offset past the cut): were the winner damaged, it would bring back what
  // the truncation removed. A write open finishes it (below).
  const Slot& l = c.slot[1 - c.winner];
  if (writable_ && c.state[1 - c.winner] == SlotState::valid &&
      (l.first_sequence < s.first_sequence || l.read_offset < s.read_offset || l.synced_offset > s.synced_offset))
    slot_behind_.push_back(name);
  if (s.synced_offset > len) {
    *damage = corrupt(path, s.synced_offset,
                      "synced offset " + std::to_string(s.synced_offset) +
                          " lies beyond the end of the file (" + std::to_string(len) +
                          " bytes): synced data is missing");
    // A reader still reads what is there: the records before the damage.
    if (writable_) return {};
  }
  auto seg = std::make_shared<Segment>(dir_, name, std::move(file), h, hdr);
  seg->set_slots(c.slot, c.winner);
  seg->set_file_length(len);
  // Until the walk says otherwise, the committed range ends at the synced offset.
  seg->set_range({s.read_offset, s.first_sequence, s.read_crc, s.read_pending, s.synced_offset,
                  s.synced_sequence});
  *out = std::move(seg);
  return {};
}

Status LogImpl::load_segments(bool writer) {
  ALOG_ASSIGN(FileStat st, fs_->stat(dir_));
  auto slash = dir_.find_last_of('/');
  const std::string parent = slash == std::string::npos ? "." : slash == 0 ? "/" : dir_.substr(0, slash);
  const bool made_dir = !st.exists;
  if (!st.exists) {
    if (!writer) return Status(Errc::not_found, dir_ + ": no such log directory").at(dir_);
    ALOG_TRY(fs_->mkdir(dir_));
    ALOG_TRY(fs_->sync_dir(parent));
  } else if (!st.is_dir) {
    return Status(Errc::not_a_log, dir_ + ": not a directory").at(dir_);
  }
  // From here on, every name is reached through the directory opened now
  // (a new one before anything is created in it).
  ALOG_ASSIGN(anchor_, fs_->anchor(dir_));
  auto is_other = [](const std::string& n) {
    return !parse_segment_name(n) && !n.ends_with(kTmpSuffix) && !n.ends_with(kDelSuffix) &&
           n != kLockName && n != kOptionsName && n != kLostFoundName && n != kControlSocketName;
  };
  auto not_a_log_here = [&] {
    return Status(Errc::not_a_log,
                  dir_ + ": directory has other files and no segments; refusing to create a log here")
        .at(dir_);
  };
  if (writer) {
    // Refuse a directory that is not a log before creating LOCK in it.
    ALOG_ASSIGN(auto early, list_shedding(*fs_, dir_));
    if (std::none_of(early.begin(), early.end(), [](const std::string& n) { return parse_segment_name(n).has_value(); }) &&
        std::any_of(early.begin(), early.end(), is_other))
      return not_a_log_here();
    ALOG_ASSIGN(lock_, fs_->lock(path_join(dir_, std::string(kLockName))));
    // Recovery may have to save bytes in lost+found/: refuse a link there
    // before anything in the directory changes.
    ALOG_TRY(check_lost_found(*fs_, dir_).status());
  }
  ALOG_ASSIGN(auto names, list_shedding(*fs_, dir_));
  std::sort(names.begin(), names.end());
  std::vector<std::string> segs;
  bool other = false;
  std::optional<uint64_t> newest;
  for (const auto& n : names)
    if (auto start = parse_segment_name(n)) newest = std::max(newest.value_or(0), *start);
  std::optional<uint64_t> oldest;
  for (const auto& n : names)
    if (auto start = parse_segment_name(n)) oldest = std::min(oldest.value_or(UINT64_MAX), *start);
  renew_del_.clear();
  std::vector<std::pair<uint64_t, std::string>> older;  // leftovers of removals at the front
  for (const auto& n : names) {
    if (parse_segment_name(n)) {
      segs.push_back(n);
    } else if (n.ends_with(kTmpSuffix) || n.ends_with(kDelSuffix)) {
      // A segment newer than every other that a truncate_after was removing:
      // its removal may not be durable (see reuse_removed_next below).
      auto del_start = n.ends_with(kDelSuffix) ? parse_segment_name(n.substr(0, n.size() - 4)) : std::nullopt;
      if (writer && del_start && newest && *del_start > *newest && renew_del_.empty()) {
        renew_del_ = n;
      } else if (writer) {
        auto was = oldest ? leftover_origin(n) : std::nullopt;
        if (was && *was < *oldest) older.emplace_back(*was, n);
        else ALOG_TRY(fs_->unlink(path_join(dir_, n)));
      }
      repairs_.push_back({"remove", n, "",
                          n.ends_with(kTmpSuffix) ? "an unfinished segment (a roll, recycle or salvage was interrupted)"
                                                   : "a segment being removed (a truncation was interrupted)"});
    } else if (is_other(n)) {
      other = true;
    }
  }
  // Sync the directory even when nothing was removed: after a failed
  // directory fsync in an earlier process, the names listed here (a segment
  // made by a roll) may not be durable yet, and this process builds on them.
  if (writer) ALOG_TRY(fs_->sync_dir(dir_));
  if (segs.empty()) {
    if (!writer) return Status(Errc::not_a_log, dir_ + ": no segment files (not an alog log)").at(dir_);
    if (other) return not_a_log_here();
    // A directory that was already there may have been made by an open whose
    // sync of the parent failed. A failed fsync is final (FORMAT.md, device
    // model): no later sync makes that entry durable, only a new change of
    // it does. It holds no segment yet: rename it away and back, then sync.
    if (!made_dir) ALOG_TRY(renew_dir_entry(parent));
    SegmentPtr first;
    ALOG_TRY(create_segment(opt_.start_sequence, &first));
    tail_ = WalkState{kHeaderSize, opt_.start_sequence, 0, 0, false};
    set_view({first});
    return {};
  }

  SegmentList list;
  Status damage;
  bool chain_cut = false;  // the real active segment is not in `list`
  for (const auto& n : segs) {
    SegmentPtr seg;
    Status d;
    ALOG_TRY(open_segment(n, &seg, &d));
    if (!d.is_ok()) {
      if (writer) return d;
      damage = d;
      // Keep only what lies before the unreadable segment (by name), and
      // the segment itself when its frames can be read (synced data missing).
      uint64_t bad_start = *parse_segment_name(n);
      std::erase_if(list, [&](const SegmentPtr& s) { return s->start_sequence() >= bad_start; });
      if (seg && seg->start_sequence() == bad_start) list.push_back(std::move(seg));
      chain_cut = true;
      break;
    }
    list.push_back(std::move(seg));
  }
  std::sort(list.begin(), list.end(),
            [](const SegmentPtr& a, const SegmentPtr& b) { return a->start_sequence() < b->start_sequence(); });
  for (size_t i = 1; i < list.size(); i++) {
    if (list[i]->start_sequence() == list[i - 1]->start_sequence()) {
      Status d = corrupt(list[i]->path(), 0,
                         "segment header: start sequence " + std::to_string(list[i]->start_sequence()) +
                             " also starts " + list[i - 1]->name());
      if (writer) return d;
      damage = d;
      list.resize(i);
      chain_cut = true;
      break;
    }
  }
  // Names must agree with headers: a writer renames, a reader just reads in
  // header order (and tells what a writer would rename).
  for (const auto& s : list)
    if (s->name() != segment_name(s->start_sequence()))
      repairs_.push_back({"rename", s->name(), segment_name(s->start_sequence()),
                          "its name disagrees with its header's start sequence"});
  if (writer) {
    bool renamed = false;
    for (auto& s : list) {
      std::string want = segment_name(s->start_sequence());
      if (s->name() == want) continue;
      ALOG_ASSIGN(FileStat ts, fs_->stat(path_join(dir_, want)));
      if (ts.exists)
        return corrupt(s->path(), 0, "name disagrees with its header, and " + want + " exists");
      ALOG_TRY(fs_->rename(s->path(), path_join(dir_, want)));
      renamed = true;
      SegmentPtr re;
      Status d;
      ALOG_TRY(open_segment(want, &re, &d));
      if (!d.is_ok()) return d;
      s = re;
    }
    if (renamed) ALOG_TRY(fs_->sync_dir(dir_));
  }
  // Sealed segments: their synced offset is the EOF position, and each ends
  // where the next begins.
  for (size_t i = 0; i + 1 < list.size(); i++) {
    Slot sl = list[i]->slot();
    std::optional<Status> d;
    if (sl.synced_offset + kFrameHeaderSize > list[i]->file_length())
      d = corrupt(list[i]->path(), sl.synced_offset,
                  "sealed segment ends before its EOF at the synced offset");
    else if (sl.synced_sequence != list[i + 1]->start_sequence())
      d = corrupt(list[i + 1]->path(), 0,
                  "sequence_gap: " + list[i]->name() + " ends at sequence " +
                      std::to_string(sl.synced_sequence) + " but " + list[i + 1]->name() +
                      " starts at " + std::to_string(list[i + 1]->start_sequence()));
    if (d) {
      if (writer) return *d;
      damage = *d;
      list.resize(i + 1);
      chain_cut = true;
      break;
    }
  }
  if (list.empty()) {
    // Only reachable for readers: the first segment is unreadable.
    damage_ = damage;
    set_view({});
    return damage;
  }
  damage_ = damage;
  set_view(list);
  if (writer) {
    for (const auto& seg : list)
      if (std::find(slot_behind_.begin(), slot_behind_.end(), seg->name()) != slot_behind_.end())
        ALOG_TRY(finish_slots(*seg));
    // Newest first, each settled before the next: a tombstone left by a crash
    // then always chains to the segment after it. It can stand in front of
    // the oldest segment only while that one's first sequence is its start
    // (else the log's first sequence would move back): otherwise the
    // leftover is only deleted.
    std::sort(older.rbegin(), older.rend());
    const SegmentPtr& front = list.front();
    std::optional<uint64_t> done;
    for (const auto& [was, n] : older) {
      if (done == was) {
        // A second leftover of that name (a tombstone's .tmp a crash left):
        // the first one's tombstone may have replaced it already.
        ALOG_ASSIGN(FileStat fst, fs_->stat(path_join(dir_, n)));
        if (fst.exists) ALOG_TRY(fs_->unlink(path_join(dir_, n)));
        ALOG_TRY(fs_->sync_dir(dir_));
      } else if (front->range().first == front->start_sequence()) {
        done = was;
        ALOG_TRY(remove_older_leftover(n, was, front->start_sequence()));
      } else {
        ALOG_TRY(fs_->unlink(path_join(dir_, n)));
        ALOG_TRY(fs_->sync_dir(dir_));
      }
    }
    ALOG_TRY(recover_active(list.back()));
    ALOG_ASSIGN(bool reused, reuse_removed_next());
    if (reused) return {};
    return renew_empty_active();
  }
  // A chain that broke after a sealed segment ends at that segment's synced
  // offset (already its range); otherwise walk the active segment's tail.
  if (chain_cut) return {};
  SegmentPtr active = list.back();
  if (opt_.walk_tail_in_background && !resume_ &&
      active->file_length() > active->slot().synced_offset + kBackgroundTail) {
    // Its I/O error ends the readable records, as damage.
    auto walk = [this, active] {
      Status walked = walk_active_for_read(active, &tail_walk_);
      if (!walked.is_ok() && damage_.is_ok()) damage_ = walked;
      return walked;
    };
    if (tail_walk_.start(walk)) return {};
  }
  return walk_active_for_read(active);
}

Status LogImpl::close(bool sync) {
  settle_tail();
  if (closed_) return {};
  closed_ = true;
  Status st;
  if (writable_ && !failed_ && sync) {
    auto v = view();
    if (!v->empty()) {
      // Sync, record the synced offset, sync again: a cleanly closed segment opens without a walk.
      st = sync_active(/*sync_slot=*/true);
    }
  }
  if (reaper_) reaper_->drain();
  lock_.reset();
  return st;
}

bool LogImpl::attach_writer() {
  bool expected = false;
  return writer_attached_.compare_exchange_strong(expected, true);
}
void LogImpl::detach_writer() { writer_attached_ = false; }
bool LogImpl::writer_attached() const { return writer_attached_; }

Status LogImpl::check_writable() const {
  if (!writable_) return Status(Errc::read_only, dir_ + ": log is open for reading").at(dir_);
  if (closed_) return Status(Errc::invalid_argument, dir_ + ": log is closed").at(dir_);
  if (failed_)
    return Status(Errc::log_failed, dir_ + ": an earlier failure left the log unusable; reopen it")
        .at(dir_);
  return {};
}

Status LogImpl::fail(Status st) {
  failed_ = true;
  return st;
}

// ---- Reaper ----

void Reaper::add(std::string path) {
  std::lock_guard<std::mutex> g(mu_);
  queue_.push_back(std::move(path));
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  cv_.notify_all();
}

void Reaper::run() {
  std::unique_lock<std::mutex> g(mu_);
  while (true) {
    cv_.wait(g, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;
    std::string p = queue_.front();
    g.unlock();
    (void)fs_->unlink(p);  // a leftover .seg.del is deleted by the next writer's open
    g.lock();
    queue_.pop_front();
    cv_.notify_all();
  }
}

void Reaper::drain() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> g(mu_);
  stop_ = false;
}

}  // namespace alog
