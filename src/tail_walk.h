// TailWalk: a read-only log's walk of its active segment's unsynced tail,
// run on a thread of its own (Options::walk_tail_in_background). The walk
// publishes the segment's range at batch boundaries as it confirms them,
// so a scan from the start reads the tail while it is walked: one pass over
// the tail in time, where a walk at open followed by the scan made two.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "alog/status.h"
#include "segment.h"

namespace alog::detail {

class TailWalk {
 public:
  TailWalk() = default;
  TailWalk(const TailWalk&) = delete;
  TailWalk& operator=(const TailWalk&) = delete;
  // Waits for the walk.
  ~TailWalk();

  // Runs walk() on a new thread: false when none could be started (then
  // nothing runs, and the caller walks on its own thread).
  bool start(std::function<Status()> walk);
  // From the walk: it published a longer range.
  void moved();
  // Until the walk has published a range of seg ending past `end`, or has
  // finished: true when the range moved, false when the walk is over and
  // it did not (also when no walk ran), or the walk's error.
  Result<bool> await(const Segment& seg, uint64_t end) const;
  // Waits for the walk to finish (nothing when none ran).
  void settle() const;
  // Sets `stop` (which the walk watches) and waits for the walk's thread,
  // while the walk still counts as going on, for settle() and await(), until
  // release(): the caller goes on with it. False (and nothing set) when no
  // walk was going on.
  bool take_over(std::atomic<bool>& stop);
  // The walk taken over is finished, with the caller's error or ok.
  void release(const Status& st);

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool done_ = true;
  bool finished_ = true;  // the thread's walk returned
  bool held_ = false;     // taken over: done_ waits for release()
  Status status_;  // the walk's, once done_
  std::thread thread_;
};

}  // namespace alog::detail
