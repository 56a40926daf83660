// NDJSON input for append (append_ndjson.h).
#include "append_ndjson.h"

#include <fmt/core.h>

namespace alog::cli {

namespace {

int b64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::string> unbase64(std::string_view s) {
  if (s.size() % 4) return std::nullopt;
  std::string out;
  out.reserve(s.size() / 4 * 3);
  for (size_t i = 0; i < s.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; k++) {
      char c = s[i + size_t(k)];
      if (c == '=' && i + 4 == s.size() && k >= 2) {
        v[k] = 0;
        pad++;
        continue;
      }
      if (pad) return std::nullopt;  // data after padding
      v[k] = b64_value(c);
      if (v[k] < 0) return std::nullopt;
    }
    uint32_t n = uint32_t(v[0] << 18 | v[1] << 12 | v[2] << 6 | v[3]);
    out += char(n >> 16);
    if (pad < 2) out += char((n >> 8) & 0xff);
    if (pad < 1) out += char(n & 0xff);
  }
  return out;
}

std::optional<std::string> unhex(std::string_view s) {
  if (s.size() % 2) return std::nullopt;
  std::string out;
  out.reserve(s.size() / 2);
  for (size_t i = 0; i < s.size(); i += 2) {
    int hi = hex_value(s[i]), lo = hex_value(s[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += char(hi << 4 | lo);
  }
  return out;
}

std::optional<std::string> ndjson_payload(std::string_view line, PayloadEncoding encoding,
                                          const std::string& input, uint64_t line_no,
                                          uint64_t offset) {
  auto bad = [&](const std::string& why) {
    fail("bad_input", input, offset, fmt::format("line {}: {}", line_no, why));
  };
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return std::nullopt;
  Json j = Json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) bad("not valid JSON");
  if (!j.is_object()) bad("not a JSON object");
  auto type = j.find("type");
  if (type == j.end() || !type->is_string()) bad("no \"type\" string");
  const std::string t = type->get<std::string>();
  if (t == "reset" || t == "problem" || t == "lost" || t == "error") return std::nullopt;
  if (t != "record") bad("type \"" + t + "\" is not a record");
  std::string enc_name;
  switch (encoding) {
    case PayloadEncoding::base64: enc_name = "base64"; break;
    case PayloadEncoding::hex: enc_name = "hex"; break;
    case PayloadEncoding::utf8: enc_name = "utf8"; break;
    case PayloadEncoding::none: enc_name = "none"; break;
  }
  if (auto e = j.find("payload_encoding"); e != j.end()) {
    if (!e->is_string()) bad("\"payload_encoding\" is not a string");
    enc_name = e->get<std::string>();
  }
  auto p = j.find("payload");
  if (p == j.end() || !p->is_string()) bad("no \"payload\" string");
  const std::string text = p->get<std::string>();
  std::optional<std::string> payload;
  if (enc_name == "base64") payload = unbase64(text);
  else if (enc_name == "hex") payload = unhex(text);
  else if (enc_name == "utf8") payload = text;
  else bad("payload encoding \"" + enc_name + "\" cannot be read back");
  if (!payload) bad("\"payload\" is not valid " + enc_name);
  if (auto l = j.find("length"); l != j.end()) {
    if (!l->is_number_unsigned() || l->get<uint64_t>() != payload->size())
      bad(fmt::format("\"length\" does not match the payload's {} bytes", payload->size()));
  }
  return payload;
}

}  // namespace alog::cli
