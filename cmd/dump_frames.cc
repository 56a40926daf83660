// alog dump-frames DIR|SEGMENT (man/alog-dump-frames.1): decodes the segment
// header, both slots and every frame from offset 192, with stored and
// computed CRCs, what each checkpoint covers, resyncs after damage (and to
// the winning slot's read offset), and an end line per segment.
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
  std::string payload = "none";
  bool stale = false;
};

// "Data+BatchEnd"; unknown bits as 0x%04x; "-" for none.
std::vector<std::string> flag_names(uint16_t flags) {
  static const char* kNames[] = {"Data", "BatchEnd", "Checkpoint", "EOF"};
  std::vector<std::string> v;
  for (int b = 0; b < 16; b++)
    if (flags & (1u << b)) v.push_back(b < 4 ? std::string(kNames[b]) : hex16(uint16_t(1u << b)));
  return v;
}

std::string join_names(const std::vector<std::string>& v) {
  if (v.empty()) return "-";
  std::string s;
  for (const auto& n : v) s += (s.empty() ? "" : "+") + n;
  return s;
}

const char* kind_of(uint16_t flags) {
  if (flags == kFlagData || flags == (kFlagData | kFlagBatchEnd)) return "data";
  if (flags == kFlagCheckpoint) return "checkpoint";
  if (flags == (kFlagCheckpoint | kFlagEof)) return "eof";
  return "invalid";
}

// One frame as read: header fields when 16 bytes were there, the payload of
// a data frame when it lies inside the file.
struct Frame {
  uint64_t offset = 0;
  bool have_header = false;
  FrameHeader h;
  std::string kind = "invalid";
  bool payload_inside = false;
  std::string payload;
  std::optional<uint32_t> computed;
  std::string status = "ok";
  std::optional<uint64_t> seq;
  std::string region = "live";
  uint64_t end() const { return offset + kFrameHeaderSize + (kind == "data" ? h.word : 0); }
};

struct Covers {
  uint64_t from = kHeaderSize;
  uint64_t records = 0;
  std::optional<uint64_t> first, last;
};

// The walk's running state; crc/pending unknown after a search resync until
// the next checkpoint, sequences unknown for the rest of the segment.
struct State {
  uint64_t offset = kHeaderSize;
  std::optional<uint64_t> seq;
  std::optional<uint32_t> crc = 0;
  uint16_t pending = 0;
  bool after_data_without_batch_end = false;
  Covers covers;
};

class Dumper {
 public:
  Dumper(const DumpOptions& o, const Global& g)
      : o_(o), json_(g.json()), enc_(parse_payload_encoding(o.payload)) {}

  void segment(SegmentFile& s, const std::string& name, bool active, bool writer) {
    name_ = name;
    active_ = active;
    writer_ = writer;
    seg_ = &s;
    problems_ = 0;
    torn_ = corrupt_ = false;
    counted_ = {};
    eof_offset_.reset();
    bool header_ok = header(s);
    if (!header_ok) {
      problems_++;
      corrupt_ = true;
      return end();
    }
    slots(s);
    walk(s);
    end();
  }
  bool damaged() const { return damaged_; }

 private:
  void emit(const Json& j, const std::string& text) {
    if (json_) out_json(j);
    else out_line(text);
  }

