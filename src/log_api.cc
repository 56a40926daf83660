// Log, the public wrapper (alog/log.h): each call forwards to LogImpl, the
// writing ones refusing while a Writer owns the log; and range_from.
#include "alog/scanner.h"
#include "log_impl.h"

namespace alog {

using namespace detail;

namespace {

// Direct writes race with a Writer's thread, which owns the write path.
Status busy(const std::string& dir) {
  return Status(Errc::busy, "a Writer owns this log; append through it, or stop it first").at(dir);
}

}  // namespace

Log::Log(std::unique_ptr<LogImpl> impl) : impl_(std::move(impl)) {}
Log::~Log() { (void)impl_->close(); }

Result<std::unique_ptr<Log>> Log::open(const std::string& dir, const Options& options) {
  auto impl = std::make_unique<LogImpl>(dir, options, /*writable=*/true);
  ALOG_TRY(impl->load());
  return std::unique_ptr<Log>(new Log(std::move(impl)));
}

Result<std::unique_ptr<Log>> Log::open_read(const std::string& dir, const Options& options) {
  ALOG_ASSIGN(auto impl, LogImpl::load_reader(dir, options));
  return std::unique_ptr<Log>(new Log(std::move(impl)));
}

Status Log::close(bool sync) { return impl_->close(sync); }

Result<uint64_t> Log::append(std::span<const std::string_view> payloads) {
  if (impl_->writer_attached()) return busy(impl_->dir());
  // Small batches (the single-record append above all) need no heap memory,
  // larger ones reuse the log's.
  RecordRef small[16];
  RecordRef* recs = payloads.size() > std::size(small) ? impl_->record_refs(payloads.size()) : small;
  for (size_t i = 0; i < payloads.size(); i++) recs[i] = {&payloads[i], 1, payloads[i].size()};
  return impl_->append_batch(recs, payloads.size());
}

Result<uint64_t> Log::append_multipart(std::span<const std::string_view> parts) {
  if (impl_->writer_attached()) return busy(impl_->dir());
  RecordRef r{parts.data(), parts.size(), 0};
  for (auto p : parts) r.length += p.size();
  return impl_->append_batch(&r, 1);
}

Result<uint64_t> Log::append_multipart_batch(
    std::span<const std::span<const std::string_view>> records) {
  if (impl_->writer_attached()) return busy(impl_->dir());
  std::vector<RecordRef> recs(records.size());
  for (size_t i = 0; i < records.size(); i++) {
    recs[i] = {records[i].data(), records[i].size(), 0};
    for (auto p : records[i]) recs[i].length += p.size();
  }
  return impl_->append_batch(recs.data(), recs.size());
}

Result<size_t> Log::append_batches(std::span<const std::span<const std::string_view>> batches) {
  if (impl_->writer_attached()) return busy(impl_->dir());
  size_t records = 0;
  for (auto b : batches) records += b.size();
  std::vector<BatchRef> refs(batches.size());
  RecordRef* r = impl_->record_refs(records);
  for (size_t i = 0; i < batches.size(); i++) {
    refs[i] = {r, batches[i].size()};
    for (const std::string_view& p : batches[i]) *r++ = {&p, 1, p.size()};
  }
  return impl_->append_batches(refs.data(), refs.size());
}

Status Log::sync() {
  if (impl_->writer_attached()) return busy(impl_->dir());
  return impl_->sync();
}
Status Log::roll() {
  if (impl_->writer_attached()) return busy(impl_->dir());
  return impl_->roll_now();
}
Status Log::truncate_before(uint64_t seq) {
  if (impl_->writer_attached()) return busy(impl_->dir());
  return impl_->truncate_before(seq);
}
Status Log::check_truncate_before(uint64_t seq) const { return impl_->plan_truncate_before(seq).status(); }
Status Log::check_truncate_after(uint64_t seq) const { return impl_->plan_truncate_after(seq).status(); }
Status Log::truncate_after(uint64_t seq) {
  if (impl_->writer_attached()) return busy(impl_->dir());
  return impl_->truncate_after(seq);
}
uint64_t Log::first_sequence() const { return impl_->first_sequence(); }
uint64_t Log::records_recycled() const { return impl_->records_recycled(); }
uint64_t Log::next_sequence() const {
  impl_->settle_tail();
  return impl_->next_sequence();
}
std::optional<uint64_t> Log::last_sequence() const {
  uint64_t f = first_sequence(), n = next_sequence();
  if (n == f) return std::nullopt;
  return n - 1;
}
uint64_t Log::disk_size() const { return impl_->disk_size(); }
const std::string& Log::dir() const { return impl_->dir(); }
bool Log::read_only() const { return !impl_->writable(); }
bool Log::failed() const { return impl_->failed(); }
const Options& Log::options() const { return impl_->options(); }
Result<Record> Log::read(uint64_t seq) const {
  impl_->settle_tail();
  return impl_->read(seq);
}
Status Log::refresh() {
  impl_->settle_tail();
  return impl_->refresh();
}
const Status& Log::damage() const {
  impl_->settle_tail();
  return impl_->damage();
}
const std::string& Log::torn_tail() const {
  impl_->settle_tail();
  return impl_->torn_tail();
}
const std::optional<TailCut>& Log::tail_cut() const {
  impl_->settle_tail();
  return impl_->tail_cut();
}
const std::vector<OpenRepair>& Log::open_repairs() const {
  impl_->settle_tail();
  return impl_->open_repairs();
}

std::vector<SegmentInfo> Log::segments() const {
  impl_->settle_tail();
  auto v = impl_->view();
  std::vector<SegmentInfo> out;
  for (size_t i = 0; i < v->size(); i++) out.push_back((*v)[i]->info(i + 1 == v->size()));
  return out;
}

Status range_from(const Log& log, uint64_t from, uint64_t to,
                  const std::function<Status(uint64_t, std::string_view)>& fn) {
  ALOG_ASSIGN(auto sc, log.scan(from, to == 0 ? std::nullopt : std::optional<uint64_t>(to)));
  while (true) {
    ALOG_ASSIGN(bool more, sc->next());
    if (!more) return {};
    if (sc->lost()) continue;
    ALOG_TRY(fn(sc->sequence(), sc->payload()));
  }
}

}  // namespace alog
