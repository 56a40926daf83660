// alog cat DIR|SEGMENT: records in order, raw or as NDJSON; -f follows the
// log as it grows, across rolls, recycling and truncation.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <deque>

#include "alog/crc32c.h"
#include "alog/scanner.h"
#include "cli.h"
#include "read_damage.h"
#include "report.h"
#include "segment_file.h"

namespace alog::cli {

namespace {

struct CatOptions {
  std::string dir;
  std::optional<std::string> from, to, count, last;
  bool null = false, len32 = false, seq = false, follow = false;
  std::optional<std::string> payload;
  int poll_ms = 100;
};

// The range asked for, resolved against the log.
struct Range {
  uint64_t from = 0;
  std::optional<uint64_t> to;     // inclusive
  std::optional<uint64_t> count;  // at most this many records
};

class Printer {
 public:
  Printer(const CatOptions& o, const Global& g)
      : o_(o), json_(g.json()),
        enc_(o.payload ? parse_payload_encoding(*o.payload)
                       : json_ ? PayloadEncoding::base64 : PayloadEncoding::utf8) {}

  void record(uint64_t seq, std::string_view payload) {
    printed_++;
    last_seq_ = seq;
    last_crc_ = crc32c(payload.data(), payload.size());
    if (json_) {
      Json j;
      j["type"] = "record";
      j["seq"] = seq;
      j["length"] = payload.size();
      put_payload(j, payload, enc_);
      out_json(j);
      return;
    }
    std::string encoded;
    if (enc_ != PayloadEncoding::utf8) encoded = text_payload(payload, enc_);
    std::string_view bytes = enc_ == PayloadEncoding::utf8 ? payload : std::string_view(encoded);
    if (o_.len32) {
      uint8_t len[4];
      format::put32(len, uint32_t(bytes.size()));
      out_write(std::string_view(reinterpret_cast<const char*>(len), 4));
      out_write(bytes);
      return;
    }
    if (o_.seq) out_write(enc_ == PayloadEncoding::none ? fmt::format("{}", seq) : fmt::format("{}\t", seq));
    out_write(bytes);
    out_write(o_.null ? std::string_view("\0", 1) : std::string_view("\n"));
  }

  // Records removed under a follower: on stderr, and a "reset" in the stream.
  void reset(const Global& g, const std::string& dir, const char* reason, uint64_t lost_first,
             uint64_t lost_last, uint64_t next, const std::string& why) {
    warn(g, dir, std::nullopt, why);
    if (!json_) return;
    Json j;
    j["type"] = "reset";
    j["reason"] = reason;
    j["lost_first_seq"] = lost_first;
    j["lost_last_seq"] = lost_last;
    j["next_seq"] = next;
    j["message"] = why;
    out_json(j);
  }

  // The torn tail or corruption that ended the output.
  void problem(const Problem& p) {
    if (!json_) return;
    out_json(problem_json(p, "problem"));
  }

  uint64_t printed() const { return printed_; }
  std::optional<uint64_t> last_seq() const { return last_seq_; }
  uint32_t last_crc() const { return last_crc_; }