  bool header(const SegmentFile& s) {
    const uint8_t* r = s.raw;
    bool have = s.length >= kFixedSize;
    bool ok = s.header_complete && s.header_error == HeaderError::none;
    bool rz = true;
    for (int i = 26; i < 60; i++) rz = rz && r[i] == 0;
    auto num = [&](uint64_t v) { return have ? Json(v) : Json(nullptr); };
    auto str = [&](const std::string& v) { return have ? Json(v) : Json(nullptr); };
    Json j;
    j["type"] = "segment";
    j["file"] = name_;
    j["file_length"] = s.length;
    j["magic"] = s.length >= 4 ? Json(hex32(get32(r))) : Json(nullptr);
    j["version"] = num(get16(r + 4));
    j["header_size"] = num(get16(r + 6));
    j["start_seq"] = num(get64(r + 8));
    j["created_at_ms"] = num(get64(r + 16));
    j["created_at"] = str(iso_time_ms(get64(r + 16)));
    j["generation"] = num(get16(r + 24));
    j["reserved_zero"] = have ? Json(rz) : Json(nullptr);
    j["stored_crc"] = str(hex32(get32(r + 60)));
    j["computed_crc"] = str(hex32(have ? crc32c(r, 60) : 0));
    j["status"] = ok ? "ok" : "segment_header";
    j["active"] = active_;
    auto t = [&](const Json& v) {
      return v.is_null() ? std::string("-") : v.is_string() ? v.get<std::string>() : v.dump();
    };
    emit(j, fmt::format("segment {} length {} start {} created {} generation {} crc {}: {}, {}", name_,
                        s.length, t(j["start_seq"]), t(j["created_at"]), t(j["generation"]),
                        t(j["stored_crc"]), ok ? "ok" : "segment_header",
                        active_ ? "active" : "sealed"));
    return ok;
  }

  static const char* reason_of(const std::string& why) {
    if (why.find("crc") != std::string::npos) return "crc_mismatch";
    if (why.find("reserved") != std::string::npos) return "reserved_bytes";
    if (why.find("offsets") != std::string::npos) return "offsets";
    if (why.find("sequences") != std::string::npos) return "sequences";
    return "crc_mismatch";
  }

  void slots(const SegmentFile& s) {
    for (int i = 0; i < 2; i++) {
      uint64_t at = i == 0 ? kSlotAOffset : kSlotBOffset;
      const uint8_t* p = s.raw + at;
      bool short_file = s.length < at + kSlotSize;
      bool zero = !short_file && std::all_of(p, p + kSlotSize, [](uint8_t c) { return c == 0; });
      std::string state, reason;
      if (short_file) {
        state = "invalid";
        reason = "short_file";
      } else if (zero) {
        state = "empty";
      } else if (s.slots.state[i] == SlotState::valid) {
        state = "valid";
      } else {
        state = "invalid";
        reason = reason_of(s.slots.why[i]);
      }
      if (state == "invalid") problems_++;
      bool win = s.slots.winner == i;
      bool rz = std::all_of(p + 46, p + 60, [](uint8_t c) { return c == 0; });
      auto num = [&](uint64_t v) { return short_file ? Json(nullptr) : Json(v); };
      auto crc = [&](uint32_t v) { return short_file ? Json(nullptr) : Json(hex32(v)); };
      Json j;
      j["type"] = "slot";
      j["file"] = name_;
      j["slot"] = i == 0 ? "A" : "B";
      j["offset"] = at;
      j["read_offset"] = num(get64(p));
      j["first_seq"] = num(get64(p + 8));
      j["read_crc"] = crc(get32(p + 16));
      j["read_pending"] = num(get16(p + 20));
      j["counter"] = num(get16(p + 22));
      j["synced_offset"] = num(get64(p + 24));
      j["synced_seq"] = num(get64(p + 32));
      j["synced_crc"] = crc(get32(p + 40));
      j["synced_pending"] = num(get16(p + 44));
      j["reserved_zero"] = short_file ? Json(nullptr) : Json(rz);
      j["stored_crc"] = crc(get32(p + 60));
      j["computed_crc"] = crc(short_file ? 0 : crc32c(p, 60));
      j["state"] = state;
      j["reason"] = reason.empty() ? Json(nullptr) : Json(reason);
      j["winner"] = win;
      auto t = [&](const Json& v) {
        return v.is_null() ? std::string("-") : v.is_string() ? v.get<std::string>() : v.dump();
      };
      emit(j, fmt::format("slot {} at {}: {}{}{}: read {} first {} crc {} pending {} counter {} "
                          "synced {} seq {} crc {} pending {}",
                          i == 0 ? "A" : "B", at, state, reason.empty() ? "" : " (" + reason + ")",
                          win ? ", winner" : "", t(j["read_offset"]), t(j["first_seq"]),
                          t(j["read_crc"]), t(j["read_pending"]), t(j["counter"]),
                          t(j["synced_offset"]), t(j["synced_seq"]), t(j["synced_crc"]),
                          t(j["synced_pending"])));
    }
  }

