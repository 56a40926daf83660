// alog cat's output (cat_printer.h). Each record is rendered in place: the
// framing or the JSON line's fixed text, the sequence and length in decimal,
// the payload copied or encoded straight into the buffer.
#include "cat_printer.h"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cstring>

#include "alog/crc32c.h"
#include "alog/format.h"
#include "record_json.h"
#include "report.h"

namespace alog::cli {

namespace {

// The JSON line of a record (record_json.h), as record_json_value_line()
// would give it.
using namespace record_json;

char* put(char* o, std::string_view s) {
  std::memcpy(o, s.data(), s.size());
  return o + s.size();
}
char* put_u64(char* o, uint64_t v) { return std::to_chars(o, o + kDigits, v).ptr; }

// The payload's bytes in a text encoding: their size, and writing them.
size_t encoded_size(PayloadEncoding enc, size_t n) {
  switch (enc) {
    case PayloadEncoding::none: return 0;
    case PayloadEncoding::hex: return 2 * n;
    case PayloadEncoding::base64: return base64_size(n);
    case PayloadEncoding::utf8: return n;
  }
  return 0;
}
char* put_encoded(char* o, PayloadEncoding enc, std::string_view p) {
  switch (enc) {
    case PayloadEncoding::none: return o;
    case PayloadEncoding::hex: return o + hex_into(o, p);
    case PayloadEncoding::base64: return o + base64_into(o, p);
    case PayloadEncoding::utf8: return put(o, p);
  }
  return o;
}

void render_json(uint64_t seq, std::string_view payload, PayloadEncoding enc, OutBuffer& out) {
  if (enc == PayloadEncoding::utf8) {  // JSON string escapes: nlohmann's own
    out.append(record_json_value_line(seq, payload, enc));
    return;
  }
  const std::string_view mid = enc == PayloadEncoding::base64 ? kBase64 : kHex;
  const size_t most = kHead.size() + kLength.size() + 2 * kDigits +
                      std::max(mid.size() + kTail.size(), kNone.size()) +
                      encoded_size(enc, payload.size());
  char* start = out.reserve(most);
  char* o = put(start, kHead);
  o = put_u64(o, seq);
  o = put(o, kLength);
  o = put_u64(o, payload.size());
  if (enc == PayloadEncoding::none) {
    o = put(o, kNone);
  } else {
    o = put(o, mid);
    o = put_encoded(o, enc, payload);
    o = put(o, kTail);
  }
  out.commit(size_t(o - start));
}

}  // namespace

std::string record_json_value_line(uint64_t seq, std::string_view payload, PayloadEncoding enc) {
  Json j;
  j["type"] = "record";
  j["seq"] = seq;
  j["length"] = payload.size();
  put_payload(j, payload, enc);
  return json_line(j);
}

void render_record(const RecordStyle& s, uint64_t seq, std::string_view payload, OutBuffer& out) {
  if (s.json) {
    render_json(seq, payload, s.enc, out);
    return;
  }
  const size_t n = encoded_size(s.enc, payload.size());
  char* start = out.reserve(n + kDigits + 2);
  char* o = start;
  if (s.len32) {
    format::put32(reinterpret_cast<uint8_t*>(o), uint32_t(n));
    o = put_encoded(o + 4, s.enc, payload);
  } else {
    if (s.seq) {
      o = put_u64(o, seq);
      if (s.enc != PayloadEncoding::none) *o++ = '\t';
    }
    o = put_encoded(o, s.enc, payload);
    *o++ = s.null ? '\0' : '\n';
  }
  out.commit(size_t(o - start));
}

Printer::Printer(const RecordStyle& style, const Global& g, std::string dir)
    : style_(style), g_(g), dir_(std::move(dir)), eager_(stdout_is_tty()) {}

void Printer::record(uint64_t seq, std::string_view payload) {
  flush_lost();
  printed_++;
  last_seq_ = seq;
  last_crc_ = crc32c(payload.data(), payload.size());
  render_record(style_, seq, payload, out_);
  if (eager_) flush();
}

bool Printer::plain() const {
  const RecordStyle& s = style_;
  return !s.json && s.enc == PayloadEncoding::utf8 && !s.seq && !s.len32;
}

namespace {

char* put_plain(char* o, std::string_view payload, char sep) {
  o = put(o, payload);
  *o++ = sep;
  return o;
}

}  // namespace

// The plain text style of a batch without lost records that fits the
// buffer: one reserve for the batch and a copy per record, not
// render_record's per-record dispatch. False (nothing written) for
// anything else.
bool Printer::plain_batch(std::span<const RecordView> batch) {
  if (!plain() || lost_) return false;
  size_t bytes = 0;
  for (const RecordView& r : batch) {
    if (r.lost) return false;
    bytes += r.payload.size() + 1;
  }
  if (bytes > OutBuffer::kCapacity) return false;
  const char sep = style_.null ? '\0' : '\n';
  char* const start = out_.reserve(bytes);
  char* o = start;
  for (const RecordView& r : batch) o = put_plain(o, r.payload, sep);
  out_.commit(size_t(o - start));
  return true;
}

void Printer::render_plain(std::span<const std::string_view> payloads, RenderedBytes& out) const {
  size_t bytes = 0;
  for (std::string_view p : payloads) bytes += p.size() + 1;
  const char sep = style_.null ? '\0' : '\n';
  char* const start = out.reserve(bytes);
  char* o = start;
  for (std::string_view p : payloads) o = put_plain(o, p, sep);
  out.commit(size_t(o - start));
}

void Printer::rendered(std::string_view bytes, uint64_t records, uint64_t last_seq, uint32_t last_crc) {
  if (!records) return;
  flush_lost();
  out_.flush();
  out_write_direct(bytes);  // not copied again: a part is about as large as the buffer
  direct_writes_++;
  printed_ += records;
  last_seq_ = last_seq;
  last_crc_ = last_crc;
  if (eager_) flush();
}

void Printer::records(std::span<const RecordView> batch) {
  const RecordView* last = nullptr;
  if (plain_batch(batch)) {
    if (!batch.empty()) last = &batch.back();  // no lost record in it
  } else {
    for (const RecordView& r : batch) {
      if (r.lost) {
        lost(r.sequence);
        continue;
      }
      if (lost_) flush_lost();
      render_record(style_, r.sequence, r.payload, out_);
      last = &r;
    }
  }
  if (!last) return;
  for (const RecordView& r : batch) printed_ += !r.lost;
  last_seq_ = last->sequence;
  last_crc_ = crc32c(last->payload.data(), last->payload.size());
  if (eager_) flush();
}

void Printer::lost(uint64_t seq) {
  if (lost_ && lost_->second + 1 == seq) {
    lost_->second = seq;
    return;
  }
  flush_lost();
  lost_ = {seq, seq};
}

void Printer::flush_lost() {
  if (!lost_) return;
  auto [a, b] = *lost_;
  lost_.reset();
  if (style_.json) {
    Json j;
    j["type"] = "lost";
    j["first_seq"] = a;
    j["last_seq"] = b;
    json(j);
    return;
  }
  flush();
  warn(g_, dir_, std::nullopt,
       (a == b ? fmt::format("record {} is", a) : fmt::format("records {}-{} are", a, b)) +
           " lost (a salvage kept the sequence, not the bytes)");
}

void Printer::reset(const char* reason, uint64_t lost_first, uint64_t lost_last, uint64_t next,
                    const std::string& why) {
  flush_lost();
  warn(g_, dir_, std::nullopt, why);
  if (!style_.json) return;
  Json j;
  j["type"] = "reset";
  j["reason"] = reason;
  j["lost_first_seq"] = lost_first;
  j["lost_last_seq"] = lost_last;
  j["next_seq"] = next;
  j["message"] = why;
  json(j);
}

void Printer::problem(const Problem& p) {
  flush_lost();
  if (!style_.json) return;
  json(problem_json(p, "problem"));
}

void Printer::json(const Json& j) { out_.append(json_line(j)); }

void Printer::flush() {
  out_.flush();
  out_flush();
}

void Printer::flush_quietly() noexcept {
  try {
    flush();
  } catch (...) {
  }
}

}  // namespace alog::cli
