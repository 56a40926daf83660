// What alog cat prints: records (raw with their framing, or NDJSON), runs
// of lost records, resets and problems, rendered straight into one large
// output buffer (out_buffer.h) rather than a stdio call or a JSON value per
// record. The JSON objects other than records, and records whose payload
// is shown as UTF-8 text, go through nlohmann::json as before.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "alog/rendered_scan.h"
#include "alog/scanner.h"
#include "cli.h"
#include "out_buffer.h"

namespace alog::cli {

// How each record is shown (cat's options; --len32 and -0 exclude JSON).
struct RecordStyle {
  bool json = false;
  PayloadEncoding enc = PayloadEncoding::utf8;
  bool seq = false, null = false, len32 = false;
};

// Appends one record as cat prints it in `style`.
void render_record(const RecordStyle& style, uint64_t seq, std::string_view payload, OutBuffer& out);
// A record's JSON line built as a JSON value and dumped, as out_json prints
// it: the definition render_record's JSON output matches byte for byte.
std::string record_json_value_line(uint64_t seq, std::string_view payload, PayloadEncoding enc);

class Printer {
 public:
  Printer(const RecordStyle& style, const Global& g, std::string dir);

  void record(uint64_t seq, std::string_view payload);
  // Records and lost records in order, as record() and lost() one by one.
  void records(std::span<const RecordView> batch);

  // Whether the style shows each record by its payload alone (the plain
  // text style: payloads as they are, each followed by a newline or a
  // NUL), so that records can be rendered apart from the printer
  // (render_plain, on scan_rendered's workers).
  bool plain() const;
  // Appends the records with these payloads in the plain style. Safe to
  // call from several threads at once.
  void render_plain(std::span<const std::string_view> payloads, RenderedBytes& out) const;
  // Prints `records` records render_plain() rendered into `bytes`, the last
  // one `last_seq`, its payload's CRC32C `last_crc`.
  void rendered(std::string_view bytes, uint64_t records, uint64_t last_seq, uint32_t last_crc);

  // A lost record (a salvage kept its sequence, not its bytes): consecutive
  // ones make one run, printed once, before whatever comes next.
  void lost(uint64_t seq);
  // The pending run of lost records: JSON {"type":"lost"}, text a warning.
  void flush_lost();
  // Records removed under a follower: on stderr, and a "reset" in the stream.
  void reset(const char* reason, uint64_t lost_first, uint64_t lost_last, uint64_t next,
             const std::string& why);
  // The torn tail or corruption that ended the output (JSON only).
  void problem(const Problem& p);

  // Writes out all that was printed (stdout's Failure on error).
  void flush();
  // As flush(), on the way out of another error: a failure is dropped.
  void flush_quietly() noexcept;

  uint64_t printed() const { return printed_; }
  std::optional<uint64_t> last_seq() const { return last_seq_; }
  // How many writes to standard output it made so far (a full buffer
  // writes itself out in the middle of a batch).
  uint64_t writes() const { return out_.writes() + direct_writes_; }
  // The CRC32C of the last record printed.
  uint32_t last_crc() const { return last_crc_; }

 private:
  void json(const Json& j);
  bool plain_batch(std::span<const RecordView> batch);
  RecordStyle style_;
  const Global& g_;
  std::string dir_;
  OutBuffer out_;
  const bool eager_;  // a terminal: each batch goes out at once, as stdio's line buffering would
  std::optional<std::pair<uint64_t, uint64_t>> lost_;
  uint64_t printed_ = 0;
  std::optional<uint64_t> last_seq_;
  uint32_t last_crc_ = 0;
  uint64_t direct_writes_ = 0;
};

}  // namespace alog::cli