  // Reads the frame at off: header, payload (data frames inside the file), computed CRC.
  Frame read_frame(uint64_t off) {
    const SegmentFile& s = *seg_;
    Frame f;
    f.offset = off;
    if (s.length - off < kFrameHeaderSize) {
      f.status = "truncated_header";
      return f;
    }
    uint8_t hb[kFrameHeaderSize];
    auto got = s.file->pread(hb, sizeof hb, off);
    if (!got) fail(got.status(), s.path);
    f.have_header = true;
    f.h = decode_frame_header(hb);
    f.kind = kind_of(f.h.flags);
    if (f.kind == "data") {
      uint64_t left = s.length - off - kFrameHeaderSize;
      if (f.h.word <= left) {
        f.payload_inside = true;
        f.payload.resize(f.h.word);
        auto pg = s.file->pread(f.payload.data(), f.h.word, off + kFrameHeaderSize);
        if (!pg) fail(pg.status(), s.path);
        f.computed = frame_crc(hb, f.payload.data(), f.payload.size());
      }
    } else {
      f.computed = crc32c(hb, 12);
    }
    return f;
  }

  // Checks on a frame's own (the --stale region and the first checks of the walk).
  static std::string own_check(const Frame& f, const SegmentFile& s) {
    if (!f.have_header) return "truncated_header";
    if (f.kind == "invalid") return "bad_flags";
    if (f.h.reserved != 0) return "reserved_bytes";
    if (f.kind == "data" && f.h.stride != 1) return "bad_stride";
    if (f.kind == "data" && !f.payload_inside) return "truncated_payload";
    if (f.computed && *f.computed != f.h.crc) return "frame_crc";
    (void)s;
    return "ok";
  }

