// Regression tests for library bugs found by the crash, fault and fuzz tests,
// each named after the behaviour it pins down.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "alog/log.h"
#include "alog/verify.h"
#include "support/mem_fs.h"
#include "support/oracle.h"

using namespace alog;
using namespace alog::test;

namespace {
constexpr const char* kDir = "/db/log";

// Every post-crash state this test samples from `snap`: nothing unsynced kept,
// everything kept, and 64 mixes under FORMAT.md's device model (each unsynced
// or undetermined write kept, dropped or torn by sectors, each directory
// change kept or reverted). `check` runs on each; it names the crash.
template <typename Check>
void for_each_crash(MemFs& fs, const MemFs::Snapshot& snap, Check check) {
  for (int i = 0; i < 66; i++) {
    fs.restore(snap);
    std::string what;
    if (i == 0) {
      fs.crash(1, CrashMode::drop_all);
      what = "drop_all";
    } else if (i == 1) {
      fs.crash(1, CrashMode::keep_all);
      what = "keep_all";
    } else {
      fs.crash(static_cast<uint64_t>(i), CrashWeights::format_model());
      what = "format_model seed " + std::to_string(i);
    }
    CAPTURE(what);
    check();
  }
}

// After every crash for_each_crash samples from the current state: the log
// opens with sequences [first, next), each of `reads` reads back as given,
// and verify calls it clean.
void check_every_crash(MemFs& fs, const Options& o, uint64_t first, uint64_t next,
                       const std::vector<std::pair<uint64_t, std::string>>& reads) {
  for_each_crash(fs, fs.snapshot(), [&] {
    auto log = Log::open(kDir, o);
    REQUIRE_MESSAGE(log.is_ok(), log.status().to_string());
    CHECK((*log)->first_sequence() == first);
    CHECK((*log)->next_sequence() == next);
    for (const auto& [seq, payload] : reads) {
      auto r = (*log)->read(seq);
      REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
      CHECK(r->payload == payload);
    }
    VerifyOptions vo;
    vo.fs = &fs;
    auto v = verify(kDir, vo);
    REQUIRE(v.is_ok());
    CHECK(v->clean());
  });
}
}  // namespace

// truncate_before(seq) into records that were appended but not synced used to
// write a slot whose synced offset (the new read offset) claimed bytes the
// disk did not have yet; a crash before the following fsync could keep the
// slot and drop the data, and the log no longer opened ("synced offset lies
// beyond the end of the file").
TEST_CASE("truncate_before into the unsynced tail leaves a log that opens after any crash") {
  // A power cut at each write and fsync the truncation makes, then every
  // combination the crash seeds give of unsynced writes kept or dropped.
  for (Op op : {Op::write, Op::sync}) {
    for (uint64_t nth = 1; nth <= 3; nth++) {
      const std::string op_text = op_name(op);
      CAPTURE(op_text);
      CAPTURE(nth);
      MemFs fs;
      REQUIRE(fs.mkdir("/db").is_ok());
      Options opt;
      opt.fs = &fs;
      {
        auto log = Log::open(kDir, opt);
        REQUIRE(log.is_ok());
        REQUIRE((*log)->append({"one", "two", "three"}).is_ok());
        REQUIRE((*log)->append({"four"}).is_ok());
        fs.fail(op, nth, FaultKind::power_off);
        (void)(*log)->truncate_before(3);
        fs.power_off();
        fs.clear_faults();
      }
      MemFs::Snapshot snap = fs.snapshot();
      CrashWeights w{};
      w.zero = w.garble = w.torn = 0;  // each unsynced write kept or dropped
      for (uint64_t seed = 0; seed < 64; seed++) {
        CAPTURE(seed);
        fs.restore(snap);
        fs.crash(seed, w);
        auto log = Log::open(kDir, opt);
        REQUIRE_MESSAGE(log.is_ok(), log.status().to_string());
        CHECK((*log)->first_sequence() <= 3);
      }
    }
  }
}

