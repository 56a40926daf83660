// The last step of verify(): one range per problem, the sequences readers
// lose because of it (man/alog-verify.1 "first_seq, last_seq"), the
// expected and found values of an unreadable header, and the problems in
// log order: by segment, then by offset.
#include <algorithm>
#include <map>

#include "alog/crc32c.h"
#include "alog/format.h"
#include "verify_internal.h"
#include "file_cache.h"

namespace alog::detail {

using namespace format;

namespace {

uint64_t start_of(const SegmentDetail& sd) {
  return sd.header_ok ? sd.start_sequence : parse_segment_name(sd.name).value_or(0);
}

std::string hex(uint64_t v, int digits) {
  static const char* k = "0123456789abcdef";
  std::string s = "0x";
  for (int i = digits - 1; i >= 0; i--) s += k[(v >> (4 * i)) & 0xF];
  return s;
}

// The first failing check of a fixed header, as expected and found values.
void header_values(const uint8_t* h, Problem& p) {
  uint32_t magic = uint32_t(h[0]) << 24 | uint32_t(h[1]) << 16 | uint32_t(h[2]) << 8 | h[3];
  // Big-endian, as every integer of the format.
  uint16_t version = uint16_t(h[4] << 8 | h[5]), size = uint16_t(h[6] << 8 | h[7]);
  uint16_t generation = uint16_t(h[24] << 8 | h[25]);
  if (magic != kMagic) {
    p.expected = "0x414c4f47";
    p.found = hex(magic, 8);
  } else if (version != kVersion) {
    p.expected = std::to_string(kVersion);
    p.found = std::to_string(version);
  } else if (size != kHeaderSize) {
    p.expected = std::to_string(kHeaderSize);
    p.found = std::to_string(size);
  } else if (generation == 0) {
    p.found.assign(1, '0');  // not = "0": g++ 12 -O3 warns falsely (-Wrestrict)
  } else {
    for (size_t i = 26; i < 60; i++)
      if (h[i]) {
        p.expected.assign(1, '0');
        p.found = std::to_string(i);
        return;
      }
    uint32_t stored = uint32_t(h[60]) << 24 | uint32_t(h[61]) << 16 | uint32_t(h[62]) << 8 | h[63];
    p.expected = hex(crc32c(h, 60), 8);
    p.found = hex(stored, 8);
  }
}

}  // namespace

void fill_problem_ranges(VerifyDetail& d, Fs& fs) {
  std::map<std::string, size_t> order;
  for (size_t i = 0; i < d.segments.size(); i++) order[d.segments[i].name] = i;
  for (Problem& p : d.report.problems) {
    auto it = order.find(p.file);
    if (it == order.end()) continue;
    const size_t i = it->second;
    const SegmentDetail& sd = d.segments[i];
    if (!sd.header_ok && (p.kind == "segment_header" || p.kind == "metadata_slots" || p.kind == "io_error")) {
      p.first_seq = parse_segment_name(sd.name);
      if (i + 1 < d.segments.size() && start_of(d.segments[i + 1]) > 0) {
        const uint64_t next = start_of(d.segments[i + 1]);
        // A successor that starts at or before the name's sequence leaves
        // the file no sequence of the chain: none is affected.
        if (p.first_seq && next <= *p.first_seq) p.first_seq.reset();
        else p.last_seq = next - 1;
      }
      if (p.kind == "segment_header" && p.expected.empty()) {
        uint8_t h[kFixedSize];
        auto f = open_shedding(fs, path_join(d.dir, sd.name), OpenMode::read);
        if (f.is_ok()) {
          auto got = (*f)->pread(h, kFixedSize, 0);
          if (got.is_ok() && *got == kFixedSize) header_values(h, p);
        }
      }
      continue;
    }
    // A stop before the synced offset (or in a sealed segment): readers
    // lose everything from the cut to the synced sequence.
    if (sd.header_ok && sd.stop != Stop::eof && p.cut_at && p.offset == sd.stop_state.offset &&
        p.classification == Classification::corruption && p.kind == stop_kind(sd.stop)) {
      uint64_t known = std::max(sd.stop_state.seq, sd.slot.synced_sequence);
      if (known > sd.boundary.seq) p.last_seq = known - 1;
    }
  }
  // Log order: the directory's own problems (leftovers) first, then by
  // segment, then by offset.
  std::stable_sort(d.report.problems.begin(), d.report.problems.end(), [&](const Problem& a, const Problem& b) {
    auto ia = order.find(a.file), ib = order.find(b.file);
    size_t sa = ia == order.end() ? 0 : ia->second + 1, sb = ib == order.end() ? 0 : ib->second + 1;
    if (sa != sb) return sa < sb;
    return a.offset.value_or(0) < b.offset.value_or(0);
  });
}

}  // namespace alog::detail
