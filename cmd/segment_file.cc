// One segment file for the commands (see segment_file.h).
#include "segment_file.h"

#include "cli.h"

namespace alog::cli {

using namespace format;

SegmentFile open_segment_file(const std::string& path) {
  auto s = inspect::open_segment(path);
  if (!s) fail(s.status(), path);
  return std::move(s).value();
}

bool not_a_segment(const SegmentFile& s) {
  // A file too short to hold the magic does not begin with it either.
  return !parse_segment_name(base_name(s.path)) && (s.length < 4 || get32(s.raw) != kMagic);
}

void require_segment_file(const std::string& path) {
  SegmentFile s = open_segment_file(path);
  if (not_a_segment(s)) fail("not_a_log", s.path, std::nullopt, "not a segment file (no ALOG magic)");
}

void require_walkable(const SegmentFile& s) {
  if (s.walkable()) return;
  if (not_a_segment(s)) fail("not_a_log", s.path, std::nullopt, "not a segment file (no ALOG magic)");
  std::string why = !s.header_complete
                        ? "segment header: file has " + std::to_string(s.length) +
                              " bytes, less than the 192-byte header"
                    : s.header_error != HeaderError::none
                        ? std::string("segment header: ") + header_error_text(s.header_error)
                        : "metadata slots: " + s.slots.error;
  throw Failure("corrupt", s.path, 0, why, kExitDamaged);
}

inspect::Frame next_frame(inspect::FrameWalker& w, const SegmentFile& seg) {
  auto f = w.next();
  if (!f) fail(f.status(), seg.path);
  return std::move(f).value();
}

}  // namespace alog::cli
