// alog cat DIR|SEGMENT: records in order, raw or as NDJSON; -f follows the
// log as it grows, across rolls, recycling and truncation.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "alog/crc32c.h"
#include "alog/scanner.h"
#include "cli.h"
#include "segment_file.h"

namespace alog::cli {

namespace {

struct CatOptions {
  std::string dir;
  std::optional<std::string> from, to, count, last;
  bool null = false, len32 = false, seq = false, follow = false;
  std::optional<std::string> payload;
  int poll_ms = 200;
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
      put_payload(j, payload, enc_);
      out_json(j);
      return;
    }
    if (o_.len32) {
      uint8_t len[4];
      format::put32(len, uint32_t(payload.size()));
      out_write(std::string_view(reinterpret_cast<const char*>(len), 4));
      out_write(payload);
      return;
    }
    if (o_.seq) out_write(fmt::format("{}\t", seq));
    out_write(enc_ == PayloadEncoding::utf8 ? payload : std::string_view(text_payload(payload, enc_)));
    out_write(o_.null ? std::string_view("\0", 1) : std::string_view("\n"));
  }

  // A truncation noticed while following: on stderr, and in the stream.
  void truncation(const Global& g, const std::string& dir, uint64_t at, uint64_t next,
                  const std::string& why) {
    warn(g, dir, std::nullopt, why);
    if (!json_) return;
    Json j;
    j["type"] = "truncation";
    j["seq"] = at;
    j["next_seq"] = next;
    j["message"] = why;
    out_json(j);
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

// cat of a single segment file: the walk of segment_file.h, as if it were active.
int cat_segment(const CatOptions& o, const Global& g) {
  if (o.follow) throw UsageError("--follow needs a log directory, not a segment file");
  SegmentFile seg = open_segment_file(o.dir);
  if (!seg.walkable()) {
    std::string why = !seg.header_complete ? "segment header: file is shorter than 192 bytes"
                      : seg.header_error != format::HeaderError::none
                          ? std::string("segment header: ") + format::header_error_text(seg.header_error)
                          : "metadata slots: " + seg.slots.error;
    int code = seg.header_error == format::HeaderError::bad_magic && seg.length ? kExitError : kExitDamaged;
    throw Failure(code == kExitError ? "not_a_log" : "corrupt", o.dir, 0, why, code);
  }
  const format::Slot& w = seg.winner();
  // --last needs the count: one pass over the headers first.
  uint64_t next = w.first_sequence;
  if (o.last) {
    FrameWalker count(seg, read_offset_state(seg), false, false);
    while (auto f = count.next()) {
      if (f->stops_walk() || f->h.is_eof()) break;
      if (f->h.is_data()) next++;
    }
  }
  Range r = resolve(o, w.first_sequence, next);
  Printer p(o, g);
  FrameWalker walk(seg, read_offset_state(seg), true, true);
  while (auto f = walk.next()) {
    if (f->stops_walk()) {
      std::string what = f->problem + (f->expected.empty() ? "" : " (expected " + f->expected + ", found " + f->found + ")");
      if (f->offset >= w.synced_offset) {
        warn(g, o.dir, f->offset, "torn tail: " + what + "; the records end here");
        return kExitOk;
      }
      throw Failure("corrupt", o.dir, f->offset, what + fmt::format(" at sequence {}", walk.state().seq),
                    kExitDamaged);
    }
    if (f->h.is_eof()) break;
    if (!f->h.is_data()) continue;
    if (done(r, p, *f->seq)) break;
    if (*f->seq >= r.from) p.record(*f->seq, f->payload);
    check_interrupted();
  }
  return kExitOk;
}

// Whether the directory changed since the last look (names, active segment size).
struct Fingerprint {
  std::vector<std::string> names;
  uint64_t active_length = 0;
  bool operator==(const Fingerprint&) const = default;
};
Fingerprint fingerprint(const std::string& dir) {
  Fingerprint f;
  auto names = posix_fs().list(dir);
  if (!names) return f;
  for (auto& n : *names)
    if (format::parse_segment_name(n)) f.names.push_back(n);
  std::sort(f.names.begin(), f.names.end());
  if (!f.names.empty()) {
    auto st = posix_fs().stat(path_join(dir, f.names.back()));
    if (st) f.active_length = st->size;
  }
  return f;
}

int cat_dir(const CatOptions& o, const Global& g) {
  auto log = open_read_or_fail(o.dir);
  Range r = resolve(o, log->first_sequence(), log->next_sequence());
  if (!o.follow && r.from > log->next_sequence())
    fail("out_of_bounds", o.dir, std::nullopt,
         fmt::format("--from {} is past the end of the log (next sequence {})", r.from,
                     log->next_sequence()));
  if (o.from && r.from < log->first_sequence())
    warn(g, o.dir, std::nullopt,
         fmt::format("records before {} were truncated; starting there", log->first_sequence()));
  Printer p(o, g);
  Progress progress(g, "cat", /*delayed=*/true);
  uint64_t pos = std::max(r.from, log->first_sequence());
  bool torn_warned = false;
  Fingerprint seen = fingerprint(o.dir);
  while (true) {
    auto sc = log->scan(pos, r.to);
    if (!sc) fail(sc.status(), o.dir);
    bool reaped = false;
    while (!done(r, p, pos)) {
      auto more = (*sc)->next();
      if (!more) {
        if (o.follow && more.status().code() == Errc::segment_reaped) {
          reaped = true;
          break;
        }
        progress.clear();
        fail(more.status(), o.dir);
      }
      if (!*more) break;
      p.record((*sc)->sequence(), (*sc)->payload());
      pos = (*sc)->sequence() + 1;
      progress.update(p.printed(), 0);
      check_interrupted();
    }
    if (done(r, p, pos)) return kExitOk;
    if (!reaped && !log->damage().is_ok() && pos >= log->next_sequence()) {
      progress.clear();
      fail(log->damage(), o.dir);  // a corrupt header or a gap ends the readable records
    }
    if (!torn_warned && !log->torn_tail().empty() && !writer_active(o.dir)) {
      torn_warned = true;
      progress.clear();
      // torn_tail() is "PATH:OFFSET: what".
      const std::string& t = log->torn_tail();
      size_t at = t.find(".seg:");
      size_t colon = at == std::string::npos ? std::string::npos : t.find(": ", at + 5);
      if (colon == std::string::npos)
        warn(g, o.dir, std::nullopt, "torn tail: " + t + "; the records end here");
      else
        warn(g, t.substr(0, at + 4), parse_u64(t.substr(at + 5, colon - at - 5)),
             "torn tail: " + t.substr(colon + 2) + "; the records end here");
    }
    if (!o.follow) return kExitOk;
    // Follow: wait for a change, reopen, and check the log still holds what was printed.
    out_flush();
    while (!reaped) {
      check_interrupted();
      nap_ms(o.poll_ms);
      check_interrupted();
      Fingerprint now = fingerprint(o.dir);
      if (!(now == seen)) {
        seen = now;
        break;
      }
    }
    log = open_read_or_fail(o.dir);
    uint64_t first = log->first_sequence(), next = log->next_sequence();
    if (pos > next) {
      p.truncation(g, o.dir, pos, next,
                   fmt::format("log truncated: next sequence is {}, below {} already read; "
                               "following from {}", next, pos, next));
      pos = next;
    } else if (p.last_seq() && *p.last_seq() >= first && *p.last_seq() + 1 == pos) {
      auto rec = log->read(*p.last_seq());
      if (rec && crc32c(rec->payload.data(), rec->payload.size()) != p.last_crc())
        p.truncation(g, o.dir, *p.last_seq(), next,
                     fmt::format("log truncated and rewritten: record {} differs from the one "
                                 "printed; following from {}", *p.last_seq(), pos));
    }
    if (first > pos) {
      p.truncation(g, o.dir, pos, next,
                   fmt::format("records {}-{} were removed by truncation before they were read",
                               pos, first - 1));
      pos = first;
    }
  }
}

int run_cat(const CatOptions& o, const Global& g) {
  if (o.len32 && (o.seq || g.json())) throw UsageError("--len32 cannot be combined with --seq or --json");
  if (o.null && g.json()) throw UsageError("-0 cannot be combined with --json");
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
  seqopt("-n,--count", &o->count, "At most N records")->type_name("N");
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