  void show_frame(const Frame& f, const std::optional<Json>& ck_line = std::nullopt) {
    bool data = f.kind == "data", ck = f.kind == "checkpoint" || f.kind == "eof";
    Json j;
    j["type"] = "frame";
    j["file"] = name_;
    j["offset"] = f.offset;
    j["region"] = f.region;
    j["kind"] = f.kind;
    auto hv = [&](Json v) { return f.have_header ? v : Json(nullptr); };
    j["flags"] = hv(hex16(f.h.flags));
    Json names = Json::array();
    for (auto& n : flag_names(f.h.flags)) names.push_back(n);
    j["flag_names"] = hv(names);
    j["length"] = f.have_header && !ck ? Json(f.h.word) : Json(nullptr);
    j["checkpoint_crc"] = f.have_header && ck ? Json(hex32(f.h.word)) : Json(nullptr);
    j["stride"] = hv(f.h.stride);
    j["reserved"] = hv(f.h.reserved);
    j["generation"] = hv(f.h.generation);
    j["stored_crc"] = hv(hex32(f.h.crc));
    j["computed_crc"] = f.computed ? Json(hex32(*f.computed)) : Json(nullptr);
    j["status"] = f.status;
    j["seq"] = opt_json(f.seq);
    bool show_payload = data && enc_ != PayloadEncoding::none && f.payload_inside;
    if (data) {
      if (show_payload) {
        put_payload(j, f.payload, enc_);
      } else {
        j["payload_encoding"] = o_.payload;
        j["payload"] = nullptr;
      }
    } else {
      j["payload_encoding"] = nullptr;
      j["payload"] = nullptr;
    }
    std::string t;
    if (!f.have_header) {
      t = fmt::format("{} invalid - - len - stride - gen - crc - {}", f.offset, f.status);
    } else {
      t = fmt::format("{} {} {} {} {} stride {} gen {} crc {} {}", f.offset, f.kind, hex16(f.h.flags),
                      join_names(flag_names(f.h.flags)),
                      ck ? "ckpt " + hex32(f.h.word) : "len " + std::to_string(f.h.word), f.h.stride,
                      f.h.generation, hex32(f.h.crc), f.status);
      if (f.computed && *f.computed != f.h.crc) t += " computed " + hex32(*f.computed);
      if (data && f.seq) t += fmt::format(" seq {}", *f.seq);
    }
    if (f.region == "before_read_offset") t += " [before read offset]";
    if (f.region == "after_eof") t += " [after eof]";
    if (json_) {
      out_json(j);
      if (ck_line) out_json(*ck_line);
      return;
    }
    out_line(t);
    if (ck_line) {
      const Json& c = *ck_line;
      auto tx = [](const Json& v) {
        return v.is_null() ? std::string("-") : v.is_string() ? v.get<std::string>() : v.dump();
      };
      std::string m = c["match"].is_null() ? "unknown" : c["match"].get<bool>() ? "match" : "mismatch";
      std::string range = c["first_seq"].is_null()
                              ? ""
                              : fmt::format(" ({}-{})", tx(c["first_seq"]), tx(c["last_seq"]));
      out_line(fmt::format("    covers {}-{}: {} records{}, crc {} walk {}, count {} walk {}: {}",
                           tx(c["covers_from"]), tx(c["covers_to"]), tx(c["records"]), range,
                           tx(c["stored_crc"]), tx(c["walk_crc"]), tx(c["stored_count"]),
                           tx(c["walk_count"]), m));
    }
    if (show_payload) {
      std::string used = j["payload_encoding"].get<std::string>();
      out_line(fmt::format("    payload {}: {}", used,
                           used == "utf8" ? j["payload"].dump(-1, ' ', false, Json::error_handler_t::replace)
                                          : j["payload"].get<std::string>()));
    }
  }

  void resync_line(uint64_t from, std::optional<uint64_t> to, const char* reason) {
    Json j;
    j["type"] = "resync";
    j["file"] = name_;
    j["from_offset"] = from;
    j["to_offset"] = opt_json(to);
    j["skipped_bytes"] = to ? *to - from : from < seg_->length ? seg_->length - from : 0;
    j["reason"] = to ? reason : "not_found";
    emit(j, to ? fmt::format("resync from {} to {}: {} bytes skipped ({})", from, *to, *to - from, reason)
               : fmt::format("resync from {}: no valid frame to the end of the file", from));
  }

  // A frame that fails in the live region: a problem, and the first stop decides the end status.
  void live_problem(const Frame& f, const State& st) {
    problems_++;
    bool torn = active_ && has_synced_ && f.offset >= synced_offset_;
    if (!has_synced_) torn = false;
    if (torn) torn_ = true;
    else corrupt_ = true;
    (void)st;
  }

