// Reading frames from a segment file through a window buffer: large
// sequential preads instead of one per header, and a walk that applies
// FORMAT.md's stop conditions and tracks the running CRC, pending count and
// last batch boundary.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "alog/crc32c.h"
#include "alog/format.h"
#include "alog/fs.h"
#include "alog/scanner.h"

namespace alog::detail {

// The walk's state just before the frame at `offset`.
struct WalkState {
  uint64_t offset = format::kHeaderSize;
  uint64_t seq = 0;
  uint32_t crc = 0;
  uint16_t pending = 0;
  bool open_batch = false;  // the frame before `offset` is data without BatchEnd
};

// The walk state a slot records at its read offset, and at its synced
// offset (where the frame before it ended a batch, as far as the slot says).
inline WalkState read_state(const format::Slot& s) {
  return WalkState{s.read_offset, s.first_sequence, s.read_crc, s.read_pending, false};
}
inline WalkState synced_state(const format::Slot& s) {
  return WalkState{s.synced_offset, s.synced_sequence, s.synced_crc, s.synced_pending, false};
}

// Why a walk stopped. `eof` is the clean end.
enum class Stop : uint8_t {
  none,
  eof,
  truncated_header,
  truncated_payload,
  unwritten,  // flags 0
  bad_flags,
  stale_generation,
  reserved_bytes,
  bad_stride,
  lost_length,  // a lost frame whose payload length is not 0
  frame_crc,
  checkpoint_crc,
  checkpoint_stride,
  eof_without_batch_end,
  io_error,
};
// The verify "kind" name of a stop ("frame_crc", ...).
const char* stop_kind(Stop s);
// A short description ("frame crc mismatch").
const char* stop_text(Stop s);

// Whether a data frame header read at off, in a file whose frames end by
// `end`, passes the checks Walker::step makes of a data frame before its
// CRC (so a reader's fast path can rely on them without building errors).
inline bool data_frame_ok(const format::FrameHeader& h, uint16_t generation, uint64_t off,
                          uint64_t end) {
  return h.is_data() && h.generation == generation && h.reserved == 0 && h.stride == 1 &&
         !(h.is_lost() && h.word != 0) && off + format::kFrameHeaderSize + h.word <= end;
}

// Whether a checkpoint or EOF frame's header (bytes at p) is sound on its
// own: the checks Walker::step makes of it before those of its running CRC
// and stride, which need the walk's state (flags are the caller's: a
// checkpoint, or an EOF). A reader that steps over checkpoints without
// that state (a Scanner, a rendered scan's part) checks each it meets, and
// a sealed segment's EOF when it passes it: rare frames, no per-record work.
// Damage to any byte of such a frame fails one of these checks.
inline bool checkpoint_sound(const uint8_t* p, uint16_t generation) {
  return format::get16(p + 8) == generation && format::get16(p + 6) == 0 &&
         crc32c(p, 12) == format::get32(p + 12);
}

// A window over [0, limit) of a file. Refills read at least `chunk` bytes.
class FrameWindow {
 public:
  FrameWindow(File* file, uint64_t limit, size_t chunk = 1 << 20)
      : file_(file), limit_(limit), chunk_(chunk) {}
  // Makes [off, off+n) available; false when it extends past the limit or the read fails.
  bool ensure(uint64_t off, uint64_t n) {
    // Inline for the common case, bytes already in the window: scans call this per frame.
    if (off <= limit_ && n <= limit_ - off && off >= base_ && off + n <= base_ + len_)
      return true;
    return refill(off, n);
  }
  const uint8_t* at(uint64_t off) const { return buf_.get() + (off - base_); }
  // Whether [off, off+n) is in the window now (no read).
  bool holds(uint64_t off, uint64_t n) const {
    return off >= base_ && off + n <= base_ + len_;
  }
  // The file offset just past the bytes in the window now.
  uint64_t end() const { return base_ + len_; }
  uint64_t limit() const { return limit_; }
  File* file() const { return file_; }
  // The size of the reads from now on.
  void set_chunk(size_t chunk) { chunk_ = chunk; }
  void set_limit(uint64_t limit) {
    limit_ = limit;
    if (base_ + len_ > limit_) invalidate();
  }
  void invalidate() {
    len_ = 0;
    fills_++;
  }
  // Changes each time the bytes in the window may have changed.
  uint64_t fills() const { return fills_; }
  const Status& error() const { return error_; }
  uint64_t bytes_read() const { return bytes_read_; }
  // The buffer's size: never more than the file holds past a read offset.
  size_t capacity() const { return cap_; }

