// alog cat's bulk output (cmd/cat_printer.h): each record rendered straight
// into the output buffer is byte for byte what the command printed before,
// a JSON value per record and one stdio call per piece; and whole runs of
// `alog cat` print what a record-by-record reading of the log renders.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include <random>

#include "alog/format.h"
#include "alog/scanner.h"
#include "cat_printer.h"
#include "cli_util.h"
#include "damaged_log.h"
#include "scanner_batch_util.h"

using namespace alog;
using namespace alog::test;
using namespace alog::test::cli;
using alog::cli::OutBuffer;
using alog::cli::PayloadEncoding;
using alog::cli::RecordStyle;

namespace {

// cat's text output of one record as the command composed it before.
std::string text_before(const RecordStyle& s, uint64_t seq, std::string_view payload) {
  std::string bytes = s.enc == PayloadEncoding::utf8 ? std::string(payload)
                                                     : alog::cli::text_payload(payload, s.enc);
  if (s.len32) {
    uint8_t len[4];
    format::put32(len, uint32_t(bytes.size()));
    return std::string(reinterpret_cast<const char*>(len), 4) + bytes;
  }
  std::string out;
  if (s.seq) out = std::to_string(seq) + (s.enc == PayloadEncoding::none ? "" : "\t");
  return out + bytes + (s.null ? std::string(1, '\0') : std::string("\n"));
}

std::string before(const RecordStyle& s, uint64_t seq, std::string_view payload) {
  return s.json ? alog::cli::record_json_value_line(seq, payload, s.enc) : text_before(s, seq, payload);
}

std::string rendered(const RecordStyle& s, uint64_t seq, std::string_view payload) {
  OutBuffer out;
  alog::cli::render_record(s, seq, payload, out);
  return std::string(out.view());
}

std::vector<std::string> sample_payloads() {
  std::vector<std::string> v = {"", "a", "ab", "abc", "abcd", std::string(1, '\0'), "line\nbreak",
                                "tab\there \"quoted\" \\ back", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
                                "\xff\xfe invalid", "\xc3", "\xed\xa0\x80 surrogate", "\x7f\x01\x1f"};
  std::mt19937 rng(42);
  for (int i = 0; i < 200; i++) {
    std::string p(rng() % 300, '\0');
    for (char& c : p) c = char(rng() % 3 == 0 ? 'a' + rng() % 26 : rng());
    v.push_back(p);
  }
  return v;
}

const PayloadEncoding kEncodings[] = {PayloadEncoding::base64, PayloadEncoding::hex,
                                      PayloadEncoding::utf8, PayloadEncoding::none};

// The record-by-record reading of a whole log as cat printed it before:
// records rendered one at a time, runs of lost records as JSON lines.
std::string read_one_by_one(const std::string& dir, const RecordStyle& s) {
  auto log = Log::open_read(dir);
  REQUIRE(log.is_ok());
  auto sc = (*log)->scan(0);
  REQUIRE(sc.is_ok());
  std::string out;
  std::optional<std::pair<uint64_t, uint64_t>> lost;
  auto flush_lost = [&] {
    if (lost && s.json)
      out += "{\"type\":\"lost\",\"first_seq\":" + std::to_string(lost->first) +
             ",\"last_seq\":" + std::to_string(lost->second) + "}\n";
    lost.reset();
  };
  while (true) {
    auto more = (*sc)->next();
    REQUIRE(more.is_ok());
    if (!*more) break;
    const uint64_t seq = (*sc)->sequence();
    if ((*sc)->lost()) {
      if (lost && lost->second + 1 == seq) lost->second = seq;
      else {
        flush_lost();
        lost = {seq, seq};
      }
      continue;
    }
    flush_lost();
    out += before(s, seq, (*sc)->payload());
  }
  flush_lost();
  return out;
}

}  // namespace

