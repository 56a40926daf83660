// LockProbe (src/lock_probe.h): whether a writer holds the LOCK, asked on a
// thread of its own only when the Fs says the question may block and the
// work beside it is long enough to hide it.
#include <doctest/doctest.h>

#include <thread>

#include "lock_probe.h"
#include "support/forward_fs.h"
#include "support/mem_fs.h"

using namespace alog;
using namespace alog::detail;
using alog::test::MemFs;

namespace {

// Forwards to a MemFs, claims the given slowness and records the thread
// that asked is_locked.
class WatchFs final : public alog::test::ForwardFs {
 public:
  WatchFs(Fs& in, bool slow) : ForwardFs(in), slow_(slow) {}
  bool is_locked_slow() const override { return slow_; }
  bool is_locked(const std::string& p) override {
    asks++;
    asker = std::this_thread::get_id();
    return in_.is_locked(p);
  }
  int asks = 0;
  std::thread::id asker;

 private:
  bool slow_;
};

}  // namespace

TEST_CASE("lock probe: a quick Fs is asked once, on the thread that wants the answer") {
  MemFs mem;
  REQUIRE(mem.mkdir("/d").is_ok());
  auto lock = mem.lock("/d/LOCK");
  REQUIRE(lock.is_ok());
  WatchFs fs(mem, false);
  const LockProbe probe(fs, "/d/LOCK", LockProbe::kBesideBytes);
  CHECK(fs.asks == 0);  // nothing asked before the answer is wanted
  CHECK(probe.held());
  CHECK(probe.held());
  CHECK(fs.asks == 1);
  CHECK(fs.asker == std::this_thread::get_id());
}

TEST_CASE("lock probe: a slow Fs is asked on a thread of its own beside long work, and its answer is the Fs's") {
  MemFs mem;
  REQUIRE(mem.mkdir("/d").is_ok());
  WatchFs fs(mem, true);
  const LockProbe probe(fs, "/d/LOCK", LockProbe::kBesideBytes);
  CHECK_FALSE(probe.held());
  CHECK(fs.asks == 1);
  CHECK(fs.asker != std::this_thread::get_id());
}

TEST_CASE("lock probe: beside short work even a slow Fs is asked on the thread that wants the answer") {
  MemFs mem;
  REQUIRE(mem.mkdir("/d").is_ok());
  auto lock = mem.lock("/d/LOCK");
  REQUIRE(lock.is_ok());
  WatchFs fs(mem, true);
  const LockProbe probe(fs, "/d/LOCK", LockProbe::kBesideBytes - 1);
  CHECK(fs.asks == 0);
  CHECK(probe.held());
  CHECK(fs.asks == 1);
  CHECK(fs.asker == std::this_thread::get_id());
}

TEST_CASE("lock probe: the real file system says its lock question may block, the memory one says not") {
  CHECK(posix_fs().is_locked_slow());
  MemFs mem;
  CHECK_FALSE(mem.is_locked_slow());
}

TEST_CASE("lock probe: a probe for the caller's own lock answers not held without asking") {
  const LockProbe probe;
  CHECK_FALSE(probe.held());
}
