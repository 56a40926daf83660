// alog completion (man/alog-completion.1): the bash, zsh and fish scripts it
// prints, what they complete, and the options it refuses. Every test runs
// the built binary; the shells' tests run the shells.
#include <doctest/doctest.h>

#include <string>

#include "cli_util.h"

using namespace alog::test;
using namespace alog::test::cli;

TEST_CASE("completion prints scripts for bash, zsh and fish naming every command") {
  for (std::string sh : {"bash", "zsh", "fish"}) {
    RunResult r = run_alog("completion " + sh);
    CHECK(r.exit_code == 0);
    for (std::string c : {"append", "cat", "seek", "verify", "recover", "truncate-before",
                          "truncate-after", "dump-frames", "stats", "completion"})
      CHECK(r.out.find(c) != std::string::npos);
    CHECK(r.out.find("older-than") != std::string::npos);
  }
  CHECK(run("bash -n -c " + shq(run_alog("completion bash").out)).exit_code == 0);
  CHECK(run("zsh -n -c " + shq(run_alog("completion zsh").out)).exit_code == 0);
  CHECK(run_alog("completion tcsh").exit_code == 16);
}

TEST_CASE("the bash completion completes option values, shell names, directories and segment files") {
  TempDir t;
  write_file(t / "script", run_alog("completion bash").out);
  auto complete = [&](const std::string& words, int cword) {
    std::string cmd = "cd " + shq(vector_log("multi-segment")) + "/.. && . " + shq(t / "script") +
                      " && COMP_WORDS=(" + words + ") && COMP_CWORD=" + std::to_string(cword) +
                      " && { _alog; echo \"${COMPREPLY[*]}\"; }";
    return run("bash -c " + shq(cmd)).out;
  };
  CHECK(complete("alog cat --payload ''", 3) == "base64 hex utf8 none\n");
  CHECK(complete("alog seek --payload=h", 2) == "--payload=hex\n");
  CHECK(complete("alog --format ''", 2) == "text json\n");
  CHECK(complete("alog completion ''", 2) == "bash zsh fish\n");
  CHECK(complete("alog recover ''", 2) == "log\n");
  CHECK(complete("alog dump-frames log/0000000000000000016", 2) == "log/00000000000000000165.seg\n");
  CHECK(complete("alog recover log/0000000000000000016", 2) == "\n");  // DIR: directories only
  CHECK(complete("alog cat --seq ''", 3) == "log\n");  // a flag takes no value
}

TEST_CASE("the fish completion completes commands, option values, directories and segment files") {
  TempDir t;
  write_file(t / "alog.fish", run_alog("completion fish").out);
  CHECK(run("fish --no-execute " + shq(t / "alog.fish")).exit_code == 0);
  auto complete = [&](const std::string& line) {
    std::string cmd = "source " + shq(t / "alog.fish") + "; complete -C " + shq(line) + " | cut -f1";
    return run("cd " + shq(vector_log("multi-segment")) + "/.. && fish -c " + shq(cmd)).out;
  };
  CHECK(complete("alog trunc") == "truncate-after\ntruncate-before\n");
  CHECK(complete("alog cat --payload ") == "base64\nhex\nnone\nutf8\n");
  CHECK(complete("alog --format ") == "json\ntext\n");
  CHECK(complete("alog completion ") == "bash\nfish\nzsh\n");
  CHECK(complete("alog recover ") == "log/\n");
  CHECK(complete("alog cat --seq ").find("log/\n") != std::string::npos);  // a flag takes no value
  CHECK(complete("alog cat --from ") == "");  // SEQ: nothing to offer
  CHECK(complete("alog dump-frames log/0000000000000000016") == "log/00000000000000000165.seg\n");
}

TEST_CASE("the zsh completion is valid zsh and gives values only to options that take them") {
  std::string script = run_alog("completion zsh").out;
  TempDir t;
  write_file(t / "_alog", script);
  CHECK(run("zsh -n " + shq(t / "_alog")).exit_code == 0);
  CHECK(script.rfind("#compdef alog\n", 0) == 0);
  CHECK(script.find("'--seq[") != std::string::npos);
  CHECK(script.find("'--seq=") == std::string::npos);
  CHECK(script.find("'--payload=[") != std::string::npos);
  CHECK(script.find(":value:(base64 hex utf8 none)") != std::string::npos);
  // Loaded into an interactive zsh's completion system, it defines _alog.
  std::string cmd = "autoload -Uz compinit && compinit -u -d " + shq(t / "zcompdump") + " && fpath=(" +
                    shq(t.path()) + " $fpath) && source " + shq(t / "_alog") + " && whence -w _alog";
  CHECK(run("zsh -f -c " + shq(cmd)).out == "_alog: function\n");
}


TEST_CASE("completion refuses the global options, before or after it, as usage errors") {
  for (std::string opt : {"--json", "-q", "--quiet", "--format=json", "--format text", "--help-all",
                          "--version"}) {
    CAPTURE(opt);
    for (std::string line : {opt + " completion bash", "completion " + opt + " bash",
                             "completion bash " + opt}) {
      CAPTURE(line);
      RunResult r = run_alog(line);
      CHECK(r.exit_code == 16);
      CHECK(r.out == "");
      CHECK(count_lines(r.err) == 1);
      CHECK(r.err.rfind("alog: completion: ", 0) == 0);
      CHECK(r.err.find(": completion takes no option but -h, --help") != std::string::npos);
    }
  }
  CHECK(run_alog("completion --help").exit_code == 0);
  CHECK(run_alog("completion -h bash").exit_code == 0);
}
