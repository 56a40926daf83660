#include "file_cache.h"

#include <sys/resource.h>

#include <cerrno>

#include <algorithm>

#include "alog/format.h"

namespace alog::detail {

FileCache& FileCache::shared() {
  static FileCache cache([] {
    struct rlimit r {};
    size_t soft = 1024;
    if (::getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur != RLIM_INFINITY) soft = size_t(r.rlim_cur);
    else if (r.rlim_cur == RLIM_INFINITY) soft = 8192;
    return std::clamp<size_t>(soft / 2, 4, 4096);
  }());
  return cache;
}

void FileCache::set_capacity(size_t n) {
  std::lock_guard<std::mutex> g(mu_);
  capacity_ = std::max<size_t>(n, 1);
  evict(nullptr);
}

size_t FileCache::capacity() const {
  std::lock_guard<std::mutex> g(mu_);
  return capacity_;
}

size_t FileCache::open_count() const {
  std::lock_guard<std::mutex> g(mu_);
  return lru_.size();
}

bool FileCache::closable(const CachedFile* f, const CachedFile* keep) {
  return f != keep && f->writes_ <= f->synced_writes_ && f->fixed_;
}

void FileCache::evict(const CachedFile* keep) {
  for (auto it = lru_.end(); lru_.size() > capacity_ && it != lru_.begin();) {
    --it;
    CachedFile* f = *it;
    if (!closable(f, keep)) continue;
    f->open_.reset();  // closes once calls in flight on it return
    it = lru_.erase(it);
  }
}

bool FileCache::shed_locked(const CachedFile* keep) {
  for (auto it = lru_.end(); it != lru_.begin();) {
    --it;
    CachedFile* f = *it;
    if (!closable(f, keep)) continue;
    f->open_.reset();
    lru_.erase(it);
    return true;
  }
  return false;
}

bool FileCache::shed() {
  std::lock_guard<std::mutex> g(mu_);
  return shed_locked(nullptr);
}

namespace {

// op(), again after each shed() that closed a descriptor while it fails
// for want of them (EMFILE, ENFILE).
template <class Op, class Shed>
auto retrying(Op op, Shed shed) {
  while (true) {
    auto done = op();
    if (done.is_ok()) return done;
    const Status& st = done.status();
    const bool no_descriptor = st.code() == Errc::io && (st.sys_errno() == EMFILE || st.sys_errno() == ENFILE);
    if (!no_descriptor || !shed()) return done;
  }
}

template <class Shed>
Result<std::unique_ptr<File>> open_retrying(Fs& fs, const std::string& path, OpenMode mode, Shed shed) {
  return retrying([&] { return fs.open(path, mode); }, shed);
}

}  // namespace

Result<std::unique_ptr<File>> FileCache::open_locked(CachedFile& f) {
  return open_retrying(f.fs_, f.path_, f.mode_, [&] { return shed_locked(&f); });
}

Result<std::unique_ptr<File>> open_shedding(Fs& fs, const std::string& path, OpenMode mode,
                                            FileCache& cache) {
  return open_retrying(fs, path, mode, [&] { return cache.shed(); });
}

Result<std::vector<std::string>> list_shedding(Fs& fs, const std::string& dir, FileCache& cache) {
  return retrying([&] { return fs.list(dir); }, [&] { return cache.shed(); });
}

void FileCache::adopt(CachedFile& f, std::shared_ptr<File> open) {
  std::lock_guard<std::mutex> g(mu_);
  f.open_ = std::move(open);
  lru_.push_front(&f);
  f.pos_ = lru_.begin();
  evict(&f);
}

Result<std::shared_ptr<File>> FileCache::acquire(CachedFile& f, bool write) {
  std::lock_guard<std::mutex> g(mu_);
  if (!f.open_) {
    auto opened = open_locked(f);
    if (!opened.is_ok()) {
      if (opened.status().is(Errc::not_found))
        return Status(Errc::segment_reaped, f.path_ + ": segment file was removed").at(f.path_);
      return opened.status();
    }
    std::string now(f.fixed_->size(), '\0');
    ALOG_ASSIGN(size_t got, (*opened)->pread(now.data(), now.size(), 0));
    if (got != now.size() || now != *f.fixed_)
      return Status(Errc::segment_reaped, f.path_ + ": segment file was replaced (its header changed)")
          .at(f.path_);
    f.open_ = std::shared_ptr<File>(std::move(*opened));
    lru_.push_front(&f);
    f.pos_ = lru_.begin();
    evict(&f);
  } else if (f.pos_ != lru_.begin()) {
    lru_.splice(lru_.begin(), lru_, f.pos_);
  }
  if (write) {
    f.writes_++;
    f.in_flight_.fetch_add(1, std::memory_order_relaxed);
  }
  return f.open_;
}

void FileCache::wrote(CachedFile& f) {
  // After the write returned: a datasync that sees the count without it
  // syncs after the write too.
  f.in_flight_.fetch_sub(1, std::memory_order_release);
}

void FileCache::synced(CachedFile& f, uint64_t writes) {
  std::lock_guard<std::mutex> g(mu_);
  f.synced_writes_ = std::max(f.synced_writes_, writes);
  evict(nullptr);
}

void FileCache::forget(CachedFile& f) {
  std::lock_guard<std::mutex> g(mu_);
  if (f.open_) lru_.erase(f.pos_);
  f.open_.reset();
}

CachedFile::CachedFile(Fs& fs, std::string path, OpenMode mode, std::unique_ptr<File> open,
                       std::optional<std::string> fixed, FileCache& cache)
    : fs_(fs), path_(std::move(path)), mode_(mode), fixed_(std::move(fixed)), cache_(cache) {
  cache_.adopt(*this, std::shared_ptr<File>(std::move(open)));
}

CachedFile::~CachedFile() { cache_.forget(*this); }

Result<size_t> CachedFile::pread(void* buf, size_t n, uint64_t off) {
  ALOG_ASSIGN(auto f, cache_.acquire(*this, false));
  return named(f->pread(buf, n, off), *f);
}

Status CachedFile::pwritev(const struct iovec* iov, int iovcnt, uint64_t off) {
  ALOG_ASSIGN(auto f, cache_.acquire(*this, true));
  Status st = f->pwritev(iov, iovcnt, off);
  cache_.wrote(*this);
  return named(std::move(st), *f);
}

Status CachedFile::truncate(uint64_t size) {
  ALOG_ASSIGN(auto f, cache_.acquire(*this, true));
  Status st = f->truncate(size);
  cache_.wrote(*this);
  return named(std::move(st), *f);
}

Status CachedFile::datasync() {
  uint64_t writes;
  bool settled;  // no write in flight: the sync covers every write counted
  std::shared_ptr<File> f;
  {
    ALOG_ASSIGN(f, cache_.acquire(*this, false));
    std::lock_guard<std::mutex> g(cache_.mu_);
    writes = writes_;
    settled = in_flight_.load(std::memory_order_acquire) == 0;
  }
  ALOG_TRY(named(f->datasync(), *f));
  if (settled) cache_.synced(*this, writes);
  return {};
}

Result<uint64_t> CachedFile::size() {
  ALOG_ASSIGN(auto f, cache_.acquire(*this, false));
  return named(f->size(), *f);
}

Result<std::pair<uint64_t, uint64_t>> CachedFile::data_extent(uint64_t off) {
  ALOG_ASSIGN(auto f, cache_.acquire(*this, false));
  return named(f->data_extent(off), *f);
}

Status CachedFile::named(Status st, const File& f) const {
  if (!st.is_ok() && f.path() != path_ && st.path() == f.path()) st.at(path_, st.offset());
  return st;
}

std::shared_ptr<File> cache_segment_file(Fs& fs, const std::string& path, OpenMode mode,
                                         std::unique_ptr<File> open) {
  uint8_t head[format::kFixedSize];
  auto got = open->pread(head, sizeof head, 0);
  if (!got.is_ok()) return std::make_shared<CachedFile>(fs, path, mode, std::move(open), std::nullopt);
  return cache_segment_file(fs, path, mode, std::move(open), head, *got);
}

std::shared_ptr<File> cache_segment_file(Fs& fs, const std::string& path, OpenMode mode,
                                         std::unique_ptr<File> open, const uint8_t* head, size_t got) {
  std::string fixed(reinterpret_cast<const char*>(head), std::min<size_t>(got, format::kFixedSize));
  return std::make_shared<CachedFile>(fs, path, mode, std::move(open), std::move(fixed));
}

}  // namespace alog::detail