TEST_CASE("base64 and hex encode as RFC 4648 and lower-case hex spell them, at every length") {
  // Bit by bit: 6 bits per digit, '=' padding to a multiple of 4.
  auto reference_base64 = [](const std::string& in) {
    const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    size_t bits = in.size() * 8;
    for (size_t b = 0; b < bits; b += 6) {
      unsigned v = 0;
      for (size_t k = b; k < b + 6; k++)
        v = v << 1 | (k < bits ? (uint8_t(in[k / 8]) >> (7 - k % 8)) & 1u : 0u);
      out += digits[v];
    }
    while (out.size() % 4) out += '=';
    return out;
  };
  std::mt19937 rng(7);
  // Past 16 bytes the bulk goes 12 bytes at a time (in vectors where the CPU
  // has AVX): lengths to 300 take every split between it and the rest.
  for (size_t len = 0; len < 300; len++)
    for (int k = 0; k < 4; k++) {
      std::string in(len, '\0');
      for (char& c : in) c = char(rng());
      CHECK(alog::cli::base64(in) == reference_base64(in));
      CHECK(alog::cli::hex_bytes(in) == hex(in));
    }
}

TEST_CASE("base64 spells every 6-bit value with its own digit, in every position of a 12-byte block") {
  // 48 bytes whose 64 six-bit groups are 0, 1, ..., 63: then the same rotated.
  std::string bits;
  for (unsigned v = 0; v < 64; v++)
    for (int b = 5; b >= 0; b--) bits += char('0' + ((v >> b) & 1));
  const std::string digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (size_t rot = 0; rot < 64; rot++) {
    std::string r = bits.substr(rot * 6) + bits.substr(0, rot * 6);
    std::string in;
    for (size_t i = 0; i < r.size(); i += 8) in += char(std::stoi(r.substr(i, 8), nullptr, 2));
    CHECK(alog::cli::base64(in) == digits.substr(rot) + digits.substr(0, rot));
  }
}

TEST_CASE("cat renders a record's JSON line as the record's JSON value prints, for every encoding") {
  for (PayloadEncoding enc : kEncodings)
    for (const std::string& p : sample_payloads())
      for (uint64_t seq : {uint64_t{0}, uint64_t{7}, uint64_t{1} << 40, UINT64_MAX}) {
        RecordStyle s;
        s.json = true;
        s.enc = enc;
        INFO("payload " << hex(p) << " encoding " << int(enc));
        CHECK(rendered(s, seq, p) == before(s, seq, p));
      }
}

TEST_CASE("cat renders text records with each framing and encoding as it composed them before") {
  for (PayloadEncoding enc : kEncodings)
    for (int framing = 0; framing < 5; framing++)
      for (const std::string& p : sample_payloads()) {
        RecordStyle s;
        s.enc = enc;
        s.seq = framing == 1 || framing == 3;
        s.null = framing == 2 || framing == 3;
        s.len32 = framing == 4;
        INFO("payload " << hex(p) << " encoding " << int(enc) << " framing " << framing);
        CHECK(rendered(s, 123456789, p) == before(s, 123456789, p));
      }
}

TEST_CASE("the output buffer grows for a record larger than itself") {
  const std::string big(OutBuffer::kCapacity + 12345, 'x');
  RecordStyle s;
  s.json = true;
  s.enc = PayloadEncoding::base64;
  CHECK((rendered(s, 1, big) == before(s, 1, big)));
  s.json = false;
  s.enc = PayloadEncoding::hex;
  CHECK((rendered(s, 1, big) == before(s, 1, big)));
}

