// The output layer: errors and warnings on stderr, data on stdout (with write
// errors reported), terminal detection, progress and encoders.
#include <fcntl.h>
#include <fmt/core.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cli.h"

namespace alog::cli {

const char* status_word(int exit_status) {
  switch (exit_status) {
    case kExitOk: return "ok";
    case kExitRepaired: return "repaired";
    case kExitDamaged:
    case kExitDamaged | kExitRepaired: return "damaged";
    default: return "error";
  }
}

Failure::Failure(std::string code_, std::string path_, std::optional<uint64_t> offset_,
                 std::string msg, int exit)
    : std::runtime_error(std::move(msg)),
      code(std::move(code_)),
      path(std::move(path_)),
      offset(offset_),
      exit_status(exit) {}

namespace {
bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Drops a leading "PATH: " or "PATH:OFFSET: " the library put in the message.
std::string strip_location(std::string msg, const std::string& path) {
  if (path.empty() || !starts_with(msg, path + ":")) return msg;
  size_t i = path.size() + 1;
  size_t j = i;
  while (j < msg.size() && msg[j] >= '0' && msg[j] <= '9') j++;
  if (j > i && j < msg.size() && msg[j] == ':') i = j + 1;
  while (i < msg.size() && msg[i] == ' ') i++;
  return msg.substr(i);
}
}  // namespace

Failure failure(const Status& st, const std::string& path) {
  if (st.is(Errc::stopped) && interrupted())  // a read the signal stopped (interrupt.h)
    return interrupted_failure();
  std::string p = st.path().empty() ? path : st.path();
  std::string msg = strip_location(st.message(), p);
  if (!st.path().empty() && st.path() != path) msg = strip_location(msg, path);
  int exit = st.code() == Errc::corrupt ? kExitDamaged : kExitError;
  return Failure(errc_name(st.code()), p, st.offset(), msg, exit);
}

void fail(const Status& st, const std::string& path) { throw failure(st, path); }

void fail(std::string code, std::string path, std::optional<uint64_t> offset, std::string message) {
  throw Failure(std::move(code), std::move(path), offset, std::move(message));
}

std::string located(const std::string& path, std::optional<uint64_t> offset,
                    const std::string& message) {
  // Appended piece by piece: g++ 12 -O3 warns falsely (-Wrestrict) on
  // `s += ":" + std::to_string(n)`.
  std::string s = path;
  if (offset) {
    s.push_back(':');
    s.append(std::to_string(*offset));
  }
  if (!s.empty()) s.append(": ");
  s.append(message);
  return s;
}

namespace {
OutputCapture* g_capture = nullptr;
}  // namespace

OutputCapture::OutputCapture() : prev_(g_capture) { g_capture = this; }
OutputCapture::~OutputCapture() { g_capture = prev_; }

void err_write(std::string_view text) {
  if (g_capture) {
    g_capture->err.append(text);
    return;
  }
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

void err_line(std::string_view body) {
  std::string line = "alog: ";
  line += escape_text(body);
  line += '\n';
  err_write(line);
}

void err_corruption(const std::string& path, const Problem& p) {
  err_line(located(path, p.offset, "corruption: " + p.kind + ": " + p.message));
}

void warn(const Global& g, const std::string& path, std::optional<uint64_t> offset,
          const std::string& message) {
  if (g.quiet) return;
  err_line(located(path, offset, "warning: " + message));
}

// ---- stdout ----

namespace {
[[noreturn]] void write_failed(int e) {
  std::clearerr(stdout);
  throw Failure("io", "stdout", std::nullopt,
                std::string("write error: ") + std::strerror(e ? e : EIO));
}
}  // namespace

void out_write(std::string_view bytes) {
  if (bytes.empty()) return;
  if (g_capture) {
    g_capture->out.append(bytes);
    return;
  }
  errno = 0;
  if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size()) write_failed(errno);
}

void out_line(std::string_view text) {
  out_write(escape_text(text));
  out_write("\n");
}

std::string json_line(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

void out_json(const Json& j) { out_write(json_line(j)); }

void out_flush() {
  if (g_capture) return;
  errno = 0;
  if (std::fflush(stdout) != 0) write_failed(errno);
}

void out_write_direct(std::string_view bytes) {
  if (g_capture) return out_write(bytes);
  out_flush();
  // As stdio writes: a short write goes on with the rest, an error (EINTR
  // included: signals are installed without SA_RESTART) is the Failure.
  while (!bytes.empty()) {
    ssize_t n = ::write(1, bytes.data(), bytes.size());
    if (n < 0) write_failed(errno);
    bytes.remove_prefix(size_t(n));
  }
}

// ---- terminal ----

// Under a capture, what is printed goes to a client, not to this process's
// descriptors: no terminal (no progress line, no color, no eager flush).
bool stderr_is_tty() { return !g_capture && ::isatty(2) == 1; }
bool stdout_is_tty() { return !g_capture && ::isatty(1) == 1; }

void grow_pipe(int fd, size_t bytes) {
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) (void)::fcntl(fd, F_SETPIPE_SZ, int(bytes));
}

bool use_color_stdout() {
  const char* nc = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  if (nc && *nc) return false;
  if (term && std::strcmp(term, "dumb") == 0) return false;
  return stdout_is_tty();
}

// The escape sequence is written with NUL for ESC: escape_text() turns that
// (and nothing else) into a real ESC, and no file name can hold a NUL.
std::string paint(bool on, std::string_view code, std::string_view s) {
  if (!on) return std::string(s);
  return fmt::format("{}[{}m{}{}[0m", '\0', code, s, '\0');
}

std::string escape_text(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (size_t i = 0; i < s.size(); i++) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == 0 && i + 1 < s.size() && s[i + 1] == '[') {
      size_t j = i + 2;
      while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == ';')) j++;
      if (j < s.size() && s[j] == 'm') {  // a color of paint()
        o += '\x1b';
        o.append(s.substr(i + 1, j - i));
        i = j;
        continue;
      }
    }
    if (c >= 0x20 && c != 0x7f) {
      o += static_cast<char>(c);
      continue;
    }
    switch (c) {
      case '\a': o += "\\a"; break;
      case '\b': o += "\\b"; break;
      case '\t': o += "\\t"; break;
      case '\n': o += "\\n"; break;
      case '\v': o += "\\v"; break;
      case '\f': o += "\\f"; break;
      case '\r': o += "\\r"; break;
      default: o += fmt::format("\\{:03o}", c);
    }
  }
  return o;
}

