// Stopping long reads: a process-wide check that verify, salvage's plan and
// its search after a stop, scans and lookups call before each read of their
// window (at most every MiB). When it returns true, the read fails with
// Errc::stopped ("interrupted") and the operation returns that status before
// it changes anything further. A tool sets it to its signal flag; the
// default (none) never stops. Writes are never interrupted by it: an append,
// truncation or salvage step in progress finishes.
#pragma once

namespace alog {

using InterruptCheck = bool (*)();
// Sets the check (nullptr: none); it must be safe to call from any thread.
void set_interrupt_check(InterruptCheck check);
// Whether the check asks reads to stop now.
bool interrupt_requested();

// While one lives, no read is stopped (an operation that has begun to
// change files goes to its end); the check comes back when it dies.
class NoInterrupts {
 public:
  NoInterrupts();
  ~NoInterrupts();
  NoInterrupts(const NoInterrupts&) = delete;
  NoInterrupts& operator=(const NoInterrupts&) = delete;

 private:
  InterruptCheck saved_;
};

}  // namespace alog
