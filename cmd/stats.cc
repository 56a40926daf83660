// alog stats DIR|SEGMENT: per-segment and total counts and sizes, log2
// histograms of payload and batch sizes, and disk use against the budget.
// Read-only; built on verify() with headers only.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>

#include "cli.h"
#include "report.h"

namespace alog::cli {

namespace {

struct StatsOptions {
  std::string path;
};

struct Totals {
  uint64_t records = 0, batches = 0, checkpoints = 0, bytes = 0, disk = 0, payload = 0;
};

Totals totals_of(const VerifyReport& r) {
  Totals t;
  for (const auto& s : r.segments) {
    t.records += s.records;
    t.batches += s.batches;
    t.checkpoints += s.checkpoints;
    t.bytes += s.size;
    t.disk += s.file_length;
    t.payload += s.payload_bytes;
  }
  return t;
}

// Bucket k holds [lo, hi]: 0 for k = 0, else [2^(k-1), 2^k - 1].
std::pair<uint64_t, uint64_t> bucket_range(size_t k) {
  if (k == 0) return {0, 0};
  uint64_t lo = uint64_t(1) << (k - 1);
  return {lo, k >= 64 ? UINT64_MAX : (uint64_t(1) << k) - 1};
}

Json hist_json(const Histogram& h) {
  Json a = Json::array();
  for (size_t k = 0; k < h.size(); k++) {
    if (!h[k]) continue;
    auto [lo, hi] = bucket_range(k);
    Json b;
    b["min"] = lo;
    b["max"] = hi;
    b["count"] = h[k];
    a.push_back(b);
  }
  return a;
}

void hist_text(const char* title, const Histogram& h) {
  uint64_t top = *std::max_element(h.begin(), h.end());
  out_line(title);
  if (!top) {
    out_line("  (none)");
    return;
  }
  size_t lo_k = 0, hi_k = h.size() - 1;
  while (!h[lo_k]) lo_k++;
  while (!h[hi_k]) hi_k--;
  for (size_t k = lo_k; k <= hi_k; k++) {
    auto [lo, hi] = bucket_range(k);
    size_t bar = h[k] ? size_t(std::max<uint64_t>(1, h[k] * 40 / top)) : 0;
    out_line(fmt::format("  {:>10}-{:<10} {:>8} {}", lo, hi, h[k], std::string(bar, '#')));
  }
}

int run_stats(const StatsOptions& o, const Global& g) {
  VerifyOptions vo;
  vo.headers_only = true;
  auto res = verify(o.path, vo);
  if (!res) fail(res.status(), o.path);
  VerifyReport& r = *res;
  r.path = o.path;
  drop_in_flight(r);
  int exit = verify_exit(r);
  Totals t = totals_of(r);
  std::optional<uint64_t> budget;
  if (!is_regular_file(o.path)) {
    bool found = false;
    Options opt = load_options(o.path, {}, &found);
    if (found && opt.max_disk_size) budget = opt.max_disk_size;
  }
  ProblemCounts c = count_problems(r);
  bool any = r.first_sequence && r.next_sequence > *r.first_sequence;

  if (g.json()) {
    Json j = summary_head(exit);
    j["path"] = o.path;
    j["writer_active"] = r.writer_active;
    Json segs = Json::array();
    for (const auto& s : r.segments) {
      Json sj;
      sj["file"] = s.file;
      sj["state"] = s.active ? "active" : "sealed";
      sj["start_seq"] = s.start_sequence;
      sj["first_seq"] = s.first_sequence;
      sj["next_seq"] = s.next_sequence;
      sj["records"] = s.records;
      sj["batches"] = s.batches;
      sj["checkpoints"] = s.checkpoints;
      sj["bytes"] = s.size;
      sj["file_length"] = s.file_length;
      sj["payload_bytes"] = s.payload_bytes;
      sj["overhead_bytes"] = s.size > s.payload_bytes ? s.size - s.payload_bytes : 0;
      sj["generation"] = s.generation;
      sj["created_at"] = s.header_ok ? Json(iso_time_ms(s.created_at_ms)) : Json(nullptr);
      sj["created_at_ms"] = s.header_ok ? Json(s.created_at_ms) : Json(nullptr);
      sj["clean"] = s.clean;
      segs.push_back(sj);
    }
    j["segments"] = segs;
    Json tj;
    tj["segments"] = r.segments.size();
    tj["records"] = t.records;
    tj["first_seq"] = opt_json(r.first_sequence);
    tj["last_seq"] = any ? Json(r.next_sequence - 1) : Json(nullptr);
    tj["next_seq"] = r.next_sequence;
    tj["batches"] = t.batches;
    tj["checkpoints"] = t.checkpoints;
    tj["bytes"] = t.bytes;
    tj["disk_size"] = t.disk;
    tj["payload_bytes"] = t.payload;
    tj["overhead_bytes"] = t.bytes > t.payload ? t.bytes - t.payload : 0;
    j["totals"] = tj;
    j["max_disk_size"] = opt_json(budget);
    j["disk_used_percent"] = budget ? Json(double(t.disk) * 100.0 / double(*budget)) : Json(nullptr);
    j["payload_sizes"] = hist_json(r.payload_sizes);
    j["batch_sizes"] = hist_json(r.batch_sizes);
    j["torn_tail_count"] = c.torn_tail;
    j["corruption_count"] = c.corruption;
    j["warning_count"] = c.warning;
    out_json(j);
    return exit;
  }

  out_line(fmt::format("{}: {} segment{}, {} record{}{}, next {}{}", o.path, r.segments.size(),
                       r.segments.size() == 1 ? "" : "s", t.records, t.records == 1 ? "" : "s",
                       any ? fmt::format(" ({}-{})", *r.first_sequence, r.next_sequence - 1) : "",
                       r.next_sequence, r.writer_active ? ", writer active" : ""));
  out_line(fmt::format("{:<24} {:>8} {:>8} {:>8} {:>8} {:>7} {:>5} {:>10} {:>8} {:>5} {:<24} {}",
                       "FILE", "START", "FIRST", "NEXT", "RECORDS", "BATCHES", "CKPTS", "BYTES",
                       "OVERHEAD", "GEN", "CREATED", "STATE"));
  for (const auto& s : r.segments)
    out_line(fmt::format("{:<24} {:>8} {:>8} {:>8} {:>8} {:>7} {:>5} {:>10} {:>8} {:>5} {:<24} {}",
                         s.file, s.start_sequence, s.first_sequence, s.next_sequence, s.records,
                         s.batches, s.checkpoints, s.size,
                         s.size > s.payload_bytes ? s.size - s.payload_bytes : 0, s.generation,
                         s.header_ok ? iso_time_ms(s.created_at_ms) : "-",
                         std::string(s.active ? "active" : "sealed") + (s.clean ? "" : ", damaged")));
  out_line(fmt::format("{:<24} {:>8} {:>8} {:>8} {:>8} {:>7} {:>5} {:>10} {:>8}", "total", "", "",
                       "", t.records, t.batches, t.checkpoints, t.bytes,
                       t.bytes > t.payload ? t.bytes - t.payload : 0));
  if (budget)
    out_line(fmt::format("disk: {} bytes ({}) of max_disk_size {} ({}), {:.1f}%", t.disk,
                         human_bytes(t.disk), *budget, human_bytes(*budget),
                         double(t.disk) * 100.0 / double(*budget)));
  else
    out_line(fmt::format("disk: {} bytes ({}), no max_disk_size known", t.disk, human_bytes(t.disk)));
  hist_text("payload sizes (bytes):", r.payload_sizes);
  hist_text("batch sizes (records):", r.batch_sizes);
  if (!r.problems.empty())
    out_line(fmt::format("{} problem{} ({} torn_tail, {} corruption, {} warning): see alog verify",
                         r.problems.size(), r.problems.size() == 1 ? "" : "s", c.torn_tail,
                         c.corruption, c.warning));
  return exit;
}

}  // namespace

Command add_stats(CLI::App& app, const Global& g) {
  auto o = std::make_shared<StatsOptions>();
  CLI::App* sub = app.add_subcommand("stats", "Per-segment and total counts, sizes and histograms");
  sub->fallthrough();
  sub->add_option("DIR", o->path, "Log directory or segment file")->required();
  return {sub, false, [o, &g] { return run_stats(*o, g); }};
}

}  // namespace alog::cli
