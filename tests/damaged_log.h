// The log the damage tests start from, and byte helpers for its segments:
// 200 records of 72 bytes, `append --segment-size 4KiB --batch 10
// --checkpoint-stride 8`, in segments 0, 40, 80, 120 and 160.
#pragma once

#include <cstdio>
#include <string>

#include "cli_util.h"

namespace alog::test::cli {

inline std::string seg(const std::string& d, uint64_t start) {
  char name[32];
  std::snprintf(name, sizeof name, "%020llu.seg", static_cast<unsigned long long>(start));
  return d + "/" + name;
}

inline std::string records(int from, int to) {
  std::string s;
  char line[80];
  for (int i = from; i < to; i++) {
    std::snprintf(line, sizeof line, "%072d\n", i);
    s += line;
  }
  return s;
}

// 200 records of 72 bytes in segments 0, 40, 80, 120 and 160, made once.
inline const std::string& base_log() {
  static TempDir dir;
  static std::string d = [] {
    std::string p = dir / "log";
    RunResult r = run_alog("append --segment-size 4KiB --batch 10 --checkpoint-stride 8 " + shq(p),
                           records(0, 200));
    REQUIRE(r.exit_code == 0);
    return p;
  }();
  return d;
}

inline void write_at(const std::string& path, uint64_t off, const std::string& bytes) {
  for (size_t i = 0; i < bytes.size(); i++) set_byte(path, off + i, static_cast<uint8_t>(bytes[i]));
}

}  // namespace alog::test::cli
