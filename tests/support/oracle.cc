// The expected-state oracle (see oracle.h).
#include "support/oracle.h"

#include <algorithm>
#include <sstream>

#include "alog/scanner.h"
#include "alog/verify.h"

namespace alog::test {

namespace {

uint64_t splitmix(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::string range_text(uint64_t a, uint64_t b) {
  return "[" + std::to_string(a) + ", " + std::to_string(b) + ")";
}

std::string ends_text(const std::set<uint64_t>& ends, uint64_t from) {
  std::string s;
  int n = 0;
  for (auto it = ends.lower_bound(from); it != ends.end(); ++it) {
    if (n++ == 12) return s + " ...";
    if (!s.empty()) s.push_back(' ');
    s.append(std::to_string(*it));
  }
  return s.empty() ? "(none)" : s;
}

}  // namespace

std::string make_payload(uint64_t seq, uint64_t tag, size_t len) {
  std::string p(len, '\0');
  uint64_t x = seq * 0x2545F4914F6CDD1Dull ^ (tag + 1) * 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < len; i += 8) {
    uint64_t r = splitmix(x);
    for (size_t j = i; j < std::min(len, i + 8); j++, r >>= 8) p[j] = static_cast<char>(r);
  }
  return p;
}

LiveState live_state(const Log& log) {
  LiveState s;
  s.failed = log.failed();
  s.first = log.first_sequence();
  s.next = log.next_sequence();
  auto segs = log.segments();
  s.segments = segs.size();
  s.active_start = segs.empty() ? s.next : segs.back().start_sequence;
  s.second_start = segs.size() > 1 ? segs[1].start_sequence : s.next;
  for (const auto& g : segs) {
    s.bounds.push_back(g.start_sequence);
    s.bounds.push_back(g.next_sequence);
  }
  return s;
}

std::string CheckReport::text() const {
  std::string s;
  for (const auto& v : violations) s += v + "\n";
  return s;
}

Oracle::Oracle(uint64_t start_sequence, uint32_t max_segments) : max_segments_(max_segments) {
  s_.floor = s_.first = s_.first_hi = s_.next = s_.durable = start_sequence;
  s_.ends.insert(start_sequence);
}

std::string Oracle::describe() const {
  std::ostringstream o;
  o << "model: first " << s_.first << " (floor " << s_.floor << ", may rise to " << s_.first_hi
    << "), next " << s_.next << ", durable up to " << s_.durable << ", allowed ends "
    << ends_text(s_.ends, s_.durable) << (uncertain_ ? ", uncertain after a failure" : "")
    << (in_flight_.empty() ? "" : ", last operation: " + in_flight_);
  return o.str();
}

void Oracle::note_live(const char* op, const LiveState& after) {
  if (after.failed) return;
  if (after.first != s_.first || after.next != s_.next)
    live_violations_.push_back(std::string("after ") + op + " the live log holds " +
                               range_text(after.first, after.next) + " but the model expects " +
                               range_text(s_.first, s_.next));
}

void Oracle::erase_below(uint64_t seq) {
  s_.payloads.erase(s_.payloads.begin(), s_.payloads.lower_bound(seq));
  s_.ends.erase(s_.ends.begin(), s_.ends.lower_bound(seq));
}

// After an acknowledged sync: what lies beyond the end can no longer appear,
// and of several versions of a record only the newest can. (Not while a
// failure is unresolved: a truncate whose fsync failed may still be undone by
// a crash, and a sync that writes nothing new does not redo it.)
void Oracle::collapse_synced() {
  s_.durable = s_.next;
  if (uncertain_) return;
  s_.payloads.erase(s_.payloads.lower_bound(s_.next), s_.payloads.end());
  for (auto& [seq, v] : s_.payloads)
    if (v.size() > 1) v.erase(v.begin(), v.end() - 1);
  s_.ends.erase(s_.ends.upper_bound(s_.next), s_.ends.end());
  s_.ends.insert(s_.next);
}

// ---- Events ------------------------------------------------------------------

void Oracle::begin_append(const std::vector<std::string>& batch, const LiveState& before) {
  saved_ = s_;
  in_flight_ = "append of " + std::to_string(batch.size()) + " records at " + std::to_string(s_.next);
  // A roll at the segment limit recycles the oldest segment: its records may go.
  if (max_segments_ > 1 && before.segments >= max_segments_)
    s_.first_hi = std::max(s_.first_hi, before.second_start);
  for (size_t i = 0; i < batch.size(); i++) s_.payloads[s_.next + i].push_back(batch[i]);
  s_.next += batch.size();
  s_.ends.insert(s_.next);
}

void Oracle::end_append(bool ok, const LiveState& after) {
  if (!ok && after.failed) {
    uncertain_ = true;  // the batch may be there or not, a recycle may have happened
    return;
  }
  // Refused before writing, or the write failed and was rolled back (and the
  // rollback synced): the batch is certainly absent.
  if (!ok) s_ = saved_;
  // A recycle moved the first sequence (its rename was synced: the records are gone).
  if (after.first > s_.first) {
    if (ok) {
      erase_below(after.first);
      s_.floor = after.first;
    }
    s_.first = after.first;
  }
  s_.first_hi = std::max(saved_.first_hi, s_.first);
  // A roll synced everything before the new active segment.
  s_.durable = std::max(s_.durable, std::min(after.active_start, s_.next));
  note_live(ok ? "an append" : "a failed append that did not fail the log", after);
}

void Oracle::begin_sync() {
  saved_ = s_;
  in_flight_ = "sync";
}

void Oracle::end_sync(bool ok, const LiveState& after) {
  if (!ok) {
    uncertain_ = true;
    return;
  }
  collapse_synced();
  note_live("a sync", after);
}

void Oracle::begin_roll(const LiveState& before) {
  saved_ = s_;
  in_flight_ = "roll at " + std::to_string(s_.next);
  // At the segment limit the roll recycles the oldest segment: its records may go.
  if (max_segments_ > 1 && before.segments >= max_segments_)
    s_.first_hi = std::max(s_.first_hi, before.second_start);
}

void Oracle::end_roll(bool ok, const LiveState& after) {
  if (!ok && after.failed) {
    uncertain_ = true;  // the seal may have been synced, a recycle may have happened
    return;
  }
  // Refused before sealing (one segment allowed, the disk budget): nothing changed.
  if (!ok) {
    s_ = saved_;
    note_live("a refused roll", after);
    return;
  }
  collapse_synced();  // the sealed segment was synced
  if (after.first > s_.first) {  // a recycle (its rename was synced: the records are gone)
    erase_below(after.first);
    s_.floor = s_.first = after.first;
  }
  s_.first_hi = std::max(saved_.first_hi, s_.first);
  note_live("a roll", after);
}

void Oracle::begin_truncate_before(uint64_t seq) {
  saved_ = s_;
  in_flight_ = "truncate_before(" + std::to_string(seq) + ")";
  if (seq > s_.first && seq <= s_.next) s_.first_hi = std::max(s_.first_hi, seq);
  pending_seq_ = seq;
}

void Oracle::end_truncate_before(bool ok, const LiveState& after) {
  uint64_t seq = pending_seq_;
  if (ok) {
    if (seq > s_.first && seq <= s_.next) {
      erase_below(seq);
      s_.floor = s_.first = seq;
      s_.first_hi = std::max(saved_.first_hi, seq);
      s_.durable = std::max(s_.durable, seq);
    }
    note_live("truncate_before", after);
    return;
  }
  if (after.failed) {
    uncertain_ = true;
    return;
  }
  // Refused (out_of_bounds), or an error after whole segments were removed
  // (their renames were synced) but before the slot was written.
  s_ = saved_;
  if (after.first > s_.first) {
    s_.first = after.first;
    s_.first_hi = std::max(s_.first_hi, after.first);
    s_.durable = std::max(s_.durable, std::min(after.first, s_.next));
  }
  note_live("a failed truncate_before that did not fail the log", after);
}

void Oracle::begin_truncate_after(uint64_t seq) {
  saved_ = s_;
  in_flight_ = "truncate_after(" + std::to_string(seq) + ")";
  pending_seq_ = seq;
  if (seq < s_.first || seq >= s_.next) return;  // out_of_bounds: nothing happens
  s_.durable = std::min(s_.durable, seq + 1);
  s_.ends.insert(seq + 1);
}

void Oracle::end_truncate_after(bool ok, const LiveState& after) {
  uint64_t seq = pending_seq_;
  if (ok) {
    s_.payloads.erase(s_.payloads.upper_bound(seq), s_.payloads.end());
    s_.ends.erase(s_.ends.upper_bound(seq + 1), s_.ends.end());
    s_.ends.insert(seq + 1);
    s_.next = s_.durable = seq + 1;
    note_live("truncate_after", after);
    return;
  }
  if (after.failed) {
    uncertain_ = true;
    return;
  }
  s_ = saved_;
  note_live("a failed truncate_after that did not fail the log", after);
}

void Oracle::end_close(bool ok) {
  in_flight_ = "close";
  if (!ok) {
    uncertain_ = true;
    return;
  }
  collapse_synced();
}

void Oracle::open_failed() {
  in_flight_ = "open";
  uncertain_ = true;
}

// ---- Wrappers -------------------------------------------------------------------

namespace {
bool refused_as_failed(const Status& st) { return st.code() == Errc::log_failed; }
}  // namespace

Result<uint64_t> Oracle::append(Log& log, const std::vector<std::string>& batch) {
  std::vector<std::string_view> v(batch.begin(), batch.end());
  if (log.failed() || batch.empty()) {
    auto r = log.append(v);
    if (log.failed() && !batch.empty() && (r.is_ok() || !refused_as_failed(r.status())))
      live_violations_.push_back("an append on a failed log was not refused with log_failed");
    return r;
  }
  begin_append(batch, live_state(log));
  auto r = log.append(v);
  LiveState after = live_state(log);
  if (r.is_ok() && *r + 1 != after.next)
    live_violations_.push_back("append returned " + std::to_string(*r) + " but the next sequence is " +
                               std::to_string(after.next));
  end_append(r.is_ok(), after);
  return r;
}

Status Oracle::sync(Log& log) {
  if (log.failed()) {
    Status st = log.sync();
    if (!refused_as_failed(st)) live_violations_.push_back("a sync on a failed log was not refused with log_failed");
    return st;
  }
  begin_sync();
  Status st = log.sync();
  end_sync(st.is_ok(), live_state(log));
  return st;
}

Status Oracle::roll(Log& log) {
  if (log.failed()) {
    Status st = log.roll();
    if (!refused_as_failed(st)) live_violations_.push_back("a roll on a failed log was not refused with log_failed");
    return st;
  }
  begin_roll(live_state(log));
  Status st = log.roll();
  end_roll(st.is_ok(), live_state(log));
  return st;
}

Status Oracle::truncate_before(Log& log, uint64_t seq) {
  if (log.failed()) {
    Status st = log.truncate_before(seq);
    if (!refused_as_failed(st))
      live_violations_.push_back("a truncate_before on a failed log was not refused with log_failed");
    return st;
  }
  begin_truncate_before(seq);
  Status st = log.truncate_before(seq);
  end_truncate_before(st.is_ok(), live_state(log));
  return st;
}

Status Oracle::truncate_after(Log& log, uint64_t seq) {
  if (log.failed()) {
    Status st = log.truncate_after(seq);
    if (!refused_as_failed(st))
      live_violations_.push_back("a truncate_after on a failed log was not refused with log_failed");
    return st;
  }
  begin_truncate_after(seq);
  Status st = log.truncate_after(seq);
  end_truncate_after(st.is_ok(), live_state(log));
  return st;
}

Status Oracle::close(Log& log) {
  bool was_failed = log.failed();
  Status st = log.close();
  // A failed log skips the final sync: nothing new is durable.
  end_close(st.is_ok() && !was_failed);
  return st;
}

// ---- Checking -------------------------------------------------------------------

CheckReport Oracle::check_open(Log& log, Fs* fs, const CheckOptions& co) {
  const bool after_crash = co.after_crash, synced_may_be_lost = co.synced_may_be_lost;
  CheckReport r;
  r.opened = true;
  const uint64_t first = log.first_sequence(), next = log.next_sequence();
  r.first = first;
  r.next = next;
  auto bad = [&](std::string v) { r.violations.push_back(std::move(v)); };

  // Every record, in order, with its sequence.
  std::vector<std::pair<uint64_t, std::string>> seen;
  bool complete = true;  // every record was read back
  auto io_error = [&](const Status& st) {
    if (!co.tolerate_io_errors || st.code() != Errc::io) return false;
    complete = false;
    return true;
  };
  auto sc = log.scan(first);
  if (!sc.is_ok()) {
    if (!io_error(sc.status())) bad("scan: " + sc.status().to_string());
    complete = false;
  } else {
    while (true) {
      auto more = (*sc)->next();
      if (!more.is_ok()) {
        if (!io_error(more.status()))
          bad("scan stopped at sequence " + std::to_string((*sc)->position()) + ": " +
              more.status().to_string());
        complete = false;
        break;
      }
      if (!*more) break;
      uint64_t want = first + seen.size();
      if ((*sc)->sequence() != want) {
        bad("scan returned sequence " + std::to_string((*sc)->sequence()) + " where " +
            std::to_string(want) + " was due (a gap)");
        break;
      }
      seen.emplace_back(want, std::string((*sc)->payload()));
    }
  }
  if (complete && seen.size() != next - first)
    bad("the log says " + range_text(first, next) + " but a scan found " +
        std::to_string(seen.size()) + " records");

  // First and next sequence against the model.
  if (first < s_.floor)
    bad("records " + range_text(first, s_.floor) +
        " came back after their removal was acknowledged (first sequence " + std::to_string(first) + ")");
  if (s_.first_hi < s_.durable && !synced_may_be_lost) {
    if (first > s_.first_hi)
      bad("synced records " + range_text(s_.first_hi, std::min(first, s_.durable)) +
          " are lost (the log starts at " + std::to_string(first) + ")");
    if (next < s_.durable)
      bad("synced records " + range_text(std::max(next, s_.first_hi), s_.durable) +
          " are lost (the log ends at " + std::to_string(next) + ")");
  }
  bool end_ok = next == first || (next >= s_.durable && s_.ends.count(next));
  if (!end_ok && next >= s_.durable)
    bad("the log ends at " + std::to_string(next) +
        ", which is no batch end the model allows (a partial batch, or records that should be gone); allowed: " +
        ends_text(s_.ends, s_.durable));
  // Payloads, byte for byte.
  int reported = 0;
  for (const auto& [seq, payload] : seen) {
    auto it = s_.payloads.find(seq);
    std::string v;
    if (it == s_.payloads.end()) {
      v = "record " + std::to_string(seq) + " should not exist (stale, truncated or never appended)";
    } else if (std::find(it->second.begin(), it->second.end(), payload) == it->second.end()) {
      v = "record " + std::to_string(seq) + " differs from what was appended (" +
          std::to_string(payload.size()) + " bytes, expected " +
          std::to_string(it->second.back().size()) + ")";
    }
    if (!v.empty() && reported++ < 5) bad(v);
  }
  if (reported > 5) bad(std::to_string(reported - 5) + " more records differ");

  // verify() finds no damage. Warnings allowed: an invalid losing slot (a torn
  // slot update) and stale frames after the EOF of a recycled file.
  VerifyOptions vo;
  vo.fs = fs;
  auto rep = verify(log.dir(), vo);
  if (!rep.is_ok()) {
    if (!io_error(rep.status())) bad("verify: " + rep.status().to_string());
  } else {
    bool read_fault = false;  // a read fault still armed: verify saw it as damage
    for (const auto& p : rep->problems) {
      if (co.tolerate_io_errors && p.kind == "io_error") {
        read_fault = true;
        continue;
      }
      bool harmless = p.classification == Classification::warning &&
                      (p.kind == "slot_warning" || p.kind == "bytes_after_eof");
      if (p.kind == "bytes_after_eof") {
        for (const auto& sr : rep->segments)
          if (sr.file == p.file && (sr.generation < 2 || sr.active)) harmless = false;
      }
      if (!harmless)
        bad("verify: " + p.file + ":" + (p.offset ? std::to_string(*p.offset) : "-") + ": " + p.kind +
            " (" + classification_name(p.classification) + "): " + p.message);
    }
    if (!read_fault && rep->records != next - first)
      bad("verify counts " + std::to_string(rep->records) + " records, the log " +
          std::to_string(next - first));
  }
  if (!r.ok()) r.violations.push_back(describe());
  pin(log, seen, complete, after_crash);
  return r;
}

void Oracle::pin(Log& log, const std::vector<std::pair<uint64_t, std::string>>& seen,
                 bool complete, bool after_crash) {
  const uint64_t first = log.first_sequence(), next = log.next_sequence();
  LiveState ls = live_state(log);
  if (complete && (after_crash || !uncertain_)) {
    s_.payloads.clear();
    for (const auto& [seq, p] : seen) s_.payloads[seq] = {p};
    s_.floor = first;
    s_.ends.clear();
    uncertain_ = false;
  } else {
    // The page cache showed this state; a crash may still undo a failed
    // operation's changes that no fsync made durable.
    for (const auto& [seq, p] : seen) {
      auto& v = s_.payloads[seq];
      v.erase(std::remove(v.begin(), v.end(), p), v.end());
      v.push_back(p);
    }
  }
  s_.first = s_.first_hi = first;
  s_.next = s_.durable = next;
  s_.ends.insert(next);
  for (uint64_t b : ls.bounds) s_.ends.insert(b);
  saved_ = s_;
  in_flight_.clear();
}

CheckReport Oracle::reopen_and_check(const std::string& dir, const Options& options,
                                     const CheckOptions& co, std::unique_ptr<Log>* out) {
  auto log = Log::open(dir, options);
  if (!log.is_ok()) {
    CheckReport r;
    r.violations.push_back("the log does not open: " + log.status().to_string());
    r.violations.push_back(describe());
    open_failed();
    return r;
  }
  CheckReport r = check_open(**log, options.fs, co);
  if (out) *out = std::move(*log);
  return r;
}

}  // namespace alog::test
