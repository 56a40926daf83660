// Runs of lost records (FORMAT.md "Salvage", step 5): verification reports
// each maximal run of consecutive lost sequences once, across segments, as
// a warning with its first and last sequence.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "alog/verify.h"

namespace alog::detail {

class LostRuns {
 public:
  // A lost frame with sequence seq at file:offset, met in log order.
  void add(const std::string& file, uint64_t offset, uint64_t seq) {
    if (!runs_.empty() && runs_.back().last + 1 == seq) {
      runs_.back().last = seq;
      return;
    }
    runs_.push_back({file, offset, seq, seq});
  }
  // Adds the runs of `later` (met after these), merging where they meet.
  void append(const LostRuns& later) {
    for (const Run& r : later.runs_) {
      if (!runs_.empty() && runs_.back().last + 1 == r.first) runs_.back().last = r.last;
      else runs_.push_back(r);
    }
  }
  // Drops every lost sequence at or after seq (records a walk's cut leaves
  // out); returns how many were dropped.
  uint64_t drop_from(uint64_t seq) {
    uint64_t n = 0;
    while (!runs_.empty() && runs_.back().last >= seq) {
      Run& r = runs_.back();
      if (r.first >= seq) {
        n += r.last - r.first + 1;
        runs_.pop_back();
      } else {
        n += r.last - seq + 1;
        r.last = seq - 1;
      }
    }
    return n;
  }
  // Lost sequences so far.
  uint64_t count() const {
    uint64_t n = 0;
    for (const Run& r : runs_) n += r.last - r.first + 1;
    return n;
  }
  // One warning per run.
  void report(std::vector<Problem>& out) const {
    for (const Run& r : runs_) {
      Problem p;
      p.file = r.file;
      p.offset = r.offset;
      p.first_seq = r.first;
      p.last_seq = r.last;
      p.kind = "lost_records";
      p.classification = Classification::warning;
      p.message = (r.first == r.last ? "record " + std::to_string(r.first) + " is"
                                     : "records " + std::to_string(r.first) + "-" +
                                           std::to_string(r.last) + " are") +
                  " lost: a salvage could not read them and kept their sequences";
      out.push_back(std::move(p));
    }
  }

 private:
  struct Run {
    std::string file;
    uint64_t offset, first, last;
  };
  std::vector<Run> runs_;
};

}  // namespace alog::detail
