// alog dump-frames' output lines (see dump_output.h).
#include "dump_output.h"

#include <fmt/core.h>

#include <algorithm>
#include <iterator>

#include "alog/crc32c.h"
#include "report.h"

namespace alog::cli::dump {

using namespace format;

namespace {

// "Data+BatchEnd"; unknown bits as 0x%04x; "-" for none.
std::vector<std::string> flag_names(uint16_t flags) {
  static const char* kNames[] = {"Data", "BatchEnd", "Checkpoint", "EOF", "Lost"};
  constexpr int kKnown = int(std::size(kNames));
  std::vector<std::string> v;
  for (int b = 0; b < 16; b++)
    if (flags & (1u << b)) v.push_back(b < kKnown ? std::string(kNames[b]) : hex16(uint16_t(1u << b)));
  return v;
}

std::string join_names(const std::vector<std::string>& v) {
  if (v.empty()) return "-";
  std::string s;
  for (const auto& n : v) s += (s.empty() ? "" : "+") + n;
  return s;
}

// A JSON value as the text lines show it: "-" for null, strings bare.
std::string text_of(const Json& v) {
  return v.is_null() ? std::string("-") : v.is_string() ? v.get<std::string>() : v.dump();
}

// The reason word of an invalid slot, from choose_slot's explanation.
const char* reason_of(const std::string& why) {
  if (why.find("crc") != std::string::npos) return "crc_mismatch";
  if (why.find("reserved") != std::string::npos) return "reserved_bytes";
  if (why.find("offsets") != std::string::npos) return "offsets";
  if (why.find("sequences") != std::string::npos) return "sequences";
  return "crc_mismatch";
}

}  // namespace

const char* kind_of(uint16_t flags) {
  format::FrameHeader h;
  h.flags = flags;
  if (h.is_data()) return "data";  // lost frames too: shown as "lost" (shown_kind)
  if (flags == kFlagCheckpoint) return "checkpoint";
  if (flags == (kFlagCheckpoint | kFlagEof)) return "eof";
  return "invalid";
}

void Output::emit(const Json& j, const std::string& text) {
  if (json_) out_json(j);
  else out_line(text);
}

void Output::problem(const Problem& p) {
  emit(problem_json(p, "problem"), "problem " + problem_text(p, p.file, false));
}

bool Output::segment(const std::string& name, const SegmentFile& s, bool active) {
  name_ = name;
  const uint8_t* r = s.raw;
  bool have = s.length >= kFixedSize;
  bool ok = s.header_complete && s.header_error == HeaderError::none;
  bool rz = std::all_of(r + 26, r + 60, [](uint8_t c) { return c == 0; });
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
  j["active"] = active;
  emit(j, fmt::format("segment {} length {} start {} created {} generation {} crc {}: {}, {}", name_,
                      s.length, text_of(j["start_seq"]), text_of(j["created_at"]),
                      text_of(j["generation"]), text_of(j["stored_crc"]),
                      ok ? "ok" : "segment_header", active ? "active" : "sealed"));
  return ok;
}

int Output::slots(const SegmentFile& s) {
  int invalid = 0;
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
    if (state == "invalid") invalid++;
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
    emit(j, fmt::format("slot {} at {}: {}{}{}: read {} first {} crc {} pending {} counter {} "
                        "synced {} seq {} crc {} pending {}",
                        i == 0 ? "A" : "B", at, state, reason.empty() ? "" : " (" + reason + ")",
                        win ? ", winner" : "", text_of(j["read_offset"]), text_of(j["first_seq"]),
                        text_of(j["read_crc"]), text_of(j["read_pending"]), text_of(j["counter"]),
                        text_of(j["synced_offset"]), text_of(j["synced_seq"]),
                        text_of(j["synced_crc"]), text_of(j["synced_pending"])));
  }
  return invalid;
}

