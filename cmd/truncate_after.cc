// alog truncate-after DIR SEQ: removes every record after SEQ (later
// segments whole, then a cut after SEQ's frame). --dry-run prints the same
// report without changing anything.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "cli.h"
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

int run_truncate_after(const TruncateAfterOptions& o, const Global& g) {
  uint64_t seq = *parse_u64(o.seq);
  std::unique_ptr<Log> view = open_for_plan(o.dir, wait_ms(o.wait));
  TruncateResult r;
  r.path = o.dir;
  r.dry_run = o.dry_run;
  r.policy = "seq";
  r.seq = seq;
  plan_truncate_after(r, *view, seq);
  if (o.dry_run) warn_open_changes(g, o.dir, r.recovered, r.repairs, /*done=*/false);
  if (!o.dry_run) {
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
