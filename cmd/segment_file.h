// One segment file for the commands that take a SEGMENT argument or explain
// a walk (dump-frames, seek, cat): alog/inspect.h with the CLI's failures.
// Never writes.
#pragma once

#include <optional>
#include <string>

#include "alog/inspect.h"
#include "alog/verify.h"

namespace alog::cli {

using SegmentFile = inspect::Segment;

// Opens and decodes a segment file. A Failure (not_found, io) when it cannot be read.
SegmentFile open_segment_file(const std::string& path);
// Not a log, not corruption: a file whose name is not a segment name
// ("00000000000000000042.seg") and that does not start with "ALOG".
bool not_a_segment(const SegmentFile& seg);
// For every command given a regular file: the Failure not_a_log (exit 8)
// when not_a_segment(); a canonical segment name with a garbled header is
// corruption, reported by the command.
void require_segment_file(const std::string& path);
// For commands that need records from it: a Failure unless the file can be
// walked (not_a_log, exit 8, as above; corrupt, exit 4, for a damaged
// header or no winning slot).
void require_walkable(const SegmentFile& seg);
// The next frame of a walk; a Failure on a read error.
inspect::Frame next_frame(inspect::FrameWalker& w, const SegmentFile& seg);

}  // namespace alog::cli
