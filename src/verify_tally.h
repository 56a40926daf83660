// What verify's walk of one segment counts of the frames it accepts (its
// totals and histograms), kept per part when the walk is split across
// threads (walk_split.h) and added in order: batches that span two parts
// are counted once, with their whole size.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "frame_reader.h"
#include "verify_segment.h"

namespace alog::detail {

// What a walk counts of the frames it accepts; a helper's part keeps its own.
struct Tally {
  uint64_t records = 0, payload_bytes = 0, batches = 0, checkpoints = 0;
  Histogram payload_sizes{};
  Histogram batch_sizes{};  // of every batch but the first (its first may have begun before it)
  bool ended = false;       // a BatchEnd was met
  uint64_t lead = 0;        // records up to the first BatchEnd
  uint64_t open = 0;        // records since the last BatchEnd (or the start)
  std::vector<std::pair<uint64_t, uint64_t>> lost;  // a part's lost frames: offset, sequence from 0
  struct Synced {
    uint64_t frame_off;
    WalkState after;  // sequence from 0
  };
  std::optional<Synced> synced;  // a part's first frame to reach the synced offset

  void frame(const FrameInfo& f) {
    if (f.h.is_checkpoint()) checkpoints++;
    if (!f.h.is_data()) return;
    records++;
    if (!f.h.is_lost()) {
      payload_bytes += f.h.word;
      payload_sizes[hist_bucket(f.h.word)]++;
    }
    open++;
    if (!f.h.is_batch_end()) return;
    batches++;
    end_batch(open);
    open = 0;
  }
  // frame() for each of a run of plain data frames (Walker::take_data).
  void data_run(const RecordView* run, size_t n) {
    records += n;
    for (size_t k = 0; k < n; k++) {
      payload_bytes += run[k].payload.size();
      payload_sizes[hist_bucket(run[k].payload.size())]++;
      open++;
      if (!ends_batch(run[k])) continue;
      batches++;
      end_batch(open);
      open = 0;
    }
  }
  void end_batch(uint64_t size) {
    if (ended) batch_sizes[hist_bucket(size)]++;
    else lead = size;
    ended = true;
  }
  // Counts the part that follows this walk's frames, walked by another.
  void add(const Tally& t) {
    records += t.records;
    payload_bytes += t.payload_bytes;
    batches += t.batches;
    checkpoints += t.checkpoints;
    for (size_t k = 0; k < kHistBuckets; k++) {
      payload_sizes[k] += t.payload_sizes[k];
      batch_sizes[k] += t.batch_sizes[k];
    }
    if (!t.ended) {
      open += t.open;
      return;
    }
    end_batch(open + t.lead);  // the batch open here ends in that part
    open = t.open;
  }
  // The totals of a walk that began at a batch boundary.
  void add_to(SegmentReport& sr, SegmentWalk& out) const {
    sr.records += records;
    sr.payload_bytes += payload_bytes;
    sr.batches += batches;
    sr.checkpoints += checkpoints;
    for (size_t k = 0; k < kHistBuckets; k++) {
      out.payload_sizes[k] += payload_sizes[k];
      out.batch_sizes[k] += batch_sizes[k];
    }
    if (ended) out.batch_sizes[hist_bucket(lead)]++;
  }
};


}  // namespace alog::detail
