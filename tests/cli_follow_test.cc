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

  // Stops the child (SIGSTOP) at a moment it is waiting between two looks
  // at the log (in nanosleep), so that changes made before resume() reach
  // it all at once, at its next look. No timing: the child is stopped, then
  // its state checked; when it was elsewhere it is continued and stopped again.
  void pause_between_looks() {
    for (int tries = 0; tries < 100000; tries++) {
      REQUIRE(::kill(pid_, SIGSTOP) == 0);
      while (proc_state() != 'T') {
      }
      if (in_nanosleep()) return;
      REQUIRE(::kill(pid_, SIGCONT) == 0);
    }
    FAIL("the follower was never found between two looks at the log");
  }
  void resume() { REQUIRE(::kill(pid_, SIGCONT) == 0); }

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

  char proc_state() const {
    std::string st = read_file("/proc/" + std::to_string(pid_) + "/stat");
    size_t close = st.rfind(')');
    return close == std::string::npos || close + 2 >= st.size() ? '?' : st[close + 2];
  }
  // The syscall the stopped child was in: nanosleep or clock_nanosleep
  // (x86_64 numbers; elsewhere the kernel's wait channel says it).
  bool in_nanosleep() const {
    std::string base = "/proc/" + std::to_string(pid_);
    std::string sc = read_file(base + "/syscall");
    if (sc.rfind("230 ", 0) == 0 || sc.rfind("35 ", 0) == 0) return true;
    return read_file(base + "/wchan").find("nanosleep") != std::string::npos;
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

TEST_CASE("cat -f reports records removed by truncate-before before it read them and follows from the new first record") {
  TempDir t;
  std::string d = t / "logs";
  auto opened = Log::open(d, small());
  REQUIRE(opened.is_ok());
  Log& log = **opened;
  append_n(log, 10);
  Child c({"--json", "cat", "-f", "--payload=utf8", d});
  for (uint64_t s = 0; s < 10; s++) REQUIRE(c.line(0));
  c.pause_between_looks();
  append_n(log, 40);
  REQUIRE(log.truncate_before(30).is_ok());
  c.resume();
  auto l = c.line(0);
  REQUIRE(l);
  json reset = json::parse(*l);
  CHECK(reset["type"] == "reset");
  CHECK(reset["reason"] == "truncated_before");
  CHECK(reset["lost_first_seq"] == 10);
  CHECK(reset["lost_last_seq"] == 29);
  CHECK(reset["next_seq"] == 30);
  CHECK(c.line(1) == "alog: " + d + ": warning: records 10-29 were removed before they were read; following from 30");
  for (uint64_t s = 30; s < 50; s++) {
    auto r = c.line(0);
    REQUIRE(r);
    json j = json::parse(*r);
    CHECK(j["type"] == "record");
    CHECK(j["seq"] == s);
    CHECK(j["payload"] == payload(s));
  }
  CHECK(c.interrupt() == 130);
}

TEST_CASE("cat -f of a recycling log reports the records recycled before it read them") {
  TempDir t;
  std::string d = t / "logs";
  Options o = small();
  o.max_segments = 3;
  auto opened = Log::open(d, o);
  REQUIRE(opened.is_ok());
  Log& log = **opened;
  append_n(log, 5);
  Child c({"--json", "cat", "-f", "--payload=utf8", d});
  for (uint64_t s = 0; s < 5; s++) REQUIRE(c.line(0));
  c.pause_between_looks();
  append_n(log, 100);  // many rolls: the oldest segments are recycled
  const uint64_t first = log.first_sequence();
  REQUIRE(first > 5);
  c.resume();
  auto l = c.line(0);
  REQUIRE(l);
  json reset = json::parse(*l);
  CHECK(reset["type"] == "reset");
  CHECK(reset["reason"] == "recycled");
  CHECK(reset["lost_first_seq"] == 5);
  CHECK(reset["lost_last_seq"] == first - 1);
  CHECK(reset["next_seq"] == first);
  for (uint64_t s = first; s < 105; s++) {
    auto r = c.line(0);
    REQUIRE(r);
    json j = json::parse(*r);
    CHECK(j["type"] == "record");
    CHECK(j["seq"] == s);
  }
  CHECK(c.interrupt() == 130);
}