 private:
  bool refill(uint64_t off, uint64_t n);
  File* file_;
  uint64_t limit_;
  size_t chunk_;
  uint64_t base_ = 0;
  // Bytes [base_, base_ + len_) of the file; the buffer is read into before
  // use, so growing it does not zero it.
  std::unique_ptr<uint8_t[]> buf_;
  size_t cap_ = 0;
  size_t len_ = 0;
  uint64_t fills_ = 0;
  Status error_;
  uint64_t bytes_read_ = 0;
};

// The data frame at `at` (its header at f in w) and the two frames after it,
// when both look like data frames (not lost ones) that lie whole in w before
// `stop`: their headers and offsets in frames[] and offs[], and true, for
// their CRCs to be taken side by side (crc32c_frames_3) by a walk or a scan
// that checks everything else about them when it reaches them. False when
// the next two are not such frames.
inline bool next_two_data_frames(const FrameWindow& w, const uint8_t* f, uint64_t at, uint64_t stop,
                                 const uint8_t* frames[3], uint64_t offs[3]) {
  frames[0] = f;
  offs[0] = at;
  for (size_t n = 1; n < 3; n++) {
    const uint64_t o = offs[n - 1] + format::kFrameHeaderSize + format::get32(frames[n - 1]);
    const uint8_t* q = o + format::kFrameHeaderSize <= stop ? w.at(o) : nullptr;
    if (!q || (format::get16(q + 10) & (format::kFlagData | format::kFlagLost)) != format::kFlagData ||
        o + format::kFrameHeaderSize + format::get32(q) > stop)
      return false;
    frames[n] = q;
    offs[n] = o;
  }
  return true;
}

// A plain reading's run of records in w from `off` (a Scanner's, a
// rendered scan's part): checkpoint frames checkpoint_sound() skipped (but
// for one at or after `checkpoint_from`, which stops the run, as does one
// that is not sound), data frames (lost ones flagged)
// taken while each lies wholly in the window, before `end`, and passes
// data_frame_ok against `end`, then their CRCs checked three side by side
// up to the first mismatch. At most `max` records, numbered from `seq`,
// into out; `off` ends just past the last one taken, or at the frame that
// stopped the run (not in the window, failing a check, at `end`, or such a
// checkpoint), for the caller to deal with.
size_t take_records(const FrameWindow& w, uint16_t generation, uint64_t end, uint64_t& off,
                    uint64_t seq, RecordView* out, size_t max, uint64_t checkpoint_from = UINT64_MAX);

// Whether the frame of a record that take_data or take_records took (its
// payload in the window, just after its header) ends a batch.
inline bool ends_batch(const RecordView& r) {
  return format::get16(reinterpret_cast<const uint8_t*>(r.payload.data()) - format::kFrameHeaderSize + 10) &
         format::kFlagBatchEnd;
}

// One frame as the walk met it.
struct FrameInfo {
  uint64_t offset = 0;
  format::FrameHeader h;
  uint64_t seq = 0;           // data frames: its sequence
  const uint8_t* payload = nullptr;  // data frames, when payloads are read (none for lost ones)
  uint32_t computed_crc = 0;  // of header bytes 0-11 (+ payload when read)
};

// Walks frames from a start state. Each call to step() reads one frame and
// either accepts it (advancing the state) or stops.
class Walker {
 public:
  // read_payloads=false skips payloads: data CRCs are not checked, only
  // checkpoints vouch for headers.
  Walker(FrameWindow* w, uint16_t generation, WalkState start, bool read_payloads)
      : w_(w), gen_(generation), st_(start), boundary_(start), read_payloads_(read_payloads) {}

  // Reads the frame at state().offset. Returns Stop::none for an accepted
  // data or checkpoint frame (frame() describes it), Stop::eof for a valid
  // EOF (state() stays at the EOF position), anything else for a stop
  // (state() is at the offending frame).
  Stop step() { return step_data() ? Stop::none : step_any(); }
  const FrameInfo& frame() const { return f_; }
  const WalkState& state() const { return st_; }
  // The last batch boundary at or before state().offset, with its state.
  const WalkState& boundary() const { return boundary_; }
  // For stops: what was expected and found ("crc 0x1234abcd", ...).
  const std::string& expected() const { return expected_; }
  const std::string& found() const { return found_; }
  // After step() returned frame_crc for a data frame whose header looks
  // sound, advances past it as if it were intact (verify uses this to go on
  // past payload damage when a later checkpoint confirms the headers).
  void skip_damaged_data();
  // Goes on from state `s` (a batch boundary), as if the walk had reached it.
  void restart(const WalkState& s) {
    st_ = s;
    boundary_ = s;
  }
  // Makes `offset` a batch boundary too (the winning slot's synced offset).
  void add_boundary(uint64_t offset) { extra_boundary_ = offset; }
  // Stands where `part` stands: a walk over the same segment (another window
  // on it) that started in a checkpoint's reset state and counted sequences
  // from 0, where this walk's sequence there is `seq_base` (walk_split.h).
  // The frame is told without its payload.
  void adopt(const Walker& part, uint64_t seq_base);
  // Runs advance() until something other than Stop::none.
  Stop run();
  // A run of plain data frames at once (take_data, into scratch), else one
  // step(): Stop::none when at least one frame was accepted (frame() tells
  // the last), for walks that need the state, not every frame.
  Stop advance(std::span<RecordView> scratch) {
    return take_data(scratch.data(), scratch.size()) > 0 ? Stop::none : step();
  }
  // step()'s common case for a run of frames at once (a walk that reads
  // payloads): data frames, none lost, wholly in the window, each passing
  // every check step() makes and accepted as step() accepts it (the state,
  // the boundary; frame() tells the last). Their records (sequence,
  // payload) go to out, at most max; returns how many. Stops before the
  // first frame that is anything else (a checkpoint, damage, a frame the
  // window does not hold) or that ends past `until`, for step() to read
  // and report; reads nothing.
  size_t take_data(RecordView* out, size_t max, uint64_t until = UINT64_MAX);

