// Appender (appender.h): batches, timers and retention for alog append.
#include "appender.h"

#include <fmt/core.h>

#include <algorithm>

#include "alog/format.h"

namespace alog::cli {

Appender::Appender(const Global& g, Log& log, AppendResult& r, size_t batch, uint64_t flush_ms,
                   uint64_t sync_ms, bool periodic_sync, const StoredRetention& ret)
    : log_(log), r_(r), ret_(ret), batch_(batch), flush_ms_(flush_ms), sync_ms_(sync_ms),
      periodic_sync_(periodic_sync), progress_(g, "append", /*delayed=*/true) {}

void Appender::add(std::string_view rec, const InputReader& in) {
  const Options& opt = log_.options();
  // A batch ends before a record that would not let it fit an empty segment.
  uint64_t grown = pending_size_ + format::kFrameHeaderSize + rec.size();
  if (!ends_.empty() && format::kHeaderSize + grown + 2 * format::kFrameHeaderSize > opt.max_segment_size)
    flush();
  if (ends_.empty()) {
    flush_due_ = now_ms() + flush_ms_;
    resume_ = {in.name(), in.record_number(), in.record_offset()};
  }
  pending_size_ += format::kFrameHeaderSize + rec.size();
  arena_.append(rec);
  ends_.push_back(arena_.size());
  if (ends_.size() >= batch_) flush();
}

void Appender::flush() {
  if (ends_.empty()) return;
  views_.clear();
  for (size_t i = 0, from = 0; i < ends_.size(); from = ends_[i++])
    views_.push_back(std::string_view(arena_).substr(from, ends_[i] - from));
  // Retention runs after each roll (--segment-age's, or a full segment's).
  std::optional<uint64_t> active;
  if (ret_.any()) active = roll_if_old(log_, ret_) ? UINT64_MAX : log_.segments().back().start_sequence;
  auto res = log_.append(views_);
  if (!res) fail(res.status(), log_.dir());
  if (active && (*active == UINT64_MAX || log_.segments().back().start_sequence != *active))
    r_.retention_removed += apply_retention(log_, ret_);
  uint64_t last = *res;
  if (!r_.first_seq) r_.first_seq = last + 1 - ends_.size();
  r_.last_seq = last;
  r_.records += ends_.size();
  r_.batches++;
  r_.bytes += arena_.size();
  arena_.clear();
  ends_.clear();
  pending_size_ = 0;
  if (periodic_sync_ && !sync_due_) sync_due_ = now_ms() + sync_ms_;
  progress_.update(r_.records, 0);
}

int Appender::tick() {
  uint64_t now = now_ms();
  if (!ends_.empty() && now >= flush_due_) flush();
  if (sync_due_ && now >= *sync_due_) {
    Status st = log_.sync();
    if (!st) fail(st, log_.dir());
    sync_due_.reset();
  }
  // --segment-age while no input comes: an idle log rolls too (looked at
  // once a second; a batch being collected rolls it in flush()).
  if (ret_.segment_age_s && ends_.empty() && now >= age_due_) {
    if (roll_if_old(log_, ret_)) r_.retention_removed += apply_retention(log_, ret_);
    age_due_ = now + kAgeCheckMs;
  }
  std::optional<uint64_t> due;
  if (!ends_.empty()) due = flush_due_;
  if (sync_due_) due = due ? std::min(*due, *sync_due_) : *sync_due_;
  if (ret_.segment_age_s && ends_.empty()) due = due ? std::min(*due, age_due_) : age_due_;
  if (!due) return -1;
  return int(std::min<uint64_t>(*due > now ? *due - now : 0, 60000));
}

void Appender::salvage(bool sync, Failure& f, const InputReader* in) {
  progress_.clear();
  bool durable = !r_.records;
  if (sync && r_.records) durable = log_.sync().is_ok();
  std::string tail = r_.last_seq ? fmt::format(" (appended up to sequence {})", *r_.last_seq)
                                 : std::string(" (nothing appended)");
  Json detail = f.detail.is_object() ? f.detail : Json::object();
  detail["last_appended_seq"] = opt_json(r_.last_seq);
  detail["last_durable_seq"] = durable ? opt_json(r_.last_seq) : Json(nullptr);
  Json resume = Json::object();
  if (!ends_.empty()) {
    resume["file"] = resume_.file;
    resume["record"] = resume_.record;
    resume["offset"] = resume_.offset;
  } else if (in) {
    resume["file"] = in->name();
    resume["record"] = in->record_number() + 1;
    resume["offset"] = in->offset();
  } else {
    resume = nullptr;
  }
  detail["resume"] = resume;
  Failure g(f.code, f.path, f.offset, f.what() + tail, f.exit_status);
  g.detail = std::move(detail);
  f = std::move(g);
}

}  // namespace alog::cli
