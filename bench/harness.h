// What every benchmark program shares: a clock, temporary directories,
// medians and percentiles, rounds that interleave a figure with its limit, a
// byte-counting Fs, and the row format bench/run.sh turns into one table.
//
// Output contract (stdout; anything else goes to stderr):
//   ROW<TAB>figure<TAB>measured<TAB>limit<TAB>ratio<TAB>target<TAB>met
//   INFO<TAB>text
// Benchmarks never assert timing: "met" is a report, not an exit status.
#pragma once

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "alog/fs.h"
#include "alog/status.h"

namespace bench {

inline uint64_t now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// Keeps a value alive and opaque to the optimizer.
template <class T>
inline void keep(const T& v) {
  asm volatile("" : : "r,m"(v) : "memory");
}

[[noreturn]] inline void die(const std::string& what) {
  std::fprintf(stderr, "bench: %s\n", what.c_str());
  std::exit(2);
}
inline void check(const alog::Status& st, const char* what) {
  if (!st.is_ok()) die(std::string(what) + ": " + st.to_string());
}
template <class T>
inline T check(alog::Result<T> r, const char* what) {
  if (!r.is_ok()) die(std::string(what) + ": " + r.status().to_string());
  return std::move(r).value();
}

// A fresh directory under $ALOG_BENCH_DIR (default /tmp), removed with everything in it.
class TempDir {
 public:
  explicit TempDir(const char* tag = "alog-bench") {
    const char* base = std::getenv("ALOG_BENCH_DIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/" + tag + "-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!::mkdtemp(buf.data())) die("mkdtemp " + tmpl + ": " + std::strerror(errno));
    path_ = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline void remove_all(const std::string& p) {
  std::error_code ec;
  std::filesystem::remove_all(p, ec);
}

// Median of a copy; 0 for none.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Nearest-rank percentile (q in 0..1) of a copy.
template <class T>
inline T percentile(std::vector<T> v, double q) {
  if (v.empty()) return T{};
  std::sort(v.begin(), v.end());
  size_t k = static_cast<size_t>(q * static_cast<double>(v.size()));
  if (k >= v.size()) k = v.size() - 1;
  return v[k];
}

// Runs `rounds` rounds of fig() and lim(), alternating which goes first so
// slow drift on a shared machine hits both alike; returns the medians of
// what each returned (e.g. ns per operation).
struct Pair {
  double fig = 0, lim = 0;
  double paired = 0;  // median over rounds of fig/lim from the same round
};
// use_min: the least of the rounds instead of the median, for CPU-bound
// work where interference only ever adds time (the CRC loops).
inline Pair interleave(int rounds, const std::function<double()>& fig,
                       const std::function<double()>& lim, bool use_min = false) {
  std::vector<double> f, l;
  for (int r = 0; r < rounds; r++) {
    if (r % 2 == 0) {
      l.push_back(lim());
      f.push_back(fig());
    } else {
      f.push_back(fig());
      l.push_back(lim());
    }
  }
  std::vector<double> ratio;
  for (size_t i = 0; i < f.size(); i++) ratio.push_back(l[i] > 0 ? f[i] / l[i] : 0);
  if (use_min)
    return {*std::min_element(f.begin(), f.end()), *std::min_element(l.begin(), l.end()), median(ratio)};
  return {median(f), median(l), median(ratio)};
}

// Calls chunk() until about `ns` have passed (at least once) and returns
// all the samples: trials of fdatasync-bound work take the same time however
// fast the disk is at the moment, so interleaved rounds stay short.
inline std::vector<double> for_about(uint64_t ns, const std::function<std::vector<double>()>& chunk) {
  std::vector<double> all;
  uint64_t t0 = now_ns();
  do {
    auto v = chunk();
    all.insert(all.end(), v.begin(), v.end());
  } while (now_ns() - t0 < ns);
  return all;
}

// Flushes every dirty page on the machine and lets the disk go idle, so a
// figure does not pay for the writeback that an earlier one left behind
// (fdatasync goes from ~65 µs to a 4 ms tick while writeback runs).
inline void settle() {
  ::sync();
  ::usleep(200 * 1000);
}

// Keeps every CPU busy with SCHED_IDLE spinners (which yield to any other
// work) while it lives. On this VM an idle vCPU is woken for an I/O
// completion only at the next 4 ms tick, so an fdatasync that takes ~60 µs
// on a busy machine takes 4.00 ms on an idle one; durable figures and their
// limits both run with this, measuring the disk rather than that artifact.
class KeepAwake {
 public:
  KeepAwake() {
    unsigned n = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned i = 0; i < n; i++)
      threads_.emplace_back([this, i] {
        // One per CPU, pinned: the balancer would not spread such light threads.
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(i, &set);
        pthread_setaffinity_np(pthread_self(), sizeof set, &set);
        struct sched_param sp {};
        pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
        // No `pause`: the hypervisor takes pause loops for lock spinning and
        // deschedules the vCPU, which brings the 4 ms wake-ups back.
        uint64_t k = 0;
        while (!stop_.load(std::memory_order_relaxed)) keep(++k);
      });
  }
  ~KeepAwake() {
    stop_ = true;
    for (auto& t : threads_) t.join();
  }
  KeepAwake(const KeepAwake&) = delete;
  KeepAwake& operator=(const KeepAwake&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

// ---- formatting ----

inline std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}
// ns -> "352 ns", "12.3 µs", "4.56 ms", "1.23 s".
inline std::string dur(double ns) {
  if (ns < 1e3) return fmt("%.0f ns", ns);
  if (ns < 1e6) return fmt(ns < 1e4 ? "%.2f µs" : "%.1f µs", ns / 1e3);
  if (ns < 1e9) return fmt("%.2f ms", ns / 1e6);
  return fmt("%.2f s", ns / 1e9);
}
// A per-second rate; unit starts with its separator: rate(7.81e6, " rec/s")
// is "7.81 M rec/s", rate(6.7e3, "/s") is "6.70 k/s".
inline std::string rate(double per_s, const char* unit) {
  if (per_s >= 1e6) return fmt("%.2f M", per_s / 1e6) + unit;
  if (per_s >= 1e3) return fmt("%.2f k", per_s / 1e3) + unit;
  return fmt("%.1f", per_s) + unit;
}
// bytes/s -> "4.12 GB/s" (decimal units, as the targets are written).
inline std::string bw(double bytes_per_s) {
  if (bytes_per_s >= 1e9) return fmt("%.2f GB/s", bytes_per_s / 1e9);
  return fmt("%.0f MB/s", bytes_per_s / 1e6);
}
inline std::string bytes(double n) {
  if (n >= 1 << 30) return fmt("%.2f GiB", n / (1 << 30));
  if (n >= 1 << 20) return fmt("%.1f MiB", n / (1 << 20));
  if (n >= 1 << 10) return fmt("%.1f KiB", n / (1 << 10));
  return fmt("%.0f B", n);
}

// One table row. ratio < 0 prints "—".
inline void row(const std::string& figure, const std::string& measured, const std::string& limit,
                double ratio, const std::string& target, bool met) {
  std::printf("ROW\t%s\t%s\t%s\t%s\t%s\t%s\n", figure.c_str(), measured.c_str(), limit.c_str(),
              ratio < 0 ? "—" : fmt("%.2f×", ratio).c_str(), target.c_str(), met ? "yes" : "NO");
  std::fflush(stdout);
}
// A limit on its own (limits_bench): measured, with what it is.
inline void limit_row(const std::string& name, const std::string& measured) {
  std::printf("ROW\tlimit: %s\t%s\t—\t—\t—\t—\n", name.c_str(), measured.c_str());
  std::fflush(stdout);
}
inline void info(const std::string& text) {
  std::printf("INFO\t%s\n", text.c_str());
  std::fflush(stdout);
}

// ---- an Fs that counts what passes through it ----

struct IoCounts {
  std::atomic<uint64_t> preads{0}, pread_bytes{0}, writes{0}, write_bytes{0}, syncs{0}, opens{0};
  // While set, pwritev is counted and dropped: what the library costs without the kernel.
  std::atomic<bool> discard_writes{false};
  void reset() {
    preads = 0;
    pread_bytes = 0;
    writes = 0;
    write_bytes = 0;
    syncs = 0;
    opens = 0;
  }
};

class CountingFile final : public alog::File {
 public:
  CountingFile(std::unique_ptr<alog::File> f, IoCounts* c) : f_(std::move(f)), c_(c) {}
  alog::Result<size_t> pread(void* buf, size_t n, uint64_t off) override {
    auto r = f_->pread(buf, n, off);
    c_->preads++;
    if (r.is_ok()) c_->pread_bytes += *r;
    return r;
  }
  alog::Status pwritev(const struct iovec* iov, int iovcnt, uint64_t off) override {
    c_->writes++;
    for (int i = 0; i < iovcnt; i++) c_->write_bytes += iov[i].iov_len;
    if (c_->discard_writes.load(std::memory_order_relaxed)) return {};
    return f_->pwritev(iov, iovcnt, off);
  }
  alog::Status truncate(uint64_t size) override { return f_->truncate(size); }
  alog::Status datasync() override {
    c_->syncs++;
    return f_->datasync();
  }
  alog::Result<uint64_t> size() override { return f_->size(); }
  const std::string& path() const override { return f_->path(); }

 private:
  std::unique_ptr<alog::File> f_;
  IoCounts* c_;
};

class CountingFs final : public alog::Fs {
 public:
  explicit CountingFs(alog::Fs& inner) : in_(inner) {}
  IoCounts counts;
  alog::Result<std::unique_ptr<alog::File>> open(const std::string& path,
                                                 alog::OpenMode mode) override {
    auto r = in_.open(path, mode);
    if (!r.is_ok()) return r;
    counts.opens++;
    return std::unique_ptr<alog::File>(new CountingFile(std::move(r).value(), &counts));
  }
  alog::Status rename(const std::string& a, const std::string& b) override {
    return in_.rename(a, b);
  }
  alog::Status unlink(const std::string& p) override { return in_.unlink(p); }
  alog::Status mkdir(const std::string& p) override { return in_.mkdir(p); }
  alog::Result<std::vector<std::string>> list(const std::string& d) override {
    return in_.list(d);
  }
  alog::Status sync_dir(const std::string& d) override {
    counts.syncs++;
    return in_.sync_dir(d);
  }
  alog::Result<std::unique_ptr<alog::FileLock>> lock(const std::string& p) override {
    return in_.lock(p);
  }
  bool is_locked(const std::string& p) override { return in_.is_locked(p); }
  bool is_locked_slow() const override { return in_.is_locked_slow(); }
  alog::Result<alog::FileStat> stat(const std::string& p) override { return in_.stat(p); }

 private:
  alog::Fs& in_;
};

// A payload of n pseudo-random printable bytes (no newlines).
inline std::string payload(size_t n, uint32_t seed = 1) {
  std::string s(n, 'x');
  uint32_t x = seed * 2654435761u + 1;
  for (auto& c : s) {
    x = x * 1664525u + 1013904223u;
    c = static_cast<char>('a' + (x >> 24) % 26);
  }
  return s;
}

// A scale factor for trial sizes: ALOG_BENCH_SCALE=0.2 for a quick run.
inline double scale() {
  const char* s = std::getenv("ALOG_BENCH_SCALE");
  double v = s ? std::atof(s) : 1.0;
  return v > 0 ? v : 1.0;
}
inline uint64_t scaled(uint64_t n, uint64_t min = 1) {
  return std::max<uint64_t>(min, static_cast<uint64_t>(static_cast<double>(n) * scale()));
}

}  // namespace bench
