// A bounded cache of open segment files, so that a log of 100,000 segments
// opens under `ulimit -n 1024`: each segment holds a CachedFile, which keeps
// its descriptor only while it is among the most recently used (capacity:
// half the soft RLIMIT_NOFILE, between 4 and 4096, for the whole process)
// and opens the file again by name when it is needed after that. When an
// open finds the process out of descriptors anyway, the cache closes its
// least recently used ones until it succeeds (open_shedding).
//
// A file opened again must be the same segment: its bytes 0-63 (the fixed
// header, which only a recycle rewrites) must be what they were, else the
// call fails with segment_reaped, as when the name is gone. A file with
// writes not yet synced keeps its descriptor until a datasync succeeds: a
// write-back error must reach the descriptor the writes went through
// (another one opened later would not see it).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "alog/fs.h"

namespace alog::detail {

class CachedFile;

class FileCache {
 public:
  explicit FileCache(size_t capacity) : capacity_(capacity) {}
  // The process's cache.
  static FileCache& shared();
  void set_capacity(size_t n);
  size_t capacity() const;
  // Descriptors held now.
  size_t open_count() const;
  // Closes the least recently used descriptor it may close (none with
  // unsynced writes); false when there is none. For a process out of
  // descriptors (open_shedding).
  bool shed();

 private:
  friend class CachedFile;
  // The open file of `f` (opened again when closed), marked most recently used.
  Result<std::shared_ptr<File>> acquire(CachedFile& f, bool write);
  void adopt(CachedFile& f, std::shared_ptr<File> open);
  void wrote(CachedFile& f);  // a write acquire(write=true) began has returned
  void synced(CachedFile& f, uint64_t writes);
  void forget(CachedFile& f);
  // Whether f's descriptor may be closed now (it is opened again by name
  // when needed): not with writes no datasync has covered yet, nor without
  // the header bytes that tell the same segment again; never keep's.
  static bool closable(const CachedFile* f, const CachedFile* keep);
  void evict(const CachedFile* keep);  // with mu_ held
  bool shed_locked(const CachedFile* keep);
  // fs.open of f's file, shedding on EMFILE/ENFILE (mu_ held).
  Result<std::unique_ptr<File>> open_locked(CachedFile& f);

  mutable std::mutex mu_;
  size_t capacity_;
  std::list<CachedFile*> lru_;  // open files, most recently used first
};

class CachedFile final : public File {
 public:
  // `open` is the file as just opened at `path` with `mode` (the mode it is
  // opened again with), or under an earlier name (NAME.seg.tmp before its
  // rename to `path`): errors name `path` either way. `fixed` its first
  // min(64, size) bytes, or none when they could not be read (then it keeps
  // its descriptor).
  CachedFile(Fs& fs, std::string path, OpenMode mode, std::unique_ptr<File> open,
             std::optional<std::string> fixed, FileCache& cache = FileCache::shared());
  ~CachedFile() override;
  CachedFile(const CachedFile&) = delete;
  CachedFile& operator=(const CachedFile&) = delete;

  Result<size_t> pread(void* buf, size_t n, uint64_t off) override;
  Status pwritev(const struct iovec* iov, int iovcnt, uint64_t off) override;
  Status truncate(uint64_t size) override;
  Status datasync() override;
  Result<uint64_t> size() override;
  Result<std::pair<uint64_t, uint64_t>> data_extent(uint64_t off) override;
  const std::string& path() const override { return path_; }

 private:
  friend class FileCache;
  // An error of `f`, opened under an earlier name of the file, names the
  // file by the name it has now: the one it is opened again by.
  Status named(Status st, const File& f) const;
  template <class T>
  Result<T> named(Result<T> r, const File& f) const {
    if (r.is_ok()) return r;
    return named(std::move(r).take_status(), f);
  }
  Fs& fs_;
  const std::string path_;
  const OpenMode mode_;
  const std::optional<std::string> fixed_;
  FileCache& cache_;
  // Guarded by cache_.mu_.
  std::shared_ptr<File> open_;
  std::list<CachedFile*>::iterator pos_;
  uint64_t writes_ = 0, synced_writes_ = 0;  // dirty while writes_ > synced_writes_
  // Writes begun and not returned: counted up under cache_.mu_ as a write
  // begins, down without it as the write returns (one lock per write, not
  // two), read under it by datasync.
  std::atomic<uint64_t> in_flight_{0};
};

// fs.open(path, mode); when the process (or system) is out of descriptors,
// again after each one the cache can close, so that a log of more segments
// than the descriptor limit allows open at once still opens and reads.
Result<std::unique_ptr<File>> open_shedding(Fs& fs, const std::string& path, OpenMode mode,
                                            FileCache& cache = FileCache::shared());
// fs.list(dir), likewise: listing opens the directory.
Result<std::vector<std::string>> list_shedding(Fs& fs, const std::string& dir,
                                               FileCache& cache = FileCache::shared());

// Wraps a segment file just opened (or created) at `path`, or at an earlier
// name it was renamed from (CachedFile), in a CachedFile,
// reading its first 64 bytes (a read error there is for the caller's own
// read of the header to report).
std::shared_ptr<File> cache_segment_file(Fs& fs, const std::string& path, OpenMode mode,
                                                 std::unique_ptr<File> open);
// The same, given the first `got` bytes of the file as the caller just read
// them through `open` (the first 64 of them are kept).
std::shared_ptr<File> cache_segment_file(Fs& fs, const std::string& path, OpenMode mode,
                                         std::unique_ptr<File> open, const uint8_t* head, size_t got);

}  // namespace alog::detail
