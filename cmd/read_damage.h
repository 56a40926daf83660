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
// records and `seq` lies past them but inside the range verify reports:
// prints verify's problem for that damage (with --json the object
// {"type":"problem",...} on standard output; always the line
// "alog: FILE:OFFSET: corruption: KIND: MESSAGE" on standard error) and
// returns 4. nullopt otherwise.
std::optional<int> report_read_damage(const Global& g, const Log& log, const std::string& dir, uint64_t seq);

}  // namespace alog::cli
