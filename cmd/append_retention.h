// Retention run by alog append itself: the policies of truncate-before
// (--keep, --keep-bytes, --keep-segments, --older-than) and --segment-age,
// kept in DIR/alog.json under "retention" so that every later append
// applies them too, at open and after each roll.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cli.h"

namespace CLI {
class App;
}

namespace alog::cli {

struct StoredRetention {
  std::optional<uint64_t> keep_records, keep_bytes, keep_segments, older_than_s, segment_age_s;
  bool any() const { return keep_records || keep_bytes || keep_segments || older_than_s || segment_age_s; }
  // Given values replace stored ones.
  void merge(const StoredRetention& given);
  Json to_json() const;
};

// The options as given on the command line (strings until parsed).
struct RetentionArgs {
  std::optional<std::string> keep, keep_bytes, keep_segments, older_than, segment_age;
  void add_to(CLI::App& sub);
  // Usage errors for invalid combinations (--keep-segments 0).
  StoredRetention parse() const;
};

// The "retention" object of DIR/alog.json (none: all unset); bad_config
// when it is not one.
StoredRetention load_retention(const std::string& dir);

// Applies the policies to the open log (truncate_before at the strictest
// cut); returns the number of records removed.
uint64_t apply_retention(Log& log, const StoredRetention& r);

// --segment-age: seals the active segment when it holds records and was
// created at least that long ago (wall clock); true when it rolled.
bool roll_if_old(Log& log, const StoredRetention& r);

}  // namespace alog::cli