  void walk(SegmentFile& s) {
    const bool winner = s.slots.winner >= 0;
    has_synced_ = winner;
    uint64_t read_offset = kHeaderSize;
    if (winner) {
      synced_offset_ = s.winner().synced_offset;
      read_offset = s.winner().read_offset;
    } else {
      corrupt_ = true;  // no slot wins: corruption, walked from 192 as live
    }
    FrameWalker searcher(s, WalkState{}, false, false);
    State st;
    st.seq = s.header.start_sequence;
    bool live = !winner || read_offset == kHeaderSize;
    bool counting = true;  // until the first stop in the live region
    uint64_t records = 0, checkpoints = 0, batches = 0;
    uint64_t b_records = 0, b_checkpoints = 0, b_batches = 0;  // at the last batch boundary
    std::optional<uint64_t> b_seq;
    uint64_t prev_offset = kHeaderSize;  // the last frame shown
    auto enter_live = [&](uint64_t from) {
      if (from > read_offset) from = prev_offset;
      if (from != read_offset || !st.crc || *st.crc != s.winner().read_crc ||
          st.pending != s.winner().read_pending)
        resync_line(from, read_offset, "read_offset");
      st = State{};
      st.offset = read_offset;
      st.seq = s.winner().first_sequence;
      st.crc = s.winner().read_crc;
      st.pending = s.winner().read_pending;
      st.covers.from = read_offset;
      live = true;
      b_seq = st.seq;
    };
    if (winner && read_offset == kHeaderSize) {
      // The walk from 192 is the live walk when the slot's state agrees.
      if (s.winner().read_crc != 0 || s.winner().read_pending != 0) enter_live(kHeaderSize);
      else st.seq = s.winner().first_sequence;
    }
    b_seq = st.seq;
    while (true) {
      check_interrupted();
      if (!live && st.offset >= read_offset) {
        enter_live(st.offset);
        continue;
      }
      if (st.offset >= s.length) {
        // The file ends without an EOF frame: nothing more to read.
        Frame f;
        f.offset = st.offset;
        f.status = "truncated_header";
        f.region = live ? "live" : "before_read_offset";
        f.seq = std::nullopt;
        if (!live) {
          show_frame(f);
          enter_live(st.offset);
          continue;
        }
        show_frame(f);
        live_problem(f, st);
        if (counting) stop_at(b_seq, b_records, b_checkpoints, b_batches);
        counting = false;
        resync_line(st.offset, std::nullopt, "search");
        return;
      }
      Frame f = read_frame(st.offset);
      prev_offset = f.offset;
      f.region = live ? "live" : "before_read_offset";
      std::string status = own_check(f, s);
      bool data = f.kind == "data", ck = f.kind == "checkpoint" || f.kind == "eof";
      if (data) f.seq = st.seq;
      // The order of verify's checks: flags, generation, reserved, stride, length, CRC.
      if (status == "truncated_header" || status == "bad_flags") {
      } else if (f.h.generation != s.header.generation) {
        status = "stale_generation";
      }
      std::optional<Json> ckj;
      bool match_known = ck && st.crc.has_value();
      bool match = match_known && f.h.word == *st.crc && f.h.stride == st.pending;
      if (status == "ok" && ck && match_known) {
        if (f.h.word != *st.crc) status = "checkpoint_crc";
        else if (f.h.stride != st.pending) status = "checkpoint_stride";
      }
      if (status == "ok" && f.kind == "eof" && st.after_data_without_batch_end)
        status = "eof_without_batch_end";
      if (status == "ok" && f.kind == "eof" && live && winner &&
          ((!active_ && synced_offset_ != f.offset) || synced_offset_ > f.offset))
        status = "synced_offset";
      f.status = status;
      if (ck && f.have_header) {
        Json c;
        c["type"] = "checkpoint";
        c["file"] = name_;
        c["offset"] = f.offset;
        c["kind"] = f.kind;
        c["covers_from"] = st.covers.from;
        c["covers_to"] = f.offset;
        c["records"] = st.covers.records;
        c["first_seq"] = opt_json(st.covers.first);
        c["last_seq"] = opt_json(st.covers.last);
        c["stored_crc"] = hex32(f.h.word);
        c["walk_crc"] = st.crc ? Json(hex32(*st.crc)) : Json(nullptr);
        c["stored_count"] = f.h.stride;
        c["walk_count"] = st.crc ? Json(st.pending) : Json(nullptr);
        c["match"] = match_known ? Json(match) : Json(nullptr);
        ckj = c;
      }
      show_frame(f, ckj);
      if (status == "ok" || status == "synced_offset") {
        if (status == "synced_offset" && live) live_problem(f, st);
        if (data) {
          uint8_t hb[kFrameHeaderSize];
          encode_header_bytes(f.h, hb);
          if (st.crc) st.crc = crc32c_extend(*st.crc, hb, kFrameHeaderSize);
          st.pending = uint16_t(st.pending + 1);
          st.covers.records++;
          if (st.seq) {
            if (!st.covers.first) st.covers.first = st.seq;
            st.covers.last = st.seq;
            st.seq = *st.seq + 1;
          }
          st.after_data_without_batch_end = !f.h.is_batch_end();
          st.offset = f.end();
          if (live && counting) {
            records++;
            if (f.h.is_batch_end()) {
              batches++;
              b_records = records, b_checkpoints = checkpoints, b_batches = batches, b_seq = st.seq;
            }
          }
          continue;
        }
        if (f.kind == "eof") {
          if (live) {
            if (counting) {
              eof_offset_ = f.offset;
              stop_at(st.seq, records, checkpoints, batches);
              counting = false;
            }
            if (o_.stale) stale_frames(f.end());
            return;
          }
          // An EOF before the read offset: go to the read offset.
          enter_live(f.offset);
          continue;
        }
        // A checkpoint.
        st.offset = f.end();
        st.crc = 0;
        st.pending = 0;
        st.after_data_without_batch_end = false;
        st.covers = Covers{};
        st.covers.from = st.offset;
        if (live && counting) {
          checkpoints++;
          b_records = records, b_checkpoints = checkpoints, b_batches = batches, b_seq = st.seq;
        }
        continue;
      }
      // A failed frame.
      if (!live) {
        enter_live(f.offset);
        continue;
      }
      live_problem(f, st);
      if (status == "frame_crc" && data && f.payload_inside) {
        // Payload damage: go on after the payload; the next checkpoint tells.
        if (counting && (!active_ || f.offset < synced_offset_)) {
          // As verify counts it: the record is there, damaged.
        } else if (counting) {
          stop_at(b_seq, b_records, b_checkpoints, b_batches);
          counting = false;
        }
        uint8_t hb[kFrameHeaderSize];
        encode_header_bytes(f.h, hb);
        if (st.crc) st.crc = crc32c_extend(*st.crc, hb, kFrameHeaderSize);
        st.pending = uint16_t(st.pending + 1);
        st.covers.records++;
        if (st.seq) {
          if (!st.covers.first) st.covers.first = st.seq;
          st.covers.last = st.seq;
          st.seq = *st.seq + 1;
        }
        st.after_data_without_batch_end = !f.h.is_batch_end();
        st.offset = f.end();
        if (counting) {
          records++;
          if (f.h.is_batch_end()) {
            batches++;
            b_records = records, b_checkpoints = checkpoints, b_batches = batches, b_seq = st.seq;
          }
        }
        continue;
      }
      if (counting) {
        stop_at(b_seq, b_records, b_checkpoints, b_batches);
        counting = false;
      }
      if (!searcher.resync(f.offset + 1)) {
        resync_line(f.offset, std::nullopt, "search");
        return;
      }
      uint64_t to = searcher.state().offset;
      resync_line(f.offset, to, "search");
      st = State{};
      st.offset = to;
      st.seq.reset();
      st.crc.reset();
      st.covers.from = to;
    }
  }

