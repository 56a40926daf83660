// The parent's side of support/kill_protocol.h (tests/kill_test.cc,
// tests/holder_kill_test.cc): starting a kill helper with its stdout on a
// pipe, reading its report lines, and feeding them to the oracle.
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <sstream>
#include <string>
#include <vector>

#include "support/kill_protocol.h"
#include "support/oracle.h"

namespace alog::test {

struct KillChild {
  pid_t pid = -1;
  int fd = -1;  // the child's stdout
};

// Runs args[0] with args, its stdout on a pipe.
inline KillChild spawn_child(const std::vector<std::string>& args) {
  int p[2];
  REQUIRE(::pipe(p) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(p[1], 1);
    ::close(p[0]);
    ::close(p[1]);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(p[1]);
  return {pid, p[0]};
}

// Reads the child's report lines one at a time.
class Lines {
 public:
  explicit Lines(int fd) : fd_(fd) {}
  ~Lines() { ::close(fd_); }
  Lines(const Lines&) = delete;
  Lines& operator=(const Lines&) = delete;
  bool next(std::string* line) {
    while (true) {
      auto nl = buf_.find('\n');
      if (nl != std::string::npos) {
        *line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return true;
      }
      char tmp[4096];
      ssize_t n = ::read(fd_, tmp, sizeof tmp);
      if (n <= 0) return false;  // the child is gone (a partial last line is dropped)
      buf_.append(tmp, static_cast<size_t>(n));
    }
  }

 private:
  int fd_;
  std::string buf_;
};

// Feeds one report line to the oracle, and remembers the operation that began
// and has not returned.
struct Feeder {
  explicit Feeder(Oracle& oracle, bool ignore = false) : o(oracle), ignore_ops(ignore) {}
  Oracle& o;
  bool ignore_ops;         // a recover child: its open and close tell the model nothing new
  std::string last_begin;  // an operation that began and has not returned
  std::vector<std::string> errors;

  static LiveState after(std::istringstream& in, bool* ok) {
    LiveState s;
    int okv = 0, failed = 0;
    in >> okv >> failed >> s.first >> s.next >> s.active_start >> s.second_start >> s.segments;
    *ok = okv != 0;
    s.failed = failed != 0;
    return s;
  }

  void feed(const std::string& line) {
    std::istringstream in(line);
    std::string ev;
    in >> ev;
    bool ok = false;
    if (ev == "DONE" || ev == "LISTEN" || ev == "SERVED") return;
    if (ev[0] == 'B')
      last_begin = line;
    else
      last_begin.clear();
    if (ignore_ops) {
      if (ev == "EO") o.open_failed();  // recovery ran: the model stays a superset
      return;
    }
    if (ev == "BA") {
      uint64_t tag, n, min_len, max_len;
      LiveState before;
      in >> tag >> n >> min_len >> max_len >> before.segments >> before.second_start;
      std::vector<std::string> batch;
      for (uint64_t i = 0; i < n; i++)
        batch.push_back(make_payload(o.next() + i, tag, batch_len(tag, i, min_len, max_len)));
      o.begin_append(batch, before);
    } else if (ev == "EA") {
      LiveState s = after(in, &ok);
      o.end_append(ok, s);
    } else if (ev == "BS") {
      o.begin_sync();
    } else if (ev == "ES") {
      LiveState s = after(in, &ok);
      o.end_sync(ok, s);
    } else if (ev == "BR") {
      LiveState before;
      in >> before.segments >> before.second_start;
      o.begin_roll(before);
    } else if (ev == "ER") {
      LiveState s = after(in, &ok);
      o.end_roll(ok, s);
    } else if (ev == "BTB" || ev == "BTA") {
      uint64_t seq;
      in >> seq;
      if (ev == "BTB")
        o.begin_truncate_before(seq);
      else
        o.begin_truncate_after(seq);
    } else if (ev == "ETB") {
      LiveState s = after(in, &ok);
      o.end_truncate_before(ok, s);
    } else if (ev == "ETA") {
      LiveState s = after(in, &ok);
      o.end_truncate_after(ok, s);
    } else if (ev == "EC") {
      after(in, &ok);
      o.end_close(ok);
    } else if (ev == "EO") {
      LiveState s = after(in, &ok);
      if (!ok)
        errors.push_back("the child could not open the log");
      else if (s.first != o.first() || s.next != o.next())
        errors.push_back("the child opened " + line);
    } else if (ev != "BO" && ev != "BC") {
      errors.push_back("unknown report: " + line);
    }
  }
};

}  // namespace alog::test
