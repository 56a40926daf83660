// alog dump-frames DIR|SEGMENT: decodes the segment header, both slots and
// every frame, with stored and computed CRCs and what each checkpoint covers.
// After damage it searches for the next valid data header (a resync).
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>

#include "alog/crc32c.h"
#include "cli.h"
#include "segment_file.h"

namespace alog::cli {

using namespace format;

namespace {

struct DumpOptions {
  std::string path;
  std::optional<std::string> payload;
  bool stale = false;
};

class Dumper {
 public:
  Dumper(const DumpOptions& o, const Global& g)
      : o_(o), json_(g.json()),
        enc_(o.payload ? parse_payload_encoding(*o.payload) : PayloadEncoding::none) {}

  void segment(SegmentFile& s, const std::string& name) {
    name_ = name;
    header(s);
    if (!s.header_complete || s.header_error != HeaderError::none) {
      damaged_ = true;
      return end(s, std::nullopt, 0);
    }
    slots(s);
    if (s.slots.winner < 0) {
      damaged_ = true;
      return end(s, std::nullopt, 0);
    }
    frames(s);
  }
  // Some segment had unreadable headers or a frame problem.
  bool damaged() const { return damaged_; }

 private:
  void emit(const Json& j, const std::string& text) {
    if (json_) out_json(j);
    else out_line(text);
  }

  void header(const SegmentFile& s) {
    const uint8_t* r = s.raw;
    bool have = s.length >= kFixedSize;
    uint32_t stored = have ? get32(r + 60) : 0, computed = have ? crc32c(r, 60) : 0;
    Json j;
    j["type"] = "segment";
    j["file"] = name_;
    j["file_length"] = s.length;
    j["header_ok"] = s.header_complete && s.header_error == HeaderError::none;
    j["header_error"] = !s.header_complete ? Json("file is shorter than the 192-byte header")
                        : s.header_error != HeaderError::none ? Json(header_error_text(s.header_error))
                                                              : Json(nullptr);
    j["magic"] = have ? Json(fmt::format("0x{:08x}", get32(r))) : Json(nullptr);
    j["version"] = have ? Json(get16(r + 4)) : Json(nullptr);
    j["header_size"] = have ? Json(get16(r + 6)) : Json(nullptr);
    j["start_seq"] = have ? Json(get64(r + 8)) : Json(nullptr);
    j["created_at"] = have ? Json(iso_time_ms(get64(r + 16))) : Json(nullptr);
    j["created_at_ms"] = have ? Json(get64(r + 16)) : Json(nullptr);
    j["generation"] = have ? Json(get16(r + 24)) : Json(nullptr);
    j["stored_crc"] = have ? Json(hex32(stored)) : Json(nullptr);
    j["computed_crc"] = have ? Json(hex32(computed)) : Json(nullptr);
    std::string t = fmt::format("{}: {} bytes", name_, s.length);
    if (have)
      t += fmt::format("\n  header: magic 0x{:08x} version {} header_size {} start {} created {} "
                       "generation {} crc {} (computed {})",
                       get32(r), get16(r + 4), get16(r + 6), get64(r + 8), iso_time_ms(get64(r + 16)),
                       get16(r + 24), hex32(stored), hex32(computed));
    if (!j["header_error"].is_null()) t += "\n  header: UNREADABLE: " + j["header_error"].get<std::string>();
    emit(j, t);
  }

  void slots(const SegmentFile& s) {
    for (int i = 0; i < 2; i++) {
      const Slot& sl = s.slots.slot[i];
      const char* state = s.slots.state[i] == SlotState::valid  ? "valid"
                          : s.slots.state[i] == SlotState::zero ? "zero" : "invalid";
      bool win = s.slots.winner == i;
      bool show = s.slots.state[i] != SlotState::zero;
      Json j;
      j["type"] = "slot";
      j["file"] = name_;
      j["slot"] = i == 0 ? "A" : "B";
      j["offset"] = i == 0 ? kSlotAOffset : kSlotBOffset;
      j["state"] = state;
      j["winner"] = win;
      j["why"] = s.slots.why[i].empty() ? Json(nullptr) : Json(s.slots.why[i]);
      j["counter"] = show ? Json(sl.counter) : Json(nullptr);
      j["read_offset"] = show ? Json(sl.read_offset) : Json(nullptr);
      j["first_seq"] = show ? Json(sl.first_sequence) : Json(nullptr);
      j["read_crc"] = show ? Json(hex32(sl.read_crc)) : Json(nullptr);
      j["read_pending"] = show ? Json(sl.read_pending) : Json(nullptr);
      j["synced_offset"] = show ? Json(sl.synced_offset) : Json(nullptr);
      j["synced_seq"] = show ? Json(sl.synced_sequence) : Json(nullptr);
      j["synced_crc"] = show ? Json(hex32(sl.synced_crc)) : Json(nullptr);
      j["synced_pending"] = show ? Json(sl.synced_pending) : Json(nullptr);
      std::string t = fmt::format("  slot {}: {}{}", i == 0 ? "A" : "B", state, win ? " (winner)" : "");
      if (show)
        t += fmt::format(" counter {} read {} first {} crc {} pending {} synced {} seq {} crc {} pending {}",
                         sl.counter, sl.read_offset, sl.first_sequence, hex32(sl.read_crc),
                         sl.read_pending, sl.synced_offset, sl.synced_sequence, hex32(sl.synced_crc),
                         sl.synced_pending);
      if (!s.slots.why[i].empty()) t += " (" + s.slots.why[i] + ")";
      emit(j, t);
    }
    if (s.slots.winner < 0) {
      Json j;
      j["type"] = "slots_error";
      j["file"] = name_;
      j["message"] = s.slots.error;
      emit(j, "  slots: no winner: " + s.slots.error);
    }
  }

