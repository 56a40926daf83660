// append --ndjson reads back what cat --json writes (man/alog-append.1).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_util.h"

using namespace alog::test;
using namespace alog::test::cli;
using nlohmann::json;

TEST_CASE("cat --json piped into append --ndjson copies every payload byte for byte") {
  TempDir t;
  std::string a = t / "a", b = t / "b";
  std::string in;
  for (int i = 0; i < 256; i++) in += std::string(1, char(i)) + "x" + std::to_string(i) + '\0';
  REQUIRE(run_alog("append -0 " + shq(a), in).exit_code == 0);
  for (std::string enc : {"base64", "hex", "utf8"}) {
    CAPTURE(enc);
    remove_tree(b);
    RunResult r = run(alog_cli() + " --json cat --payload=" + enc + " " + shq(a) + " | " + alog_cli() +
                      " append --ndjson " + shq(b));
    REQUIRE(r.exit_code == 0);
    CHECK(run_alog("cat -0 " + shq(b)).out == run_alog("cat -0 " + shq(a)).out);
  }
}

TEST_CASE("append --ndjson decodes payloads without payload_encoding by --payload and skips reset and problem lines") {
  TempDir t;
  std::string d = t / "log";
  std::string in = "{\"type\":\"record\",\"payload\":\"6869\"}\n"
                   "{\"type\":\"reset\",\"reason\":\"recycled\"}\n"
                   "\n"
                   "{\"type\":\"record\",\"seq\":9,\"length\":2,\"payload\":\"6f6b\"}\n";
  RunResult r = run_alog("append --ndjson --payload hex " + shq(d), in);
  CHECK(r.exit_code == 0);
  CHECK(run_alog("cat " + shq(d)).out == "hi\nok\n");
}

TEST_CASE("a bad NDJSON line is an error naming its line number, and nothing of its batch is appended") {
  TempDir t;
  std::string d = t / "log";
  REQUIRE(run_alog("append " + shq(d), "before\n").exit_code == 0);
  struct Bad {
    std::string line, why;
  };
  for (const Bad& b : {Bad{"{not json", "line 2: not valid JSON"},
                       Bad{"[1]", "line 2: not a JSON object"},
                       Bad{"{\"type\":\"record\",\"payload\":\"!!\"}", "line 2: \"payload\" is not valid base64"},
                       Bad{"{\"type\":\"record\",\"length\":3,\"payload\":\"aGk=\"}",
                           "line 2: \"length\" does not match the payload's 2 bytes"},
                       Bad{"{\"type\":\"other\",\"payload\":\"\"}", "line 2: type \"other\" is not a record"}}) {
    CAPTURE(b.line);
    std::string in = "{\"type\":\"record\",\"payload\":\"aGk=\"}\n" + b.line + "\n";
    RunResult r = run_alog("--json append --ndjson " + shq(d), in);
    CHECK(r.exit_code == 8);
    json j = json::parse(r.out);
    CHECK(j["error"]["code"] == "bad_input");
    CHECK(j["error"]["offset"] == 35);
    CHECK(j["error"]["message"].get<std::string>().rfind(b.why, 0) == 0);
    CHECK(j["error"]["resume"] == json{{"file", "stdin"}, {"record", 1}, {"offset", 0}});
    CHECK(run_alog("cat " + shq(d)).out == "before\n");
  }
}

TEST_CASE("append --payload without --ndjson is a usage error") {
  TempDir t;
  CHECK(run_alog("append --payload hex " + shq(t / "log"), "x\n").exit_code == 16);
  CHECK(run_alog("append --ndjson -0 " + shq(t / "log"), "x\n").exit_code == 16);
}
