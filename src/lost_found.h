// lost+found/: where recovery and repair keep every byte they remove, each
// piece with a small JSON manifest saying where it came from.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "alog/fs.h"
#include "alog/status.h"

namespace alog::detail {

// Sequences a salvage lost from a saved original, for its manifest.
struct SavedRun {
  uint64_t first_seq = 0, last_seq = 0;
  std::string reason;
};

// Copies [from, end of file) of segment `name` (open as `file`) to
// DIR/lost+found/NAME@FROM.MS.RAND.bin plus its .json manifest (source,
// offset, length, generation of the source's header or null, reason, lost
// runs, saved_at_ms, data), synced; returns the saved file's path relative
// to DIR.
Result<std::string> save_tail(Fs& fs, const std::string& dir, File& file, const std::string& name,
                              uint64_t from, const std::string& reason, uint64_t now_ms,
                              const std::vector<SavedRun>& lost = {});

}  // namespace alog::detail
