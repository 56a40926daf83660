// lost+found/: where recovery and repair keep every byte they remove, each
// piece with a small JSON manifest saying where it came from.
#pragma once

#include <cstdint>
#include <string>

#include "alog/fs.h"
#include "alog/status.h"

namespace alog::detail {

// Copies [from, end of file) of segment `name` (open as `file`) to
// DIR/lost+found/NAME@FROM.MS.bin plus NAME@FROM.MS.json, synced; returns
// the saved file's path relative to DIR.
Result<std::string> save_tail(Fs& fs, const std::string& dir, File& file, const std::string& name,
                              uint64_t from, const std::string& reason, uint64_t now_ms);

}  // namespace alog::detail
