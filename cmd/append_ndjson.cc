// NDJSON input for append (append_ndjson.h).
#include "append_ndjson.h"

#include <fmt/core.h>

#include <array>
#include <charconv>

#include "record_json.h"

namespace alog::cli {

namespace {

// Each byte's base64 (RFC 4648) value, or -1.
constexpr std::array<int8_t, 256> kBase64Values = [] {
  std::array<int8_t, 256> v{};
  v.fill(-1);
  const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (int i = 0; i < 64; i++) v[static_cast<unsigned char>(digits[i])] = static_cast<int8_t>(i);
  return v;
}();

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A JSON number that is a uint64_t, as canonical JSON spells it (digits, no
// leading zero), at the start of s, which it leaves past it.
bool eat_u64(std::string_view& s, uint64_t* v) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  const size_t n = size_t(end - s.data());
  if (ec != std::errc() || n == 0 || (n > 1 && s[0] == '0')) return false;
  s.remove_prefix(n);
  return true;
}

bool eat(std::string_view& s, std::string_view prefix) {
  if (!s.starts_with(prefix)) return false;
  s.remove_prefix(prefix.size());
  return true;
}

}  // namespace

std::optional<std::string> unbase64(std::string_view s) {
  if (s.size() % 4) return std::nullopt;
  size_t pad = 0;
  if (!s.empty() && s.back() == '=') pad = s[s.size() - 2] == '=' ? 2 : 1;
  std::string out(s.size() / 4 * 3 - pad, '\0');
  char* o = out.data();
  const auto* in = reinterpret_cast<const unsigned char*>(s.data());
  const size_t full = pad ? s.size() - 4 : s.size();  // quads without padding
  for (size_t i = 0; i < full; i += 4) {
    const int a = kBase64Values[in[i]], b = kBase64Values[in[i + 1]], c = kBase64Values[in[i + 2]],
              d = kBase64Values[in[i + 3]];
    if ((a | b | c | d) < 0) return std::nullopt;
    const uint32_t n = uint32_t(a << 18 | b << 12 | c << 6 | d);
    *o++ = char(n >> 16);
    *o++ = char(n >> 8);
    *o++ = char(n);
  }
  if (pad) {  // the last quad: two digits and "==", or three and "="
    const unsigned char* q = in + full;
    const int a = kBase64Values[q[0]], b = kBase64Values[q[1]], c = pad == 1 ? kBase64Values[q[2]] : 0;
    if ((a | b | c) < 0) return std::nullopt;
    const uint32_t n = uint32_t(a << 18 | b << 12 | c << 6);
    *o++ = char(n >> 16);
    if (pad == 1) *o++ = char(n >> 8);
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

std::optional<std::string> canonical_ndjson_payload(std::string_view line) {
  using namespace record_json;
  uint64_t seq, length;
  if (!eat(line, kHead) || !eat_u64(line, &seq) || !eat(line, kLength) || !eat_u64(line, &length))
    return std::nullopt;
  const bool base64 = eat(line, kBase64);
  if (!base64 && !eat(line, kHex)) return std::nullopt;
  const size_t quote = line.find('"');
  if (quote == std::string_view::npos || line.substr(quote) != kTail.substr(0, kTail.size() - 1))
    return std::nullopt;
  auto payload = base64 ? unbase64(line.substr(0, quote)) : unhex(line.substr(0, quote));
  if (!payload || payload->size() != length) return std::nullopt;
  return payload;
}

std::optional<std::string> ndjson_payload(std::string_view line, PayloadEncoding encoding,
                                          const std::string& input, uint64_t line_no,
                                          uint64_t offset) {
  if (auto p = canonical_ndjson_payload(line)) return p;
  return parsed_ndjson_payload(line, encoding, input, line_no, offset);
}

std::optional<std::string> parsed_ndjson_payload(std::string_view line, PayloadEncoding encoding,
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
