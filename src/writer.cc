// Writer: producers queue requests into batches; one writer thread appends
// each batch to the log with a single LogImpl::append_batch call.
//
// Why one writer thread rather than leader/follower (a producer that finds
// the log free writes the batch itself): the async forms need someone to
// write while their callers go on, LogImpl's write path is single-threaded
// by contract, and a dedicated thread keeps every append, roll and rollback
// on one thread. The cost is one hand-off per batch (not per request), which
// is small next to a write, and nothing next to an fdatasync.
#include "alog/writer.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "log_impl.h"

namespace alog {

class WriterImpl {
 public:
  WriterImpl(Log& log, const WriterOptions& opt) : log_(log), opt_(opt) {}

  Status start();
  Status stop();
  Result<uint64_t> append_wait(const std::string_view* parts, size_t nparts);
  // Queues a copy of the record; `done` gets the result (at once for errors known at once).
  void append_async(const std::string_view* parts, size_t nparts,
                    std::promise<Result<uint64_t>>* promise, Writer::Callback callback);
  // Runs op on the writer thread after everything queued so far; waits for it.
  Status run_exclusive(std::function<Status(LogImpl&)> op);
  bool running() const;
  WriterStats stats() const;
  const WriterOptions& options() const { return opt_; }

 private:
  enum class State : uint8_t { created, running, stopping, stopped };

  // One record to append and where its result goes.
  struct Request {
    enum class Kind : uint8_t { wait, future, callback };
    Kind kind = Kind::wait;
    const std::string_view* parts = nullptr;
    size_t nparts = 0;
    uint64_t length = 0;
    std::string_view single;  // async: a view of `owned`, the one part
    std::string owned;        // async: the payload, copied
    std::promise<Result<uint64_t>> promise;
    Writer::Callback callback;
    Status status;  // set by the writer thread
    uint64_t seq = 0;
  };

  // Requests that go out as one append, or one log operation (op). Producers
  // that block on it wait on its own done word, so the writer wakes exactly
  // them, once, and they return without taking mu_ again (64 producers
  // woken through a condition variable would each queue for mu_ first).
  struct Batch {
    std::function<Status(LogImpl&)> op;  // set: no requests; nothing joins it
    Status op_status;
    std::vector<Request*> reqs;   // in arrival order
    std::vector<Request*> async;  // the heap-owned ones among reqs
    uint64_t bytes = 0;
    std::atomic<uint32_t> done{0};  // 1 once the writer thread has set every result
    bool has_waiters = false;       // guarded by mu_
  };

  static uint64_t total_length(const std::string_view* parts, size_t nparts);
  Status check_length(uint64_t length) const;
  // REQUIRES: mu_ held. Why the writer refuses requests now, or ok.
  Status admit_locked() const;
  // REQUIRES: mu_ held, admit_locked() ok. Adds r to the open batch (a new
  // one when the last is full) and wakes the writer thread if it sleeps.
  // Async requests pass ownership.
  std::shared_ptr<Batch> enqueue_locked(Request* r);
  // REQUIRES: mu_ held. Wakes the writer thread if it waits for work.
  void wake_locked();
  static Result<uint64_t> result_of(const Request& r);
  // Blocks until the writer thread is done with b (its results are set).
  static void wait_done(const Batch& b);
  static void finish_async(Request* r);

  void run();
  // REQUIRES: mu_ held (by lk), queue_ not empty. Lets the open batch wait
  // for the producers the last batch woke; see the definition.
  void gather(std::unique_lock<std::mutex>& lk);
  bool gathered_locked() const;
  void write(Batch& b);
  // Appends reqs[0, n) (records recs[0, n)) as one batch, splitting it on
  // batch_too_large. Returns an error that must also fail the rest of the
  // caller's batch, or ok.
  Status write_part(Request* const* reqs, const detail::RecordRef* recs, size_t n);
  void fail_all(Request* const* reqs, size_t n, const Status& st);

