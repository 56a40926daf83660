// alog dump-frames DIR|SEGMENT (man/alog-dump-frames.1): decodes the segment
// header, both slots and every frame from offset 192, with stored and
// computed CRCs, what each checkpoint covers, resyncs after damage (and to
// the winning slot's read offset), and an end line per segment.
//
// Unlike the readers, this walk also shows the frames before the read
// offset and after the EOF (--stale), and goes on after damage with the
// running CRC unknown; what it finds in the live region agrees with verify.
// The lines themselves are dump_output.cc.
#include <CLI/CLI.hpp>

#include <algorithm>

#include "alog/crc32c.h"
#include "cli.h"
#include "dump_output.h"
#include "segment_file.h"

namespace alog::cli {

using namespace format;

namespace {

using dump::Frame;

struct DumpOptions {
  std::string path;
  std::string payload = "none";
  bool stale = false;
};

// The walk's running state; crc/pending unknown after a search resync until
// the next checkpoint, sequences unknown for the rest of the segment.
struct State {
  uint64_t offset = kHeaderSize;
  std::optional<uint64_t> seq;
  std::optional<uint32_t> crc = 0;
  uint16_t pending = 0;
  bool after_data_without_batch_end = false;
  dump::Coverage covers = dump::Coverage::since(kHeaderSize);  // since the last checkpoint
};

class Dumper {
 public:
  Dumper(const DumpOptions& o, const Global& g)
      : o_(o), out_(g.json(), parse_payload_encoding(o.payload), o.payload) {}

  void segment(SegmentFile& s, const std::string& name, bool active, bool writer) {
    active_ = active;
    writer_ = writer;
    seg_ = &s;
    problems_ = 0;
    torn_ = corrupt_ = false;
    counted_ = {};
    eof_offset_.reset();
    if (!out_.segment(name, s, active)) {
      problems_++;
      corrupt_ = true;
      return end();
    }
    problems_ += uint64_t(out_.slots(s));
    walk(s);
    end();
  }
  bool damaged() const { return damaged_; }
  // The sequence after the last segment dumped, when its walk ended cleanly.
  std::optional<uint64_t> clean_next() const { return clean_ ? counted_.next : std::nullopt; }
  // Segment `name` does not start where `prev` ends: verify's sequence_gap.
  void chain_problem(const std::string& prev, uint64_t prev_next, const std::string& name, uint64_t start) {
    Problem p;
    p.file = name;
    p.offset = 0;
    p.kind = "sequence_gap";
    p.classification = Classification::corruption;
    p.message = prev + " ends at sequence " + std::to_string(prev_next) +
                " but this segment starts at " + std::to_string(start);
    p.expected = std::to_string(prev_next);
    p.found = std::to_string(start);
    if (start > prev_next) {
      p.first_seq = prev_next;
      p.last_seq = start - 1;
    }
    out_.problem(p);
    damaged_ = true;
  }

  // A cut piece of lost+found/: its frames from its first byte, offsets and
  // generation as in the segment it was cut from.
  void piece(SegmentFile& s, const std::string& name, const dump::Piece& p) {
    seg_ = &s;
    base_ = p.offset;
    out_.piece(name, p, s.length);
    auto [frames, failed] = frames_on_their_own(0, "cut", p.generation);
    out_.piece_end(frames, failed);
    base_ = 0;
  }

 private:
  // Reads the frame at off: header, payload (data frames inside the file), computed CRC.
  Frame read_frame(uint64_t off) {
    const SegmentFile& s = *seg_;
    Frame f;
    f.offset = off;
    if (s.length - off < kFrameHeaderSize) {
      f.status = "truncated_header";
      return f;
    }
    uint8_t* hb = f.raw;
    auto got = s.file->pread(hb, kFrameHeaderSize, off);
    if (!got) fail(got.status(), s.path);
    f.have_header = true;
    f.h = decode_frame_header(hb);
    f.kind = dump::kind_of(f.h.flags);
    if (f.kind == "data") {
      uint64_t left = s.length - off - kFrameHeaderSize;
      if (f.h.word <= left) {
        f.payload_inside = true;
        f.payload.resize(f.h.word);
        auto pg = s.file->pread(f.payload.data(), f.h.word, off + kFrameHeaderSize);
        if (!pg) fail(pg.status(), s.path);
        f.computed = frame_crc(hb, f.payload.data(), f.payload.size());
      }
    } else {
      f.computed = crc32c(hb, 12);
    }
    return f;
  }

