// LockProbe: whether a writer holds a log's LOCK, asked on a thread of its
// own when the Fs says the question may block, so that the caller's work
// runs beside it. PosixFs's is_locked reads /proc/locks, which lists every
// lock of the host: on a host with many locks that read blocks for
// milliseconds (5-40 ms measured, against a 40 ms verify of a 116 MB log),
// while the walk it would delay needs the answer only at a torn tail, and
// the report only at the end. A quick Fs (MemFs) is asked on the first
// held() instead: no thread per verify. So is any Fs when the work beside
// the question is short: a thread that first runs at an idle CPU's next
// tick costs more than it hides (verify of a one-record log: 2-4 ms
// more on this machine).
#pragma once

#include <cstdint>
#include <future>
#include <string>

#include "alog/fs.h"

namespace alog::detail {

class LockProbe {
 public:
  // A probe that answers `false` without asking (the lock is the caller's own).
  LockProbe() = default;
  // Starts asking fs whether lock_path is held, on a thread when
  // fs.is_locked_slow() and the caller's work beside it reads `work_bytes`
  // of at least kBesideBytes; otherwise (or when no thread can be started)
  // it is asked on the first held().
  LockProbe(Fs& fs, std::string lock_path, uint64_t work_bytes);
  // About a millisecond of walking in the page cache.
  static constexpr uint64_t kBesideBytes = 8 << 20;

  // The answer; waits for it. Each copy may be asked from its own thread.
  bool held() const { return answer_.valid() && answer_.get(); }

 private:
  std::shared_future<bool> answer_;
};

}  // namespace alog::detail
