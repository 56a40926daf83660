// The frame window and the walk (FORMAT.md "Walking a segment").
#include "frame_reader.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <iterator>

#include "alog/crc32c.h"
#include "alog/interrupt.h"

namespace alog::detail {

using namespace format;

const char* stop_kind(Stop s) {
  switch (s) {
    case Stop::none: return "none";
    case Stop::eof: return "eof";
    case Stop::truncated_header: return "truncated_header";
    case Stop::truncated_payload: return "truncated_payload";
    case Stop::unwritten: return "bad_flags";
    case Stop::bad_flags: return "bad_flags";
    case Stop::stale_generation: return "stale_generation";
    case Stop::reserved_bytes: return "reserved_bytes";
    case Stop::bad_stride: return "bad_stride";
    case Stop::lost_length: return "lost_length";
    case Stop::frame_crc: return "frame_crc";
    case Stop::checkpoint_crc: return "checkpoint_crc";
    case Stop::checkpoint_stride: return "checkpoint_stride";
    case Stop::eof_without_batch_end: return "eof_without_batch_end";
    case Stop::io_error: return "io_error";
  }
  return "?";
}

const char* stop_text(Stop s) {
  switch (s) {
    case Stop::none: return "no stop";
    case Stop::eof: return "end of log";
    case Stop::truncated_header: return "truncated header";
    case Stop::truncated_payload: return "truncated payload";
    case Stop::unwritten: return "unwritten frame (flags 0)";
    case Stop::bad_flags: return "invalid frame flags";
    case Stop::stale_generation: return "stale frame generation";
    case Stop::reserved_bytes: return "reserved frame bytes are not zero";
    case Stop::bad_stride: return "data frame stride is not 1";
    case Stop::lost_length: return "lost frame with a payload length";
    case Stop::frame_crc: return "frame crc mismatch";
    case Stop::checkpoint_crc: return "checkpoint crc does not match the headers it covers";
    case Stop::checkpoint_stride: return "checkpoint stride does not match the frames it covers";
    case Stop::eof_without_batch_end: return "EOF after a data frame without BatchEnd";
    case Stop::io_error: return "read error";
  }
  return "?";
}

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

bool FrameWindow::refill(uint64_t off, uint64_t n) {
  if (off > limit_ || n > limit_ - off) return false;
  if (off >= base_ && off + n <= base_ + len_) return true;
  if (interrupt_requested()) {
    error_ = Status(Errc::stopped, "interrupted");
    return false;
  }
  uint64_t want = std::max<uint64_t>(n, chunk_);
  want = std::min<uint64_t>(want, limit_ - off);
  if (want > cap_ && n > chunk_) {
    // The limit is what a slot or a frame claims; a claim larger than the
    // chunk is bounded by what the file holds (a forged synced offset past
    // the end of a short file, then a frame claiming 1 GiB, must not
    // allocate 1 GiB). Below it the chunk bounds memory, and no fstat is
    // spent on every window (a read(seq) makes one).
    auto size = file_->size();
    if (!size.is_ok()) {
      error_ = size.status();
      return false;
    }
    if (*size < off || *size - off < n) {
      len_ = 0;
      return false;
    }
    want = std::min<uint64_t>(want, *size - off);
  }
  if (want > cap_) {
    buf_.reset(new uint8_t[want]);
    cap_ = want;
  }
  base_ = off;
  len_ = 0;
  fills_++;
  auto r = file_->pread(buf_.get(), want, off);
  if (!r.is_ok()) {
    error_ = r.status();
    return false;
  }
  bytes_read_ += *r;
  len_ = *r;
  return *r >= n;
}

Stop Walker::fail(Stop s, std::string expected, std::string found) {
  expected_ = std::move(expected);
  found_ = std::move(found);
  return s;
}

Stop Walker::step_any() {
  f_.offset = st_.offset;
  f_.seq = 0;
  f_.payload = nullptr;
  f_.computed_crc = 0;
  if (!w_->ensure(st_.offset, kFrameHeaderSize)) {
    f_.h = FrameHeader{};  // no header read (every other path decodes one below)
    if (!w_->error().is_ok()) return fail(Stop::io_error, {}, w_->error().message());
    return fail(Stop::truncated_header, "16 header bytes",
                std::to_string(w_->limit() > st_.offset ? w_->limit() - st_.offset : 0) +
                    " bytes before end of file");
  }
  const uint8_t* p = w_->at(st_.offset);
  FrameHeader& h = f_.h;
  h = decode_frame_header(p);
  if (h.flags == 0) return fail(Stop::unwritten, "frame flags", "0x0000");
  if (!h.flags_valid()) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%04x", h.flags);
    return fail(Stop::bad_flags, "0x0001, 0x0003, 0x0011, 0x0013, 0x0004 or 0x000c", buf);
  }
  if (h.generation != gen_)
    return fail(Stop::stale_generation, "generation " + std::to_string(gen_),
                "generation " + std::to_string(h.generation));
  if (h.reserved != 0) return fail(Stop::reserved_bytes, "0", std::to_string(h.reserved));
  if (h.is_data()) {
    if (h.stride != 1) return fail(Stop::bad_stride, "1", std::to_string(h.stride));
    if (h.is_lost() && h.word != 0) return fail(Stop::lost_length, "0", std::to_string(h.word));
    uint64_t end = st_.offset + kFrameHeaderSize + h.word;
    if (end > w_->limit())
      return fail(Stop::truncated_payload, "payload of " + std::to_string(h.word) + " bytes",
                  std::to_string(w_->limit() - st_.offset - kFrameHeaderSize) +
                      " bytes before end of file");
    if (read_payloads_) {
      if (!w_->ensure(st_.offset, kFrameHeaderSize + h.word)) {
        if (!w_->error().is_ok()) return fail(Stop::io_error, {}, w_->error().message());
        return fail(Stop::truncated_payload);
      }
      p = w_->at(st_.offset);
      f_.payload = p + kFrameHeaderSize;
      uint32_t running = st_.crc;
      f_.computed_crc = data_crc(p, &running);
      if (f_.computed_crc != h.crc) return fail(Stop::frame_crc, hex32(f_.computed_crc), hex32(h.crc));
      st_.crc = running;
    } else {
      st_.crc = crc32c_extend(st_.crc, p, kFrameHeaderSize);
    }
    f_.seq = st_.seq;
    st_.pending = static_cast<uint16_t>(st_.pending + 1);
    st_.seq++;
    st_.offset = end;
    st_.open_batch = !h.is_batch_end();
    if (h.is_batch_end() || st_.offset == extra_boundary_) boundary_ = st_;
    return Stop::none;
  }
  // Checkpoint or EOF.
  f_.computed_crc = crc32c(p, 12);
  if (f_.computed_crc != h.crc) return fail(Stop::frame_crc, hex32(f_.computed_crc), hex32(h.crc));
  if (h.word != st_.crc)
    return fail(Stop::checkpoint_crc, hex32(st_.crc), hex32(h.word));
  if (h.stride != st_.pending)
    return fail(Stop::checkpoint_stride, std::to_string(st_.pending), std::to_string(h.stride));
  if (h.is_eof()) {
    if (st_.open_batch) return fail(Stop::eof_without_batch_end, "BatchEnd before EOF", "EOF");
    return Stop::eof;
  }
  st_.offset += kFrameHeaderSize;
  st_.crc = 0;
  st_.pending = 0;
  st_.open_batch = false;
  boundary_ = st_;
  return Stop::none;
}