// verify() goes on past payload damage when a later checkpoint confirms the
// headers in between. When the active segment's synced offset lay inside that
// tentatively walked span, the synced-offset check was skipped there and done
// at the next frame instead, which then "passed over" the synced offset: a
// second, spurious corruption report at the wrong offset.
TEST_CASE("verify reports payload damage once when its confirming checkpoint lies past the synced offset") {
  MemFs fs;
  REQUIRE(fs.mkdir("/db").is_ok());
  Options opt;
  opt.fs = &fs;
  opt.checkpoint_stride = 4;
  std::string img;
  {
    auto log = Log::open(kDir, opt);
    REQUIRE(log.is_ok());
    Log& l = **log;
    REQUIRE(l.append({"first record"}).is_ok());  // frame at 192
    REQUIRE(l.append({"second"}).is_ok());
    REQUIRE(l.sync().is_ok());                        // synced offset after two records
    REQUIRE(l.append({"third", "fourth"}).is_ok());  // pending 4: a checkpoint follows
    REQUIRE(l.append({"fifth"}).is_ok());            // a frame after the checkpoint
    img = *fs.current_image(std::string(kDir) + "/00000000000000000000.seg");
  }
  MemFs copy;
  REQUIRE(copy.mkdir("/db").is_ok());
  REQUIRE(copy.mkdir(kDir).is_ok());
  img[192 + 16 + 2] ^= 0x04;  // a payload byte of the first record
  REQUIRE(copy.set_contents(std::string(kDir) + "/00000000000000000000.seg", img).is_ok());
  VerifyOptions vo;
  vo.fs = &copy;
  auto r = verify(kDir, vo);
  REQUIRE(r.is_ok());
  REQUIRE(r->problems.size() == 1);
  CHECK(r->problems[0].kind == "frame_crc");
  CHECK(r->problems[0].offset == 192);
  CHECK(r->problems[0].classification == Classification::corruption);
  CHECK(r->segments[0].clean);
}

// After an fsync failed in an earlier process (Linux: the pages are marked
// clean, so what reads back may never reach the disk), a slot write it
// covered can be missing on disk while the page cache still shows it. A
// reopen that found the synced offset already at the EOF wrote no slot, and
// a roll right after it then saw "synced offset == EOF position" and sealed
// the segment without writing one either: on disk the sealed segment kept an
// old synced offset, and after a power cut the log no longer opened (a
// sequence gap between the segments).
TEST_CASE("a roll right after reopening a log whose last fsync failed seals the segment on disk") {
  MemFs fs;
  REQUIRE(fs.mkdir("/db").is_ok());
  Options o;
  o.fs = &fs;
  o.max_segment_size = 1024;
  {
    auto log = Log::open(kDir, o);
    REQUIRE(log.is_ok());
    REQUIRE((*log)->append({"a", "b"}).is_ok());
    REQUIRE((*log)->sync().is_ok());  // the slot write it makes is not synced yet
    fs.fail(Op::sync, 1, FaultKind::sync_lose);
    CHECK_FALSE((*log)->close().is_ok());  // ... and this fsync drops it
  }
  {
    auto log = Log::open(kDir, o);  // the same machine: the page cache shows the slot
    REQUIRE(log.is_ok());
    REQUIRE((*log)->append({std::string(800, 'x')}).is_ok());  // does not fit: a roll
    REQUIRE((*log)->segments().size() == 2);
    REQUIRE((*log)->sync().is_ok());
    REQUIRE((*log)->close().is_ok());
  }
  fs.crash(1, CrashMode::drop_all);
  auto log = Log::open(kDir, o);
  REQUIRE_MESSAGE(log.is_ok(), log.status().to_string());
  CHECK((*log)->next_sequence() == 3);
  VerifyOptions vo;
  vo.fs = &fs;
  auto r = verify(kDir, vo);
  REQUIRE(r.is_ok());
  CHECK(r->clean());
}

