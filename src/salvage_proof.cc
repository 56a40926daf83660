// Salvage step 1 (FORMAT.md): which records of one segment have a proven
// sequence. A walk from an anchor (offset 192, or the winning slot's read or
// synced offset) proves what it passes; after a stop in synced data,
// confirming headers or a resumed run that reaches the synced offset or the
// sealed EOF with the exact running CRC prove more. Nothing else is kept, so a
// frame embedded in a payload cannot pass for a record.
#include <algorithm>
#include <map>

#include "alog/crc32c.h"
#include "frame_reader.h"
#include "salvage.h"

namespace alog::detail {

using namespace format;

namespace {

bool well_formed_data(const FrameHeader& h, uint16_t gen) {
  return h.is_data() && h.reserved == 0 && h.stride == 1 && h.generation == gen &&
         (!h.is_lost() || h.word == 0);
}

// A frame met by a confirming walk or a resumed run.
struct Met {
  uint64_t seq;  // relative in a resumed run until its sequences are counted back
  uint64_t offset;
  FrameHeader h;
  bool ok;  // its CRC matched (else it is lost)
  bool ckpt_after = false;
};

// How a confirming walk or a run ended.
enum class End : uint8_t { checkpoint, synced, eof };

struct Span {
  std::vector<Met> frames;
  WalkState end;
  End how;
  std::optional<uint64_t> rel_read;  // a run's relative sequence at the read offset
};

class Prover {
 public:
  explicit Prover(const ProofInput& in)
      : in_(in), w_(in.file, in.length, 1 << 20), gen_(in.header.generation),
        start_(in.header.start_sequence), has_slot_(in.slot.has_value()) {
    if (has_slot_) slot_ = *in.slot;
  }
  Result<SegmentSalvage> run();

 private:
  Status refuse(uint64_t off, const std::string& what) const {
    return Status(Errc::invalid_argument, in_.name + ":" + std::to_string(off) + ": " + what)
        .at(in_.name, off);
  }
  bool same(const WalkState& s, const WalkState& a, bool rel) const {
    return (rel || s.seq == a.seq) && s.crc == a.crc && s.pending == a.pending;
  }
  void find_eof_position();
  bool eof_ok(uint64_t off) const;
  Status check_meet(const WalkState& before, const WalkState& after) const;
  void keep(uint64_t seq, uint64_t off, const FrameHeader& h);
  void lose(uint64_t from, uint64_t to, const std::string& why);
  void accept_checkpoint();
  std::optional<Span> confirm(WalkState t, bool rel);
  std::optional<Span> try_run(uint64_t cand);
  void take(const Span& s, uint64_t base, const std::string& why);
  Status after_stop(Stop s);
  Status finish(uint64_t next);
  void drop_from(uint64_t seq);
  void runs(SegmentSalvage& out) const;

