// Appender (appender.h): batches, timers and retention for alog append.
#include "appender.h"

#include <fmt/core.h>

#include <algorithm>

#include "alog/format.h"

namespace alog::cli {

Appender::Appender(const Global& g, Log& log, AppendResult& r, size_t batch, uint64_t flush_ms,
                   uint64_t sync_ms, bool periodic_sync, const StoredRetention& ret)
    : log_(log), r_(r), ret_(ret), batch_(batch), flush_ms_(flush_ms), sync_ms_(sync_ms),
      periodic_sync_(periodic_sync),
      // --sync-each syncs every batch before the next: one batch per write.
      group_(!log.options().sync_on_append), progress_(g, "append", /*delayed=*/true) {}

void Appender::add(std::string_view rec, const InputReader& in) {
  const Options& opt = log_.options();
  const uint64_t framed = format::kFrameHeaderSize + rec.size();
  adding_ = true;
  // A batch ends before a record that would not let it fit an empty segment.
  if (views_.size() > open_first() &&
      format::kHeaderSize + open_size_ + framed + 2 * format::kFrameHeaderSize >
          opt.max_segment_size)
    close_batch();
  if (views_.size() == open_first())
    starts_.push_back({in.name(), in.record_number(), in.record_offset(), now_ms() + flush_ms_});
  open_size_ += framed;
  views_.push_back(rec);
  adding_ = false;
  if (views_.size() - open_first() >= batch_) close_batch();
}

void Appender::add_owned(std::string rec, const InputReader& in) {
  const bool all_owned = owned_ == views_.size();
  // Its number: add() may write batches first, which moves records from
  // views_ to written_ and leaves the sum as it is.
  Kept& k = kept_.emplace_back(Kept{written_ + views_.size(), std::move(rec)});
  add(k.bytes, in);
  if (all_owned) owned_ = views_.size();
}

void Appender::input_moves() {
  write_closed();
  if (owned_ == views_.size()) return;
  Kept& k = kept_.emplace_back(Kept{written_ + views_.size() - 1, {}});
  uint64_t bytes = 0;
  for (size_t i = owned_; i < views_.size(); i++) bytes += views_[i].size();
  k.bytes.reserve(bytes);
  for (size_t i = owned_; i < views_.size(); i++) {
    const size_t at = k.bytes.size(), n = views_[i].size();
    k.bytes.append(views_[i]);
    views_[i] = std::string_view(k.bytes).substr(at, n);  // reserved: the bytes do not move
  }
  owned_ = views_.size();
}

void Appender::end_open_batch() {
  closed_.push_back(views_.size());
  closed_size_ += open_size_;
  open_size_ = 0;
}

void Appender::close_batch() {
  end_open_batch();
  if (!group_ || closed_size_ >= kGroupBytes) write_closed();
}

void Appender::flush() {
  if (views_.size() > open_first()) end_open_batch();
  write_closed();
}

void Appender::write_closed() {
  const size_t n = closed_.size();
  if (n == 0) return;
  spans_.clear();
  for (size_t b = 0, first = 0; b < n; first = closed_[b++])
    spans_.push_back(std::span<const std::string_view>(views_).subspan(first, closed_[b] - first));
  size_t done = 0;
  while (done < n) {
    // Retention runs after each roll (--segment-age's, or a full segment's),
    // and each call rolls at most once, before its first batch.
    std::optional<uint64_t> active;
    if (ret_.any())
      active = roll_if_old(log_, ret_) ? UINT64_MAX : log_.segments().back().start_sequence;
    const uint64_t next = log_.next_sequence();
    auto res = log_.append_batches(std::span(spans_).subspan(done, n - done));
    if (!res) {  // else at least one batch was appended
      drop(done);
      fail(res.status(), log_.dir());
    }
    if (active && (*active == UINT64_MAX || log_.segments().back().start_sequence != *active))
      r_.retention_removed += apply_retention(log_, ret_);
    if (!r_.first_seq) r_.first_seq = next;
    r_.last_seq = log_.next_sequence() - 1;
    for (size_t b = done; b < done + *res; b++) {
      r_.records += spans_[b].size();
      for (std::string_view v : spans_[b]) r_.bytes += v.size();
    }
    r_.batches += *res;
    done += *res;
  }
  drop(n);
  if (periodic_sync_ && !sync_due_) sync_due_ = now_ms() + sync_ms_;
  progress_.update(r_.records, 0);
}

void Appender::drop(size_t n) {
  if (n == 0) return;
  const size_t recs = closed_[n - 1];
  views_.erase(views_.begin(), views_.begin() + ptrdiff_t(recs));
  closed_.erase(closed_.begin(), closed_.begin() + ptrdiff_t(n));
  for (size_t& c : closed_) c -= recs;
  starts_.erase(starts_.begin(), starts_.begin() + ptrdiff_t(n));
  written_ += recs;
  owned_ = owned_ > recs ? owned_ - recs : 0;
  while (!kept_.empty() && kept_.front().last < written_) kept_.pop_front();
  closed_size_ = 0;
  for (size_t i = 0; i < open_first(); i++)
    closed_size_ += format::kFrameHeaderSize + views_[i].size();
}

int Appender::tick() {
  input_moves();
  uint64_t now = now_ms();
  if (!views_.empty() && now >= starts_.front().due_ms) flush();
  if (sync_due_ && now >= *sync_due_) {
    Status st = log_.sync();
    if (!st) fail(st, log_.dir());
    sync_due_.reset();
  }
  // --segment-age while no input comes: an idle log rolls too (looked at
  // once a second; a batch being collected rolls it in write_closed()).
  if (ret_.segment_age_s && views_.empty() && now >= age_due_) {
    if (roll_if_old(log_, ret_)) r_.retention_removed += apply_retention(log_, ret_);
    age_due_ = now + kAgeCheckMs;
  }
  std::optional<uint64_t> due;
  if (!views_.empty()) due = starts_.front().due_ms;
  if (sync_due_) due = due ? std::min(*due, *sync_due_) : *sync_due_;
  if (ret_.segment_age_s && views_.empty()) due = due ? std::min(*due, age_due_) : age_due_;
  if (!due) return -1;
  return int(std::min<uint64_t>(*due > now ? *due - now : 0, 60000));
}

void Appender::salvage(bool sync, Failure& f, const InputReader* in, bool in_fed) {
  progress_.clear();
  // Closed batches are whole: written, as they would have been at once
  // without grouping (not after a second signal, which ends it at once).
  // A log that failed fails them again, and the first error is reported.
  if (f.code != "interrupted") {
    try {
      write_closed();
    } catch (const Failure&) {
    }
  }
  // With --sync-each every batch appended was synced before the next.
  bool durable = !r_.records || log_.options().sync_on_append;
  if (sync && !durable) durable = log_.sync().is_ok();
  Json resume = Json::object();
  if (!starts_.empty()) {
    resume["file"] = starts_.front().file;
    resume["record"] = starts_.front().record;
    resume["offset"] = starts_.front().offset;
  } else if (in && (!in_fed || adding_)) {  // the record that failed, read but not kept
    resume["file"] = in->name();
    resume["record"] = in->record_number();
    resume["offset"] = in->record_offset();
  } else if (in) {  // the record after the last one read
    resume["file"] = in->name();
    resume["record"] = in->record_number() + 1;
    resume["offset"] = in->offset();
  } else {
    resume = nullptr;
  }
  add_append_state(f, r_.last_seq, durable, std::move(resume));
}

void add_append_state(Failure& f, std::optional<uint64_t> last_seq, bool durable, Json resume) {
  std::string tail = last_seq ? fmt::format(" (appended up to sequence {})", *last_seq)
                              : std::string(" (nothing appended)");
  Json detail = f.detail.is_object() ? f.detail : Json::object();
  detail["last_appended_seq"] = opt_json(last_seq);
  detail["last_durable_seq"] = durable ? opt_json(last_seq) : Json(nullptr);
  detail["resume"] = std::move(resume);
  Failure g(f.code, f.path, f.offset, f.what() + tail, f.exit_status);
  g.detail = std::move(detail);
  f = std::move(g);
}

}  // namespace alog::cli
