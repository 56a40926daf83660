// Reading into damage: a cat or seek that asks for a sequence the damage
// made unreadable reports verify's problem for it (exit 4), never
// out_of_bounds for a sequence inside the range verify reports.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "alog/log.h"
#include "cli.h"

namespace alog::cli {

// When `log` (opened read-only from `dir`) has damage that ends its readable
// records and `seq` lies past them but inside the range verify reports
// (before its next sequence, or in a problem's sequences: one without a
// last sequence reaches to the end):
// prints verify's problem for the damage (the one whose sequences hold
// `seq`, else the first, which ended the readable records; with --json the object
// {"type":"problem",...} on standard output; always the line
// "alog: FILE:OFFSET: corruption: KIND: MESSAGE" on standard error) and
// returns 4. nullopt otherwise.
std::optional<int> report_read_damage(const Global& g, const Log& log, const std::string& dir, uint64_t seq);

// verify's problem for damage a read met in the segment file at `path` (in
// the log directory `dir`; "" for a segment file read on its own, as
// `alog verify FILE` walks it), at `offset` when known: of that segment's
// problems (alog::verify_segment, the values verify reports) of
// classification `cls`, the one at `offset`, else the first. nullopt when
// verify finds none there (the damage moved, or was repaired).
std::optional<Problem> problem_met(const std::string& dir, const std::string& path,
                                   std::optional<uint64_t> offset, Classification cls);

// The problem for log.damage() (the damage that ended a read-only open's
// readable records), reported as report_read_damage reports one: 4. nullopt
// when verify finds none there.
std::optional<int> report_open_damage(const Global& g, const Log& log, const std::string& dir);

}  // namespace alog::cli
