// recover(): the repair tool's library side. Verifies every segment, plans
// the cuts, and applies them: a torn tail through the ordinary open-time
// recovery, corruption only when forced (FORMAT.md "A forced cut"). Every
// removed byte is first copied or moved to lost+found/ with a manifest.
#include <algorithm>
#include <chrono>

#include "alog/format.h"
#include "alog/log.h"
#include "alog/verify.h"
#include "lost_found.h"
#include "verify_internal.h"

namespace alog {

using namespace detail;
using namespace format;

namespace {

struct Ctx {
  Fs& fs;
  std::string dir;
  std::function<uint64_t()> clock;
  uint64_t now() const {
    if (clock) return clock();
    using namespace std::chrono;
    return uint64_t(duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count());
  }
  std::string lost_found() const { return path_join(dir, std::string(kLostFoundName)); }
};

// Writes the losing slot of a segment file (counter = winner's + 1).
Status write_slot(File& f, const Slot& winner, int winner_idx, Slot s) {
  s.counter = static_cast<uint16_t>(winner.counter + 1);
  uint8_t buf[kSlotSize];
  encode_slot(s, buf);
  return f.pwrite(buf, kSlotSize, kSlotAOffset + uint64_t(1 - winner_idx) * kSlotSize);
}

// The forced cut at B inside segment `sd` (bytes after B already saved).
Status cut_segment(const Ctx& c, const SegmentDetail& sd, int winner_idx, const WalkState& b) {
  ALOG_ASSIGN(auto f, c.fs.open(path_join(c.dir, sd.name), OpenMode::read_write));
  if (sd.slot.synced_offset > b.offset) {
    Slot s = sd.slot;
    s.synced_offset = b.offset;
    s.synced_sequence = b.seq;
    s.synced_crc = b.crc;
    s.synced_pending = b.pending;
    if (s.read_offset > b.offset) {
      s.read_offset = b.offset;
      s.first_sequence = b.seq;
      s.read_crc = b.crc;
      s.read_pending = b.pending;
    }
    ALOG_TRY(write_slot(*f, sd.slot, winner_idx, s));
    ALOG_TRY(f->datasync());
  }
  ALOG_TRY(f->truncate(b.offset));
  uint8_t frames[2 * kFrameHeaderSize];
  size_t n = encode_end(b.crc, b.pending, sd.generation, b.open_batch, frames);
  ALOG_TRY(f->pwrite(frames, n, b.offset));
  return f->datasync();
}

// A sealed segment whose records all read, to a valid EOF where the next
// segment starts, but whose winning slot says another synced offset (the
// slot that won was damaged, and the older one wins): both slots are
// written again from the walk, so no valid slot keeps the old offset.
Status rewrite_slots(const Ctx& c, const SegmentDetail& sd, int winner_idx) {
  ALOG_ASSIGN(auto f, c.fs.open(path_join(c.dir, sd.name), OpenMode::read_write));
  Slot s = sd.slot;
  s.synced_offset = sd.stop_state.offset;
  s.synced_sequence = sd.stop_state.seq;
  s.synced_crc = sd.stop_state.crc;
  s.synced_pending = sd.stop_state.pending;
  ALOG_TRY(write_slot(*f, sd.slot, winner_idx, s));
  ALOG_TRY(f->datasync());
  Slot won = s;
  won.counter = static_cast<uint16_t>(sd.slot.counter + 1);
  ALOG_TRY(write_slot(*f, won, 1 - winner_idx, s));
  return f->datasync();
}

}  // namespace

Result<RecoverReport> recover(const std::string& dir, const RecoverOptions& opt) {
  Fs& fs = opt.fs ? *opt.fs : posix_fs();
  ALOG_ASSIGN(FileStat st, fs.stat(dir));
  if (!st.exists) return Status(Errc::not_found, dir + ": no such log directory").at(dir);
  if (!st.is_dir) return Status(Errc::not_a_log, dir + ": not a directory").at(dir);
  std::unique_ptr<FileLock> lock;
  if (!opt.dry_run) {
    ALOG_ASSIGN(lock, fs.lock(path_join(dir, std::string(kLockName))));
  }
  VerifyOptions vo;
  vo.fs = &fs;
  vo.progress = opt.progress;
  ALOG_ASSIGN(VerifyDetail d, verify_detail(dir, vo, /*lock_is_ours=*/lock != nullptr));
  RecoverReport rep;
  rep.before = d.report;
  Ctx c{fs, dir, opt.clock_ms};

  for (const auto& p : d.report.problems) {
    if (p.kind == "leftover_file") {
      RecoverAction a;
      a.action = p.file.find(".seg.tmp") != std::string::npos ? "remove_tmp" : "remove_del";
      a.file = p.file;
      a.reason = "not part of the log";
      rep.actions.push_back(a);
    } else if (p.kind == "name_mismatch") {
      RecoverAction a;
      a.action = "rename";
      a.file = p.file;
      a.reason = "rename to " + p.expected + " (the header's start sequence)";
      rep.actions.push_back(a);
    }
  }

  // The first damage in log order decides a forced cut.
  const size_t n = d.segments.size();
  std::optional<size_t> bad_seg;
  std::optional<WalkState> cut;  // none: move the whole segment and everything after
  std::string reason;
  std::vector<size_t> slot_fixes;  // sealed segments whose slots rewrite_slots() repairs
  for (size_t i = 0; i < n && !bad_seg; i++) {
    const SegmentDetail& sd = d.segments[i];
    const bool active = i + 1 == n;
    if (sd.header_ok && !active && sd.stop == Stop::eof && !sd.first_damage && !sd.gap_before &&
        sd.stop_state.offset != sd.slot.synced_offset && d.segments[i + 1].header_ok &&
        d.segments[i + 1].start_sequence == sd.stop_state.seq) {
      RecoverAction a;
      a.action = "rewrite_slots";
      a.file = sd.name;
      a.reason = "the winning slot's synced offset " + std::to_string(sd.slot.synced_offset) +
                 " is not the EOF position " + std::to_string(sd.stop_state.offset) +
                 "; every record reads";
      rep.actions.push_back(a);
      slot_fixes.push_back(i);
      continue;
    }
    if (!sd.header_ok) {
      bad_seg = i;
      reason = "unreadable segment header or slots";
    } else if (sd.gap_before) {
      bad_seg = i;
      reason = "sequence gap before this segment";
    } else if (sd.first_damage) {
      bad_seg = i;
      cut = sd.damage_boundary;
      reason = "payload damage at offset " + std::to_string(*sd.first_damage);
    } else if (sd.stop != Stop::eof) {
      bool torn = active && sd.stop_state.offset >= sd.slot.synced_offset;
      if (torn) {
        RecoverAction a;
        a.action = "cut";
        a.file = sd.name;
        a.offset = sd.boundary.offset;
        a.bytes_dropped = d.report.segments[i].file_length - sd.boundary.offset;
        a.first_seq = sd.boundary.seq;
        a.records_dropped = sd.stop_state.seq - sd.boundary.seq;
        if (a.records_dropped) a.last_seq = sd.stop_state.seq - 1;
        a.reason = std::string("torn tail: ") + stop_text(sd.stop);
        a.saved_to = std::string(kLostFoundName) + "/";
        rep.actions.push_back(a);
      } else {
        bad_seg = i;
        cut = sd.boundary;
        reason = std::string(stop_text(sd.stop)) + " at offset " + std::to_string(sd.stop_state.offset);
      }
    }
  }
  if (bad_seg) {
    rep.refused = !opt.force;
    size_t k = *bad_seg;
    for (size_t j = n; j-- > k + 1;) {
      const auto& sr = d.report.segments[j];
      RecoverAction a;
      a.action = "move_segment";
      a.file = sr.file;
      a.bytes_dropped = sr.file_length;
      if (sr.header_ok) {
        a.first_seq = sr.first_sequence;
        a.records_dropped = sr.next_sequence - sr.first_sequence;
        if (a.records_dropped) a.last_seq = sr.next_sequence - 1;
      }
      a.reason = "after the damage in " + d.segments[k].name;
      a.saved_to = std::string(kLostFoundName) + "/";
      rep.actions.push_back(a);
    }
    const auto& sr = d.report.segments[k];
    RecoverAction a;
    a.file = sr.file;
    a.reason = reason;
    a.saved_to = std::string(kLostFoundName) + "/";
    if (cut) {
      a.action = "cut";
      a.offset = cut->offset;
      a.bytes_dropped = sr.file_length - cut->offset;
      a.first_seq = cut->seq;
      uint64_t known_next = std::max(sr.next_sequence, d.segments[k].slot.synced_sequence);
      if (known_next > cut->seq) {
        a.records_dropped = known_next - cut->seq;
        a.last_seq = known_next - 1;
      }
    } else {
      a.action = "move_segment";
      a.bytes_dropped = sr.file_length;
    }
    rep.actions.push_back(a);
  }
  if (!slot_fixes.empty() && !opt.force) rep.refused = true;
  if (opt.dry_run || rep.refused) return rep;
  for (size_t i : slot_fixes)
    ALOG_TRY(rewrite_slots(c, d.segments[i], d.report.segments[i].winner_slot));

  // Apply the forced part while holding the lock.
  if (bad_seg) {
    size_t k = *bad_seg;
    const SegmentDetail& sd = d.segments[k];
    for (auto& a : rep.actions) {
      if (a.file == sd.name && a.action == "cut" && cut) {
        ALOG_ASSIGN(auto f, fs.open(path_join(dir, sd.name), OpenMode::read));
        ALOG_ASSIGN(a.saved_to, save_tail(fs, dir, *f, sd.name, cut->offset, "forced cut: " + reason, c.now()));
      }
    }
    for (auto& a : rep.actions) {
      if (a.action != "move_segment") continue;
      ALOG_ASSIGN(a.saved_to, move_to_lost_found(fs, dir, a.file, a.bytes_dropped,
                                                 a.file == sd.name ? "forced cut: " + reason : a.reason,
                                                 c.now()));
    }
    if (cut) {
      int winner = d.report.segments[k].winner_slot;
      ALOG_TRY(cut_segment(c, sd, winner, *cut));
    }
  }
  uint64_t restart = 0;
  bool emptied = false;
  {
    ALOG_ASSIGN(auto names, fs.list(dir));
    emptied = std::none_of(names.begin(), names.end(),
                           [](const std::string& s) { return parse_segment_name(s).has_value(); });
    if (emptied && bad_seg) {
      const auto& sd = d.segments[*bad_seg];
      restart = sd.header_ok ? sd.start_sequence : parse_segment_name(sd.name).value_or(0);
    }
  }
  lock.reset();
  // The ordinary open-time recovery cuts a torn tail (saving it in
  // lost+found/), removes leftovers and renames misnamed segments.
  Options o;
  o.fs = &fs;
  o.clock_ms = opt.clock_ms;
  o.start_sequence = restart;
  o.max_disk_size = 0;
  std::vector<std::string> lf_before;
  if (auto l = fs.list(c.lost_found()); l.is_ok()) lf_before = *l;
  {
    ALOG_ASSIGN(auto log, Log::open(dir, o));
    ALOG_TRY(log->close());
  }
  // Name what the open-time recovery saved for a torn-tail cut.
  if (auto l = fs.list(c.lost_found()); l.is_ok()) {
    for (const auto& name : *l) {
      if (std::find(lf_before.begin(), lf_before.end(), name) != lf_before.end()) continue;
      for (auto& a : rep.actions)
        if (a.action == "cut" && a.offset &&
            name.rfind(a.file + "@" + std::to_string(*a.offset) + ".", 0) == 0 &&
            name.size() > 4 && name.compare(name.size() - 4, 4, ".bin") == 0)
          a.saved_to = std::string(kLostFoundName) + "/" + name;
    }
  }
  rep.applied = true;
  ALOG_ASSIGN(VerifyDetail after, verify_detail(dir, vo));
  rep.after = after.report;
  return rep;
}

}  // namespace alog
