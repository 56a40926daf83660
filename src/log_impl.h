// The log's internals: the segment chain, the writer's tail state and the
// operations of FORMAT.md "What each operation does to the files".
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "alog/log.h"
#include "segment.h"
#include "tail_walk.h"

namespace alog {

namespace detail {
// One record of a batch: its parts, concatenated.
struct RecordRef {
  const std::string_view* parts;
  size_t nparts;
  uint64_t length;
};

// One batch of an append: n records.
struct BatchRef {
  const RecordRef* recs;
  size_t n;
};

// Unlinks *.seg.del files off the append path, in a thread of its own.
class Reaper {
 public:
  explicit Reaper(Fs* fs) : fs_(fs) {}
  ~Reaper() { drain(); }
  void add(std::string path);
  // Waits until every queued unlink is done.
  void drain();

 private:
  void run();
  Fs* fs_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  std::thread thread_;
  bool stop_ = false;
};
}  // namespace detail

class LogImpl {
 public:
  LogImpl(std::string dir, const Options& opt, bool writable);
  ~LogImpl();

  // Loading and recovery (log.cc, recovery.cc).
  Status load();
  // A read-only LogImpl of dir, loaded; `prime` sets each attempt up before
  // its load (a refresh's resume point). A segment that a truncation in
  // another process renamed away between the listing and its open
  // (not_found naming a file in dir) makes it load again, a bounded number
  // of times: a reader never fails for a removal it raced.
  static Result<std::unique_ptr<LogImpl>> load_reader(const std::string& dir, const Options& opt,
                                                        const std::function<void(LogImpl&)>& prime = {});
  Status close(bool sync = true);

  // Writing (batch_write.cc): one batch, and several written together (see
  // Log::append_batches); the sync and the roll in append.cc.
  Result<uint64_t> append_batch(const detail::RecordRef* recs, size_t n);
  Result<size_t> append_batches(const detail::BatchRef* batches, size_t count);
  // Room for n RecordRefs, reused by the next call (Log::append's, on the
  // appending thread).
  detail::RecordRef* record_refs(size_t n) {
    if (refs_.size() < n) refs_.resize(n);
    return refs_.data();
  }
  Status sync();
  // Log::roll (append.cc).
  Status roll_now();
  // Truncation (truncate.cc).
  // What truncate_before(seq) will do, found without changing anything: the
  // segment that will hold the first record (none: nothing to do; the
  // segments before it are removed) and, when the read offset moves inside
  // it, the walk's state at seq's frame. Errors: out_of_bounds, and damage
  // on the walk to seq's frame.
  struct BeforeCut {
    detail::SegmentPtr holder;
    bool move_read_offset = false;
    detail::WalkState at{};
  };
  Result<BeforeCut> plan_truncate_before(uint64_t seq) const;
  // What truncate_after(seq) will do, found without changing anything: the
  // segment holding seq (the later ones are removed) and seq's frame in it.
  // Errors: out_of_bounds, and damage on the walk to seq's frame.
  struct AfterCut {
    detail::SegmentPtr holder;
    detail::Located at{};
  };
  Result<AfterCut> plan_truncate_after(uint64_t seq) const;
  Status truncate_before(uint64_t seq);
  Status truncate_after(uint64_t seq);

  // Reading (scanner.cc).
  Result<Record> read(uint64_t seq) const;
  // A Scanner whose next record is seq, the frame at `off` in seg, as if it
  // had read up to there (seg's cuts() then `cuts`): it goes on in order,
  // without looking for seq's frame.
  std::unique_ptr<Scanner> scan_at(uint64_t seq, const detail::SegmentPtr& seg, uint64_t off,
                                   uint64_t cuts) const;

  // The current segment chain (copy-on-write snapshot).
  std::shared_ptr<const detail::SegmentList> view() const;
  uint64_t first_sequence() const;
  uint64_t next_sequence() const;
  uint64_t disk_size() const;

