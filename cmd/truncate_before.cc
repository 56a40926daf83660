// alog truncate-before DIR SEQ, or by retention policy (--keep, --keep-bytes,
// --keep-segments, --older-than): removes the oldest records, whole sealed
// segments first. --dry-run prints the same report without changing anything.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <chrono>

#include "cli.h"
#include "control_client.h"
#include "control_protocol.h"
#include "control_service.h"
#include "report.h"
#include "truncate_plan.h"
#include "alog/retention.h"

namespace alog::cli {

namespace {

struct TruncateBeforeOptions {
  std::string dir;
  std::optional<std::string> seq, keep, keep_bytes, keep_segments, older_than;
  bool dry_run = false;
  std::optional<std::string> wait;
};

uint64_t wall_clock_ms() {
  using namespace std::chrono;
  return uint64_t(duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count());
}

bool any_policy(const RetentionPolicy& p) {
  return p.keep_records || p.keep_bytes || p.keep_segments || p.older_than_ms;
}

// The policies given; --older-than DURATION becomes the absolute cutoff now - DURATION.
RetentionPolicy policy_of(const TruncateBeforeOptions& o) {
  RetentionPolicy p;
  if (o.keep) p.keep_records = parse_u64(*o.keep);
  if (o.keep_bytes) p.keep_bytes = parse_size(*o.keep_bytes);
  if (o.keep_segments) {
    p.keep_segments = parse_u64(*o.keep_segments);
    if (*p.keep_segments == 0) throw UsageError("--keep-segments must be at least 1 (the active segment stays)");
  }
  if (o.older_than) {
    uint64_t s = *parse_duration_s(*o.older_than);
    uint64_t age = s > UINT64_MAX / 1000 ? UINT64_MAX : s * 1000;
    uint64_t now = wall_clock_ms();
    p.older_than_ms = now > age ? now - age : 0;
  }
  return p;
}

// The arguments a request to the holder carries (control_protocol.h).
Json request_args(const TruncateBeforeOptions& o) {
  auto str = [](const std::optional<std::string>& v) { return v ? Json(*v) : Json(nullptr); };
  return {{"dir", o.dir},         {"seq", str(o.seq)},
          {"keep", str(o.keep)},  {"keep_bytes", str(o.keep_bytes)},
          {"keep_segments", str(o.keep_segments)}, {"older_than", str(o.older_than)},
          {"dry_run", o.dry_run}};
}

// live: the holder's own open log (a request through the control socket);
// else the command alone, which asks a live holder first.
int run_truncate_before(const TruncateBeforeOptions& o, const Global& g, Log* live = nullptr) {
  RetentionPolicy policy = policy_of(o);
  if (o.seq && any_policy(policy)) throw UsageError("give SEQ or retention options, not both");
  if (!o.seq && !any_policy(policy))
    throw UsageError("SEQ or one of --keep, --keep-bytes, --keep-segments, --older-than is required");
  if (!live) {
    require_log_dir(o.dir);
    if (auto served = ask_holder(g, o.dir, control::kOpTruncateBefore, request_args(o))) return *served;
  }
  std::unique_ptr<Log> view = live ? nullptr : open_for_plan(o.dir, wait_ms(o.wait));
  const Log& plan_log = live ? *live : *view;
  TruncateResult r;
  r.path = o.dir;
  r.dry_run = o.dry_run;
  uint64_t cut;
  if (o.seq) {
    cut = *parse_u64(*o.seq);
    r.policy = "seq";
  } else {
    RetentionPlan p = retention_plan(plan_log.segments(), policy);
    cut = p.cut;
    r.cuts = p.cuts;
    r.policy = *p.policy ? p.policy : r.cuts.front().policy;
  }
  r.seq = cut;
  plan_truncate_before(r, plan_log, cut, live != nullptr);
  if (!live) check_carry_out(r);
  if (o.dry_run) warn_open_changes(g, o.dir, r.recovered, r.repairs, /*done=*/false);
  if (!o.dry_run && live) {
    Status st = live->truncate_before(cut);
    if (!st) fail(st, o.dir);
  } else if (!o.dry_run) {
    view.reset();
    std::unique_ptr<Log> log = open_to_carry_out(g, r, wait_ms(o.wait));
    Status st = log->truncate_before(cut);
    if (st) st = log->close();
    if (!st) fail(st, o.dir);
  }
  print_truncate(r, g);
  return kExitOk;
}

}  // namespace

int serve_truncate_before(Log& log, const Json& args, const Global& g) {
  TruncateBeforeOptions o;
  o.dir = request_arg(args, "dir").value_or(log.dir());
  o.seq = request_arg(args, "seq", check_u64());
  o.keep = request_arg(args, "keep", check_u64());
  o.keep_bytes = request_arg(args, "keep_bytes", check_size());
  o.keep_segments = request_arg(args, "keep_segments", check_u64());
  o.older_than = request_arg(args, "older_than", check_duration());
  o.dry_run = request_flag(args, "dry_run");
  return run_truncate_before(o, g, &log);
}

Command add_truncate_before(CLI::App& app, const Global& g) {
  auto o = std::make_shared<TruncateBeforeOptions>();
  CLI::App* sub = app.add_subcommand("truncate-before", "Remove records below SEQ, or by retention policy");
  sub->fallthrough();
  sub->add_option("DIR", o->dir, "Log directory")->required();
  sub->add_option("SEQ", o->seq, "First sequence to keep")->check(CLI::Validator(check_u64(), "SEQ"));
  sub->add_option("--keep", o->keep, "Keep the newest N records")
      ->type_name("N")->check(CLI::Validator(check_u64(), "N"));
  sub->add_option("--keep-bytes", o->keep_bytes, "Remove the oldest segments until the rest fit in SIZE")
      ->type_name("SIZE")->check(CLI::Validator(check_size(), "SIZE"));
  sub->add_option("--keep-segments", o->keep_segments, "Keep the newest K segments")
      ->type_name("K")->check(CLI::Validator(check_u64(), "K"));
  sub->add_option("--older-than", o->older_than, "Remove segments whose records are all older than DURATION")
      ->type_name("DURATION")->check(CLI::Validator(check_duration(), "DURATION"));
  sub->add_flag("-n,--dry-run", o->dry_run, "Print the plan; change nothing");
  add_wait_option(*sub, o->wait);
  return {sub, false, [o, &g] { return run_truncate_before(*o, g); }};
}

}  // namespace alog::cli
