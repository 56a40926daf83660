// alog seek DIR|SEGMENT SEQ: shows how a record is found: the segment that
// holds it, the index entry (read offset or checkpoint) a lookup starts
// from, the headers walked from there, and the frame with its CRC status.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "cli.h"
#include "segment_file.h"

namespace alog::cli {

using namespace format;

namespace {

struct SeekOptions {
  std::string path;
  std::string seq;
  std::optional<std::string> payload;
};

struct SeekResult {
  std::string file;
  uint64_t start_seq = 0, first_seq = 0;
  std::string entry_kind;  // "read_offset" or "checkpoint"
  uint64_t entry_offset = 0, entry_seq = 0;
  uint64_t headers_walked = 0;
  uint64_t frame_offset = 0;
  FrameHeader h;
  uint32_t computed_crc = 0;
  std::string payload;
};

SeekResult locate(SegmentFile& seg, const std::string& name, uint64_t seq, const std::string& shown) {
  SeekResult r;
  r.file = name;
  r.start_seq = seg.header.start_sequence;
  r.first_seq = seg.winner().first_sequence;
  WalkState st = read_offset_state(seg);
  r.entry_kind = "read_offset";
  r.entry_offset = st.offset;
  r.entry_seq = st.seq;
  if (seq < st.seq)
    fail("out_of_bounds", shown, std::nullopt,
         fmt::format("sequence {} is before the segment's first sequence {}", seq, st.seq));
  FrameWalker w(seg, st, /*read_payloads=*/false, false);
  while (auto f = w.next()) {
    if (f->stops_walk())
      throw Failure("corrupt", shown, f->offset,
                    fmt::format("{} before sequence {} was reached (expected {}, found {})",
                                f->problem, seq, f->expected.empty() ? "-" : f->expected,
                                f->found.empty() ? "-" : f->found),
                    kExitDamaged);
    if (f->h.is_eof()) break;
    if (f->h.is_checkpoint()) {
      r.entry_kind = "checkpoint";
      r.entry_offset = f->end();
      r.entry_seq = w.state().seq;
      r.headers_walked = 0;
      continue;
    }
    r.headers_walked++;
    if (*f->seq == seq) {
      r.frame_offset = f->offset;
      r.h = f->h;
      std::string buf(kFrameHeaderSize + f->h.word, '\0');
      auto got = seg.file->pread(buf.data(), buf.size(), f->offset);
      if (!got) fail(got.status(), shown);
      r.payload = buf.substr(kFrameHeaderSize);
      r.computed_crc = frame_crc(reinterpret_cast<const uint8_t*>(buf.data()), r.payload.data(),
                                 r.payload.size());
      return r;
    }
  }
  fail("out_of_bounds", shown, std::nullopt,
       fmt::format("sequence {} is not in {} (next sequence {})", seq, name, w.state().seq));
}

int run_seek(const SeekOptions& o, const Global& g) {
  uint64_t seq = *parse_u64(o.seq);
  PayloadEncoding enc = PayloadEncoding::none;
  if (o.payload) {
    // A bare --payload prints it as text.
    std::string e = o.payload->empty() ? std::string("utf8") : *o.payload;
    if (e != "base64" && e != "hex" && e != "utf8" && e != "none")
      throw UsageError("--payload: '" + e + "' is not one of base64, hex, utf8, none");
    enc = parse_payload_encoding(e);
  }
  SeekResult r;
  if (is_regular_file(o.path)) {
    SegmentFile seg = open_segment_file(o.path);
    require_walkable(seg);
    r = locate(seg, base_name(o.path), seq, o.path);
  } else {
    auto log = open_read_or_fail(o.path);
    if (seq < log->first_sequence() || seq >= log->next_sequence())
      fail("out_of_bounds", o.path, std::nullopt,
           log->empty() ? fmt::format("sequence {} is not in the log: it is empty (next {})", seq,
                                      log->next_sequence())
                        : fmt::format("sequence {} is not in the log [{}, {}]", seq,
                                      log->first_sequence(), log->next_sequence() - 1));
    std::string holder;
    for (const auto& s : log->segments())
      if (s.first_sequence <= seq && seq < s.next_sequence) holder = s.file;
    std::string path = path_join(o.path, holder);
    SegmentFile seg = open_segment_file(path);
    require_walkable(seg);
    r = locate(seg, holder, seq, path);
  }
  bool ok = r.computed_crc == r.h.crc;
  int exit = ok ? kExitOk : kExitDamaged;
  if (g.json()) {
    Json j = summary_head(exit);
    j["path"] = o.path;
    j["seq"] = seq;
    j["file"] = r.file;
    j["segment_start_seq"] = r.start_seq;
    j["segment_first_seq"] = r.first_seq;
    j["entry_kind"] = r.entry_kind;
    j["entry_offset"] = r.entry_offset;
    j["entry_seq"] = r.entry_seq;
    j["headers_walked"] = r.headers_walked;
    j["offset"] = r.frame_offset;
    j["length"] = r.h.word;
    j["flags"] = hex16(r.h.flags);
    j["flags_text"] = flags_text(r.h.flags);
    j["stored_crc"] = hex32(r.h.crc);
    j["computed_crc"] = hex32(r.computed_crc);
    j["crc_ok"] = ok;
    put_payload(j, r.payload, enc);
    out_json(j);
    return exit;
  }
  out_line(fmt::format("sequence {}: {} (start sequence {}, first sequence {})", seq, r.file,
                       r.start_seq, r.first_seq));
  out_line(fmt::format("  index entry: {} at offset {}, sequence {}",
                       r.entry_kind == "checkpoint" ? "checkpoint" : "read offset", r.entry_offset,
                       r.entry_seq));
  out_line(fmt::format("  headers walked: {}", r.headers_walked));
  out_line(fmt::format("  frame: offset {}, length {}, flags {} ({}), crc {} {}", r.frame_offset,
                       r.h.word, hex16(r.h.flags), flags_text(r.h.flags), hex32(r.h.crc),
                       ok ? "ok" : fmt::format("MISMATCH (computed {})", hex32(r.computed_crc))));
  if (enc != PayloadEncoding::none) {
    out_write("  payload: ");
    out_write(enc == PayloadEncoding::utf8 ? r.payload : text_payload(r.payload, enc));
    out_write("\n");
  }
  return exit;
}

}  // namespace

Command add_seek(CLI::App& app, const Global& g) {
  auto o = std::make_shared<SeekOptions>();
  CLI::App* sub = app.add_subcommand("seek", "Show how one record is found");
  sub->fallthrough();
  sub->add_option("DIR", o->path, "Log directory or segment file")->required();
  sub->add_option("SEQ", o->seq, "Sequence to find")->required()->check(CLI::Validator(check_u64(), "SEQ"));
  sub->add_option("--payload", o->payload, "Also print the payload: base64, hex, utf8 or none")
      ->expected(0, 1)
      ->type_name("ENCODING");
  return {sub, false, [o, &g] { return run_seek(*o, g); }};
}

}  // namespace alog::cli