// Log::open makes the log directory and syncs its parent. When that sync
// failed, a second open found the directory there and created the first
// segment without syncing the parent: a power cut could then take the whole
// directory entry, and every synced record, with it. Syncing the parent in
// the second open is not enough either: a failed fsync is final (FORMAT.md),
// so the entry the failed sync covered may still be lost; the second open
// renames the empty directory away and back, a change its sync does cover.
TEST_CASE("a log created after a failed sync of its parent directory survives a power cut") {
  MemFs fs;
  REQUIRE(fs.mkdir("/db").is_ok());
  Options o;
  o.fs = &fs;
  fs.fail(Op::sync_dir, 1, FaultKind::eio);
  REQUIRE_FALSE(Log::open(kDir, o).is_ok());  // mkdir done, the parent's sync failed
  {
    auto log = Log::open(kDir, o);
    REQUIRE(log.is_ok());
    REQUIRE((*log)->append({"kept"}).is_ok());
    REQUIRE((*log)->sync().is_ok());
  }
  check_every_crash(fs, o, 0, 1, {{0, "kept"}});
  CHECK(fs.list("/db").value() == std::vector<std::string>{"log"});  // no leftover name
}

// A roll renames the new segment into place and syncs the directory. When
// that sync failed the log failed, but the name was there; a reopen on the
// same machine listed it, appended to it and synced the file, without ever
// syncing the directory. A power cut then reverted the name, and records
// synced after the reopen were gone. The reopen's sync of the directory is
// not enough (a failed fsync is final, FORMAT.md): the name the failed sync
// covered may still be lost. The reopen installs the empty active segment
// again (NAME.seg.tmp renamed over it), a change its sync does cover.
TEST_CASE("records synced into a segment whose directory sync failed earlier survive a power cut") {
  MemFs fs;
  REQUIRE(fs.mkdir("/db").is_ok());
  Options o;
  o.fs = &fs;
  o.max_segment_size = 1024;
  {
    auto log = Log::open(kDir, o);
    REQUIRE(log.is_ok());
    REQUIRE((*log)->append({std::string(700, 'a')}).is_ok());
    fs.fail(Op::sync_dir, 1, FaultKind::eio);  // the roll's sync after the rename
    REQUIRE_FALSE((*log)->append({std::string(700, 'b')}).is_ok());
    REQUIRE((*log)->failed());
  }
  {
    auto log = Log::open(kDir, o);
    REQUIRE(log.is_ok());
    REQUIRE((*log)->segments().size() == 2);  // the new segment, by its current name
    REQUIRE((*log)->append({"c"}).is_ok());
    REQUIRE((*log)->sync().is_ok());
  }
  check_every_crash(fs, o, 0, 2, {{1, "c"}});
}

// Open-time recovery's torn-tail branch cut at B and wrote a slot whose
// synced offset is B, but did not write again the bytes between the old
// synced offset and B, as the clean branch does. When an fsync had failed in
// the earlier process, those bytes were only in the page cache: after a
// power cut the slot vouched for bytes that were never on disk.
TEST_CASE("cutting a torn tail after a failed fsync makes the records before the cut durable first") {
  MemFs fs;
  REQUIRE(fs.mkdir("/db").is_ok());
  Options o;
  o.fs = &fs;
  {
    auto log = Log::open(kDir, o);
    REQUIRE(log.is_ok());
    REQUIRE((*log)->append({"a", "b"}).is_ok());
    REQUIRE((*log)->sync().is_ok());
    REQUIRE((*log)->close().is_ok());
  }
  {
    auto log = Log::open(kDir, o);
    REQUIRE(log.is_ok());
    REQUIRE((*log)->append({"c"}).is_ok());
    fs.fail(Op::sync, 1, FaultKind::sync_lose);
    CHECK_FALSE((*log)->sync().is_ok());  // "c" now reads back but may never reach the disk
  }
  {
    // A torn batch after "c": its EOF overwritten (still the same machine).
    auto f = fs.open(std::string(kDir) + "/00000000000000000000.seg", OpenMode::read_write);
    REQUIRE(f.is_ok());
    uint64_t len = (*f)->size().value();
    std::string junk(16, '\xab');
    REQUIRE((*f)->pwrite(junk.data(), junk.size(), len - 16).is_ok());
  }
  {
    auto log = Log::open(kDir, o);  // cuts the torn tail after "c"
    REQUIRE_MESSAGE(log.is_ok(), log.status().to_string());
    REQUIRE((*log)->next_sequence() == 3);
  }
  fs.crash(1, CrashMode::drop_all);
  auto log = Log::open(kDir, o);
  REQUIRE_MESSAGE(log.is_ok(), log.status().to_string());
  CHECK((*log)->next_sequence() == 3);
  auto c = (*log)->read(2);
  REQUIRE_MESSAGE(c.is_ok(), c.status().to_string());
  CHECK(c->payload == "c");
  VerifyOptions vo;
  vo.fs = &fs;
  auto r = verify(kDir, vo);
  REQUIRE(r.is_ok());
  CHECK(r->clean());
}

