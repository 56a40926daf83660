// lost+found/: where recovery and repair keep every byte they remove, each
// piece with a small JSON manifest saying where it came from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "alog/fs.h"
#include "alog/status.h"
#include "sector_reader.h"

namespace alog::detail {

// What a salvage did not keep of a saved original, for its manifest: the
// sequences it lost, and the resumed runs it tried and did not keep (their
// offsets, frames, and the first sequence a count back would give them).
struct SavedRun {
  uint64_t first_seq = 0, last_seq = 0;
  std::string reason;
};
struct UnkeptRun {
  uint64_t offset = 0, end_offset = 0, frames = 0;
  std::optional<uint64_t> first_seq;
  std::string reason;
};
struct SalvageManifest {
  std::vector<SavedRun> lost;
  std::vector<UnkeptRun> not_kept;
  // The byte ranges the copy could not read (zeros in it), read when the
  // manifest is written, after the copy: a SectorReader's (sector_reader.h).
  const std::vector<ByteRange>* unreadable = nullptr;
};

// lost+found/ must be a directory of the log itself: a link there would
// send removed bytes (and their manifests) wherever it points. Refuses a
// link or any other file at DIR/lost+found (Errc::not_a_log); returns
// whether the directory exists.
Result<bool> check_lost_found(Fs& fs, const std::string& dir);

// Copies [from, end of file) of segment `name` (open as `file`) to
// DIR/lost+found/NAME@FROM.MS.RAND.bin plus its .json manifest (source,
// offset, length, generation of the source's header or null, reason, lost
// and not_kept runs, unreadable ranges, saved_at_ms, data), synced; returns the saved file's
// path relative to DIR.
Result<std::string> save_tail(Fs& fs, const std::string& dir, File& file, const std::string& name,
                              uint64_t from, const std::string& reason, uint64_t now_ms,
                              const SalvageManifest& salvage = {});

}  // namespace alog::detail
