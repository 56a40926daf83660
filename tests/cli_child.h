// `alog` as a child process for the live CLI tests (follow, live append):
// its stdout and stderr on pipes the test reads, its stdin /dev/null or a
// pipe the test writes. The pipes are the synchronization: a test blocks
// reading until the lines it expects arrive; every read has a timeout only
// as a failsafe, so that a child that never prints fails the test instead
// of hanging it.
#pragma once

#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "support/util.h"

namespace alog::test::cli {

inline constexpr int kFailsafeMs = 30000;

class Child {
 public:
  enum class Stdin { null, pipe };
  // stdin_fd >= 0: the child's stdin is that descriptor (closed here).
  // max_fds > 0: the child may open at most that many descriptors
  // (RLIMIT_NOFILE's soft limit).
  explicit Child(const std::vector<std::string>& args, Stdin in = Stdin::null, int stdin_fd = -1,
                 rlim_t max_fds = 0) {
    int out[2], err[2], inp[2] = {-1, -1};
    REQUIRE(::pipe(out) == 0);
    REQUIRE(::pipe(err) == 0);
    if (in == Stdin::pipe && stdin_fd < 0) REQUIRE(::pipe(inp) == 0);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::dup2(out[1], 1);
      ::dup2(err[1], 2);
      if (stdin_fd >= 0) {
        ::dup2(stdin_fd, 0);
      } else if (inp[0] >= 0) {
        ::dup2(inp[0], 0);
      } else {
        int null = ::open("/dev/null", O_RDONLY);
        if (null >= 0) ::dup2(null, 0);
      }
      for (int fd : {out[0], out[1], err[0], err[1], inp[0], inp[1], stdin_fd})
        if (fd > 2) ::close(fd);
      if (max_fds > 0) {
        struct rlimit l;
        if (::getrlimit(RLIMIT_NOFILE, &l) != 0) ::_exit(127);
        l.rlim_cur = max_fds;
        if (::setrlimit(RLIMIT_NOFILE, &l) != 0) ::_exit(127);
      }
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
    if (inp[0] >= 0) ::close(inp[0]);
    if (stdin_fd >= 0) ::close(stdin_fd);
    fd_[0] = out[0];
    fd_[1] = err[0];
    in_ = inp[1];
  }
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    for (int fd : {fd_[0], fd_[1], in_})
      if (fd >= 0) ::close(fd);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }

  // Writes to the child's stdin pipe.
  void write(const std::string& data) {
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n = ::write(in_, data.data() + done, data.size() - done);
      REQUIRE(n > 0);
      done += size_t(n);
    }
  }
  void close_stdin() {
    if (in_ >= 0) ::close(in_);
    in_ = -1;
  }
  // Blocks until the child has read everything written to its stdin pipe
  // (FIONREAD on the pipe says 0); false on the failsafe timeout.
  bool wait_stdin_drained() {
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kFailsafeMs);
    while (std::chrono::steady_clock::now() < until) {
      int n = 0;
      REQUIRE(::ioctl(in_, FIONREAD, &n) == 0);
      if (n == 0) return true;
      std::this_thread::yield();
    }
    return false;
  }

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

  // Reads stdout (or stderr) to its end (the child closes it when it exits).
  std::string rest(int which) {
    while (fill(which)) {
    }
    std::string r = buf_[which];
    buf_[which].clear();
    return r;
  }

  // Stops the child (SIGSTOP) at a moment it is waiting between two looks
  // at the log (in poll or nanosleep), so that changes made before resume()
  // reach it all at once, at its next look. No timing: the child is
  // stopped, then its state checked; when it was elsewhere it is continued
  // and stopped again.
  void pause_between_looks() {
    for (int tries = 0; tries < 1000; tries++) {
      // Found asleep in its wait first, so that the stop lands there and not
      // on its way back into the wait after the previous resume().
      wait_asleep();
      stop();
      if (stopped_in_wait()) return;
      resume();
    }
    FAIL("the follower was never found between two looks at the log");
  }
  void stop() {
    REQUIRE(::kill(pid_, SIGSTOP) == 0);
    while (proc_state() != 'T') {
    }
  }
  void resume() { REQUIRE(::kill(pid_, SIGCONT) == 0); }
  void signal(int sig) { REQUIRE(::kill(pid_, sig) == 0); }

  // The exit status (128 + N after signal N) once the child has closed its
  // output; the output not read yet stays for rest().
  int wait_exit() {
    std::string o = rest(0), e = rest(1);
    buf_[0] = o;
    buf_[1] = e;
    int st = 0;
    REQUIRE(::waitpid(pid_, &st, 0) == pid_);
    pid_ = -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  }

  // Until the child sleeps in system call `nr` (SYS_* of <sys/syscall.h>),
  // as /proc says; bounded by the failsafe.
  void wait_sleeping_in(long nr) const {
    const std::string want = std::to_string(nr) + " ";
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kFailsafeMs);
    while (!(proc_state() == 'S' && syscall_line().rfind(want, 0) == 0))
      if (std::chrono::steady_clock::now() > until)
        FAIL("alog never slept in system call " << nr << " within the failsafe timeout");
  }

  // SIGINT, then the exit status once the child has closed its output.
  int interrupt() {
    signal(SIGINT);
    return wait_exit();
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
  // Whether /proc's syscall line names a wait: poll, ppoll, nanosleep,
  // clock_nanosleep, or restart_syscall (a wait resumed after an earlier
  // stop); x86_64 numbers, elsewhere the kernel's wait channel.
  bool waiting(const std::string& sc) const {
    for (const char* nr : {"7 ", "271 ", "230 ", "35 ", "219 "})
      if (sc.rfind(nr, 0) == 0) return true;
    std::string w = read_file("/proc/" + std::to_string(pid_) + "/wchan");
    return w.find("nanosleep") != std::string::npos || w.find("poll") != std::string::npos;
  }
  std::string syscall_line() const { return read_file("/proc/" + std::to_string(pid_) + "/syscall"); }
  // Until the running child sleeps in its wait (bounded by the failsafe).
  void wait_asleep() const {
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kFailsafeMs);
    while (!(proc_state() == 'S' && waiting(syscall_line())))
      if (std::chrono::steady_clock::now() > until)
        FAIL("the follower never slept between two looks at the log within the failsafe timeout");
  }
  // The stopped child was stopped in its wait. Its state reads T a moment
  // before it leaves the CPU, while the syscall line still says "running".
  bool stopped_in_wait() const {
    std::string sc = syscall_line();
    for (int i = 0; i < 100000 && sc.rfind("running", 0) == 0; i++) sc = syscall_line();
    return waiting(sc);
  }
  pid_t pid_ = -1;
  int fd_[2] = {-1, -1};
  int in_ = -1;
  std::string buf_[2];
};

}  // namespace alog::test::cli