uint32_t Walker::data_crc_3(const uint8_t* p, uint32_t* running) {
  ahead_n_ = ahead_i_ = 0;
  // This frame and the next two when they look like data frames wholly in
  // the window: their CRCs side by side, kept for the next two steps (which
  // check everything about those frames as usual, and use these only if
  // they reach them in this state).
  const uint8_t* f[3];
  uint64_t off[3];
  if (!next_two_data_frames(*w_, p, st_.offset, std::min(w_->end(), w_->limit()), f, off))
    return crc32c_frame(p, p + kFrameHeaderSize, get32(p), running);  // this frame alone
  uint32_t crc[3], run[4] = {*running, 0, 0, 0};
  crc32c_frames_3(f, crc, run);
  for (size_t k = 0; k < 3; k++) ahead_[k] = {off[k], run[k], run[k + 1], crc[k]};
  ahead_n_ = 3;
  ahead_i_ = 1;
  ahead_fills_ = w_->fills();
  *running = run[1];
  return crc[0];
}

void Walker::skip_damaged_data() {
  const uint8_t* p = w_->at(st_.offset);
  st_.crc = crc32c_extend(st_.crc, p, kFrameHeaderSize);
  st_.pending = static_cast<uint16_t>(st_.pending + 1);
  f_.seq = st_.seq;
  st_.seq++;
  st_.offset += kFrameHeaderSize + f_.h.word;
  st_.open_batch = !f_.h.is_batch_end();
  if (f_.h.is_batch_end() || st_.offset == extra_boundary_) boundary_ = st_;
}

