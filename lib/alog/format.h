// The on-disk format, version 1 (FORMAT.md; man/alog-format.5): constants and
// pure codecs for the segment header, the metadata slots and frame headers.
// No I/O here. All integers are big-endian.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace alog::format {

inline constexpr uint32_t kMagic = 0x414C4F47;  // "ALOG"
inline constexpr uint16_t kVersion = 1;
inline constexpr uint64_t kHeaderSize = 192;  // fixed part + slot A + slot B
inline constexpr uint64_t kFixedSize = 64;
inline constexpr uint64_t kSlotSize = 64;
inline constexpr uint64_t kSlotAOffset = 64;
inline constexpr uint64_t kSlotBOffset = 128;
inline constexpr uint64_t kFrameHeaderSize = 16;
inline constexpr uint64_t kEmptySegmentSize = kHeaderSize + kFrameHeaderSize;  // 208
inline constexpr uint32_t kMaxBatchRecords = 65535;
inline constexpr uint32_t kMaxPending = 65535;

inline constexpr uint16_t kFlagData = 0x0001;
inline constexpr uint16_t kFlagBatchEnd = 0x0002;
inline constexpr uint16_t kFlagCheckpoint = 0x0004;
inline constexpr uint16_t kFlagEof = 0x0008;
// A lost record (written only by salvage): a data frame with no payload.
inline constexpr uint16_t kFlagLost = 0x0010;

// Segment file names: 20 zero-padded decimal digits of the start sequence.
std::string segment_name(uint64_t start_sequence);  // "00000000000000000042.seg"
// The start sequence a name encodes, for "N.seg" only (not .tmp/.del).
std::optional<uint64_t> parse_segment_name(std::string_view name);
inline constexpr std::string_view kTmpSuffix = ".seg.tmp";
inline constexpr std::string_view kDelSuffix = ".seg.del";
inline constexpr std::string_view kLockName = "LOCK";
inline constexpr std::string_view kOptionsName = "alog.json";
inline constexpr std::string_view kLostFoundName = "lost+found";
// Not part of the format: the Unix socket a running `alog append` serves
// maintenance requests on (cmd/control_protocol.h); readers ignore it.
inline constexpr std::string_view kControlSocketName = "control.sock";

inline void put16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v >> 8);
  p[1] = uint8_t(v);
}
inline void put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = uint8_t(v >> (24 - 8 * i));
}
inline void put64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = uint8_t(v >> (56 - 8 * i));
}
inline uint16_t get16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }
inline uint32_t get32(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}
inline uint64_t get64(const uint8_t* p) { return uint64_t(get32(p)) << 32 | get32(p + 4); }

// Fixed part of the segment header (bytes 0-63):
//   0  4  magic "ALOG"         4  2  version (1)      6  2  header size (192)
//   8  8  start sequence      16  8  created at (Unix ms)
//  24  2  frame generation (1..65535)                26 34  reserved, 0
//  60  4  CRC32C of bytes 0-59
struct SegmentHeader {
  uint64_t start_sequence = 0;
  uint64_t created_at_ms = 0;
  uint16_t generation = 1;
};
void encode_segment_header(const SegmentHeader& h, uint8_t out[kFixedSize]);
// Why a fixed header does not decode; nullptr when it does.
enum class HeaderError : uint8_t {
  none, bad_magic, bad_version, bad_header_size, zero_generation, reserved_nonzero, bad_crc
};
const char* header_error_text(HeaderError e);
HeaderError decode_segment_header(const uint8_t in[kFixedSize], SegmentHeader* out);

// A metadata slot (bytes 64-127 and 128-191):
//   0  8  read offset          8  8  first sequence     16  4  running CRC at read offset
//  20  2  pending at read off 22  2  slot counter       24  8  synced offset
//  32  8  synced sequence     40  4  running CRC there  44  2  pending there
//  46 14  reserved, 0         60  4  CRC32C of bytes 0-59
struct Slot {
  uint64_t read_offset = kHeaderSize;
  uint64_t first_sequence = 0;
  uint32_t read_crc = 0;
  uint16_t read_pending = 0;
  uint16_t counter = 0;
  uint64_t synced_offset = kHeaderSize;
  uint64_t synced_sequence = 0;
  uint32_t synced_crc = 0;
  uint16_t synced_pending = 0;
  bool operator==(const Slot&) const = default;
};
void encode_slot(const Slot& s, uint8_t out[kSlotSize]);
enum class SlotState : uint8_t { valid, zero, invalid };
// Decodes a slot and checks it against the header's start sequence.
SlotState decode_slot(const uint8_t in[kSlotSize], uint64_t start_sequence, Slot* out,
                      std::string* why = nullptr);
