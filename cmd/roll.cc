// alog roll DIR: seals the active segment now and starts a new one, so that
// age and size retention (truncate-before) can remove recent records too.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "alog/write_plan.h"
#include "cli.h"
#include "control_client.h"
#include "control_protocol.h"
#include "control_service.h"

namespace alog::cli {

namespace {

struct RollOptions {
  std::string dir;
  std::optional<std::string> wait;
};

// live: the holder's own open log (a request through the control socket);
// else the command alone, which asks a live holder first.
int run_roll(const RollOptions& o, const Global& g, Log* live = nullptr) {
  std::unique_ptr<Log> own;
  if (!live) {
    require_log_dir(o.dir);
    if (auto served = ask_holder(g, o.dir, control::kOpRoll, {{"dir", o.dir}})) return *served;
    // The refusals a roll would meet (a new name in DIR, the segments
    // written), before it seals anything: a failing roll changes nothing.
    WritePlan plan;
    plan.write_open = true;
    plan.names = true;
    if (Status st = check_write_plan(o.dir, plan); !st) fail(st, o.dir);
    own = open_write_or_fail(g, o.dir, {}, false, wait_ms(o.wait));
  }
  Log* log = live ? live : own.get();
  const SegmentInfo before = log->segments().back();
  Status st = log->roll();
  if (!st) fail(st, o.dir);
  const SegmentInfo after = log->segments().back();
  if (!live) st = log->close();
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

int serve_roll(Log& log, const Json& args, const Global& g) {
  RollOptions o;
  o.dir = request_arg(args, "dir").value_or(log.dir());
  return run_roll(o, g, &log);
}

Command add_roll(CLI::App& app, const Global& g) {
  auto o = std::make_shared<RollOptions>();
  CLI::App* sub = app.add_subcommand("roll", "Seal the active segment now and start a new one");
  sub->fallthrough();
  sub->add_option("DIR", o->dir, "Log directory")->required();
  add_wait_option(*sub, o->wait);
  return {sub, false, [o, &g] { return run_roll(*o, g); }};
}

}  // namespace alog::cli
