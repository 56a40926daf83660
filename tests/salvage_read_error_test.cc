// Unreadable sectors (FORMAT.md, Salvage step 4): verify reports a read
// error as corruption, and recover --force counts it as damage over its
// 512-byte sectors: the records over them are lost, every other record keeps
// its sequence, and the copy in lost+found holds what could be read, its
// manifest saying what could not.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <map>
#include <set>

#include "alog/format.h"
#include "alog/log.h"
#include "alog/scanner.h"
#include "alog/verify.h"
#include "support/forward_fs.h"
#include "support/mem_fs.h"

using namespace alog;
using namespace alog::test;
using nlohmann::json;

namespace {

const std::string kDir = "/db/log";

struct Written {
  std::map<uint64_t, std::string> records;
  std::map<uint64_t, std::pair<std::string, uint64_t>> where;  // seq: segment, offset
  std::vector<std::string> segments;
};

// Three sealed segments of about 4 KiB and an active one, a record per batch.
Written make_log(MemFs& fs) {
  REQUIRE(fs.mkdir("/db"));
  Options o;
  o.fs = &fs;
  o.max_segment_size = 4096;
  o.checkpoint_stride = 4;
  o.sync_on_append = true;
  uint64_t t = 1767225600000;
  o.clock_ms = [&t] { return t += 1000; };
  Written w;
  auto log = Log::open(kDir, o);
  REQUIRE(log.is_ok());
  for (uint64_t seq = 0; (*log)->segments().size() < 4; seq++) {
    std::string p = "record-" + std::to_string(seq) + std::string(seq % 37 + 40, 'r');
    auto last = (*log)->append({std::string_view(p)});
    REQUIRE(last.is_ok());
    w.records[*last] = p;
  }
  REQUIRE((*log)->close().is_ok());
  auto names = fs.list(kDir);
  REQUIRE(names.is_ok());
  for (const auto& n : *names)
    if (n.size() == 24 && n.substr(20) == ".seg") w.segments.push_back(n);
  std::sort(w.segments.begin(), w.segments.end());
  return w;
}

// The file and offset of every record, by its frame header (a walk of the
// frames: the test does not trust the reader it checks).
void locate(MemFs& fs, Written& w) {
  for (const auto& n : w.segments) {
    const std::string bytes = *fs.read_all(kDir + "/" + n);
    uint64_t seq = std::stoull(n.substr(0, 20));
    for (uint64_t off = format::kHeaderSize; off + format::kFrameHeaderSize <= bytes.size();) {
      auto h = format::decode_frame_header(reinterpret_cast<const uint8_t*>(bytes.data() + off));
      if (h.is_data()) {
        w.where[seq++] = {n, off};
        off += format::kFrameHeaderSize + h.word;
      } else if (h.is_checkpoint()) {
        off += format::kFrameHeaderSize;
      } else {
        break;
      }
    }
  }
}

RecoverOptions forced(MemFs& fs) {
  RecoverOptions ro;
  ro.fs = &fs;
  ro.force = true;
  ro.checkpoint_stride = 4;
  ro.max_segment_size = 4096;
  ro.clock_ms = [] { return uint64_t{1767225700000}; };
  return ro;
}

void bad_sectors(MemFs& fs, const std::string& name, uint64_t from, uint64_t to) {
  REQUIRE(fs.set_unreadable(kDir + "/" + name, from, to));
}

}  // namespace

TEST_CASE("verify reports an unreadable sector in a sealed segment as corruption instead of failing") {
  MemFs fs;
  Written w = make_log(fs);
  bad_sectors(fs, w.segments[1], 1024, 1536);
  VerifyOptions vo;
  vo.fs = &fs;
  auto r = verify(kDir, vo);
  REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  REQUIRE(r->has(Classification::corruption));
  bool found = false;
  for (const Problem& p : r->problems)
    if (p.kind == "io_error" && p.file == w.segments[1]) found = true;
  CHECK(found);
}

