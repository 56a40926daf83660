// Retention by the writer (append_retention.h).
#include "append_retention.h"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "alog/format.h"
#include "alog/retention.h"

namespace alog::cli {

namespace {

uint64_t wall_ms() {
  using namespace std::chrono;
  return uint64_t(duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count());
}

}  // namespace

void StoredRetention::merge(const StoredRetention& g) {
  if (g.keep_records) keep_records = g.keep_records;
  if (g.keep_bytes) keep_bytes = g.keep_bytes;
  if (g.keep_segments) keep_segments = g.keep_segments;
  if (g.older_than_s) older_than_s = g.older_than_s;
  if (g.segment_age_s) segment_age_s = g.segment_age_s;
}

Json StoredRetention::to_json() const {
  Json j = Json::object();
  if (keep_records) j["keep_records"] = *keep_records;
  if (keep_bytes) j["keep_bytes"] = *keep_bytes;
  if (keep_segments) j["keep_segments"] = *keep_segments;
  if (older_than_s) j["older_than_s"] = *older_than_s;
  if (segment_age_s) j["segment_age_s"] = *segment_age_s;
  return j;
}

void RetentionArgs::add_to(CLI::App& sub) {
  sub.add_option("--keep", keep, "Retention, stored in alog.json: keep the newest N records")
      ->type_name("N")->check(CLI::Validator(check_u64(), "N"));
  sub.add_option("--keep-bytes", keep_bytes, "Retention: keep at most SIZE of segment files")
      ->type_name("SIZE")->check(CLI::Validator(check_size(), "SIZE"));
  sub.add_option("--keep-segments", keep_segments, "Retention: keep the newest K segments")
      ->type_name("K")->check(CLI::Validator(check_u64(), "K"));
  sub.add_option("--older-than", older_than, "Retention: remove segments whose records are all older than DURATION")
      ->type_name("DURATION")->check(CLI::Validator(check_duration(), "DURATION"));
  sub.add_option("--segment-age", segment_age, "Seal the active segment once it is DURATION old")
      ->type_name("DURATION")->check(CLI::Validator(check_duration(), "DURATION"));
}

StoredRetention RetentionArgs::parse() const {
  StoredRetention r;
  if (keep) r.keep_records = parse_u64(*keep);
  if (keep_bytes) r.keep_bytes = parse_size(*keep_bytes);
  if (keep_segments) {
    r.keep_segments = parse_u64(*keep_segments);
    if (*r.keep_segments == 0) throw UsageError("--keep-segments must be at least 1 (the active segment stays)");
  }
  if (older_than) r.older_than_s = parse_duration_s(*older_than);
  if (segment_age) {
    r.segment_age_s = parse_duration_s(*segment_age);
    if (*r.segment_age_s == 0) throw UsageError("--segment-age must be at least 1s");
  }
  return r;
}

StoredRetention load_retention(const std::string& dir) {
  StoredRetention r;
  std::string path = path_join(dir, std::string(format::kOptionsName));
  std::ifstream in(path, std::ios::binary);
  if (!in) return r;  // load_options reports an unreadable file
  std::stringstream ss;
  ss << in.rdbuf();
  Json j = Json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("retention")) return r;
  const Json& o = j["retention"];
  if (!o.is_object()) fail("bad_config", path, std::nullopt, "\"retention\" must be an object");
  auto get = [&](const char* key, std::optional<uint64_t>* dst) {
    if (!o.contains(key)) return;
    if (!o[key].is_number_unsigned())
      fail("bad_config", path, std::nullopt, fmt::format("\"retention.{}\" must be an unsigned integer", key));
    *dst = o[key].get<uint64_t>();
  };
  get("keep_records", &r.keep_records);
  get("keep_bytes", &r.keep_bytes);
  get("keep_segments", &r.keep_segments);
  get("older_than_s", &r.older_than_s);
  get("segment_age_s", &r.segment_age_s);
  if (r.keep_segments && *r.keep_segments == 0)
    fail("bad_config", path, std::nullopt, "\"retention.keep_segments\" must be at least 1");
  return r;
}

uint64_t apply_retention(Log& log, const StoredRetention& r) {
  RetentionPolicy p;
  p.keep_records = r.keep_records;
  p.keep_bytes = r.keep_bytes;
  p.keep_segments = r.keep_segments;
  if (r.older_than_s) {
    uint64_t age = *r.older_than_s > UINT64_MAX / 1000 ? UINT64_MAX : *r.older_than_s * 1000;
    uint64_t now = wall_ms();
    p.older_than_ms = now > age ? now - age : 0;
  }
  if (!p.keep_records && !p.keep_bytes && !p.keep_segments && !p.older_than_ms) return 0;
  auto segs = log.segments();
  if (segs.empty()) return 0;
  uint64_t cut = retention_cut(segs, p);
  uint64_t first = log.first_sequence();
  if (cut <= first) return 0;
  Status st = log.truncate_before(cut);
  if (!st) fail(st, log.dir());
  return cut - first;
}

bool roll_if_old(Log& log, const StoredRetention& r) {
  if (!r.segment_age_s) return false;
  auto segs = log.segments();
  if (segs.empty()) return false;
  const SegmentInfo& a = segs.back();
  if (a.next_sequence == a.start_sequence) return false;  // no record to seal
  uint64_t age = *r.segment_age_s > UINT64_MAX / 1000 ? UINT64_MAX : *r.segment_age_s * 1000;
  if (wall_ms() - std::min(wall_ms(), a.created_at_ms) < age) return false;
  Status st = log.roll();
  if (!st) fail(st, log.dir());
  return true;
}

}  // namespace alog::cli
