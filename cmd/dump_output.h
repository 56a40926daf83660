// alog dump-frames' output (man/alog-dump-frames.1): the segment, slot,
// frame, checkpoint, resync and end lines, as text or JSON objects. The walk
// that decides what they say is dump_frames.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cli.h"
#include "segment_file.h"

namespace alog::cli::dump {

// "data", "checkpoint", "eof" or "invalid" for a frame's flags.
const char* kind_of(uint16_t flags);

// One frame as read: header fields when 16 bytes were there, the payload of
// a data frame when it lies inside the file, and what the walk made of it.
struct Frame {
  uint64_t offset = 0;
  bool have_header = false;
  uint8_t raw[format::kFrameHeaderSize] = {};  // the header bytes, when there
  format::FrameHeader h;
  std::string kind = "invalid";
  bool payload_inside = false;
  std::string payload;
  std::optional<uint32_t> computed;
  std::string status = "ok";  // "ok" or a verify kind
  std::optional<uint64_t> seq;
  std::string region = "live";  // live, before_read_offset or after_eof
  uint64_t end() const { return offset + format::kFrameHeaderSize + (kind == "data" ? h.word : 0); }
};

// What a checkpoint or EOF frame covers, beside what it stores.
struct Coverage {
  uint64_t from = 0, to = 0;
  uint64_t records = 0;
  std::optional<uint64_t> first, last;
  std::optional<uint32_t> walk_crc;  // unknown after a resync
  uint16_t walk_count = 0;
  static Coverage since(uint64_t offset) {
    Coverage c;
    c.from = offset;
    return c;
  }
};

// The end line of a segment.
struct End {
  std::string status;  // clean, torn_tail, in_flight or corruption
  std::optional<uint64_t> eof_offset, first, next;
  uint64_t records = 0, checkpoints = 0, batches = 0, problems = 0;
};

// A cut piece in lost+found/ (NAME.bin), as its manifest (NAME.json) says.
struct Piece {
  std::string source;  // the segment it was cut from
  uint64_t offset = 0; // where in the source its first byte was
  uint64_t length = 0;
  std::optional<uint16_t> generation;  // of the source's frames
  std::string reason;
};
// The manifest beside `path` when `path` is a cut piece (NAME.bin with a
// NAME.json whose offset is above 0); nullopt otherwise (a whole segment
// saved by a move or a salvage is a segment file).
std::optional<Piece> read_piece(const std::string& path);

class Output {
 public:
  Output(bool json, PayloadEncoding enc, std::string payload_option)
      : json_(json), enc_(enc), payload_option_(std::move(payload_option)) {}
  // The segment line; true when the header is sound.
  bool segment(const std::string& name, const SegmentFile& s, bool active);
  // Both slot lines; the number of invalid slots.
  int slots(const SegmentFile& s);
  // A frame line, then its checkpoint line for a checkpoint or EOF.
  void frame(const Frame& f, const std::optional<Coverage>& covers = std::nullopt);
  // A resync line: the walk goes on at `to` (nullopt: nothing valid follows).
  void resync(uint64_t length, uint64_t from, std::optional<uint64_t> to, const char* reason);
  void end(const SegmentFile& s, const End& e);
  // The line of a cut piece, in place of the segment and slot lines.
  void piece(const std::string& name, const Piece& p, uint64_t file_length);
  // A piece's last line: frames decoded and how many failed.
  void piece_end(uint64_t frames, uint64_t failed);
  // A problem of the log's that no one segment shows (a sequence gap or
  // overlap between two), with verify's keys.
  void problem(const Problem& p);

 private:
  void emit(const Json& j, const std::string& text);
  bool json_;
  PayloadEncoding enc_;
  std::string payload_option_;
  std::string name_;
};

}  // namespace alog::cli::dump
