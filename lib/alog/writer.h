// Writer: one write path for many producer threads, with group commit. Each
// batch is one Log append (and, with Options::sync_on_append, one sync) shared
// by every request in it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <span>
#include <string_view>

#include "alog/log.h"
#include "alog/status.h"

namespace alog {

// Limits on one batch. A batch closes when the writer becomes free to write
// it or when a limit is reached, whichever comes first.
struct WriterOptions {
  // At most this many requests per batch (1..65535).
  uint32_t max_length = 500;
  // At most this many payload bytes per batch (>= 1). A single request larger
  // than this is written in a batch of its own.
  uint64_t max_bytes = 4 * kMiB;
  // The longest the writer waits, after a batch is done, for the callers it
  // woke to queue their next records before it writes the next batch. It
  // waits only while fewer requests are queued than that batch had blocking
  // callers, and never longer than a quarter of that batch's write (and
  // sync): a lone caller is written at once. 0 writes whatever is queued at
  // once. Must not be negative.
  std::chrono::microseconds max_delay = std::chrono::milliseconds(5);
};

// Counters since start(), for tests and monitoring.
struct WriterStats {
  uint64_t batches = 0;  // Log appends that wrote data (parts of a split batch count each)
  uint64_t records = 0;  // records written
  uint64_t failed = 0;   // requests that got an error from the writer thread
  uint64_t splits = 0;   // batches (or parts) split after batch_too_large
  uint64_t queued = 0;   // now: requests queued that the writer thread has not taken yet
};

class WriterImpl;

// Serializes appends from any number of threads onto one Log.
//
// Group commit: while the writer thread writes (and syncs) one batch, new
// requests collect into the next; when the write returns, the whole next
// batch goes out as one append, after a short wait for the callers just
// woken to queue again (see max_delay). A lone request is written at once.
//
// REQUIRES: `log` was opened for writing and outlives the Writer; the log is
// not closed, synced or truncated directly while the writer runs (direct
// appends, sync and truncation are refused with busy). Scanners and
// Log::read may run in any thread meanwhile and see a consistent prefix.
//
// Thread-safe: every member may be called from any thread, except that the
// completion callbacks run on the writer thread and must not call append(),
// append_multipart() or stop() (which would wait for that thread: they fail
// with invalid_argument there). append_async() from a callback is fine.
class Writer {
 public:
  // Called with the record's sequence or the request's error.
  using Callback = std::function<void(Result<uint64_t>)>;

  // Does not start the writer thread; see start().
  explicit Writer(Log& log, WriterOptions options = {});
  // Stops (see stop()); errors are dropped.
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Attaches to the log (its direct appends now return busy) and starts the
  // writer thread. Errors: invalid_argument (bad options, already started),
  // read_only, busy (another Writer owns the log), stopped (after stop()),
  // io (the thread could not be created).
  Status start();

  // Refuses new requests (they fail with stopped), writes every request
  // already queued, ends the writer thread and detaches from the log. Returns
  // once all of that is done, even when called from several threads at once.
  // A second call, or any call after the first, returns stopped. A Writer
  // that was never started just becomes stopped (ok). Errors: stopped,
  // invalid_argument (called from a completion callback).
  Status stop();

  // Appends one record and blocks until its batch is written (and synced
  // when the log has sync_on_append); returns the record's sequence. Records
  // of one batch get consecutive sequences in the order their requests
  // arrived. `payload` need only stay valid until the call returns.
  // Errors: payload_too_large (at once, alone), batch_too_large (the record
  // alone cannot fit an empty segment; only this request fails), stopped,
  // invalid_argument (not started; called from a completion callback), and
  // any Log append error (segment_full, disk_full, log_failed, io), which
  // fails every request of the batch that had not been written.
  Result<uint64_t> append(std::string_view payload);
  // As append(), for one record made of the concatenated `parts`.
  Result<uint64_t> append_multipart(std::span<const std::string_view> parts);

  // Non-blocking forms: queue the request and return at once. The writer
  // copies the payload, so it need not outlive the call. Requests from one
  // thread are sequenced in the order of the calls. Errors known at once
  // (payload_too_large, stopped, not started) are delivered at once: a ready
  // future, or the callback run on the calling thread before returning.
  // There is no back-pressure: the caller bounds how much it keeps in flight.
  std::future<Result<uint64_t>> append_async(std::string_view payload);
  std::future<Result<uint64_t>> append_multipart_async(std::span<const std::string_view> parts);
  // The callback runs on the writer thread once the batch is written (and
  // synced); keep it short.
  void append_async(std::string_view payload, Callback done);
  void append_multipart_async(std::span<const std::string_view> parts, Callback done);

  // The log's sync and truncations, run on the writer thread after every
  // request queued before the call (direct calls are busy while the writer
  // runs). Block until done; return what the Log call returns, or stopped,
  // or invalid_argument (not started; called from a completion callback).
  // truncate_before is how retention runs alongside a writer: scanners that
  // hold a removed segment keep reading it.
  Status sync();
  Status truncate_before(uint64_t seq);
  Status truncate_after(uint64_t seq);

  // True between a successful start() and stop().
  bool running() const;
  WriterStats stats() const;
  const WriterOptions& options() const;

 private:
  std::unique_ptr<WriterImpl> impl_;
};

}  // namespace alog
