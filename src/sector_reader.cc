#include "sector_reader.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace alog::detail {

bool is_read_error(const Status& s) { return s.is(Errc::io) && s.sys_errno() == EIO; }

Result<size_t> SectorReader::pread(void* buf, size_t n, uint64_t off) {
  auto whole = file_.pread(buf, n, off);
  if (whole.is_ok() || !is_read_error(whole.status())) return whole;
  ALOG_ASSIGN(uint64_t len, file_.size());
  if (off >= len) return size_t{0};
  const uint64_t end = off + std::min<uint64_t>(n, len - off);
  auto* out = static_cast<uint8_t*>(buf);
  for (uint64_t s = off / kSectorSize * kSectorSize; s < end; s += kSectorSize) {
    const uint64_t from = std::max(s, off), to = std::min(s + kSectorSize, end);
    auto got = file_.pread(out + (from - off), size_t(to - from), from);
    if (got.is_ok() && *got == to - from) continue;
    if (!got.is_ok() && !is_read_error(got.status())) return got.status();
    if (!got.is_ok()) mark(s, std::min(s + kSectorSize, len));
    // A short read here means the file shrank: what is not there reads as zeros too.
    const size_t have = got.is_ok() ? *got : 0;
    std::memset(out + (from - off) + have, 0, size_t(to - from) - have);
  }
  return size_t(end - off);
}

Status SectorReader::pwritev(const struct iovec*, int, uint64_t off) {
  return Status(Errc::io, "write: the file is open for reading only", EBADF).at(path(), off);
}

Status SectorReader::truncate(uint64_t) {
  return Status(Errc::io, "truncate: the file is open for reading only", EBADF).at(path());
}

void SectorReader::mark(uint64_t off, uint64_t end) {
  // Reads go forward mostly: merge with the last range, else insert in order.
  auto it = std::lower_bound(bad_.begin(), bad_.end(), off,
                             [](const ByteRange& r, uint64_t o) { return r.end < o; });
  if (it != bad_.end() && it->offset <= end) {
    it->offset = std::min(it->offset, off);
    it->end = std::max(it->end, end);
    auto next = std::next(it);
    while (next != bad_.end() && next->offset <= it->end) {
      it->end = std::max(it->end, next->end);
      next = bad_.erase(next);
    }
    return;
  }
  bad_.insert(it, ByteRange{off, end});
}

const ByteRange* SectorReader::overlapping(uint64_t off, uint64_t end) const {
  auto it = std::upper_bound(bad_.begin(), bad_.end(), off,
                             [](uint64_t o, const ByteRange& r) { return o < r.end; });
  return it != bad_.end() && it->offset < end ? &*it : nullptr;
}

std::string range_text(const ByteRange& r) {
  return "bytes " + std::to_string(r.offset) + "-" + std::to_string(r.end - 1);
}

}  // namespace alog::detail