  void frame(const WalkFrame& f, const SegmentFile& s, bool resynced, bool stale) {
    const FrameHeader& h = f.h;
    bool data = h.is_data(), ck = h.is_checkpoint() || h.is_eof();
    bool live = f.offset >= s.winner().read_offset;
    std::string status = stale ? "stale" : f.problem.empty() ? "ok" : f.problem;
    Json j;
    j["type"] = "frame";
    j["file"] = name_;
    j["offset"] = f.offset;
    j["kind"] = f.problem == "truncated_header" ? "truncated" : frame_kind_name(h.flags);
    j["flags"] = hex16(h.flags);
    j["flags_text"] = flags_text(h.flags);
    j["length"] = data ? Json(h.word) : Json(nullptr);
    j["checkpoint_crc"] = ck ? Json(hex32(h.word)) : Json(nullptr);
    j["stride"] = h.stride;
    j["generation"] = h.generation;
    j["stored_crc"] = hex32(h.crc);
    bool computed = (data && f.payload_read) || ck;
    j["computed_crc"] = computed ? Json(hex32(f.computed_crc)) : Json(nullptr);
    j["status"] = status;
    j["expected"] = f.expected.empty() ? Json(nullptr) : Json(f.expected);
    j["found"] = f.found.empty() ? Json(nullptr) : Json(f.found);
    j["seq"] = opt_json(f.seq);
    j["live"] = live && !stale;
    j["after_resync"] = resynced;
    bool known = !resynced && !stale;
    j["covers"] = ck && known ? Json(f.walk_pending) : Json(nullptr);
    j["walk_crc"] = ck && known ? Json(hex32(f.walk_crc)) : Json(nullptr);
    j["matches"] = ck && known ? Json(f.problem.empty()) : Json(nullptr);
    std::string t = fmt::format("  @{} {} flags {} ({})", f.offset, j["kind"].get<std::string>(),
                                hex16(h.flags), flags_text(h.flags));
    if (data) t += fmt::format(" len {}", h.word);
    if (ck) t += fmt::format(" ckpt_crc {}", hex32(h.word));
    t += fmt::format(" stride {} gen {} crc {}", h.stride, h.generation, hex32(h.crc));
    if (computed) t += fmt::format(" computed {}", hex32(f.computed_crc));
    t += " " + status;
    if (!f.expected.empty() || !f.found.empty())
      t += fmt::format(" (expected {}, found {})", f.expected.empty() ? "-" : f.expected,
                       f.found.empty() ? "-" : f.found);
    if (f.seq) t += fmt::format(" seq {}", *f.seq);
    if (ck && known)
      t += fmt::format(" covers {} header{} (walk crc {}): {}", f.walk_pending,
                       f.walk_pending == 1 ? "" : "s", hex32(f.walk_crc),
                       f.problem.empty() ? "match" : "MISMATCH");
    if (!live && !stale) t += " [before read offset]";
    if (resynced) t += " [after resync]";
    if (data && enc_ != PayloadEncoding::none && f.payload_read) {
      put_payload(j, f.payload, enc_);
      t += " payload " + text_payload(f.payload, enc_ == PayloadEncoding::utf8 && !valid_utf8(f.payload)
                                                      ? PayloadEncoding::base64 : enc_);
    }
    emit(j, t);
  }

  void resync_line(uint64_t from, std::optional<uint64_t> to) {
    Json j;
    j["type"] = "resync";
    j["file"] = name_;
    j["from"] = from;
    j["to"] = opt_json(to);
    emit(j, to ? fmt::format("  -- resync: searched from {}, next valid data header at {}", from, *to)
               : fmt::format("  -- resync: searched from {}, no valid data header found", from));
  }

  void frames(SegmentFile& s) {
    WalkState start;
    start.offset = kHeaderSize;
    start.seq = s.header.start_sequence;
    FrameWalker w(s, start, /*read_payloads=*/true, enc_ != PayloadEncoding::none);
    bool resynced = false;
    std::optional<uint64_t> eof_end;
    uint64_t records = 0;
    while (auto f = w.next()) {
      check_interrupted();
      frame(*f, s, resynced, false);
      if (f->h.is_data() && f->problem.empty()) records++;
      if (!f->problem.empty()) damaged_ = true;
      if (f->problem.empty()) {
        if (f->h.is_eof()) {
          eof_end = f->end();
          break;
        }
        continue;
      }
      if (f->problem == "frame_crc" && f->h.is_data()) {  // payload damage, plausible length
        w.skip_damaged(*f);
        continue;
      }
      uint64_t from = f->offset + 1;
      bool found = w.resync(from);
      resync_line(from, found ? std::optional<uint64_t>(w.state().offset) : std::nullopt);
      if (!found) break;
      resynced = true;
    }
    if (eof_end && o_.stale) stale_frames(s, *eof_end);
    end(s, eof_end, records);
  }

