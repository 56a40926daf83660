// The frame window: its memory is bounded by the file, whatever its limit
// (a slot's synced offset, a frame's length) claims.
#include <doctest/doctest.h>

#include <string>

#include "frame_reader.h"
#include "support/mem_fs.h"

using namespace alog;
using namespace alog::detail;

namespace {

struct FileOf {
  alog::test::MemFs fs;
  std::unique_ptr<File> f;
  explicit FileOf(const std::string& bytes) {
    REQUIRE(fs.mkdir("/d").is_ok());
    auto r = fs.open("/d/x", OpenMode::create_excl);
    REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
    f = std::move(r).value();
    REQUIRE(f->pwrite(bytes.data(), bytes.size(), 0).is_ok());
  }
};

}  // namespace

TEST_CASE("a window whose limit lies past its file's end refuses a 1 GiB claim without allocating it") {
  FileOf file(std::string(4096, 'x'));
  FrameWindow w(file.f.get(), uint64_t(1) << 40, 4096);
  CHECK_FALSE(w.ensure(100, uint64_t(1) << 30));
  CHECK(w.error().is_ok());
  CHECK(w.capacity() <= 4096);
  // What the file does hold is still served.
  REQUIRE(w.ensure(100, 200));
  CHECK(*w.at(100) == 'x');
}

TEST_CASE("a window serves a claim larger than its chunk when the file holds it") {
  FileOf file(std::string(10000, 'y'));
  FrameWindow w(file.f.get(), uint64_t(1) << 40, 1024);
  REQUIRE(w.ensure(0, 9000));
  CHECK(w.capacity() >= 9000);
  CHECK(w.capacity() <= 10000);
  CHECK(*w.at(8999) == 'y');
  CHECK_FALSE(w.ensure(5000, 5001));
}

namespace {
// A file that counts the calls of size() (an fstat on a real file).
struct SizeCounting : File {
  File* f;
  int sizes = 0;
  explicit SizeCounting(File* file) : f(file) {}
  Result<size_t> pread(void* buf, size_t n, uint64_t off) override { return f->pread(buf, n, off); }
  Status pwritev(const struct iovec* iov, int n, uint64_t off) override { return f->pwritev(iov, n, off); }
  Status truncate(uint64_t size) override { return f->truncate(size); }
  Status datasync() override { return f->datasync(); }
  Result<uint64_t> size() override {
    sizes++;
    return f->size();
  }
  const std::string& path() const override { return f->path(); }
};
}  // namespace

TEST_CASE("a window asks its file's size only for a claim larger than its chunk") {
  FileOf file(std::string(10000, 'z'));
  SizeCounting counted(file.f.get());
  // What read(seq) does: a window over a gap, headers read within the chunk.
  FrameWindow w(&counted, uint64_t(1) << 20, 4096);  // the limit a slot claims
  REQUIRE(w.ensure(0, 16));
  REQUIRE(w.ensure(5000, 16));
  CHECK(counted.sizes == 0);
  CHECK(w.capacity() <= 4096);
  // A frame claiming more than the chunk is checked against the file first.
  CHECK_FALSE(w.ensure(5000, 6000));
  CHECK(counted.sizes == 1);
  REQUIRE(w.ensure(1000, 6000));
  CHECK(*w.at(6999) == 'z');
}
