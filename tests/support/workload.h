// Randomized workloads for crash and model-based tests: a log on a MemFs driven
// through the Oracle with random batches, syncs, truncations, rolls, recycles
// and reopens. The choices come from a seeded generator (tests) or from fuzz
// input bytes (fuzz/fuzz_model.cc), so every run can be replayed.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <utility>

#include "alog/log.h"
#include "support/mem_fs.h"
#include "support/oracle.h"

namespace alog::test {

// Where the workload's decisions come from.
class Choices {
 public:
  virtual ~Choices() = default;
  // A number in [0, n) (0 when n is 0).
  virtual uint64_t below(uint64_t n) = 0;
  bool percent(uint64_t p) { return below(100) < p; }
};

class RngChoices final : public Choices {
 public:
  explicit RngChoices(uint64_t seed) : rng_(seed) {}
  uint64_t below(uint64_t n) override { return n == 0 ? 0 : rng_() % n; }
  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
};

// Reads decisions from a byte string; 0 once it is used up.
class ByteChoices final : public Choices {
 public:
  ByteChoices(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  uint64_t below(uint64_t n) override;
  bool exhausted() const { return p_ == end_; }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

// Random log options small enough that rolls and recycles happen often.
Options random_options(Choices& c, MemFs* fs);

// Name of an Op for messages ("write", "sync", ...), and the ops a power cut
// is aimed at by crash tests.
inline constexpr Op kCrashOps[] = {Op::write, Op::sync, Op::truncate, Op::rename, Op::sync_dir,
                                  Op::create, Op::unlink};

class Workload {
 public:
  Workload(MemFs& fs, std::string dir, Options options);
  ~Workload();

  // Opens (or reopens) the log through the oracle. after_crash: the MemFs was
  // just crashed. Returns the oracle's report (ok when the open failed only
  // because of an injected fault or a power cut: the model notes it).
  // synced_may_be_lost: see Oracle::check_open.
  CheckReport open(bool after_crash, bool synced_may_be_lost = false);
  // One random operation. Returns false once the power is off.
  bool step(Choices& c);
  // Drops the log without closing it cleanly (as a crash would).
  void abandon();

  bool has_log() const { return log_ != nullptr; }
  // Caps every payload (fuzzing keeps memory small); default: none.
  void set_max_payload(uint64_t n) { max_payload_ = n; }
  // Whether the power went off inside Log::open (recovery) since the last call.
  bool take_power_cut_in_open() { return std::exchange(cut_in_open_, false); }
  Log* log() { return log_.get(); }
  Oracle& oracle() { return oracle_; }
  const Options& options() const { return options_; }
  const std::string& dir() const { return dir_; }
  // The last operations done, one per line, for failure messages.
  std::string trace() const;
  void note(std::string what);
  // Violations found while the workload ran (live-view disagreements, failed reopens).
  std::vector<std::string> violations() const;

 private:
  std::vector<std::string> make_batch(Choices& c);
  MemFs& fs_;
  std::string dir_;
  Options options_;
  Oracle oracle_;
  std::unique_ptr<Log> log_;
  uint64_t tag_ = 0;
  std::deque<std::string> trace_;
  std::vector<std::string> violations_;
  bool cut_in_open_ = false;
  uint64_t max_payload_ = UINT64_MAX;
};

// A hash of every name and byte under `dir` (distinct crash images).
uint64_t tree_hash(MemFs& fs, const std::string& dir);

// An unsigned integer from the environment, or `def` when unset (for replaying
// one seed and for scaling a test up in the slow tier: ALOG_TEST_SCALE).
uint64_t env_u64(const char* name, uint64_t def);
// def * ALOG_TEST_SCALE (1 when unset).
uint64_t scaled(uint64_t def);

}  // namespace alog::test
