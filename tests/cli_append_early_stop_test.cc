// append stopped before it reads its input: a signal while a FIFO given as
// FILE waits for its writer, or an input that cannot be opened. Nothing is
// appended, and the error says so as every append error does (the line's
// "(nothing appended)", the JSON object's last_appended_seq,
// last_durable_seq and resume at the first input's start), never an
// "Interrupted system call" I/O error (man/alog-append.1).
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "cli_child.h"
#include "cli_util.h"

using namespace alog::test;
using namespace alog::test::cli;
using nlohmann::json;

namespace {

void check_nothing_appended(const json& e, const std::string& first_input) {
  CHECK(e["last_appended_seq"].is_null());
  CHECK(e["last_durable_seq"].is_null());
  CHECK(e["resume"] == json{{"file", first_input}, {"record", 1}, {"offset", 0}});
  CHECK(e["message"].get<std::string>().ends_with(" (nothing appended)"));
}

}  // namespace

TEST_CASE("a signal while append waits for a FIFO input's writer stops it with exit 130, naming the signal, nothing appended, resuming at the first input") {
  const std::pair<int, const char*> signals[] = {{SIGINT, "SIGINT"}, {SIGTERM, "SIGTERM"}, {SIGHUP, "SIGHUP"}};
  for (auto [sig, name] : signals) {
    TempDir t;
    const std::string d = t / "log", f1 = t / "f1", fifo = t / "fifo";
    REQUIRE(run_alog("append -q " + shq(d), "x\n").exit_code == 0);
    write_file(f1, "a\nb\n");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const auto before = snapshot_tree(d);
    Child c({"--json", "append", d, f1, fifo});
    c.wait_sleeping_in(SYS_openat);  // the FIFO's open, waiting for a writer
    c.signal(sig);
    CHECK(c.wait_exit() == 130);
    json out = json::parse(c.rest(0));
    CHECK(out["exit_status"] == 130);
    CHECK(out["error"]["code"] == "interrupted");
    CHECK(out["error"]["signal"] == name);
    check_nothing_appended(out["error"], f1);
    CHECK(c.rest(1) == std::string("alog: interrupted by ") + name + " (nothing appended)\n");
    CHECK(snapshot_tree(d) == before);
  }
}

TEST_CASE("an input append cannot open fails with the usual error state: nothing appended, resume at the first input") {
  TempDir t;
  const std::string d = t / "log", f1 = t / "f1";
  write_file(f1, "a\n");
  RunResult r = run_alog("--json append " + shq(d) + " " + shq(f1) + " " + shq(t / "missing"));
  CHECK(r.exit_code == 8);
  json e = json::parse(r.out)["error"];
  CHECK(e["code"] == "not_found");
  check_nothing_appended(e, f1);
  CHECK(r.err == "alog: " + t / "missing" + ": open: No such file or directory (nothing appended)\n");
  CHECK_FALSE(file_exists(d));
}