void Output::frame(const Frame& f, const std::optional<Coverage>& covers) {
  bool data = f.kind == "data", ck = f.kind == "checkpoint" || f.kind == "eof";
  // A lost frame is a data frame in every rule; it is shown as what it is.
  const std::string kind = data && f.have_header && f.h.is_lost() ? "lost" : f.kind;
  Json j;
  j["type"] = "frame";
  j["file"] = name_;
  j["offset"] = f.offset;
  j["region"] = f.region;
  j["kind"] = kind;
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
      j["payload_encoding"] = payload_option_;
      j["payload"] = nullptr;
    }
  } else {
    j["payload_encoding"] = nullptr;
    j["payload"] = nullptr;
  }
  std::optional<Json> c;
  if (ck && f.have_header && covers) {
    const Coverage& v = *covers;
    bool known = v.walk_crc.has_value();
    Json k;
    k["type"] = "checkpoint";
    k["file"] = name_;
    k["offset"] = f.offset;
    k["kind"] = f.kind;
    k["covers_from"] = v.from;
    k["covers_to"] = v.to;
    k["records"] = v.records;
    k["first_seq"] = opt_json(v.first);
    k["last_seq"] = opt_json(v.last);
    k["stored_crc"] = hex32(f.h.word);
    k["walk_crc"] = known ? Json(hex32(*v.walk_crc)) : Json(nullptr);
    k["stored_count"] = f.h.stride;
    k["walk_count"] = known ? Json(v.walk_count) : Json(nullptr);
    k["match"] = known ? Json(f.h.word == *v.walk_crc && f.h.stride == v.walk_count) : Json(nullptr);
    c = std::move(k);
  }
  if (json_) {
    out_json(j);
    if (c) out_json(*c);
    return;
  }
  std::string t;
  if (!f.have_header) {
    t = fmt::format("{} invalid - - len - stride - gen - crc - {}", f.offset, f.status);
  } else {
    t = fmt::format("{} {} {} {} {} stride {} gen {} crc {} {}", f.offset, kind, hex16(f.h.flags),
                    join_names(flag_names(f.h.flags)),
                    ck ? "ckpt " + hex32(f.h.word) : "len " + std::to_string(f.h.word), f.h.stride,
                    f.h.generation, hex32(f.h.crc), f.status);
    if (f.computed && *f.computed != f.h.crc) t += " computed " + hex32(*f.computed);
    if (data && f.seq) t += fmt::format(" seq {}", *f.seq);
  }
  if (f.region == "before_read_offset") t += " [before read offset]";
  if (f.region == "after_eof") t += " [after eof]";
  out_line(t);
  if (c) {
    const Json& k = *c;
    std::string m = k["match"].is_null() ? "unknown" : k["match"].get<bool>() ? "match" : "mismatch";
    std::string range = k["first_seq"].is_null()
                            ? ""
                            : fmt::format(" ({}-{})", text_of(k["first_seq"]), text_of(k["last_seq"]));
    out_line(fmt::format("    covers {}-{}: {} record{}{}, crc {} walk {}, count {} walk {}: {}",
                         text_of(k["covers_from"]), text_of(k["covers_to"]), text_of(k["records"]),
                         k["records"] == 1 ? "" : "s", range, text_of(k["stored_crc"]), text_of(k["walk_crc"]),
                         text_of(k["stored_count"]), text_of(k["walk_count"]), m));
  }
  if (show_payload) {
    std::string used = j["payload_encoding"].get<std::string>();
    out_line(fmt::format("    payload {}: {}", used,
                         used == "utf8" ? j["payload"].dump(-1, ' ', false, Json::error_handler_t::replace)
                                        : j["payload"].get<std::string>()));
  }
}

void Output::resync(uint64_t length, uint64_t from, std::optional<uint64_t> to, const char* reason) {
  Json j;
  j["type"] = "resync";
  j["file"] = name_;
  j["from_offset"] = from;
  j["to_offset"] = opt_json(to);
  j["skipped_bytes"] = to ? *to - from : from < length ? length - from : 0;
  j["reason"] = to ? reason : "not_found";
  emit(j, to ? fmt::format("resync from {} to {}: {} bytes skipped ({})", from, *to, *to - from, reason)
             : fmt::format("resync from {}: no valid frame to the end of the file", from));
}

