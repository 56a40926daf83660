// The bounded cache of segment descriptors (src/file_cache.h): at most its
// capacity open, files opened again by name only when they are the same
// segment, and no descriptor with unsynced writes closed.
#include <doctest/doctest.h>

#include <cerrno>
#include <string>
#include <vector>

#include "file_cache.h"
#include "support/mem_fs.h"

using namespace alog;
using namespace alog::detail;
using namespace alog::test;

namespace {

std::string header_of(int i) { return "HEADER-" + std::to_string(i) + std::string(64, 'h'); }

std::unique_ptr<CachedFile> cached(MemFs& fs, FileCache& cache, int i, OpenMode mode = OpenMode::read) {
  const std::string path = "/d/f" + std::to_string(i);
  auto f = fs.open(path, mode);
  REQUIRE(f.is_ok());
  return std::make_unique<CachedFile>(fs, path, mode, std::move(*f), header_of(i).substr(0, 64), cache);
}

void make_files(MemFs& fs, int n) {
  REQUIRE(fs.mkdir("/d"));
  for (int i = 0; i < n; i++) REQUIRE(fs.set_contents("/d/f" + std::to_string(i), header_of(i) + "body"));
}

std::string read_at(File& f, uint64_t off, size_t n) {
  std::string s(n, '\0');
  auto r = f.pread(s.data(), n, off);
  REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  s.resize(*r);
  return s;
}

}  // namespace

TEST_CASE("the descriptor cache never holds more than its capacity and every read stays right") {
  MemFs fs;
  make_files(fs, 10);
  FileCache cache(3);
  std::vector<std::unique_ptr<CachedFile>> files;
  for (int i = 0; i < 10; i++) {
    files.push_back(cached(fs, cache, i));
    CHECK(cache.open_count() <= 3);
  }
  const uint64_t opens = fs.calls(Op::open);
  for (int round = 0; round < 3; round++)
    for (int i = 0; i < 10; i++) {
      CHECK(read_at(*files[size_t(i)], 0, 8) == header_of(i).substr(0, 8));
      CHECK(cache.open_count() <= 3);
    }
  CHECK(fs.calls(Op::open) > opens);  // closed files were opened again
  files.clear();
  CHECK(cache.open_count() == 0);
}

TEST_CASE("a file replaced or removed while its descriptor was closed reads as segment_reaped") {
  MemFs fs;
  make_files(fs, 3);
  FileCache cache(1);
  auto a = cached(fs, cache, 0);
  auto b = cached(fs, cache, 1);  // closes a's descriptor
  REQUIRE(cache.open_count() == 1);
  REQUIRE(fs.set_contents("/d/f0", header_of(7) + "body"));  // a recycle rewrote its header
  auto r = a->pread(nullptr, 0, 0);
  CHECK(r.status().is(Errc::segment_reaped));
  auto c = cached(fs, cache, 2);  // closes b's
  REQUIRE(fs.unlink("/d/f1"));
  CHECK(b->size().status().is(Errc::segment_reaped));
  // The same segment's bytes under its name (a copy) read on.
  REQUIRE(fs.set_contents("/d/f0", header_of(0) + "body"));
  CHECK(read_at(*a, header_of(0).size(), 4) == "body");
}

TEST_CASE("a file with unsynced writes keeps its descriptor until a datasync succeeds") {
  MemFs fs;
  make_files(fs, 3);
  FileCache cache(1);
  auto a = cached(fs, cache, 0, OpenMode::read_write);
  REQUIRE(a->pwrite("x", 1, 100).is_ok());
  auto b = cached(fs, cache, 1);
  CHECK(cache.open_count() == 2);  // a is dirty: not closed
  const uint64_t opens = fs.calls(Op::open);
  CHECK(read_at(*a, 100, 1) == "x");
  CHECK(fs.calls(Op::open) == opens);  // through the descriptor the write went through
  REQUIRE(a->datasync().is_ok());
  CHECK(cache.open_count() == 1);
  // A failed sync leaves it dirty, and open.
  REQUIRE(a->pwrite("y", 1, 101).is_ok());
  fs.fail(Op::sync, 1, FaultKind::eio);
  CHECK_FALSE(a->datasync().is_ok());
  auto c = cached(fs, cache, 2);
  CHECK(cache.open_count() == 2);
}

TEST_CASE("a file adopted from the name it was created under names itself by its name now in errors") {
  MemFs fs;
  REQUIRE(fs.mkdir("/d"));
  auto opened = fs.open("/d/f.tmp", OpenMode::create_trunc);
  REQUIRE(opened.is_ok());
  REQUIRE((*opened)->pwrite(header_of(0).data(), 64, 0).is_ok());
  REQUIRE(fs.rename("/d/f.tmp", "/d/f"));
  FileCache cache(4);
  CachedFile f(fs, "/d/f", OpenMode::read_write, std::move(*opened), header_of(0).substr(0, 64), cache);
  fs.fail(Op::write, 1, FaultKind::enospc);
  Status w = f.pwrite("x", 1, 100);
  CHECK(w.sys_errno() == ENOSPC);
  CHECK(w.path() == "/d/f");
  fs.fail(Op::sync, 1, FaultKind::eio);
  Status s = f.datasync();
  CHECK(s.sys_errno() == EIO);
  CHECK(s.path() == "/d/f");
}