 private:
  // step()'s common case, inline in the walks' loops: a data frame whose
  // bytes are all in the window and that passes every check, accepted as
  // step_any() would accept it. False (nothing changed) for anything else,
  // which step_any() then reads and reports.
  bool step_data();
  Stop step_any();
  Stop fail(Stop s, std::string expected = {}, std::string found = {});
  // The CRC of the data frame at state().offset (in the window at p), and
  // the running CRC over its header: taken for three frames at a time
  // (data_crc_3), then known for the next two calls when they reach those
  // frames in the same state.
  uint32_t data_crc(const uint8_t* p, uint32_t* running) {
    if (ahead_i_ < ahead_n_) {
      const Ahead& a = ahead_[ahead_i_];
      if (a.offset == st_.offset && a.running_before == *running && ahead_fills_ == w_->fills()) {
        ahead_i_++;
        *running = a.running_after;
        return a.crc;
      }
    }
    return data_crc_3(p, running);
  }
  uint32_t data_crc_3(const uint8_t* p, uint32_t* running);
  struct Ahead {
    uint64_t offset;
    uint32_t running_before, running_after, crc;
  };
  Ahead ahead_[3];
  size_t ahead_n_ = 0, ahead_i_ = 0;
  uint64_t ahead_fills_ = 0;
  FrameWindow* w_;
  uint16_t gen_;
  WalkState st_;
  WalkState boundary_;
  bool read_payloads_;
  FrameInfo f_;
  std::string expected_, found_;
  uint64_t extra_boundary_ = 0;
};

inline bool Walker::step_data() {
  const uint64_t off = st_.offset;
  if (!w_->holds(off, format::kFrameHeaderSize)) return false;
  const uint8_t* p = w_->at(off);
  const format::FrameHeader h = format::decode_frame_header(p);
  if (!data_frame_ok(h, gen_, off, w_->limit())) return false;
  const uint64_t end = off + format::kFrameHeaderSize + h.word;
  uint32_t crc = 0;
  if (read_payloads_) {
    if (!w_->holds(off, format::kFrameHeaderSize + h.word)) return false;
    uint32_t running = st_.crc;
    crc = data_crc(p, &running);
    if (crc != h.crc) return false;
    st_.crc = running;
    f_.payload = p + format::kFrameHeaderSize;
  } else {
    st_.crc = crc32c_extend(st_.crc, p, format::kFrameHeaderSize);
    f_.payload = nullptr;
  }
  f_.offset = off;
  f_.h = h;
  f_.seq = st_.seq;
  f_.computed_crc = crc;
  st_.pending = static_cast<uint16_t>(st_.pending + 1);
  st_.seq++;
  st_.offset = end;
  st_.open_batch = !h.is_batch_end();
  if (h.is_batch_end() || end == extra_boundary_) boundary_ = st_;
  return true;
}

// The first offset at or after `from` holding a data frame valid on its own:
// flags, generation `gen`, reserved bytes and stride sound, the payload
// inside the window's limit and the CRC matching (a frame that could be
// salvaged, or where a tool resynchronizes). nullopt when there is none or a
// read fails (w.error() tells). Linear in the bytes searched (frame_search.cc):
// forged lengths cannot make it CRC the same bytes again and again.
std::optional<uint64_t> find_valid_data_frame(FrameWindow& w, uint16_t gen, uint64_t from);

// Whether the bytes after a segment's EOF frame, from `from` to the window's
// limit, are a recycled file's stale frames: the file's generation `gen` is
// above 1 and no data frame of that generation is valid there. Anything else
// after an EOF (bytes of a lost batch or a lost truncate) is saved before an
// open cuts it, and verify warns of it; so is everything when a read fails
// (w.error() tells). Verify, recover's plan and opening for writing decide
// with this one test.
bool stale_after_eof(FrameWindow& w, uint16_t gen, uint64_t from);

std::string hex32(uint32_t v);  // "0x%08x"

}  // namespace alog::detail
