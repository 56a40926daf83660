// An Fs, and a File, that forward every call to another one: tests derive
// from them and override the calls they watch or interfere with.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "alog/fs.h"

namespace alog::test {

class ForwardFile : public File {
 public:
  explicit ForwardFile(std::unique_ptr<File> inner) : file_(std::move(inner)) {}
  Result<size_t> pread(void* buf, size_t n, uint64_t off) override { return file_->pread(buf, n, off); }
  Status pwritev(const struct iovec* iov, int n, uint64_t off) override { return file_->pwritev(iov, n, off); }
  Status truncate(uint64_t size) override { return file_->truncate(size); }
  Status datasync() override { return file_->datasync(); }
  Result<uint64_t> size() override { return file_->size(); }
  Result<std::pair<uint64_t, uint64_t>> data_extent(uint64_t off) override { return file_->data_extent(off); }
  const std::string& path() const override { return file_->path(); }

 protected:
  std::unique_ptr<File> file_;
};

class ForwardFs : public Fs {
 public:
  explicit ForwardFs(Fs& inner) : in_(inner) {}
  Result<std::shared_ptr<DirAnchor>> anchor(const std::string& d) override { return in_.anchor(d); }
  Result<std::unique_ptr<File>> open(const std::string& p, OpenMode m) override { return in_.open(p, m); }
  Status rename(const std::string& a, const std::string& b) override { return in_.rename(a, b); }
  Status unlink(const std::string& p) override { return in_.unlink(p); }
  Status mkdir(const std::string& p) override { return in_.mkdir(p); }
  Result<std::vector<std::string>> list(const std::string& d) override { return in_.list(d); }
  Status sync_dir(const std::string& d) override { return in_.sync_dir(d); }
  Result<std::unique_ptr<FileLock>> lock(const std::string& p) override { return in_.lock(p); }
  bool is_locked(const std::string& p) override { return in_.is_locked(p); }
  bool is_locked_slow() const override { return in_.is_locked_slow(); }
  Result<FileStat> stat(const std::string& p) override { return in_.stat(p); }
  Result<uint64_t> available(const std::string& d) override { return in_.available(d); }
  Status probe_write(const std::string& p, WriteUse u) override { return in_.probe_write(p, u); }

 protected:
  Fs& in_;
};

// Forwards to `inner`; the first open of a path holding `watch` runs `hook`
// first (another process's change, landing just before that open).
class OpenHookFs final : public ForwardFs {
 public:
  explicit OpenHookFs(Fs& inner) : ForwardFs(inner) {}
  std::string watch;
  std::function<void()> hook;
  Result<std::unique_ptr<File>> open(const std::string& p, OpenMode m) override {
    if (hook && p.find(watch) != std::string::npos) std::exchange(hook, nullptr)();
    return in_.open(p, m);
  }
};

}  // namespace alog::test
