// The machine's limits on their own (raw pwrite, fdatasync, pread, CRC32C),
// each the median of several trials. The figure programs measure the limit
// each figure is divided by again, interleaved with the figure itself.
#include <vector>

#include "harness.h"
#include "limits.h"

using namespace bench;

namespace {
double med(int n, const std::function<double()>& f) {
  std::vector<double> v;
  for (int i = 0; i < n; i++) v.push_back(f());
  return median(v);
}
double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / double(v.size());
}
}  // namespace

int main() {
  TempDir tmp("alog-limits");
  const int n = 7;
  const std::string p100 = payload(100);

  double w = med(n, [&] { return limits::pwrite_append_ns(tmp.sub("w"), 116, scaled(20000, 2000)); });
  limit_row("pwrite of one 116 B record (appending, fresh file)", dur(w));

  double e = med(n, [&] { return limits::encode_pwrite_ns(tmp.sub("e"), p100, 500, scaled(200, 20)); });
  limit_row("500 frames of 100 B encoded with CRC32C into one buffer, one pwrite",
            rate(500e9 / e, " rec/s"));

  {
    const uint64_t len = 16 * (1 << 20);
    std::string f = tmp.sub("s");
    limits::preallocate(f, len);
    int fd = limits::open_rw(f);
    uint64_t off = 4096;
    double idle = med(3, [&] { return mean(limits::overwrite_sync_ns(fd, 132, scaled(50, 10), &off, len)); });
    KeepAwake awake;  // see harness.h: an idle vCPU wakes for I/O completions at a 4 ms tick
    double s1 = med(n, [&] { return mean(limits::overwrite_sync_ns(fd, 132, scaled(200, 30), &off, len)); });
    limit_row("fdatasync after a 132 B overwrite in preallocated space (CPUs kept busy)",
              rate(1e9 / s1, "/s") + " (" + dur(s1) + "; " + dur(idle) + " with the CPUs idle)");
    double sb = med(n, [&] {
      return mean(limits::overwrite_sync_ns(fd, 500 * 116 + 16, scaled(50, 10), &off, len));
    });
    limit_row("fdatasync after a 500-record (58 KB) batch in preallocated space (CPUs kept busy)",
              rate(1e9 / sb, "/s") + " (" + dur(sb) + ") = " + rate(500e9 / sb, " rec/s"));
    ::close(fd);
  }
  {
    std::string f = tmp.sub("r");
    limits::preallocate(f, 128 * (1 << 20));
    uint64_t got = 0;
    double plain = med(n, [&] { return limits::pread_files_ns({f}, 1 << 20, false, &got); });
    limit_row("page-cache pread, 1 MiB reads", bw(double(got) / plain * 1e9));
    double crc = med(n, [&] { return limits::pread_files_ns({f}, 1 << 20, true, &got); });
    limit_row("page-cache pread + CRC32C, 1 MiB reads", bw(double(got) / crc * 1e9));
    double r4 = med(n, [&] { return limits::pread_random_ns(f, 4096, scaled(20000, 2000), 7); });
    double r64 = med(n, [&] { return limits::pread_random_ns(f, 65536, scaled(5000, 500), 8); });
    limit_row("random page-cache pread of 4 KiB / 64 KiB", dur(r4) + " / " + dur(r64));
  }
  {
    std::vector<uint8_t> buf(64 * 1024);
    for (size_t i = 0; i < buf.size(); i++) buf[i] = static_cast<uint8_t>(i * 7);
    auto per_call = [&](auto f, size_t len, uint64_t iters) {
      uint32_t c = 0;
      uint64_t t0 = now_ns();
      for (uint64_t i = 0; i < iters; i++) c = f(c, buf.data(), len);
      keep(c);
      return double(now_ns() - t0) / double(iters);
    };
    double i112 = med(n, [&] { return per_call(limits::crc_insn, 112, scaled(500000, 50000)); });
    double i64k = med(n, [&] { return per_call(limits::crc_insn, 65536, scaled(2000, 200)); });
    limit_row("CRC32C, crc32 instruction loop: 112 B / 64 KiB",
              dur(i112) + " / " + bw(65536 / i64k * 1e9));
    if (limits::have_isal()) {
      double s112 = med(n, [&] { return per_call(limits::crc_isal, 112, scaled(500000, 50000)); });
      double s64k = med(n, [&] { return per_call(limits::crc_isal, 65536, scaled(2000, 200)); });
      limit_row("CRC32C, ISA-L crc32_iscsi: 112 B / 64 KiB", dur(s112) + " / " + bw(65536 / s64k * 1e9));
    }
  }
  return 0;
}