uint64_t now_ms() {
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000 + uint64_t(ts.tv_nsec) / 1000000;
}

Progress::Progress(const Global& g, std::string label, bool delayed)
    : enabled_(!g.quiet && stderr_is_tty()), label_(std::move(label)),
      start_ms_(now_ms() - (delayed ? 0 : 1000)) {}

Progress::~Progress() { clear(); }

void Progress::update(uint64_t done, uint64_t total) {
  if (!enabled_) return;
  uint64_t t = now_ms();
  if (t - start_ms_ < 1000 || t - last_ms_ < 100) return;
  last_ms_ = t;
  if (total)
    fmt::print(stderr, "\r\x1b[K{}: {} / {} ({}%)", label_, human_bytes(done), human_bytes(total),
               done * 100 / total);
  else
    fmt::print(stderr, "\r\x1b[K{}: {}", label_, done);
  std::fflush(stderr);
  shown_ = true;
}

void Progress::clear() {
  if (!shown_) return;
  fmt::print(stderr, "\r\x1b[K");
  std::fflush(stderr);
  shown_ = false;
}

// ---- encoders ----

namespace {
constexpr char kBase64Digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
// The two digits of every 12-bit value: two lookups per 3 bytes, not four.
constexpr std::array<std::array<char, 2>, 4096> kBase64Pairs = [] {
  std::array<std::array<char, 2>, 4096> t{};
  for (size_t i = 0; i < t.size(); i++) t[i] = {kBase64Digits[i >> 6], kBase64Digits[i & 63]};
  return t;
}();
char* put_pair(char* o, uint64_t twelve_bits) {
  std::memcpy(o, kBase64Pairs[twelve_bits & 0xFFF].data(), 2);
  return o + 2;
}
}  // namespace

