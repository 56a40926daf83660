// verify(): walks every segment from its read offset and reports each
// problem with file, offset, batch boundary, sequences and classification
// (FORMAT.md "Walking a segment"). Never writes.
#include "alog/verify.h"

#include <algorithm>
#include <cerrno>
#include <bit>
#include <cstring>

#include "alog/format.h"
#include "file_cache.h"
#include "frame_reader.h"
#include "lost_runs.h"
#include "verify_internal.h"

namespace alog {

using namespace detail;
using namespace format;

const char* classification_name(Classification c) {
  switch (c) {
    case Classification::torn_tail: return "torn_tail";
    case Classification::corruption: return "corruption";
    case Classification::warning: return "warning";
  }
  return "?";
}

size_t hist_bucket(uint64_t v) {
  return std::min<size_t>(size_t(std::bit_width(v)), kHistBuckets - 1);  // bits needed for v
}

bool VerifyReport::has(Classification c) const {
  for (const auto& p : problems)
    if (p.classification == c) return true;
  return false;
}

namespace detail {
namespace {

bool ends_with(const std::string& s, std::string_view suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

Problem problem(const std::string& file, std::optional<uint64_t> off, std::string kind,
                Classification c, std::string message, std::string expected = {},
                std::string found = {}) {
  Problem p;
  p.file = file;
  p.offset = off;
  p.kind = std::move(kind);
  p.classification = c;
  p.message = std::move(message);
  p.expected = std::move(expected);
  p.found = std::move(found);
  return p;
}

struct Loaded {
  std::string name;
  std::shared_ptr<File> file;
  uint64_t length = 0;
  bool header_ok = false;
  SegmentHeader h;
  SlotChoice slots;
  uint64_t name_start = 0;
};

}  // namespace

namespace {
Result<VerifyDetail> verify_once(const std::string& path, const VerifyOptions& opt,
                                 bool lock_is_ours);
}  // namespace

// A writer that opens between the lock check and the walk of the active
// segment makes its batch in flight look like a torn tail: when the walk met
// one and the lock is taken now, or the active segment's length changed,
// the whole check runs once more (a second race in a row is reported as is).
Result<VerifyDetail> verify_detail(const std::string& path, const VerifyOptions& opt,
                                   bool lock_is_ours) {
  Fs& fs = opt.fs ? *opt.fs : posix_fs();
  ALOG_ASSIGN(VerifyDetail d, verify_once(path, opt, lock_is_ours));
  const VerifyReport& r = d.report;
  if (lock_is_ours || r.segments.empty() || r.writer_active) return d;
  bool torn = std::any_of(r.problems.begin(), r.problems.end(), [](const Problem& p) {
    return p.classification == Classification::torn_tail;
  });
  if (!torn) return d;
  const std::string active = path_join(d.dir, r.segments.back().file);
  ALOG_ASSIGN(FileStat now, fs.stat(active));
  if (!fs.is_locked(path_join(d.dir, std::string(kLockName))) && now.size == r.segments.back().file_length)
    return d;
  return verify_once(path, opt, lock_is_ours);
}

namespace {

Result<VerifyDetail> verify_once(const std::string& path, const VerifyOptions& opt,
                                 bool lock_is_ours) {
  Fs& fs = opt.fs ? *opt.fs : posix_fs();
  VerifyDetail out;
  VerifyReport& rep = out.report;
  rep.path = path;
  rep.headers_only = opt.headers_only;
  ALOG_ASSIGN(FileStat st, fs.stat(path));
  if (!st.exists) return Status(Errc::not_found, path + ": no such file or directory").at(path);
  std::string dir = path;
  std::vector<std::string> names;
  if (st.is_dir) {
    ALOG_ASSIGN(auto all, fs.list(path));
    std::sort(all.begin(), all.end());
    for (const auto& n : all) {
      if (parse_segment_name(n)) names.push_back(n);
      else if (ends_with(n, kTmpSuffix) || ends_with(n, kDelSuffix))
        rep.problems.push_back(problem(n, std::nullopt, "leftover_file", Classification::warning,
                                       "not part of the log; a writer deletes it on open"));
    }
    if (names.empty())
      return Status(Errc::not_a_log, path + ": no segment files (not an alog log)").at(path);
    rep.writer_active = !lock_is_ours && fs.is_locked(path_join(path, std::string(kLockName)));
  } else if (st.is_regular) {
    auto slash = path.find_last_of('/');
    dir = slash == std::string::npos ? "." : path.substr(0, slash);
    names.push_back(slash == std::string::npos ? path : path.substr(slash + 1));
    rep.writer_active = !lock_is_ours && fs.is_locked(path_join(dir, std::string(kLockName)));
  } else {
    return Status(Errc::not_a_log, path + ": not a directory or segment file").at(path);
  }
  out.dir = dir;

  // Headers and slots of every segment.
  std::vector<Loaded> segs;
  for (const auto& n : names) {
    Loaded l;
    l.name = n;
    l.name_start = parse_segment_name(n).value_or(0);
    std::string p = path_join(dir, n);
    ALOG_ASSIGN(auto f, fs.open(p, OpenMode::read));
    l.file = cache_segment_file(fs, p, OpenMode::read, std::move(f));
    ALOG_ASSIGN(l.length, l.file->size());
    uint8_t hdr[kHeaderSize];
    auto read = l.file->pread(hdr, kHeaderSize, 0);
    if (!read.is_ok() && read.status().is(Errc::io) && read.status().sys_errno() == EIO) {
      // An unreadable sector: damage, as salvage treats it (step 4).
      rep.problems.push_back(problem(n, 0, "io_error", Classification::corruption,
                                     "segment header: read error (" + read.status().message() + ")"));
      segs.push_back(std::move(l));
      continue;
    }
    ALOG_ASSIGN(size_t got, std::move(read));
    if (got < kHeaderSize) {
      rep.problems.push_back(problem(n, 0, "segment_header", Classification::corruption,
                                     "file has " + std::to_string(l.length) +
                                         " bytes, less than the 192-byte segment header",
                                     "192 bytes", std::to_string(l.length) + " bytes"));
      segs.push_back(std::move(l));
      continue;
    }
    HeaderError he = decode_segment_header(hdr, &l.h);
    if (he != HeaderError::none) {
      rep.problems.push_back(problem(n, 0, "segment_header", Classification::corruption,
                                     header_error_text(he)));
      segs.push_back(std::move(l));
      continue;
    }
    l.slots = choose_slot(hdr, l.h.start_sequence);
    if (l.slots.winner < 0) {
      rep.problems.push_back(problem(n, 0, "metadata_slots", Classification::corruption,
                                     l.slots.error));
      segs.push_back(std::move(l));
      continue;
    }
    l.header_ok = true;
    int loser = 1 - l.slots.winner;
    if (l.slots.state[loser] == SlotState::invalid)
      rep.problems.push_back(problem(n, kSlotAOffset + uint64_t(loser) * kSlotSize, "slot_warning",
                                     Classification::warning,
                                     std::string("losing slot ") + (loser ? "B" : "A") +
                                         " is invalid: " + l.slots.why[loser]));
    if (st.is_dir && segment_name(l.h.start_sequence) != n)
      rep.problems.push_back(problem(n, 8, "name_mismatch", Classification::warning,
                                     "file name disagrees with the header's start sequence",
                                     segment_name(l.h.start_sequence), n));
    segs.push_back(std::move(l));
  }
  // Log order: by header start sequence; unreadable headers by their name.
  std::stable_sort(segs.begin(), segs.end(), [](const Loaded& a, const Loaded& b) {
    uint64_t sa = a.header_ok ? a.h.start_sequence : a.name_start;
    uint64_t sb = b.header_ok ? b.h.start_sequence : b.name_start;
    return sa < sb;
  });

  uint64_t total = 0, done = 0;
  for (const auto& l : segs) total += l.length;
  bool have_prev = false;
  LostRuns lost;
  uint64_t lost_total = 0;
  uint64_t prev_next = 0;
  std::string prev_name;
  for (size_t i = 0; i < segs.size(); i++) {
    Loaded& l = segs[i];
    const bool active = i + 1 == segs.size();
    SegmentReport sr;
    sr.file = l.name;
    sr.active = active;
    sr.file_length = l.length;
    sr.header_ok = l.header_ok;
    SegmentDetail sd;
    sd.name = l.name;
    if (!l.header_ok) {
      sd.header_ok = false;
      rep.segments.push_back(sr);
      out.segments.push_back(sd);
      have_prev = false;
      done += l.length;
      continue;
    }
    const Slot& slot = l.slots.slot[l.slots.winner];
    sr.start_sequence = l.h.start_sequence;
    sr.first_sequence = slot.first_sequence;
    sr.read_offset = slot.read_offset;
    sr.synced_offset = slot.synced_offset;
    sr.synced_sequence = slot.synced_sequence;
    sr.generation = l.h.generation;
    sr.created_at_ms = l.h.created_at_ms;
    sr.winner_slot = l.slots.winner;
    sd.header_ok = true;
    sd.slot = slot;
    sd.generation = l.h.generation;
    sd.start_sequence = l.h.start_sequence;
    if (!rep.first_sequence) rep.first_sequence = slot.first_sequence;
    if (have_prev && prev_next != l.h.start_sequence) {
      Problem p = problem(l.name, 0, "sequence_gap", Classification::corruption,
                          prev_name + " ends at sequence " + std::to_string(prev_next) +
                              " but this segment starts at " + std::to_string(l.h.start_sequence),
                          std::to_string(prev_next), std::to_string(l.h.start_sequence));
      if (l.h.start_sequence > prev_next) {
        p.first_seq = prev_next;
        p.last_seq = l.h.start_sequence - 1;
      }
      rep.problems.push_back(p);
      sd.gap_before = true;
    }
    if (slot.synced_offset > l.length) {
      rep.problems.push_back(problem(l.name, slot.synced_offset, "synced_offset",
                                     Classification::corruption,
                                     "synced offset lies beyond the end of the file: synced data is missing",
                                     "at most " + std::to_string(l.length),
                                     std::to_string(slot.synced_offset)));
    }

    // 1 MiB reads: the window stays in L2 while its payloads are checksummed.
    FrameWindow w(l.file.get(), l.length, 1 << 20);
    Walker walk(&w, l.h.generation, read_state(slot), !opt.headers_only);
    walk.add_boundary(slot.synced_offset);
    uint64_t batch_records = 0;
    bool synced_checked = slot.synced_offset == slot.read_offset &&
                          slot.synced_sequence == slot.first_sequence &&
                          slot.synced_crc == slot.read_crc &&
                          slot.synced_pending == slot.read_pending;
    if (slot.synced_offset == slot.read_offset && !synced_checked)
      rep.problems.push_back(problem(l.name, slot.synced_offset, "synced_offset",
                                     Classification::corruption,
                                     "the slot's synced state disagrees with its read state at the same offset"));
    synced_checked = synced_checked || slot.synced_offset == slot.read_offset;
    // The first frame to reach the synced offset must end exactly there, in
    // the slot's synced state. When the state disagrees (damage before the
    // synced offset), the main walk goes on in the slot's state, as readers
    // and the writer do: what follows was written in that state. (A walk that
    // goes on tentatively past payload damage does not: a disagreement means
    // its headers are not confirmed.) True when the state disagreed.
    auto check_synced = [&](bool& checked, uint64_t frame_off, Walker& walker,
                            std::vector<Problem>& found, bool main_walk) {
      const WalkState after = walker.state();
      if (checked || after.offset < slot.synced_offset) return false;
      checked = true;
      if (after.offset > slot.synced_offset) {
        found.push_back(problem(l.name, frame_off, "synced_offset", Classification::corruption,
                              "a frame passes over the synced offset " +
                                  std::to_string(slot.synced_offset),
                              "a frame boundary at " + std::to_string(slot.synced_offset),
                              "frame " + std::to_string(frame_off) + ".." +
                                  std::to_string(after.offset)));
        return true;
      }
      if (after.seq != slot.synced_sequence || after.crc != slot.synced_crc ||
          after.pending != slot.synced_pending) {
        found.push_back(problem(
            l.name, after.offset, "synced_offset", Classification::corruption,
            "walk state at the synced offset disagrees with the slot",
            "sequence " + std::to_string(slot.synced_sequence) + ", crc " + hex32(slot.synced_crc) +
                ", pending " + std::to_string(slot.synced_pending),
            "sequence " + std::to_string(after.seq) + ", crc " + hex32(after.crc) + ", pending " +
                std::to_string(after.pending)));
        if (main_walk) {
          WalkState s = synced_state(slot);
          s.open_batch = after.open_batch;
          walker.restart(s);
        }
        return true;
      }
      return false;
    };
    Stop stop;
    struct Damaged {
      uint64_t offset, seq, cut_at;
      std::string expected, found;  // the CRCs
    };
    std::vector<Damaged> damaged;  // confirmed payload damage
    while (true) {
      WalkState before = walk.state();
      stop = walk.step();
      // In the active segment's unsynced part the first stop is a torn tail: no going on.
      bool unsynced = active && before.offset >= slot.synced_offset;
      if (stop == Stop::frame_crc && walk.frame().h.is_data() && !opt.headers_only && !unsynced) {
        // Payload damage? Go on tentatively: a later checkpoint or EOF that
        // matches confirms the headers (lengths included) in between.
        // The synced offset may lie inside the span walked tentatively: check
        // it there, and keep what that finds only if the span is confirmed.
        Walker t = walk;
        std::vector<Damaged> bad = {{before.offset, before.seq, walk.boundary().offset, walk.expected(), walk.found()}};
        t.skip_damaged_data();
        bool t_checked = synced_checked;
        std::vector<Problem> t_problems;
        std::vector<std::pair<uint64_t, uint64_t>> t_lost;  // offset, sequence
        Stop ts = Stop::none;
        bool confirmed = false;
        bool refuted = check_synced(t_checked, before.offset, t, t_problems, false);
        while (!refuted) {
          const uint64_t at_off = t.state().offset;
          ts = t.step();
          if (ts == Stop::none) {
            if (t.frame().h.is_lost()) t_lost.push_back({t.frame().offset, t.frame().seq});
            if (check_synced(t_checked, t.frame().offset, t, t_problems, false)) break;
            if (t.frame().h.is_checkpoint()) {
              confirmed = true;
              break;
            }
            continue;
          }
          if (ts == Stop::eof) {
            confirmed = true;
            break;
          }
          if (ts == Stop::frame_crc && t.frame().h.is_data()) {
            bad.push_back({t.state().offset, t.state().seq, t.boundary().offset, t.expected(), t.found()});
            t.skip_damaged_data();
            if (check_synced(t_checked, at_off, t, t_problems, false)) break;
            continue;
          }
          break;
        }
        if (confirmed) {
          synced_checked = t_checked;
          rep.problems.insert(rep.problems.end(), t_problems.begin(), t_problems.end());
          if (damaged.empty()) sd.damage_boundary = walk.boundary();
          damaged.insert(damaged.end(), bad.begin(), bad.end());
          for (auto [off, seq] : t_lost) lost.add(l.name, off, seq);
          sr.records += t.state().seq - before.seq;
          walk = t;
          if (ts == Stop::eof) {
            stop = Stop::eof;
            break;
          }
          sr.checkpoints++;
          continue;
        }
      }
      if (stop != Stop::none) break;
      const FrameInfo& f = walk.frame();
      const WalkState& after = walk.state();
      if (!synced_checked) check_synced(synced_checked, f.offset, walk, rep.problems, true);
      if (f.h.is_data()) {
        sr.records++;
        if (f.h.is_lost()) {
          lost.add(l.name, f.offset, f.seq);
        } else {
          sr.payload_bytes += f.h.word;
          rep.payload_sizes[hist_bucket(f.h.word)]++;
        }
        batch_records++;
        if (f.h.is_batch_end()) {
          sr.batches++;
          rep.batch_sizes[hist_bucket(batch_records)]++;
          batch_records = 0;
        }
      } else if (f.h.is_checkpoint()) {
        sr.checkpoints++;
      }
      if (opt.progress && (sr.records & 0xFFFF) == 0) opt.progress(done + after.offset, total);
    }
    const WalkState& at = walk.state();
    sd.stop = stop;
    sd.stop_state = at;
    sd.boundary = walk.boundary();
    sr.next_sequence = stop == Stop::eof ? at.seq : walk.boundary().seq;
    sr.size = stop == Stop::eof ? at.offset + kFrameHeaderSize : at.offset;
    sr.clean = stop == Stop::eof;
    for (const Damaged& dm : damaged) {
      Problem p = problem(l.name, dm.offset, "frame_crc", Classification::corruption,
                          "frame crc mismatch in the payload of sequence " + std::to_string(dm.seq) +
                              (active ? " before the synced offset" : " in a sealed segment") +
                              "; a later checkpoint confirms the header, so the walk goes on",
                          dm.expected, dm.found);
      p.first_seq = p.last_seq = dm.seq;
      p.cut_at = dm.cut_at;
      rep.problems.push_back(p);
      if (!sd.first_damage) sd.first_damage = dm.offset;
    }
    // A read error is damage over its sectors (FORMAT.md, Salvage step 4):
    // reported as corruption there, never as a torn tail to cut. An
    // interrupt is not damage: verify stops.
    if (w.error().is(Errc::stopped)) return w.error();
    if (stop == Stop::eof) {
      if (!active && slot.synced_offset != at.offset)
        rep.problems.push_back(problem(l.name, at.offset, "synced_offset", Classification::corruption,
                                       "a sealed segment's synced offset must be its EOF position",
                                       std::to_string(at.offset), std::to_string(slot.synced_offset)));
      if (!synced_checked && slot.synced_offset > at.offset)
        rep.problems.push_back(problem(l.name, at.offset, "synced_offset", Classification::corruption,
                                       "the walk ends before the synced offset",
                                       std::to_string(slot.synced_offset), std::to_string(at.offset)));
      if (l.length > at.offset + kFrameHeaderSize && l.h.generation > 1)
        sr.stale_bytes = l.length - at.offset - kFrameHeaderSize;  // a healthy ring's leftovers
      else if (l.length > at.offset + kFrameHeaderSize)
        rep.problems.push_back(problem(
            l.name, at.offset + kFrameHeaderSize, "bytes_after_eof", Classification::warning,
            std::to_string(l.length - at.offset - kFrameHeaderSize) +
                " bytes after the EOF; never read (a writer's open truncates them)",
            "file length " + std::to_string(at.offset + kFrameHeaderSize),
            "file length " + std::to_string(l.length)));
    } else {
      bool torn = stop != Stop::io_error && active && at.offset >= slot.synced_offset;
      Classification c = torn ? (rep.writer_active ? Classification::warning : Classification::torn_tail)
                              : Classification::corruption;
      std::string msg = stop_text(stop);
      if (stop == Stop::io_error) msg += " (" + w.error().message() + ")";
      if (torn && rep.writer_active) msg += " (a writer holds the lock: a batch in flight)";
      else if (torn) msg += " after the synced offset " + std::to_string(slot.synced_offset) + ": torn tail";
      else if (active) msg += " before the synced offset " + std::to_string(slot.synced_offset);
      else msg += " in a sealed segment";
      if (!torn && !opt.headers_only) {
        if (auto s = find_valid_data_frame(w, l.h.generation, at.offset + 1))
          msg += "; a valid frame follows at offset " + std::to_string(*s);
        if (w.error().is(Errc::stopped)) return w.error();
      }
      Problem p = problem(l.name, at.offset, stop_kind(stop), c, msg, walk.expected(), walk.found());
      p.cut_at = walk.boundary().offset;
      // Everything from the cut on is affected: the records of the
      // incomplete batch walked before the stop, and whatever followed.
      p.first_seq = walk.boundary().seq;
      if (at.seq > walk.boundary().seq) p.last_seq = at.seq - 1;
      rep.problems.push_back(p);
      // Records are counted up to the cut, as a reader sees them.
      sr.records -= at.seq - walk.boundary().seq;
    }
    // Lost records are counted apart (those a cut leaves out are gone from both counts).
    const uint64_t lost_before = lost_total;
    lost.drop_from(sr.next_sequence);
    lost_total = lost.count();
    sr.lost_records = lost_total - lost_before;
    sr.records -= sr.lost_records;
    rep.records += sr.records;
    rep.lost_records += sr.lost_records;
    rep.bytes_read += w.bytes_read();
    done += l.length;
    if (opt.progress) opt.progress(done, total);
    // The next segment must start where this one ends: by the walk when it
    // reached the EOF, else by the header-derived synced sequence.
    prev_next = stop == Stop::eof ? at.seq : slot.synced_sequence;
    have_prev = true;
    prev_name = l.name;
    rep.next_sequence = stop == Stop::eof ? at.seq : walk.boundary().seq;
    rep.segments.push_back(sr);
    out.segments.push_back(sd);
  }
  lost.report(rep.problems);
  fill_problem_ranges(out, fs);
  return out;
}

}  // namespace

}  // namespace detail

Result<VerifyReport> verify(const std::string& path, const VerifyOptions& options) {
  ALOG_ASSIGN(auto d, detail::verify_detail(path, options));
  return std::move(d.report);
}

}  // namespace alog
