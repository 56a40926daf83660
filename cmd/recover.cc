// alog recover DIR: verifies every segment, then cuts a torn tail (always)
// and salvages corruption (only with --force: damaged records become lost
// records, no sequence moves), keeping every removed byte in
// DIR/lost+found/. --dry-run prints the plan and changes nothing.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "cli.h"
#include "report.h"

namespace alog::cli {

namespace {

std::string plural(uint64_t n, const char* one) { return fmt::format("{} {}{}", n, one, n == 1 ? "" : "s"); }

struct RecoverCmdOptions {
  std::string dir;
  bool dry_run = false;
  bool force = false;
  std::optional<std::string> first_seq, next_seq;
  std::optional<uint32_t> generation;
  bool confirm_missing = false;
  std::optional<std::string> wait;
};

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

// The same for a dry run and the real run: 0 when there is nothing to do, 4
// when corruption is refused, else 1 (repaired, or would be), plus 4 when
// the real run leaves damage behind.
int recover_exit(const RecoverReport& r) {
  if (r.refused) return kExitDamaged;
  if (r.actions.empty()) return kExitOk;
  if (r.applied && !r.after.clean()) return kExitRepaired | kExitDamaged;
  return kExitRepaired;
}

bool moves_bytes(const RecoverAction& a) { return a.action == "cut" || a.action == "salvage"; }

// Where the bytes are (or will be), relative to DIR; a rename's new name.
Json saved_to(const RecoverAction& a) { return a.saved_to.empty() ? Json(nullptr) : Json(a.saved_to); }

Json action_json(const RecoverAction& a) {
  Json j;
  j["file"] = a.file;
  j["offset"] = a.action == "cut" ? opt_json(a.offset) : Json(nullptr);
  j["action"] = a.action;
  j["records_dropped"] = a.records_dropped;
  j["bytes_dropped"] = a.bytes_dropped;
  j["first_seq"] = opt_json(a.first_seq);
  j["last_seq"] = opt_json(a.last_seq);
  j["saved_to"] = saved_to(a);
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
      s += "; original saved to " + a.saved_to;
    return s;
  }
  if (!moves_bytes(a)) {
    s += a.action + " " + a.file;
    if (a.action == "rename" && !a.saved_to.empty()) s += " to " + a.saved_to;
    return s;
  }
  s += a.action + " " + a.file;
  if (a.action == "cut" && a.offset) s += fmt::format(" at {}", *a.offset);
  s += fmt::format(": {} record{}", a.records_dropped, a.records_dropped == 1 ? "" : "s");
  if (a.records_dropped && a.first_seq && a.last_seq)
    s += *a.first_seq == *a.last_seq ? fmt::format(" ({})", *a.first_seq)
                                     : fmt::format(" ({}-{})", *a.first_seq, *a.last_seq);
  s += fmt::format(", {} byte{}, saved to {}", a.bytes_dropped, a.bytes_dropped == 1 ? "" : "s", a.saved_to);
  return s;
}

void print(const RecoverReport& r, const RecoverCmdOptions& o, const Global& g, int exit) {
  const uint64_t records = r.records_dropped, bytes = r.bytes_dropped;
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
    for (const auto& a : r.actions) acts.push_back(action_json(a));
    j["actions"] = acts;
    j["records_dropped"] = records;
    j["bytes_dropped"] = bytes;
    j["first_seq"] = opt_json(r.first_seq);
    j["last_seq"] = opt_json(r.last_seq);
    j["next_seq"] = r.next_seq;
    out_json(j);
    return;
  }
  bool color = use_color_stdout();
  for (const auto& p : r.before.problems) out_line(problem_text(p, o.dir, color));
  for (const auto& a : r.actions) out_line(action_text(a, r.applied));
  std::string log = r.first_seq ? fmt::format("{}-{}, next {}", *r.first_seq, *r.last_seq, r.next_seq)
                                : fmt::format("empty, next {}", r.next_seq);
  std::string s;
  if (r.refused && !r.refusal.empty())
    s = "refused: salvage cannot go on: " + r.refusal + "; nothing changed";
  else if (r.refused)
    s = "refused: corruption found; nothing changed (use --force to salvage: damaged records "
        "become lost records, no sequence moves)";
  else if (r.actions.empty())
    s = "nothing to do; log " + log;
  else if (r.applied)
    s = fmt::format("done: {} and {} dropped; log {}", plural(records, "record"), plural(bytes, "byte"), log);
  else
    s = fmt::format("plan: {} and {} would be dropped; log would be {}", plural(records, "record"),
                    plural(bytes, "byte"), log);
  out_line(s);
}

int run_recover(const RecoverCmdOptions& o, const Global& g) {
  stop_reads_on_signals();
  require_log_dir(o.dir);
  if (o.dry_run) require_unlocked(o.dir, wait_ms(o.wait));
  Progress progress(g, "recover", /*delayed=*/false);
  RecoverOptions ro = salvage_log_options(o.dir);
  ro.dry_run = o.dry_run;
  ro.force = o.force;
  if (o.first_seq) ro.first_seq = *parse_u64(*o.first_seq);
  if (o.next_seq) ro.next_seq = *parse_u64(*o.next_seq);
  if ((o.first_seq || o.next_seq || o.generation || o.confirm_missing) && !o.force)
    throw UsageError("--first-seq, --next-seq, --generation and --confirm-missing need --force");
  if (o.generation) ro.generation = uint16_t(*o.generation);
  ro.confirm_missing = o.confirm_missing;
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
  int exit = recover_exit(*res);
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
