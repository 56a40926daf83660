// alog cat DIR|SEGMENT: records in order, raw or as NDJSON; -f follows the
// log as it grows, across rolls, recycling and truncation, waking when the
// directory changes; -F also waits for a log that does not exist yet.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <deque>
#include <vector>

#include "alog/crc32c.h"
#include "alog/scanner.h"
#include "cat_printer.h"
#include "cli.h"
#include "cursor.h"
#include "read_damage.h"
#include "report.h"
#include "segment_file.h"
#include "watch.h"

namespace alog::cli {

namespace {

struct CatOptions {
  std::string dir;
  std::optional<std::string> from, to, count, last;
  bool null = false, len32 = false, seq = false, follow = false, follow_retry = false,
       salvage = false;
  std::optional<std::string> payload;
  std::optional<std::string> cursor_file;
  std::string jobs = "0";  // one per core
  int poll_ms = 100;
};

// The range asked for, resolved against the log.
struct Range {
  uint64_t from = 0;
  std::optional<uint64_t> to;     // inclusive
  std::optional<uint64_t> count;  // at most this many records
};

// How cat shows each record, from its options.
RecordStyle record_style(const CatOptions& o, const Global& g) {
  RecordStyle s;
  s.json = g.json();
  s.enc = o.payload ? parse_payload_encoding(*o.payload)
                    : s.json ? PayloadEncoding::base64 : PayloadEncoding::utf8;
  s.seq = o.seq;
  s.null = o.null;
  s.len32 = o.len32;
  return s;
}

// next() is asked only for --last: without it, a tail walked in the
// background (cat_dir_records) is read while it is walked.
template <class Next>
Range resolve(const CatOptions& o, uint64_t first, Next&& next) {
  Range r;
  r.from = o.from ? *parse_u64(*o.from) : first;
  if (o.last) {
    uint64_t n = *parse_u64(*o.last), end = next();
    r.from = end - first > n ? end - n : first;
  }
  if (o.to) r.to = *parse_u64(*o.to);
  if (o.count) r.count = *parse_u64(*o.count);
  return r;
}

bool done(const Range& r, const Printer& p, uint64_t pos) {
  return (r.count && p.printed() >= *r.count) || (r.to && pos > *r.to);
}

// cat of a single segment file: the library's walk, as if it were active.
// A first walk finds where the records end (the EOF, or the last batch
// boundary before a stop: a partial batch is never shown); the second prints.
int cat_segment(const CatOptions& o, const Global& g, Printer& p) {
  if (o.follow) throw UsageError("--follow needs a log directory, not a segment file");
  if (o.cursor_file) throw UsageError("--cursor-file needs a log directory, not a segment file");
  SegmentFile seg = open_segment_file(o.dir);
  require_walkable(seg);
  const format::Slot& w = seg.winner();
  inspect::FrameWalker probe(seg, /*read_payloads=*/true);
  inspect::Frame end;
  do {
    end = next_frame(probe, seg);
    check_interrupted();
  } while (!end.stops() && !end.eof());
  const uint64_t next = end.eof() ? probe.sequence() : probe.boundary_sequence();
  Range r = resolve(o, w.first_sequence, [&] { return next; });
  inspect::FrameWalker walk(seg, /*read_payloads=*/true);
  for (uint64_t seq = w.first_sequence; seq < next && !done(r, p, seq);) {
    inspect::Frame f = next_frame(walk, seg);
    if (f.stops() || f.eof()) break;  // the file changed under us: the first walk decides
    if (!f.header.is_data()) continue;
    seq = f.sequence + 1;
    if (f.sequence >= r.from) {
      if (f.header.is_lost()) p.lost(f.sequence);
      else p.record(f.sequence, f.payload);
    }
    check_interrupted();
  }
  p.flush_lost();
  p.flush();
  if (!end.stops()) return kExitOk;
  std::string what = end.problem + (end.expected.empty() ? "" : " (expected " + end.expected + ", found " + end.found + ")");
  if (end.offset >= w.synced_offset) {
    warn(g, o.dir, end.offset, "torn tail: " + what + "; the records end here");
    return kExitOk;
  }
  // Damage, reported as with a log directory: verify's problem.
  if (auto pr = problem_met("", o.dir, end.offset, Classification::corruption)) {
    p.problem(*pr);
    p.flush();
    err_corruption(o.dir, *pr);
    return kExitDamaged;
  }
  throw Failure("corrupt", o.dir, end.offset, what + fmt::format(" at sequence {}", end.sequence),
                kExitDamaged);
}

// The CRCs of the last records written, to tell after a truncate_after cut
// which of them the log still holds.
class Written {
 public:
  void add(uint64_t seq, uint32_t crc) {
    if (!v_.empty() && v_.back().first + 1 != seq) v_.clear();
    v_.emplace_back(seq, crc);
    if (v_.size() > kKeep) v_.pop_front();
  }
  // The first of the written records [.., pos) the log no longer holds as
  // written (pos when it holds them all, as far as they are remembered).
  // Only a record that is gone (not_found) or different counts: another
  // error (a segment recycled under the read) proves nothing.
  uint64_t first_lost(const Log& log, uint64_t pos) const {
    uint64_t lost = pos;
    for (auto it = v_.rbegin(); it != v_.rend(); ++it) {
      if (it->first >= pos) continue;
      auto rec = log.read(it->first);
      if (!rec && rec.status().code() != Errc::not_found) break;
      if (rec && crc32c(rec->payload.data(), rec->payload.size()) == it->second) break;
      lost = it->first;
    }
    return lost;
  }
  bool empty() const { return v_.empty(); }
  uint64_t last() const { return v_.back().first; }

