// FORMAT.md's byte tables, field by field.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "alog/crc32c.h"
#include "alog/format.h"

using namespace alog;
using namespace alog::format;

TEST_CASE("the segment header puts every field at its FORMAT.md offset, big-endian") {
  uint8_t b[64];
  encode_segment_header({0x0102030405060708ull, 0x1112131415161718ull, 0x2122}, b);
  CHECK(std::memcmp(b, "ALOG", 4) == 0);
  CHECK(get16(b + 4) == 1);
  CHECK(get16(b + 6) == 192);
  CHECK(get64(b + 8) == 0x0102030405060708ull);
  CHECK(get64(b + 16) == 0x1112131415161718ull);
  CHECK(get16(b + 24) == 0x2122);
  for (int i = 26; i < 60; i++) CHECK(b[i] == 0);
  CHECK(get32(b + 60) == crc32c(b, 60));
  SegmentHeader h;
  CHECK(decode_segment_header(b, &h) == HeaderError::none);
  CHECK(h.start_sequence == 0x0102030405060708ull);
}

TEST_CASE("a segment header with a wrong magic, version, size, generation or reserved byte is rejected") {
  uint8_t good[64];
  encode_segment_header({5, 6, 1}, good);
  SegmentHeader h;
  auto resign = [](uint8_t* b) { put32(b + 60, crc32c(b, 60)); };
  uint8_t b[64];
  std::memcpy(b, good, 64);
  b[0] = 'X';
  resign(b);
  CHECK(decode_segment_header(b, &h) == HeaderError::bad_magic);
  std::memcpy(b, good, 64);
  put16(b + 4, 2);
  resign(b);
  CHECK(decode_segment_header(b, &h) == HeaderError::bad_version);
  std::memcpy(b, good, 64);
  put16(b + 6, 128);
  resign(b);
  CHECK(decode_segment_header(b, &h) == HeaderError::bad_header_size);
  std::memcpy(b, good, 64);
  put16(b + 24, 0);
  resign(b);
  CHECK(decode_segment_header(b, &h) == HeaderError::zero_generation);
  std::memcpy(b, good, 64);
  b[40] = 1;
  resign(b);
  CHECK(decode_segment_header(b, &h) == HeaderError::reserved_nonzero);
  std::memcpy(b, good, 64);
  b[9] ^= 1;
  CHECK(decode_segment_header(b, &h) == HeaderError::bad_crc);
}

TEST_CASE("a metadata slot puts every field at its FORMAT.md offset") {
  Slot s{200, 7, 0xAABBCCDD, 3, 9, 300, 11, 0x11223344, 5};
  uint8_t b[64];
  encode_slot(s, b);
  CHECK(get64(b) == 200);
  CHECK(get64(b + 8) == 7);
  CHECK(get32(b + 16) == 0xAABBCCDD);
  CHECK(get16(b + 20) == 3);
  CHECK(get16(b + 22) == 9);
  CHECK(get64(b + 24) == 300);
  CHECK(get64(b + 32) == 11);
  CHECK(get32(b + 40) == 0x11223344);
  CHECK(get16(b + 44) == 5);
  for (int i = 46; i < 60; i++) CHECK(b[i] == 0);
  CHECK(get32(b + 60) == crc32c(b, 60));
  Slot d;
  CHECK(decode_slot(b, 7, &d) == SlotState::valid);
  CHECK(d == s);
}

TEST_CASE("a slot with offsets or sequences out of order is invalid and an all-zero slot was never written") {
  uint8_t b[64];
  Slot d;
  encode_slot({191, 0, 0, 0, 1, 192, 0, 0, 0}, b);
  CHECK(decode_slot(b, 0, &d) == SlotState::invalid);
  encode_slot({300, 0, 0, 0, 1, 200, 0, 0, 0}, b);
  CHECK(decode_slot(b, 0, &d) == SlotState::invalid);
  encode_slot({192, 4, 0, 0, 1, 192, 4, 0, 0}, b);
  CHECK(decode_slot(b, 5, &d) == SlotState::invalid);  // first < start
  encode_slot({192, 6, 0, 0, 1, 192, 5, 0, 0}, b);
  CHECK(decode_slot(b, 5, &d) == SlotState::invalid);  // first > synced
  std::memset(b, 0, 64);
  CHECK(decode_slot(b, 0, &d) == SlotState::zero);
}

