// Argument values (man/alog.1 "Arguments"): SEQ/N, SIZE ("64MiB", "4k")
// and DURATION ("7d", "1d12h", "2h30m15s", and for intervals "200ms"),
// strict about everything else.
#include <algorithm>
#include <string>
#include <thread>

#include "cli.h"

namespace alog::cli {

namespace {

// Leading decimal digits of s as a uint64 (no overflow), advancing i.
std::optional<uint64_t> digits(std::string_view s, size_t& i) {
  size_t start = i;
  uint64_t v = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    uint64_t d = uint64_t(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return std::nullopt;
    v = v * 10 + d;
    i++;
  }
  if (i == start) return std::nullopt;
  return v;
}

std::string lower(std::string_view s) {
  std::string o(s);
  for (char& c : o)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return o;
}

}  // namespace

unsigned jobs_of(const std::string& s) {
  uint64_t n = parse_u64(s).value_or(1);
  if (n == 0) n = std::max(1u, std::thread::hardware_concurrency());
  return unsigned(std::min<uint64_t>(n, 256));
}

std::optional<uint64_t> parse_u64(std::string_view s) {
  size_t i = 0;
  auto v = digits(s, i);
  if (!v || i != s.size()) return std::nullopt;
  return v;
}

std::optional<uint64_t> parse_size(std::string_view s) {
  size_t i = 0;
  auto v = digits(s, i);
  if (!v) return std::nullopt;
  std::string unit = lower(s.substr(i));
  int shift;
  if (unit.empty() || unit == "b") shift = 0;
  else if (unit == "k" || unit == "kib") shift = 10;
  else if (unit == "m" || unit == "mib") shift = 20;
  else if (unit == "g" || unit == "gib") shift = 30;
  else if (unit == "t" || unit == "tib") shift = 40;
  else return std::nullopt;
  if (shift && *v > (UINT64_MAX >> shift)) return std::nullopt;
  return *v << shift;
}

std::optional<uint64_t> parse_duration_s(std::string_view s) {
  static constexpr struct {
    char unit;
    uint64_t seconds;
  } kUnits[] = {{'w', 7 * 86400}, {'d', 86400}, {'h', 3600}, {'m', 60}, {'s', 1}};
  size_t i = 0, next_unit = 0;
  uint64_t total = 0;
  if (s.empty()) return std::nullopt;
  while (i < s.size()) {
    auto v = digits(s, i);
    if (!v || i == s.size()) return std::nullopt;  // a number needs a unit
    char u = s[i++];
    size_t k = next_unit;
    while (k < std::size(kUnits) && kUnits[k].unit != u) k++;
    if (k == std::size(kUnits)) return std::nullopt;  // unknown, repeated or out of order
    if (*v > UINT64_MAX / kUnits[k].seconds) return std::nullopt;
    uint64_t add = *v * kUnits[k].seconds;
    if (total > UINT64_MAX - add) return std::nullopt;
    total += add;
    next_unit = k + 1;
  }
  return total;
}

std::optional<uint64_t> parse_duration_ms(std::string_view s) {
  if (s.size() > 2 && s.substr(s.size() - 2) == "ms") {
    size_t i = 0;
    auto v = digits(s, i);
    if (!v || i != s.size() - 2) return std::nullopt;
    return v;
  }
  auto secs = parse_duration_s(s);
  if (!secs || *secs > UINT64_MAX / 1000) return std::nullopt;
  return *secs * 1000;
}

std::function<std::string(std::string&)> check_u64() {
  return [](std::string& s) -> std::string {
    if (parse_u64(s)) return {};
    return "'" + s + "' is not a decimal unsigned 64-bit integer";
  };
}

std::function<std::string(std::string&)> check_size() {
  return [](std::string& s) -> std::string {
    if (parse_size(s)) return {};
    return "'" + s + "' is not a size (e.g. 4096, 4k, 64MiB, 1G)";
  };
}

std::function<std::string(std::string&)> check_duration_ms() {
  return [](std::string& s) -> std::string {
    if (parse_duration_ms(s)) return {};
    return "'" + s + "' is not a duration (e.g. 200ms, 1s, 30s, 5m)";
  };
}

std::function<std::string(std::string&)> check_duration() {
  return [](std::string& s) -> std::string {
    if (parse_duration_s(s)) return {};
    return "'" + s + "' is not a duration (e.g. 7d, 12h, 30m, 45s, 1d12h)";
  };
}

}  // namespace alog::cli
