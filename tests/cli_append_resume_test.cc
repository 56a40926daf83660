// Where `alog append` says the input resumes after a failure
// (man/alog-append.1 FAILURES, "resume"): the first input record not
// appended, in every input mode, whether the failing record starts a
// batch, sits in the middle of one, or is the first of the input.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_util.h"

using namespace alog::test;
using namespace alog::test::cli;
using nlohmann::json;

namespace {

// Lines of 35 and 34 bytes: a record "hi" and a record of no valid base64.
const std::string kGood = "{\"type\":\"record\",\"payload\":\"aGk=\"}\n";
const std::string kBad = "{\"type\":\"record\",\"payload\":\"!!!\"}\n";

std::string be32(uint32_t n) {
  return {char(n >> 24), char(n >> 16), char(n >> 8), char(n)};
}

// Runs `alog --json append ARGS DIR` on `in`; returns the error object.
json failed_append(const std::string& args, const std::string& dir, const std::string& in) {
  RunResult r = run_alog("--json append " + args + " " + shq(dir), in);
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 8);
  return json::parse(r.out)["error"];
}

json resume(uint64_t record, uint64_t offset, const std::string& file = "stdin") {
  return json{{"file", file}, {"record", record}, {"offset", offset}};
}

}  // namespace

TEST_CASE("append --ndjson resumes at a bad line that starts a batch, after the records appended before it") {
  TempDir t;
  std::string d = t / "log";
  json e = failed_append("--ndjson --batch 1", d, kGood + kBad + kGood);
  CHECK(e["code"] == "bad_input");
  CHECK(e["offset"] == 35);
  CHECK(e["last_appended_seq"] == 0);
  CHECK(e["resume"] == resume(2, 35));
  CHECK(run_alog("cat " + shq(d)).out == "hi\n");
}

TEST_CASE("append --ndjson resumes at the start of the batch a bad line is in the middle of") {
  TempDir t;
  std::string d = t / "log";
  // Batches {1 2} and {3 4}: the second is open when line 4 fails.
  json e = failed_append("--ndjson --batch 2", d, kGood + kGood + kGood + kBad);
  CHECK(e["last_appended_seq"] == 1);
  CHECK(e["resume"] == resume(3, 70));
  CHECK(run_alog("cat " + shq(d)).out == "hi\nhi\n");
}

TEST_CASE("append --ndjson resumes at a bad first line of the input, record 1 at offset 0, having appended nothing") {
  TempDir t;
  std::string d = t / "log";
  json e = failed_append("--ndjson", d, kBad + kGood);
  CHECK(e["last_appended_seq"] == nullptr);
  CHECK(e["resume"] == resume(1, 0));
  CHECK(!file_exists(d));
}

TEST_CASE("append --ndjson resumes at a bad line that follows a skipped reset line") {
  TempDir t;
  std::string d = t / "log";
  const std::string reset = "{\"type\":\"reset\",\"reason\":\"recycled\"}\n";
  json e = failed_append("--ndjson --batch 1", d, kGood + reset + kBad);
  CHECK(e["resume"] == resume(3, 35 + reset.size()));
  CHECK(run_alog("cat " + shq(d)).out == "hi\n");
}

TEST_CASE("append --ndjson resumes at a line whose decoded payload is larger than max_payload_size") {
  TempDir t;
  std::string d = t / "log";
  const std::string big = "{\"type\":\"record\",\"payload\":\"" + std::string(2000, 'A') + "\"}\n";
  json e = failed_append("--ndjson --batch 1 --max-payload-size 1KiB", d, kGood + big + kGood);
  CHECK(e["code"] == "payload_too_large");
  CHECK(e["resume"] == resume(2, 35));
  CHECK(run_alog("cat " + shq(d)).out == "hi\n");
}

TEST_CASE("append resumes at the failing record in every split mode, first in its batch or first of the input") {
  const std::string big(2000, 'z');
  struct Mode {
    std::string flag, first, bad;
    const char* code;
  };
  for (const Mode& m : {Mode{"", "a\n", big + "\n", "payload_too_large"},
                        Mode{"-0", std::string("a\0", 2), big + '\0', "payload_too_large"},
                        Mode{"--len32", be32(2) + "hi", be32(2000) + big, "payload_too_large"},
                        Mode{"--len32", be32(2) + "hi", be32(9) + "abc", "bad_input"}}) {
    CAPTURE(m.flag);
    CAPTURE(m.code);
    TempDir t;
    const std::string args = m.flag + " --batch 1 --max-payload-size 1KiB";
    json e = failed_append(args, t / "a", m.first + m.bad);
    CHECK(e["code"] == m.code);
    CHECK(e["resume"] == resume(2, m.first.size()));
    e = failed_append(args, t / "b", m.bad);
    CHECK(e["code"] == m.code);
    CHECK(e["resume"] == resume(1, 0));
  }
}

TEST_CASE("append --whole resumes at the input file that failed, record 1 at offset 0") {
  TempDir t;
  std::string d = t / "log", f1 = t / "one", f2 = t / "two";
  write_file(f1, "a");
  write_file(f2, std::string(2000, 'z'));
  RunResult r = run_alog("--json append --whole --batch 1 --max-payload-size 1KiB " + shq(d) + " " +
                         shq(f1) + " " + shq(f2));
  CHECK(r.exit_code == 8);
  json e = json::parse(r.out)["error"];
  CHECK(e["code"] == "payload_too_large");
  CHECK(e["resume"] == resume(1, 0, f2));
  CHECK(run_alog("cat " + shq(d)).out == "a\n");
}
