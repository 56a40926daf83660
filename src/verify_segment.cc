// verify(): the walk of one segment (verify.cc puts the segments together).
#include <algorithm>
#include <condition_variable>
#include <iterator>
#include <mutex>
#include <thread>

#include "frame_reader.h"
#include "sector_reader.h"
#include "verify_segment.h"
#include "verify_tally.h"
#include "walk_split.h"

namespace alog::detail {

using namespace format;

Problem problem(const std::string& file, std::optional<uint64_t> off, std::string kind,
                Classification c, std::string message, std::string expected, std::string found) {
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

namespace {

// Takes back the payloads of the data frames a walk accepted in [from, stop)
// after its last batch boundary `from`: a reader never sees them (their
// records are taken back with them).
void uncount_after_boundary(FrameWindow& w, uint64_t from, uint64_t stop, SegmentReport& sr,
                            SegmentWalk& out) {
  for (uint64_t off = from; off + kFrameHeaderSize <= stop;) {
    if (!w.ensure(off, kFrameHeaderSize)) return;
    const FrameHeader h = decode_frame_header(w.at(off));
    if (!h.is_data()) return;  // only data frames lie after a boundary
    if (!h.is_lost()) {
      sr.payload_bytes -= std::min<uint64_t>(sr.payload_bytes, h.word);
      if (out.payload_sizes[hist_bucket(h.word)] > 0) out.payload_sizes[hist_bucket(h.word)]--;
    }
    off += kFrameHeaderSize + (h.is_lost() ? 0 : h.word);
  }
}

}  // namespace

Result<SegmentWalk> walk_segment(const Loaded& l, bool active, size_t parts, const LockProbe& writer,
                                 const VerifyOptions& opt, const std::function<void(uint64_t)>& progress) {
  SegmentWalk out;
  SegmentReport& sr = out.sr;
  SegmentDetail& sd = out.sd;
  sr.file = l.name;
  sr.active = active;
  sr.file_length = l.length;
  sr.header_ok = true;
  sd.name = l.name;
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
  if (slot.synced_offset > l.length) {
    out.problems.push_back(problem(l.name, slot.synced_offset, "synced_offset",
                                   Classification::corruption,
                                   "synced offset lies beyond the end of the file: synced data is missing",
                                   "at most " + std::to_string(l.length),
                                   std::to_string(slot.synced_offset)));
  }

  // 1 MiB reads: the window stays in L2 while its payloads are checksummed.
  FrameWindow w(l.file.get(), l.length, 1 << 20);
  Walker walk(&w, l.h.generation, read_state(slot), !opt.headers_only);
  walk.add_boundary(slot.synced_offset);
  bool synced_checked = slot.synced_offset == slot.read_offset &&
                        slot.synced_sequence == slot.first_sequence &&
                        slot.synced_crc == slot.read_crc &&
                        slot.synced_pending == slot.read_pending;
  if (slot.synced_offset == slot.read_offset && !synced_checked)
    out.problems.push_back(problem(l.name, slot.synced_offset, "synced_offset",
                                   Classification::corruption,
                                   "the slot's synced state disagrees with its read state at the same offset"));
  synced_checked = synced_checked || slot.synced_offset == slot.read_offset;
  // The first frame to reach the synced offset must end exactly there, in
  // the slot's synced state: what is wrong if not (nothing when all is well).
  auto synced_problem = [&](uint64_t frame_off, const WalkState& after) -> std::optional<Problem> {
    if (after.offset > slot.synced_offset)
      return problem(l.name, frame_off, "synced_offset", Classification::corruption,
                     "a frame passes over the synced offset " + std::to_string(slot.synced_offset),
                     "a frame boundary at " + std::to_string(slot.synced_offset),
                     "frame " + std::to_string(frame_off) + ".." + std::to_string(after.offset));
    if (after.seq != slot.synced_sequence || after.crc != slot.synced_crc ||
        after.pending != slot.synced_pending)
      return problem(l.name, after.offset, "synced_offset", Classification::corruption,
                     "walk state at the synced offset disagrees with the slot",
                     "sequence " + std::to_string(slot.synced_sequence) + ", crc " + hex32(slot.synced_crc) +
                         ", pending " + std::to_string(slot.synced_pending),
                     "sequence " + std::to_string(after.seq) + ", crc " + hex32(after.crc) + ", pending " +
                         std::to_string(after.pending));
    return std::nullopt;
  };
  // When the state disagrees (damage before the synced offset), the main
  // walk goes on in the slot's state, as readers and the writer do: what
  // follows was written in that state. (A walk that goes on tentatively past
  // payload damage does not: a disagreement means its headers are not
  // confirmed.) True when the check found a problem.
  auto check_synced = [&](bool& checked, uint64_t frame_off, Walker& walker,
                          std::vector<Problem>& found, bool main_walk) {
    // The offset alone first: a copy of the whole state on every frame would
    // wait for the walk's narrower stores to it (a store-forwarding stall).
    if (checked || walker.state().offset < slot.synced_offset) return false;
    checked = true;
    const WalkState after = walker.state();
    auto p = synced_problem(frame_off, after);
    if (!p) return false;
    found.push_back(std::move(*p));
    if (main_walk && after.offset == slot.synced_offset) {
      WalkState s = synced_state(slot);
      s.open_batch = after.open_batch;
      walker.restart(s);
    }
    return true;
  };
  // Later parts of a long segment are walked on helper threads (jobs left
  // over when there are fewer segments than jobs), each into a tally of its
  // own, sequences counted from 0; the main walk takes a part over when it
  // reaches its checkpoint (walk_split.h).
  std::vector<Tally> part(std::max<size_t>(parts, 1));
  SplitWalk split({l.file.get(), l.length, l.h.generation, slot.read_offset, slot.synced_offset, !opt.headers_only},
                  part.size(), [&](size_t i, const Walker& hw, std::span<const RecordView> run) {
                    const FrameInfo& f = hw.frame();
                    if (!part[i].synced && hw.state().offset >= slot.synced_offset)
                      part[i].synced = {f.offset, hw.state()};
                    if (!run.empty()) return part[i].data_run(run.data(), run.size());
                    if (f.h.is_lost()) part[i].lost.push_back({f.offset, f.seq});
                    part[i].frame(f);
                  });
  // A part is taken as walked unless the main walk would have restarted in
  // the slot's state inside it (then it walks the part itself).
  const std::function<bool(size_t, uint64_t)> accept = [&](size_t i, uint64_t base) {
    Tally& t = part[i];
    if (!synced_checked && t.synced) {
      WalkState after = t.synced->after;
      after.seq += base;
      auto p = synced_problem(t.synced->frame_off, after);
      if (p && after.offset == slot.synced_offset) return false;
      synced_checked = true;
      if (p) out.problems.push_back(std::move(*p));
    }
    for (auto [off, seq] : t.lost) out.lost.add(l.name, off, base + seq);
    part[0].add(t);
    return true;
  };
  Tally& tally = part[0];
  Stop stop;
  struct Damaged {
    uint64_t offset, seq, cut_at;
    std::string expected, found;  // the CRCs
  };
  std::vector<Damaged> damaged;  // confirmed payload damage
  RecordView run[256];
  while (true) {
    // Runs of plain data frames at once (none past the synced offset before
    // it is checked); the walk's own step for the rest.
    if (const size_t n = walk.take_data(run, std::size(run), synced_checked ? UINT64_MAX : slot.synced_offset)) {
      const uint64_t had = tally.records;
      tally.data_run(run, n);
      if (!synced_checked) check_synced(synced_checked, walk.frame().offset, walk, out.problems, true);
      if (progress && (had >> 16) != (tally.records >> 16)) progress(walk.state().offset);
      split.join(walk, accept);
      continue;
    }
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
        out.problems.insert(out.problems.end(), t_problems.begin(), t_problems.end());
        if (damaged.empty()) sd.damage_boundary = walk.boundary();
        damaged.insert(damaged.end(), bad.begin(), bad.end());
        for (auto [off, seq] : t_lost) out.lost.add(l.name, off, seq);
        tally.records += t.state().seq - before.seq;
        walk = t;
        if (ts == Stop::eof) {
          stop = Stop::eof;
          break;
        }
        tally.checkpoints++;
        continue;
      }
    }
    if (stop != Stop::none) break;
    const FrameInfo& f = walk.frame();
    if (!synced_checked) check_synced(synced_checked, f.offset, walk, out.problems, true);
    if (f.h.is_lost()) out.lost.add(l.name, f.offset, f.seq);
    tally.frame(f);
    if (progress && (tally.records & 0xFFFF) == 0) progress(walk.state().offset);
    split.join(walk, accept);
  }
  tally.add_to(sr, out);
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
    out.problems.push_back(p);
    if (!sd.first_damage) sd.first_damage = dm.offset;
  }
  // A read error is damage over its sectors (FORMAT.md, Salvage step 4):
  // reported as corruption there, never as a torn tail to cut. Any other
  // failure of a read (an interrupt, no descriptor left to open the file
  // again) is not damage: verify stops with it.
  if (stop == Stop::io_error && !is_read_error(w.error())) return w.error();
  if (w.error().is(Errc::stopped)) return w.error();
  if (stop == Stop::eof) {
    if (!active && slot.synced_offset != at.offset)
      out.problems.push_back(problem(l.name, at.offset, "synced_offset", Classification::corruption,
                                     "a sealed segment's synced offset must be its EOF position",
                                     std::to_string(at.offset), std::to_string(slot.synced_offset)));
    if (!synced_checked && slot.synced_offset > at.offset)
      out.problems.push_back(problem(l.name, at.offset, "synced_offset", Classification::corruption,
                                     "the walk ends before the synced offset",
                                     std::to_string(slot.synced_offset), std::to_string(at.offset)));
    // A healthy ring's leftovers; in the active segment only if nothing of
    // its own generation is there (a sealed one is never written past its EOF).
    const uint64_t after = at.offset + kFrameHeaderSize;
    const bool stale = l.length > after && l.h.generation > 1 &&
                       (!active || stale_after_eof(w, l.h.generation, after));
    if (w.error().is(Errc::stopped)) return w.error();
    if (stale)
      sr.stale_bytes = l.length - after;
    else if (l.length > after)
      out.problems.push_back(problem(
          l.name, at.offset + kFrameHeaderSize, "bytes_after_eof", Classification::warning,
          std::to_string(l.length - at.offset - kFrameHeaderSize) +
              " bytes after the EOF; never read (a writer's open truncates them)",
          "file length " + std::to_string(at.offset + kFrameHeaderSize),
          "file length " + std::to_string(l.length)));
  } else {
    bool torn = stop != Stop::io_error && active && at.offset >= slot.synced_offset;
    const bool writer_active = torn && writer.held();
    Classification c = torn ? (writer_active ? Classification::warning : Classification::torn_tail)
                            : Classification::corruption;
    std::string msg = stop_text(stop);
    if (stop == Stop::io_error) msg += " (" + w.error().message() + ")";
    if (torn && writer_active) msg += " (a writer holds the lock: a batch in flight)";
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
    out.problems.push_back(p);
    // Records are counted up to the cut, as a reader sees them.
    sr.records -= at.seq - walk.boundary().seq;
    uncount_after_boundary(w, walk.boundary().offset, at.offset, sr, out);
  }
  out.bytes_read = w.bytes_read();
  // The next segment must start where this one ends: by the walk when it
  // reached the EOF, else by the header-derived synced sequence.
  out.next_after = stop == Stop::eof ? at.seq : slot.synced_sequence;
  out.log_next = stop == Stop::eof ? at.seq : walk.boundary().seq;
  return out;
}

}  // namespace alog::detail

