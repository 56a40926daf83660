// Frame-level access to one segment file, for tools that explain what the
// readers do (alog seek, alog cat SEGMENT, alog dump-frames): the segment's
// header and slots decoded, and the walk of FORMAT.md "Walking a segment"
// frame by frame. It is the walk the library's readers, recovery and verify
// use, with the same stop kinds and texts, so a tool never disagrees with
// verify about where and why a walk stops. Never writes.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "alog/format.h"
#include "alog/fs.h"
#include "alog/status.h"

namespace alog::inspect {

// One segment file, opened read-only, with its header and slots decoded.
struct Segment {
  std::string path;
  std::shared_ptr<File> file;
  uint64_t length = 0;
  uint8_t raw[format::kHeaderSize] = {};  // the first 192 bytes (fewer when the file is shorter)
  bool header_complete = false;           // the file has all 192 header bytes
  format::HeaderError header_error = format::HeaderError::none;
  format::SegmentHeader header;  // decoded when the file has the 64 fixed bytes
  format::SlotChoice slots;      // decided when the header is complete and sound
  // A walk can start: a sound header and a winning slot.
  bool walkable() const {
    return header_complete && header_error == format::HeaderError::none && slots.winner >= 0;
  }
  const format::Slot& winner() const { return slots.slot[slots.winner]; }
};

// Opens `path` and decodes its header and slots. Errors: not_found, io.
// A short or damaged header is not an error: see header_complete and
// header_error.
Result<Segment> open_segment(const std::string& path, Fs* fs = nullptr);

// A frame the walk met.
struct Frame {
  uint64_t offset = 0;
  format::FrameHeader header;  // decoded when 16 bytes were there
  uint64_t sequence = 0;       // data frames: the sequence the walk gives it
  // Data frames, when the walk reads payloads: the payload (valid until the
  // next call to next()) and the CRC computed over header bytes 0-11 and it.
  // Checkpoints and EOFs: the CRC of header bytes 0-11.
  std::string_view payload;
  uint32_t computed_crc = 0;
  // Empty for a frame the walk accepts; else the verify kind of the stop
  // (truncated_header, bad_flags, frame_crc, checkpoint_crc, ...), a short
  // text, and what was expected and found, as verify prints them.
  std::string problem, message, expected, found;
  bool stops() const { return !problem.empty(); }
  bool eof() const { return problem.empty() && header.is_eof(); }
  uint64_t end() const {
    return offset + format::kFrameHeaderSize + (header.is_data() ? header.word : 0);
  }
};

// Walks frames from the winning slot's read offset (the segment must be
// walkable()). Reads through a large window, not one read per header.
class FrameWalker {
 public:
  // read_payloads false skips payloads: data CRCs are not checked and
  // Frame::payload stays empty (the headers are what checkpoints vouch for).
  FrameWalker(const Segment& segment, bool read_payloads);
  ~FrameWalker();
  FrameWalker(const FrameWalker&) = delete;
  FrameWalker& operator=(const FrameWalker&) = delete;

  // The next frame. After an EOF or a frame with a problem the walk is over
  // and next() returns that frame again. Errors: io.
  Result<Frame> next();
  // The walk's position: the offset and sequence of the next frame.
  uint64_t offset() const;
  uint64_t sequence() const;
  // The last batch boundary at or before offset(), and the sequence there.
  uint64_t boundary_offset() const;
  uint64_t boundary_sequence() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The first offset at or after `from` that holds a data frame valid on its
// own in `segment`: flags, the segment's generation, reserved bytes and
// stride sound, the payload inside the file, the CRC matching. Where a tool
// resynchronizes after damage. nullopt when there is none. Errors: io.
Result<std::optional<uint64_t>> find_valid_data_frame(const Segment& segment, uint64_t from);

}  // namespace alog::inspect
