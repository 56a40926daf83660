// `alog cat -f` against a log that this test changes through the library
// while the command runs (man/alog-cat.1 "FOLLOWING"). The child's output
// pipe is the synchronization: the test blocks reading it until the lines it
// expects arrive. Every read has a timeout only as a failsafe, so that a
// follower that never prints fails the test instead of hanging it.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "alog/log.h"
#include "cli_util.h"

using namespace alog;
using namespace alog::test;
using nlohmann::json;

namespace {

constexpr int kFailsafeMs = 30000;

// alog ARGS as a child process with its stdout and stderr on pipes.
class Child {
 public:
  explicit Child(const std::vector<std::string>& args) {
    int out[2], err[2];
    REQUIRE(::pipe(out) == 0);
    REQUIRE(::pipe(err) == 0);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::dup2(out[1], 1);
      ::dup2(err[1], 2);
      int null = ::open("/dev/null", O_RDONLY);
      if (null >= 0) ::dup2(null, 0);
      for (int fd : {out[0], out[1], err[0], err[1]}) ::close(fd);
      std::vector<char*> argv;
      std::string path = ALOG_CLI_PATH;
      argv.push_back(path.data());
      std::vector<std::string> copy = args;
      for (auto& a : copy) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(path.c_str(), argv.data());
      ::_exit(127);
    }
    ::close(out[1]);
    ::close(err[1]);
    fd_[0] = out[0];
    fd_[1] = err[0];
  }
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    for (int fd : fd_)
      if (fd >= 0) ::close(fd);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // The next line (without its newline) of stdout (which = 0) or stderr (1);
  // nullopt at end of file or when the failsafe timeout passes.
  std::optional<std::string> line(int which) {
    std::string& buf = buf_[which];
    while (true) {
      size_t nl = buf.find('\n');
      if (nl != std::string::npos) {
        std::string l = buf.substr(0, nl);
        buf.erase(0, nl + 1);
        return l;
      }
      if (!fill(which)) return std::nullopt;
    }
  }

  // Reads stdout to its end (the child closes it when it exits).
  std::string rest(int which) {
    while (fill(which)) {
    }
    std::string r = buf_[which];
    buf_[which].clear();
    return r;
  }

  // SIGINT, then the exit status once the child has closed its output.
  int interrupt() {
    REQUIRE(::kill(pid_, SIGINT) == 0);
    rest(0);
    rest(1);
    int st = 0;
    REQUIRE(::waitpid(pid_, &st, 0) == pid_);
    pid_ = -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  }

 private:
  // One read into the buffer; false at EOF or on the failsafe timeout.
  bool fill(int which) {
    struct pollfd p{fd_[which], POLLIN, 0};
    int n = ::poll(&p, 1, kFailsafeMs);
    if (n <= 0) {
      FAIL_CHECK("no output from alog within the failsafe timeout");
      return false;
    }
    char tmp[4096];
    ssize_t got = ::read(fd_[which], tmp, sizeof tmp);
    if (got <= 0) return false;
    buf_[which].append(tmp, size_t(got));
    return true;
  }

  pid_t pid_ = -1;
  int fd_[2] = {-1, -1};
  std::string buf_[2];
};

Options small() {
  Options o;
  o.max_segment_size = 600;
  o.checkpoint_stride = 4;
  return o;
}

std::string payload(uint64_t seq) { return "record " + std::to_string(seq); }

void append_n(Log& log, int n) {
  for (int i = 0; i < n; i++) REQUIRE(log.append_one(payload(log.next_sequence())).is_ok());
}

}  // namespace

TEST_CASE("cat -f prints records appended by another process as they arrive, across rolls, and exits 130 on SIGINT") {
  TempDir t;
  std::string d = t / "logs";
  auto opened = Log::open(d, small());
  REQUIRE(opened.is_ok());
  Log& log = **opened;
  append_n(log, 3);
  Child c({"cat", "-f", "--seq", d});
  for (uint64_t s = 0; s < 3; s++) CHECK(c.line(0) == std::to_string(s) + "\t" + payload(s));
  // Enough records to roll the 600-byte segments several times.
  size_t before = log.segments().size();
  append_n(log, 40);
  CHECK(log.segments().size() > before);
  for (uint64_t s = 3; s < 43; s++) CHECK(c.line(0) == std::to_string(s) + "\t" + payload(s));
  append_n(log, 1);
  CHECK(c.line(0) == "43\t" + payload(43));
  CHECK(c.interrupt() == 130);
}

TEST_CASE("cat -f reports records removed behind it by truncate-after and follows from the cut") {
  TempDir t;
  std::string d = t / "logs";
  auto opened = Log::open(d, small());
  REQUIRE(opened.is_ok());
  Log& log = **opened;
  append_n(log, 10);
  Child c({"--json", "cat", "-f", "--payload=utf8", d});
  for (uint64_t s = 0; s < 10; s++) {
    auto l = c.line(0);
    REQUIRE(l);
    json j = json::parse(*l);
    CHECK(j["type"] == "record");
    CHECK(j["seq"] == s);
    CHECK(j["payload"] == payload(s));
  }
  REQUIRE(log.truncate_after(4).is_ok());
  auto l = c.line(0);
  REQUIRE(l);
  json reset = json::parse(*l);
  CHECK(reset["type"] == "reset");
  CHECK(reset["reason"] == "truncated_after");
  CHECK(reset["lost_first_seq"] == 5);
  CHECK(reset["lost_last_seq"] == 9);
  CHECK(reset["next_seq"] == 5);
  auto err = c.line(1);
  REQUIRE(err);
  CHECK(err->rfind("alog: " + d + ": warning: records 5-9 ", 0) == 0);
  // New records reuse the sequences after the cut.
  append_n(log, 2);
  for (uint64_t s = 5; s < 7; s++) {
    auto r = c.line(0);
    REQUIRE(r);
    json j = json::parse(*r);
    CHECK(j["type"] == "record");
    CHECK(j["seq"] == s);
  }
  CHECK(c.interrupt() == 130);
}

TEST_CASE("cat -f in text mode gives the truncate-after notice on standard error only") {
  TempDir t;
  std::string d = t / "logs";
  auto opened = Log::open(d, small());
  REQUIRE(opened.is_ok());
  Log& log = **opened;
  append_n(log, 6);
  Child c({"cat", "-f", "--seq", d});
  for (uint64_t s = 0; s < 6; s++) CHECK(c.line(0) == std::to_string(s) + "\t" + payload(s));
  REQUIRE(log.truncate_after(1).is_ok());
  CHECK(c.line(1) == "alog: " + d +
                         ": warning: records 2-5 already written were removed by truncate-after; "
                         "following from 2");
  append_n(log, 1);
  CHECK(c.line(0) == "2\t" + payload(2));
  CHECK(c.interrupt() == 130);
}