 private:
  static constexpr size_t kKeep = 4096;
  std::deque<std::pair<uint64_t, uint32_t>> v_;
};

// --cursor-file: where the output starts (after the cursor's record, which
// must still be in the log as it was), and the cursor rewritten once the
// records before it are out of this process.
class CursorKeeper {
 public:
  CursorKeeper(const CatOptions& o, Printer& p) : o_(o), p_(p) {}

  // The cursor, checked against the log: a Failure (exit 4) when its record
  // is gone or differs. nullopt without a cursor (or with --from/--last,
  // which override it).
  std::optional<Cursor> start(const Log& log) {
    if (!o_.cursor_file || o_.from || o_.last) return std::nullopt;
    auto c = read_cursor(*o_.cursor_file);
    if (!c) return std::nullopt;
    auto rec = log.read(c->seq);
    std::string what;
    if (!rec && rec.status().code() == Errc::not_found)
      what = fmt::format("is no longer in the log [{}, {})", log.first_sequence(), log.next_sequence());
    else if (!rec)
      fail(rec.status(), o_.dir);
    else if (crc32c(rec->payload.data(), rec->payload.size()) != c->crc)
      what = "differs from the one the cursor names (truncated, recycled or salvaged and written again)";
    if (!what.empty())
      throw Failure("cursor_mismatch", *o_.cursor_file, std::nullopt,
                    fmt::format("the record at the cursor (sequence {}, crc {}) {}; give --from to "
                                "start anyway",
                                c->seq, hex32(c->crc), what),
                    kExitDamaged);
    saved_ = c->seq;
    return c;
  }

  // Flushes stdout, then rewrites the cursor when records were written since.
  void save() {
    if (!o_.cursor_file || !p_.last_seq() || saved_ == p_.last_seq()) return;
    p_.flush();
    write_cursor(*o_.cursor_file, {*p_.last_seq(), p_.last_crc()});
    saved_ = p_.last_seq();
  }
  // After records were printed: when some of them reached standard output
  // (a chunk was written), the rest is flushed and the cursor saved, so a
  // consumer killed mid-read gets again at most what it had not been given.
  void after_output() {
    if (!o_.cursor_file || p_.writes() == seen_writes_) return;
    save();
    seen_writes_ = p_.writes();
  }
  // As save() on the way out of an error: a failure to save is dropped (the
  // error at hand is what the command reports).
  void save_quietly() noexcept {
    try {
      save();
    } catch (...) {
    }
  }