  static void encode_header_bytes(const FrameHeader& h, uint8_t* hb) {
    put32(hb, h.word);
    put16(hb + 4, h.stride);
    put16(hb + 6, h.reserved);
    put16(hb + 8, h.generation);
    put16(hb + 10, h.flags);
    put32(hb + 12, h.crc);
  }

  void stop_at(std::optional<uint64_t> next, uint64_t records, uint64_t checkpoints, uint64_t batches) {
    counted_.next = next;
    counted_.records = records;
    counted_.checkpoints = checkpoints;
    counted_.batches = batches;
    counted_.set = true;
  }

  // Frames after the EOF (--stale), each checked on its own; after a failure
  // a search for the next frame valid on its own, of any generation.
  void stale_frames(uint64_t off) {
    const SegmentFile& s = *seg_;
    while (off < s.length) {
      check_interrupted();
      Frame f = read_frame(off);
      f.region = "after_eof";
      f.status = own_check(f, s);
      show_frame(f);
      if (f.status == "ok") {
        off = f.end();
        continue;
      }
      if (!f.have_header) return;
      uint64_t from = off;
      std::optional<uint64_t> to;
      for (uint64_t p = off + 1; p + kFrameHeaderSize <= s.length; p++) {
        if (((p - off) & 0xffff) == 0) check_interrupted();
        Frame g = read_frame(p);
        if (own_check(g, s) == "ok") {
          to = p;
          break;
        }
      }
      resync_line(from, to, "search");
      if (!to) return;
      off = *to;
    }
  }