  Log& log_;
  const WriterOptions opt_;
  std::mutex stop_mu_;  // serializes start() and stop()
  std::thread thread_;

  mutable std::mutex mu_;
  State state_ = State::created;
  std::thread::id writer_id_;
  std::deque<std::shared_ptr<Batch>> queue_;  // front: next to write; back: open
  bool idle_ = false;                         // the writer thread waits on work_cv_
  bool gathering_ = false;                    // it waits on work_cv_ in gather()
  size_t gather_target_ = 0;                  // producers the last batch woke
  std::condition_variable work_cv_;
  WriterStats stats_;

  // Writer thread only.
  std::vector<detail::RecordRef> recs_;
  WriterStats pending_;  // counts of the batch being written, added to stats_ when it is done
  std::chrono::steady_clock::time_point woke_at_;  // when the last batch's producers were woken
  std::chrono::steady_clock::duration last_write_{};  // how long the last batch's write took
};

// ---- start and stop ----

Status WriterImpl::start() {
  std::lock_guard<std::mutex> sg(stop_mu_);
  std::lock_guard<std::mutex> g(mu_);
  const std::string& dir = log_.dir();
  if (state_ == State::stopping || state_ == State::stopped)
    return Status(Errc::stopped, "the writer was stopped").at(dir);
  if (state_ != State::created)
    return Status(Errc::invalid_argument, "the writer is already started").at(dir);
  if (opt_.max_length < 1 || opt_.max_length > format::kMaxBatchRecords)
    return Status(Errc::invalid_argument,
                  "writer max length must be 1..65535, not " + std::to_string(opt_.max_length))
        .at(dir);
  if (opt_.max_bytes < 1)
    return Status(Errc::invalid_argument, "writer max bytes must be at least 1").at(dir);
  if (opt_.max_delay.count() < 0)
    return Status(Errc::invalid_argument, "writer max delay must not be negative").at(dir);
  if (log_.read_only()) return Status(Errc::read_only, dir + ": log is open for reading").at(dir);
  if (!log_.impl().attach_writer())
    return Status(Errc::busy, "another Writer owns this log").at(dir);
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error& e) {
    log_.impl().detach_writer();
    return Status(Errc::io, std::string("cannot start the writer thread: ") + e.what(),
                  e.code().value())
        .at(dir);
  }
  // The thread blocks on mu_ until this returns, so it sees writer_id_ and state_.
  writer_id_ = thread_.get_id();
  state_ = State::running;
  stats_ = {};
  return {};
}

Status WriterImpl::stop() {
  {
    std::lock_guard<std::mutex> g(mu_);
    // The writer thread cannot wait for itself to finish.
    if (std::this_thread::get_id() == writer_id_)
      return Status(Errc::invalid_argument, "stop() called from a writer callback").at(log_.dir());
  }
  std::lock_guard<std::mutex> sg(stop_mu_);
  {
    std::lock_guard<std::mutex> g(mu_);
    if (state_ == State::stopped)
      return Status(Errc::stopped, "the writer was already stopped").at(log_.dir());
    if (state_ == State::created) {
      state_ = State::stopped;
      return {};
    }
    state_ = State::stopping;
    work_cv_.notify_one();
  }
  // The thread writes what is queued, then ends.
  thread_.join();
  log_.impl().detach_writer();
  std::lock_guard<std::mutex> g(mu_);
  state_ = State::stopped;
  writer_id_ = {};
  return {};
}

bool WriterImpl::running() const {
  std::lock_guard<std::mutex> g(mu_);
  return state_ == State::running;
}

WriterStats WriterImpl::stats() const {
  std::lock_guard<std::mutex> g(mu_);
  return stats_;
}

// ---- producers ----

uint64_t WriterImpl::total_length(const std::string_view* parts, size_t nparts) {
  uint64_t n = 0;
  for (size_t i = 0; i < nparts; i++) n += parts[i].size();
  return n;
}

