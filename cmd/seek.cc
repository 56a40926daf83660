// alog seek DIR|SEGMENT SEQ: shows how a record is found (man/alog-seek.1):
// the segment that holds it, the checkpoint (or read offset) a lookup starts
// from, the headers walked from there, and the frame with its CRC status. A
// walk that stops before the record is reported as a verify problem.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>

#include "alog/verify.h"
#include "cli.h"
#include "read_damage.h"
#include "report.h"
#include "seek.h"
#include "segment_file.h"

namespace alog::cli {

using namespace format;

namespace {

// "Data+BatchEnd", the flag names joined as alog-dump-frames(1) joins them.
std::string plus_names(uint16_t flags) {
  std::string s = flags_text(flags);
  std::replace(s.begin(), s.end(), '|', '+');
  return s;
}

}  // namespace

SeekResult locate(SegmentFile& seg, const std::string& name, uint64_t seq, const std::string& shown) {
  SeekResult r;
  r.file = name;
  r.start_seq = seg.header.start_sequence;
  r.first_seq = seg.winner().first_sequence;
  r.start_offset = seg.winner().read_offset;
  r.walk_start_seq = r.first_seq;
  if (seq < r.first_seq)
    fail("out_of_bounds", shown, std::nullopt,
         fmt::format("sequence {} is before the segment's first sequence {}", seq, r.first_seq));
  inspect::FrameWalker w(seg, /*read_payloads=*/false);
  while (true) {
    inspect::Frame f = next_frame(w, seg);
    if (f.stops()) {
      if (f.problem != "truncated_header") r.headers_walked++;
      r.stop = f;
      return r;
    }
    if (f.eof()) break;
    if (f.header.is_checkpoint()) {
      // The index entry: the last checkpoint after which the next data
      // frame's sequence is at most SEQ.
      if (w.sequence() <= seq) {
        r.checkpoint_offset = f.offset;
        r.checkpoint_seq = w.sequence();
        r.start_offset = f.end();
        r.walk_start_seq = w.sequence();
        r.headers_walked = 0;
      } else {
        r.headers_walked++;
      }
      continue;
    }
    r.headers_walked++;
    if (f.sequence == seq) {
      r.found = true;
      r.frame_offset = f.offset;
      r.h = f.header;
      std::string buf(kFrameHeaderSize + f.header.word, '\0');
      auto got = seg.file->pread(buf.data(), buf.size(), f.offset);
      if (!got) fail(got.status(), shown);
      r.payload = buf.substr(kFrameHeaderSize);
      r.computed_crc = frame_crc(reinterpret_cast<const uint8_t*>(buf.data()), r.payload.data(),
                                 r.payload.size());
      return r;
    }
    check_interrupted();
  }
  fail("out_of_bounds", shown, std::nullopt,
       fmt::format("sequence {} is not in {} (next sequence {})", seq, name, w.sequence()));
}

namespace {

// The segment's next sequence from a walk to its EOF (a segment file given
// alone); nullopt when the walk stops first.
std::optional<uint64_t> walk_to_eof(SegmentFile& seg) {
  inspect::FrameWalker w(seg, /*read_payloads=*/false);
  while (true) {
    inspect::Frame f = next_frame(w, seg);
    if (f.stops()) return std::nullopt;
    if (f.eof()) return w.sequence();
    check_interrupted();
  }
}

// The stop as verify reports it (headers only, the way seek walks); built
// from the frame when verify places it elsewhere.
Problem stop_problem(const std::string& verify_path, const SeekResult& r, bool active,
                     const SegmentFile& seg) {
  VerifyOptions vo;
  vo.headers_only = true;
  if (auto rep = alog::verify(verify_path, vo)) {
    for (const Problem& p : rep->problems)
      if (p.file == r.file && p.offset == r.stop.offset && p.kind == r.stop.problem) return p;
  }
  Problem p;
  p.file = r.file;
  p.offset = r.stop.offset;
  p.kind = r.stop.problem;
  p.expected = r.stop.expected;
  p.found = r.stop.found;
  bool torn = active && r.stop.offset >= seg.winner().synced_offset;
  p.classification = torn ? Classification::torn_tail : Classification::corruption;
  p.message = r.stop.message;
  return p;
}

int run_seek(const SeekOptions& o, const Global& g) {
  stop_reads_on_signals();
  uint64_t seq = *parse_u64(o.seq);
  if (o.salvage) return run_seek_salvaged(o, g, seq);
  SeekResult r;
  std::optional<Problem> problem;
  if (is_regular_file(o.path)) {
    SegmentFile seg = open_segment_file(o.path);
    require_walkable(seg);
    r = locate(seg, base_name(o.path), seq, o.path);
    r.next_seq = walk_to_eof(seg);
    if (!r.found) problem = stop_problem(o.path, r, true, seg);
  } else {
    auto log = open_read_or_fail(o.path);
    if (auto exit = report_read_damage(g, *log, o.path, seq)) return *exit;
    if (seq < log->first_sequence() || seq >= log->next_sequence())
      fail("out_of_bounds", o.path, std::nullopt,
           log->empty() ? fmt::format("sequence {} is not in the log: it is empty (next {})", seq,
                                      log->next_sequence())
                        : fmt::format("sequence {} is not in the log [{}, {}]", seq,
                                      log->first_sequence(), log->next_sequence() - 1));
    std::string holder;
    uint64_t next = 0;
    bool last = false;
    const auto& segs = log->segments();
    for (size_t i = 0; i < segs.size(); i++)
      if (segs[i].first_sequence <= seq && seq < segs[i].next_sequence) {
        holder = segs[i].file;
        next = segs[i].next_sequence;
        last = i + 1 == segs.size();
      }
    std::string path = path_join(o.path, holder);
    SegmentFile seg = open_segment_file(path);
    require_walkable(seg);
    r = locate(seg, holder, seq, path);
    r.next_seq = next;
    if (!r.found) {
      problem = stop_problem(o.path, r, last, seg);
    } else if (const Status& d = log->damage(); !d.is_ok() && base_name(d.path()) == holder) {
      // The segment holding the record is damaged where the lookup does not
      // look (a synced offset past the end of its file): verify's problem.
      problem = problem_met(o.path, d.path(), d.offset(), Classification::corruption);
    }
  }
  return print_seek(o, g, seq, r, problem);
}

}  // namespace

int print_seek(const SeekOptions& o, const Global& g, uint64_t seq, const SeekResult& r,
               const std::optional<Problem>& problem, const Json* salvage, const std::string& note) {
  PayloadEncoding enc = parse_payload_encoding(o.payload);
  bool ok = r.found && r.computed_crc == r.h.crc && !problem;
  int exit = ok ? kExitOk : kExitDamaged;
  if (g.json()) {
    Json j = summary_head(exit);
    j["path"] = o.path;
    j["seq"] = seq;
    j["file"] = r.file;
    j["segment_start_seq"] = r.start_seq;
    j["segment_first_seq"] = r.first_seq;
    j["segment_next_seq"] = opt_json(r.next_seq);
    if (r.checkpoint_offset) {
      Json c;
      c["offset"] = *r.checkpoint_offset;
      c["seq"] = *r.checkpoint_seq;
      j["checkpoint"] = c;
    } else {
      j["checkpoint"] = nullptr;
    }
    j["start_offset"] = r.start_offset;
    j["start_seq"] = r.walk_start_seq;
    j["headers_walked"] = r.headers_walked;
    put_frame_json(j, r.found ? &r : nullptr);
    if (r.found) {
      j["lost"] = r.h.is_lost();
      if (r.h.is_lost()) {
        j["payload_encoding"] = o.payload;
        j["payload"] = nullptr;
      } else {
        put_payload(j, r.payload, enc);
      }
    } else {
      j["lost"] = nullptr;
      j["payload_encoding"] = o.payload;
      j["payload"] = nullptr;
    }
    j["problem"] = problem ? problem_json(*problem) : Json(nullptr);
    if (salvage) j["salvage"] = *salvage;
    out_json(j);
    return exit;
  }
  out_line(fmt::format("record {}: {} (start {}, first {}, next {})", seq, r.file, r.start_seq,
                       r.first_seq, r.next_seq ? std::to_string(*r.next_seq) : std::string("-")));
  std::string walked = fmt::format("walked {} header{} from {} (seq {})", r.headers_walked, r.headers_walked == 1 ? "" : "s",
                                   r.start_offset, r.walk_start_seq);
  if (r.checkpoint_offset)
    out_line(fmt::format("checkpoint at {} (seq {}); {}", *r.checkpoint_offset, *r.checkpoint_seq,
                         walked));
  else
    out_line("no checkpoint before it; " + walked);
  if (problem && !r.found) {
    out_line(problem_text(*problem, o.path, use_color_stdout()));
    return exit;
  }
  out_line(frame_text(r, ""));
  if (r.h.is_lost()) {
    out_line(fmt::format("record {} is lost: a salvage kept its sequence, not its bytes", seq));
  } else {
    print_payload(r.payload, enc);
  }
  if (!note.empty()) out_line(note);
  if (problem) out_line(problem_text(*problem, o.path, use_color_stdout()));
  return exit;
}

void put_frame_json(Json& j, const SeekResult* r) {
  j["frame_offset"] = r ? Json(r->frame_offset) : Json(nullptr);
  j["length"] = r ? Json(r->h.word) : Json(nullptr);
  j["flags"] = r ? Json(hex16(r->h.flags)) : Json(nullptr);
  j["stored_crc"] = r ? Json(hex32(r->h.crc)) : Json(nullptr);
  j["computed_crc"] = r ? Json(hex32(r->computed_crc)) : Json(nullptr);
  j["crc_status"] = r ? Json(r->computed_crc == r->h.crc ? "ok" : "mismatch") : Json(nullptr);
}

std::string frame_text(const SeekResult& r, const std::string& where) {
  const bool ok = r.computed_crc == r.h.crc;
  return fmt::format("frame at {}{}: length {}, flags {} {}, crc {}", r.frame_offset, where, r.h.word,
                     hex16(r.h.flags), plus_names(r.h.flags),
                     ok ? hex32(r.h.crc) + " ok"
                        : fmt::format("{} stored, {} computed: mismatch", hex32(r.h.crc),
                                      hex32(r.computed_crc)));
}

void print_payload(const std::string& payload, PayloadEncoding enc) {
  if (enc == PayloadEncoding::none) return;
  Json p;
  put_payload(p, payload, enc);
  std::string used = p["payload_encoding"].get<std::string>();
  // utf8 in text mode: a JSON string literal (base64 when not UTF-8).
  std::string text = used == "utf8" ? p["payload"].dump() : p["payload"].get<std::string>();
  out_line(fmt::format("payload {}: {}", used, text));
}

Command add_seek(CLI::App& app, const Global& g) {
  auto o = std::make_shared<SeekOptions>();
  CLI::App* sub = app.add_subcommand("seek", "Show how one record is found");
  sub->fallthrough();
  sub->add_option("DIR", o->path, "Log directory or segment file")->required();
  sub->add_option("SEQ", o->seq, "Sequence to find")->required()->check(CLI::Validator(check_u64(), "SEQ"));
  sub->add_option("--payload", o->payload, "Also print the payload: base64, hex, utf8 or none")
      ->check(CLI::IsMember({"base64", "hex", "utf8", "none"}))
      ->type_name("ENCODING");
  sub->add_flag("--salvage", o->salvage,
                "On a damaged log: where recover --force would leave the record (nothing is written)");
  return {sub, false, [o, &g] { return run_seek(*o, g); }};
}

}  // namespace alog::cli
