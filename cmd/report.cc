// Rendering of verify and truncate reports (see report.h).
#include "report.h"

#include <fmt/core.h>

#include <algorithm>

namespace alog::cli {

void drop_in_flight(VerifyReport& r) {
  if (!r.writer_active) return;
  std::erase_if(r.problems, [](const Problem& p) { return p.classification == Classification::torn_tail; });
}

ProblemCounts count_problems(const VerifyReport& r) {
  ProblemCounts c;
  for (const auto& p : r.problems) {
    if (p.classification == Classification::torn_tail) c.torn_tail++;
    else if (p.classification == Classification::corruption) c.corruption++;
    else c.warning++;
  }
  return c;
}

std::string problem_text(const Problem& p, const std::string& path, bool color) {
  std::string s = p.file.empty() ? path : p.file;
  if (p.offset) s += fmt::format(":{}", *p.offset);
  const char* cls = classification_name(p.classification);
  const char* paint_code = p.classification == Classification::corruption ? "1;31"
                           : p.classification == Classification::torn_tail ? "1;33" : "36";
  s += fmt::format(": {}: {}: {}", paint(color, paint_code, cls), p.kind, p.message);
  if (!p.expected.empty() && !p.found.empty())
    s += fmt::format(" (expected {}, found {})", p.expected, p.found);
  // No bracket for an empty range either (first > last): no record is affected.
  if (p.first_seq && (!p.last_seq || *p.last_seq >= *p.first_seq)) {
    if (p.last_seq && *p.last_seq == *p.first_seq) s += fmt::format(" [seq {}]", *p.first_seq);
    else if (p.last_seq) s += fmt::format(" [seq {}-{}]", *p.first_seq, *p.last_seq);
    else s += fmt::format(" [seq {}-]", *p.first_seq);
  }
  if (p.cut_at) s += fmt::format(" [cut at {}]", *p.cut_at);
  return s;
}

Json problem_json(const Problem& p, const char* type) {
  auto str_or_null = [](const std::string& v) { return v.empty() ? Json(nullptr) : Json(v); };
  Json j;
  if (type) j["type"] = type;
  j["file"] = p.file;
  j["offset"] = opt_json(p.offset);
  j["cut_at"] = opt_json(p.cut_at);
  j["first_seq"] = opt_json(p.first_seq);
  j["last_seq"] = opt_json(p.last_seq);
  j["kind"] = p.kind;
  j["classification"] = classification_name(p.classification);
  j["expected"] = str_or_null(p.expected);
  j["found"] = str_or_null(p.found);
  j["message"] = p.message;
  return j;
}

namespace {
std::string plural(uint64_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}
}  // namespace

std::string verify_summary(const VerifyReport& r) {
  std::string s = "verified " + plural(r.segments.size(), "segment", "segments") + ", " +
                  plural(r.records, "record", "records");
  if (r.lost_records) s += ", " + plural(r.lost_records, "lost record", "lost records");
  if ((r.records || r.lost_records) && r.first_sequence && r.next_sequence > *r.first_sequence)
    s += fmt::format(" ({}-{})", *r.first_sequence, r.next_sequence - 1);
  s += fmt::format(", next {}", r.next_sequence);
  if (r.writer_active) s += ", writer active";
  if (r.problems.empty()) return s + ": clean";
  ProblemCounts c = count_problems(r);
  return s + fmt::format(": {} ({} torn_tail, {} corruption, {} warning)",
                         plural(r.problems.size(), "problem", "problems"), c.torn_tail, c.corruption,
                         c.warning);
}

int verify_exit(const VerifyReport& r) { return r.clean() ? kExitOk : kExitDamaged; }

std::function<void(uint64_t, uint64_t)> progress_fn(Progress& p) {
  return [&p](uint64_t done, uint64_t total) { p.update(done, total); };
}

void print_truncate(const TruncateResult& r, const Global& g) {
  if (g.json()) {
    Json j = summary_head(kExitOk);
    j["path"] = r.path;
    j["dry_run"] = r.dry_run;
    j["seq"] = r.seq;
    j["policy"] = r.policy;
    Json cuts = Json::object();
    for (const RetentionCut& c : r.cuts) cuts[c.policy] = c.cut;
    j["cuts"] = cuts;
    j["segments_removed"] = r.removed_files.size();
    j["records_removed"] = r.records_removed;
    j["bytes_freed"] = r.bytes_freed;
    j["first_seq"] = opt_json(r.first_seq);
    j["last_seq"] = opt_json(r.last_seq);
    j["next_seq"] = r.next_seq;
    j["recovered"] = tail_cut_json(r.recovered);
    j["open_repairs"] = open_repairs_json(r.repairs);
    out_json(j);
    return;
  }
  std::string log = r.last_seq ? fmt::format("{}-{}, next {}", *r.first_seq, *r.last_seq, r.next_seq)
                               : fmt::format("empty, next {}", r.next_seq);
  if (r.records_removed == 0 && r.removed_files.empty()) {
    if (!r.recovered && r.repairs.empty()) out_line("nothing to do; log " + log);
    else out_line(fmt::format("nothing to remove; log {} {}", r.dry_run ? "would be" : "now", log));
    return;
  }
  std::string range;
  if (r.records_removed == 1) range = fmt::format(" ({})", r.removed_first);
  else if (r.records_removed > 1)
    range = fmt::format(" ({}-{})", r.removed_first, r.removed_first + r.records_removed - 1);
  out_line(fmt::format("{} {}{}, {}, {} {}; log {} {}", r.dry_run ? "would remove" : "removed",
                       plural(r.records_removed, "record", "records"), range,
                       plural(r.removed_files.size(), "segment", "segments"),
                       plural(r.bytes_freed, "byte", "bytes"),
                       r.dry_run ? "would be freed" : "freed", r.dry_run ? "would be" : "now", log));
}

Json tail_cut_json(const std::optional<TailCut>& c) {
  if (!c) return nullptr;
  Json j;
  j["file"] = c->file;
  j["offset"] = c->offset;
  j["bytes"] = c->bytes;
  j["records"] = c->records;
  j["saved_to"] = c->saved_to.empty() ? Json(nullptr) : Json(c->saved_to);
  j["reason"] = c->reason;
  return j;
}

Json open_repairs_json(const std::vector<OpenRepair>& v) {
  Json a = Json::array();
  for (const OpenRepair& r : v) {
    Json j;
    j["action"] = r.action;
    j["file"] = r.file;
    j["to"] = r.to.empty() ? Json(nullptr) : Json(r.to);
    j["reason"] = r.reason;
    a.push_back(j);
  }
  return a;
}

void warn_open_changes(const Global& g, const std::string& dir, const std::optional<TailCut>& cut,
                       const std::vector<OpenRepair>& repairs, bool done) {
  for (const OpenRepair& r : repairs) {
    const char* verb = r.action == "remove" ? (done ? "opening removed" : "opening for writing would remove")
                                            : (done ? "opening renamed" : "opening for writing would rename");
    warn(g, path_join(dir, r.file), std::nullopt,
         r.to.empty() ? fmt::format("{} it: {}", verb, r.reason)
                      : fmt::format("{} it to {}: {}", verb, r.to, r.reason));
  }
  if (!cut) return;
  warn(g, path_join(dir, cut->file), cut->offset,
       fmt::format("{} {}: {} and {} {} {}", done ? "opening cut" : "opening for writing would cut", cut->reason,
                   plural(cut->records, "record", "records"), plural(cut->bytes, "byte", "bytes"),
                   done ? "saved to" : "to be saved in", cut->saved_to));
}

}  // namespace alog::cli
