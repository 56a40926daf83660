// `alog append` splits its input into exactly the records in it, whatever
// the lengths and wherever the reads end: random records from empty to
// twice the reader's 512 KiB block, split by newline and by NUL, read from
// a file (whole blocks) and from a pipe written in random pieces, come back
// byte for byte and in order, an unterminated last one included.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "alog/log.h"
#include "alog/scanner.h"
#include "cli_child.h"
#include "cli_util.h"

using namespace alog;
using namespace alog::test;
using namespace alog::test::cli;

namespace {

std::vector<std::string> stored(const std::string& dir) {
  auto log = Log::open_read(dir);
  REQUIRE(log.is_ok());
  auto s = (*log)->scan(0);
  REQUIRE(s.is_ok());
  std::vector<std::string> out;
  while (true) {
    auto more = (*s)->next();
    REQUIRE(more.is_ok());
    if (!*more) break;
    out.emplace_back((*s)->payload());
  }
  return out;
}

// Mostly short records, some around a block's size and past it; none holds
// the delimiter, and the last is not empty (unterminated, it would vanish).
std::vector<std::string> random_records(std::mt19937_64& rng, char delim) {
  std::vector<std::string> recs(60);
  for (std::string& r : recs) {
    const uint64_t pick = rng() % 20;
    const size_t len = pick < 8    ? rng() % 3
                       : pick < 16 ? rng() % 300
                       : pick < 18 ? rng() % 70000
                                   : 400000 + rng() % 800000;
    r.resize(len);
    for (char& c : r) {
      c = static_cast<char>(rng());
      if (c == delim) c = 'x';
    }
  }
  if (recs.back().empty()) recs.back() = "last";
  return recs;
}

std::string joined(const std::vector<std::string>& recs, char delim, bool terminated) {
  std::string s;
  for (const std::string& r : recs) (s += r) += delim;
  if (!terminated) s.pop_back();
  return s;
}

}  // namespace

TEST_CASE("append stores exactly the records of a random input of every length, from a file and from a pipe written in random pieces, split by newline and by NUL") {
  std::mt19937_64 rng(20261207);
  for (const char delim : {'\n', '\0'}) {
    for (const bool terminated : {true, false}) {
      CAPTURE(int(delim));
      CAPTURE(terminated);
      const std::vector<std::string> recs = random_records(rng, delim);
      const std::string input = joined(recs, delim, terminated);
      const std::string split = delim == '\0' ? "-0 " : "";
      TempDir t;

      const std::string file = t / "input", from_file = t / "from-file";
      write_file(file, input);
      RunResult r = run_alog("append -q " + split + shq(from_file) + " " + shq(file));
      REQUIRE(r.exit_code == 0);
      CHECK(stored(from_file) == recs);

      const std::string from_pipe = t / "from-pipe";
      std::vector<std::string> args{"append", "-q"};
      if (delim == '\0') args.push_back("-0");
      args.push_back(from_pipe);
      Child c(args, Child::Stdin::pipe);
      for (size_t at = 0; at < input.size();) {
        const size_t n = std::min<size_t>(input.size() - at, 1 + rng() % 300000);
        c.write(input.substr(at, n));
        at += n;
      }
      c.close_stdin();
      REQUIRE(c.wait_exit() == 0);
      CHECK(stored(from_pipe) == recs);
    }
  }
}
