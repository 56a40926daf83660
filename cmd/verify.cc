// alog verify DIR|SEGMENT: checks everything FORMAT.md defines and prints
// each problem (man/alog-verify.1). Read-only.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>

#include "cli.h"
#include "report.h"
#include "segment_file.h"

namespace alog::cli {

namespace {

struct VerifyCmdOptions {
  std::string path;
  bool headers_only = false;
  std::string jobs = "0";  // one per core
};

Json verify_json(const VerifyReport& r, int exit) {
  ProblemCounts c = count_problems(r);
  Json j = summary_head(exit);
  j["path"] = r.path;
  j["headers_only"] = r.headers_only;
  j["writer_active"] = r.writer_active;
  j["segments"] = r.segments.size();
  j["records"] = r.records;
  j["lost_records"] = r.lost_records;
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

int run_verify(const VerifyCmdOptions& o, const Global& g) {
  stop_reads_on_signals();
  if (is_regular_file(o.path)) require_segment_file(o.path);
  Progress progress(g, "verify", /*delayed=*/false);
  VerifyOptions vo;
  vo.headers_only = o.headers_only;
  vo.jobs = jobs_of(o.jobs);
  vo.progress = progress_fn(progress);
  auto res = verify(o.path, vo);
  progress.clear();
  if (!res) fail(res.status(), o.path);
  VerifyReport& r = *res;
  r.path = o.path;
  drop_in_flight(r);
  int exit = verify_exit(r);
  if (g.json()) {
    out_json(verify_json(r, exit));
  } else {
    bool color = use_color_stdout();
    for (const auto& p : r.problems) out_line(problem_text(p, o.path, color));
    out_line(verify_summary(r));
  }
  return exit;
}

}  // namespace

Command add_verify(CLI::App& app, const Global& g) {
  auto o = std::make_shared<VerifyCmdOptions>();
  CLI::App* sub = app.add_subcommand("verify", "Check every segment and report each problem");
  sub->fallthrough();
  sub->add_option("DIR", o->path, "Log directory or segment file")->required();
  sub->add_flag("--headers-only", o->headers_only, "Verify via checkpoints without reading payloads");
  sub->add_option("-j,--jobs", o->jobs, "Segments verified at once, on as many threads (default 0: one per core); the report is the same")
      ->check(CLI::Validator(check_u64(), "N"));
  return {sub, false, [o, &g] { return run_verify(*o, g); }};
}

}  // namespace alog::cli