void Walker::adopt(const Walker& part, uint64_t seq_base) {
  st_ = part.st_;
  boundary_ = part.boundary_;
  f_ = part.f_;
  st_.seq += seq_base;
  boundary_.seq += seq_base;
  if (f_.h.is_data()) f_.seq += seq_base;
  f_.payload = nullptr;
  expected_ = part.expected_;
  found_ = part.found_;
  ahead_n_ = ahead_i_ = 0;
}

Stop Walker::run() {
  RecordView scratch[256];
  Stop s;
  while ((s = advance(scratch)) == Stop::none) {
  }
  return s;
}

size_t Walker::take_data(RecordView* out, size_t max, uint64_t until) {
  if (!read_payloads_) return 0;
  // The headers first, as step_data checks them, up to the first frame the
  // run cannot take; then the CRCs, three side by side with the running CRC
  // over the headers, each frame accepted up to the first mismatch.
  // (In locals: the stores to out could alias the members.)
  const uint64_t from = st_.offset;
  if (!w_->holds(from, kFrameHeaderSize)) return 0;
  const uint64_t end = std::min({w_->end(), w_->limit(), until}), seq = st_.seq;
  const uint16_t gen = gen_;
  const uint8_t* const first = w_->at(from);
  uint64_t at = from;
  size_t n = 0;
  while (n < max && at + kFrameHeaderSize <= end) {
    const uint8_t* p = first + (at - from);
    const FrameHeader h = decode_frame_header(p);
    if (!data_frame_ok(h, gen, at, end) || h.is_lost()) break;
    out[n] = {seq + n, std::string_view(reinterpret_cast<const char*>(p + kFrameHeaderSize), h.word), false};
    n++;
    at += kFrameHeaderSize + h.word;
  }
  if (n == 0) return 0;
  auto header_of = [](const RecordView& r) {
    return reinterpret_cast<const uint8_t*>(r.payload.data()) - kFrameHeaderSize;
  };
  ahead_n_ = ahead_i_ = 0;  // step()'s look-ahead: these frames are taken here
  WalkState st = st_;
  size_t good = 0;
  const uint8_t* last = nullptr;
  uint32_t last_crc = 0;
  while (good < n) {
    const uint8_t* f[3] = {header_of(out[good]), nullptr, nullptr};
    uint32_t crc[3], run[4] = {st.crc, 0, 0, 0};
    size_t k = 1;
    if (good + 3 <= n) {
      f[1] = header_of(out[good + 1]);
      f[2] = header_of(out[good + 2]);
      crc32c_frames_3(f, crc, run);
      k = 3;
    } else {
      run[1] = run[0];
      crc[0] = crc32c_frame(f[0], f[0] + kFrameHeaderSize, get32(f[0]), &run[1]);
    }
    for (size_t i = 0; i < k; i++) {
      if (crc[i] != get32(f[i] + 12)) {  // step() reports it
        n = good;
        break;
      }
      const bool batch_end = ends_batch(out[good]);
      st.crc = run[i + 1];
      st.pending = static_cast<uint16_t>(st.pending + 1);
      st.seq++;
      st.offset += kFrameHeaderSize + get32(f[i]);
      st.open_batch = !batch_end;
      if (batch_end || st.offset == extra_boundary_) boundary_ = st;
      last = f[i];
      last_crc = crc[i];
      good++;
    }
  }
  if (good == 0) return 0;
  f_.offset = st.offset - kFrameHeaderSize - get32(last);
  f_.h = decode_frame_header(last);
  f_.seq = st.seq - 1;
  f_.computed_crc = last_crc;
  f_.payload = last + kFrameHeaderSize;
  st_ = st;
  return good;
}

