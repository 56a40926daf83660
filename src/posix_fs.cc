// The real file system behind the Fs seam: POSIX calls, flock for the LOCK file.
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
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
#include "posix_dir.h"

namespace alog {
namespace {

using detail::At;
using detail::not_regular;
using detail::place_of;
using detail::resolve;
using detail::shared_inode;

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
      // One buffer (a batch of small frames): pwrite, which imports no vector.
      ssize_t r = iovcnt == 1
                      ? ::pwrite(fd_, iov[0].iov_base, iov[0].iov_len, static_cast<off_t>(off))
                      : ::pwritev(fd_, iov, iovcnt, static_cast<off_t>(off));
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

  Result<std::pair<uint64_t, uint64_t>> data_extent(uint64_t off) override {
    ALOG_ASSIGN(uint64_t n, size());
    if (off >= n) return std::pair<uint64_t, uint64_t>{n, n};
    off_t b = ::lseek(fd_, static_cast<off_t>(off), SEEK_DATA);
    if (b < 0) {
      if (errno == ENXIO) return std::pair<uint64_t, uint64_t>{n, n};  // only holes from off
      if (errno == EINVAL || errno == EOPNOTSUPP) return std::pair<uint64_t, uint64_t>{off, n};
      return Status::io_error("seek data", path_, errno).at(path_, off);
    }
    off_t e = ::lseek(fd_, b, SEEK_HOLE);
    if (e < 0) return std::pair<uint64_t, uint64_t>{static_cast<uint64_t>(b), n};
    return std::pair<uint64_t, uint64_t>{static_cast<uint64_t>(b), std::min(n, static_cast<uint64_t>(e))};
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
  Result<std::shared_ptr<DirAnchor>> anchor(const std::string& dir) override { return detail::anchor_dir(dir); }

  Result<std::unique_ptr<File>> open(const std::string& path, OpenMode mode) override {
    // Never follow a link at the last component, and never block: a FIFO or
    // a device where a segment should be is refused after fstat, not waited on.
    int flags = O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
    switch (mode) {
      case OpenMode::read: flags |= O_RDONLY; break;
      case OpenMode::read_write: flags |= O_RDWR; break;
      case OpenMode::create_excl: flags |= O_RDWR | O_CREAT | O_EXCL; break;
      // Replacing, not truncating: O_TRUNC would cut whatever file a planted
      // hard link shares its inode with before any check could refuse it.
      case OpenMode::create_trunc: flags |= O_RDWR | O_CREAT | O_EXCL; break;
    }
    ALOG_ASSIGN(At at, resolve(path));
    if (mode != OpenMode::read) ALOG_TRY(at.check_dir(path));
    if (mode == OpenMode::create_trunc && ::unlinkat(at.fd(), at.name(), 0) != 0 && errno != ENOENT)
      return Status::io_error("unlink", path, errno);
    if (mode == OpenMode::read || mode == OpenMode::read_write) {
      // Refuse a special file before opening it: opening some devices has effects.
      struct stat st;
      if (::fstatat(at.fd(), at.name(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode) &&
          !S_ISDIR(st.st_mode))
        return not_regular(path, st.st_mode);
    }
    int fd;
    do {
      fd = ::openat(at.fd(), at.name(), flags, 0644);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) {
      if (errno == ELOOP) return not_regular(path, S_IFLNK);
      return Status::io_error("open", path, errno);
    }
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      int err = errno;
      ::close(fd);
      return Status::io_error("stat", path, err);
    }
    Status bad;
    if (S_ISDIR(st.st_mode)) bad = Status::io_error("open", path, EISDIR);
    else if (!S_ISREG(st.st_mode)) bad = not_regular(path, st.st_mode);
    else if (mode != OpenMode::read && st.st_nlink != 1) bad = shared_inode(path, st.st_nlink);
    else if (mode != OpenMode::read) bad = at.check(path, place_of(st, fd, "", AT_EMPTY_PATH));
    if (!bad.is_ok()) {
      ::close(fd);
      return bad;
    }
    ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);  // F_SETFL ignores the access mode and creation flags
    return std::unique_ptr<File>(new PosixFile(fd, path));
  }

  Status rename(const std::string& from, const std::string& to) override {
    ALOG_ASSIGN(At a, resolve(from, /*entry=*/true));
    ALOG_ASSIGN(At b, resolve(to, /*entry=*/true));
    if (::renameat(a.fd(), a.name(), b.fd(), b.name()) != 0)
      return Status::io_error("rename to " + to, from, errno);
    return {};
  }

  Status unlink(const std::string& path) override {
    ALOG_ASSIGN(At at, resolve(path, /*entry=*/true));
    if (::unlinkat(at.fd(), at.name(), 0) != 0) return Status::io_error("unlink", path, errno);
    return {};
  }

