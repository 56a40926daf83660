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

// The two readings ndjson_payload() makes. First the payload of a line
// exactly as cat --json writes a base64 or hex record (record_json.h), read
// without a JSON parser; nullopt for any other line, valid or not. Where it
// gives a payload, the JSON parser's reading gives the same (a test holds
// them to it): the fast path only saves a parse.
std::optional<std::string> canonical_ndjson_payload(std::string_view line);
// Then the JSON parser's reading of any line, as ndjson_payload() says.
std::optional<std::string> parsed_ndjson_payload(std::string_view line, PayloadEncoding encoding,
                                                 const std::string& input, uint64_t line_no,
                                                 uint64_t offset);

// Decoders: nullopt for a character outside the alphabet, a wrong length,
// or base64 padding anywhere but at the end (the unused bits of the digit
// before it are not checked).
std::optional<std::string> unbase64(std::string_view s);
std::optional<std::string> unhex(std::string_view s);

}  // namespace alog::cli
