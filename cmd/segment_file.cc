// Decoding one segment file and walking its frames (see segment_file.h).
#include "segment_file.h"

#include <cstring>
#include <string>

#include "alog/crc32c.h"
#include "cli.h"

namespace alog::cli {

using namespace format;

namespace {

std::string read_exact(File& f, uint64_t off, uint64_t n, const std::string& path) {
  std::string buf(n, '\0');
  auto r = f.pread(buf.data(), n, off);
  if (!r) fail(r.status(), path);
  buf.resize(*r);
  return buf;
}

}  // namespace

SegmentFile open_segment_file(const std::string& path) {
  SegmentFile s;
  s.path = path;
  auto f = posix_fs().open(path, OpenMode::read);
  if (!f) fail(f.status(), path);
  s.file = std::move(f).value();
  auto len = s.file->size();
  if (!len) fail(len.status(), path);
  s.length = *len;
  std::string hdr = read_exact(*s.file, 0, kHeaderSize, path);
  std::memcpy(s.raw, hdr.data(), hdr.size());
  s.header_complete = hdr.size() == kHeaderSize;
  if (hdr.size() >= kFixedSize) s.header_error = decode_segment_header(s.raw, &s.header);
  if (s.header_complete && s.header_error == HeaderError::none)
    s.slots = choose_slot(s.raw, s.header.start_sequence);
  return s;
}

void require_walkable(const SegmentFile& s) {
  if (s.walkable()) return;
  if (s.length >= 4 && get32(s.raw) != kMagic)
    fail("not_a_log", s.path, std::nullopt, "not a segment file (no ALOG magic)");
  std::string why = !s.header_complete
                        ? "segment header: file has " + std::to_string(s.length) +
                              " bytes, less than the 192-byte header"
                    : s.header_error != HeaderError::none
                        ? std::string("segment header: ") + header_error_text(s.header_error)
                        : "metadata slots: " + s.slots.error;
  throw Failure("corrupt", s.path, 0, why, kExitDamaged);
}

WalkState read_offset_state(const SegmentFile& seg) {
  const Slot& w = seg.winner();
  WalkState st;
  st.offset = w.read_offset;
  st.seq = w.first_sequence;
  st.crc = w.read_crc;
  st.pending = w.read_pending;
  return st;
}

FrameWalker::FrameWalker(SegmentFile& seg, WalkState start, bool read_payloads, bool keep_payloads)
    : seg_(seg), st_(start), read_payloads_(read_payloads), keep_payloads_(keep_payloads) {
  boundary_ = start.offset;
  if (start.known) boundary_seq_ = start.seq;
}

std::optional<WalkFrame> FrameWalker::next() {
  WalkFrame f;
  f.offset = st_.offset;
  if (f.offset >= seg_.length) return std::nullopt;
  uint64_t left = seg_.length - f.offset;
  if (left < kFrameHeaderSize) {
    f.problem = "truncated_header";
    f.expected = "16";
    f.found = std::to_string(left);
    return f;
  }
  std::string hb = read_exact(*seg_.file, f.offset, kFrameHeaderSize, seg_.path);
  const auto* p = reinterpret_cast<const uint8_t*>(hb.data());
  f.h = decode_frame_header(p);
  f.bytes_left = left - kFrameHeaderSize;
  const FrameHeader& h = f.h;
  auto stop = [&](const char* kind, std::string expected, std::string found) {
    f.problem = kind;
    f.expected = std::move(expected);
    f.found = std::move(found);
    return f;
  };
  if (h.is_data() && st_.known) f.seq = st_.seq;
  if (!h.flags_valid()) return stop("bad_flags", "", hex16(h.flags));
  if (h.generation != seg_.header.generation)
    return stop("stale_generation", std::to_string(seg_.header.generation), std::to_string(h.generation));
  if (h.reserved != 0) return stop("reserved_bytes", "0", std::to_string(h.reserved));
  if (h.is_data()) {
    if (h.stride != 1) return stop("bad_stride", "1", std::to_string(h.stride));
    if (h.word > f.bytes_left)
      return stop("truncated_payload", std::to_string(h.word), std::to_string(f.bytes_left));
    if (read_payloads_) {
      uint32_t crc = crc32c(p, 12);
      constexpr uint64_t kChunk = 1 << 20;
      for (uint64_t done = 0; done < h.word;) {
        uint64_t n = std::min<uint64_t>(kChunk, h.word - done);
        std::string chunk = read_exact(*seg_.file, f.offset + kFrameHeaderSize + done, n, seg_.path);
        if (chunk.size() != n) return stop("truncated_payload", std::to_string(h.word), std::to_string(done + chunk.size()));
        crc = crc32c_extend(crc, chunk.data(), chunk.size());
        if (keep_payloads_) f.payload += chunk;
        done += n;
      }
      f.payload_read = true;
      f.computed_crc = crc;
      if (crc != h.crc) return stop("frame_crc", hex32(crc), hex32(h.crc));
    }
    if (st_.known) {
      st_.crc = crc32c_extend(st_.crc, p, kFrameHeaderSize);
      st_.pending = uint16_t(st_.pending + 1);
      st_.seq++;
    }
    st_.offset = f.end();
    st_.after_data_without_batch_end = !h.is_batch_end();
    if (h.is_batch_end()) {
      boundary_ = st_.offset;
      boundary_seq_ = st_.known ? std::optional<uint64_t>(st_.seq) : std::nullopt;
    }
    return f;
  }
  // Checkpoint or EOF: its own CRC first, then what it stores against the walk.
  f.computed_crc = crc32c(p, 12);
  f.walk_crc = st_.crc;
  f.walk_pending = st_.pending;
  if (f.computed_crc != h.crc) return stop("frame_crc", hex32(f.computed_crc), hex32(h.crc));
  if (st_.known) {
    if (h.word != st_.crc) return stop("checkpoint_crc", hex32(st_.crc), hex32(h.word));
    if (h.stride != st_.pending)
      return stop("checkpoint_stride", std::to_string(st_.pending), std::to_string(h.stride));
  }
  if (h.is_eof() && st_.after_data_without_batch_end) return stop("eof_without_batch_end", "", "");
  if (h.is_checkpoint()) {
    st_.offset = f.end();
    st_.crc = 0;
    st_.pending = 0;
    st_.after_data_without_batch_end = false;
    boundary_ = st_.offset;
    boundary_seq_ = st_.known ? std::optional<uint64_t>(st_.seq) : std::nullopt;
  }
  // An EOF leaves the state where it is: the walk ends there.
  return f;
}

void FrameWalker::skip_damaged(const WalkFrame& f) {
  // The header is kept in the running CRC as stored: a later checkpoint confirms it.
  uint8_t hb[kFrameHeaderSize];
  put32(hb, f.h.word);
  put16(hb + 4, f.h.stride);
  put16(hb + 6, f.h.reserved);
  put16(hb + 8, f.h.generation);
  put16(hb + 10, f.h.flags);
  put32(hb + 12, f.h.crc);
  if (st_.known) {
    st_.crc = crc32c_extend(st_.crc, hb, kFrameHeaderSize);
    st_.pending = uint16_t(st_.pending + 1);
    st_.seq++;
  }
  st_.offset = f.end();
  st_.after_data_without_batch_end = !f.h.is_batch_end();
}

bool FrameWalker::plausible_data_at(uint64_t off, std::string* scratch) {
  if (off + kFrameHeaderSize > seg_.length) return false;
  *scratch = read_exact(*seg_.file, off, kFrameHeaderSize, seg_.path);
  const auto* p = reinterpret_cast<const uint8_t*>(scratch->data());
  FrameHeader h = decode_frame_header(p);
  if (!h.is_data() || h.generation != seg_.header.generation || h.reserved || h.stride != 1)
    return false;
  if (h.word > seg_.length - off - kFrameHeaderSize) return false;
  std::string payload = read_exact(*seg_.file, off + kFrameHeaderSize, h.word, seg_.path);
  return frame_crc(p, payload.data(), payload.size()) == h.crc;
}

bool FrameWalker::resync(uint64_t from) {
  // Scan a window at a time for the header's cheap checks before any CRC.
  constexpr uint64_t kWindow = 1 << 16;
  std::string scratch;
  for (uint64_t base = from; base + kFrameHeaderSize <= seg_.length; base += kWindow) {
    std::string w = read_exact(*seg_.file, base, kWindow + kFrameHeaderSize, seg_.path);
    for (uint64_t i = 0; i < kWindow && i + kFrameHeaderSize <= w.size(); i++) {
      const auto* p = reinterpret_cast<const uint8_t*>(w.data() + i);
      uint16_t flags = get16(p + 10);
      if ((flags != kFlagData && flags != (kFlagData | kFlagBatchEnd)) ||
          get16(p + 8) != seg_.header.generation || get16(p + 4) != 1 || get16(p + 6) != 0)
        continue;
      if (!plausible_data_at(base + i, &scratch)) continue;
      st_ = WalkState{};
      st_.offset = base + i;
      st_.known = false;
      boundary_seq_.reset();
      return true;
    }
    check_interrupted();
  }
  return false;
}

}  // namespace alog::cli