// Serial-number arithmetic on 16 bits: a wins over b when (a-b) mod 65536 is in 1..32767.
bool counter_wins(uint16_t a, uint16_t b);

// The outcome of reading both slots.
struct SlotChoice {
  SlotState state[2] = {SlotState::zero, SlotState::zero};
  Slot slot[2];
  int winner = -1;  // 0 (A), 1 (B), or -1: the header is corrupt
  std::string why[2];
  std::string error;  // why there is no winner
};
SlotChoice choose_slot(const uint8_t header[kHeaderSize], uint64_t start_sequence);

// A frame header (16 bytes):
//   0  4  data: payload length   checkpoint/EOF: checkpoint CRC
//   4  2  data: stride (1)       checkpoint/EOF: checkpoint stride (pending count)
//   6  2  reserved, 0            8  2  frame generation     10  2  flags
//  12  4  CRC32C of bytes 0-11 followed by the payload
struct FrameHeader {
  uint32_t word = 0;     // payload length, or checkpoint CRC
  uint16_t stride = 0;   // 1 for data, or checkpoint pending count
  uint16_t reserved = 0;
  uint16_t generation = 0;
  uint16_t flags = 0;
  uint32_t crc = 0;

  // Data frames: Data, Data+BatchEnd, and the lost ones (Data+Lost, Data+BatchEnd+Lost).
  bool is_data() const { return (flags & ~(kFlagBatchEnd | kFlagLost)) == kFlagData; }
  bool is_batch_end() const { return is_data() && (flags & kFlagBatchEnd); }
  bool is_lost() const { return is_data() && (flags & kFlagLost); }
  bool is_checkpoint() const { return flags == kFlagCheckpoint; }
  bool is_eof() const { return flags == (kFlagCheckpoint | kFlagEof); }
  bool flags_valid() const { return is_data() || is_checkpoint() || is_eof(); }
};
// Inline: walks decode every frame's header.
inline FrameHeader decode_frame_header(const uint8_t in[kFrameHeaderSize]) {
  FrameHeader h;
  h.word = get32(in);
  h.stride = get16(in + 4);
  h.reserved = get16(in + 6);
  h.generation = get16(in + 8);
  h.flags = get16(in + 10);
  h.crc = get32(in + 12);
  return h;
}
// Bytes 0-11 of a header.
inline void encode_frame_prefix(const FrameHeader& h, uint8_t out[12]) {
  put32(out, h.word);
  put16(out + 4, h.stride);
  put16(out + 6, h.reserved);
  put16(out + 8, h.generation);
  put16(out + 10, h.flags);
}
// A data frame header for a payload whose CRC32C (of the payload alone) is
// payload_crc: the stored CRC is extend(crc(bytes 0-11), payload).
void encode_data_header(uint32_t length, uint16_t generation, bool batch_end,
                        const void* payload, size_t payload_len, uint8_t out[kFrameHeaderSize]);
// A checkpoint (eof=false) or EOF frame storing a running CRC and pending count.
void encode_checkpoint(uint32_t running_crc, uint16_t pending, uint16_t generation, bool eof,
                       uint8_t out[kFrameHeaderSize]);
// The end of a segment's frames at a batch boundary whose running CRC and
// pending count are given: a checkpoint first when the boundary follows a
// data frame without BatchEnd (open_batch), then the EOF. Returns the bytes
// written to out (16 or 32).
size_t encode_end(uint32_t running_crc, uint16_t pending, uint16_t generation, bool open_batch,
                  uint8_t out[2 * kFrameHeaderSize]);
// A new segment's first 208 bytes: header, slot A = {read offset 192, first
// sequence = start, counter 1, synced offset 192, ...}, slot B all zero, and
// an empty EOF at 192.
void encode_new_segment(const SegmentHeader& h, uint8_t out[kEmptySegmentSize]);
// Slot A of a new segment.
Slot new_segment_slot(uint64_t start_sequence);
// The CRC a frame header should store, given its payload bytes.
uint32_t frame_crc(const uint8_t header[kFrameHeaderSize], const void* payload, size_t len);
// Human name of a flags value: "data", "data+batch_end", "lost",
// "lost+batch_end", "checkpoint", "eof", "unwritten" (0) or "invalid".
const char* frame_kind_name(uint16_t flags);
std::string flags_text(uint16_t flags);  // "Data|BatchEnd"

}  // namespace alog::format
