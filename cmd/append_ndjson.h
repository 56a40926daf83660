// append --ndjson: the records of `alog cat --json` output back into
// payloads, one JSON object per line.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "cli.h"

namespace alog::cli {

// The payload of one NDJSON line, or nullopt for a line to skip (an object
// cat --json writes that is not a record: reset, problem, lost, error, or
// an empty line). The payload is decoded by the line's "payload_encoding"
// when it has one, else by `encoding`; a "length" must match. Throws the
// Failure bad_input naming `input`, line `line_no` (from 1) and its offset.
std::optional<std::string> ndjson_payload(std::string_view line, PayloadEncoding encoding,
                                          const std::string& input, uint64_t line_no,
                                          uint64_t offset);

// Strict decoders: nullopt for anything but canonical input.
std::optional<std::string> unbase64(std::string_view s);
std::optional<std::string> unhex(std::string_view s);

}  // namespace alog::cli
