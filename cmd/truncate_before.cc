// alog truncate-before DIR SEQ, or by retention policy (--keep, --keep-bytes,
// --keep-segments, --older-than): removes the oldest records, whole sealed
// segments first. --dry-run prints the same report without changing anything.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <chrono>

#include "cli.h"
#include "report.h"
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

// The report of a cut at `cut` on segments `segs`, before it is made.
void plan(TruncateResult& r, const std::vector<SegmentInfo>& segs, uint64_t cut) {
  uint64_t first = segs.front().first_sequence, next = segs.back().next_sequence;
  for (const auto& s : segs) {
    if (s.active || s.next_sequence > cut) break;
    r.removed_files.push_back(s.file);
    r.bytes_freed += s.file_length;
  }
  r.records_removed = cut > first ? cut - first : 0;
  r.removed_first = first;
  uint64_t new_first = std::max(cut, first);
  r.first_seq = new_first;
  r.last_seq = next > new_first ? std::optional<uint64_t>(next - 1) : std::nullopt;
  r.next_seq = next;
}

int run_truncate_before(const TruncateBeforeOptions& o, const Global& g) {
  RetentionPolicy policy = policy_of(o);
  if (o.seq && any_policy(policy)) throw UsageError("give SEQ or retention options, not both");
  if (!o.seq && !any_policy(policy))
    throw UsageError("SEQ or one of --keep, --keep-bytes, --keep-segments, --older-than is required");
  std::unique_ptr<Log> log = open_for_truncate(g, o.dir, o.dry_run, wait_ms(o.wait));
  auto segs = log->segments();
  if (segs.empty()) fail("not_a_log", o.dir, std::nullopt, "no readable segments");

  TruncateResult r;
  r.path = o.dir;
  r.dry_run = o.dry_run;
  uint64_t cut;
  if (o.seq) {
    cut = *parse_u64(*o.seq);
    r.policy = "seq";
  } else {
    RetentionPlan p = retention_plan(segs, policy);
    cut = p.cut;
    r.cuts = p.cuts;
    r.policy = *p.policy ? p.policy : r.cuts.front().policy;
  }
  r.seq = cut;
  if (cut > log->next_sequence())
    fail("out_of_bounds", o.dir, std::nullopt,
         fmt::format("sequence {} is beyond the next sequence {}", cut, log->next_sequence()));
  plan(r, segs, cut);
  if (!o.dry_run && cut > log->first_sequence()) {
    const uint64_t disk_before = log->disk_size();
    Status st = log->truncate_before(cut);
    if (!st) fail(st, o.dir);
    measure_cut(r, segs, disk_before, *log);
    st = log->close();
    if (!st) fail(st, o.dir);
  }
  print_truncate(r, g);
  return kExitOk;
}

}  // namespace

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
