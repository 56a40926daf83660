#include "tail_walk.h"

#include <system_error>
#include <utility>

namespace alog::detail {

TailWalk::~TailWalk() {
  if (thread_.joinable()) thread_.join();
}

bool TailWalk::start(std::function<Status()> walk) {
  {
    std::lock_guard<std::mutex> g(mu_);
    done_ = finished_ = held_ = false;
  }
  try {
    thread_ = std::thread([this, walk = std::move(walk)] {
      Status st = walk();
      std::lock_guard<std::mutex> g(mu_);
      status_ = std::move(st);
      finished_ = true;
      done_ = !held_;
      cv_.notify_all();
    });
  } catch (const std::system_error&) {
    std::lock_guard<std::mutex> g(mu_);
    done_ = finished_ = true;
    return false;
  }
  return true;
}

void TailWalk::moved() {
  std::lock_guard<std::mutex> g(mu_);
  cv_.notify_all();
}

Result<bool> TailWalk::await(const Segment& seg, uint64_t end) const {
  std::unique_lock<std::mutex> lk(mu_);
  // The walk publishes before it takes mu_ to notify, so a range read under
  // mu_ that still ends at `end` is one the next notification follows.
  cv_.wait(lk, [&] { return done_ || seg.range().end != end; });
  if (seg.range().end != end) return true;
  if (!status_.is_ok()) return status_;
  return false;
}

void TailWalk::settle() const {
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait(lk, [&] { return done_; });
}

bool TailWalk::take_over(std::atomic<bool>& stop) {
  std::unique_lock<std::mutex> lk(mu_);
  if (done_) return false;
  held_ = true;
  stop.store(true, std::memory_order_relaxed);
  cv_.wait(lk, [&] { return finished_; });
  return true;
}

void TailWalk::release(const Status& st) {
  std::lock_guard<std::mutex> g(mu_);
  if (!held_) return;
  held_ = false;
  done_ = true;
  if (status_.is_ok()) status_ = st;
  cv_.notify_all();
}

}  // namespace alog::detail