TEST_CASE("cat of random logs with lost frames prints what a record-by-record reading renders") {
  struct Mode {
    const char* args;
    RecordStyle style;
  };
  auto style = [](bool json, PayloadEncoding enc, bool seq, bool null, bool len32) {
    RecordStyle s;
    s.json = json;
    s.enc = enc;
    s.seq = seq;
    s.null = null;
    s.len32 = len32;
    return s;
  };
  const Mode modes[] = {
      {"cat", style(false, PayloadEncoding::utf8, false, false, false)},
      {"cat --seq", style(false, PayloadEncoding::utf8, true, false, false)},
      {"cat -0", style(false, PayloadEncoding::utf8, false, true, false)},
      {"cat --len32", style(false, PayloadEncoding::utf8, false, false, true)},
      {"cat --seq --payload hex", style(false, PayloadEncoding::hex, true, false, false)},
      {"cat --payload base64", style(false, PayloadEncoding::base64, false, false, false)},
      {"cat --seq --payload none", style(false, PayloadEncoding::none, true, false, false)},
      {"--json cat", style(true, PayloadEncoding::base64, false, false, false)},
      {"--json cat --payload hex", style(true, PayloadEncoding::hex, false, false, false)},
      {"--json cat --payload utf8", style(true, PayloadEncoding::utf8, false, false, false)},
      {"--json cat --payload none", style(true, PayloadEncoding::none, false, false, false)},
  };
  std::vector<std::string> logs = {vector_log("salvaged"), vector_log("multi-segment"),
                                   vector_log("checkpoint-first")};
  TempDir t;
  for (uint32_t seed = 200; seed < 204; seed++) {
    const std::string d = t / ("log" + std::to_string(seed));
    RandomLog made = make_random_log(d, seed);
    std::mt19937 rng(seed);
    for (size_t i = 0; i + 1 < made.segments.size(); i += 3)
      flip_bit(made.segments[i], 192 + 16 + rng() % (file_size(made.segments[i]) - 224), 2);
    RunResult fixed = run_alog("recover --force " + shq(d));
    REQUIRE(fixed.exit_code <= 1);
    logs.push_back(d);
  }
  for (const std::string& d : logs)
    for (const Mode& m : modes) {
      INFO(m.args << " " << d);
      RunResult r = run_alog(std::string(m.args) + " " + shq(d));
      CHECK(r.exit_code == 0);
      CHECK(r.out == read_one_by_one(d, m.style));
    }
}

TEST_CASE("cat of a log appended with --no-sync prints every line once and in order, its long tail walked beside the scan") {
  // 80,000 lines of 60-90 bytes: ~6.5 MB of unsynced tail, past the 4 MiB
  // from which cat walks the tail on a thread of its own.
  std::string input;
  for (int i = 0; i < 80000; i++) input += "line " + std::to_string(i) + std::string(55 + i % 31, 'y') + "\n";
  TempDir t;
  const std::string d = t / "log";
  REQUIRE(run_alog("append --no-sync " + shq(d), input).exit_code == 0);
  RunResult all = run_alog("cat " + shq(d));
  CHECK(all.exit_code == 0);
  CHECK(all.err.empty());
  CHECK(all.out == input);
  // With a start and a count, and from the last records: the end is asked for first.
  RunResult mid = run_alog("cat --from 40000 --count 2 " + shq(d));
  CHECK(mid.out == "line 40000" + std::string(55 + 40000 % 31, 'y') + "\nline 40001" +
                       std::string(55 + 40001 % 31, 'y') + "\n");
  RunResult last = run_alog("cat --last 1 " + shq(d));
  CHECK(last.out == "line 79999" + std::string(55 + 79999 % 31, 'y') + "\n");
  RunResult past = run_alog("cat --from 80001 " + shq(d));
  CHECK(past.exit_code != 0);
  CHECK(past.err.find("past the end of the log (next sequence 80000)") != std::string::npos);
}