  const ProofInput& in_;
  FrameWindow w_;
  uint16_t gen_;
  uint64_t start_;
  bool has_slot_;
  Slot slot_;
  std::optional<uint64_t> eof_pos_;
  uint64_t eof_seq_ = 0;
  WalkState st_, boundary_;
  std::vector<KeptRecord> kept_;  // by sequence
  std::vector<SeqRun> why_;       // lost ranges and their reasons (a later one overrides)
  bool last_kept_ = false;        // the frame just walked is kept_.back()
  std::vector<UnkeptRun> not_kept_;  // resumed runs tried and not kept
  bool done_ = false;
  uint64_t next_ = 0;
};

void Prover::find_eof_position() {
  if (has_slot_) {
    const uint64_t at = slot_.synced_offset;
    if (at + kFrameHeaderSize <= in_.length && w_.ensure(at, kFrameHeaderSize)) {
      FrameHeader h = decode_frame_header(w_.at(at));
      if (h.is_eof() && crc32c(w_.at(at), 12) == h.crc && h.reserved == 0 && h.generation == gen_ &&
          h.word == slot_.synced_crc && h.stride == slot_.synced_pending) {
        eof_pos_ = at;
        eof_seq_ = slot_.synced_sequence;
      }
    }
  } else if (in_.length >= kEmptySegmentSize) {
    eof_pos_ = in_.length - kFrameHeaderSize;  // a valid EOF must end the file
    eof_seq_ = in_.next_start.value_or(0);
  }
}

// Whether a valid EOF at `off` ends the walk (else it is a stop).
bool Prover::eof_ok(uint64_t off) const {
  if (in_.active) return !has_slot_ || off >= slot_.synced_offset;
  if (eof_pos_) return off == *eof_pos_;
  return off >= slot_.synced_offset;  // sealed, no valid EOF at the synced offset
}

// The walk from 192 must meet each anchor with the slot's fields.
Status Prover::check_meet(const WalkState& before, const WalkState& after) const {
  if (!has_slot_) return {};
  for (int k = 0; k < 2; k++) {
    WalkState a = k == 0 ? read_state(slot_) : synced_state(slot_);
    const char* what = k == 0 ? "read offset" : "synced offset";
    if (after.offset == a.offset && !same(after, a, false))
      return refuse(a.offset, std::string("the walk from offset 192 meets the slot's ") + what +
                                  " at sequence " + std::to_string(after.seq) + ", crc " +
                                  hex32(after.crc) + "; the slot says sequence " +
                                  std::to_string(a.seq) + ", crc " + hex32(a.crc) +
                                  " (anchors disagree)");
    if (before.offset < a.offset && a.offset < after.offset)
      return refuse(before.offset, std::string("the frame at offset ") + std::to_string(before.offset) +
                                       " passes over the slot's " + what + " " +
                                       std::to_string(a.offset) + " (anchors disagree)");
  }
  return {};
}

void Prover::keep(uint64_t seq, uint64_t off, const FrameHeader& h) {
  drop_from(seq);
  if (in_.sectors) {
    if (const ByteRange* bad = in_.sectors->overlapping(off, off + kFrameHeaderSize + h.word)) {
      lose(seq, seq + 1, "read error over " + range_text(*bad));
      return;
    }
  }
  last_kept_ = !h.is_lost();
  if (h.is_lost()) why_.push_back({seq, seq, "lost in an earlier salvage"});  // stays lost
  else kept_.push_back({seq, off, h.word, h.is_batch_end(), false});
}

void Prover::lose(uint64_t from, uint64_t to, const std::string& why) {
  if (to <= from) return;
  why_.push_back({from, to - 1, why});
  last_kept_ = false;
}

// Forgets the records kept at sequences from `seq` on.
void Prover::drop_from(uint64_t seq) {
  while (!kept_.empty() && kept_.back().seq >= seq) {
    kept_.pop_back();
    last_kept_ = false;
  }
}

void Prover::accept_checkpoint() {
  if (last_kept_) kept_.back().ends_batch = true;
  last_kept_ = false;
}

// Confirming headers from state t (FORMAT.md step 1): well-formed headers,
// lengths as read, up to the next checkpoint, EOF or synced offset, which
// must agree with the running CRC and pending count. rel: sequences are
// relative (a resumed run), so only CRC and count are compared at anchors.
std::optional<Span> Prover::confirm(WalkState t, bool rel) {
  Span s;
  while (true) {
    if (!w_.ensure(t.offset, kFrameHeaderSize)) return std::nullopt;
    FrameHeader h = decode_frame_header(w_.at(t.offset));
    if (well_formed_data(h, gen_)) {
      const uint64_t end = t.offset + kFrameHeaderSize + h.word;
      bool ok = false;
      if (end <= in_.length && w_.ensure(t.offset, kFrameHeaderSize + h.word)) {
        const uint8_t* p = w_.at(t.offset);
        ok = frame_crc(p, p + kFrameHeaderSize, h.word) == h.crc;
      }
      if (!w_.ensure(t.offset, kFrameHeaderSize) || t.pending == kMaxPending) return std::nullopt;
      WalkState before = t;
      s.frames.push_back({t.seq, t.offset, h, ok});
      t.crc = crc32c_extend(t.crc, w_.at(t.offset), kFrameHeaderSize);
      t.pending++;
      t.seq++;
      t.offset = end;
      t.open_batch = !h.is_batch_end();
      if (has_slot_) {
        const WalkState r = read_state(slot_), y = synced_state(slot_);
        if (before.offset < r.offset && r.offset < t.offset) return std::nullopt;
        if (t.offset == r.offset) {
          if (!same(t, r, rel)) return std::nullopt;
          if (rel) s.rel_read = t.seq;
        }
        if (before.offset < y.offset && y.offset < t.offset) return std::nullopt;
        if (t.offset == y.offset) {
          if (!same(t, y, rel)) return std::nullopt;
          s.end = t;
          s.how = End::synced;
          return s;
        }
      }
      if (end > in_.length) return std::nullopt;
      continue;
    }
    const uint8_t* p = w_.at(t.offset);
    if (!(h.is_checkpoint() || h.is_eof()) || crc32c(p, 12) != h.crc || h.reserved != 0 ||
        h.generation != gen_ || h.word != t.crc || h.stride != t.pending)
      return std::nullopt;
    if (h.is_eof()) {
      if (t.open_batch || !eof_ok(t.offset)) return std::nullopt;
      s.end = t;
      s.how = End::eof;
      return s;
    }
    if (!s.frames.empty()) s.frames.back().ckpt_after = true;
    t.offset += kFrameHeaderSize;
    t.crc = 0;
    t.pending = 0;
    t.open_batch = false;
    s.end = t;
    s.how = End::checkpoint;
    return s;
  }
}

// A resumed run from a candidate frame, the sequence unknown: kept only when
// it reaches the synced offset with the slot's CRC and count, or the sealed
// EOF at its EOF position; its sequences are then counted back.
std::optional<Span> Prover::try_run(uint64_t cand) {
  Span s;
  WalkState t{cand, 0, 0, 0, false};
  // The anchors (only with a slot).
  const WalkState y = has_slot_ ? synced_state(slot_) : WalkState{};
  const WalkState r = has_slot_ ? read_state(slot_) : WalkState{};
  uint64_t target = 0;
  // A try that is not kept goes to the manifest (from where it started to
  // where it failed), unless an earlier one already covers its start.
  auto fail = [&](const std::string& why, std::optional<uint64_t> first = std::nullopt) -> std::optional<Span> {
    if (not_kept_.empty() || cand >= not_kept_.back().end_offset)
      not_kept_.push_back({cand, std::max(t.offset, cand + kFrameHeaderSize), s.frames.size(), first, why});
    return std::nullopt;
  };
  while (true) {
    Walker walk(&w_, gen_, t, /*read_payloads=*/true);
    Stop stop = walk.step();
    if (stop == Stop::none) {
      const FrameInfo& f = walk.frame();
      WalkState before = t;
      t = walk.state();
      if (f.h.is_data()) s.frames.push_back({f.seq, f.offset, f.h, true});
      else if (!s.frames.empty()) s.frames.back().ckpt_after = true;
      if (has_slot_ && before.offset < r.offset && r.offset < t.offset)
        return fail("a frame passes over the slot's read offset");
      if (has_slot_ && t.offset == r.offset) {
        if (!same(t, r, true)) return fail("meets the read offset with other fields than the slot's");
        s.rel_read = t.seq;
      }
      if (has_slot_ && before.offset < y.offset && y.offset < t.offset)
        return fail("a frame passes over the slot's synced offset");
      if (has_slot_ && t.offset == y.offset) {
        if (!same(t, y, true)) return fail("meets the synced offset with other fields than the slot's");
        target = y.seq;
        break;
      }
      continue;
    }
    if (stop == Stop::eof) {
      if (in_.active || !eof_pos_ || t.offset != *eof_pos_) return fail("an EOF that is not the segment's EOF position");
      target = eof_seq_;
      break;
    }
    const std::string stopped = std::string(stop_kind(stop)) + " at offset " + std::to_string(t.offset);
    if (stop != Stop::frame_crc && stop != Stop::truncated_payload) return fail(stopped);
    if (!w_.ensure(t.offset, kFrameHeaderSize) ||
        !well_formed_data(decode_frame_header(w_.at(t.offset)), gen_))
      return fail(stopped);
    auto c = confirm(t, /*rel=*/true);
    if (!c) return fail(stopped + ", not confirmed by the headers after it");
    s.frames.insert(s.frames.end(), c->frames.begin(), c->frames.end());
    if (c->rel_read) s.rel_read = c->rel_read;
    t = c->end;
    if (c->how == End::synced) {
      target = y.seq;
      break;
    }
    if (c->how == End::eof) {
      if (in_.active || !eof_pos_ || t.offset != *eof_pos_) return fail("an EOF that is not the segment's EOF position");
      target = eof_seq_;
      break;
    }
  }
  // Count back; a run below the walk's sequence, one that leaves n
  // sequences lost in fewer than 16 (n + 1) bytes, or one that misses the
  // read offset's first sequence is not kept.
  const uint64_t count = t.seq;
  if (count > target) return fail("more frames than the sequence it reaches");
  const uint64_t first = target - count;
  if (first < st_.seq) return fail("would start below the walk's sequence " + std::to_string(st_.seq), first);
  const uint64_t n = first - st_.seq;
  if (cand - st_.offset < kFrameHeaderSize * (n + 1))
    return fail("would leave " + std::to_string(n) + " sequences lost in fewer than 16 x " +
                    std::to_string(n + 1) + " bytes",
                first);
  if (s.rel_read && first + *s.rel_read != slot_.first_sequence)
    return fail("misses the read offset's first sequence " + std::to_string(slot_.first_sequence), first);
  for (Met& m : s.frames) m.seq += first;
  t.seq += first;
  s.end = t;
  s.how = End::synced;
  return s;
}

// Takes a confirmed span or a kept run: frames whose CRC failed are lost.
void Prover::take(const Span& s, uint64_t from_seq, const std::string& why) {
  if (!s.frames.empty()) lose(from_seq, s.frames.front().seq, "not anchored (after " + why + ")");
  for (const Met& m : s.frames) {
    if (m.ok) keep(m.seq, m.offset, m.h);
    else lose(m.seq, m.seq + 1, "unreadable record: " + why);
    if (m.ckpt_after) accept_checkpoint();
  }
  st_ = s.end;
  boundary_ = s.end;
}

Status Prover::finish(uint64_t next) {
  if (next < st_.seq)
    return refuse(st_.offset, "the segment would end at sequence " + std::to_string(next) +
                                  " below its proven sequence " + std::to_string(st_.seq));
  lose(st_.seq, next, "not anchored (the rest of the segment)");
  drop_from(next);
  next_ = next;
  done_ = true;
  return {};
}

Status Prover::after_stop(Stop stop) {
  const uint64_t at = st_.offset;
  std::string why = std::string(stop_kind(stop)) + " at offset " + std::to_string(at);
  if (in_.sectors) {  // the stop's frame lies over an unreadable sector: say so
    uint64_t end = std::min(in_.length, at + kFrameHeaderSize);
    if (w_.ensure(at, kFrameHeaderSize) && decode_frame_header(w_.at(at)).is_data())
      end = std::max(end, std::min<uint64_t>(in_.length, end + decode_frame_header(w_.at(at)).word));
    if (const ByteRange* bad = in_.sectors->overlapping(at, end))
      why = "read error over " + range_text(*bad) + ", " + why;
  }
  if ((stop == Stop::frame_crc || stop == Stop::truncated_payload) &&
      w_.ensure(at, kFrameHeaderSize) && well_formed_data(decode_frame_header(w_.at(at)), gen_)) {
    if (auto c = confirm(st_, /*rel=*/false)) {
      take(*c, st_.seq, why);
      if (c->how == End::eof) return finish(st_.seq);
      return {};
    }
  }
  std::optional<WalkState> anchor;
  if (has_slot_)
    for (const WalkState& a : {read_state(slot_), synced_state(slot_)})
      if (a.offset > at && (!anchor || a.offset < anchor->offset)) anchor = a;
  // No resuming past a sealed segment's synced offset when no valid EOF is
  // there, nor without a slot in the active segment.
  const bool resume = anchor.has_value() || (!in_.active && eof_pos_.has_value());
  if (resume) {
    const uint64_t limit = anchor ? anchor->offset : in_.length;
    for (uint64_t from = at + 1;;) {
      auto cand = find_valid_data_frame(w_, gen_, from);
      if (!w_.error().is_ok()) return w_.error();
      if (!cand || *cand >= limit) break;
      if (auto run = try_run(*cand)) {
        take(*run, st_.seq, why);
        return {};
      }
      from = *cand + kFrameHeaderSize;
    }
  }
  if (anchor) {
    if (anchor->seq < st_.seq)
      return refuse(anchor->offset, "the slot's anchor at sequence " + std::to_string(anchor->seq) +
                                        " is below the walk's sequence " + std::to_string(st_.seq));
    lose(st_.seq, anchor->seq, "not anchored (after " + why + ")");
    st_ = *anchor;
    boundary_ = *anchor;
    return {};
  }
  if (in_.active) {  // no valid slot: cut at the last batch boundary (the next sequence is given)
    drop_from(boundary_.seq);
    st_ = boundary_;
    return finish(std::max(boundary_.seq, in_.opt->next_seq.value_or(0)));
  }
  if (eof_pos_ && has_slot_) return finish(eof_seq_);
  if (!in_.next_start)
    return refuse(at, "cannot tell where this sealed segment ends (" + why + ")");
  return finish(*in_.next_start);
}

Result<SegmentSalvage> Prover::run() {
  const SalvageOptions& opt = *in_.opt;
  uint64_t first = has_slot_ && !in_.header_from_name ? slot_.first_sequence : start_;
  if (in_.first && (!has_slot_ || in_.slot_may_be_older || in_.header_from_name)) {
    if (!opt.first_seq)
      return refuse(0, in_.header_from_name
                           ? "the first segment's header is unreadable: give the first sequence to "
                             "keep (--first-seq)"
                       : has_slot_ ? "the first segment's other slot is damaged, so its valid slot may be "
                                   "older: give the first sequence to keep (--first-seq)"
                                 : "the first segment has no valid slot: give the first sequence to "
                                   "keep (--first-seq)");
    first = *opt.first_seq;
  }
  if (in_.first && opt.first_seq) {
    if (has_slot_ && *opt.first_seq < slot_.first_sequence)
      return refuse(0, "--first-seq " + std::to_string(*opt.first_seq) +
                           " is below the slot's first sequence " +
                           std::to_string(slot_.first_sequence) +
                           ": records a truncation removed never come back");
    first = *opt.first_seq;
  }
  if (first < start_) return refuse(0, "the first sequence is below the segment's start sequence");
  if (in_.active && !has_slot_ && !opt.next_seq)
    return refuse(64, "the active segment has no valid slot: give its next sequence (--next-seq)");
  if (in_.active && has_slot_ && in_.slot_may_be_older && slot_.synced_offset > in_.length &&
      !opt.next_seq)
    return refuse(64, "the active segment's other slot is damaged and the valid one's synced offset "
                      "lies beyond the end of the file: give its next sequence (--next-seq)");
  find_eof_position();
  st_ = WalkState{kHeaderSize, start_, 0, 0, false};
  boundary_ = st_;
  ALOG_TRY(check_meet(st_, st_));
  while (!done_) {
    const bool unsynced = in_.active && has_slot_ && st_.offset >= slot_.synced_offset;
    const WalkState before = st_;
    Walker walk(&w_, gen_, st_, /*read_payloads=*/true);
    Stop stop = walk.step();
    if (stop == Stop::io_error) return w_.error();
    if (stop == Stop::none) {
      const FrameInfo& f = walk.frame();
      st_ = walk.state();
      if (f.h.is_data()) {
        keep(f.seq, f.offset, f.h);
        if (f.h.is_batch_end()) boundary_ = st_;
      } else {
        accept_checkpoint();
        boundary_ = st_;
      }
      if (has_slot_ && st_.offset == slot_.synced_offset) boundary_ = st_;
      ALOG_TRY(check_meet(before, st_));
      continue;
    }
    if (stop == Stop::eof && eof_ok(st_.offset)) {
      ALOG_TRY(finish(st_.seq));
      continue;
    }
    if (unsynced) {  // a torn tail: cut at B, as opening does
      st_ = boundary_;
      drop_from(boundary_.seq);
      ALOG_TRY(finish(boundary_.seq));
      continue;
    }
    ALOG_TRY(after_stop(stop));
  }
  if (in_.active && opt.next_seq) {
    uint64_t next = std::max(next_, *opt.next_seq);
    if (has_slot_) next = std::max(next, slot_.synced_sequence);
    lose(next_, next, "given by --next-seq");
    next_ = next;
  }
  drop_from(next_);
  if (first > next_) return refuse(0, "the first sequence is beyond the segment's next sequence");

  SegmentSalvage out;
  out.file = in_.name;
  out.header = in_.header;
  out.first_sequence = first;
  out.next_sequence = next_;
  out.original_length = in_.length;
  out.records = std::move(kept_);
  out.not_kept = std::move(not_kept_);
  const uint64_t was_first = has_slot_ && !in_.header_from_name ? slot_.first_sequence : start_;
  for (const KeptRecord& k : out.records) {
    if (k.seq < was_first || k.seq >= first) continue;
    if (out.dropped_before_first.records++ == 0) out.dropped_before_first.first_seq = k.seq;
  }
  const uint64_t limit = max_lost_frames(in_.length, opt.max_segment_size);
  if (out.lost_count() > limit)
    return refuse(0, "salvage would write " + std::to_string(out.lost_count()) +
                         " lost frames in sequences " + std::to_string(start_) + "-" +
                         std::to_string(next_ - 1) + ", more than a segment of " +
                         std::to_string(std::max(in_.length, opt.max_segment_size)) +
                         " bytes can hold (" + std::to_string(limit) +
                         "): the slot or file name that claims them is not trusted");
  runs(out);
  return out;
}

// The kept and lost runs of [first, next): kept records, and for every other
// sequence the reason the latest lose() gave it ("not anchored" if none).
void Prover::runs(SegmentSalvage& out) const {
  // Labels painted over [first, next) in order, a later paint overriding:
  // each key starts a piece that runs to the next key.
  constexpr int kNone = -1, kKeptLabel = -2;
  const uint64_t first = out.first_sequence;
  if (first >= next_) return;
  std::map<uint64_t, int> piece{{first, kNone}, {next_, kNone}};
  auto split = [&](uint64_t x) {
    auto it = std::prev(piece.upper_bound(x));
    if (it->first != x) piece.emplace_hint(std::next(it), x, it->second);
  };
  auto paint = [&](uint64_t a, uint64_t b, int label) {  // [a, b)
    a = std::max(a, first);
    b = std::min(b, next_);
    if (a >= b) return;
    split(a);
    split(b);
    auto it = piece.erase(piece.find(a), piece.find(b));
    piece.emplace_hint(it, a, label);
  };
  for (size_t i = 0; i < why_.size(); i++) paint(why_[i].first, why_[i].last + 1, int(i));
  for (const KeptRecord& k : out.records) paint(k.seq, k.seq + 1, kKeptLabel);
  for (auto it = piece.begin(); std::next(it) != piece.end(); ++it) {
    const uint64_t a = it->first, b = std::next(it)->first;
    const bool kept = it->second == kKeptLabel;
    auto& list = kept ? out.kept : out.lost;
    std::string why = kept ? std::string() : it->second == kNone ? "not anchored" : why_[size_t(it->second)].reason;
    if (!list.empty() && list.back().last + 1 == a && list.back().reason == why) list.back().last = b - 1;
    else list.push_back({a, b - 1, std::move(why)});
  }
}

}  // namespace

Result<SegmentSalvage> prove_segment(const ProofInput& in) { return Prover(in).run(); }

}  // namespace alog::detail
