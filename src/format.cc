// Codecs for the segment header, metadata slots and frame headers (FORMAT.md).
#include "alog/format.h"

#include <cstring>
#include <iterator>

#include "alog/crc32c.h"

namespace alog::format {

std::string segment_name(uint64_t start_sequence) {
  // Twenty digits, zero-padded (UINT64_MAX has twenty), then ".seg"; by
  // hand, as opening a log names every segment (snprintf was ~1,200
  // instructions a name).
  std::string name(24, '0');
  for (int i = 19; start_sequence > 0; i--, start_sequence /= 10) name[i] = char('0' + start_sequence % 10);
  name.replace(20, 4, ".seg");
  return name;
}

std::optional<uint64_t> parse_segment_name(std::string_view name) {
  if (name.size() != 24 || name.substr(20) != ".seg") return std::nullopt;
  uint64_t v = 0;
  for (int i = 0; i < 20; i++) {
    char c = name[i];
    if (c < '0' || c > '9') return std::nullopt;
    uint64_t d = uint64_t(c - '0');
    if (v > (UINT64_MAX - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

void encode_segment_header(const SegmentHeader& h, uint8_t out[kFixedSize]) {
  std::memset(out, 0, kFixedSize);
  put32(out, kMagic);
  put16(out + 4, kVersion);
  put16(out + 6, static_cast<uint16_t>(kHeaderSize));
  put64(out + 8, h.start_sequence);
  put64(out + 16, h.created_at_ms);
  put16(out + 24, h.generation);
  put32(out + 60, crc32c(out, 60));
}

const char* header_error_text(HeaderError e) {
  switch (e) {
    case HeaderError::none: return "ok";
    case HeaderError::bad_magic: return "bad magic (not an alog segment)";
    case HeaderError::bad_version: return "unknown format version";
    case HeaderError::bad_header_size: return "header size is not 192";
    case HeaderError::zero_generation: return "frame generation 0";
    case HeaderError::reserved_nonzero: return "reserved header bytes are not zero";
    case HeaderError::bad_crc: return "segment header crc mismatch";
  }
  return "?";
}

HeaderError decode_segment_header(const uint8_t in[kFixedSize], SegmentHeader* out) {
  if (get32(in) != kMagic) return HeaderError::bad_magic;
  if (get32(in + 60) != crc32c(in, 60)) return HeaderError::bad_crc;
  if (get16(in + 4) != kVersion) return HeaderError::bad_version;
  if (get16(in + 6) != kHeaderSize) return HeaderError::bad_header_size;
  for (int i = 26; i < 60; i++)
    if (in[i] != 0) return HeaderError::reserved_nonzero;
  out->start_sequence = get64(in + 8);
  out->created_at_ms = get64(in + 16);
  out->generation = get16(in + 24);
  if (out->generation == 0) return HeaderError::zero_generation;
  return HeaderError::none;
}

void encode_slot(const Slot& s, uint8_t out[kSlotSize]) {
  std::memset(out, 0, kSlotSize);
  put64(out, s.read_offset);
  put64(out + 8, s.first_sequence);
  put32(out + 16, s.read_crc);
  put16(out + 20, s.read_pending);
  put16(out + 22, s.counter);
  put64(out + 24, s.synced_offset);
  put64(out + 32, s.synced_sequence);
  put32(out + 40, s.synced_crc);
  put16(out + 44, s.synced_pending);
  put32(out + 60, crc32c(out, 60));
}

SlotState decode_slot(const uint8_t in[kSlotSize], uint64_t start_sequence, Slot* out,
                      std::string* why) {
  auto fail = [&](const char* w) {
    if (why) *why = w;
    return SlotState::invalid;
  };
  uint64_t any = 0;
  for (uint64_t i = 0; i < kSlotSize; i += 8) any |= get64(in + i);
  if (any == 0) return SlotState::zero;
  if (get32(in + 60) != crc32c(in, 60)) return fail("slot crc mismatch");
  for (int i = 46; i < 60; i++)
    if (in[i] != 0) return fail("reserved slot bytes are not zero");
  Slot s;
  s.read_offset = get64(in);
  s.first_sequence = get64(in + 8);
  s.read_crc = get32(in + 16);
  s.read_pending = get16(in + 20);
  s.counter = get16(in + 22);
  s.synced_offset = get64(in + 24);
  s.synced_sequence = get64(in + 32);
  s.synced_crc = get32(in + 40);
  s.synced_pending = get16(in + 44);
  if (s.read_offset < kHeaderSize || s.read_offset > s.synced_offset)
    return fail("slot offsets out of order (need 192 <= read offset <= synced offset)");
  if (s.first_sequence < start_sequence || s.first_sequence > s.synced_sequence)
    return fail("slot sequences out of order (need start <= first <= synced sequence)");
  *out = s;
  return SlotState::valid;
}

bool counter_wins(uint16_t a, uint16_t b) {
  uint16_t d = static_cast<uint16_t>(a - b);
  return d >= 1 && d <= 32767;
}

SlotChoice choose_slot(const uint8_t header[kHeaderSize], uint64_t start_sequence) {
  SlotChoice c;
  for (int i = 0; i < 2; i++)
    c.state[i] = decode_slot(header + kSlotAOffset + i * kSlotSize, start_sequence, &c.slot[i],
                             &c.why[i]);
  bool va = c.state[0] == SlotState::valid, vb = c.state[1] == SlotState::valid;
  if (va && vb) {
    if (counter_wins(c.slot[0].counter, c.slot[1].counter)) c.winner = 0;
    else if (counter_wins(c.slot[1].counter, c.slot[0].counter)) c.winner = 1;
    else c.error = "two valid metadata slots of which neither wins";
  } else if (va) {
    c.winner = 0;
  } else if (vb) {
    c.winner = 1;
  } else {
    c.error = "no valid metadata slot";
    if (!c.why[0].empty()) c.error += " (A: " + c.why[0] + ")";
    if (!c.why[1].empty()) c.error += " (B: " + c.why[1] + ")";
  }
  return c;
}

void encode_data_header(uint32_t length, uint16_t generation, bool batch_end, const void* payload,
                        size_t payload_len, uint8_t out[kFrameHeaderSize]) {
  FrameHeader h;
  h.word = length;
  h.stride = 1;
  h.generation = generation;
  h.flags = batch_end ? (kFlagData | kFlagBatchEnd) : kFlagData;
  encode_frame_prefix(h, out);
  uint32_t c = crc32c(out, 12);
  if (payload_len) c = crc32c_extend(c, payload, payload_len);
  put32(out + 12, c);
}

void encode_checkpoint(uint32_t running_crc, uint16_t pending, uint16_t generation, bool eof,
                       uint8_t out[kFrameHeaderSize]) {
  FrameHeader h;
  h.word = running_crc;
  h.stride = pending;
  h.generation = generation;
  h.flags = eof ? (kFlagCheckpoint | kFlagEof) : kFlagCheckpoint;
  encode_frame_prefix(h, out);
  put32(out + 12, crc32c(out, 12));
}

size_t encode_end(uint32_t running_crc, uint16_t pending, uint16_t generation, bool open_batch,
                  uint8_t out[2 * kFrameHeaderSize]) {
  size_t n = 0;
  if (open_batch) {
    encode_checkpoint(running_crc, pending, generation, false, out);
    n = kFrameHeaderSize;
    running_crc = 0;
    pending = 0;
  }
  encode_checkpoint(running_crc, pending, generation, true, out + n);
  return n + kFrameHeaderSize;
}

Slot new_segment_slot(uint64_t start_sequence) {
  Slot a;
  a.read_offset = kHeaderSize;
  a.first_sequence = start_sequence;
  a.counter = 1;
  a.synced_offset = kHeaderSize;
  a.synced_sequence = start_sequence;
  return a;
}

void encode_new_segment(const SegmentHeader& h, uint8_t out[kEmptySegmentSize]) {
  std::memset(out, 0, kEmptySegmentSize);
  encode_segment_header(h, out);
  encode_slot(new_segment_slot(h.start_sequence), out + kSlotAOffset);
  encode_checkpoint(0, 0, h.generation, true, out + kHeaderSize);
}

uint32_t frame_crc(const uint8_t header[kFrameHeaderSize], const void* payload, size_t len) {
  return crc32c_extend2(0, header, 12, payload, len);
}

const char* frame_kind_name(uint16_t flags) {
  switch (flags) {
    case kFlagData: return "data";
    case kFlagData | kFlagBatchEnd: return "data+batch_end";
    case kFlagData | kFlagLost: return "lost";
    case kFlagData | kFlagBatchEnd | kFlagLost: return "lost+batch_end";
    case kFlagCheckpoint: return "checkpoint";
    case kFlagCheckpoint | kFlagEof: return "eof";
    case 0: return "unwritten";
    default: return "invalid";
  }
}

std::string flags_text(uint16_t flags) {
  static const char* kNames[] = {"Data", "BatchEnd", "Checkpoint", "EOF", "Lost"};
  constexpr unsigned kKnown = (1u << std::size(kNames)) - 1;
  // Appended piece by piece: g++ 12 -O3 warns falsely (-Wrestrict) on
  // `s += a + std::string(b)`.
  std::string s;
  auto add = [&s](const char* name) {
    if (!s.empty()) s.push_back('|');
    s.append(name);
  };
  for (unsigned i = 0; i < std::size(kNames); i++)
    if (flags & (1u << i)) add(kNames[i]);
  if (flags & ~kKnown) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%04x", flags & ~kKnown);
    add(buf);
  }
  return s.empty() ? "0" : s;
}

}  // namespace alog::format
