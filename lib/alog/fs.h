// The file-system seam: every byte the library reads or writes goes through
// Fs and File, so tests can inject faults and simulate power loss.
#pragma once

#include <sys/uio.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "alog/status.h"

namespace alog {

// One open file. pread/pwritev are positional and safe to call from several
// threads at once; the other calls need external serialization.
class File {
 public:
  virtual ~File() = default;
  // Reads up to n bytes at off; returns how many were read (less only at end of file).
  virtual Result<size_t> pread(void* buf, size_t n, uint64_t off) = 0;
  // Writes every byte of the buffers at off, or fails. A short write is an error
  // (the bytes that did reach the file are unspecified).
  virtual Status pwritev(const struct iovec* iov, int iovcnt, uint64_t off) = 0;
  Status pwrite(const void* buf, size_t n, uint64_t off) {
    struct iovec v{const_cast<void*>(buf), n};
    return pwritev(&v, 1, off);
  }
  virtual Status truncate(uint64_t size) = 0;
  // fdatasync(2) on Linux. (macOS would need fcntl(F_FULLFSYNC) to reach the medium.)
  virtual Status datasync() = 0;
  virtual Result<uint64_t> size() = 0;
  // The first range [begin, end) at or after `off` that may hold data (not a
  // hole); {size, size} when none. By default the whole rest of the file.
  virtual Result<std::pair<uint64_t, uint64_t>> data_extent(uint64_t off) {
    ALOG_ASSIGN(uint64_t n, size());
    return std::pair<uint64_t, uint64_t>{std::min(off, n), n};
  }
  virtual const std::string& path() const = 0;
};

// A held lock; dropping it releases the lock.
class FileLock {
 public:
  virtual ~FileLock() = default;
};

struct FileStat {
  bool exists = false;
  bool is_dir = false;
  bool is_regular = false;
  bool is_symlink = false;  // the name is a symbolic link (the other fields are its target's)
  uint64_t size = 0;
};

// Every mode refuses a symbolic link at the last component and anything but
// a regular file (Errc::not_a_log), without blocking on a FIFO; the writing
// modes also refuse a file with more than one hard link.
enum class OpenMode : uint8_t {
  read,          // O_RDONLY
  read_write,    // O_RDWR; the file must exist
  create_excl,   // O_RDWR|O_CREAT|O_EXCL; fails if it exists
  create_trunc,  // unlinks any file at the name, then creates it as create_excl does
};

// How a writing command uses a name, for Fs::probe_write.
enum class WriteUse : uint8_t {
  file,       // open(path, read_write): an existing regular file
  lock,       // lock(path): created when missing
  directory,  // names created, renamed or removed in it; mkdir(path) when missing
};

// A log directory held open while it is in use (Fs::anchor); dropping the
// last holder releases it.
class DirAnchor {
 public:
  virtual ~DirAnchor() = default;
  // The directory's descriptor while it is held, for the *at calls of code
  // outside the Fs (the control socket); -1 when nothing is held.
  virtual int fd() const { return -1; }
};

class Fs {
 public:
  virtual ~Fs() = default;
  // Holds directory `dir` open until the last holder of the anchor for it
  // drops it. Meanwhile every call on a path under `dir` reaches the
  // directory opened here, not whatever the path names later, and no
  // link below it is followed; files opened for writing and directories
  // created must be on its file system. By default nothing is held.
  virtual Result<std::shared_ptr<DirAnchor>> anchor(const std::string& dir) {
    (void)dir;
    return std::make_shared<DirAnchor>();
  }
  virtual Result<std::unique_ptr<File>> open(const std::string& path, OpenMode mode) = 0;
  virtual Status rename(const std::string& from, const std::string& to) = 0;
  virtual Status unlink(const std::string& path) = 0;
  // Creates one directory; an existing directory is not an error, an existing
  // link or file is.
  virtual Status mkdir(const std::string& path) = 0;
  // Names in a directory, without "." and "..", in no particular order.
  virtual Result<std::vector<std::string>> list(const std::string& dir) = 0;
  // fsync(2) of a directory, making creates, renames and unlinks in it durable.
  virtual Status sync_dir(const std::string& dir) = 0;
  // Takes an exclusive, non-blocking lock on `path` (created if missing);
  // Errc::locked when another holder has it, in this process or another.
  virtual Result<std::unique_ptr<FileLock>> lock(const std::string& path) = 0;
  // Whether a lock on `path` is held by someone, without taking it (never creates the file).
  virtual bool is_locked(const std::string& path) = 0;
  // Whether is_locked may block for long (PosixFs reads the host's whole
  // lock table): callers then ask it beside their other work, on a thread.
  virtual bool is_locked_slow() const { return false; }
  virtual Result<FileStat> stat(const std::string& path) = 0;
  // The refusal the writing `use` of `path` would meet, found without
  // changing anything (nothing is created, opened for writing or locked):
  // a link or special file, more than one hard link, another file system,
  // no write permission (on the file, or on the directory that would
  // create it) and a read-only file system. The same error the real call
  // gives; whether a lock is held is not asked. By default none.
  virtual Status probe_write(const std::string& path, WriteUse use) {
    (void)path;
    (void)use;
    return {};
  }
  // Bytes an unprivileged writer may still use on the file system holding
  // `dir` (statvfs's f_bavail); UINT64_MAX when the file system cannot tell.
  virtual Result<uint64_t> available(const std::string& dir) {
    (void)dir;
    return UINT64_MAX;
  }
};

// The real file system (POSIX calls; flock for locks). Thread-safe.
Fs& posix_fs();

// "dir/name".
std::string path_join(const std::string& dir, const std::string& name);

}  // namespace alog