 private:
  const CatOptions& o_;
  bool json_;
  PayloadEncoding enc_;
  uint64_t printed_ = 0;
  std::optional<uint64_t> last_seq_;
  uint32_t last_crc_ = 0;
};

Range resolve(const CatOptions& o, uint64_t first, uint64_t next) {
  Range r;
  r.from = o.from ? *parse_u64(*o.from) : first;
  if (o.last) {
    uint64_t n = *parse_u64(*o.last);
    r.from = next - first > n ? next - n : first;
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
int cat_segment(const CatOptions& o, const Global& g) {
  if (o.follow) throw UsageError("--follow needs a log directory, not a segment file");
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
  Range r = resolve(o, w.first_sequence, next);
  Printer p(o, g);
  inspect::FrameWalker walk(seg, /*read_payloads=*/true);
  for (uint64_t seq = w.first_sequence; seq < next && !done(r, p, seq);) {
    inspect::Frame f = next_frame(walk, seg);
    if (f.stops() || f.eof()) break;  // the file changed under us: the first walk decides
    if (!f.header.is_data()) continue;
    seq = f.sequence + 1;
    if (f.sequence >= r.from) p.record(f.sequence, f.payload);
    check_interrupted();
  }
  if (!end.stops()) return kExitOk;
  std::string what = end.problem + (end.expected.empty() ? "" : " (expected " + end.expected + ", found " + end.found + ")");
  if (end.offset >= w.synced_offset) {
    warn(g, o.dir, end.offset, "torn tail: " + what + "; the records end here");
    return kExitOk;
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
  uint64_t first_lost(const Log& log, uint64_t pos) const {
    uint64_t lost = pos;
    for (auto it = v_.rbegin(); it != v_.rend(); ++it) {
      if (it->first >= pos) continue;
      auto rec = log.read(it->first);
      if (rec && crc32c(rec->payload.data(), rec->payload.size()) == it->second) break;
      lost = it->first;
    }
    return lost;
  }

 private:
  static constexpr size_t kKeep = 4096;
  std::deque<std::pair<uint64_t, uint32_t>> v_;
};

int cat_dir(const CatOptions& o, const Global& g) {
  auto log = open_read_or_fail(o.dir);
  Range r = resolve(o, log->first_sequence(), log->next_sequence());
  if (!o.follow && r.from > log->next_sequence())
    if (auto exit = report_read_damage(g, *log, o.dir, r.from)) return *exit;
  if (!o.follow && r.from > log->next_sequence())
    fail("out_of_bounds", o.dir, std::nullopt,
         fmt::format("--from {} is past the end of the log (next sequence {})", r.from,
                     log->next_sequence()));
  if (o.from && r.from < log->first_sequence())
    warn(g, o.dir, std::nullopt,
         fmt::format("records before {} were truncated; starting there", log->first_sequence()));
  Printer p(o, g);
  Written written;
  Progress progress(g, "cat", /*delayed=*/true);
  uint64_t pos = std::max(r.from, log->first_sequence());
  bool torn_warned = false;
  auto new_scanner = [&] {
    auto sc = log->scan(pos, r.to);
    if (!sc) fail(sc.status(), o.dir);
    return std::move(sc).value();
  };
  std::unique_ptr<Scanner> sc = new_scanner();
  while (true) {
    bool reaped = false;
    while (!done(r, p, pos)) {
      auto more = sc->next();
      if (!more) {
        if (o.follow && more.status().code() == Errc::segment_reaped) {
          reaped = true;
          break;
        }
        progress.clear();
        const Status& st = more.status();
        std::optional<Problem> pr;
        if (st.code() == Errc::corrupt && !st.path().empty())
          pr = diagnose_stop(st.path(), Classification::corruption);
        if (!pr) fail(st, o.dir);
        p.problem(*pr);
        out_flush();
        fmt::print(stderr, "alog: {}\n",
                   located(st.path(), pr->offset, "corruption: " + pr->kind + ": " + pr->message));
        return kExitDamaged;
      }
      if (!*more) break;
      p.record(sc->sequence(), sc->payload());
      written.add(sc->sequence(), p.last_crc());
      pos = sc->sequence() + 1;
      progress.update(p.printed(), 0);
      check_interrupted();
    }
    if (done(r, p, pos)) return kExitOk;
    if (!reaped && !log->damage().is_ok() && pos >= log->next_sequence()) {
      progress.clear();
      // A corrupt header or a gap ends the readable records.
      if (auto exit = report_read_damage(g, *log, o.dir, pos)) return *exit;
      fail(log->damage(), o.dir);
    }
    if (!reaped && !torn_warned && !log->torn_tail().empty() && !writer_active(o.dir)) {
      torn_warned = true;
      progress.clear();
      // torn_tail() is "PATH:OFFSET: what".
      const std::string& t = log->torn_tail();
      size_t at = t.find(".seg:");
      std::string file = at == std::string::npos ? o.dir : t.substr(0, at + 4);
      std::optional<Problem> pr;
      if (at != std::string::npos) pr = diagnose_stop(file, Classification::torn_tail);
      if (pr) {
        p.problem(*pr);
        warn(g, file, pr->offset, "torn tail (" + pr->kind + "), treated as the end of the log");
      } else {
        warn(g, o.dir, std::nullopt, "torn tail (" + t + "), treated as the end of the log");
      }
    }
    if (!o.follow) return kExitOk;
    // Follow: the log as another process changes it, every 100 ms.
    out_flush();
    if (!reaped) {
      check_interrupted();
      nap_ms(o.poll_ms);
      check_interrupted();
    }
    Status st = log->refresh();
    if (!st.is_ok()) fail(st, o.dir);
    if (log->torn_tail().empty()) torn_warned = false;
    uint64_t first = log->first_sequence(), next = log->next_sequence();
    bool rescan = reaped;
    if (pos > next) {
      p.reset(g, o.dir, "truncated_after", next, pos - 1, next,
              fmt::format("records {}-{} already written were removed by truncate-after; "
                          "following from {}", next, pos - 1, next));
      pos = next;
      rescan = true;
    } else if (reaped && pos > first) {
      // Cut behind the scanner and perhaps appended again: which of the
      // records written are still there as written?
      uint64_t lost = written.first_lost(*log, pos);
      if (lost < pos) {
        p.reset(g, o.dir, "truncated_after", lost, pos - 1, lost,
                fmt::format("records {}-{} already written are no longer the ones written: the "
                            "log was cut by truncate-after; following from {}", lost, pos - 1, lost));
        pos = lost;
      }
    }
    if (first > pos) {
      // From another process a recycle and a truncate-before look alike: a
      // log that reuses its segment files (generation above 1) recycles.
      const auto segs = log->segments();
      const bool recycles = reaped || std::any_of(segs.begin(), segs.end(), [](const SegmentInfo& s) {
                              return s.generation > 1;
                            });
      p.reset(g, o.dir, recycles ? "recycled" : "truncated_before", pos, first - 1, first,
              fmt::format("records {}-{} were removed before they were read; following from {}",
                          pos, first - 1, first));
      pos = first;
      rescan = true;
    }
    if (rescan) sc = new_scanner();
  }
}

int run_cat(const CatOptions& o, const Global& g) {
  if (o.len32 && (o.seq || g.json())) throw UsageError("--len32 cannot be combined with --seq or --json");
  if (o.null && g.json()) throw UsageError("-0 cannot be combined with --json");
  if (o.from && o.to && *parse_u64(*o.to) < *parse_u64(*o.from))
    throw UsageError("--to is less than --from");
  if (is_regular_file(o.dir)) return cat_segment(o, g);
  return cat_dir(o, g);
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
  sub->add_option("--payload", o->payload, "Payload encoding (text default: raw; JSON: base64)")
      ->check(CLI::IsMember({"base64", "hex", "utf8", "none"}));
  return {sub, true, [o, &g] { return run_cat(*o, g); }};
}

}  // namespace alog::cli
