// cat --cursor-file: where a consumer stopped, as the sequence and CRC-32C
// of the last record it was given, kept in a small file rewritten
// atomically (journalctl's cursor idea).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace alog::cli {

struct Cursor {
  uint64_t seq = 0;
  uint32_t crc = 0;  // CRC-32C of the record's payload
};

// The cursor in `file`: nullopt when the file does not exist; a Failure
// bad_input when it is not a cursor, io when it cannot be read.
std::optional<Cursor> read_cursor(const std::string& file);
// Replaces `file` with c: a temporary file beside it, synced, renamed over
// it, the directory synced. A Failure io on error.
void write_cursor(const std::string& file, const Cursor& c);

}  // namespace alog::cli
