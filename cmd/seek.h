// alog seek: the lookup of one record (seek.cc) and, with --salvage, of
// where a salvage would leave it (seek_salvage.cc).
#pragma once

#include <optional>
#include <string>

#include "alog/inspect.h"
#include "cli.h"
#include "segment_file.h"

namespace alog::cli {

struct SeekOptions {
  std::string path;
  std::string seq;
  std::string payload = "none";
  bool salvage = false;
};

struct SeekResult {
  std::string file;
  uint64_t start_seq = 0, first_seq = 0;
  std::optional<uint64_t> next_seq;
  std::optional<uint64_t> checkpoint_offset, checkpoint_seq;
  uint64_t start_offset = 0, walk_start_seq = 0;
  uint64_t headers_walked = 0;
  bool found = false;  // false: the walk stopped before the record
  uint64_t frame_offset = 0;
  format::FrameHeader h;
  uint32_t computed_crc = 0;
  std::string payload;
  inspect::Frame stop;  // when !found
};

// The lookup of seq in one segment file (`shown` names it in errors).
SeekResult locate(SegmentFile& seg, const std::string& name, uint64_t seq, const std::string& shown);

// Prints a lookup (text or JSON) and returns the exit status: 0 when the
// record's CRC is good, 4 when not or when the walk stopped (`problem`).
// seek --salvage adds `salvage` (JSON) and `note` (a text line after the frame).
int print_seek(const SeekOptions& o, const Global& g, uint64_t seq, const SeekResult& r,
               const std::optional<Problem>& problem, const Json* salvage = nullptr,
               const std::string& note = "");

// The frame keys of seek's JSON (frame_offset ... crc_status), null without a frame.
void put_frame_json(Json& j, const SeekResult* r);
// "frame at OFFSET{where}: length, flags, crc" of a found record.
std::string frame_text(const SeekResult& r, const std::string& where);
// "payload ENCODING: TEXT" (nothing for none).
void print_payload(const std::string& payload, PayloadEncoding enc);

// seek --salvage.
int run_seek_salvaged(const SeekOptions& o, const Global& g, uint64_t seq);

}  // namespace alog::cli