size_t take_records(const FrameWindow& w, uint16_t generation, uint64_t end, uint64_t& off,
                    uint64_t seq, RecordView* out, size_t max, uint64_t checkpoint_from) {
  const uint64_t wend = w.end();
  uint64_t at = off;
  // The headers first, up to the first frame the run cannot take for its
  // header; then the CRCs, three side by side, up to the first mismatch.
  size_t n = 0;
  while (n < max && at < end && at + kFrameHeaderSize <= wend) {
    const uint8_t* p = w.at(at);
    const FrameHeader h = decode_frame_header(p);
    if (h.is_checkpoint()) {
      if (at >= checkpoint_from || !checkpoint_sound(p, generation)) break;
      at += kFrameHeaderSize;
      continue;
    }
    const uint64_t after = at + kFrameHeaderSize + h.word;
    if (!data_frame_ok(h, generation, at, end) || after > wend) break;
    out[n] = {seq + n, std::string_view(reinterpret_cast<const char*>(p + kFrameHeaderSize), h.word),
              h.is_lost()};
    n++;
    at = after;
  }
  auto header_of = [](const RecordView& r) {
    return reinterpret_cast<const uint8_t*>(r.payload.data()) - kFrameHeaderSize;
  };
  size_t good = 0;
  bool bad = false;
  while (!bad && good + 3 <= n) {
    const uint8_t* f[3] = {header_of(out[good]), header_of(out[good + 1]), header_of(out[good + 2])};
    uint32_t c[3];
    crc32c_frames_3(f, c);
    size_t k = 0;
    while (k < 3 && c[k] == get32(f[k] + 12)) k++;
    good += k;
    bad = k < 3;
  }
  while (!bad && good < n) {  // the last one or two
    const uint8_t* f = header_of(out[good]);
    bad = frame_crc(f, f + kFrameHeaderSize, get32(f)) != get32(f + 12);
    if (!bad) good++;
  }
  if (good < n) at = off + uint64_t(header_of(out[good]) - w.at(off));  // the first mismatch
  off = at;
  return good;
}

}  // namespace alog::detail

namespace alog {
namespace {
// Atomic: readers on other threads (a Writer's, a scanner's) consult it.
std::atomic<InterruptCheck> g_interrupt{nullptr};
}  // namespace
void set_interrupt_check(InterruptCheck check) { g_interrupt.store(check, std::memory_order_relaxed); }
bool interrupt_requested() {
  InterruptCheck c = g_interrupt.load(std::memory_order_relaxed);
  return c && c();
}
NoInterrupts::NoInterrupts() : saved_(g_interrupt.exchange(nullptr, std::memory_order_relaxed)) {}
NoInterrupts::~NoInterrupts() { g_interrupt.store(saved_, std::memory_order_relaxed); }
}  // namespace alog