  const std::string& dir() const { return dir_; }
  uint64_t records_recycled() const { return recycled_records_; }
  const Options& options() const { return opt_; }
  Fs& fs() const { return *fs_; }
  bool writable() const { return writable_; }
  bool failed() const { return failed_; }
  // Read-only opens: the damage that ends the readable log (corrupt header,
  // gap, corruption before the synced offset), or ok.
  const Status& damage() const { return damage_; }
  const std::string& torn_tail() const { return torn_tail_; }
  const std::optional<TailCut>& tail_cut() const { return tail_cut_; }
  const std::vector<OpenRepair>& open_repairs() const { return repairs_; }
  // For read-only logs (log.cc).
  Status refresh();
  // Read-only logs whose tail is walked in the background (tail_walk.h):
  // waits for that walk; and, for scanners at the end of seg's range ending
  // at `end`, waits until the walk published more (true), or finished
  // (false, or its error).
  void settle_tail() const { tail_walk_.settle(); }
  // Stops a background walk of the tail that is still going on, for the
  // caller to walk the rest itself (scan_rendered, on every core): the
  // walk's last batch boundary, which its published range ends at; nullopt
  // when no walk was going on (or it ended first). The caller must then
  // call conclude_tail_walk, as the walk would have; until then the walk
  // counts as going on (accessors and scanners wait for it).
  std::optional<detail::WalkState> take_over_tail_walk();
  // What a read-only open's walk of the active segment's tail sets once it
  // ends (`done` stopped with `stop`, or at a valid EOF): the segment's
  // range, torn_tail() and tail_cut(); an I/O error (Stop::io_error, `error`)
  // ends the range at the last batch boundary. An error is also damage(),
  // as a background walk's is.
  Status conclude_tail_walk(const detail::SegmentPtr& seg, detail::Stop stop, const detail::Walker& done,
                            const Status& error = {});
  Result<bool> await_tail(const detail::Segment& seg, uint64_t end) const {
    return tail_walk_.await(seg, end);
  }

  // A Writer attaches so that direct appends are refused.
  bool attach_writer();
  void detach_writer();
  bool writer_attached() const;

  // Test hook: the writer's tail state.
  const detail::WalkState& tail() const { return tail_; }

 private:
  friend class LogTestPeer;
  Status check_options() const;
  Status load_segments(bool writer);
  // After a failed fsync in an earlier process (see log.cc): make a new
  // change of the log directory's entry / of an empty active segment's name.
  Status renew_dir_entry(const std::string& parent);
  Status renew_empty_active();
  Result<bool> reuse_removed_next();
  std::optional<uint64_t> leftover_origin(const std::string& name);
  Status remove_older_leftover(const std::string& name, uint64_t was, uint64_t oldest);
  std::string renew_del_;  // a .seg.del newer than every segment, kept for reuse_removed_next
  Status open_segment(const std::string& name, detail::SegmentPtr* out, Status* damage);
  Status recover_active(const detail::SegmentPtr& seg);
  // With `progress`, publishes seg's range at batch boundaries as the walk
  // confirms them and tells progress each time.
  Status walk_active_for_read(const detail::SegmentPtr& seg, detail::TailWalk* progress = nullptr);
  Status conclude_walk(const detail::SegmentPtr& seg, detail::Stop stop, const detail::Walker& done,
                       const Status& error);  // conclude_tail_walk without the damage
  // Cuts the active segment at boundary b (FORMAT.md "Cutting at a boundary").
  Status cut_at(const detail::SegmentPtr& seg, const detail::WalkState& b, const char* reason);
  // The cut opening makes at the active segment's tail, given where the walk
  // from the synced offset ended (stop) or the EOF it reached (eof); sets tail_cut_.
  Status plan_tail_cut(const detail::SegmentPtr& seg, bool eof, const detail::WalkState& at,
                       const detail::WalkState& boundary, const char* why);
  void set_view(detail::SegmentList segs);

