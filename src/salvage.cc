// Salvage across segments (FORMAT.md steps 0, 2-4): which segments are
// rebuilt, the segments of lost frames for missing ranges, and the rebuild
// itself, written as NAME.seg.tmp and renamed over the damaged file once the
// original is safe in lost+found/.
#include "salvage.h"

#include <algorithm>
#include <cstring>

#include "alog/crc32c.h"
#include "lost_found.h"
#include "file_cache.h"

namespace alog::detail {

using namespace format;

namespace {

// Verification found damage in this file itself (a gap between segments is
// damage in neither; a torn tail alone is cut in place by opening).
bool damaged(const VerifyReport& r, const std::string& file) {
  return std::any_of(r.problems.begin(), r.problems.end(), [&](const Problem& p) {
    return p.file == file && p.classification == Classification::corruption &&
           p.kind != "sequence_gap";
  });
}

// The generation of a segment whose fixed header is unreadable: that of a
// valid frame at offset 192 (recycling writes it first), else of an EOF at a
// valid slot's synced offset.
std::optional<uint16_t> generation_from_frames(File& f, uint64_t length, const SlotChoice& slots) {
  auto frame_gen = [&](uint64_t off, bool eof_only) -> std::optional<uint16_t> {
    uint8_t h[kFrameHeaderSize];
    auto got = f.pread(h, kFrameHeaderSize, off);
    if (!got.is_ok() || *got != kFrameHeaderSize) return std::nullopt;
    FrameHeader fh = decode_frame_header(h);
    if (fh.generation == 0 || fh.reserved != 0) return std::nullopt;
    if (fh.is_eof() || (!eof_only && fh.is_checkpoint()))
      return crc32c(h, 12) == fh.crc ? std::optional(fh.generation) : std::nullopt;
    if (eof_only || !fh.is_data() || fh.stride != 1 || off + kFrameHeaderSize + fh.word > length)
      return std::nullopt;
    std::string p(fh.word, '\0');
    auto pg = f.pread(p.data(), p.size(), off + kFrameHeaderSize);
    if (!pg.is_ok() || *pg != p.size() || frame_crc(h, p.data(), p.size()) != fh.crc) return std::nullopt;
    return fh.generation;
  };
  if (auto g = frame_gen(kHeaderSize, false)) return g;
  for (int k = 0; k < 2; k++)
    if (slots.state[k] == SlotState::valid)
      if (auto g = frame_gen(slots.slot[k].synced_offset, true)) return g;
  return std::nullopt;
}

// `created at` for an unreadable header: the next segment's, found through
// any run of unreadable ones; for the last segment, the time of the salvage.
Result<uint64_t> created_after(Fs& fs, const std::string& dir, const VerifyDetail& d, size_t i,
                               uint64_t now_ms) {
  for (size_t j = i + 1; j < d.segments.size(); j++) {
    ALOG_ASSIGN(auto f, open_shedding(fs, path_join(dir, d.segments[j].name), OpenMode::read));
    uint8_t hdr[kFixedSize];
    ALOG_ASSIGN(size_t got, SectorReader(*f).pread(hdr, kFixedSize, 0));  // unreadable: zeros
    SegmentHeader h;
    if (got == kFixedSize && decode_segment_header(hdr, &h) == HeaderError::none) return h.created_at_ms;
  }
  return now_ms;
}

Status refusal(const std::string& file, uint64_t off, const std::string& what) {
  return Status(Errc::invalid_argument, file + ":" + std::to_string(off) + ": " + what).at(file, off);
}

}  // namespace

Result<SalvagePlan> plan_salvage(Fs& fs, const std::string& dir, const VerifyDetail& d,
                                 const SalvageOptions& opt, uint64_t now_ms) {
  SalvagePlan plan;
  struct Seen {
    std::string file;
    uint64_t start, next, created_at;
    bool from_name;  // its start came from its file name
  };
  std::vector<Seen> order;
  const size_t n = d.segments.size();
  for (size_t i = 0; i < n; i++) {
    const SegmentDetail& sd = d.segments[i];
    const SegmentReport& sr = d.report.segments[i];
    if (!damaged(d.report, sd.name)) {
      order.push_back({sd.name, sr.start_sequence, sr.next_sequence, sr.created_at_ms, false});
      continue;
    }
    ALOG_ASSIGN(auto raw, open_shedding(fs, path_join(dir, sd.name), OpenMode::read));
    SectorReader reader(*raw);  // step 4: a read error is damage over its sectors
    SectorReader* file = &reader;
    ALOG_ASSIGN(uint64_t length, file->size());
    uint8_t hdr[kHeaderSize] = {};
    ALOG_ASSIGN(size_t got, file->pread(hdr, kHeaderSize, 0));
    SegmentHeader h;
    bool from_name = false;
    if (got < kFixedSize || decode_segment_header(hdr, &h) != HeaderError::none) {
      // Step 2: the start from the canonical name, the generation from the
      // frame at 192 or an EOF at a valid slot's synced offset (or given),
      // created at from the next readable segment (the last: now).
      auto start = parse_segment_name(sd.name);
      if (!start) {
        plan.refused = refusal(sd.name, 0, "the segment header is unreadable and the name is not a "
                                           "segment name: its start sequence is unknown").message();
        return plan;
      }
      h.start_sequence = *start;
      SlotChoice sc = choose_slot(hdr, *start);
      auto gen = generation_from_frames(*file, length, sc);
      if (!gen) gen = opt.generation;
      if (!gen) {
        plan.refused = refusal(sd.name, 0, "the segment header is unreadable and no valid frame tells its "
                                           "generation: give it (--generation)").message();
        return plan;
      }
      h.generation = *gen;
      ALOG_ASSIGN(h.created_at_ms, created_after(fs, dir, d, i, now_ms));
      from_name = true;
    }
    SlotChoice slots = choose_slot(hdr, h.start_sequence);
    ProofInput in;
    in.file = file;
    in.sectors = file;
    in.name = sd.name;
    in.length = length;
    in.header = h;
    if (slots.winner >= 0) {
      in.slot = slots.slot[slots.winner];
      in.slot_may_be_older = slots.state[1 - slots.winner] == SlotState::invalid;
    }
    in.active = i + 1 == n;
    in.first = i == 0;
    in.header_from_name = from_name;
    if (i + 1 < n) {
      const SegmentDetail& nx = d.segments[i + 1];
      if (nx.header_ok) in.next_start = nx.start_sequence;
      else in.next_start = parse_segment_name(nx.name);
    }
    in.opt = &opt;
    auto proof = prove_segment(in);
    if (!proof.is_ok()) {
      if (!proof.status().is(Errc::invalid_argument)) return proof.status();
      plan.refused = proof.status().message();
      return plan;
    }
    order.push_back({sd.name, h.start_sequence, proof->next_sequence, h.created_at_ms, from_name});
    plan.segments.push_back(std::move(*proof));
  }
  // Step 3: the sequences between segments that no segment holds are lost;
  // an overlap is refused.
  std::vector<SegmentSalvage> created;
  for (size_t i = 0; i + 1 < order.size(); i++) {
    const Seen& a = order[i];
    const Seen& b = order[i + 1];
    if (b.start < a.next) {
      plan.refused = refusal(b.file, 0,
                             "overlaps " + a.file + ": it starts at sequence " +
                                 std::to_string(b.start) + " but " + a.file + " ends at " +
                                 std::to_string(a.next))
                         .message();
      return plan;
    }
    if (b.start == a.next) continue;
    if ((a.from_name || b.from_name) && !opt.confirm_missing) {
      plan.refused = refusal(b.file, 0,
                             "sequences " + std::to_string(a.next) + "-" + std::to_string(b.start - 1) +
                                 " are missing next to a segment whose start came from its file name: "
                                 "confirm they are lost (--confirm-missing)")
                         .message();
      return plan;
    }
    if ((b.start - a.next) > max_lost_frames(0, opt.max_segment_size) && !opt.confirm_missing) {
      plan.refused = refusal(b.file, 0,
                             "sequences " + std::to_string(a.next) + "-" + std::to_string(b.start - 1) +
                                 " are missing, more than a segment of " +
                                 std::to_string(opt.max_segment_size) +
                                 " bytes can hold as lost frames: confirm they are lost (--confirm-missing)")
                         .message();
      return plan;
    }
    SegmentSalvage s;
    s.create = true;
    s.file = segment_name(a.next);
    s.header.start_sequence = a.next;
    s.header.generation = 1;
    s.header.created_at_ms = b.created_at;
    s.first_sequence = a.next;
    s.next_sequence = b.start;
    s.lost.push_back({a.next, b.start - 1, "missing: no segment holds these sequences"});
    created.push_back(std::move(s));
  }
  plan.segments.insert(plan.segments.end(), created.begin(), created.end());
  std::stable_sort(plan.segments.begin(), plan.segments.end(),
                   [](const SegmentSalvage& x, const SegmentSalvage& y) {
                     return x.header.start_sequence < y.header.start_sequence;
                   });
  plan.next_sequence = order.empty() ? 0 : order.back().next;
  return plan;
}

namespace {

// Writes the rebuilt segment (step 4) to `out`: header, slot A, slot B zero,
// one frame per sequence, checkpoints where a writer with `stride` puts
// them, the EOF.
Status write_rebuild(File& out, File* orig, const SegmentSalvage& s, uint32_t stride) {
  const uint16_t gen = s.header.generation;
  const uint64_t start = s.header.start_sequence;
  const uint64_t n = s.next_sequence - start;
  std::string buf(kHeaderSize, '\0');
  uint64_t flushed = 0;  // bytes of the file before buf
  auto flush = [&]() -> Status {
    ALOG_TRY(out.pwrite(buf.data(), buf.size(), flushed));
    flushed += buf.size();
    buf.clear();
    return {};
  };
  uint32_t crc = 0;
  uint32_t pending = 0;
  bool last_is_checkpoint = false;
  auto checkpoint = [&](bool eof) {
    uint8_t f[kFrameHeaderSize];
    encode_checkpoint(crc, uint16_t(pending), gen, eof, f);
    buf.append(reinterpret_cast<const char*>(f), kFrameHeaderSize);
    if (!eof) crc = 0, pending = 0;
    last_is_checkpoint = true;
  };
  // The kept record at sequence start + i, if any (records are by sequence).
  size_t next_kept = 0;
  auto kept_at = [&](uint64_t i) -> const KeptRecord* {
    while (next_kept < s.records.size() && s.records[next_kept].seq < start + i) next_kept++;
    return next_kept < s.records.size() && s.records[next_kept].seq == start + i ? &s.records[next_kept]
                                                                                  : nullptr;
  };
  // A lost frame ends its batch when the segment ends, when the next frame
  // is kept, or at 65535 frames; a kept one keeps its flags, and one the
  // file followed with a checkpoint also ends a batch of the rebuild. A
  // batch of k frames goes whole after a checkpoint when pending + k would
  // pass the most a checkpoint counts, so each batch is gathered first.
  struct Frame {
    const KeptRecord* kept;
    bool batch_end;
  };
  std::vector<Frame> batch;
  Slot a;
  a.counter = 1;
  bool read_set = false;
  bool last_batch_end = false;
  std::string rec;
  for (uint64_t i = 0; i < n;) {
    batch.clear();
    uint32_t run = 0;
    for (bool ends = false; !ends && i < n; i++) {
      const KeptRecord* k = kept_at(i);
      run++;
      bool be;
      if (k) {
        be = k->batch_end;
      } else {
        const KeptRecord* nk = i + 1 < n ? kept_at(i + 1) : nullptr;
        be = i + 1 == n || nk != nullptr || run == kMaxBatchRecords;
      }
      ends = be || (k && k->ends_batch) || i + 1 == n;
      batch.push_back({k, be});
    }
    if (pending + batch.size() > kMaxPending) checkpoint(false);
    const uint64_t first_of_batch = i - batch.size();
    for (size_t j = 0; j < batch.size(); j++) {
      const uint64_t seq = start + first_of_batch + j;
      if (seq == s.first_sequence) {
        a.read_offset = flushed + buf.size();
        a.first_sequence = seq;
        a.read_crc = crc;
        a.read_pending = uint16_t(pending);
        read_set = true;
      }
      const Frame& f = batch[j];
      uint8_t h[kFrameHeaderSize];
      if (!f.kept) {
        FrameHeader lh;
        lh.word = 0;
        lh.stride = 1;
        lh.generation = gen;
        lh.flags = uint16_t(kFlagData | kFlagLost | (f.batch_end ? kFlagBatchEnd : 0));
        encode_frame_prefix(lh, h);
        put32(h + 12, crc32c(h, 12));
        buf.append(reinterpret_cast<const char*>(h), kFrameHeaderSize);
      } else {
        rec.resize(kFrameHeaderSize + f.kept->length);
        ALOG_ASSIGN(size_t got, orig->pread(rec.data(), rec.size(), f.kept->offset));
        if (got != rec.size())
          return Status(Errc::io, "short read of a kept record").at(orig->path(), f.kept->offset);
        std::memcpy(h, rec.data(), kFrameHeaderSize);
        buf += rec;
      }
      crc = crc32c_extend(crc, h, kFrameHeaderSize);
      pending++;
      last_is_checkpoint = false;
    }
    last_batch_end = batch.back().batch_end;
    if (pending >= stride) checkpoint(false);
    if (buf.size() >= (4u << 20)) ALOG_TRY(flush());
  }
  if (n && !last_batch_end && !last_is_checkpoint) checkpoint(false);
  const uint64_t eof = flushed + buf.size();
  if (!read_set) {
    a.read_offset = eof;
    a.first_sequence = s.next_sequence;
    a.read_crc = crc;
    a.read_pending = uint16_t(pending);
  }
  a.synced_offset = eof;
  a.synced_sequence = s.next_sequence;
  a.synced_crc = crc;
  a.synced_pending = uint16_t(pending);
  checkpoint(true);
  ALOG_TRY(flush());
  uint8_t head[kHeaderSize] = {};
  encode_segment_header(s.header, head);
  encode_slot(a, head + kSlotAOffset);
  return out.pwrite(head, kHeaderSize, 0);
}

std::string lost_text(const SegmentSalvage& s) {
  std::string t;
  for (const SeqRun& r : s.lost)
    t += (t.empty() ? "" : "; ") + std::to_string(r.first) + "-" + std::to_string(r.last) + ": " +
         r.reason;
  return t.empty() ? "none" : t;
}

}  // namespace

Result<std::vector<std::string>> apply_salvage(Fs& fs, const std::string& dir,
                                               const SalvagePlan& plan, uint32_t stride,
                                               uint64_t now_ms) {
  std::vector<std::string> saved;
  for (const SegmentSalvage& s : plan.segments) {
    const std::string path = path_join(dir, s.file);
    const std::string tmp = path + ".tmp";
    if (Status st = fs.unlink(tmp); !st.is_ok() && !st.is(Errc::not_found)) return st;
    std::unique_ptr<File> orig;
    if (!s.create) {
      ALOG_ASSIGN(orig, open_shedding(fs, path, OpenMode::read));
    }
    {
      ALOG_ASSIGN(auto out, open_shedding(fs, tmp, OpenMode::create_excl));
      ALOG_TRY(write_rebuild(*out, orig.get(), s, stride));
      ALOG_TRY(out->datasync());
    }
    std::string where;
    if (!s.create) {
      // The original goes to lost+found/ whole before it is replaced.
      SalvageManifest m;
      for (const SeqRun& r : s.lost) m.lost.push_back({r.first, r.last, r.reason});
      m.not_kept = s.not_kept;
      // The copy holds what could be read, and its manifest says what could not.
      SectorReader reader(*orig);
      m.unreadable = &reader.unreadable();
      ALOG_ASSIGN(where, save_tail(fs, dir, reader, s.file, 0,
                                   "salvage: the original before its rebuild; lost " + lost_text(s),
                                   now_ms, m));
    }
    ALOG_TRY(fs.rename(tmp, path));
    ALOG_TRY(fs.sync_dir(dir));
    saved.push_back(where);
  }
  return saved;
}

}  // namespace alog::detail
