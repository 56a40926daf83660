// alog recover DIR: verifies every segment, then cuts a torn tail (always)
// and corruption (only with --force), keeping every removed byte in
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
};

bool has_damage(const VerifyReport& r) { return !r.clean(); }

// Damage found before: torn tails or corruption, or a cut or move planned
// for them (the report may class its own lock's torn tail as in flight).
bool found_damage(const RecoverReport& r) {
  if (has_damage(r.before)) return true;
  return std::any_of(r.actions.begin(), r.actions.end(), [](const RecoverAction& a) {
    return a.action == "cut" || a.action == "move_segment";
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

Json action_json(const RecoverAction& a) {
  Json j;
  j["action"] = a.action;
  j["file"] = a.file;
  j["offset"] = opt_json(a.offset);
  j["records_dropped"] = a.records_dropped;
  j["bytes_dropped"] = a.bytes_dropped;
  j["first_seq"] = opt_json(a.first_seq);
  j["last_seq"] = opt_json(a.last_seq);
  j["saved_to"] = a.saved_to.empty() ? Json(nullptr) : Json(a.saved_to);
  j["reason"] = a.reason;
  return j;
}

std::string action_text(const RecoverAction& a, bool dry_run) {
  std::string s = fmt::format("{}{} {}", dry_run ? "would " : "", a.action, a.file);
  if (a.offset) s += fmt::format(" at {}", *a.offset);
  s += fmt::format(": {} record{}", a.records_dropped, a.records_dropped == 1 ? "" : "s");
  if (a.first_seq && a.last_seq) s += fmt::format(" ({}-{})", *a.first_seq, *a.last_seq);
  else if (a.first_seq) s += fmt::format(" ({}-)", *a.first_seq);
  s += fmt::format(", {} byte{} dropped", a.bytes_dropped, a.bytes_dropped == 1 ? "" : "s");
  if (!a.saved_to.empty()) s += fmt::format("; {} {}", dry_run ? "would save to" : "saved to", a.saved_to);
  if (!a.reason.empty()) s += " (" + a.reason + ")";
  return s;
}

Json after_json(const VerifyReport& r) {
  ProblemCounts c = count_problems(r);
  Json j;
  j["segments"] = r.segments.size();
  j["records"] = r.records;
  j["first_seq"] = opt_json(r.first_sequence);
  bool any = r.first_sequence && r.next_sequence > *r.first_sequence;
  j["last_seq"] = any ? Json(r.next_sequence - 1) : Json(nullptr);
  j["next_seq"] = r.next_sequence;
  j["torn_tail_count"] = c.torn_tail;
  j["corruption_count"] = c.corruption;
  j["warning_count"] = c.warning;
  Json probs = Json::array();
  for (const auto& p : r.problems) probs.push_back(problem_json(p));
  j["problems"] = probs;
  return j;
}

void print(const RecoverReport& r, const RecoverCmdOptions& o, const Global& g, int exit) {
  uint64_t records = 0, bytes = 0;
  for (const auto& a : r.actions) {
    records += a.records_dropped;
    bytes += a.bytes_dropped;
  }
  if (g.json()) {
    Json j = summary_head(exit);
    j["path"] = o.dir;
    j["dry_run"] = o.dry_run;
    j["force"] = o.force;
    j["refused"] = r.refused;
    j["applied"] = r.applied;
    j["records_dropped"] = records;
    j["bytes_dropped"] = bytes;
    Json probs = Json::array();
    for (const auto& p : r.before.problems) probs.push_back(problem_json(p));
    j["problems"] = probs;
    Json acts = Json::array();
    for (const auto& a : r.actions) acts.push_back(action_json(a));
    j["actions"] = acts;
    j["after"] = r.applied ? after_json(r.after) : Json(nullptr);
    out_json(j);
    return;
  }
  bool color = use_color_stdout();
  for (const auto& p : r.before.problems) out_line(problem_text(p, o.dir, color));
  for (const auto& a : r.actions) out_line(action_text(a, o.dry_run || !r.applied));
  std::string s;
  if (r.refused)
    s = "refused: corruption in synced data; nothing changed (--force cuts at the last good batch "
        "boundary before it, saving the rest in lost+found/)";
  else if (r.actions.empty())
    s = has_damage(r.before) ? "nothing recovery can do" : "nothing to do: clean";
  else if (o.dry_run)
    s = fmt::format("dry run: {} action{} planned, {} records and {} bytes would be dropped",
                    r.actions.size(), r.actions.size() == 1 ? "" : "s", records, bytes);
  else
    s = fmt::format("recovered: {} action{} applied, {} records and {} bytes dropped; {}",
                    r.actions.size(), r.actions.size() == 1 ? "" : "s", records, bytes,
                    has_damage(r.after) ? "damage remains" : "log is clean");
  out_line(s);
}

int run_recover(const RecoverCmdOptions& o, const Global& g) {
  require_log_dir(o.dir);
  if (o.dry_run) require_unlocked(o.dir);
  Progress progress(g, "recover", /*delayed=*/false);
  RecoverOptions ro;
  ro.dry_run = o.dry_run;
  ro.force = o.force;
  ro.progress = progress_fn(progress);
  auto res = recover(o.dir, ro);
  progress.clear();
  if (!res) {
    if (res.status().code() == Errc::locked)
      fail("locked", path_join(o.dir, "LOCK"), std::nullopt, "another process holds the lock");
    fail(res.status(), o.dir);
  }
  int exit = recover_exit(*res, o.dry_run);
  print(*res, o, g, exit);
  return exit;
}

}  // namespace

Command add_recover(CLI::App& app, const Global& g) {
  auto o = std::make_shared<RecoverCmdOptions>();
  CLI::App* sub = app.add_subcommand("recover", "Cut torn tails (and with --force, corruption)");
  sub->fallthrough();
  sub->add_option("DIR", o->dir, "Log directory")->required();
  sub->add_flag("-n,--dry-run", o->dry_run, "Print the plan; change nothing");
  sub->add_flag("--force", o->force, "Also cut corruption at the last good batch boundary before it");
  return {sub, false, [o, &g] { return run_recover(*o, g); }};
}

}  // namespace alog::cli