  Status mkdir(const std::string& path) override {
    ALOG_ASSIGN(At at, resolve(path));
    ALOG_TRY(at.check_dir(path));
    int err = ::mkdirat(at.fd(), at.name(), 0755) == 0 ? 0 : errno;
    struct stat st;
    if (err == 0 || err == EEXIST) {
      if (::fstatat(at.fd(), at.name(), &st, AT_SYMLINK_NOFOLLOW) != 0) return Status::io_error("stat", path, errno);
      // An existing directory is fine; a link (even to a directory) or a file is not.
      if (!S_ISDIR(st.st_mode)) return not_regular(path, st.st_mode, "a directory");
      return at.check(path, place_of(st, at.fd(), at.name(), AT_SYMLINK_NOFOLLOW));
    }
    return Status::io_error("mkdir", path, err);
  }

  Result<std::vector<std::string>> list(const std::string& dir) override {
    ALOG_ASSIGN(At at, resolve(dir));
    int fd = open_dir(at, O_RDONLY);
    DIR* d = fd < 0 ? nullptr : ::fdopendir(fd);
    if (!d) {
      int err = errno;
      if (fd >= 0) ::close(fd);
      return dir_error("list directory", dir, at, err);
    }
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
    ALOG_ASSIGN(At at, resolve(dir));
    int fd = open_dir(at, O_RDONLY);
    if (fd < 0) return dir_error("open directory", dir, at, errno);
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
    ALOG_ASSIGN(At at, resolve(path));
    ALOG_TRY(at.check_dir(path));
    // A link at LOCK is refused, never followed: a dangling one would create its target.
    int fd = ::openat(at.fd(), at.name(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd < 0) {
      if (errno == ELOOP) return not_regular(path, S_IFLNK);
      return Status::io_error("open lock file", path, errno);
    }
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      int err = errno;
      ::close(fd);
      return Status::io_error("stat", path, err);
    }
    // The holder may write its pid into LOCK: never a FIFO or a file another name shares.
    Status bad;
    if (!S_ISREG(st.st_mode)) bad = not_regular(path, st.st_mode);
    else if (st.st_nlink != 1) bad = shared_inode(path, st.st_nlink);
    else bad = at.check(path, place_of(st, fd, "", AT_EMPTY_PATH));
    if (!bad.is_ok()) {
      ::close(fd);
      return bad;
    }
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

  bool is_locked_slow() const override { return true; }

  bool is_locked(const std::string& path) override {
    auto at = resolve(path);
    if (!at.is_ok()) return false;
    struct stat st;
    if (::fstatat(at->fd(), at->name(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) return false;
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
    int fd = ::openat(at->fd(), at->name(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return false;
    bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    ::close(fd);  // releases our shared lock if we got it
    return held;
  }

  Result<uint64_t> available(const std::string& dir) override {
    ALOG_ASSIGN(At at, resolve(dir));
    int fd = open_dir(at, O_PATH);
    if (fd < 0) return dir_error("statvfs", dir, at, errno);
    struct statvfs v;
    int r = ::fstatvfs(fd, &v);
    int err = errno;
    ::close(fd);
    if (r != 0) return Status::io_error("statvfs", dir, err);
    return uint64_t(v.f_bavail) * uint64_t(v.f_frsize);
  }

  Status probe_write(const std::string& path, WriteUse use) override { return detail::probe_write(path, use); }

  Result<FileStat> stat(const std::string& path) override {
    auto at = resolve(path);
    FileStat fs;
    if (!at.is_ok()) {
      // A missing directory on the way: nothing there.
      int err = at.status().sys_errno();
      if (!at.status().is(Errc::not_a_log) && (err == ENOENT || err == ENOTDIR)) return fs;
      return at.status();
    }
    struct stat st;
    if (::fstatat(at->fd(), at->name(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) return fs;
      return Status::io_error("stat", path, errno);
    }
    if (S_ISLNK(st.st_mode)) {
      fs.is_symlink = true;
      if (::fstatat(at->fd(), at->name(), &st, 0) != 0) {
        if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP) return fs;  // dangling
        return Status::io_error("stat", path, errno);
      }
    }
    fs.exists = true;
    fs.is_dir = S_ISDIR(st.st_mode);
    fs.is_regular = S_ISREG(st.st_mode);
    fs.size = static_cast<uint64_t>(st.st_size);
    return fs;
  }

 private:
  // The directory `at` names: a link there is refused when it is below an anchor.
  static int open_dir(const At& at, int how) {
    int fd;
    do {
      fd = ::openat(at.fd(), at.name(), how | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC | at.nofollow_dir());
    } while (fd < 0 && errno == EINTR);
    return fd;
  }
  static Status dir_error(const char* what, const std::string& dir, const At& at, int err) {
    struct stat st;
    if (at.nofollow_dir() && (err == ELOOP || err == ENOTDIR) &&
        ::fstatat(at.fd(), at.name(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode))
      return not_regular(dir, st.st_mode, "a directory");
    return Status::io_error(what, dir, err);
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