Status WriterImpl::check_length(uint64_t length) const {
  uint64_t max = log_.options().max_payload_size;
  if (length <= max) return {};
  return Status(Errc::payload_too_large, "record of " + std::to_string(length) +
                                             " bytes exceeds the max payload size (" +
                                             std::to_string(max) + ")")
      .at(log_.dir());
}

Status WriterImpl::admit_locked() const {
  switch (state_) {
    case State::running:
      return {};
    case State::created:
      return Status(Errc::invalid_argument, "the writer is not started").at(log_.dir());
    case State::stopping:
    case State::stopped:
      break;
  }
  return Status(Errc::stopped, "the writer was stopped").at(log_.dir());
}

std::shared_ptr<WriterImpl::Batch> WriterImpl::enqueue_locked(Request* r) {
  bool full = queue_.empty() || queue_.back()->op ||
              queue_.back()->reqs.size() >= opt_.max_length ||
              (!queue_.back()->reqs.empty() && queue_.back()->bytes + r->length > opt_.max_bytes);
  if (full) queue_.push_back(std::make_shared<Batch>());
  std::shared_ptr<Batch> b = queue_.back();
  b->reqs.push_back(r);
  if (r->kind == Request::Kind::wait)
    b->has_waiters = true;
  else
    b->async.push_back(r);
  b->bytes += r->length;
  stats_.queued++;
  wake_locked();
  if (gathering_ && gathered_locked()) {
    gathering_ = false;
    work_cv_.notify_one();
  }
  return b;
}

void WriterImpl::wake_locked() {
  // Only an idle writer needs a wake-up; a busy one takes the queue when it
  // finishes its write, so producers of a forming batch notify nobody.
  if (idle_) {
    idle_ = false;
    work_cv_.notify_one();
  }
}

Result<uint64_t> WriterImpl::result_of(const Request& r) {
  if (!r.status.is_ok()) return r.status;
  return r.seq;
}

Result<uint64_t> WriterImpl::append_wait(const std::string_view* parts, size_t nparts) {
  Request r;
  r.parts = parts;
  r.nparts = nparts;
  r.length = total_length(parts, nparts);
  ALOG_TRY(check_length(r.length));
  std::unique_lock<std::mutex> lk(mu_);
  if (std::this_thread::get_id() == writer_id_)
    return Status(Errc::invalid_argument,
                  "a blocking append from a writer callback would wait for itself")
        .at(log_.dir());
  ALOG_TRY(admit_locked());
  std::shared_ptr<Batch> b = enqueue_locked(&r);
  lk.unlock();
  wait_done(*b);
  return result_of(r);
}

void WriterImpl::append_async(const std::string_view* parts, size_t nparts,
                              std::promise<Result<uint64_t>>* promise, Writer::Callback callback) {
  auto deliver_now = [&](Status st) {
    if (promise)
      promise->set_value(std::move(st));
    else if (callback)
      callback(std::move(st));
  };
  uint64_t length = total_length(parts, nparts);
  if (Status st = check_length(length); !st.is_ok()) return deliver_now(std::move(st));
  // Refuse early, before copying the payload; deliver outside mu_, since a
  // callback may call back into the writer.
  Status refused;
  {
    std::lock_guard<std::mutex> g(mu_);
    refused = admit_locked();
  }
  if (!refused.is_ok()) return deliver_now(std::move(refused));
  auto r = std::make_unique<Request>();
  r->owned.reserve(length);
  for (size_t i = 0; i < nparts; i++) r->owned.append(parts[i]);
  r->single = r->owned;
  r->parts = &r->single;
  r->nparts = 1;
  r->length = length;
  if (promise) {
    r->kind = Request::Kind::future;
    r->promise = std::move(*promise);
  } else {
    r->kind = Request::Kind::callback;
    r->callback = std::move(callback);
  }
  std::unique_lock<std::mutex> lk(mu_);
  if (Status st = admit_locked(); !st.is_ok()) {
    // Stopped since the first check.
    lk.unlock();
    r->status = std::move(st);
    finish_async(r.release());
    return;
  }
  enqueue_locked(r.release());  // the writer thread owns it now
}

