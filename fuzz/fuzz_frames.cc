// Fuzz target: frame walking over one arbitrary segment file, the way a dump
// tool walks it. The input is the file itself.
//
//  * the header codecs: decode_segment_header, choose_slot;
//  * the library's walk (frame_reader.h) from the winning slot's read offset,
//    with and without payloads: every accepted frame moves forward, the
//    batch boundary never passes the walk, a stop lies inside the file;
//  * the same walk taking runs of data frames at once (Walker::take_data)
//    accepts the same frames, in the same states, and stops the same way;
//  * a dump-like listing from offset 192 that trusts only lengths, never
//    running past the end;
//  * verify() of the file alone (full and headers-only).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "alog/format.h"
#include "alog/verify.h"
#include "frame_reader.h"
#include "fuzz_input.h"

using namespace alog;
using namespace alog::format;

namespace {

constexpr const char* kPath = "/fz/log/00000000000000000000.seg";

void walk(File& f, uint64_t len, uint16_t gen, detail::WalkState start, bool payloads) {
  detail::FrameWindow w(&f, len, 4096);
  detail::Walker walker(&w, gen, start, payloads);
  walker.add_boundary(start.offset);
  uint64_t last = start.offset;
  for (int i = 0; i < 200000; i++) {
    detail::Stop s = walker.step();
    const auto& st = walker.state();
    if (walker.boundary().offset > st.offset) fuzz::violated("the batch boundary passed the walk");
    if (s == detail::Stop::none) {
      if (st.offset <= last) fuzz::violated("an accepted frame did not move the walk forward");
      if (st.offset > len) fuzz::violated("an accepted frame ends past the file");
      last = st.offset;
      continue;
    }
    if (s == detail::Stop::io_error) fuzz::violated("an io error on a MemFs");
    if (st.offset > len && start.offset <= len) fuzz::violated("a stop past the end of the file");
    return;
  }
}

bool same(const detail::WalkState& a, const detail::WalkState& b) {
  return a.offset == b.offset && a.seq == b.seq && a.crc == b.crc && a.pending == b.pending &&
         a.open_batch == b.open_batch;
}

// The walk one frame at a time, then again taking runs of at most 1-8
// frames (varied from the file's last byte) where it can: each run must
// end in the state the first walk had after that many frames.
void walk_runs(File& f, uint64_t len, uint16_t gen, detail::WalkState start, size_t max) {
  std::vector<std::pair<detail::WalkState, detail::WalkState>> after;  // state, boundary
  detail::Stop stop;
  std::string found;
  {
    detail::FrameWindow w(&f, len, 4096);
    detail::Walker walker(&w, gen, start, true);
    while ((stop = walker.step()) == detail::Stop::none && after.size() < 200000)
      after.emplace_back(walker.state(), walker.boundary());
    if (stop == detail::Stop::none) return;  // too long to compare
    after.emplace_back(walker.state(), walker.boundary());
    found = walker.found();
  }
  detail::FrameWindow w(&f, len, 4096);
  detail::Walker walker(&w, gen, start, true);
  RecordView run[8];
  size_t i = 0;
  while (true) {
    const size_t n = walker.take_data(run, max);
    if (n > 0) {
      i += n;
      if (i >= after.size() || !same(walker.state(), after[i - 1].first) ||
          !same(walker.boundary(), after[i - 1].second))
        fuzz::violated("a run of frames ended in another state than the walk one frame at a time");
      continue;
    }
    const detail::Stop s = walker.step();
    if (s != detail::Stop::none) {
      if (s != stop || i + 1 != after.size() || !same(walker.state(), after[i].first) || walker.found() != found)
        fuzz::violated("a walk taking runs stopped otherwise than the walk one frame at a time");
      return;
    }
    if (++i >= after.size() || !same(walker.state(), after[i - 1].first))
      fuzz::violated("a step after a run ended in another state than the walk one frame at a time");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string img(reinterpret_cast<const char*>(data), size);
  test::MemFs fs;
  if (!fs.mkdir("/fz").is_ok() || !fs.mkdir("/fz/log").is_ok() || !fs.set_contents(kPath, img).is_ok())
    fuzz::violated("setup");
  auto file = fs.open(kPath, OpenMode::read);
  if (!file.is_ok()) fuzz::violated("open");

  uint16_t gen = 1;
  detail::WalkState start;
  if (size >= kHeaderSize) {
    const auto* p = reinterpret_cast<const uint8_t*>(img.data());
    SegmentHeader h;
    if (decode_segment_header(p, &h) == HeaderError::none) gen = h.generation;
    SlotChoice c = choose_slot(p, h.start_sequence);
    if (c.winner >= 0) start = detail::read_state(c.slot[c.winner]);
  }
  walk(**file, size, gen, start, true);
  walk(**file, size, gen, start, false);
  walk_runs(**file, size, gen, start, size ? 1 + data[size - 1] % 8 : 1);

  // A dump-like listing: every header from 192 on, by its length alone.
  uint64_t off = kHeaderSize, frames = 0;
  const auto* p = reinterpret_cast<const uint8_t*>(img.data());
  while (off + kFrameHeaderSize <= size && frames < 100000) {
    FrameHeader h = decode_frame_header(p + off);
    (void)frame_kind_name(h.flags);
    (void)flags_text(h.flags);
    uint64_t next = off + kFrameHeaderSize + (h.is_data() ? h.word : 0);
    if (next <= off) fuzz::violated("the listing did not move forward");
    off = next;
    frames++;
  }

  VerifyOptions vo;
  vo.fs = &fs;
  auto full = verify(kPath, vo);
  vo.headers_only = true;
  auto headers = verify(kPath, vo);
  if (full.is_ok() && headers.is_ok() && full->clean() && !headers->clean())
    fuzz::violated("headers-only verify finds damage that a full verify does not");
  return 0;
}
