// The plan of recover(): computed from one verification of every segment,
// printed as is by a dry run and carried out step by step by the real run,
// so that the two say the same thing.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "alog/verify.h"
#include "verify_internal.h"

namespace alog::detail {

// How the real run carries out one action of the plan.
enum class StepKind : uint8_t {
  cut,      // save from `at` on, truncate at `at`, write the end frames (FORMAT.md "Cutting at a boundary B")
  trim,     // save the bytes after the EOF frame, truncate after it
  by_open,  // leftovers and renames: the ordinary open for writing does them
};

struct PlanStep {
  StepKind kind = StepKind::by_open;
  size_t segment = 0;  // index into VerifyDetail::segments (move, cut, trim)
  WalkState at;        // cut: the boundary B; trim: at.offset is the end of the EOF frame
  std::string manifest_reason;
};

struct RecoverPlan {
  std::vector<RecoverAction> actions;
  std::vector<PlanStep> steps;  // parallel to actions
  bool corrupt = false;         // corruption found: salvage's, with force
  bool refused = false;         // corruption without force: nothing is carried out
  // The log as a reader sees it once the plan is carried out.
  std::optional<uint64_t> first_seq, last_seq;
  uint64_t next_seq = 0;
};

// The plan for the log `d` describes, but for salvage (recover() adds its
// plan). Pure: reads nothing, writes nothing.
RecoverPlan plan_recover(const VerifyDetail& d, bool force);

}  // namespace alog::detail