Status WriterImpl::run_exclusive(std::function<Status(LogImpl&)> op) {
  std::unique_lock<std::mutex> lk(mu_);
  if (std::this_thread::get_id() == writer_id_)
    return Status(Errc::invalid_argument,
                  "a log operation from a writer callback would wait for itself")
        .at(log_.dir());
  ALOG_TRY(admit_locked());
  auto b = std::make_shared<Batch>();
  b->op = std::move(op);
  b->has_waiters = true;
  queue_.push_back(b);
  wake_locked();
  lk.unlock();
  wait_done(*b);
  return b->op_status;
}

void WriterImpl::wait_done(const Batch& b) {
  while (b.done.load(std::memory_order_acquire) == 0) b.done.wait(0, std::memory_order_acquire);
}

void WriterImpl::finish_async(Request* r) {
  std::unique_ptr<Request> own(r);
  if (r->kind == Request::Kind::future)
    r->promise.set_value(result_of(*r));
  else if (r->callback)
    r->callback(result_of(*r));
}

// ---- the writer thread ----

void WriterImpl::run() {
  std::unique_lock<std::mutex> lk(mu_);
  while (true) {
    if (queue_.empty()) {
      if (state_ != State::running) break;  // stopping, and everything queued is written
      idle_ = true;
      work_cv_.wait(lk, [&] { return !queue_.empty() || state_ != State::running; });
      idle_ = false;
      continue;
    }
    gather(lk);
    // Take the oldest batch; requests arriving from now on form the next one.
    std::shared_ptr<Batch> b = std::move(queue_.front());
    queue_.pop_front();
    stats_.queued -= b->reqs.size();
    lk.unlock();
    pending_ = {};
    const auto t0 = std::chrono::steady_clock::now();
    if (b->op)
      b->op_status = b->op(log_.impl());
    else
      write(*b);
    woke_at_ = std::chrono::steady_clock::now();
    last_write_ = woke_at_ - t0;
    lk.lock();
    const bool has_waiters = b->has_waiters;
    // Callers that block on their result come back with their next record
    // (callbacks run below, before the next batch is taken).
    gather_target_ = 0;
    for (const Request* r : b->reqs) gather_target_ += r->kind != Request::Kind::callback;
    stats_.batches += pending_.batches;
    stats_.records += pending_.records;
    stats_.failed += pending_.failed;
    stats_.splits += pending_.splits;
    lk.unlock();
    // One broadcast wakes every blocked producer of this batch (whose
    // requests may be gone from here on); async requests complete here,
    // outside mu_, since callbacks may append again.
    b->done.store(1, std::memory_order_release);
    if (has_waiters) b->done.notify_all();
    for (Request* r : b->async) finish_async(r);
    lk.lock();
  }
}

// Producers with one record in flight each are woken together when their
// batch is done and queue again one by one, microseconds apart (on two CPUs,
// 8 of them take ~25 µs, 64 take longer than a sync). Taking the open batch
// at once would write the first few alone and leave the rest to the batch
// after: two syncs for one round of producers. So the open batch waits until
// as many requests have joined it as the last batch woke callers, or until a
// quarter of the last write's time (at most max_delay) has passed since they
// were woken. A lone caller, or producers that are all back, never wait; the
// wait costs at most a quarter of a write and saves a whole one. (Waiting the
// whole write gathered more at P = 64 but lost more time: see bench/README.)
void WriterImpl::gather(std::unique_lock<std::mutex>& lk) {
  if (gather_target_ <= 1 || gathered_locked()) return;
  const auto bound =
      std::min<std::chrono::steady_clock::duration>(last_write_ / 4, opt_.max_delay);
  gathering_ = true;
  work_cv_.wait_until(lk, woke_at_ + bound, [&] { return gathered_locked(); });
  gathering_ = false;
}

