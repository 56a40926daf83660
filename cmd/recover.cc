// alog recover DIR: verifies every segment, then cuts a torn tail (always)
// and salvages corruption (only with --force: damaged records become lost
// records, no sequence moves), keeping every removed byte in
// DIR/lost+found/. --dry-run prints the plan and changes nothing.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>

#include "cli.h"
#include "report.h"

namespace alog::cli {

namespace {

struct RecoverCmdOptions {
  std::string dir;
  bool dry_run = false;
  bool force = false;
  std::optional<std::string> first_seq, next_seq;
  std::optional<uint32_t> generation;
  bool confirm_missing = false;
  std::optional<std::string> wait;
};

bool has_damage(const VerifyReport& r) { return !r.clean(); }

bool is_salvage(const RecoverAction& a) { return a.action == "salvage" || a.action == "create_lost"; }

Json ranges_json(const std::vector<SeqRange>& v, bool reasons) {
  Json arr = Json::array();
  for (const SeqRange& r : v) {
    Json j;
    j["first_seq"] = r.first;
    j["last_seq"] = r.last;
    if (reasons) j["reason"] = r.reason;
    arr.push_back(j);
  }
  return arr;
}

std::string ranges_text(const std::vector<SeqRange>& v, bool reasons) {
  std::string s;
  for (const SeqRange& r : v) {
    if (!s.empty()) s += ", ";
    s += r.first == r.last ? fmt::format("{}", r.first) : fmt::format("{}-{}", r.first, r.last);
    if (reasons) s += " (" + r.reason + ")";
  }
  return s.empty() ? "none" : s;
}

// Damage found before: torn tails or corruption, or a cut or move planned
// for them (the report may class its own lock's torn tail as in flight).
bool found_damage(const RecoverReport& r) {
  if (has_damage(r.before)) return true;
  return std::any_of(r.actions.begin(), r.actions.end(), [](const RecoverAction& a) {
    return a.action == "cut" || is_salvage(a);
  });
}

int recover_exit(const RecoverReport& r, bool dry_run) {
  bool damaged = found_damage(r);
  if (dry_run) return r.actions.empty() && !damaged ? kExitOk : kExitDamaged;
  if (r.refused) return kExitDamaged;
  if (!damaged) return kExitOk;
  if (!r.applied) return kExitDamaged;
  return has_damage(r.after) ? (kExitRepaired | kExitDamaged) : kExitRepaired;
}

bool moves_bytes(const RecoverAction& a) { return a.action == "cut" || a.action == "salvage"; }

// Where the bytes are (or will be), relative to DIR.
Json saved_to(const RecoverAction& a, bool applied) {
  if (moves_bytes(a)) return applied && !a.saved_to.empty() ? a.saved_to : "lost+found/";
  if (a.action == "rename") return a.saved_to.empty() ? Json(nullptr) : Json(a.saved_to);
  return nullptr;
}

Json action_json(const RecoverAction& a, bool applied) {
  Json j;
  j["file"] = a.file;
  j["offset"] = a.action == "cut" ? opt_json(a.offset) : Json(nullptr);
  j["action"] = a.action;
  j["records_dropped"] = a.records_dropped;
  j["bytes_dropped"] = a.bytes_dropped;
  j["first_seq"] = opt_json(a.first_seq);
  j["last_seq"] = opt_json(a.last_seq);
  j["saved_to"] = saved_to(a, applied);
  j["reason"] = a.reason;
  j["kept_ranges"] = is_salvage(a) ? ranges_json(a.kept, false) : Json(nullptr);
  j["lost_ranges"] = is_salvage(a) ? ranges_json(a.lost, true) : Json(nullptr);
  return j;
}

std::string action_text(const RecoverAction& a, bool applied) {
  std::string s = applied ? "" : "would ";
  if (is_salvage(a)) {
    s += fmt::format("{} {}: keep {}; lost {}", a.action == "salvage" ? "salvage" : "create", a.file,
                     ranges_text(a.kept, false), ranges_text(a.lost, true));
    if (a.action == "salvage")
      s += fmt::format("; original saved to {}", saved_to(a, applied).get<std::string>());
    return s;
  }
  if (!moves_bytes(a)) {
    s += a.action + " " + a.file;
    Json to = saved_to(a, applied);
    if (a.action == "rename" && to.is_string()) s += " to " + to.get<std::string>();
    return s;
  }
  s += a.action + " " + a.file;
  if (a.action == "cut" && a.offset) s += fmt::format(" at {}", *a.offset);
  s += fmt::format(": {} records", a.records_dropped);
  if (a.records_dropped && a.first_seq && a.last_seq)
    s += *a.first_seq == *a.last_seq ? fmt::format(" ({})", *a.first_seq)
                                     : fmt::format(" ({}-{})", *a.first_seq, *a.last_seq);
  s += fmt::format(", {} bytes, saved to {}", a.bytes_dropped, saved_to(a, applied).get<std::string>());
  return s;
}

// The log's range after the run, or as it would be after the plan.
struct Range {
  std::optional<uint64_t> first, last;
  uint64_t next = 0;
};

Range range_after(const RecoverReport& r) {
  Range g;
  if (r.applied) {
    g.next = r.after.next_sequence;
    if (r.after.first_sequence && r.after.next_sequence > *r.after.first_sequence) {
      g.first = r.after.first_sequence;
      g.last = r.after.next_sequence - 1;
    }
    return g;
  }
  g.next = r.before.next_sequence;
  if (!r.refused && r.planned_next) g.next = std::max(g.next, *r.planned_next);
  if (!r.refused)
    for (const auto& a : r.actions)
      if (a.action == "cut" && a.first_seq) g.next = std::min(g.next, *a.first_seq);
  if (r.before.first_sequence && g.next > *r.before.first_sequence) {
    g.first = r.before.first_sequence;
    g.last = g.next - 1;
  }
  return g;
}

void print(const RecoverReport& r, const RecoverCmdOptions& o, const Global& g, int exit) {
  uint64_t records = 0, bytes = 0;
  for (const auto& a : r.actions) {
    records += a.records_dropped;
    bytes += a.bytes_dropped;
  }
  Range after = range_after(r);
  if (g.json()) {
    Json j = summary_head(exit);
    j["path"] = o.dir;
    j["dry_run"] = o.dry_run;
    j["force"] = o.force;
    j["refused"] = r.refused;
    j["refusal"] = r.refusal.empty() ? Json(nullptr) : Json(r.refusal);
    j["applied"] = r.applied;
    Json probs = Json::array();
    for (const auto& p : r.before.problems) probs.push_back(problem_json(p));
    j["problems"] = probs;
    Json acts = Json::array();
    for (const auto& a : r.actions) acts.push_back(action_json(a, r.applied));
    j["actions"] = acts;
    j["records_dropped"] = records;
    j["bytes_dropped"] = bytes;
    j["first_seq"] = opt_json(after.first);
    j["last_seq"] = opt_json(after.last);
    j["next_seq"] = after.next;
    out_json(j);
    return;
  }
  bool color = use_color_stdout();
  for (const auto& p : r.before.problems) out_line(problem_text(p, o.dir, color));
  for (const auto& a : r.actions) out_line(action_text(a, r.applied));
  std::string log = after.first ? fmt::format("{}-{}, next {}", *after.first, *after.last, after.next)
                                : fmt::format("empty, next {}", after.next);
  std::string s;
  if (r.refused && !r.refusal.empty())
    s = "refused: salvage cannot go on: " + r.refusal + "; nothing changed";
  else if (r.refused)
    s = "refused: corruption found; nothing changed (use --force to salvage: damaged records "
        "become lost records, no sequence moves)";
  else if (r.actions.empty())
    s = "nothing to do; log " + log;
  else if (r.applied)
    s = fmt::format("done: {} records and {} bytes dropped; log {}", records, bytes, log);
  else
    s = fmt::format("plan: {} records and {} bytes would be dropped; log would be {}", records,
                    bytes, log);
  out_line(s);
}

int run_recover(const RecoverCmdOptions& o, const Global& g) {
  require_log_dir(o.dir);
  if (o.dry_run) require_unlocked(o.dir, wait_ms(o.wait));
  Progress progress(g, "recover", /*delayed=*/false);
  RecoverOptions ro;
  ro.dry_run = o.dry_run;
  ro.force = o.force;
  if (o.first_seq) ro.first_seq = *parse_u64(*o.first_seq);
  if (o.next_seq) ro.next_seq = *parse_u64(*o.next_seq);
  if ((o.first_seq || o.next_seq || o.generation || o.confirm_missing) && !o.force)
    throw UsageError("--first-seq, --next-seq, --generation and --confirm-missing need --force");
  if (o.generation) ro.generation = uint16_t(*o.generation);
  ro.confirm_missing = o.confirm_missing;
  ro.checkpoint_stride = load_options(o.dir, CreateOptions{}).checkpoint_stride;
  ro.progress = progress_fn(progress);
  const uint64_t start = now_ms();
  int nap = 5;
  auto res = recover(o.dir, ro);
  while (!res && res.status().code() == Errc::locked && lock_wait_retry(wait_ms(o.wait), start, nap))
    res = recover(o.dir, ro);
  progress.clear();
  if (!res) {
    if (res.status().code() == Errc::locked) fail_locked(o.dir, wait_ms(o.wait));
    fail(res.status(), o.dir);
  }
  int exit = recover_exit(*res, o.dry_run);
  print(*res, o, g, exit);
  return exit;
}

}  // namespace

Command add_recover(CLI::App& app, const Global& g) {
  auto o = std::make_shared<RecoverCmdOptions>();
  CLI::App* sub = app.add_subcommand("recover", "Cut torn tails (and with --force, salvage corruption)");
  sub->fallthrough();
  sub->add_option("DIR", o->dir, "Log directory")->required();
  sub->add_flag("-n,--dry-run", o->dry_run, "Print the plan; change nothing");
  add_wait_option(*sub, o->wait);
  sub->add_flag("--force", o->force,
                "Also salvage corruption: keep every proven record at its sequence, lost frames for the rest");
  sub->add_option("--first-seq", o->first_seq, "Salvage: the first segment's first sequence to keep")
      ->type_name("SEQ")->check(CLI::Validator(check_u64(), "SEQ"));
  sub->add_option("--next-seq", o->next_seq, "Salvage: the active segment's next sequence")
      ->type_name("SEQ")->check(CLI::Validator(check_u64(), "SEQ"));
  sub->add_option("--generation", o->generation, "Salvage: the generation of a segment whose header is unreadable")
      ->type_name("G")->check(CLI::Range(1, 65535));
  sub->add_flag("--confirm-missing", o->confirm_missing,
                "Salvage: sequences missing next to a segment whose start came from its name are lost");
  return {sub, false, [o, &g] { return run_recover(*o, g); }};
}

}  // namespace alog::cli
