// The parts of a rendered scan (alog/rendered_scan.h): how a segment is cut
// into parts, and how a worker reads one: a stretch of confirmed records as
// a Scanner reads them, or a stretch of the active segment's unsynced tail
// as the tail's walk reads it (every stop condition, the running CRC), its
// records rendered as the walk confirms their batches. A part but a
// segment's first begins just past the first checkpoint found at or after
// an offset, which its worker looks for (find_checkpoint); it ends on the
// first checkpoint its reading steps onto at or after the next part's
// offset. So the part after it begins where it ended unless bytes of a
// payload looked like a checkpoint first (the reading never steps there):
// the scan then goes no further in parts.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <vector>

#include "alog/rendered_scan.h"
#include "alog/scanner.h"
#include "frame_reader.h"
#include "segment.h"

namespace alog::detail {

struct Part {
  SegmentPtr seg;
  uint64_t cuts = 0;      // seg->cuts() when planned
  uint64_t limit = 0;     // the segment's committed end when planned (a tail part: the file's length)
  uint64_t seg_next = 0;  // the segment's next sequence when planned (not for a tail part)
  bool known = false;     // begins at `start`: a segment's read offset, `from`, a walk's boundary
  bool tail = false;      // a part of the unsynced tail, read by a walk
  bool sealed = false;    // of a sealed segment: its EOF follows `limit`, checked when reached
  uint64_t search = 0;    // not known: where its checkpoint is looked for
  uint64_t until = 0;     // it ends on a checkpoint at or after this (the limit: at the limit)
  // The worker's results (start also planned, when known).
  WalkState start;        // the state where it begins (after a checkpoint: reset, sequence 0)
  bool empty = false;     // no checkpoint before `until`: nothing to read
  uint64_t end = 0;       // where its reading ended (complete: past that checkpoint, or the limit)
  std::unique_ptr<RenderedBytes> out;
  uint64_t records = 0;   // the records in out, every one confirmed
  uint32_t last_crc = 0;  // the CRC32C of the last one's payload
  bool complete = false;  // the reading reached its end
  bool rendered_all = false;  // out holds every record the part's reading accepted
  uint64_t resume = 0;        // the frame after the records in out, where a Scanner goes on
  Stop stop = Stop::none;     // a tail part: where its walk stopped before `end` (an EOF, damage)
  std::unique_ptr<Walker> walker;  // a tail part: its walk, for the log's walk to adopt
  bool done = false;
  std::exception_ptr error;  // thrown by render
};

// A worker's window on the segment it read last, and room for a window's records.
struct Reader {
  const Segment* seg = nullptr;
  std::unique_ptr<FrameWindow> win;
  std::vector<RecordView> records = std::vector<RecordView>(4096);
  std::vector<std::string_view> payloads;
};

// Adds to parts the records of seg from `from` (or its first) to its
// committed end, in parts about part_bytes long; `sealed`: seg is not the
// active segment, and the part that reaches its end checks its EOF. False (nothing added)
// when the segment was recycled, or the frame of `from` cannot be found
// (the Scanner reports why).
bool plan_confirmed(const SegmentPtr& seg, bool sealed, uint64_t from, uint64_t part_bytes,
                    std::vector<Part>& parts);
// Adds to parts seg's unsynced tail from the walk's batch boundary `at` to
// the end of the file, in parts about part_bytes long.
void plan_tail(const SegmentPtr& seg, const WalkState& at, uint64_t part_bytes, std::vector<Part>& parts);

// Reads and renders one part (on a worker).
void read_part(Part& p, Reader& rd, const RenderedScanOptions& o);

}  // namespace alog::detail