// The same cut under the whole device model: an fsync that fails with EIO
// leaves what it covered undetermined (any subset of its sectors may reach the
// disk, FORMAT.md "A failed fsync is final"), and no later fsync settles it.
// Open-time recovery vouches for the bytes before the cut only after writing
// them again; without that, some crash below drops or tears them under a slot
// that calls them synced (verify: corruption, the recovered records gone).
TEST_CASE("an open that cuts a torn tail after a failed fsync leaves a clean log with every record before the cut after any power cut") {
  MemFs fs;
  REQUIRE(fs.mkdir("/db").is_ok());
  Options o;
  o.fs = &fs;
  const std::vector<std::string> synced = {"a", std::string(700, 'b')};
  const std::vector<std::string> after = {std::string(900, 'c'), "d", std::string(1500, 'e')};
  {
    auto log = Log::open(kDir, o);
    REQUIRE(log.is_ok());
    const std::vector<std::string_view> first(synced.begin(), synced.end());
    REQUIRE((*log)->append(first).is_ok());
    REQUIRE((*log)->sync().is_ok());
    for (const auto& p : after) REQUIRE((*log)->append({std::string_view(p)}).is_ok());  // three batches
    fs.fail(Op::sync, 1, FaultKind::eio);
    CHECK_FALSE((*log)->sync().is_ok());  // the three batches: undetermined from here on
  }
  {
    // A torn batch after them: their EOF overwritten (still the same machine).
    auto f = fs.open(std::string(kDir) + "/00000000000000000000.seg", OpenMode::read_write);
    REQUIRE(f.is_ok());
    uint64_t len = (*f)->size().value();
    std::string junk(40, '\xab');
    REQUIRE((*f)->pwrite(junk.data(), junk.size(), len - 16).is_ok());
  }
  {
    auto log = Log::open(kDir, o);  // cuts the torn tail after "e"
    REQUIRE_MESSAGE(log.is_ok(), log.status().to_string());
    REQUIRE((*log)->tail_cut().has_value());
    REQUIRE((*log)->next_sequence() == 5);
  }
  std::vector<std::string> all = synced;
  all.insert(all.end(), after.begin(), after.end());
  std::vector<std::pair<uint64_t, std::string>> reads;
  for (uint64_t seq = 0; seq < all.size(); seq++) reads.emplace_back(seq, all[seq]);
  check_every_crash(fs, o, 0, all.size(), reads);
}

// truncate_after renames the segments after the cut to .seg.del and syncs the
// directory after each. When that sync failed, the log failed; a reopen on
// the same machine deleted the .seg.del and appended in its place, in the
// segment before it. But a failed fsync is final (FORMAT.md): the rename may
// not be durable whatever later syncs do, and a power cut could bring the
// removed segment back behind those records (the log no longer opened: a
// sequence gap). The reopen now makes the leftover the next segment, through
// a new rename a sync does cover.
TEST_CASE("records appended after a truncate_after whose directory sync failed survive a power cut") {
  MemFs fs;
  REQUIRE(fs.mkdir("/db").is_ok());
  Options o;
  o.fs = &fs;
  o.max_segment_size = 1024;
  {
    auto log = Log::open(kDir, o);
    REQUIRE(log.is_ok());
    REQUIRE((*log)->append({std::string(300, 'a'), std::string(300, 'b')}).is_ok());  // 0, 1
    REQUIRE((*log)->append({std::string(700, 'c')}).is_ok());  // a roll: 2
    REQUIRE((*log)->segments().size() == 2);
    REQUIRE((*log)->sync().is_ok());
    fs.fail(Op::sync_dir, 1, FaultKind::eio);  // the sync after the rename to .seg.del
    REQUIRE_FALSE((*log)->truncate_after(1).is_ok());
    REQUIRE((*log)->failed());
  }
  {
    auto log = Log::open(kDir, o);
    REQUIRE_MESSAGE(log.is_ok(), log.status().to_string());
    REQUIRE((*log)->next_sequence() == 2);  // the truncation is done
    REQUIRE((*log)->append({"d"}).is_ok());
    REQUIRE((*log)->sync().is_ok());
  }
  check_every_crash(fs, o, 0, 3, {{2, "d"}});
}

