// Fuzz input decoding shared by the targets: a small archive of files laid
// out on a MemFs directory (fuzz/README.md, "Input formats").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "support/mem_fs.h"

namespace alog::fuzz {

struct InputFile {
  std::string name;
  std::string bytes;
};

// Splits an archive: repeated [name byte][length: 2 bytes big-endian][bytes].
// The name byte's low 2 bits pick the kind, the high 6 an index i:
//   0: a segment named by the start sequence in its own header (i when none)
//   1: a segment named by i (which may disagree with its header)
//   2: i.seg.tmp (i even) or i.seg.del (i odd): leftovers a writer deletes
//   3: another file: alog.json, or a name readers ignore
std::vector<InputFile> split_archive(const uint8_t* data, size_t size);

// Puts the files in `dir` (created) on `fs`, durable.
void install(test::MemFs& fs, const std::string& dir, const std::vector<InputFile>& files);

// Aborts with a message: an invariant does not hold.
[[noreturn]] void violated(const std::string& what);

}  // namespace alog::fuzz