 private:
  const CatOptions& o_;
  Printer& p_;
  std::optional<uint64_t> saved_;
  uint64_t seen_writes_ = 0;
};

// cat -F: the log once it exists (its directory holds a segment).
std::unique_ptr<Log> wait_for_log(const CatOptions& o, DirWatch& watch) {
  while (true) {
    // Watch first, then look: a log created in between wakes the wait.
    if (!watch.watch(o.dir)) watch.watch(dir_name(o.dir));
    auto r = Log::open_read(o.dir);
    if (r) return std::move(r).value();
    Errc c = r.status().code();
    if (c != Errc::not_found && c != Errc::not_a_log) fail(r.status(), o.dir);
    if (!watch.wait()) check_interrupted();
  }
}

int cat_dir_records(const CatOptions& o, const Global& g, Printer& p, CursorKeeper& keeper);

// Whether the log's tail is torn with no writer to finish it: a batch in
// flight when the look was made is no damage, and a writer that was
// mid-batch then may have finished and let go of the lock since. So the
// tail is looked at again once no writer holds the lock: torn where it was
// torn before, it is a torn tail.
bool torn_without_writer(Log& log, const std::string& dir) {
  if (log.torn_tail().empty() || writer_active(dir)) return false;
  const std::string seen = log.torn_tail();
  if (Status st = log.refresh(); !st.is_ok()) fail(st, dir);
  return log.torn_tail() == seen;
}

// Records taken from the scanner at a time (at most a read window's worth come).
constexpr size_t kBatch = 4096;

// Whether cat reads the records on every core (scan_rendered): all of them
// to the end, shown by their payloads alone, and not followed (a follower
// keeps every record's CRC to tell a cut).
bool read_rendered(const CatOptions& o, const Printer& p) {
  return !o.follow && !o.to && !o.count && p.plain();
}

// The records scan_rendered vouches for from `from`, printed; returns the
// scanner that reads on after them (at the end of the log, or at what
// stopped the parallel read: damage, a lost record).
std::unique_ptr<Scanner> cat_rendered(const CatOptions& o, const Log& log, uint64_t from, Printer& p,
                                      Progress& progress, CursorKeeper& keeper) {
  RenderedScanOptions ro;
  ro.threads = o.jobs == "0" ? 0 : jobs_of(o.jobs);  // 0: the library's one per core, at most 8
  ro.render = [&p](std::span<const std::string_view> payloads, RenderedBytes& out) {
    p.render_plain(payloads, out);
  };
  ro.write = [&](std::string_view bytes, uint64_t first, uint64_t records, uint32_t last_crc) -> Status {
    p.rendered(bytes, records, first + records - 1, last_crc);
    keeper.after_output();
    progress.update(p.printed(), 0);
    check_interrupted();
    return {};
  };
  auto sc = scan_rendered(log, from, ro);
  if (!sc) fail(sc.status(), o.dir);
  return std::move(sc).value();
}

int cat_dir(const CatOptions& o, const Global& g, Printer& p) {
  CursorKeeper keeper(o, p);
  try {
    int exit = cat_dir_records(o, g, p, keeper);
    keeper.save();
    return exit;
  } catch (Failure&) {
    keeper.save_quietly();
    throw;
  }
}

int cat_dir_records(const CatOptions& o, const Global& g, Printer& p, CursorKeeper& keeper) {
  // Without inotify, a look every poll_ms; a watch starts before a look
  // (before the log's first with -F, before the first wait with -f), so no
  // change after it is missed.
  DirWatch watch(o.poll_ms);
  std::unique_ptr<Log> log;
  if (o.follow_retry) {
    log = wait_for_log(o, watch);
    watch.watch(o.dir);  // the log's own directory now; look again after it
    if (Status st = log->refresh(); !st.is_ok()) fail(st, o.dir);
  } else {
    log = open_read_or_fail(o.dir, /*background_tail=*/!o.follow);
  }
  // A follower watches from its first wait (below): one whose records are
  // all there already never makes a watch, whose close waits for the
  // kernel's grace period (10-20 ms here).
  bool watching = o.follow_retry;
  Range r = resolve(o, log->first_sequence(), [&] { return log->next_sequence(); });
  // Only a start past the first record can lie past the end: the end is
  // asked for (which waits for a background walk) only then.
  auto past_end = [&](uint64_t from) { return from > log->first_sequence() && from > log->next_sequence(); };
  Written written;
  if (auto c = keeper.start(*log)) {
    r.from = c->seq + 1;
    written.add(c->seq, c->crc);  // a cut below the cursor is a reset too
  }
  if (!o.follow && past_end(r.from))
    if (auto exit = report_read_damage(g, *log, o.dir, r.from)) return *exit;
  if (!o.follow && past_end(r.from))
    fail("out_of_bounds", o.dir, std::nullopt,
         fmt::format("--from {} is past the end of the log (next sequence {})", r.from,
                     log->next_sequence()));
  if (o.from && r.from < log->first_sequence())
    warn(g, o.dir, std::nullopt,
         fmt::format("--from {}: the log's first record is {} (those before it were removed, or never "
                     "written); starting there",
                     r.from, log->first_sequence()));
  Progress progress(g, "cat", /*delayed=*/true);
  uint64_t pos = std::max(r.from, log->first_sequence());
  bool torn_warned = false;
  auto new_scanner = [&] {
    auto sc = log->scan(pos, r.to);
    if (!sc) fail(sc.status(), o.dir);
    return std::move(sc).value();
  };
  // A follower asked for records beyond the end has no scanner until they exist.
  std::unique_ptr<Scanner> sc;
  if (!past_end(pos)) {
    if (read_rendered(o, p)) {
      sc = cat_rendered(o, *log, pos, p, progress, keeper);
      pos = sc->position();
    } else {
      sc = new_scanner();
    }
  }
  std::vector<RecordView> batch(kBatch);
  while (true) {
    bool reaped = false;
    while (sc && !done(r, p, pos)) {
      // At most the records --count still allows (lost ones do not count).
      size_t want = batch.size();
      if (r.count) want = size_t(std::min<uint64_t>(want, *r.count - p.printed()));
      auto more = sc->next_batch(std::span<RecordView>(batch.data(), want));
      if (!more) {
        if (o.follow && more.status().code() == Errc::segment_reaped) {
          reaped = true;
          break;
        }
        progress.clear();
        const Status& st = more.status();
        std::optional<Problem> pr;
        if (st.code() == Errc::corrupt && !st.path().empty())
          pr = problem_met(o.dir, st.path(), st.offset(), Classification::corruption);
        if (!pr) fail(st, o.dir);
        p.problem(*pr);
        p.flush();
        err_corruption(st.path(), *pr);
        return kExitDamaged;
      }
      if (*more == 0) break;
      const std::span<const RecordView> got(batch.data(), *more);
      p.records(got);
      keeper.after_output();
      if (o.follow)  // the follower's check for cuts needs every record's CRC
        for (const RecordView& rec : got)
          if (!rec.lost) written.add(rec.sequence, crc32c(rec.payload.data(), rec.payload.size()));
      pos = got.back().sequence + 1;
      progress.update(p.printed(), 0);
      check_interrupted();
    }
    p.flush_lost();
    if (done(r, p, pos)) return kExitOk;
    if (!reaped && !log->damage().is_ok() && pos >= log->next_sequence()) {
      progress.clear();
      // A corrupt header or a gap ends the readable records.
      p.flush();  // before the problem report_read_damage prints
      if (auto exit = report_read_damage(g, *log, o.dir, pos)) return *exit;
      if (auto exit = report_open_damage(g, *log, o.dir)) return *exit;
      fail(log->damage(), o.dir);
    }
    if (!reaped && !torn_warned && torn_without_writer(*log, o.dir)) {
      torn_warned = true;
      progress.clear();
      // torn_tail() is "PATH:OFFSET: what".
      const std::string& t = log->torn_tail();
      size_t at = t.find(".seg:");
      std::string file = at == std::string::npos ? o.dir : t.substr(0, at + 4);
      std::optional<Problem> pr;
      if (at != std::string::npos) pr = problem_met(o.dir, file, std::nullopt, Classification::torn_tail);
      if (pr) {
        p.problem(*pr);
        warn(g, file, pr->offset, "torn tail (" + pr->kind + "), treated as the end of the log");
      } else {
        warn(g, o.dir, std::nullopt, "torn tail (" + t + "), treated as the end of the log");
      }
    }
    if (!o.follow) return kExitOk;
    // Follow: the log as another process changes it, looked at again when
    // its directory changes.
    p.flush();
    keeper.save();
    if (!reaped) {
      check_interrupted();
      if (!watching) {
        // Watch first, then look again: a change in between wakes the next wait.
        watching = true;
        watch.watch(o.dir);
      } else if (!watch.wait()) {
        check_interrupted();
      }
    }
    Status st = log->refresh();
    if (!st.is_ok()) fail(st, o.dir);
    if (log->torn_tail().empty()) torn_warned = false;
    uint64_t first = log->first_sequence(), next = log->next_sequence();
    bool rescan = reaped;
    if (!written.empty() && pos > first) {
      // Are the records written still there as written? A cut
      // (truncate-after) removes them, and perhaps others were appended
      // since under the same sequences: checked whatever next is now.
      uint64_t lost = written.first_lost(*log, pos);
      if (pos > next && written.last() >= next) lost = std::min(lost, next);
      if (lost < pos) {
        p.reset("truncated_after", lost, pos - 1, lost,
                lost >= next
                    ? fmt::format("records {}-{} already written were removed by truncate-after; "
                                  "following from {}", lost, pos - 1, lost)
                    : fmt::format("records {}-{} already written are no longer the ones written: "
                                  "the log was cut by truncate-after; following from {}",
                                  lost, pos - 1, lost));
        pos = lost;
        rescan = true;
      }
    }
    if (pos > next) {
      // --from beyond the end: nothing owed yet, wait for the records to exist.
      sc.reset();
      continue;
    }
    if (first > pos) {
      // From another process a recycle and a truncate-before look alike: a
      // log that reuses its segment files (created with --max-segments, or
      // one already reused: generation above 1) recycles. A segment reaped
      // under the read says nothing: a removed one whose descriptor was
      // closed for want of descriptors is reaped too.
      const auto segs = log->segments();
      bool recycles = std::any_of(segs.begin(), segs.end(), [](const SegmentInfo& s) { return s.generation > 1; });
      try {
        recycles = recycles || load_options(o.dir, {}).max_segments > 1;
      } catch (const Failure&) {  // an alog.json a writer would refuse: the reader reads on
      }
      p.reset(recycles ? "recycled" : "truncated_before", pos, first - 1, first,
              fmt::format("records {}-{} were removed before they were read; following from {}",
                          pos, first - 1, first));
      pos = first;
      rescan = true;
    }
    if (rescan || !sc) sc = new_scanner();
  }
}

// cat --salvage: the log as recover --force would leave it, read without
// changing a byte; one problem per damage first (JSON objects, text on
// standard error), then records and lost runs. Exit 4 when damage was found.
int cat_salvaged(const CatOptions& o, const Global& g, Printer& p) {
  require_log_dir(o.dir);
  RecoverOptions ro = salvage_log_options(o.dir);
  Range r = resolve(o, 0, [] { return uint64_t{0}; });
  const Status enough(Errc::stopped, "enough records");
  Result<SalvageReadReport> rep = read_salvaged(
      o.dir, ro, [&](uint64_t seq, std::string_view payload, bool lost) -> Status {
        if (seq < r.from) return {};
        if (done(r, p, seq)) return enough;
        if (lost) p.lost(seq);
        else p.record(seq, payload);
        check_interrupted();
        return {};
      });
  if (!rep.is_ok()) fail(rep.status(), o.dir);
  p.flush_lost();
  p.flush();
  // The damage is reported after the records it costs, as a reading cat
  // reports a problem when it meets it.
  {
    for (const Problem& pr : rep->damage.problems) {
      if (pr.classification == Classification::torn_tail) {
        // As a reading cat reports it: the end of the log, not damage.
        p.problem(pr);
        p.flush();
        warn(g, path_join(o.dir, pr.file), pr.offset, "torn tail (" + pr.kind + "), treated as the end of the log");
        continue;
      }
      if (pr.classification != Classification::corruption) continue;
      p.problem(pr);
      p.flush();
      err_corruption(path_join(o.dir, pr.file), pr);
    }
    if (!rep->refused.empty())
      throw Failure("corrupt", o.dir, std::nullopt, "salvage would refuse: " + rep->refused, kExitDamaged);
    return rep->damage.has(Classification::corruption) ? kExitDamaged : kExitOk;
  }
}

int run_cat_with(const CatOptions& o, const Global& g, Printer& p) {
  if (o.len32 && (o.seq || g.json())) throw UsageError("--len32 cannot be combined with --seq or --json");
  if (o.null && g.json()) throw UsageError("-0 cannot be combined with --json");
  if (o.from && o.to && *parse_u64(*o.to) < *parse_u64(*o.from))
    throw UsageError("--to is less than --from");
  if (o.salvage) {
    if (o.follow || o.last || o.cursor_file)
      throw UsageError("--salvage cannot be combined with -f, --last or --cursor-file");
    if (is_regular_file(o.dir)) throw UsageError("--salvage reads a log directory, not a segment file");
    return cat_salvaged(o, g, p);
  }
  if (is_regular_file(o.dir)) return cat_segment(o, g, p);
  return cat_dir(o, g, p);
}

// Whatever ends the command, what was printed goes out before it.
int run_cat(const CatOptions& o, const Global& g) {
  stop_reads_on_signals();
  Printer p(record_style(o, g), g, o.dir);
  try {
    int exit = run_cat_with(o, g, p);
    p.flush();
    return exit;
  } catch (...) {
    p.flush_quietly();
    throw;
  }
}

}  // namespace

Command add_cat(CLI::App& app, const Global& g) {
  auto o = std::make_shared<CatOptions>();
  CLI::App* sub = app.add_subcommand("cat", "Print records, optionally following the log");
  sub->fallthrough();
  sub->add_option("DIR", o->dir, "Log directory or segment file")->required();
  auto seqopt = [&](const char* name, std::optional<std::string>* dst, const char* help) {
    return sub->add_option(name, *dst, help)->type_name("SEQ")->check(CLI::Validator(check_u64(), "SEQ"));
  };
  auto* from = seqopt("--from", &o->from, "First sequence (inclusive)");
  seqopt("--to", &o->to, "Last sequence (inclusive)");
  seqopt("--count", &o->count, "At most N records")->type_name("N");
  auto* last = seqopt("--last", &o->last, "The last N records")->type_name("N");
  from->excludes(last);
  auto* n0 = sub->add_flag("-0,--null", o->null, "End each record with a NUL byte");
  auto* l32 = sub->add_flag("--len32", o->len32, "Prefix each record with its 32-bit big-endian length");
  n0->excludes(l32);
  sub->add_flag("--seq", o->seq, "Prefix each record with SEQ and a tab");
  sub->add_flag("-f,--follow", o->follow, "Wait for new records, like tail -f");
  sub->add_flag("--salvage", o->salvage,
                "Read a damaged log as recover --force would leave it, changing nothing");
  sub->add_flag_callback(
      "-F,--follow-retry", [o] { o->follow = o->follow_retry = true; },
      "As -f, and wait for a log that does not exist yet, like tail -F");
  sub->add_option("--cursor-file", o->cursor_file,
                  "Start after the record FILE names; rewrite FILE after each chunk of output")
      ->type_name("FILE");
  sub->add_option("--payload", o->payload, "Payload encoding (text default: raw; JSON: base64)")
      ->check(CLI::IsMember({"base64", "hex", "utf8", "none"}));
  sub->add_option("-j,--jobs", o->jobs,
                  "Threads reading the records in the plain text style (default 0: one per core, "
                  "at most 8); the output is the same")
      ->type_name("N")
      ->check(CLI::Validator(check_u64(), "N"));
  return {sub, true, [o, &g] { return run_cat(*o, g); }};
}

}  // namespace alog::cli
