// Opening a cleanly closed log of 16 segments (1 GiB of 1 KiB records):
// time and bytes read, against opening and reading the 16 headers raw.
//
// Usage: open_bench [DIR]. With DIR the log is built there (or reused when
// DIR already holds it) and left in place for bench/cli_bench.sh; without,
// it lives in a temporary directory.
//
// open_bench --floor DIR prints, in seconds, the median of 11 raw opens of
// the log in DIR, descriptors closed included (what a process pays for them
// by its exit): the floor of an open that reads every header
// (bench/scale_bench.sh).
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string_view>
#include <vector>

#include "alog/log.h"
#include "harness.h"
#include "limits.h"

using namespace bench;

namespace {

// Builds `segments` full segments of `seg_size` from 1 KiB records, sealed and closed.
void build(const std::string& dir, uint64_t seg_size, uint32_t segments) {
  alog::Options o;
  o.max_segment_size = seg_size;
  auto log = check(alog::Log::open(dir, o), "open");
  std::string p = payload(1024, 11);
  std::vector<std::string_view> batch(500, p);
  const uint64_t batch_bytes = 500 * (16 + 1024) + 32;
  while (true) {
    auto s = log->segments();
    if (s.size() == segments && s.back().size + batch_bytes + 64 > seg_size) break;
    check(log->append(batch).status(), "append");
  }
  check(log->close(), "close");
}

// The raw floor: list the directory, take the lock, and open, stat and read
// the 192-byte header of each segment; with `closes`, close them all too.
double raw_open_ns(const std::string& dir, bool closes = false) {
  uint64_t t0 = now_ns();
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  while (struct dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > 4 && n.compare(n.size() - 4, 4, ".seg") == 0) names.push_back(n);
  }
  ::closedir(d);
  int lk = ::open((dir + "/LOCK").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ::flock(lk, LOCK_EX | LOCK_NB);
  std::vector<int> fds;
  uint8_t hdr[192];
  for (const auto& n : names) {
    int fd = ::open((dir + "/" + n).c_str(), O_RDWR | O_CLOEXEC);
    struct stat st;
    ::fstat(fd, &st);
    if (::pread(fd, hdr, sizeof hdr, 0) != sizeof hdr) die("raw_open: short header");
    fds.push_back(fd);
  }
  double t = static_cast<double>(now_ns() - t0);
  for (int fd : fds) ::close(fd);
  ::close(lk);
  return closes ? static_cast<double>(now_ns() - t0) : t;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string_view(argv[1]) == "--floor") {
    std::vector<double> t;
    for (int i = 0; i < 11; i++) t.push_back(raw_open_ns(argv[2], /*closes=*/true));
    std::sort(t.begin(), t.end());
    std::printf("%.6f\n", t[t.size() / 2] / 1e9);
    return 0;
  }
  std::optional<TempDir> tmp;
  std::string dir;
  if (argc > 1) {
    dir = argv[1];
  } else {
    tmp.emplace("alog-open");
    dir = tmp->sub("log");
  }
  const uint32_t segments = 16;
  const uint64_t seg_size = std::max<uint64_t>(4 * alog::kMiB,
                                               static_cast<uint64_t>(64.0 * std::min(1.0, scale())) * alog::kMiB);
  struct stat st;
  if (::stat((dir + "/" + "00000000000000000000.seg").c_str(), &st) != 0) {
    uint64_t t0 = now_ns();
    build(dir, seg_size, segments);
    std::fprintf(stderr, "open_bench: built %u × %s segments in %s\n", segments,
                 bytes(double(seg_size)).c_str(), dur(double(now_ns() - t0)).c_str());
  }
  KeepAwake awake;  // open syncs the directory: see harness.h on this VM's idle fsyncs
  CountingFs fs(alog::posix_fs());
  alog::Options o;
  o.fs = &fs;
  o.max_segment_size = seg_size;
  uint64_t total = 0, nseg = 0;
  {
    auto log = check(alog::Log::open_read(dir, o), "open_read");
    nseg = log->segments().size();
    total = log->disk_size();
  }
  uint64_t read_bytes = 0, preads = 0, syncs = 0;
  auto open_w = [&] {
    fs.counts.reset();
    uint64_t t0 = now_ns();
    auto log = check(alog::Log::open(dir, o), "open");
    double t = static_cast<double>(now_ns() - t0);
    read_bytes = fs.counts.pread_bytes;
    preads = fs.counts.preads;
    syncs = fs.counts.syncs;
    check(log->close(), "close");
    return t;
  };
  Pair r = interleave(11, open_w, [&] { return raw_open_ns(dir); });
  std::string what = "open for writing, cleanly closed " + bytes(double(total)) + " log of " +
                     std::to_string(nseg) + " segments";
  row(what, dur(r.fig) + ", " + bytes(double(read_bytes)) + " read in " + std::to_string(preads) +
                " preads, " + std::to_string(syncs) + " fsync",
      dur(r.lim) + " raw list+lock+16 header reads", r.fig / r.lim, "≤ 5 ms", r.fig <= 5e6);
  auto open_r = [&] {
    fs.counts.reset();
    uint64_t t0 = now_ns();
    auto log = check(alog::Log::open_read(dir, o), "open_read");
    double t = static_cast<double>(now_ns() - t0);
    read_bytes = fs.counts.pread_bytes;
    return t;
  };
  Pair rr = interleave(11, open_r, [&] { return raw_open_ns(dir); });
  info("open_read of the same log: " + dur(rr.fig) + ", " + bytes(double(read_bytes)) +
       " read (raw floor " + dur(rr.lim) + ")");
  return 0;
}
