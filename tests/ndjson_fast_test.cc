// append --ndjson reads the lines cat --json writes without a JSON parser
// (canonical_ndjson_payload); every line it takes, the parser's reading
// takes the same way, and every other line is left to the parser.
#include <doctest/doctest.h>

#include <random>
#include <string>

#include "append_ndjson.h"
#include "cat_printer.h"

using namespace alog::cli;

namespace {

// The parser's reading, or nullopt where it refuses the line (bad_input).
std::optional<std::string> parsed(std::string_view line) {
  try {
    return parsed_ndjson_payload(line, PayloadEncoding::base64, "stdin", 1, 0);
  } catch (const Failure& f) {
    CHECK(f.code == "bad_input");
    return std::nullopt;
  }
}

std::string record_line(uint64_t seq, const std::string& payload, PayloadEncoding enc) {
  std::string line = record_json_value_line(seq, payload, enc);
  line.pop_back();  // append reads lines without their newline
  return line;
}

}  // namespace

TEST_CASE("the fast reading of NDJSON record lines takes every base64 and hex line cat --json writes, as the JSON parser reads it") {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; i++) {
    std::string payload(rng() % 300, '\0');
    for (char& c : payload) c = static_cast<char>(rng());
    const uint64_t seq = i % 3 == 0 ? rng() : rng() % 1000;
    for (PayloadEncoding enc : {PayloadEncoding::base64, PayloadEncoding::hex}) {
      const std::string line = record_line(seq, payload, enc);
      CAPTURE(line);
      CHECK(canonical_ndjson_payload(line) == payload);
      CHECK(parsed(line) == payload);
    }
  }
}

TEST_CASE("the fast reading of an NDJSON line gives a payload only where the JSON parser gives the same, under random edits of canonical lines") {
  std::mt19937_64 rng(11);
  const std::string chars = "\"\\ \t\r0129Aa=}{,:-.e+/x\x80";
  size_t taken = 0, left = 0;
  for (int i = 0; i < 3000; i++) {
    std::string payload(rng() % 40, '\0');
    for (char& c : payload) c = static_cast<char>(rng());
    std::string line = record_line(rng() % 100, payload, i % 2 ? PayloadEncoding::hex : PayloadEncoding::base64);
    const size_t at = rng() % (line.size() + 1);
    const char c = chars[rng() % chars.size()];
    switch (rng() % 4) {
      case 0: if (at < line.size()) line[at] = c; break;
      case 1: line.insert(at, 1, c); break;
      case 2: if (at < line.size()) line.erase(at, 1); break;
      default: line.resize(at); break;
    }
    CAPTURE(line);
    const auto fast = canonical_ndjson_payload(line);
    if (fast) {
      taken++;
      CHECK(parsed(line) == fast);
    } else {
      left++;
    }
  }
  // Both kinds occur: edits inside a payload's text often leave a valid line.
  CHECK(taken > 100);
  CHECK(left > 100);
}

TEST_CASE("the fast reading leaves to the JSON parser the lines cat writes otherwise or that are not cat's") {
  const std::string base = R"({"type":"record","seq":5,"length":2,"payload_encoding":"base64","payload":"aGk="})";
  CHECK(canonical_ndjson_payload(base) == "hi");
  for (const std::string& line :
       {std::string(R"({"type":"record","seq":05,"length":2,"payload_encoding":"base64","payload":"aGk="})"),
        base + "\r", " " + base, base + " ",
        std::string(R"({"seq":5,"type":"record","length":2,"payload_encoding":"base64","payload":"aGk="})"),
        std::string(R"({"type":"record","seq":5,"length":3,"payload_encoding":"base64","payload":"aGk="})"),
        std::string(R"({"type":"record","seq":5,"length":2,"payload_encoding":"utf8","payload":"hi"})"),
        std::string(R"({"type":"record","seq":5,"length":2,"payload_encoding":"base64","payload":"aGk=","x":1})"),
        std::string(R"({"type":"record","seq":-5,"length":2,"payload_encoding":"base64","payload":"aGk="})"),
        std::string(R"({"type":"record","seq":5.0,"length":2,"payload_encoding":"base64","payload":"aGk="})"),
        std::string(R"({"type":"record","seq":5,"length":2,"payload_encoding":"base64","payload":"aG\u0073="})")}) {
    CAPTURE(line);
    CHECK(!canonical_ndjson_payload(line));
  }
}
