// The file system of the kill helpers (tests/kill_helper.cc,
// tests/holder_kill_helper.cc): the real one, with a SIGKILL at the N-th call
// of one kind of operation (write, sync, truncate, rename, unlink,
// sync_dir), for a write optionally after half of its bytes. With `only_inside`
// the calls are counted only between enter() and leave() (within a
// truncation, or a request served by a holder), so that the kill lands in
// the middle of it.
#pragma once

#include <signal.h>
#include <sys/uio.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "alog/fs.h"

namespace alog::test {

// op, nth, mid_write and only_inside are set before any thread starts;
// inside and seen change under mu while the log's reaper thread may unlink
// too.
struct KillPlan {
  std::string op;  // write, sync, truncate, rename, unlink, sync_dir
  uint64_t nth = 0;
  bool mid_write = false;
  bool only_inside = false;

  // Whether this call is the one to die at. When it is, mu stays locked
  // until the caller has killed the process, so leave() cannot end the
  // region (and the helper report its end) between the count and the kill:
  // a call counted inside dies inside, even on another thread.
  bool hit(const char* what) {
    mu.lock();
    const bool h = (!only_inside || inside) && nth && op == what && ++seen == nth;
    if (!h) mu.unlock();
    return h;
  }
  void enter() {
    std::lock_guard<std::mutex> g(mu);
    inside = true;
  }
  void leave() {
    std::lock_guard<std::mutex> g(mu);
    inside = false;
  }

 private:
  std::mutex mu;
  bool inside = false;
  uint64_t seen = 0;
};
// The one plan of the process (a helper is single-purpose).
inline KillPlan g_kill;

[[noreturn]] inline void kill_self() {
  ::raise(SIGKILL);
  std::abort();
}

class KillFile final : public File {
 public:
  explicit KillFile(std::unique_ptr<File> f) : f_(std::move(f)) {}
  Result<size_t> pread(void* buf, size_t n, uint64_t off) override {
    return f_->pread(buf, n, off);
  }
  Status pwritev(const struct iovec* iov, int iovcnt, uint64_t off) override {
    if (g_kill.hit("write")) {
      if (g_kill.mid_write) {
        // Half of the bytes reach the file, then the process dies.
        uint64_t total = 0;
        for (int i = 0; i < iovcnt; i++) total += iov[i].iov_len;
        std::string half;
        for (int i = 0; i < iovcnt && half.size() < total / 2; i++)
          half.append(static_cast<const char*>(iov[i].iov_base),
                      std::min<size_t>(iov[i].iov_len, total / 2 - half.size()));
        (void)f_->pwrite(half.data(), half.size(), off);
      }
      kill_self();
    }
    return f_->pwritev(iov, iovcnt, off);
  }
  Status truncate(uint64_t size) override {
    if (g_kill.hit("truncate")) kill_self();
    return f_->truncate(size);
  }
  Status datasync() override {
    if (g_kill.hit("sync")) kill_self();
    return f_->datasync();
  }
  Result<uint64_t> size() override { return f_->size(); }
  const std::string& path() const override { return f_->path(); }

 private:
  std::unique_ptr<File> f_;
};

class KillFs final : public Fs {
 public:
  Result<std::unique_ptr<File>> open(const std::string& path, OpenMode mode) override {
    ALOG_ASSIGN(auto f, real().open(path, mode));
    return std::unique_ptr<File>(new KillFile(std::move(f)));
  }
  Status rename(const std::string& from, const std::string& to) override {
    if (g_kill.hit("rename")) kill_self();
    return real().rename(from, to);
  }
  Status unlink(const std::string& path) override {
    if (g_kill.hit("unlink")) kill_self();
    return real().unlink(path);
  }
  Status mkdir(const std::string& path) override { return real().mkdir(path); }
  Result<std::vector<std::string>> list(const std::string& dir) override {
    return real().list(dir);
  }
  Status sync_dir(const std::string& dir) override {
    if (g_kill.hit("sync_dir")) kill_self();
    return real().sync_dir(dir);
  }
  Result<std::unique_ptr<FileLock>> lock(const std::string& path) override {
    return real().lock(path);
  }
  bool is_locked(const std::string& path) override { return real().is_locked(path); }
  bool is_locked_slow() const override { return real().is_locked_slow(); }
  Result<FileStat> stat(const std::string& path) override { return real().stat(path); }

 private:
  static Fs& real() { return posix_fs(); }
};

}  // namespace alog::test