bool WriterImpl::gathered_locked() const {
  if (state_ != State::running || queue_.size() != 1) return true;
  const Batch& open = *queue_.front();
  return open.op || open.reqs.size() >= std::min<size_t>(gather_target_, opt_.max_length) ||
         open.bytes >= opt_.max_bytes;
}

void WriterImpl::write(Batch& b) {
  recs_.clear();
  recs_.reserve(b.reqs.size());
  for (const Request* r : b.reqs) recs_.push_back({r->parts, r->nparts, r->length});
  (void)write_part(b.reqs.data(), recs_.data(), b.reqs.size());
}

void WriterImpl::fail_all(Request* const* reqs, size_t n, const Status& st) {
  for (size_t i = 0; i < n; i++) reqs[i]->status = st;
  pending_.failed += n;
}

Status WriterImpl::write_part(Request* const* reqs, const detail::RecordRef* recs, size_t n) {
  // append_batch syncs once when the log has sync_on_append; the writer adds no sync.
  Result<uint64_t> last = log_.impl().append_batch(recs, n);
  if (last.is_ok()) {
    uint64_t first = *last - (n - 1);
    for (size_t i = 0; i < n; i++) {
      reqs[i]->status = {};
      reqs[i]->seq = first + i;
    }
    pending_.batches++;
    pending_.records += n;
    return {};
  }
  const Status& st = last.status();
  if (st.code() != Errc::batch_too_large) {
    fail_all(reqs, n, st);
    return st;
  }
  if (n == 1) {
    // This record alone cannot fit an empty segment: it fails, the others go on.
    fail_all(reqs, 1, st);
    return {};
  }
  // batch_too_large is decided before any byte is written, so the halves can
  // be retried in order and sequences stay consecutive in arrival order.
  pending_.splits++;
  size_t half = n / 2;
  if (Status e = write_part(reqs, recs, half); !e.is_ok()) {
    fail_all(reqs + half, n - half, e);
    return e;
  }
  return write_part(reqs + half, recs + half, n - half);
}

// ---- Writer: the public wrapper ----

Writer::Writer(Log& log, WriterOptions options)
    : impl_(std::make_unique<WriterImpl>(log, options)) {}
Writer::~Writer() { (void)impl_->stop(); }
Status Writer::start() { return impl_->start(); }
Status Writer::stop() { return impl_->stop(); }
bool Writer::running() const { return impl_->running(); }
WriterStats Writer::stats() const { return impl_->stats(); }
const WriterOptions& Writer::options() const { return impl_->options(); }

Status Writer::sync() {
  return impl_->run_exclusive([](LogImpl& log) { return log.sync(); });
}
Status Writer::truncate_before(uint64_t seq) {
  return impl_->run_exclusive([seq](LogImpl& log) { return log.truncate_before(seq); });
}
Status Writer::truncate_after(uint64_t seq) {
  return impl_->run_exclusive([seq](LogImpl& log) { return log.truncate_after(seq); });
}

Result<uint64_t> Writer::append(std::string_view payload) {
  return impl_->append_wait(&payload, 1);
}

Result<uint64_t> Writer::append_multipart(std::span<const std::string_view> parts) {
  return impl_->append_wait(parts.data(), parts.size());
}

std::future<Result<uint64_t>> Writer::append_async(std::string_view payload) {
  std::promise<Result<uint64_t>> p;
  auto f = p.get_future();
  impl_->append_async(&payload, 1, &p, nullptr);
  return f;
}

std::future<Result<uint64_t>> Writer::append_multipart_async(
    std::span<const std::string_view> parts) {
  std::promise<Result<uint64_t>> p;
  auto f = p.get_future();
  impl_->append_async(parts.data(), parts.size(), &p, nullptr);
  return f;
}

void Writer::append_async(std::string_view payload, Callback done) {
  impl_->append_async(&payload, 1, nullptr, std::move(done));
}

void Writer::append_multipart_async(std::span<const std::string_view> parts, Callback done) {
  impl_->append_async(parts.data(), parts.size(), nullptr, std::move(done));
}

}  // namespace alog
