// Fuzz target: frame walking over one arbitrary segment file, the way a dump
// tool walks it. The input is the file itself.
//
//  * the header codecs: decode_segment_header, choose_slot;
//  * the library's walk (frame_reader.h) from the winning slot's read offset,
//    with and without payloads: every accepted frame moves forward, the
//    batch boundary never passes the walk, a stop lies inside the file;
//  * a dump-like listing from offset 192 that trusts only lengths, never
//    running past the end;
//  * verify() of the file alone (full and headers-only).
#include <cstdint>
#include <string>

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
