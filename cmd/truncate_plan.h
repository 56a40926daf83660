// The plans of truncate-before and truncate-after. A dry run and the real
// run compute them with the same code on the same view: a read-only open
// of the log, refused with the corruption a write open would refuse. The
// real run then opens for writing and carries out exactly the plan.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "alog/log.h"
#include "cli.h"
#include "report.h"

namespace alog::cli {

// Opens DIR read-only to plan: a Failure when a writer holds the lock (the
// plan would be stale at once) or when the log has damage that a write open
// refuses (the same Failure the real run's open would give).
// wait_ms: how long to wait for a writer's lock (--wait).
std::unique_ptr<Log> open_for_plan(const std::string& dir,
                                   std::optional<uint64_t> wait_ms = std::nullopt);

// truncate_before(cut) on `log`: the sealed segments that leave whole and
// the range a reader sees afterwards; r.path, dry_run, policy, seq and cuts
// are the caller's. Fails with out_of_bounds beyond the next sequence
// (naming r.path, as the library names a directory).
// live: `log` is the holder's own log, open for writing (a request through
// the control socket, control_service.h): no open is ahead to report.
void plan_truncate_before(TruncateResult& r, const Log& log, uint64_t cut, bool live = false);
// truncate_after(seq) on `log`. Fails with out_of_bounds outside the log.
void plan_truncate_after(TruncateResult& r, const Log& log, uint64_t seq, bool live = false);

// Every refusal carrying out the plan `r` would meet, made without changing
// anything, by the dry run and by the real run before its first change (a
// Failure then): alog.json as the write open reads it, then the lock file,
// lost+found/, every segment and DIR itself as the write open and the
// truncation would write them (alog/write_plan.h). Not whether the lock is
// held.
void check_carry_out(const TruncateResult& r);

// The real run: opens DIR for writing (which carries out r.recovered, now
// with its lost+found/ name) and returns the log.
std::unique_ptr<Log> open_to_carry_out(const Global& g, TruncateResult& r,
                                       std::optional<uint64_t> wait_ms = std::nullopt);

}  // namespace alog::cli
