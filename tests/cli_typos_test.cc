// Typos and help: an unknown command or option is a usage error naming it
// and the closest valid one; `alog help [COMMAND]` prints the usage; help
// text has no parser notes and lists the global options.
#include <doctest/doctest.h>

#include "cli_util.h"

using namespace alog::test;
using namespace alog::test::cli;

TEST_CASE("a mistyped command exits 16 naming it and the closest command") {
  RunResult r = run_alog("cta x");
  CHECK(r.exit_code == 16);
  CHECK(r.out == "");
  CHECK(r.err == "alog: unknown command 'cta' (did you mean 'cat'?) (see alog --help)\n");
  CHECK(run_alog("verfy x").err == "alog: unknown command 'verfy' (did you mean 'verify'?) (see alog --help)\n");
  CHECK(run_alog("--json truncate-befor x 3").err.find("did you mean 'truncate-before'?") != std::string::npos);
}

TEST_CASE("a command far from every known one is named without a guess") {
  RunResult r = run_alog("frobnicate x");
  CHECK(r.exit_code == 16);
  CHECK(r.err == "alog: unknown command 'frobnicate' (see alog --help)\n");
}

TEST_CASE("a mistyped option exits 16 naming it and the closest option, not the arguments after it") {
  RunResult r = run_alog("cat --form 3 x");
  CHECK(r.exit_code == 16);
  CHECK(r.err == "alog: cat: unknown option '--form' (did you mean '--from'?) (see alog cat --help)\n");
  CHECK(run_alog("cat --fro=3 x").err.find("unknown option '--fro' (did you mean '--from'?)") != std::string::npos);
  CHECK(run_alog("verify -z x").err.find("unknown option '-z'") != std::string::npos);
}

TEST_CASE("-n is --dry-run wherever it exists; cat's count is --count only") {
  CHECK(run_alog("cat -n 2 x").err.find("unknown option '-n'") != std::string::npos);
  std::string d = vector_log("seed-append");
  CHECK(run_alog("cat --count 2 " + shq(d)).out == "alpha\nbeta\n");
}

TEST_CASE("alog help prints the usage, and alog help COMMAND that command's") {
  RunResult top = run_alog("help");
  CHECK(top.exit_code == 0);
  CHECK(top.out == run_alog("--help").out);
  CHECK(top.out.find("Subcommands:") != std::string::npos);
  RunResult cat = run_alog("help cat");
  CHECK(cat.exit_code == 0);
  CHECK(cat.out == run_alog("cat --help").out);
  CHECK(cat.out.find("Usage: alog cat") != std::string::npos);
  CHECK(run_alog("help cta").exit_code == 16);
}

TEST_CASE("an option given twice is a usage error that says so in words") {
  RunResult r = run_alog("truncate-before --keep 5 --keep 10 x");
  CHECK(r.exit_code == 16);
  CHECK(r.err == "alog: truncate-before: --keep: given 2 times; it takes one value (see alog truncate-before --help)\n");
  CHECK(run_alog("cat --from 1 --from 2 --from 3 x").err.find("--from: given 3 times") != std::string::npos);
}

TEST_CASE("alog help with more than one argument is a usage error naming the extra one") {
  RunResult r = run_alog("help cat extra");
  CHECK(r.exit_code == 16);
  CHECK(r.out == "");
  CHECK(r.err == "alog: help takes one command at most, not also 'extra' (see alog --help)\n");
  CHECK(run_alog("--json help cat").exit_code == 0);
}

TEST_CASE("--help-all prints every command's options, and a command's --help-all that command's") {
  // (A line that names a command builds that command's options alone.)
  RunResult all = run_alog("--help-all");
  CHECK(all.exit_code == 0);
  for (const char* opt : {"--follow", "--jobs", "--keep", "--no-sync", "--segment-size", "--dry-run"})
    CHECK(all.out.find(opt) != std::string::npos);
  RunResult cat = run_alog("cat --help-all");
  CHECK(cat.exit_code == 0);
  CHECK(cat.out == run_alog("cat --help").out);
}

TEST_CASE("command help lists the global options and no parser notes") {
  for (std::string c : {"append", "cat", "seek", "verify", "recover", "truncate-before", "truncate-after",
                        "dump-frames", "stats"}) {
    RunResult r = run_alog(c + " --help");
    INFO(c << ":\n" << r.out);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("--json") != std::string::npos);
    CHECK(r.out.find("-q,--quiet") != std::string::npos);
    for (const char* leftover : {"SEQ:SEQ", "N:SEQ", "SIZE:SIZE", "TEXT REQUIRED", "REQUIRED", ":{"})
      CHECK(r.out.find(leftover) == std::string::npos);
  }
  CHECK(run_alog("cat --help").out.find("--from SEQ ") != std::string::npos);
  CHECK(run_alog("cat --help").out.find("--payload {base64,hex,utf8,none}") != std::string::npos);
}