TEST_CASE("cat into a pipe makes the pipe hold a whole output buffer, and every byte still arrives in order") {
  TempDir t;
  const std::string d = t / "log";
  std::string input;
  for (int i = 0; i < 30000; i++) input += "record " + std::to_string(i) + "\n";
  REQUIRE(run_alog("append " + shq(d), input).exit_code == 0);
  std::ifstream max_file("/proc/sys/fs/pipe-max-size");
  long max = 0;
  max_file >> max;
  int p[2];
  REQUIRE(::pipe2(p, O_CLOEXEC) == 0);
  const int before = ::fcntl(p[0], F_GETPIPE_SZ);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(p[1], 1);
    ::execl(ALOG_CLI_PATH, ALOG_CLI_PATH, "cat", d.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(p[1]);
  std::string got;
  char buf[65536];
  ssize_t n;
  while ((n = ::read(p[0], buf, sizeof buf)) > 0) got.append(buf, size_t(n));
  const int after = ::fcntl(p[0], F_GETPIPE_SZ);
  ::close(p[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(got == input);
  if (max >= long(OutBuffer::kCapacity)) {
    CHECK(before < int(OutBuffer::kCapacity));
    CHECK(after >= int(OutBuffer::kCapacity));
  }
}

TEST_CASE("cat prints records larger than its output buffer among small ones whole and in order, with either separator") {
  TempDir t;
  const std::string d = t / "log";
  std::vector<std::string> records;
  {
    Options o;
    o.max_segment_size = 64 << 20;
    auto log = Log::open(d, o);
    REQUIRE(log.is_ok());
    for (int b = 0; b < 6; b++) {
      std::vector<std::string> batch;
      for (int i = 0; i < 50; i++) batch.push_back("small " + std::to_string(b) + "." + std::to_string(i));
      // Past the 1 MiB output buffer (and a reader's window): a batch the
      // bulk path cannot take whole.
      if (b % 2 == 1) batch.push_back(std::string(OutBuffer::kCapacity + 4096 * size_t(b), char('A' + b)));
      std::vector<std::string_view> v(batch.begin(), batch.end());
      REQUIRE((*log)->append(v).is_ok());
      records.insert(records.end(), batch.begin(), batch.end());
    }
    REQUIRE((*log)->close().is_ok());
  }
  for (const char sep : {'\n', '\0'}) {
    std::string want;
    for (const std::string& r : records) want += r + std::string(1, sep);
    RunResult r = run_alog(std::string(sep == '\0' ? "cat -0 " : "cat ") + shq(d));
    CHECK(r.exit_code == 0);
    CHECK(r.out.size() == want.size());
    CHECK(r.out == want);
  }
}

TEST_CASE("cat on every core prints what cat reading one record at a time prints, errors and exit status included") {
  // --to disables the parallel reading (it stops at a sequence): the
  // reading in order, record by record, is the reference.
  const std::string in_order = "cat --to 18446744073709551615 ";
  TempDir t;
  std::vector<std::string> logs;
  auto damaged = [&](const std::string& name, const std::function<void(const std::string&)>& damage) {
    const std::string d = t / name;
    copy_tree(base_log(), d);
    damage(d);
    logs.push_back(d);
  };
  damaged("intact", [](const std::string&) {});
  damaged("payload", [](const std::string& d) { flip_bit(seg(d, 80), 192 + 16 + 300, 4); });
  damaged("header-length", [](const std::string& d) { set_byte(seg(d, 40), 192 + 88 * 7 + 1, 0x7f); });
  damaged("missing-middle", [](const std::string& d) { std::filesystem::remove(seg(d, 120)); });
  damaged("garbled-header", [](const std::string& d) { flip_bit(seg(d, 120), 20, 1); });
  damaged("torn-tail", [](const std::string& d) { truncate_file(seg(d, 160), file_size(seg(d, 160)) - 50); });
  for (uint32_t seed = 300; seed < 303; seed++) {
    const std::string d = t / ("random" + std::to_string(seed));
    make_random_log(d, seed);
    logs.push_back(d);
  }
  int stopped = 0;
  for (const std::string& d : logs)
    for (const char* style : {"", "-0 "}) {
      RunResult want = run_alog(in_order + style + shq(d));
      for (const char* jobs : {"-j 1 ", "-j 2 ", "-j 5 "}) {
        INFO(jobs << style << d);
        RunResult got = run_alog(std::string("cat ") + jobs + style + shq(d));
        CHECK(got.exit_code == want.exit_code);
        CHECK(got.out == want.out);
        CHECK(got.err == want.err);
      }
      stopped += want.exit_code != 0;
    }
  CHECK(stopped >= 6);  // the damage is met, not only intact logs compared
}
