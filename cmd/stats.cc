// alog stats DIR|SEGMENT: per-segment and total counts and sizes, log2
// histograms of payload and batch sizes, and disk use against the budget.
// Read-only; built on verify() with headers only.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <vector>

#include "alog/format.h"

#include "cli.h"
#include "segment_file.h"
#include "report.h"

namespace alog::cli {

namespace {

struct StatsOptions {
  std::string path;
};

struct Totals {
  uint64_t records = 0, lost = 0, batches = 0, checkpoints = 0, disk = 0, payload = 0, overhead = 0,
           stale = 0;
};

// Size minus payload bytes minus the bytes before the read offset that are no longer live.
uint64_t overhead_of(const SegmentReport& s) {
  uint64_t dead = s.read_offset > format::kHeaderSize ? s.read_offset - format::kHeaderSize : 0;
  uint64_t used = s.payload_bytes + dead;
  return s.size > used ? s.size - used : 0;
}

Totals totals_of(const VerifyReport& r) {
  Totals t;
  for (const auto& s : r.segments) {
    t.records += s.records;
    t.lost += s.lost_records;
    t.batches += s.batches;
    t.checkpoints += s.checkpoints;
    t.disk += s.file_length;
    t.payload += s.payload_bytes;
    t.overhead += overhead_of(s);
    t.stale += s.stale_bytes;
  }
  return t;
}

// Bucket k holds [lo, hi]: 0 for k = 0, else [2^(k-1), 2^k - 1].
std::pair<uint64_t, uint64_t> bucket_range(size_t k) {
  if (k == 0) return {0, 0};
  uint64_t lo = uint64_t(1) << (k - 1);
  return {lo, k >= 64 ? UINT64_MAX : (uint64_t(1) << k) - 1};
}

// Buckets 0 up to the highest non-empty one (none when all are empty).
size_t hist_len(const Histogram& h) {
  size_t n = h.size();
  while (n > 0 && !h[n - 1]) n--;
  return n;
}

Json hist_json(const Histogram& h) {
  Json a = Json::array();
  for (size_t k = 0; k < hist_len(h); k++) {
    auto [lo, hi] = bucket_range(k);
    Json b;
    b["bucket"] = k;
    b["min"] = lo;
    b["max"] = hi;
    b["count"] = h[k];
    a.push_back(b);
  }
  return a;
}

void hist_text(const char* title, const Histogram& h) {
  out_line(title);
  size_t n = hist_len(h);
  if (!n) return;
  uint64_t top = *std::max_element(h.begin(), h.end());
  std::vector<std::string> ranges, counts;
  size_t rw = 0, cw = 0;
  for (size_t k = 0; k < n; k++) {
    auto [lo, hi] = bucket_range(k);
    ranges.push_back(lo == hi ? std::to_string(lo) : fmt::format("{}-{}", lo, hi));
    counts.push_back(std::to_string(h[k]));
    rw = std::max(rw, ranges.back().size());
    cw = std::max(cw, counts.back().size());
  }
  for (size_t k = 0; k < n; k++) {
    // 40 for the largest count, ceil(40 * count / largest) for the others.
    uint64_t bar = h[k] == top ? 40 : (h[k] * 40 + top - 1) / top;
    std::string line = fmt::format("{:<{}}  {:>{}}", ranges[k], rw, counts[k], cw);
    if (bar) line += " " + std::string(bar, '#');
    out_line(line);
  }
}

std::string noun(uint64_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

int run_stats(const StatsOptions& o, const Global& g) {
  stop_reads_on_signals();
  if (is_regular_file(o.path)) require_segment_file(o.path);
  VerifyOptions vo;
  vo.headers_only = true;
  auto res = verify(o.path, vo);
  if (!res) fail(res.status(), o.path);
  VerifyReport& r = *res;
  r.path = o.path;
  drop_in_flight(r);
  int exit = verify_exit(r);
  Totals t = totals_of(r);
  std::optional<uint64_t> budget;  // 0: no limit; nullopt: unknown
  if (!is_regular_file(o.path)) {
    bool found = false;
    Options opt = load_options(o.path, {}, &found);
    if (found) budget = opt.max_disk_size;
  }
  bool any = r.first_sequence && r.next_sequence > *r.first_sequence;

  if (g.json()) {
    Json j = summary_head(exit);
    j["path"] = o.path;
    Json segs = Json::array();
    for (const auto& s : r.segments) {
      Json sj;
      sj["file"] = s.file;
      sj["active"] = s.active;
      sj["start_seq"] = s.start_sequence;
      sj["first_seq"] = s.first_sequence;
      sj["next_seq"] = s.next_sequence;
      sj["records"] = s.records;
      sj["lost_records"] = s.lost_records;
      sj["batches"] = s.batches;
      sj["checkpoints"] = s.checkpoints;
      sj["read_offset"] = s.read_offset;
      sj["synced_offset"] = s.synced_offset;
      sj["size"] = s.size;
      sj["file_length"] = s.file_length;
      sj["payload_bytes"] = s.payload_bytes;
      sj["overhead_bytes"] = overhead_of(s);
      sj["stale_bytes"] = s.stale_bytes;
      sj["generation"] = s.generation;
      sj["created_at_ms"] = s.header_ok ? Json(s.created_at_ms) : Json(nullptr);
      sj["created_at"] = s.header_ok ? Json(iso_time_ms(s.created_at_ms)) : Json(nullptr);
      segs.push_back(sj);
    }
    j["segments"] = segs;
    Json tj;
    tj["segments"] = r.segments.size();
    tj["records"] = t.records;
    tj["lost_records"] = t.lost;
    tj["batches"] = t.batches;
    tj["checkpoints"] = t.checkpoints;
    tj["payload_bytes"] = t.payload;
    tj["overhead_bytes"] = t.overhead;
    tj["stale_bytes"] = t.stale;
    tj["disk_size"] = t.disk;
    tj["first_seq"] = opt_json(r.first_sequence);  // an empty log's is its next, as verify says
    tj["last_seq"] = any ? Json(r.next_sequence - 1) : Json(nullptr);
    tj["next_seq"] = r.next_sequence;
    j["totals"] = tj;
    j["max_disk_size"] = opt_json(budget);
    j["payload_size_histogram"] = hist_json(r.payload_sizes);
    j["batch_size_histogram"] = hist_json(r.batch_sizes);
    Json probs = Json::array();
    for (const auto& p : r.problems) probs.push_back(problem_json(p));
    j["problems"] = probs;
    out_json(j);
    return exit;
  }

  // The table: each column as wide as its widest cell, two spaces apart.
  static const char* heads[] = {"FILE", "START", "FIRST", "NEXT", "RECORDS", "BATCHES",
                                "CKPTS", "SIZE", "OVERHEAD", "GEN", "CREATED", "STATE"};
  constexpr size_t kCols = 12;
  auto left = [](size_t c) { return c == 0 || c == 10 || c == 11; };
  std::vector<std::array<std::string, kCols>> rows;
  std::array<std::string, kCols> h;
  for (size_t c = 0; c < kCols; c++) h[c] = heads[c];
  rows.push_back(h);
  for (const auto& s : r.segments)
    rows.push_back({s.file, std::to_string(s.start_sequence), std::to_string(s.first_sequence),
                    std::to_string(s.next_sequence), std::to_string(s.records),
                    std::to_string(s.batches), std::to_string(s.checkpoints),
                    std::to_string(s.size), std::to_string(overhead_of(s)),
                    std::to_string(s.generation),
                    s.header_ok ? iso_time_ms(s.created_at_ms) : "-",
                    s.active ? "active" : "sealed"});
  std::array<size_t, kCols> w{};
  for (const auto& row : rows)
    for (size_t c = 0; c < kCols; c++) w[c] = std::max(w[c], row[c].size());
  bool color = use_color_stdout();
  for (size_t i = 0; i < rows.size(); i++) {
    std::string line;
    for (size_t c = 0; c < kCols; c++) {
      if (c) line += "  ";
      const std::string& cell = rows[i][c];
      std::string pad(w[c] - cell.size(), ' ');
      line += left(c) ? (c + 1 == kCols ? cell : cell + pad) : pad + cell;
    }
    bool damaged = i > 0 && !r.segments[i - 1].clean;
    out_line(damaged ? paint(color, "1;31", line) : line);
  }
  std::string total = "total: " + noun(r.segments.size(), "segment", "segments") + ", " +
                      noun(t.records, "record", "records");
  if (t.lost) total += ", " + noun(t.lost, "lost record", "lost records");
  if (any) total += fmt::format(" ({}-{})", *r.first_sequence, r.next_sequence - 1);
  total += fmt::format(", next {}, ", r.next_sequence) + noun(t.batches, "batch", "batches") + ", " +
           noun(t.checkpoints, "checkpoint", "checkpoints") + ", " +
           noun(t.payload, "payload byte", "payload bytes") + ", " +
           noun(t.overhead, "overhead byte", "overhead bytes");
  out_line(total);
  std::string disk = "disk: " + noun(t.disk, "byte", "bytes");
  if (budget && *budget)
    disk += fmt::format(" of {} ({:.1f}%)", *budget, double(t.disk) * 100.0 / double(*budget));
  else if (budget)
    disk += ", no limit";
  out_line(disk);
  hist_text("payload size (bytes)", r.payload_sizes);
  hist_text("batch size (records)", r.batch_sizes);
  for (const auto& p : r.problems) out_line(problem_text(p, o.path, color));
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