namespace alog::cli {

const char* kind_sentence(const std::string& k) {
  if (k == "truncated_header") return "frame header cut short";
  if (k == "truncated_payload") return "payload runs past the end of the file";
  if (k == "bad_flags") return "invalid frame flags";
  if (k == "stale_generation") return "frame of another generation";
  if (k == "reserved_bytes") return "reserved frame bytes are not zero";
  if (k == "bad_stride") return "data frame stride is not 1";
  if (k == "frame_crc") return "frame crc mismatch";
  if (k == "checkpoint_crc") return "checkpoint crc does not match the headers it covers";
  if (k == "checkpoint_stride") return "checkpoint count does not match the frames it covers";
  if (k == "eof_without_batch_end") return "EOF after a data frame without BatchEnd";
  return "damaged frame";
}

std::optional<Problem> diagnose_stop(const std::string& path, Classification cls) {
  SegmentFile seg = open_segment_file(path);
  if (!seg.walkable()) return std::nullopt;
  FrameWalker w(seg, read_offset_state(seg), /*read_payloads=*/true, false);
  while (auto f = w.next()) {
    if (f->stops_walk()) {
      Problem p;
      p.file = base_name(path);
      p.offset = f->offset;
      p.cut_at = w.boundary();
      p.first_seq = w.boundary_seq();
      if (cls == Classification::corruption && f->offset < seg.winner().synced_offset &&
          seg.winner().synced_sequence > 0)
        p.last_seq = seg.winner().synced_sequence - 1;
      p.kind = f->problem;
      p.classification = cls;
      p.expected = f->expected;
      p.found = f->found;
      p.message = kind_sentence(f->problem);
      return p;
    }
    if (f->h.is_eof()) return std::nullopt;
    check_interrupted();
  }
  return std::nullopt;
}

}  // namespace alog::cli