// truncate_before renames the oldest segments to .seg.del and syncs the
// directory after each. When that sync failed, a reopen deleted the
// .seg.del; but the rename may not be durable (a failed fsync is final,
// FORMAT.md), so a power cut could bring the old segment back. Once this
// process had removed the segment after it too (a truncate_before of its
// own, or a recycle), the one that came back no longer met the next: the
// log did not open (a sequence gap). The reopen now changes the name again:
// an empty tombstone segment is written, renamed to the old name and
// unlinked there, then the directory synced (open_renew.cc).
TEST_CASE("a segment a failed truncate_before was removing stays removed after the next removal and a power cut") {
  MemFs fs;
  REQUIRE(fs.mkdir("/db").is_ok());
  Options o;
  o.fs = &fs;
  o.max_segment_size = 1024;
  {
    auto log = Log::open(kDir, o);
    REQUIRE(log.is_ok());
    for (char c : {'a', 'b', 'c', 'd'}) REQUIRE((*log)->append({std::string(700, c)}).is_ok());  // 4 segments
    REQUIRE((*log)->segments().size() == 4);
    REQUIRE((*log)->sync().is_ok());
    fs.fail(Op::sync_dir, 1, FaultKind::eio);  // the sync after renaming the first to .seg.del
    REQUIRE_FALSE((*log)->truncate_before(1).is_ok());
    REQUIRE((*log)->failed());
  }
  {
    auto log = Log::open(kDir, o);
    REQUIRE_MESSAGE(log.is_ok(), log.status().to_string());
    REQUIRE((*log)->first_sequence() == 1);
    REQUIRE((*log)->truncate_before(2).is_ok());  // removes the segment after it
    REQUIRE((*log)->append({"e"}).is_ok());
    REQUIRE((*log)->sync().is_ok());
  }
  check_every_crash(fs, o, 2, 5, {{4, "e"}});
}

// The same for a recycle: it renames the oldest segment to NEW.seg.tmp and
// syncs the directory; when that sync failed, the reopen deleted the .tmp,
// and a power cut after this process recycled the next segment brought the
// first back in front of a gap.
TEST_CASE("a segment a failed recycle was reusing stays removed after the next recycle and a power cut") {
  MemFs fs;
  REQUIRE(fs.mkdir("/db").is_ok());
  Options o;
  o.fs = &fs;
  o.max_segment_size = 1024;
  o.max_segments = 3;
  {
    auto log = Log::open(kDir, o);
    REQUIRE(log.is_ok());
    for (char c : {'a', 'b', 'c'}) REQUIRE((*log)->append({std::string(700, c)}).is_ok());  // 3 segments
    REQUIRE((*log)->segments().size() == 3);
    REQUIRE((*log)->sync().is_ok());
    fs.fail(Op::sync_dir, 1, FaultKind::eio);  // the recycle's sync after renaming the oldest
    REQUIRE_FALSE((*log)->append({std::string(700, 'd')}).is_ok());
    REQUIRE((*log)->failed());
  }
  {
    auto log = Log::open(kDir, o);
    REQUIRE_MESSAGE(log.is_ok(), log.status().to_string());
    REQUIRE((*log)->first_sequence() == 1);
    for (char c : {'d', 'e'}) REQUIRE((*log)->append({std::string(700, c)}).is_ok());  // a roll, a recycle
    REQUIRE((*log)->first_sequence() == 2);
    REQUIRE((*log)->sync().is_ok());
  }
  check_every_crash(fs, o, 2, 5, {{4, std::string(700, 'e')}});
}
