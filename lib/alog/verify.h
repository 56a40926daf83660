// Verification and repair as reports: corruption is data, not just a failure.
// verify() checks everything FORMAT.md defines and never writes; recover()
// plans (and unless dry_run, applies) recovery, keeping every removed byte
// in lost+found/.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "alog/fs.h"
#include "alog/status.h"

namespace alog {

enum class Classification : uint8_t {
  torn_tail,   // at or after the active segment's synced offset: safe to cut
  corruption,  // in synced data or headers: never cut without --force
  warning,     // not damage (an invalid losing slot, a misnamed file, stale bytes)
};
const char* classification_name(Classification c);  // "torn_tail", "corruption", "warning"

struct Problem {
  std::string file;                  // segment file name ("" for the directory itself)
  std::optional<uint64_t> offset;    // where the walk stopped (0 for header damage)
  std::optional<uint64_t> cut_at;    // the batch boundary recovery would cut at (none for headers)
  std::optional<uint64_t> first_seq;  // sequences affected, where known
  std::optional<uint64_t> last_seq;
  std::string kind;  // segment_header, metadata_slots, frame_crc, checkpoint_crc,
                     // checkpoint_stride, bad_flags, stale_generation, reserved_bytes,
                     // bad_stride, truncated_header, truncated_payload,
                     // eof_without_batch_end, synced_offset, sequence_gap,
                     // name_mismatch, bytes_after_eof, slot_warning, damaged_record,
                     // lost_length, lost_records (a warning: a run of lost records)
  Classification classification = Classification::corruption;
  std::string expected;
  std::string found;
  std::string message;  // one line, without the file and offset
};

struct SegmentReport {
  std::string file;
  bool header_ok = false;
  bool active = false;
  uint64_t start_sequence = 0;
  uint64_t first_sequence = 0;
  uint64_t next_sequence = 0;  // as far as the walk got
  uint64_t read_offset = 0;
  uint64_t synced_offset = 0;
  uint64_t synced_sequence = 0;
  uint64_t size = 0;         // end of the EOF frame (or where the walk stopped)
  uint64_t file_length = 0;
  uint16_t generation = 0;
  uint64_t created_at_ms = 0;
  int winner_slot = -1;      // 0 = A, 1 = B
  uint64_t records = 0;       // records that read as records
  uint64_t lost_records = 0;  // lost frames (FORMAT.md "Salvage"): sequences without a record
  uint64_t batches = 0;      // BatchEnd frames met
  uint64_t checkpoints = 0;  // checkpoint frames met (not the EOF)
  uint64_t payload_bytes = 0;
  // Bytes after the EOF frame of a recycled file (generation > 1): its older
  // generations' stale frames, normal in a ring, so not a problem.
  uint64_t stale_bytes = 0;
  bool clean = false;        // the walk reached a valid EOF
};

// log2 buckets: bucket 0 counts 0, bucket k (k >= 1) counts [2^(k-1), 2^k).
inline constexpr size_t kHistBuckets = 34;
using Histogram = std::array<uint64_t, kHistBuckets>;
inline size_t hist_bucket(uint64_t v) {
  return std::min<size_t>(size_t(std::bit_width(v)), kHistBuckets - 1);  // bits needed for v
}

struct VerifyReport {
  std::string path;
  std::vector<SegmentReport> segments;
  std::vector<Problem> problems;
  std::optional<uint64_t> first_sequence;  // first readable record, if any
  uint64_t next_sequence = 0;
  uint64_t records = 0;       // records that read as records
  uint64_t lost_records = 0;  // lost ones, counted apart
  bool writer_active = false;  // a live writer holds LOCK: a torn tail may be a batch in flight
  bool headers_only = false;
  Histogram payload_sizes{};
  Histogram batch_sizes{};
  uint64_t bytes_read = 0;

