// alog roll DIR: seals the active segment now and starts a new one, so that
// age and size retention (truncate-before) can remove recent records too.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "cli.h"

namespace alog::cli {

namespace {

struct RollOptions {
  std::string dir;
  std::optional<std::string> wait;
};

int run_roll(const RollOptions& o, const Global& g) {
  require_log_dir(o.dir);
  auto log = open_write_or_fail(g, o.dir, {}, false, wait_ms(o.wait));
  const SegmentInfo before = log->segments().back();
  Status st = log->roll();
  if (!st) fail(st, o.dir);
  const SegmentInfo after = log->segments().back();
  st = log->close();
  if (!st) fail(st, o.dir);
  const bool rolled = after.file != before.file;
  if (g.json()) {
    Json j = summary_head(kExitOk);
    j["path"] = o.dir;
    j["rolled"] = rolled;
    j["sealed"] = rolled ? Json(before.file) : Json(nullptr);
    j["sealed_first_seq"] = rolled ? Json(before.first_sequence) : Json(nullptr);
    j["sealed_last_seq"] = rolled ? Json(before.next_sequence - 1) : Json(nullptr);
    j["active"] = after.file;
    j["next_seq"] = after.next_sequence;
    out_json(j);
  } else if (rolled) {
    out_line(fmt::format("sealed {} (records {}-{}); new active segment {}", before.file,
                         before.first_sequence, before.next_sequence - 1, after.file));
  } else {
    out_line(fmt::format("nothing to do: the active segment {} holds no record", after.file));
  }
  return kExitOk;
}

}  // namespace

Command add_roll(CLI::App& app, const Global& g) {
  auto o = std::make_shared<RollOptions>();
  CLI::App* sub = app.add_subcommand("roll", "Seal the active segment now and start a new one");
  sub->fallthrough();
  sub->add_option("DIR", o->dir, "Log directory")->required();
  add_wait_option(*sub, o->wait);
  return {sub, false, [o, &g] { return run_roll(*o, g); }};
}

}  // namespace alog::cli
