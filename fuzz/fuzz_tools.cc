// Fuzz target: the alog commands that only read (dump-frames, verify, stats,
// seek, cat), in-process through alog_main, over an arbitrary directory image
// (the archive of fuzz_input.h, byte 0 picking the commands) written to a
// real temporary directory.
//
// Beyond "no crash, leak, undefined behaviour or OOM", it checks what
// man/alog.1 promises a script author:
//  * every command exits 0, 4 or 8 (never a usage error, 16, for arguments
//    that are valid; never an uncaught exception);
//  * everything on standard error is lines beginning "alog: ", and none is
//    an "internal error" (an exception the commands did not expect);
//  * no command changes, adds or removes a byte in the directory.
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "cli.h"
#include "fuzz_input.h"

namespace {

std::string g_dir;   // the log directory
int g_err_fd = -1;   // a memfd that stands in for standard error during a command

void fail_if(bool bad, const std::string& what) {
  if (bad) alog::fuzz::violated(what);
}

std::vector<std::string> names();

void remove_dir() {
  if (g_dir.empty()) return;
  for (const auto& n : names()) ::unlink((g_dir + "/" + n).c_str());
  ::rmdir(g_dir.c_str());
  ::rmdir(g_dir.substr(0, g_dir.size() - 4).c_str());
}

void init() {
  const char* base = std::getenv("TMPDIR");
  std::string root = (base && *base) ? base : (::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
  std::string tmpl = root + "/alog-fuzz-tools-XXXXXX";
  fail_if(!::mkdtemp(tmpl.data()), "mkdtemp failed in " + root);
  g_dir = tmpl + "/log";
  fail_if(::mkdir(g_dir.c_str(), 0755) != 0, "mkdir " + g_dir);
  // Records and reports go nowhere; standard error is captured per command.
  int null = ::open("/dev/null", O_WRONLY);
  fail_if(null < 0 || ::dup2(null, 1) < 0, "cannot send standard output to /dev/null");
  ::close(null);
  g_err_fd = ::memfd_create("alog-fuzz-stderr", 0);
  fail_if(g_err_fd < 0, "memfd_create failed");
  std::atexit(remove_dir);
}

std::string read_all(const std::string& path) {
  std::string out;
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return "<unreadable>";
  char buf[8192];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, size_t(n));
  ::close(fd);
  return out;
}

std::vector<std::string> names() {
  std::vector<std::string> v;
  DIR* d = ::opendir(g_dir.c_str());
  fail_if(!d, "opendir " + g_dir);
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") v.push_back(n);
  }
  ::closedir(d);
  return v;
}

std::map<std::string, std::string> snapshot() {
  std::map<std::string, std::string> m;
  for (const auto& n : names()) m[n] = read_all(g_dir + "/" + n);
  return m;
}

// alog ARGS..., with standard error captured; returns the exit status.
int run(std::vector<std::string> args) {
  args.insert(args.begin(), "alog");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stderr);
  int saved = ::dup(2);
  fail_if(saved < 0 || ::ftruncate(g_err_fd, 0) != 0 || ::lseek(g_err_fd, 0, SEEK_SET) != 0 ||
              ::dup2(g_err_fd, 2) < 0,
          "cannot capture standard error");
  int exit = alog::cli::alog_main(int(args.size()), argv.data());
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  std::string err;
  char buf[4096];
  ssize_t n;
  ::lseek(g_err_fd, 0, SEEK_SET);
  while ((n = ::read(g_err_fd, buf, sizeof buf)) > 0) err.append(buf, size_t(n));
  std::string shown;
  for (size_t i = 1; i < args.size(); i++) shown += " " + args[i];
  fail_if(exit != 0 && exit != 4 && exit != 8,
          "alog" + shown + ": exit status " + std::to_string(exit) + "\n" + err);
  fail_if(err.find("internal error") != std::string::npos, "alog" + shown + ": " + err);
  for (size_t at = 0; at < err.size();) {
    fail_if(err.compare(at, 6, "alog: ") != 0, "alog" + shown + ": a stderr line without \"alog: \":\n" + err);
    size_t nl = err.find('\n', at);
    fail_if(nl == std::string::npos, "alog" + shown + ": stderr does not end with a newline:\n" + err);
    at = nl + 1;
  }
  return exit;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (g_dir.empty()) init();
  if (size < 1) return 0;
  const uint8_t mode = data[0];
  for (const auto& n : names()) fail_if(::unlink((g_dir + "/" + n).c_str()) != 0, "unlink " + n);
  std::vector<std::string> segments;
  for (const auto& f : alog::fuzz::split_archive(data + 1, size - 1)) {
    std::string p = g_dir + "/" + f.name;
    int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    fail_if(fd < 0, "create " + p);
    fail_if(::write(fd, f.bytes.data(), f.bytes.size()) != ssize_t(f.bytes.size()), "write " + p);
    ::close(fd);
    if (f.name.size() == 24 && f.name.compare(20, 4, ".seg") == 0) segments.push_back(p);
  }
  const auto before = snapshot();
  const std::string seq = std::to_string(mode);

  run({"--json", "dump-frames", "--stale", "--payload=hex", g_dir});
  run({"verify", g_dir});
  if (mode & 1) run({"dump-frames", "--payload=utf8", g_dir});
  if (mode & 2) run({"--json", "verify", "--headers-only", g_dir});
  if (mode & 4) run({"--json", "stats", g_dir});
  if (mode & 8) run({"seek", "--payload=base64", g_dir, seq});
  if (mode & 16) run({"--json", "cat", "--payload=utf8", g_dir});
  if (mode & 32) run({"cat", "--seq", "--last", "3", g_dir});
  if ((mode & 64) && !segments.empty()) {
    const std::string& s = segments[mode % segments.size()];
    run({"dump-frames", "--stale", s});
    run({"--json", "cat", s});
    run({"--json", "seek", s, seq});
  }
  fail_if(snapshot() != before, "a read-only command changed the directory");
  return 0;
}