TEST_CASE("slot counters compare with 16-bit serial-number arithmetic") {
  CHECK(counter_wins(2, 1));
  CHECK_FALSE(counter_wins(1, 2));
  CHECK(counter_wins(0, 65535));
  CHECK(counter_wins(32767, 0));
  CHECK_FALSE(counter_wins(32768, 0));
  CHECK_FALSE(counter_wins(0, 32768));
  CHECK_FALSE(counter_wins(7, 7));
}

TEST_CASE("two valid slots of which neither wins make the header corrupt") {
  uint8_t h[192] = {};
  encode_segment_header({0, 0, 1}, h);
  encode_slot({192, 0, 0, 0, 10, 192, 0, 0, 0}, h + 64);
  encode_slot({192, 0, 0, 0, uint16_t(10 + 32768), 192, 0, 0, 0}, h + 128);
  SlotChoice c = choose_slot(h, 0);
  CHECK(c.winner == -1);
  encode_slot({192, 0, 0, 0, 11, 192, 0, 0, 0}, h + 128);
  CHECK(choose_slot(h, 0).winner == 1);
}

TEST_CASE("the EOF of an empty generation-1 segment is the 16 bytes FORMAT.md gives") {
  uint8_t b[16];
  encode_checkpoint(0, 0, 1, true, b);
  const uint8_t want[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0x0C, 0xC3, 0x62, 0xE8, 0xF3};
  CHECK(std::memcmp(b, want, 16) == 0);
}

TEST_CASE("a data frame header stores length, stride 1, generation, flags and the crc of header and payload") {
  uint8_t b[16];
  encode_data_header(5, 3, true, "alpha", 5, b);
  CHECK(get32(b) == 5);
  CHECK(get16(b + 4) == 1);
  CHECK(get16(b + 6) == 0);
  CHECK(get16(b + 8) == 3);
  CHECK(get16(b + 10) == (kFlagData | kFlagBatchEnd));
  CHECK(get32(b + 12) == crc32c_extend(crc32c(b, 12), "alpha", 5));
  FrameHeader h = decode_frame_header(b);
  CHECK(h.is_data());
  CHECK(h.is_batch_end());
  CHECK(frame_crc(b, "alpha", 5) == h.crc);
}

TEST_CASE("only the six flag values of FORMAT.md are valid frame kinds") {
  std::vector<uint32_t> valid, lost;
  for (uint32_t f = 0; f < 65536; f++) {
    FrameHeader h;
    h.flags = uint16_t(f);
    if (h.flags_valid()) valid.push_back(f);
    if (h.is_lost()) lost.push_back(f);
  }
  CHECK(valid == std::vector<uint32_t>{0x0001, 0x0003, 0x0004, 0x000C, 0x0011, 0x0013});
  CHECK(lost == std::vector<uint32_t>{0x0011, 0x0013});
  CHECK(std::string(frame_kind_name(0x0013)) == "lost+batch_end");
  CHECK(flags_text(0x0013) == "Data|BatchEnd|Lost");
  CHECK(flags_text(0x0120) == "0x0120");
  CHECK(std::string(frame_kind_name(0)) == "unwritten");
  CHECK(std::string(frame_kind_name(0x000C)) == "eof");
}

TEST_CASE("segment names are 20 zero-padded digits and only N.seg parses") {
  CHECK(segment_name(42) == "00000000000000000042.seg");
  CHECK(segment_name(0) == "00000000000000000000.seg");
  CHECK(segment_name(UINT64_MAX) == "18446744073709551615.seg");
  for (uint64_t v : {uint64_t{1}, uint64_t{10}, uint64_t{999}, uint64_t{1} << 40, UINT64_MAX - 1})
    CHECK(parse_segment_name(segment_name(v)) == v);
  CHECK(parse_segment_name("00000000000000000042.seg") == 42);
  CHECK(parse_segment_name("18446744073709551615.seg") == UINT64_MAX);
  CHECK_FALSE(parse_segment_name("18446744073709551616.seg"));
  CHECK_FALSE(parse_segment_name("00000000000000000042.seg.tmp"));
  CHECK_FALSE(parse_segment_name("0000000000000000042.seg"));
  CHECK_FALSE(parse_segment_name("0000000000000000004x.seg"));
}