TEST_CASE("verify stops with a read that fails for want of a descriptor instead of reporting damage") {
  MemFs mem;
  Written w = make_log(mem);
  // The frames of one sealed segment cannot be read: not the medium, the
  // process (EMFILE, as when the file must be opened again with no
  // descriptor left). Its header reads.
  struct NoDescriptorFile final : ForwardFile {
    using ForwardFile::ForwardFile;
    Result<size_t> pread(void* buf, size_t n, uint64_t off) override {
      if (off >= format::kHeaderSize) return Status(Errc::io, path() + ": open: Too many open files", EMFILE);
      return ForwardFile::pread(buf, n, off);
    }
  };
  struct NoDescriptorFs final : ForwardFs {
    NoDescriptorFs(Fs& in, std::string victim) : ForwardFs(in), victim_(std::move(victim)) {}
    Result<std::unique_ptr<File>> open(const std::string& p, OpenMode m) override {
      ALOG_ASSIGN(auto f, in_.open(p, m));
      if (p != victim_) return f;
      return std::unique_ptr<File>(new NoDescriptorFile(std::move(f)));
    }
    std::string victim_;
  };
  NoDescriptorFs fs(mem, kDir + "/" + w.segments[1]);
  for (unsigned jobs : {1u, 2u}) {
    VerifyOptions vo;
    vo.fs = &fs;
    vo.jobs = jobs;
    auto r = verify(kDir, vo);
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.status().sys_errno() == EMFILE);
  }
}

TEST_CASE("salvage over an unreadable sector loses only the records over it and copies what could be read") {
  MemFs fs;
  Written w = make_log(fs);
  locate(fs, w);
  const std::string name = w.segments[1];
  const std::string original = *fs.read_all(kDir + "/" + name);
  REQUIRE(original.size() > 2048);
  bad_sectors(fs, name, 1024, 1536);
  // The records a sector of [1024, 1536) holds a byte of.
  std::set<uint64_t> over;
  for (const auto& [seq, at] : w.where) {
    if (at.first != name) continue;
    const uint64_t end = at.second + format::kFrameHeaderSize + w.records[seq].size();
    if (at.second < 1536 && end > 1024) over.insert(seq);
  }
  REQUIRE(!over.empty());

  auto dry = recover(kDir, [&] { auto o = forced(fs); o.dry_run = true; return o; }());
  REQUIRE_MESSAGE(dry.is_ok(), dry.status().to_string());
  REQUIRE_FALSE(dry->refused);
  auto rep = recover(kDir, forced(fs));
  REQUIRE_MESSAGE(rep.is_ok(), rep.status().to_string());
  REQUIRE_MESSAGE(!rep->refused, rep->refusal);
  CHECK(rep->next_seq == dry->next_seq);
  CHECK(rep->next_seq == w.records.rbegin()->first + 1);
  std::string lost_why;
  for (const RecoverAction& a : rep->actions)
    for (const auto& l : a.lost) lost_why += l.reason + ";";
  CHECK_MESSAGE(lost_why.find("read error over bytes 1024-1535") != std::string::npos, lost_why);

  // The bad sectors went with the original: the rebuilt file reads well.
  VerifyOptions vo;
  vo.fs = &fs;
  auto after = verify(kDir, vo);
  REQUIRE(after.is_ok());
  CHECK_FALSE(after->has(Classification::corruption));
  Options o;
  o.fs = &fs;
  auto log = Log::open_read(kDir, o);
  REQUIRE(log.is_ok());
  auto sc = (*log)->scan(0);
  REQUIRE(sc.is_ok());
  std::set<uint64_t> lost;
  uint64_t kept = 0;
  while (true) {
    auto more = (*sc)->next();
    REQUIRE_MESSAGE(more.is_ok(), more.status().to_string());
    if (!*more) break;
    const uint64_t seq = (*sc)->sequence();
    if ((*sc)->lost()) {
      lost.insert(seq);
      continue;
    }
    CHECK((*sc)->payload() == w.records[seq]);
    kept++;
  }
  CHECK(lost == over);
  CHECK(kept + lost.size() == w.records.size());

  // lost+found: the original as far as it could be read, zeros for the rest.
  std::string manifest, copy;
  auto lf = fs.list(kDir + "/lost+found");
  REQUIRE(lf.is_ok());
  for (const auto& n : *lf) {
    if (n.rfind(name, 0) != 0) continue;
    if (n.size() > 5 && n.substr(n.size() - 5) == ".json") manifest = *fs.read_all(kDir + "/lost+found/" + n);
    if (n.size() > 4 && n.substr(n.size() - 4) == ".bin") copy = *fs.read_all(kDir + "/lost+found/" + n);
  }
  REQUIRE(!manifest.empty());
  const json m = json::parse(manifest);
  REQUIRE(m["unreadable"].size() == 1);
  CHECK(m["unreadable"][0]["offset"] == 1024);
  CHECK(m["unreadable"][0]["end_offset"] == 1536);
  std::string expect = original;
  std::fill(expect.begin() + 1024, expect.begin() + 1536, '\0');
  CHECK(copy == expect);
}

