// Reading a damaged log as a salvage would leave it, without changing a
// byte (cat --salvage): the records whose sequences are proven, lost ones
// for the rest, from the same plan a salvage would carry out.
#include "frame_reader.h"
#include "salvage.h"
#include "file_cache.h"

namespace alog::detail {

using namespace format;

namespace {

// An undamaged segment's records from its read offset, up to `next` (the
// end verification found: the EOF, or the batch boundary before a torn tail).
Status walk_clean(File& f, uint64_t length, const SegmentDetail& sd, uint64_t next,
                  const SalvageVisit& fn) {
  FrameWindow w(&f, length, 1 << 20);
  Walker walk(&w, sd.generation, read_state(sd.slot), /*read_payloads=*/true);
  while (walk.state().seq < next) {
    Stop s = walk.step();
    if (s == Stop::io_error) return w.error();
    if (s != Stop::none) break;
    const FrameInfo& fr = walk.frame();
    if (!fr.h.is_data()) continue;
    std::string_view payload(reinterpret_cast<const char*>(fr.payload), fr.h.word);
    ALOG_TRY(fn(fr.seq, fr.h.is_lost() ? std::string_view() : payload, fr.h.is_lost()));
  }
  return {};
}

}  // namespace

Status salvage_read(Fs& fs, const std::string& dir, const VerifyDetail& d, const SalvagePlan& plan,
                    const SalvageVisit& fn) {
  // Log order: the planned segments (rebuilt or created) by start sequence,
  // the others as verification found them.
  size_t k = 0;
  auto emit_planned = [&](const SegmentSalvage& s) -> Status {
    std::unique_ptr<File> f;
    if (!s.create) {
      ALOG_ASSIGN(f, open_shedding(fs, path_join(dir, s.file), OpenMode::read));
    }
    std::string buf;
    auto kept = std::lower_bound(s.records.begin(), s.records.end(), s.first_sequence,
                                 [](const KeptRecord& r, uint64_t seq) { return r.seq < seq; });
    for (uint64_t seq = s.first_sequence; seq < s.next_sequence; seq++) {
      if (kept == s.records.end() || kept->seq != seq) {
        ALOG_TRY(fn(seq, {}, true));
        continue;
      }
      const KeptRecord& fr = *kept++;
      buf.resize(fr.length);
      ALOG_ASSIGN(size_t got, f->pread(buf.data(), fr.length, fr.offset + kFrameHeaderSize));
      if (got != fr.length) return Status(Errc::io, "short read").at(f->path(), fr.offset);
      ALOG_TRY(fn(seq, buf, false));
    }
    return {};
  };
  for (size_t i = 0; i < d.segments.size(); i++) {
    const SegmentDetail& sd = d.segments[i];
    const SegmentReport& sr = d.report.segments[i];
    const uint64_t start = sd.header_ok ? sd.start_sequence : parse_segment_name(sd.name).value_or(0);
    while (k < plan.segments.size() && plan.segments[k].create &&
           plan.segments[k].header.start_sequence < start)
      ALOG_TRY(emit_planned(plan.segments[k++]));
    if (k < plan.segments.size() && plan.segments[k].file == sd.name) {
      ALOG_TRY(emit_planned(plan.segments[k++]));
      continue;
    }
    if (!sd.header_ok) continue;  // not planned: salvage refused (the caller says so)
    ALOG_ASSIGN(auto f, open_shedding(fs, path_join(dir, sd.name), OpenMode::read));
    ALOG_TRY(walk_clean(*f, sr.file_length, sd, sr.next_sequence, fn));
  }
  while (k < plan.segments.size()) ALOG_TRY(emit_planned(plan.segments[k++]));
  return {};
}

}  // namespace alog::detail

namespace alog {

namespace {

// The log as verification finds it and, when it holds corruption, the plan
// of its salvage (refused or not): what cat --salvage and seek --salvage
// read, so they read what recover --force would leave.
struct SalvageView {
  std::shared_ptr<DirAnchor> anchor;  // the directory read, held while the view is
  detail::VerifyDetail d;
  detail::SalvagePlan plan;
};

Result<SalvageView> salvage_view(Fs& fs, const std::string& dir, const RecoverOptions& opt) {
  VerifyOptions vo;
  vo.fs = &fs;
  vo.progress = opt.progress;
  SalvageView v;
  ALOG_ASSIGN(v.anchor, detail::anchor_if_dir(fs, dir));
  ALOG_ASSIGN(v.d, detail::verify_detail(dir, vo));
  if (v.d.report.has(Classification::corruption)) {
    ALOG_ASSIGN(v.plan, detail::plan_salvage(fs, dir, v.d, detail::salvage_options(opt), 0));
  }
  return v;
}

}  // namespace

Result<SalvageReadReport> read_salvaged(
    const std::string& dir, const RecoverOptions& opt,
    const std::function<Status(uint64_t seq, std::string_view payload, bool lost)>& fn) {
  Fs& fs = opt.fs ? *opt.fs : posix_fs();
  ALOG_ASSIGN(SalvageView v, salvage_view(fs, dir, opt));
  SalvageReadReport rep;
  rep.damage = v.d.report;
  rep.refused = v.plan.refused;
  if (!rep.refused.empty()) return rep;
  // fn ends the reading early with a `stopped` status.
  if (Status st = detail::salvage_read(fs, dir, v.d, v.plan, fn); !st.is_ok() && !st.is(Errc::stopped))
    return st;
  return rep;
}

Result<SalvageLocation> locate_salvaged(const std::string& dir, const RecoverOptions& opt, uint64_t seq) {
  Fs& fs = opt.fs ? *opt.fs : posix_fs();
  ALOG_ASSIGN(SalvageView v, salvage_view(fs, dir, opt));
  const detail::VerifyDetail& d = v.d;
  const detail::SalvagePlan& plan = v.plan;
  SalvageLocation loc;
  loc.damage = d.report;
  loc.refused = plan.refused;
  if (!loc.refused.empty()) return loc;
  // The salvaged log's range: verification's, ending where salvage ends it.
  loc.first_seq = detail::salvaged_first_sequence(d, plan);
  loc.next_seq = std::max(d.report.next_sequence, plan.next_sequence);
  for (const detail::SegmentSalvage& s : plan.segments) {
    if (seq < s.header.start_sequence || seq >= s.next_sequence) continue;
    loc.file = s.file;
    loc.rebuilt = true;
    loc.created = s.create;
    loc.segment_start = s.header.start_sequence;
    loc.segment_first = s.first_sequence;
    loc.segment_next = s.next_sequence;
    loc.in_log = seq >= s.first_sequence;
    auto k = std::lower_bound(s.records.begin(), s.records.end(), seq,
                              [](const detail::KeptRecord& r, uint64_t q) { return r.seq < q; });
    if (k != s.records.end() && k->seq == seq) {
      loc.offset = k->offset;
      return loc;
    }
    loc.lost = true;
    for (const detail::SeqRun& r : s.lost)
      if (r.first <= seq && seq <= r.last) loc.reason = r.reason;
    return loc;
  }
  for (size_t i = 0; i < d.segments.size(); i++) {
    const SegmentReport& sr = d.report.segments[i];
    if (sr.first_sequence <= seq && seq < sr.next_sequence) {
      loc.file = sr.file;
      loc.in_log = true;
    }
  }
  return loc;
}

}  // namespace alog