  bool has(Classification c) const;
  // No torn tail and no corruption (warnings allowed).
  bool clean() const { return !has(Classification::torn_tail) && !has(Classification::corruption); }
};

struct VerifyOptions {
  bool headers_only = false;  // verify via checkpoints without reading payloads
  Fs* fs = nullptr;           // nullptr: posix_fs()
  // Called now and then with bytes walked so far and the total to walk
  // (with jobs > 1: after each segment, from the calling thread).
  std::function<void(uint64_t done, uint64_t total)> progress;
  // Segments walked at once, on as many threads; the report is the same
  // for any number.
  unsigned jobs = 1;
};

// Verifies a log directory, or a single segment file. Never writes. Errors
// (not_found, not_a_log, io) when there is nothing to verify, or when a read
// fails for another reason than the medium (EIO, an unreadable sector, is
// damage); damage is in the report.
Result<VerifyReport> verify(const std::string& path, const VerifyOptions& options = {});

// The problems verify() reports for one segment file `name` of the log
// directory `dir`, from the segment alone: its header and slots, then its
// walk as verify walks it (active when no segment file of dir sorts after
// it), with the same values (kind, message, expected, found, cut_at,
// first_seq, last_seq) and in the same order; what only the whole log shows
// (sequence gaps between segments, runs of lost records) is left out. For a
// reader that met damage in that segment and reports it as verify would.
// Errors as verify()'s.
Result<std::vector<Problem>> verify_segment(const std::string& dir, const std::string& name,
                                            const VerifyOptions& options = {});

// Sequences [first, last], and why (for lost ones).
struct SeqRange {
  uint64_t first = 0, last = 0;
  std::string reason;
};

struct RecoverAction {
  // "cut", "remove_tmp", "remove_del", "rename", "rewrite_slots" (a sealed
  // segment's slots written again from its walk), and for a salvage
  // "salvage" (a damaged segment rebuilt) and "create_lost" (a segment of
  // lost frames for a missing range)
  std::string action;
  std::string file;
  std::optional<uint64_t> offset;
  uint64_t records_dropped = 0;
  uint64_t bytes_dropped = 0;
  std::optional<uint64_t> first_seq;  // records dropped, where known
  std::optional<uint64_t> last_seq;
  std::string saved_to;  // lost+found/ path, relative to the log directory
  std::string reason;
  std::vector<SeqRange> kept, lost;  // salvage: the sequences kept and lost
};

struct RecoverOptions {
  bool dry_run = false;
  bool force = false;  // salvage corruption (FORMAT.md "Salvage"): no sequence moves
  // Values salvage refuses without (FORMAT.md, Salvage step 2).
  std::optional<uint64_t> first_seq;  // the first segment's first sequence to keep
  std::optional<uint64_t> next_seq;   // the active segment's next sequence
  std::optional<uint16_t> generation; // a segment whose header and frames cannot tell it
  bool confirm_missing = false;       // sequences missing next to a name-derived start are lost
  uint32_t checkpoint_stride = 64;    // where a rebuild puts checkpoints (alog.json's)
  // alog.json's: a rebuilt segment holds at most max(its file's size, this) / 16
  // lost frames, a created one this / 16 unless confirm_missing (salvage
  // refuses beyond: a slot or a name claiming more is not trusted).
  uint64_t max_segment_size = uint64_t{128} << 20;
  Fs* fs = nullptr;
  std::function<uint64_t()> clock_ms;
  std::function<void(uint64_t done, uint64_t total)> progress;
};

struct RecoverReport {
  VerifyReport before;
  std::vector<RecoverAction> actions;  // the plan (when refused by want of force: what force would do)
  bool refused = false;  // corruption found and force not given, or salvage refused: nothing changed
  std::string refusal;   // why salvage refused (names the file and offset)
  bool applied = false;  // actions were carried out (not dry_run)
  // Totals of the actions carried out, or to be carried out (0 when refused).
  uint64_t records_dropped = 0, bytes_dropped = 0;
  // The log a reader sees once the plan is carried out.
  std::optional<uint64_t> first_seq, last_seq;
  uint64_t next_seq = 0;
  VerifyReport after;    // when applied
};

// Reads a log as recover --force would leave it, changing nothing (the
// operator's way to get data out of a log on read-only media or kept as
// evidence): fn(seq, payload, lost) for every sequence in order, records
// with proven sequences and lost ones for the rest. `damage` lists what
// verification found; when salvage would refuse, `refused` says why and
// fn is not called. fn ends the reading early by returning Errc::stopped.
// Options used: fs, first_seq, next_seq, generation, confirm_missing,
// checkpoint_stride, max_segment_size.
struct SalvageReadReport {
  VerifyReport damage;
  std::string refused;
};
Result<SalvageReadReport> read_salvaged(
    const std::string& dir, const RecoverOptions& options,
    const std::function<Status(uint64_t seq, std::string_view payload, bool lost)>& fn);

// Where a salvage by `options` would leave sequence `seq` (seek --salvage),
// changing nothing. `damage` and `refused` as for read_salvaged. When the
// segment holding seq is rebuilt, `rebuilt` is set and the record is either
// `lost` (with `reason`) or kept from its frame at `offset` of the file as
// it is now; in a segment salvage leaves alone, only `file` is set (a
// lookup there finds the record as usual). `in_log` is false when seq is
// outside the salvaged log [first_seq, next_seq).
struct SalvageLocation {
  VerifyReport damage;
  std::string refused;
  bool in_log = false;
  std::string file;
  bool rebuilt = false;     // salvage rebuilds or creates `file`
  bool created = false;     // a segment of lost frames for a missing range
  bool lost = false;
  std::string reason;       // lost: why
  uint64_t offset = 0;      // kept in a rebuilt segment: its frame now
  uint64_t segment_start = 0, segment_first = 0, segment_next = 0;  // rebuilt: the rebuild's
  std::optional<uint64_t> first_seq;  // the salvaged log's
  uint64_t next_seq = 0;
};
Result<SalvageLocation> locate_salvaged(const std::string& dir, const RecoverOptions& options,
                                        uint64_t seq);

// Verifies every segment, then plans: cut a torn tail (always), salvage
// corruption only with force (FORMAT.md "Salvage"), remove leftovers.
// A dry run returns the plan; the real run carries out exactly that plan.
// Takes the LOCK (locked when a writer holds it) unless dry_run.
Result<RecoverReport> recover(const std::string& dir, const RecoverOptions& options = {});

}  // namespace alog
