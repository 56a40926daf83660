// alog recover DIR: verifies every segment, then cuts a torn tail (always)
// and corruption (only with --force), keeping every removed byte in
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
};

// The same for a dry run and the real run: 0 when there is nothing to do, 4
// when corruption is refused, else 1 (repaired, or would be), plus 4 when
// the real run leaves damage behind.
int recover_exit(const RecoverReport& r) {
  if (r.refused) return kExitDamaged;
  if (r.actions.empty()) return kExitOk;
  if (r.applied && !r.after.clean()) return kExitRepaired | kExitDamaged;
  return kExitRepaired;
}

bool moves_bytes(const RecoverAction& a) { return a.action == "cut" || a.action == "move_segment"; }

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
  return j;
}

std::string action_text(const RecoverAction& a, bool applied) {
  std::string s = applied ? "" : "would ";
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
  if (r.refused)
    s = "refused: corruption found; nothing changed (use --force to cut at the last good batch "
        "boundary)";
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
  int exit = recover_exit(*res);
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
