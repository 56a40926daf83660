// CRC32C: the dispatcher crc32c_extend against the raw crc32-instruction
// loop (112-byte frames) and ISA-L (64 KiB), and the sse42/isal crossover
// that crc::isal_threshold() should sit at.
#include <cinttypes>
#include <vector>

#include "alog/crc32c.h"
#include "harness.h"
#include "limits.h"

using namespace bench;
using CrcFn = uint32_t (*)(uint32_t, const void*, size_t);

namespace {

// ns per call over `iters` chained calls (each call extends the previous
// CRC, as a running CRC does), on n bytes.
double ns_per_call(CrcFn f, const uint8_t* buf, size_t n, uint64_t iters) {
  uint32_t c = 0;
  uint64_t t0 = now_ns();
  for (uint64_t i = 0; i < iters; i++) c = f(c, buf, n);
  uint64_t t = now_ns() - t0;
  keep(c);
  return static_cast<double>(t) / static_cast<double>(iters);
}

// Iterations for about `target_ns` of work at an estimated 0.25 ns per byte + 5 ns per call.
uint64_t iters_for(size_t n, double target_ns) {
  return std::max<uint64_t>(1000, static_cast<uint64_t>(target_ns / (5.0 + 0.25 * double(n))));
}

}  // namespace

int main() {
  if (!alog::crc::have_sse42()) die("no SSE4.2 on this CPU: the raw crc32 loop limit cannot run");
  std::vector<uint8_t> buf(64 * 1024 + 64);
  for (size_t i = 0; i < buf.size(); i++) buf[i] = static_cast<uint8_t>(i * 131 + 7);
  const uint8_t* p = buf.data();
  const int rounds = 15;
  const double work = 20e6 * scale();  // ns per trial

  // 112 B: a 100-byte payload frame (12 header bytes + payload), the append hot path.
  {
    uint64_t it = iters_for(112, work);
    Pair r = interleave(
        rounds, [&] { return ns_per_call(alog::crc32c_extend, p, 112, it); },
        [&] { return ns_per_call(limits::crc_insn, p, 112, it); }, /*use_min=*/true);
    double ratio = r.fig / r.lim;
    row("CRC32C of a 112 B frame (crc32c_extend)", dur(r.fig), dur(r.lim) + " crc32 insn loop",
        ratio, "≤ 1.1×", ratio <= 1.1);
  }
  // 64 KiB: a large payload.
  {
    const size_t n = 64 * 1024;
    uint64_t it = iters_for(n, work);
    Pair r = interleave(
        rounds, [&] { return ns_per_call(alog::crc32c_extend, p, n, it); },
        [&] { return ns_per_call(limits::crc_isal, p, n, it); }, /*use_min=*/true);
    double ratio = r.lim / r.fig;
    row("CRC32C of 64 KiB (crc32c_extend)", bw(double(n) / r.fig * 1e9),
        bw(double(n) / r.lim * 1e9) + (limits::have_isal() ? " ISA-L" : " crc32 loop (no ISA-L)"),
        ratio, "≥ 0.7×", ratio >= 0.7);
    double insn = std::min({ns_per_call(limits::crc_insn, p, n, it), ns_per_call(limits::crc_insn, p, n, it),
                            ns_per_call(limits::crc_insn, p, n, it)});
    info("CRC32C 64 KiB through the plain crc32 loop: " + bw(double(n) / insn * 1e9) +
         " (one 3-cycle-latency instruction per 8 bytes)");
  }

  // The dispatcher threshold: library crc::sse42 vs crc::isal, 16..4096 bytes.
  if (!alog::crc::have_isal()) {
    info("ISA-L not built in: no sse42/isal crossover to measure");
    return 0;
  }
  const size_t sizes[] = {16,  32,  48,  64,  96,  128, 160,  176,  192,  208,  224,  240,
                          256, 320, 384, 448, 512, 640, 768, 1024, 1536, 2048, 3072, 4096};
  std::vector<double> sse, isal;
  std::string line = "CRC32C ns per call, sse42 / isal:";
  for (size_t n : sizes) {
    uint64_t it = iters_for(n, work / 4);
    Pair r = interleave(
        9, [&] { return ns_per_call(alog::crc::isal, p, n, it); },
        [&] { return ns_per_call(alog::crc::sse42, p, n, it); }, /*use_min=*/true);
    sse.push_back(r.lim);
    isal.push_back(r.fig);
    char part[64];
    std::snprintf(part, sizeof part, " %zu:%.1f/%.1f", n, r.lim, r.fig);
    line += part;
  }
  info(line);
  // The crossover: the smallest size from which ISA-L is faster at every larger size measured.
  size_t k = std::size(sizes);
  while (k > 0 && isal[k - 1] < sse[k - 1]) k--;
  const size_t thr = alog::crc::isal_threshold();
  std::string measured;
  bool met;
  if (k == std::size(sizes)) {
    measured = "ISA-L never faster up to 4096 B";
    met = false;
  } else {
    size_t lo = k == 0 ? 0 : sizes[k - 1], hi = sizes[k];
    measured = k == 0 ? "ISA-L faster from 16 B" : "between " + std::to_string(lo) + " and " + std::to_string(hi) + " B";
    // The threshold is right when it lies in the measured crossover step,
    // or costs under 5% at the sizes between the threshold and the crossover.
    met = thr > lo && thr <= hi;
    if (!met) {
      double worst = 0;
      for (size_t i = 0; i < std::size(sizes); i++) {
        bool uses_isal = sizes[i] >= thr;
        double chosen = uses_isal ? isal[i] : sse[i], best = std::min(isal[i], sse[i]);
        worst = std::max(worst, chosen / best);
      }
      info("CRC dispatcher: with isal_threshold() = " + std::to_string(thr) +
           " the worst measured size is " + fmt("%.2f", worst) +
           "× slower than the better of sse42 and isal");
      met = worst <= 1.05;
    }
  }
  row("CRC dispatcher: sse42→isal crossover", measured,
      "isal_threshold() = " + std::to_string(thr) + " B (chosen at start-up)", -1, "threshold in the crossover step",
      met);
  return 0;
}