size_t base64_into(char* out, std::string_view in) {
  const auto* p = reinterpret_cast<const uint8_t*>(in.data());
  const size_t n = in.size();
  size_t i = base64_blocks(out, p, n);
  char* o = out + i / 3 * 4;
  // 6 bytes at a time from one 8-byte load, while 8 bytes remain.
  for (; i + 8 <= n; i += 6) {
    uint64_t v;
    std::memcpy(&v, p + i, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap64(v);  // the first byte on top
#endif
    o = put_pair(o, v >> 52);
    o = put_pair(o, v >> 40);
    o = put_pair(o, v >> 28);
    o = put_pair(o, v >> 16);
  }
  for (; i + 2 < n; i += 3) {
    uint32_t v = uint32_t(p[i]) << 16 | uint32_t(p[i + 1]) << 8 | p[i + 2];
    o = put_pair(o, v >> 12);
    o = put_pair(o, v);
  }
  if (i + 1 == n) {
    uint32_t v = uint32_t(p[i]) << 16;
    o = put_pair(o, v >> 12);
    o[0] = o[1] = '=';
    o += 2;
  } else if (i + 2 == n) {
    uint32_t v = uint32_t(p[i]) << 16 | uint32_t(p[i + 1]) << 8;
    o = put_pair(o, v >> 12);
    o[0] = kBase64Digits[(v >> 6) & 63];
    o[1] = '=';
    o += 2;
  }
  return size_t(o - out);
}

std::string base64(std::string_view in) {
  std::string out(base64_size(in.size()), '\0');
  base64_into(out.data(), in);
  return out;
}

size_t hex_into(char* out, std::string_view in) {
  static const char* d = "0123456789abcdef";
  char* o = out;
  for (unsigned char c : in) {
    *o++ = d[c >> 4];
    *o++ = d[c & 15];
  }
  return in.size() * 2;
}

std::string hex_bytes(std::string_view in) {
  std::string s(in.size() * 2, '\0');
  hex_into(s.data(), in);
  return s;
}

bool valid_utf8(std::string_view s) {
  size_t i = 0, n = s.size();
  while (i < n) {
    unsigned char c = uint8_t(s[i]);
    size_t len;
    uint32_t cp;
    if (c < 0x80) { i++; continue; }
    if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; }
    else return false;
    if (i + len > n) return false;
    for (size_t k = 1; k < len; k++) {
      unsigned char cc = uint8_t(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = cp << 6 | (cc & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += len;
  }
  return true;
}

std::string hex32(uint32_t v) { return fmt::format("0x{:08x}", v); }
std::string hex16(uint16_t v) { return fmt::format("0x{:04x}", v); }

std::string iso_time_ms(uint64_t ms) {
  time_t secs = time_t(ms / 1000);
  struct tm tm;
  ::gmtime_r(&secs, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms % 1000);
}

std::string human_bytes(uint64_t n) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (n < 1024) return fmt::format("{} B", n);
  double v = double(n);
  int u = 0;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    u++;
  }
  return fmt::format("{:.1f} {}", v, units[u]);
}

PayloadEncoding parse_payload_encoding(const std::string& s) {
  if (s == "hex") return PayloadEncoding::hex;
  if (s == "utf8") return PayloadEncoding::utf8;
  if (s == "none") return PayloadEncoding::none;
  return PayloadEncoding::base64;
}

void put_payload(Json& j, std::string_view p, PayloadEncoding enc) {
  switch (enc) {
    case PayloadEncoding::none:
      j["payload_encoding"] = "none";
      j["payload"] = nullptr;
      return;
    case PayloadEncoding::hex:
      j["payload_encoding"] = "hex";
      j["payload"] = hex_bytes(p);
      return;
    case PayloadEncoding::utf8:
      if (valid_utf8(p)) {
        j["payload_encoding"] = "utf8";
        j["payload"] = std::string(p);
        return;
      }
      [[fallthrough]];
    case PayloadEncoding::base64:
      j["payload_encoding"] = "base64";
      j["payload"] = base64(p);
      return;
  }
}

std::string text_payload(std::string_view p, PayloadEncoding enc) {
  switch (enc) {
    case PayloadEncoding::none: return "";
    case PayloadEncoding::hex: return hex_bytes(p);
    case PayloadEncoding::utf8: return std::string(p);
    case PayloadEncoding::base64: return base64(p);
  }
  return "";
}

Json summary_head(int exit_status) {
  Json j;
  j["schema_version"] = 1;
  j["status"] = status_word(exit_status);
  j["exit_status"] = exit_status;
  return j;
}

Json opt_json(std::optional<uint64_t> v) { return v ? Json(*v) : Json(nullptr); }

}  // namespace alog::cli
