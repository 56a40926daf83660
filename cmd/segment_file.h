// One segment file decoded with the public codecs of alog/format.h: its
// header, both slots, and a frame-by-frame walk that says for every frame
// what FORMAT.md "Walking a segment" would make of it. Used by dump-frames
// (which shows everything), seek (which explains a lookup) and by cat for a
// single SEGMENT argument. Never writes.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "alog/format.h"
#include "alog/fs.h"

namespace alog::cli {

struct SegmentFile {
  std::string path;
  std::unique_ptr<File> file;
  uint64_t length = 0;
  uint8_t raw[format::kHeaderSize] = {};
  bool header_complete = false;  // the file has the 192 header bytes
  format::HeaderError header_error = format::HeaderError::none;
  format::SegmentHeader header;
  format::SlotChoice slots;
  // Usable for a walk: header decoded and a winning slot.
  bool walkable() const { return header_complete && header_error == format::HeaderError::none && slots.winner >= 0; }
  const format::Slot& winner() const { return slots.slot[slots.winner]; }
};

// Opens and decodes a segment file. A Failure (not_found, io) when it cannot be read.
SegmentFile open_segment_file(const std::string& path);
// For commands that need records from it: a Failure unless the file can be
// walked (not_a_log, exit 8, when it does not start with "ALOG"; corrupt,
// exit 4, for a damaged header or no winning slot).
void require_walkable(const SegmentFile& seg);

// The walk's state just before a frame.
struct WalkState {
  uint64_t offset = format::kHeaderSize;
  uint64_t seq = 0;
  uint32_t crc = 0;
  uint16_t pending = 0;
  bool known = true;  // false after a resync: the running CRC is unknown
  bool after_data_without_batch_end = false;
};

struct WalkFrame {
  uint64_t offset = 0;
  format::FrameHeader h;
  uint64_t bytes_left = 0;            // after the header
  std::optional<uint64_t> seq;        // data frames (when the state is known)
  uint32_t computed_crc = 0;          // the frame CRC as computed (data: over the payload)
  bool payload_read = false;
  std::string payload;                // when payloads were asked for
  uint32_t walk_crc = 0;              // checkpoint/EOF: what the walk expects
  uint16_t walk_pending = 0;
  // Empty when the frame is fine; else a verify kind (frame_crc, bad_flags, ...).
  std::string problem;
  std::string expected, found;        // as verify prints them
  bool stops_walk() const { return !problem.empty(); }
  uint64_t end() const { return offset + format::kFrameHeaderSize + (h.is_data() ? h.word : 0); }
};

// Reads frames from a state. With read_payloads false, data CRCs are not
// checked (unless the payload is needed: never). A frame with a problem is
// returned once; the caller decides to stop or resync.
class FrameWalker {
 public:
  FrameWalker(SegmentFile& seg, WalkState start, bool read_payloads, bool keep_payloads);
  // The next frame, or nullopt when no 16 bytes are left... except that a
  // truncated header is returned as a frame with problem "truncated_header".
  std::optional<WalkFrame> next();
  const WalkState& state() const { return st_; }
  // The last batch boundary at or before the current position.
  uint64_t boundary() const { return boundary_; }
  std::optional<uint64_t> boundary_seq() const { return boundary_seq_; }
  // After a problem: finds the next offset holding a valid data header of this
  // generation with its payload inside the file and a matching CRC; moves there
  // with an unknown state. False when there is none.
  bool resync(uint64_t from);
  // Skips past a data frame whose CRC failed but whose length is plausible.
  void skip_damaged(const WalkFrame& f);

 private:
  bool plausible_data_at(uint64_t off, std::string* scratch);

  SegmentFile& seg_;
  WalkState st_;
  bool read_payloads_, keep_payloads_;
  uint64_t boundary_ = format::kHeaderSize;
  std::optional<uint64_t> boundary_seq_;
};

// The walk's start at the winning slot's read offset.
WalkState read_offset_state(const SegmentFile& seg);

}  // namespace alog::cli

#include "alog/verify.h"

namespace alog::cli {

// One sentence for a frame problem kind ("frame header cut short").
const char* kind_sentence(const std::string& kind);

// Describes where the walk of the segment at `path` stops, as verify would:
// walks from the winning slot's read offset to the first frame that stops
// it. Used when a reader met damage and only knows the file and offset.
// nullopt when the walk finds no stop (the damage moved, or was repaired).
std::optional<Problem> diagnose_stop(const std::string& path, Classification cls);

}  // namespace alog::cli
