// The JSON line of a record as `alog cat --json` writes it, for base64 and
// hex payloads: its fixed text, in the key order and spelling json_line()
// gives the record's JSON value. cat renders it in place (cat_printer.cc);
// append --ndjson reads it back without a JSON parser (append_ndjson.cc).
#pragma once

#include <cstddef>
#include <string_view>

namespace alog::cli::record_json {

// {"type":"record","seq":SEQ,"length":LENGTH,"payload_encoding":"ENC","payload":"TEXT"}
constexpr std::string_view kHead = "{\"type\":\"record\",\"seq\":";
constexpr std::string_view kLength = ",\"length\":";
constexpr std::string_view kBase64 = ",\"payload_encoding\":\"base64\",\"payload\":\"";
constexpr std::string_view kHex = ",\"payload_encoding\":\"hex\",\"payload\":\"";
constexpr std::string_view kNone = ",\"payload_encoding\":\"none\",\"payload\":null}\n";
constexpr std::string_view kTail = "\"}\n";
constexpr size_t kDigits = 20;  // of a uint64_t

}  // namespace alog::cli::record_json
