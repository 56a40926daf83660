// alog truncate-after DIR SEQ: removes every record after SEQ (later
// segments whole, then a cut after SEQ's frame). --dry-run prints the same
// report without changing anything.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "cli.h"
#include "control_client.h"
#include "control_protocol.h"
#include "control_service.h"
#include "report.h"
#include "truncate_plan.h"

namespace alog::cli {

namespace {

struct TruncateAfterOptions {
  std::string dir;
  std::string seq;
  bool dry_run = false;
  std::optional<std::string> wait;
};

// live: the holder's own open log (a request through the control socket);
// else the command alone, which asks a live holder first.
int run_truncate_after(const TruncateAfterOptions& o, const Global& g, Log* live = nullptr) {
  uint64_t seq = *parse_u64(o.seq);
  if (!live) {
    require_log_dir(o.dir);
    Json args = {{"dir", o.dir}, {"seq", o.seq}, {"dry_run", o.dry_run}};
    if (auto served = ask_holder(g, o.dir, control::kOpTruncateAfter, args)) return *served;
  }
  std::unique_ptr<Log> view = live ? nullptr : open_for_plan(o.dir, wait_ms(o.wait));
  const Log& plan_log = live ? *live : *view;
  TruncateResult r;
  r.path = o.dir;
  r.dry_run = o.dry_run;
  r.policy = "seq";
  r.seq = seq;
  plan_truncate_after(r, plan_log, seq, live != nullptr);
  if (!live) check_carry_out(r);
  if (o.dry_run) warn_open_changes(g, o.dir, r.recovered, r.repairs, /*done=*/false);
  if (!o.dry_run && live) {
    Status st = r.records_removed > 0 ? live->truncate_after(seq) : Status();
    if (!st) fail(st, o.dir);
  } else if (!o.dry_run) {
    const bool removes = r.records_removed > 0;
    view.reset();
    std::unique_ptr<Log> log = open_to_carry_out(g, r, wait_ms(o.wait));
    Status st = removes ? log->truncate_after(seq) : Status();
    if (st) st = log->close();
    if (!st) fail(st, o.dir);
  }
  print_truncate(r, g);
  return kExitOk;
}

}  // namespace

int serve_truncate_after(Log& log, const Json& args, const Global& g) {
  TruncateAfterOptions o;
  o.dir = request_arg(args, "dir").value_or(log.dir());
  auto seq = request_arg(args, "seq", check_u64());
  if (!seq) throw UsageError("request argument \"seq\" is required");
  o.seq = *seq;
  o.dry_run = request_flag(args, "dry_run");
  return run_truncate_after(o, g, &log);
}

Command add_truncate_after(CLI::App& app, const Global& g) {
  auto o = std::make_shared<TruncateAfterOptions>();
  CLI::App* sub = app.add_subcommand("truncate-after", "Remove records above SEQ");
  sub->fallthrough();
  sub->add_option("DIR", o->dir, "Log directory")->required();
  sub->add_option("SEQ", o->seq, "Last sequence to keep")->required()->check(CLI::Validator(check_u64(), "SEQ"));
  sub->add_flag("-n,--dry-run", o->dry_run, "Print the plan; change nothing");
  add_wait_option(*sub, o->wait);
  return {sub, false, [o, &g] { return run_truncate_after(*o, g); }};
}

}  // namespace alog::cli