  // Checks on a frame's own (the --stale region and the first checks of the walk).
  static std::string own_check(const Frame& f, const SegmentFile& s) {
    if (!f.have_header) return "truncated_header";
    if (f.kind == "invalid") return "bad_flags";
    if (f.h.reserved != 0) return "reserved_bytes";
    if (f.kind == "data" && f.h.stride != 1) return "bad_stride";
    if (f.kind == "data" && !f.payload_inside) return "truncated_payload";
    if (f.computed && *f.computed != f.h.crc) return "frame_crc";
    (void)s;
    return "ok";
  }

  // A frame that fails in the live region: a problem, and the first stop decides the end status.
  void live_problem(const Frame& f, const State& st) {
    problems_++;
    bool torn = active_ && has_synced_ && f.offset >= synced_offset_;
    if (!has_synced_) torn = false;
    if (torn) torn_ = true;
    else corrupt_ = true;
    (void)st;
  }

  void walk(SegmentFile& s) {
    const bool winner = s.slots.winner >= 0;
    has_synced_ = winner;
    uint64_t read_offset = kHeaderSize;
    if (winner) {
      synced_offset_ = s.winner().synced_offset;
      read_offset = s.winner().read_offset;
    } else {
      corrupt_ = true;  // no slot wins: corruption, walked from 192 as live
    }
    State st;
    st.seq = s.header.start_sequence;
    bool live = !winner || read_offset == kHeaderSize;
    bool counting = true;  // until the first stop in the live region
    uint64_t records = 0, checkpoints = 0, batches = 0;
    uint64_t b_records = 0, b_checkpoints = 0, b_batches = 0;  // at the last batch boundary
    std::optional<uint64_t> b_seq;
    uint64_t prev_offset = kHeaderSize;  // the last frame shown
    // Past data frame f: sound, or with payload damage that a later
    // checkpoint may confirm. `count`: the live walk still counts records.
    auto pass_data = [&](const Frame& f, bool count) {
      if (st.crc) st.crc = crc32c_extend(*st.crc, f.raw, kFrameHeaderSize);
      st.pending = uint16_t(st.pending + 1);
      st.covers.records++;
      if (st.seq) {
        if (!st.covers.first) st.covers.first = st.seq;
        st.covers.last = st.seq;
        st.seq = *st.seq + 1;
      }
      st.after_data_without_batch_end = !f.h.is_batch_end();
      st.offset = f.end();
      if (!count) return;
      records++;
      if (f.h.is_batch_end()) {
        batches++;
        b_records = records, b_checkpoints = checkpoints, b_batches = batches, b_seq = st.seq;
      }
    };
    auto enter_live = [&](uint64_t from) {
      if (from > read_offset) from = prev_offset;
      if (from != read_offset || !st.crc || *st.crc != s.winner().read_crc ||
          st.pending != s.winner().read_pending)
        out_.resync(s.length, from, read_offset, "read_offset");
      st = State{};
      st.offset = read_offset;
      st.seq = s.winner().first_sequence;
      st.crc = s.winner().read_crc;
      st.pending = s.winner().read_pending;
      st.covers.from = read_offset;
      live = true;
      b_seq = st.seq;
    };
    if (winner && read_offset == kHeaderSize) {
      // The walk from 192 is the live walk when the slot's state agrees.
      if (s.winner().read_crc != 0 || s.winner().read_pending != 0) enter_live(kHeaderSize);
      else st.seq = s.winner().first_sequence;
    }
    b_seq = st.seq;
    while (true) {
      check_interrupted();
      if (!live && st.offset >= read_offset) {
        enter_live(st.offset);
        continue;
      }
      if (st.offset >= s.length) {
        // The file ends without an EOF frame: nothing more to read.
        Frame f;
        f.offset = st.offset;
        f.status = "truncated_header";
        f.region = live ? "live" : "before_read_offset";
        f.seq = std::nullopt;
        if (!live) {
          out_.frame(f);
          enter_live(st.offset);
          continue;
        }
        out_.frame(f);
        live_problem(f, st);
        if (counting) stop_at(b_seq, b_records, b_checkpoints, b_batches);
        counting = false;
        out_.resync(s.length, st.offset, std::nullopt, "search");
        return;
      }
      Frame f = read_frame(st.offset);
      prev_offset = f.offset;
      f.region = live ? "live" : "before_read_offset";
      std::string status = own_check(f, s);
      bool data = f.kind == "data", ck = f.kind == "checkpoint" || f.kind == "eof";
      if (data) f.seq = st.seq;
      // The order of verify's checks: flags, generation, reserved, stride, length, CRC.
      if (status == "truncated_header" || status == "bad_flags") {
      } else if (f.h.generation != s.header.generation) {
        status = "stale_generation";
      }
      if (status == "ok" && ck && st.crc) {
        if (f.h.word != *st.crc) status = "checkpoint_crc";
        else if (f.h.stride != st.pending) status = "checkpoint_stride";
      }
      if (status == "ok" && f.kind == "eof" && st.after_data_without_batch_end)
        status = "eof_without_batch_end";
      if (status == "ok" && f.kind == "eof" && live && winner &&
          ((!active_ && synced_offset_ != f.offset) || synced_offset_ > f.offset))
        status = "synced_offset";
      f.status = status;
      dump::Coverage c = st.covers;
      c.to = f.offset;
      c.walk_crc = st.crc;
      c.walk_count = st.pending;
      out_.frame(f, c);
      if (status == "ok" || status == "synced_offset") {
        if (status == "synced_offset" && live) live_problem(f, st);
        if (data) {
          pass_data(f, live && counting);
          continue;
        }
        if (f.kind == "eof") {
          if (live) {
            if (counting) {
              eof_offset_ = f.offset;
              stop_at(st.seq, records, checkpoints, batches);
              counting = false;
            }
            if (o_.stale) stale_frames(f.end());
            return;
          }
          // An EOF before the read offset: go to the read offset.
          enter_live(f.offset);
          continue;
        }
        // A checkpoint.
        st.offset = f.end();
        st.crc = 0;
        st.pending = 0;
        st.after_data_without_batch_end = false;
        st.covers = dump::Coverage::since(st.offset);
        if (live && counting) {
          checkpoints++;
          b_records = records, b_checkpoints = checkpoints, b_batches = batches, b_seq = st.seq;
        }
        continue;
      }
      // A failed frame.
      if (!live) {
        enter_live(f.offset);
        continue;
      }
      live_problem(f, st);
      if (status == "frame_crc" && data && f.payload_inside) {
        // Payload damage: go on after the payload; the next checkpoint tells.
        if (counting && (!active_ || f.offset < synced_offset_)) {
          // As verify counts it: the record is there, damaged.
        } else if (counting) {
          stop_at(b_seq, b_records, b_checkpoints, b_batches);
          counting = false;
        }
        pass_data(f, counting);
        continue;
      }
      if (counting) {
        stop_at(b_seq, b_records, b_checkpoints, b_batches);
        counting = false;
      }
      auto found = inspect::find_valid_data_frame(s, f.offset + 1);
      if (!found) fail(found.status(), s.path);
      if (!*found) {
        out_.resync(s.length, f.offset, std::nullopt, "search");
        return;
      }
      uint64_t to = **found;
      out_.resync(s.length, f.offset, to, "search");
      st = State{};
      st.offset = to;
      st.seq.reset();
      st.crc.reset();
      st.covers.from = to;
    }
  }