TEST_CASE("salvage of a segment whose header sector is unreadable rebuilds it from its name and moves no sequence") {
  MemFs fs;
  Written w = make_log(fs);
  const std::string name = w.segments[1];
  bad_sectors(fs, name, 0, 512);
  auto refused = recover(kDir, forced(fs));
  REQUIRE(refused.is_ok());
  CHECK(refused->refused);
  CHECK(refused->refusal.find("--generation") != std::string::npos);
  RecoverOptions ro = forced(fs);
  ro.generation = 1;
  auto rep = recover(kDir, ro);
  REQUIRE_MESSAGE(rep.is_ok(), rep.status().to_string());
  REQUIRE_MESSAGE(!rep->refused, rep->refusal);
  CHECK(rep->next_seq == w.records.rbegin()->first + 1);
  VerifyOptions vo;
  vo.fs = &fs;
  auto after = verify(kDir, vo);
  REQUIRE(after.is_ok());
  CHECK_FALSE(after->has(Classification::corruption));
  Options o;
  o.fs = &fs;
  auto log = Log::open_read(kDir, o);
  REQUIRE(log.is_ok());
  CHECK((*log)->next_sequence() == w.records.rbegin()->first + 1);
  for (const auto& [seq, payload] : w.records) {
    auto r = (*log)->read(seq);
    if (r.is_ok()) CHECK(r->payload == payload);
    else CHECK_MESSAGE(r.status().is(Errc::lost), r.status().to_string());
  }
}

TEST_CASE("a record over an unreadable sector is lost even when the zeros read in its place match its crc") {
  MemFs fs;
  REQUIRE(fs.mkdir("/db"));
  Options o;
  o.fs = &fs;
  o.checkpoint_stride = 4;
  o.sync_on_append = true;
  {
    auto log = Log::open(kDir, o);
    REQUIRE(log.is_ok());
    const std::string zeros(2000, '\0');
    for (std::string_view p : {std::string_view("before"), std::string_view(zeros), std::string_view("after")})
      REQUIRE((*log)->append({p}).is_ok());
    REQUIRE((*log)->roll().is_ok());
    REQUIRE((*log)->append({std::string_view("next")}).is_ok());
    REQUIRE((*log)->close().is_ok());
  }
  // Record 1's payload starts at 192 + 16 + 6 + 16: bytes 1024-1535 are zeros in it.
  bad_sectors(fs, "00000000000000000000.seg", 1024, 1536);
  auto rep = recover(kDir, forced(fs));
  REQUIRE_MESSAGE(rep.is_ok(), rep.status().to_string());
  REQUIRE_MESSAGE(!rep->refused, rep->refusal);
  auto log = Log::open_read(kDir, o);
  REQUIRE(log.is_ok());
  CHECK((*log)->read(0).is_ok());
  auto lost = (*log)->read(1);
  CHECK(lost.status().is(Errc::lost));
  CHECK((*log)->read(2).is_ok());
  CHECK((*log)->read(3).is_ok());
}