  // Frames after the EOF: a recycled file's older generations. Each is checked
  // on its own (flags, reserved bytes, stride, length, CRC); after a failure
  // the search moves on byte by byte to the next frame valid on its own.
  void stale_frames(SegmentFile& s, uint64_t off) {
    bool lost = false;  // searching since lost_from
    uint64_t lost_from = 0;
    while (off + kFrameHeaderSize <= s.length) {
      check_interrupted();
      WalkFrame f;
      f.offset = off;
      uint8_t hb[kFrameHeaderSize];
      auto got = s.file->pread(hb, sizeof hb, off);
      if (!got || *got != sizeof hb) break;
      f.h = decode_frame_header(hb);
      uint64_t len = f.h.is_data() ? f.h.word : 0;
      bool ok = f.h.flags_valid() && f.h.reserved == 0 && (!f.h.is_data() || f.h.stride == 1) &&
                off + kFrameHeaderSize + len <= s.length;
      std::string payload;
      if (ok) {
        payload.resize(len);
        auto pg = s.file->pread(payload.data(), len, off + kFrameHeaderSize);
        ok = pg && *pg == len && frame_crc(hb, payload.data(), len) == f.h.crc;
      }
      if (!ok) {
        if (!lost) lost_from = off;
        lost = true;
        off++;
        continue;
      }
      if (lost) resync_line(lost_from, off);
      lost = false;
      f.computed_crc = f.h.crc;
      f.payload_read = f.h.is_data();
      if (enc_ != PayloadEncoding::none) f.payload = payload;
      frame(f, s, false, true);
      off += kFrameHeaderSize + len;
    }
    if (lost) resync_line(lost_from, std::nullopt);
  }

  void end(const SegmentFile& s, std::optional<uint64_t> eof_end, uint64_t records) {
    Json j;
    j["type"] = "segment_end";
    j["file"] = name_;
    j["records"] = records;
    j["size"] = opt_json(eof_end);
    j["file_length"] = s.length;
    j["bytes_after_eof"] = eof_end ? Json(s.length - *eof_end) : Json(nullptr);
    std::string t = fmt::format("  end: {} record{}", records, records == 1 ? "" : "s");
    if (eof_end) t += fmt::format(", size {}", *eof_end);
    else t += ", no valid EOF";
    if (eof_end && s.length > *eof_end)
      t += fmt::format(", {} bytes after the EOF{}", s.length - *eof_end, o_.stale ? "" : " (--stale shows them)");
    emit(j, t);
  }

  const DumpOptions& o_;
  bool json_;
  PayloadEncoding enc_;
  std::string name_;
  bool damaged_ = false;
};

int run_dump(const DumpOptions& o, const Global& g) {
  Dumper d(o, g);
  if (is_regular_file(o.path)) {
    SegmentFile s = open_segment_file(o.path);
    d.segment(s, base_name(o.path));
    return d.damaged() ? kExitDamaged : kExitOk;
  }
  auto st = posix_fs().stat(o.path);
  if (!st) fail(st.status(), o.path);
  if (!st->exists) fail("not_found", o.path, std::nullopt, "no such log directory or segment file");
  if (!st->is_dir) fail("not_a_log", o.path, std::nullopt, "not a directory or a segment file");
  auto names = posix_fs().list(o.path);
  if (!names) fail(names.status(), o.path);
  std::vector<std::string> segs;
  for (const auto& n : *names)
    if (parse_segment_name(n)) segs.push_back(n);
  std::sort(segs.begin(), segs.end());
  if (segs.empty()) fail("not_a_log", o.path, std::nullopt, "no segment files (not an alog log)");
  for (const auto& n : segs) {
    SegmentFile s = open_segment_file(path_join(o.path, n));
    d.segment(s, n);
  }
  return d.damaged() ? kExitDamaged : kExitOk;
}

}  // namespace

Command add_dump_frames(CLI::App& app, const Global& g) {
  auto o = std::make_shared<DumpOptions>();
  CLI::App* sub = app.add_subcommand("dump-frames", "Decode segment headers, slots and every frame");
  sub->fallthrough();
  sub->add_option("DIR", o->path, "Log directory or segment file")->required();
  sub->add_option("--payload", o->payload, "Show payloads: base64, hex, utf8 or none (default)")
      ->check(CLI::IsMember({"base64", "hex", "utf8", "none"}));
  sub->add_flag("--stale", o->stale, "Also show frames past the EOF (recycled files)");
  return {sub, true, [o, &g] { return run_dump(*o, g); }};
}

}  // namespace alog::cli