void Output::end(const SegmentFile& s, const End& e) {
  Json j;
  j["type"] = "end";
  j["file"] = name_;
  j["eof_offset"] = opt_json(e.eof_offset);
  j["size"] = e.eof_offset ? Json(*e.eof_offset + kFrameHeaderSize) : Json(nullptr);
  j["file_length"] = s.length;
  j["records"] = e.records;
  j["checkpoints"] = e.checkpoints;
  j["batches"] = e.batches;
  j["first_seq"] = opt_json(e.first);
  j["next_seq"] = opt_json(e.next);
  j["problems"] = e.problems;
  j["status"] = e.status;
  std::string range;
  if (e.records && e.first && e.next) range = fmt::format(" ({}-{})", *e.first, *e.next - 1);
  auto o = [](std::optional<uint64_t> v) { return v ? std::to_string(*v) : std::string("-"); };
  emit(j, fmt::format("end {}: {} record{}{}, next {}, eof at {}, size {}, length {}: {}", name_,
                      e.records, e.records == 1 ? "" : "s", range, o(e.next), o(e.eof_offset),
                      e.eof_offset ? std::to_string(*e.eof_offset + kFrameHeaderSize) : "-",
                      s.length, e.status));
}

namespace {

// A manifest is one short line: anything else (a link, a FIFO, a large
// file) is no manifest, read no further.
bool read_manifest(const std::string& path, std::string* text) {
  auto st = posix_fs().stat(path);
  if (!st || !st->is_regular || st->is_symlink || st->size > (64 << 10)) return false;
  auto f = posix_fs().open(path, OpenMode::read);
  if (!f) return false;
  text->resize(size_t(st->size));
  auto got = (*f)->pread(text->data(), text->size(), 0);
  if (!got) return false;
  text->resize(*got);
  return true;
}

}  // namespace

std::optional<Piece> read_piece(const std::string& path) {
  if (path.size() < 4 || path.compare(path.size() - 4, 4, ".bin") != 0) return std::nullopt;
  const std::string manifest = path.substr(0, path.size() - 4) + ".json";
  std::string text;
  if (!read_manifest(manifest, &text)) return std::nullopt;
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("offset") || !j["offset"].is_number_unsigned() ||
      !j.contains("source") || !j["source"].is_string())
    return std::nullopt;
  Piece p;
  p.offset = j["offset"].get<uint64_t>();
  if (p.offset == 0) return std::nullopt;
  p.source = j["source"].get<std::string>();
  if (j.contains("length") && j["length"].is_number_unsigned()) p.length = j["length"].get<uint64_t>();
  if (j.contains("generation") && j["generation"].is_number_unsigned() && j["generation"].get<uint64_t>() <= 0xffff)
    p.generation = uint16_t(j["generation"].get<uint64_t>());
  if (j.contains("reason") && j["reason"].is_string()) p.reason = j["reason"].get<std::string>();
  return p;
}

void Output::piece(const std::string& name, const Piece& p, uint64_t file_length) {
  name_ = name;
  Json j;
  j["type"] = "piece";
  j["file"] = name_;
  j["file_length"] = file_length;
  j["source"] = p.source;
  j["source_offset"] = p.offset;
  j["generation"] = p.generation ? Json(*p.generation) : Json(nullptr);
  j["reason"] = p.reason;
  emit(j, fmt::format("piece {} length {}: cut from {} at offset {}, generation {} ({})", name_, file_length,
                      p.source, p.offset, p.generation ? std::to_string(*p.generation) : "unknown",
                      p.reason));
}

void Output::piece_end(uint64_t frames, uint64_t failed) {
  Json j;
  j["type"] = "end";
  j["file"] = name_;
  j["frames"] = frames;
  j["failed"] = failed;
  emit(j, fmt::format("end {}: {} frames, {} failed", name_, frames, failed));
}

}  // namespace alog::cli::dump
