// alog seek --salvage DIR SEQ (man/alog-seek.1): where recover --force
// would leave record SEQ of a damaged log, changing nothing: kept from its
// frame in the damaged file, lost (and why), or in a segment salvage leaves
// alone (then the lookup there, as plain seek shows it). The damage is
// reported as cat --salvage reports it; exit 4 when there is any.
#include <fmt/core.h>

#include "alog/crc32c.h"
#include "alog/verify.h"
#include "report.h"
#include "seek.h"

namespace alog::cli {

using namespace format;

namespace {

// Verification's corruption problems: JSON objects, and one line each on
// standard error.
Json report_damage(const SeekOptions& o, const SalvageLocation& loc) {
  Json problems = Json::array();
  for (const Problem& p : loc.damage.problems) {
    if (p.classification != Classification::corruption) continue;
    problems.push_back(problem_json(p));
    err_corruption(path_join(o.path, p.file), p);
  }
  return problems;
}

// The kept record's frame in the damaged file as a lookup result.
SeekResult kept_frame(const std::string& path, const SalvageLocation& loc, uint64_t seq) {
  SeekResult r;
  r.file = loc.file;
  r.start_seq = loc.segment_start;
  r.first_seq = loc.segment_first;
  r.next_seq = loc.segment_next;
  r.start_offset = loc.offset;
  r.walk_start_seq = seq;
  r.found = true;
  r.frame_offset = loc.offset;
  auto f = posix_fs().open(path, OpenMode::read);
  if (!f) fail(f.status(), path);
  uint8_t h[kFrameHeaderSize];
  auto got = (*f)->pread(h, sizeof h, loc.offset);
  if (!got) fail(got.status(), path);
  if (*got != sizeof h) fail("io", path, loc.offset, "the file changed: short read of a kept record");
  r.h = decode_frame_header(h);
  r.payload.resize(r.h.word);
  got = (*f)->pread(r.payload.data(), r.payload.size(), loc.offset + kFrameHeaderSize);
  if (!got) fail(got.status(), path);
  if (*got != r.payload.size()) fail("io", path, loc.offset, "the file changed: short read of a kept record");
  r.computed_crc = frame_crc(h, r.payload.data(), r.payload.size());
  return r;
}

}  // namespace

int run_seek_salvaged(const SeekOptions& o, const Global& g, uint64_t seq) {
  if (is_regular_file(o.path)) throw UsageError("--salvage looks up in a log directory, not a segment file");
  require_log_dir(o.path);
  auto res = locate_salvaged(o.path, salvage_log_options(o.path), seq);
  if (!res) fail(res.status(), o.path);
  const SalvageLocation& loc = *res;
  const Json problems = report_damage(o, loc);
  const int damaged = problems.empty() ? kExitOk : kExitDamaged;
  if (!loc.refused.empty())
    throw Failure("corrupt", o.path, std::nullopt, "salvage would refuse: " + loc.refused, kExitDamaged);
  if (!loc.in_log)
    fail("out_of_bounds", o.path, std::nullopt,
         loc.first_seq && loc.next_seq > *loc.first_seq
             ? fmt::format("sequence {} is not in the salvaged log [{}, {}]", seq, *loc.first_seq, loc.next_seq - 1)
             : fmt::format("sequence {} is not in the salvaged log: it is empty (next {})", seq, loc.next_seq));
  Json salvage;
  salvage["rebuilt"] = loc.rebuilt;
  salvage["created"] = loc.created;
  salvage["lost"] = loc.lost;
  salvage["reason"] = loc.lost ? Json(loc.reason) : Json(nullptr);
  salvage["problems"] = problems;
  const std::string path = path_join(o.path, loc.file);
  if (!loc.rebuilt) {  // salvage leaves this segment as it is: the plain lookup
    SegmentFile seg = open_segment_file(path);
    require_walkable(seg);
    SeekResult r = locate(seg, loc.file, seq, path);
    for (const SegmentReport& s : loc.damage.segments)
      if (s.file == loc.file) r.next_seq = s.next_sequence;
    const int exit = print_seek(o, g, seq, r, std::nullopt, &salvage,
                                fmt::format("salvage leaves {} as it is", loc.file));
    return std::max(exit, damaged);
  }
  SeekResult r;
  if (!loc.lost) r = kept_frame(path, loc, seq);
  const bool ok = loc.lost || r.computed_crc == r.h.crc;
  const int exit = std::max(ok ? kExitOk : kExitDamaged, damaged);
  const PayloadEncoding enc = parse_payload_encoding(o.payload);
  if (g.json()) {
    Json j = summary_head(exit);
    j["path"] = o.path;
    j["seq"] = seq;
    j["file"] = loc.file;
    j["segment_start_seq"] = loc.segment_start;
    j["segment_first_seq"] = loc.segment_first;
    j["segment_next_seq"] = loc.segment_next;
    put_frame_json(j, loc.lost ? nullptr : &r);
    j["lost"] = loc.lost;
    if (loc.lost) {
      j["payload_encoding"] = o.payload;
      j["payload"] = nullptr;
    } else {
      put_payload(j, r.payload, enc);
    }
    j["salvage"] = salvage;
    out_json(j);
    return exit;
  }
  out_line(fmt::format("record {}: {}, {} by salvage (start {}, first {}, next {})", seq, loc.file,
                       loc.created ? "created" : "rebuilt", loc.segment_start, loc.segment_first,
                       loc.segment_next));
  if (loc.lost) {
    out_line(fmt::format("record {} is lost: salvage writes a lost frame ({})", seq, loc.reason));
    return exit;
  }
  out_line(frame_text(r, " of the damaged file"));
  print_payload(r.payload, enc);
  return exit;
}

}  // namespace alog::cli
