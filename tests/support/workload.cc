// Randomized workloads through the oracle (see workload.h).
#include "support/workload.h"

#include <algorithm>
#include <cstdlib>

namespace alog::test {

uint64_t ByteChoices::below(uint64_t n) {
  if (n <= 1) return 0;
  uint64_t v = 0;
  // As many bytes as n needs (1 for n <= 256).
  for (uint64_t span = 1; span < n && p_ != end_; span <<= 8) v = v << 8 | *p_++;
  return v % n;
}

Options random_options(Choices& c, MemFs* fs) {
  static constexpr uint64_t kSizes[] = {1024, 2048, 4096, 8192};
  static constexpr uint32_t kSegments[] = {0, 0, 2, 3, 5};
  static constexpr uint32_t kStrides[] = {1, 2, 3, 8, 64};
  Options o;
  o.fs = fs;
  o.max_segment_size = kSizes[c.below(4)];
  o.max_segments = kSegments[c.below(5)];
  o.checkpoint_stride = kStrides[c.below(5)];
  o.sync_on_append = c.percent(10);
  o.start_sequence = c.percent(20) ? c.below(1000) : 0;
  if (c.percent(10)) o.max_disk_size = 6 * o.max_segment_size;
  auto clock = std::make_shared<uint64_t>(1'700'000'000'000);
  o.clock_ms = [clock] { return (*clock)++; };
  return o;
}

Workload::Workload(MemFs& fs, std::string dir, Options options)
    : fs_(fs),
      dir_(std::move(dir)),
      options_(std::move(options)),
      oracle_(options_.start_sequence, options_.max_segments) {
  options_.fs = &fs_;
}

Workload::~Workload() { abandon(); }

void Workload::abandon() {
  // Destroying the Log closes it; with the power off every call fails and
  // nothing changes. (A test that wants a clean close calls oracle().close.)
  log_.reset();
}

void Workload::note(std::string what) {
  trace_.push_back(std::move(what));
  if (trace_.size() > 40) trace_.pop_front();
}

std::vector<std::string> Workload::violations() const {
  std::vector<std::string> v = violations_;
  v.insert(v.end(), oracle_.live_violations().begin(), oracle_.live_violations().end());
  return v;
}

std::string Workload::trace() const {
  std::string s;
  for (const auto& t : trace_) s += "  " + t + "\n";
  return s;
}

CheckReport Workload::open(bool after_crash, bool synced_may_be_lost) {
  log_.reset();
  const uint64_t faults = fs_.faults_injected();
  auto log = Log::open(dir_, options_);
  if (!log.is_ok()) {
    CheckReport r;
    oracle_.open_failed();
    bool injected = fs_.powered_off() || fs_.faults_injected() != faults;
    if (fs_.powered_off()) cut_in_open_ = true;
    note(std::string("open failed") + (injected ? " (injected)" : "") + ": " + log.status().to_string());
    if (!injected) r.violations.push_back("the log does not open: " + log.status().to_string());
    return r;
  }
  log_ = std::move(*log);
  note("open: [" + std::to_string(log_->first_sequence()) + ", " +
       std::to_string(log_->next_sequence()) + ")" + (after_crash ? " after a crash" : ""));
  Oracle::CheckOptions co;
  co.after_crash = after_crash;
  co.synced_may_be_lost = synced_may_be_lost;
  return oracle_.check_open(*log_, &fs_, co);
}

std::vector<std::string> Workload::make_batch(Choices& c) {
  uint64_t n;
  uint64_t k = c.below(100);
  if (k < 70) n = 1 + c.below(3);
  else if (k < 90) n = 1 + c.below(12);
  else n = 1 + c.below(80);
  // Keep most batches small enough to fit an empty segment.
  uint64_t room = options_.max_segment_size - 192 - 16 * (n + 3);
  uint64_t cap = options_.max_segment_size > 192 + 16 * (n + 3) ? room / n : 0;
  if (cap > 16) cap -= 16;
  std::vector<std::string> batch;
  uint64_t seq = log_->next_sequence();
  ++tag_;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t len;
    uint64_t r = c.below(100);
    if (r < 60) len = c.below(48);
    else if (r < 90) len = c.below(700);
    else len = 2000 + c.below(2500);
    if (!c.percent(3)) len = std::min(len, cap);
    len = std::min(len, max_payload_);
    batch.push_back(make_payload(seq + i, tag_, len));
  }
  return batch;
}

bool Workload::step(Choices& c) {
  if (fs_.powered_off()) return false;
  if (!log_) {
    CheckReport r = open(false);
    for (auto& v : r.violations) note("VIOLATION " + v);
    if (!r.ok()) violations_.insert(violations_.end(), r.violations.begin(), r.violations.end());
    return !fs_.powered_off();
  }
  Log& log = *log_;
  const uint64_t first = log.first_sequence(), next = log.next_sequence();
  uint64_t k = c.below(100);
  std::string what;
  if (k < 55) {
    auto batch = make_batch(c);
    auto r = oracle_.append(log, batch);
    what = "append " + std::to_string(batch.size()) + " at " + std::to_string(next) + ": " +
           (r.is_ok() ? "ok" : r.status().to_string());
  } else if (k < 70) {
    Status st = oracle_.sync(log);
    what = "sync: " + (st.is_ok() ? std::string("ok") : st.to_string());
  } else if (k < 79) {
    uint64_t seq = c.percent(5) ? next + 1 : first + c.below(next - first + 1);
    Status st = oracle_.truncate_before(log, seq);
    what = "truncate_before(" + std::to_string(seq) + "): " + (st.is_ok() ? std::string("ok") : st.to_string());
  } else if (k < 88) {
    uint64_t seq = next == first || c.percent(5) ? next : first + c.below(next - first);
    Status st = oracle_.truncate_after(log, seq);
    what = "truncate_after(" + std::to_string(seq) + "): " + (st.is_ok() ? std::string("ok") : st.to_string());
  } else {
    Status st = oracle_.close(log);
    note("close: " + (st.is_ok() ? std::string("ok") : st.to_string()));
    log_.reset();
    CheckReport r = open(false);
    if (!r.ok()) violations_.insert(violations_.end(), r.violations.begin(), r.violations.end());
    return !fs_.powered_off();
  }
  note(what);
  return !fs_.powered_off();
}

uint64_t tree_hash(MemFs& fs, const std::string& dir) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](const std::string& s) {
    for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
  };
  auto names = fs.list(dir);
  if (!names.is_ok()) return h;
  for (const auto& n : *names) {
    std::string p = dir + "/" + n;
    mix(n);
    auto st = fs.stat(p);
    if (st.is_ok() && st->is_dir) {
      uint64_t sub = tree_hash(fs, p);
      mix(std::string(reinterpret_cast<const char*>(&sub), sizeof sub));
    } else if (auto img = fs.current_image(p)) {
      mix(*img);
    }
  }
  return h;
}

uint64_t env_u64(const char* name, uint64_t def) {
  const char* v = std::getenv(name);
  if (!v || !*v) return def;
  return std::strtoull(v, nullptr, 10);
}

uint64_t scaled(uint64_t def) { return def * std::max<uint64_t>(1, env_u64("ALOG_TEST_SCALE", 1)); }

}  // namespace alog::test
