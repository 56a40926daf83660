// Fuzz target: the segment reader, recovery and verify over an arbitrary
// directory image (an archive of files, fuzz_input.h; byte 0 picks the steps).
//
// Steps: verify (full and headers-only); open_read and a scan; Log::open
// (recovery) and close; open_read and a scan again; recover() planned and,
// per byte 0, applied (with or without force).
//
// Beyond "no crash, leak, undefined behaviour or OOM", it checks:
//  * a scan returns contiguous sequences from first_sequence(), and ends or
//    stops with corrupt, segment_reaped or not_found, never io;
//  * a full verify without damage implies a headers-only verify without damage;
//  * recovery never loses what a reader could read: when Log::open succeeds,
//    a reader afterwards finds exactly the records (sequences and payloads) a
//    reader found before, and verify finds no torn tail;
//  * an applied recover() that did not refuse leaves a log that opens.
#include <cstdint>
#include <string>
#include <vector>

#include "alog/log.h"
#include "alog/scanner.h"
#include "alog/verify.h"
#include "fuzz_input.h"

using namespace alog;

namespace {

constexpr const char* kDir = "/fz/log";

struct ScanResult {
  std::vector<std::pair<uint64_t, std::string>> records;
  bool opened = false;
  Errc stopped = Errc::ok;  // the error that ended the scan, if any
};

ScanResult read_all(test::MemFs& fs) {
  ScanResult r;
  Options o;
  o.fs = &fs;
  auto log = Log::open_read(kDir, o);
  if (!log.is_ok()) return r;
  r.opened = true;
  const uint64_t first = (*log)->first_sequence();
  auto sc = (*log)->scan(first);
  if (!sc.is_ok()) fuzz::violated("scan: " + sc.status().to_string());
  while (r.records.size() < 100000) {
    auto more = (*sc)->next();
    if (!more.is_ok()) {
      r.stopped = more.status().code();
      if (r.stopped == Errc::io) fuzz::violated("scan: an io error on a MemFs: " + more.status().to_string());
      break;
    }
    if (!*more) break;
    if ((*sc)->sequence() != first + r.records.size()) fuzz::violated("scan: a sequence gap");
    r.records.emplace_back((*sc)->sequence(), std::string((*sc)->payload()));
  }
  return r;
}

bool damaged(const VerifyReport& r) { return !r.clean(); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t mode = data[0];
  auto files = fuzz::split_archive(data + 1, size - 1);
  test::MemFs fs;
  fuzz::install(fs, kDir, files);

  VerifyOptions vo;
  vo.fs = &fs;
  auto full = verify(kDir, vo);
  vo.headers_only = true;
  auto headers = verify(kDir, vo);
  vo.headers_only = false;
  if (full.is_ok() != headers.is_ok()) fuzz::violated("verify and headers-only verify disagree on erroring");
  if (full.is_ok() && !damaged(*full) && damaged(*headers))
    fuzz::violated("headers-only verify finds damage that a full verify does not");

  ScanResult before = read_all(fs);

  Options o;
  o.fs = &fs;
  o.clock_ms = [] { return uint64_t{1'700'000'000'000}; };
  o.max_disk_size = 0;
  bool wrote = false;
  if (mode & 1) {
    auto log = Log::open(kDir, o);
    if (log.is_ok()) {
      wrote = true;
      (void)(*log)->close();
      log->reset();
      ScanResult after = read_all(fs);
      if (!after.opened) fuzz::violated("a reader cannot open what a writer just recovered");
      if (before.opened && after.records != before.records)
        fuzz::violated("recovery changed what a reader finds (" + std::to_string(before.records.size()) +
                       " records before, " + std::to_string(after.records.size()) + " after)");
      auto v = verify(kDir, vo);
      if (v.is_ok() && v->has(Classification::torn_tail)) fuzz::violated("a torn tail after recovery");
    }
  }
  if (mode & 2) {
    RecoverOptions ro;
    ro.fs = &fs;
    ro.dry_run = !(mode & 4);
    ro.force = mode & 8;
    ro.clock_ms = o.clock_ms;
    ro.max_segment_size = 64 << 10;  // at most 4096 lost frames a segment (the inputs are <= 4 KiB)
    auto r = recover(kDir, ro);
    if (r.is_ok() && r->applied && !r->refused) {
      auto log = Log::open(kDir, o);
      if (!log.is_ok()) fuzz::violated("a recovered log does not open: " + log.status().to_string());
    }
  }
  (void)wrote;
  return 0;
}
