// Append latency while retention (truncate_before) drops a whole 64 MiB
// segment, against the same appends without a drop: the unlink must stay
// off the append path.
#include <sys/stat.h>

#include <vector>

#include "alog/log.h"
#include "harness.h"

using namespace bench;

namespace {
bool exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}
}  // namespace

int main() {
  TempDir tmp("alog-retention");
  const uint64_t seg = std::max<uint64_t>(
      8 * alog::kMiB, static_cast<uint64_t>(64.0 * std::min(1.0, scale())) * alog::kMiB);
  alog::Options o;
  o.max_segment_size = seg;
  std::string dir = tmp.sub("log");
  auto log = check(alog::Log::open(dir, o), "open");
  const std::string big = payload(64 * 1024, 2), small = payload(100, 3);

  // Appends until a new segment starts: the one before is then sealed and full.
  auto fill_segment = [&] {
    size_t n0 = log->segments().size();
    while (log->segments().size() == n0) check(log->append_one(big).status(), "fill");
  };
  auto timed_append = [&](std::vector<double>& lat) {
    uint64_t t0 = now_ns();
    check(log->append_one(small).status(), "append");
    lat.push_back(static_cast<double>(now_ns() - t0));
  };

  const int rounds = 5;
  const uint64_t min_appends = 5000;
  std::vector<double> p99_drop, p99_base, p50_drop, p50_base, truncate_ns, unlink_ns;
  for (int r = 0; r < rounds; r++) {
    fill_segment();
    auto segs = log->segments();
    std::string del = dir + "/" + segs.front().file + ".del";
    uint64_t cut = segs.front().next_sequence;
    for (int i = 0; i < 2000; i++) check(log->append_one(small).status(), "warm");

    // With the drop: truncate_before, then appends until the unlink is done.
    std::vector<double> lat;
    lat.reserve(1 << 20);
    uint64_t t0 = now_ns();
    check(log->truncate_before(cut), "truncate_before");
    uint64_t t1 = now_ns();
    truncate_ns.push_back(static_cast<double>(t1 - t0));
    while (true) {
      for (int i = 0; i < 256; i++) timed_append(lat);
      if (!exists(del)) {
        unlink_ns.push_back(static_cast<double>(now_ns() - t1));
        if (lat.size() >= min_appends) break;
      }
    }
    // Without: as many appends, nothing dropped.
    std::vector<double> base;
    base.reserve(lat.size());
    while (base.size() < lat.size()) timed_append(base);
    p99_drop.push_back(percentile(lat, 0.99));
    p99_base.push_back(percentile(base, 0.99));
    p50_drop.push_back(percentile(lat, 0.50));
    p50_base.push_back(percentile(base, 0.50));
  }
  double d = median(p99_drop), b = median(p99_base);
  row("append p99 while truncate_before drops a " + bytes(double(seg)) + " segment", dur(d),
      dur(b) + " p99 without a drop", d / b, "≤ 2×", d / b <= 2);
  info("retention: truncate_before call itself " + dur(median(truncate_ns)) +
       " (rename + directory fsync, on the caller's thread); background unlink done " +
       dur(median(unlink_ns)) + " after it returned; append p50 " + dur(median(p50_drop)) +
       " with the drop vs " + dur(median(p50_base)) + " without");
  return 0;
}
