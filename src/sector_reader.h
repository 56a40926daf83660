// Reading a damaged file as salvage does (FORMAT.md, Salvage step 4): a read
// error counts as damage over its 512-byte sectors, which read as zero bytes,
// and the unreadable ranges are remembered for the plan and the manifest.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "alog/fs.h"

namespace alog::detail {

inline constexpr uint64_t kSectorSize = 512;

// Whether s is a read that failed on the medium (EIO): damage over its
// sectors. Any other failure (no descriptor left, no memory, an interrupt)
// says nothing about the file.
bool is_read_error(const Status& s);

// Bytes [offset, end) of a file.
struct ByteRange {
  uint64_t offset = 0, end = 0;
};

// A read-only view of a file whose reads never fail with EIO: a read that
// does is read again sector by sector, and the sectors that still fail read
// as zeros. Other errors are returned as they are.
class SectorReader final : public File {
 public:
  explicit SectorReader(File& file) : file_(file) {}
  Result<size_t> pread(void* buf, size_t n, uint64_t off) override;
  Status pwritev(const struct iovec*, int, uint64_t off) override;
  Status truncate(uint64_t) override;
  Status datasync() override { return file_.datasync(); }
  Result<uint64_t> size() override { return file_.size(); }
  Result<std::pair<uint64_t, uint64_t>> data_extent(uint64_t off) override { return file_.data_extent(off); }
  const std::string& path() const override { return file_.path(); }

  // The unreadable sectors met so far, in order and merged (the last one ends
  // at the end of the file).
  const std::vector<ByteRange>& unreadable() const { return bad_; }
  // The first unreadable range that overlaps [off, end), or null.
  const ByteRange* overlapping(uint64_t off, uint64_t end) const;

 private:
  void mark(uint64_t off, uint64_t end);
  File& file_;
  std::vector<ByteRange> bad_;
};

// "bytes 1024-1535" (the last byte included).
std::string range_text(const ByteRange& r);

}  // namespace alog::detail