  Status create_segment(uint64_t start, detail::SegmentPtr* out);
  Status install_segment(std::unique_ptr<File> f, const format::SegmentHeader& h,
                         uint64_t file_length, detail::SegmentPtr* out);
  Status recycle_oldest(uint64_t start, detail::SegmentPtr* out);
  Status roll(uint64_t start);
  // A batch's framed size (headers and payloads) and the part of it copied
  // into the scratch buffer; or why it cannot be appended at all.
  struct BatchSize {
    uint64_t framed = 0, copied = 0;
  };
  Result<BatchSize> check_batch(const detail::BatchRef& b, uint64_t first_seq) const;
  // Where the next frame goes in scratch_, and where the run of scratch_
  // not yet in iov_ starts.
  struct FrameCursor {
    uint8_t* p;
    uint8_t* run;
    void end_run(std::vector<struct iovec>& iov);
  };
  // Frames a batch at walk state st (advanced past it) into scratch_ and iov_.
  void frame_batch(uint16_t gen, const detail::BatchRef& b, bool cp_first, bool cp_after,
                   detail::WalkState& st, FrameCursor& cur);
  // Adds the EOF at st and writes the frames over the EOF at old: tail_
  // becomes st, or the segment is rolled back to old.
  Status write_frames(const detail::SegmentPtr& seg, const detail::WalkState& old,
                      const detail::WalkState& st, FrameCursor& cur);
  // disk_size() for the writer's budget check, without walking every
  // segment of the chain v on each append.
  uint64_t budget_size(const std::shared_ptr<const detail::SegmentList>& v);
  Status rollback(uint64_t old_eof, const detail::WalkState& old_tail);
  // seal: the roll's sync; then a slot inherited from an earlier process is
  // rewritten even if it already shows the EOF position.
  Status sync_active(bool sync_slot, bool seal = false);
  Status fail(Status st);
  Status check_writable() const;
  uint64_t now_ms() const;

  std::string dir_;
  std::atomic<uint64_t> recycled_records_{0};  // dropped by recycle_oldest since the open
  Options opt_;
  Fs* fs_;
  // The log directory, held open while the log is (Fs::anchor): every name
  // in it is reached from there. Declared early: dropped after everything else.
  std::shared_ptr<DirAnchor> anchor_;
  bool writable_;
  std::unique_ptr<FileLock> lock_;
  mutable std::mutex view_mu_;
  std::shared_ptr<const detail::SegmentList> view_;
  detail::WalkState tail_;  // writer: state at the active segment's EOF position
  // budget_size's sum of the file lengths of every segment but the last, and
  // the chain it was summed for (weak: a removed segment is not kept open).
  std::weak_ptr<const detail::SegmentList> sized_view_;
  uint64_t sealed_bytes_ = 0;
  // write_batch's scratch, kept for its capacity: the frames' headers, and
  // those whose CRC it takes three at a time.
  std::vector<uint8_t*> headers_, deferred_;
  std::vector<detail::RecordRef> refs_;
  std::vector<BatchSize> sizes_;  // append_batches': each batch's, kept for its capacity
  // The active segment's winning slot was written by this process (not only
  // read at open: after a failed fsync in an earlier process, what reads back
  // may never reach the disk; FORMAT.md "A failed fsync is final").
  bool slot_written_ = true;
  // Atomic: Log::failed() and Log::append's busy check run in any thread
  // while a Writer's thread appends.
  std::atomic<bool> failed_{false};
  bool closed_ = false;
  std::atomic<bool> writer_attached_{false};
  Status damage_;
  std::string torn_tail_;
  std::optional<TailCut> tail_cut_;
  std::vector<OpenRepair> repairs_;
  std::vector<std::string> slot_behind_;  // segments whose losing slot an interrupted truncation left behind
  // Read-only refresh: where the previous look at the active segment ended,
  // and whether the log was found cut and rewritten behind it.
  std::optional<detail::WalkState> resume_;
  std::string resume_name_;
  bool rewritten_ = false;
  std::vector<uint8_t> scratch_;
  std::vector<struct iovec> iov_;
  std::unique_ptr<detail::Reaper> reaper_;
  // Asks a background tail walk to stop (take_over_tail_walk), and the
  // batch boundary it stopped at.
  std::atomic<bool> stop_tail_walk_{false};
  std::optional<detail::WalkState> tail_walk_stopped_at_;
  // Last: its thread uses the members above until it is joined.
  detail::TailWalk tail_walk_;
};

}  // namespace alog
