// verify against a writer that starts between its lock check and its walk
// of the active segment: the writer's batch in flight looked like a torn
// tail (exit 4 on a healthy log). verify walks again once when the lock was
// taken meanwhile or the active segment changed.
#include <doctest/doctest.h>

#include <functional>

#include "alog/format.h"
#include "alog/log.h"
#include "alog/verify.h"
#include "support/forward_fs.h"
#include "support/mem_fs.h"

using namespace alog;
using alog::test::MemFs;

namespace {

constexpr const char* kDir = "/db/log";

// Forwards to a MemFs and runs `hook` once, at the first open of a segment for reading.
class HookFs final : public alog::test::ForwardFs {
 public:
  using ForwardFs::ForwardFs;
  std::function<void()> hook;
  Result<std::unique_ptr<File>> open(const std::string& path, OpenMode mode) override {
    if (hook && mode == OpenMode::read && path.size() > 4 && path.substr(path.size() - 4) == ".seg") {
      auto h = std::move(hook);
      hook = nullptr;
      h();
    }
    return in_.open(path, mode);
  }
};

}  // namespace

TEST_CASE("verify is not fooled by a writer that starts between its lock check and its walk") {
  MemFs fs;
  REQUIRE(fs.mkdir("/db").is_ok());
  Options o;
  o.fs = &fs;
  {
    auto log = Log::open(kDir, o);
    REQUIRE_MESSAGE(log.is_ok(), log.status().to_string());
    REQUIRE((*log)->append({"a", "b"}).is_ok());
  }
  HookFs hfs(fs);
  std::unique_ptr<FileLock> writer;
  hfs.hook = [&] {
    // A writer takes the lock and has half a batch on the file: a data
    // header whose payload is not there yet, where the EOF was.
    writer = std::move(fs.lock(std::string(kDir) + "/LOCK")).value();
    auto f = std::move(fs.open(std::string(kDir) + "/00000000000000000000.seg", OpenMode::read_write)).value();
    uint64_t len = f->size().value();
    uint8_t h[16];
    format::encode_data_header(1000, 1, true, "", 0, h);
    REQUIRE(f->pwrite(h, sizeof h, len - 16).is_ok());
  };
  VerifyOptions vo;
  vo.fs = &hfs;
  auto r = verify(kDir, vo);
  REQUIRE(r.is_ok());
  CHECK(r->writer_active);
  for (const auto& p : r->problems) CHECK(p.classification != Classification::torn_tail);
  CHECK(r->clean());
}
