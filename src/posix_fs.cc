// The real file system behind the Fs seam: POSIX calls, flock for the LOCK file.
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <vector>
#include <string>

#include "alog/fs.h"

namespace alog {
namespace {

class PosixFile final : public File {
 public:
  PosixFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~PosixFile() override { ::close(fd_); }

  Result<size_t> pread(void* buf, size_t n, uint64_t off) override {
    size_t done = 0;
    auto* p = static_cast<char*>(buf);
    while (done < n) {
      ssize_t r = ::pread(fd_, p + done, n - done, static_cast<off_t>(off + done));
      if (r < 0) {
        if (errno == EINTR) continue;
        return Status::io_error("read", path_, errno).at(path_, off + done);
      }
      if (r == 0) break;
      done += static_cast<size_t>(r);
    }
    return done;
  }

  Status pwritev(const struct iovec* iov, int iovcnt, uint64_t off) override {
    // Almost always one call writes everything: try that without copying the vector.
    if (iovcnt <= IOV_MAX) {
      size_t want = 0;
      for (int k = 0; k < iovcnt; k++) want += iov[k].iov_len;
      ssize_t r = ::pwritev(fd_, iov, iovcnt, static_cast<off_t>(off));
      if (r >= 0 && static_cast<size_t>(r) == want) return {};
      // Short, interrupted or failed: the loop below writes it all again from
      // the start (positional writes of the same bytes) and reports errors.
    }
    // Keep a private copy of the vector so a partial write can be resumed.
    std::vector<struct iovec> v(iov, iov + iovcnt);
    size_t i = 0;
    while (i < v.size()) {
      int n = static_cast<int>(std::min<size_t>(v.size() - i, IOV_MAX));
      ssize_t r = ::pwritev(fd_, v.data() + i, n, static_cast<off_t>(off));
      if (r < 0) {
        if (errno == EINTR) continue;
        return Status::io_error("write", path_, errno).at(path_, off);
      }
      if (r == 0) return Status(Errc::io, "write: wrote nothing", EIO).at(path_, off);
      off += static_cast<uint64_t>(r);
      auto left = static_cast<size_t>(r);
      while (i < v.size() && left >= v[i].iov_len) left -= v[i++].iov_len;
      if (i < v.size()) {
        v[i].iov_base = static_cast<char*>(v[i].iov_base) + left;
        v[i].iov_len -= left;
      }
    }
    return {};
  }

  Status truncate(uint64_t size) override {
    while (::ftruncate(fd_, static_cast<off_t>(size)) != 0) {
      if (errno != EINTR) return Status::io_error("truncate", path_, errno);
    }
    return {};
  }

  Status datasync() override {
    while (::fdatasync(fd_) != 0) {
      if (errno != EINTR) return Status::io_error("fdatasync", path_, errno);
    }
    return {};
  }

  Result<uint64_t> size() override {
    struct stat st;
    if (::fstat(fd_, &st) != 0) return Status::io_error("stat", path_, errno);
    return static_cast<uint64_t>(st.st_size);
  }

  const std::string& path() const override { return path_; }

 private:
  int fd_;
  std::string path_;
};

class PosixLock final : public FileLock {
 public:
  explicit PosixLock(int fd) : fd_(fd) {}
  ~PosixLock() override {
    // Still holding it: the pid goes before the lock does (a crash leaves it, stale).
    (void)::ftruncate(fd_, 0);
    ::close(fd_);  // closing releases the flock
  }

 private:
  int fd_;
};

class PosixFs final : public Fs {
 public:
  Result<std::unique_ptr<File>> open(const std::string& path, OpenMode mode) override {
    int flags = O_CLOEXEC;
    switch (mode) {
      case OpenMode::read: flags |= O_RDONLY; break;
      case OpenMode::read_write: flags |= O_RDWR; break;
      case OpenMode::create_excl: flags |= O_RDWR | O_CREAT | O_EXCL; break;
      case OpenMode::create_trunc: flags |= O_RDWR | O_CREAT | O_TRUNC; break;
    }
    int fd;
    do {
      fd = ::open(path.c_str(), flags, 0644);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return Status::io_error("open", path, errno);
    return std::unique_ptr<File>(new PosixFile(fd, path));
  }

  Status rename(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0)
      return Status::io_error("rename to " + to, from, errno);
    return {};
  }

  Status unlink(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return Status::io_error("unlink", path, errno);
    return {};
  }

  Status mkdir(const std::string& path) override {
    if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST)
      return Status::io_error("mkdir", path, errno);
    return {};
  }

  Result<std::vector<std::string>> list(const std::string& dir) override {
    DIR* d = ::opendir(dir.c_str());
    if (!d) return Status::io_error("list directory", dir, errno);
    std::vector<std::string> names;
    errno = 0;
    while (struct dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(std::move(n));
    }
    int err = errno;
    ::closedir(d);
    if (err) return Status::io_error("list directory", dir, err);
    return names;
  }

  Status sync_dir(const std::string& dir) override {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return Status::io_error("open directory", dir, errno);
    int r;
    do {
      r = ::fsync(fd);
    } while (r != 0 && errno == EINTR);
    int err = errno;
    ::close(fd);
    if (r != 0) return Status::io_error("fsync directory", dir, err);
    return {};
  }

  Result<std::unique_ptr<FileLock>> lock(const std::string& path) override {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return Status::io_error("open lock file", path, errno);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int err = errno;
      ::close(fd);
      if (err == EWOULDBLOCK)
        return Status(Errc::locked, "another writer holds the lock", err).at(path);
      return Status::io_error("flock", path, err);
    }
    // The holder's pid as decimal text, for messages only (FORMAT.md): a
    // failure to write it does not matter, the flock alone decides.
    std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd, 0) == 0) (void)!::pwrite(fd, pid.data(), pid.size(), 0);
    return std::unique_ptr<FileLock>(new PosixLock(fd));
  }

  bool is_locked(const std::string& path) override {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return false;
    // Read /proc/locks rather than probing with flock(LOCK_SH): a probe is a
    // lock of its own, and a writer opening at that instant would fail.
    if (FILE* f = std::fopen("/proc/locks", "re")) {
      char line[512];
      bool held = false;
      while (!held && std::fgets(line, sizeof line, f)) {
        char kind[32], mode[32], rw[32];
        unsigned maj, min;
        unsigned long long ino;
        int pid;
        // "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF"; blocked waiters have "->".
        if (std::strstr(line, "->")) continue;
        if (std::sscanf(line, "%*d: %31s %31s %31s %d %x:%x:%llu", kind, mode, rw, &pid, &maj, &min,
                        &ino) != 7)
          continue;
        held = std::strcmp(kind, "FLOCK") == 0 && std::strcmp(rw, "WRITE") == 0 &&
               ino == static_cast<unsigned long long>(st.st_ino) && maj == major(st.st_dev) &&
               min == minor(st.st_dev);
      }
      std::fclose(f);
      return held;
    }
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    ::close(fd);  // releases our shared lock if we got it
    return held;
  }

  Result<FileStat> stat(const std::string& path) override {
    struct stat st;
    FileStat fs;
    if (::stat(path.c_str(), &st) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) return fs;
      return Status::io_error("stat", path, errno);
    }
    fs.exists = true;
    fs.is_dir = S_ISDIR(st.st_mode);
    fs.is_regular = S_ISREG(st.st_mode);
    fs.size = static_cast<uint64_t>(st.st_size);
    return fs;
  }
};

}  // namespace

Fs& posix_fs() {
  static PosixFs fs;
  return fs;
}

std::string path_join(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  if (dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

}  // namespace alog
