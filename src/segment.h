// One segment file in memory: its header, winning slot, committed end and
// the sparse index of checkpoints. Shared (shared_ptr) between the log and
// its scanners, so a removed segment stays readable while a scanner holds it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "alog/format.h"
#include "alog/fs.h"
#include "alog/log.h"
#include "frame_reader.h"

namespace alog::detail {

// A position with a known walk state: the read offset or a checkpoint.
struct IndexEntry {
  uint64_t offset;
  uint64_t seq;
  uint32_t crc;
  uint16_t pending;
};

// Where a record is: its frame and the walk state before and after it.
struct Located {
  uint64_t offset;      // frame start
  uint32_t length;
  bool batch_end;
  WalkState before;
  WalkState after;      // state at the end of the frame
  IndexEntry entry;     // index entry the walk started from
  uint64_t headers_walked;
};

class Segment {
 public:
  Segment(std::string dir, std::string name, std::shared_ptr<File> file,
          const format::SegmentHeader& h, const uint8_t raw_header[format::kHeaderSize]);

  const std::string& name() const { return name_; }
  const std::string& path() const { return path_; }
  File& file() const { return *file_; }
  const format::SegmentHeader& header() const { return header_; }
  uint16_t generation() const { return header_.generation; }
  uint64_t start_sequence() const { return header_.start_sequence; }

  // The slots as read or last written; the writer updates them.
  int winner() const;
  format::Slot slot() const;
  void set_slots(const format::Slot slots[2], int winner);
  // Writes the losing slot with counter = winner's + 1 (not synced). The log
  // calls this with the writer's serialization.
  Status write_slot(format::Slot s);

  // Takes the slots, range and file length of a fresh look at the same file
  // (a read-only refresh), keeping this object, its index and its scanners.
  void adopt(const Segment& fresh);
  // Whether the file's header still is this segment's (not recycled under us).
  bool header_unchanged() const;

  // Committed range: [read_offset, end) holds records [first, next).
  struct Range {
    uint64_t read_offset;
    uint64_t first;
    uint32_t read_crc;
    uint16_t read_pending;
    uint64_t end;  // EOF position
    uint64_t next;
  };
  Range range() const;
  void set_range(const Range& r);
  // Publishes a batch appended at the end (new end and next). A moved read
  // offset or a shorter end drops the index entries that no longer hold.
  void publish_append(uint64_t end, uint64_t next);

  uint64_t file_length() const { return file_length_.load(); }
  void set_file_length(uint64_t n) { file_length_.store(n); }

  // Marks: recycled or removed by truncate_after (scanners stop).
  void mark_reaped() { reaped_.store(true); }
  bool reaped() const { return reaped_.load(); }
  // truncate_after cuts: each gets a number (1, 2, ...); a scanner that saw
  // cut k and finds cuts() > k asks for the lowest next-sequence cut since,
  // and stops if it had read beyond it.
  void note_cut(uint64_t next_after_cut);
  uint64_t cuts() const { return cuts_.load(); }
  uint64_t lowest_cut_since(uint64_t seen) const;

  // Finds the frame of `seq` (first <= seq < next) using the sparse index,
  // building it on first use with one sequential read.
  // With `frame`, also hands over the frame's bytes (header and payload)
  // when the walk's window already holds them (else leaves it empty).
  Result<Located> locate(uint64_t seq, std::string* frame = nullptr) const;
  // The same for a reader, who needs where the frame is, not the walk's
  // state there: before.crc and after.crc are not to be used (the running
  // CRC over the gap's headers, which only a cut writes into a slot, is not
  // taken where the gap is walked in the window of its first read; they are
  // 0 then).
  Result<Located> locate_frame(uint64_t seq, std::string* frame = nullptr) const;
  // The index entry at or before seq (builds the index if needed); in
  // *gap_end the offset and sequence where its gap ends (the next entry, or
  // the committed range's end and next sequence).
  Result<IndexEntry> entry_for(uint64_t seq, IndexEntry* gap_end) const;
  // Number of index entries (for tests and stats).
  size_t index_size() const;

  SegmentInfo info(bool active) const;

 private:
  Status build_index_locked() const;
  Result<Located> locate_walking(uint64_t seq, std::string* frame, bool crc) const;
  Status corrupt_at(uint64_t offset, uint64_t seq, const std::string& what) const;

  std::string path_;
  std::string name_;
  std::shared_ptr<File> file_;
  format::SegmentHeader header_;
  format::Slot slots_[2];
  int winner_ = 0;
  mutable std::mutex mu_;
  Range range_{};
  // Index over [read_offset, indexed_to_): entries at the read offset and each checkpoint.
  mutable std::vector<IndexEntry> index_;
  mutable uint64_t indexed_to_ = 0;  // 0: not built
  mutable WalkState index_tail_{};   // walk state at indexed_to_
  std::atomic<uint64_t> file_length_{0};
  std::atomic<bool> reaped_{false};
  std::atomic<uint64_t> cuts_{0};
  std::vector<uint64_t> cut_next_;  // next-sequence after each cut, guarded by mu_
};

using SegmentPtr = std::shared_ptr<Segment>;
using SegmentList = std::vector<SegmentPtr>;

}  // namespace alog::detail
