// Fuzz input decoding (see fuzz_input.h).
#include "fuzz_input.h"

#include <cstdio>
#include <cstdlib>

#include "alog/format.h"

namespace alog::fuzz {

std::vector<InputFile> split_archive(const uint8_t* data, size_t size) {
  std::vector<InputFile> out;
  size_t i = 0;
  while (i + 3 <= size && out.size() < 16) {
    uint8_t nb = data[i];
    size_t len = size_t(data[i + 1]) << 8 | data[i + 2];
    i += 3;
    len = std::min(len, size - i);
    InputFile f;
    f.bytes.assign(reinterpret_cast<const char*>(data + i), len);
    i += len;
    const uint64_t idx = nb >> 2;
    switch (nb & 3) {
      case 0: {
        uint64_t start = idx;
        if (len >= 16) start = format::get64(reinterpret_cast<const uint8_t*>(f.bytes.data()) + 8);
        f.name = format::segment_name(start);
        break;
      }
      case 1: f.name = format::segment_name(idx); break;
      case 2: f.name = format::segment_name(idx) + (idx % 2 ? ".del" : ".tmp"); break;
      default: f.name = idx % 2 ? "alog.json" : "notes.txt"; break;
    }
    out.push_back(std::move(f));
  }
  return out;
}

void install(test::MemFs& fs, const std::string& dir, const std::vector<InputFile>& files) {
  if (!fs.mkdir("/fz").is_ok() || !fs.mkdir(dir).is_ok()) violated("mkdir failed");
  for (const auto& f : files)
    if (!fs.set_contents(dir + "/" + f.name, f.bytes).is_ok()) violated("set_contents failed");
}

void violated(const std::string& what) {
  std::fprintf(stderr, "invariant violated: %s\n", what.c_str());
  std::abort();
}

}  // namespace alog::fuzz
