// Salvage (FORMAT.md "What each operation does to the files": Salvage, steps
// 0-5): what `recover --force` does. Every record that can be read and whose
// sequence is proven keeps it; every other sequence up to the highest one the
// files show to have been synced becomes a lost frame; nothing is renumbered.
//
// plan_salvage() decides everything from the files (the dry run is this
// plan); apply_salvage() carries a plan out in the crash-safe order of step 4.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "alog/format.h"
#include "alog/fs.h"
#include "alog/status.h"
#include "lost_found.h"
#include "verify_internal.h"

namespace alog::detail {

// The values an operator may give where salvage would otherwise refuse.
struct SalvageOptions {
  std::optional<uint64_t> first_seq;   // the first segment's first sequence to keep
  std::optional<uint64_t> next_seq;    // the active segment's next sequence
  std::optional<uint16_t> generation;  // for a segment whose header is unreadable
  bool confirm_missing = false;        // a missing range next to a name-derived start
  uint32_t checkpoint_stride = 64;     // the rebuild's (alog.json's checkpoint_stride)
  uint64_t max_segment_size = uint64_t{128} << 20;  // bounds the lost frames of one segment
};

// The salvage values of recover()'s options.
inline SalvageOptions salvage_options(const RecoverOptions& o) {
  SalvageOptions so;
  so.first_seq = o.first_seq;
  so.next_seq = o.next_seq;
  so.generation = o.generation;
  so.confirm_missing = o.confirm_missing;
  so.checkpoint_stride = o.checkpoint_stride;
  so.max_segment_size = o.max_segment_size;
  return so;
}

// A record a rebuilt segment keeps as read. Every other sequence of the
// segment is lost: the plan holds the kept records only, so its size is
// bounded by the file's, whatever sequences a slot or a name claims.
struct KeptRecord {
  uint64_t seq = 0;
  uint64_t offset = 0;     // its frame in the original file
  uint32_t length = 0;     // payload length
  bool batch_end = false;  // its BatchEnd flag as read
  bool ends_batch = false; // the file followed it with a checkpoint
};

// The most lost frames (16 bytes each) one segment a salvage writes may
// hold: as many as fit in the larger of its original file and the log's
// maximum segment size. A slot or a file name claiming more sequences than
// that is not trusted (the sequences cannot have been in one segment).
inline uint64_t max_lost_frames(uint64_t original_length, uint64_t max_segment_size) {
  return std::max(original_length, max_segment_size) / format::kFrameHeaderSize;
}

// Sequences [first, last] kept or lost, with why (lost ones).
struct SeqRun {
  uint64_t first = 0, last = 0;
  std::string reason;
};

struct SegmentSalvage {
  std::string file;        // NAME.seg
  bool create = false;     // a segment of lost frames for a missing range (step 3)
  format::SegmentHeader header;
  uint64_t first_sequence = 0;  // slot A's first sequence
  uint64_t next_sequence = 0;
  uint64_t original_length = 0;
  std::vector<KeptRecord> records;  // the kept records, by sequence (the rest are lost)
  uint64_t lost_count() const {
    return next_sequence - header.start_sequence - records.size();
  }
  // Kept and lost runs of [first_sequence, next_sequence): the sequences
  // before the first one kept are no part of the log.
  std::vector<SeqRun> kept, lost;
  // Records proven before first_sequence that leave the log with this
  // salvage (those before a valid slot's first sequence had left it already:
  // the operator's --first-seq).
  struct {
    uint64_t records = 0;
    uint64_t first_seq = 0;  // the first of them
  } dropped_before_first;
  std::vector<UnkeptRun> not_kept;  // resumed runs tried and not kept (step 1)
};

struct SalvagePlan {
  std::vector<SegmentSalvage> segments;  // the segments rebuilt or created, in log order
  std::string refused;  // why salvage changes nothing (names the files and offsets); empty: go
  uint64_t next_sequence = 0;
};

// The log's first sequence after the plan: where salvage rebuilds the
// first segment, its first sequence kept; otherwise verification's.
inline std::optional<uint64_t> salvaged_first_sequence(const VerifyDetail& d, const SalvagePlan& plan) {
  if (!plan.segments.empty() && !d.segments.empty() && !plan.segments.front().create &&
      plan.segments.front().file == d.segments.front().name)
    return plan.segments.front().first_sequence;
  return d.report.first_sequence;
}

// Plans a salvage of the log verify_detail() described (every segment
// verified). Errors only for I/O; refusals are in the plan.
Result<SalvagePlan> plan_salvage(Fs& fs, const std::string& dir, const VerifyDetail& d,
                                 const SalvageOptions& opt, uint64_t now_ms);

// Rebuilds and creates the plan's segments (NAME.seg.tmp, synced; the
// original copied whole to lost+found/ first; rename; directory sync).
// Returns, per planned segment, the lost+found path of its original ("" for
// created ones).
Result<std::vector<std::string>> apply_salvage(Fs& fs, const std::string& dir,
                                               const SalvagePlan& plan, uint32_t stride,
                                               uint64_t now_ms);

// Calls fn(seq, payload, lost) for every sequence a salvage by `plan` would
// leave, in order, from the files as they are (nothing is written).
using SalvageVisit = std::function<Status(uint64_t seq, std::string_view payload, bool lost)>;
Status salvage_read(Fs& fs, const std::string& dir, const VerifyDetail& d, const SalvagePlan& plan,
                    const SalvageVisit& fn);

// Step 1 for one segment whose fixed header is readable (or given):
// proves sequences from the anchors; a refusal is an invalid_argument status
// naming the file and offsets.
struct ProofInput {
  File* file = nullptr;
  std::string name;
  uint64_t length = 0;
  format::SegmentHeader header;
  std::optional<format::Slot> slot;   // the winning slot, when one is valid
  bool slot_may_be_older = false;     // the other slot is neither valid nor zero
  bool header_from_name = false;      // bytes 0-63 unreadable: start from the name (step 2)
  bool active = false;
  bool first = false;                 // the log's first segment
  std::optional<uint64_t> next_start; // the next segment's start sequence
  const SalvageOptions* opt = nullptr;
  // The reader `file` reads through, when it is one: a record over an
  // unreadable sector is lost, whatever its CRC says.
  const SectorReader* sectors = nullptr;
};
Result<SegmentSalvage> prove_segment(const ProofInput& in);

}  // namespace alog::detail