namespace alog::detail {

std::vector<Result<SegmentWalk>> walk_segments(const std::vector<Loaded>& segs, const LockProbe& writer,
                                               const VerifyOptions& opt, uint64_t total) {
  const size_t n = segs.size();
  const size_t split = n == 0 ? 1 : std::max<size_t>(opt.jobs / n, 1);
  std::vector<Result<SegmentWalk>> out;
  out.reserve(n);
  auto one = [&](size_t i, const std::function<void(uint64_t)>& progress) -> Result<SegmentWalk> {
    if (!segs[i].header_ok) return SegmentWalk{};
    return walk_segment(segs[i], i + 1 == n, split, writer, opt, progress);
  };
  uint64_t done = 0;
  const size_t jobs = std::min<size_t>(std::max<unsigned>(opt.jobs, 1), n);
  if (jobs <= 1) {
    for (size_t i = 0; i < n; i++) {
      std::function<void(uint64_t)> progress;
      if (opt.progress) progress = [&](uint64_t off) { opt.progress(done + off, total); };
      out.push_back(one(i, progress));
      done += segs[i].length;
      if (opt.progress) opt.progress(done, total);
      if (!out.back().is_ok()) break;  // the caller stops at the first error
    }
    while (out.size() < n) out.emplace_back(Status(Errc::stopped, "not walked"));
    return out;
  }
  // Each thread takes the next segment not taken; results land by index,
  // and progress is told in log order as they complete.
  std::vector<std::optional<Result<SegmentWalk>>> slots(n);
  std::mutex mu;
  std::condition_variable cv;
  size_t next = 0;
  bool quit = false;
  auto worker = [&] {
    while (true) {
      size_t i;
      {
        std::lock_guard<std::mutex> g(mu);
        if (quit || next == n) return;
        i = next++;
      }
      Result<SegmentWalk> r = one(i, {});
      std::lock_guard<std::mutex> g(mu);
      if (!r.is_ok()) quit = true;  // no new segments: the first error in log order is reported
      slots[i] = std::move(r);
      cv.notify_all();
    }
  };
  std::vector<std::thread> threads;
  for (size_t t = 0; t < jobs; t++) threads.emplace_back(worker);
  {
    std::unique_lock<std::mutex> g(mu);
    for (size_t i = 0; i < n; i++) {
      cv.wait(g, [&] { return slots[i].has_value() || (quit && next <= i); });
      if (!slots[i]) break;  // never taken: an earlier segment failed
      done += segs[i].length;
      if (opt.progress) {
        g.unlock();
        opt.progress(done, total);
        g.lock();
      }
    }
  }
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < n; i++)
    out.push_back(slots[i] ? std::move(*slots[i]) : Result<SegmentWalk>(Status(Errc::stopped, "not walked")));
  return out;
}

}  // namespace alog::detail