  void end() {
    const SegmentFile& s = *seg_;
    std::string status = corrupt_ ? "corruption" : torn_ ? (writer_ ? "in_flight" : "torn_tail") : "clean";
    if (status == "corruption" || status == "torn_tail") damaged_ = true;
    std::optional<uint64_t> first;
    if (s.walkable()) first = s.winner().first_sequence;
    else if (s.header_complete && s.header_error == HeaderError::none) first = s.header.start_sequence;
    std::optional<uint64_t> next = counted_.set ? counted_.next : std::nullopt;
    Json j;
    j["type"] = "end";
    j["file"] = name_;
    j["eof_offset"] = opt_json(eof_offset_);
    j["size"] = eof_offset_ ? Json(*eof_offset_ + kFrameHeaderSize) : Json(nullptr);
    j["file_length"] = s.length;
    j["records"] = counted_.records;
    j["checkpoints"] = counted_.checkpoints;
    j["batches"] = counted_.batches;
    j["first_seq"] = counted_.set ? opt_json(first) : Json(nullptr);
    j["next_seq"] = opt_json(next);
    j["problems"] = problems_;
    j["status"] = status;
    std::string range;
    if (counted_.records && first && next) range = fmt::format(" ({}-{})", *first, *next - 1);
    auto o = [](std::optional<uint64_t> v) { return v ? std::to_string(*v) : std::string("-"); };
    emit(j, fmt::format("end {}: {} records{}, next {}, eof at {}, size {}, length {}: {}", name_,
                        counted_.records, range, o(next), o(eof_offset_),
                        eof_offset_ ? std::to_string(*eof_offset_ + kFrameHeaderSize) : "-",
                        s.length, status));
  }

  struct Counted {
    bool set = false;
    std::optional<uint64_t> next;
    uint64_t records = 0, checkpoints = 0, batches = 0;
  };

  const DumpOptions& o_;
  bool json_;
  PayloadEncoding enc_;
  std::string name_;
  SegmentFile* seg_ = nullptr;
  bool active_ = false, writer_ = false;
  bool has_synced_ = false;
  uint64_t synced_offset_ = 0;
  uint64_t problems_ = 0;
  bool torn_ = false, corrupt_ = false;
  std::optional<uint64_t> eof_offset_;
  Counted counted_;
  bool damaged_ = false;
};

int run_dump(const DumpOptions& o, const Global& g) {
  Dumper d(o, g);
  if (is_regular_file(o.path)) {
    SegmentFile s = open_segment_file(o.path);
    d.segment(s, base_name(o.path), true, writer_active(dir_name(o.path)));
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
  bool writer = writer_active(o.path);
  for (size_t i = 0; i < segs.size(); i++) {
    SegmentFile s = open_segment_file(path_join(o.path, segs[i]));
    d.segment(s, segs[i], i + 1 == segs.size(), writer);
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
      ->check(CLI::IsMember({"base64", "hex", "utf8", "none"}))
      ->type_name("ENCODING");
  sub->add_flag("--stale", o->stale, "Also show frames past the EOF (recycled files)");
  return {sub, true, [o, &g] { return run_dump(*o, g); }};
}

}  // namespace alog::cli