  void stop_at(std::optional<uint64_t> next, uint64_t records, uint64_t checkpoints, uint64_t batches) {
    counted_.next = next;
    counted_.records = records;
    counted_.checkpoints = checkpoints;
    counted_.batches = batches;
    counted_.set = true;
  }

  // Frames after the EOF (--stale), each checked on its own; after a failure
  // a search for the next frame valid on its own, of any generation.
  void stale_frames(uint64_t off) { frames_on_their_own(off, "after_eof", std::nullopt); }

  // Frames from `off`, each checked on its own (and against `gen` when
  // known); after a failure a search for the next frame valid on its own.
  // Offsets are shown from base_. Returns the frames shown and failed.
  std::pair<uint64_t, uint64_t> frames_on_their_own(uint64_t off, const char* region,
                                                    std::optional<uint16_t> gen) {
    const SegmentFile& s = *seg_;
    uint64_t shown = 0, failed = 0;
    auto check = [&](const Frame& f) {
      std::string st = own_check(f, s);
      if (st == "ok" && gen && f.h.generation != *gen) st = "stale_generation";
      return st;
    };
    while (off < s.length) {
      check_interrupted();
      Frame f = read_frame(off);
      f.region = region;
      f.status = check(f);
      show(f);
      shown++;
      if (f.status == "ok") {
        off = f.end();
        continue;
      }
      failed++;
      if (!f.have_header) break;
      uint64_t from = off;
      std::optional<uint64_t> to;
      // Headers are checked in 1 MiB chunks read once; only a plausible one
      // (valid flags, reserved 0, stride 1 for data, payload inside the file)
      // is read as a frame, so the search is not one pread per byte.
      std::string chunk;
      uint64_t base = 0;
      for (uint64_t p = off + 1; p + kFrameHeaderSize <= s.length; p++) {
        if (((p - off) & 0xffff) == 0) check_interrupted();
        if (p < base || p + kFrameHeaderSize > base + chunk.size()) {
          base = p;
          chunk.resize(size_t(std::min<uint64_t>(s.length - p, 1 << 20)));
          auto got = s.file->pread(chunk.data(), chunk.size(), p);
          if (!got) fail(got.status(), s.path);
          chunk.resize(*got);
          if (chunk.size() < kFrameHeaderSize) break;
        }
        FrameHeader h = decode_frame_header(reinterpret_cast<const uint8_t*>(chunk.data() + (p - base)));
        if (!h.flags_valid() || h.reserved != 0) continue;
        if (h.is_data() && (h.stride != 1 || h.word > s.length - p - kFrameHeaderSize)) continue;
        Frame g = read_frame(p);
        if (check(g) == "ok") {
          to = p;
          break;
        }
      }
      out_.resync(base_ + s.length, base_ + from, to ? std::optional<uint64_t>(base_ + *to) : std::nullopt,
                  "search");
      if (!to) break;
      off = *to;
    }
    return {shown, failed};
  }

  // A frame line, its offset shown from base_ (a cut piece's source offset).
  void show(Frame f) {
    f.offset += base_;
    out_.frame(f);
  }

  void end() {
    const SegmentFile& s = *seg_;
    dump::End e;
    e.status = corrupt_ ? "corruption" : torn_ ? (writer_ ? "in_flight" : "torn_tail") : "clean";
    if (e.status == "corruption" || e.status == "torn_tail") damaged_ = true;
    clean_ = e.status == "clean";
    if (counted_.set) {
      if (s.walkable()) e.first = s.winner().first_sequence;
      else if (s.header_complete && s.header_error == HeaderError::none) e.first = s.header.start_sequence;
      e.next = counted_.next;
    }
    e.eof_offset = eof_offset_;
    e.records = counted_.records;
    e.checkpoints = counted_.checkpoints;
    e.batches = counted_.batches;
    e.problems = problems_;
    out_.end(s, e);
  }

  struct Counted {
    bool set = false;
    std::optional<uint64_t> next;
    uint64_t records = 0, checkpoints = 0, batches = 0;
  };

  const DumpOptions& o_;
  dump::Output out_;
  SegmentFile* seg_ = nullptr;
  bool active_ = false, writer_ = false;
  bool has_synced_ = false;
  uint64_t synced_offset_ = 0;
  uint64_t problems_ = 0;
  bool torn_ = false, corrupt_ = false;
  std::optional<uint64_t> eof_offset_;
  uint64_t base_ = 0;  // added to the offsets shown (a cut piece's)
  Counted counted_;
  bool damaged_ = false;
  bool clean_ = false;  // the last segment's walk ended cleanly
};

int run_dump(const DumpOptions& o, const Global& g) {
  stop_reads_on_signals();
  Dumper d(o, g);
  if (is_regular_file(o.path)) {
    SegmentFile s = open_segment_file(o.path);
    if (auto piece = dump::read_piece(o.path); piece && not_a_segment(s)) {
      d.piece(s, base_name(o.path), *piece);
      return kExitOk;  // a piece of lost+found/ is no part of the log: its damage is no log's
    }
    d.segment(s, base_name(o.path), true, writer_active(dir_name(o.path)));
    // What could be decoded is printed; a file that is no segment is still not a log.
    if (not_a_segment(s)) fail("not_a_log", s.path, std::nullopt, "not a segment file (no ALOG magic)");
    return d.damaged() ? kExitDamaged : kExitOk;
  }
  auto st = posix_fs().stat(o.path);
  if (!st) fail(st.status(), o.path);
  if (!st->exists) fail("not_found", o.path, std::nullopt, "no such log directory or segment file");
  if (!st->is_dir) fail("not_a_log", o.path, std::nullopt, "not a directory or a segment file");
  auto anchor = posix_fs().anchor(o.path);  // every segment read from the directory listed
  if (!anchor) fail(anchor.status(), o.path);
  auto names = posix_fs().list(o.path);
  if (!names) fail(names.status(), o.path);
  std::vector<std::string> segs;
  for (const auto& n : *names)
    if (parse_segment_name(n)) segs.push_back(n);
  std::sort(segs.begin(), segs.end());
  if (segs.empty()) fail("not_a_log", o.path, std::nullopt, "no segment files (not an alog log)");
  bool writer = writer_active(o.path);
  std::optional<uint64_t> prev_next;
  for (size_t i = 0; i < segs.size(); i++) {
    SegmentFile s = open_segment_file(path_join(o.path, segs[i]));
    // The chain, as verify checks it: each segment starts where the one before ends.
    const bool header_ok = s.header_complete && s.header_error == HeaderError::none;
    if (prev_next && header_ok && s.header.start_sequence != *prev_next)
      d.chain_problem(segs[i - 1], *prev_next, segs[i], s.header.start_sequence);
    d.segment(s, segs[i], i + 1 == segs.size(), writer);
    prev_next = d.clean_next();
  }
  return d.damaged() ? kExitDamaged : kExitOk;
}

}  // namespace

Command add_dump_frames(CLI::App& app, const Global& g) {
  auto o = std::make_shared<DumpOptions>();
  CLI::App* sub = app.add_subcommand("dump-frames", "Decode segment headers, slots and every frame");
  sub->fallthrough();
  sub->add_option("DIR", o->path, "Log directory or segment file")->required();
  sub->add_option("--payload", o->payload, "Show payloads: base64, hex, utf8 or none (default)")
      ->check(CLI::IsMember({"base64", "hex", "utf8", "none"}))
      ->type_name("ENCODING");
  sub->add_flag("--stale", o->stale, "Also show frames past the EOF (recycled files)");
  return {sub, true, [o, &g] { return run_dump(*o, g); }};
}

}  // namespace alog::cli
