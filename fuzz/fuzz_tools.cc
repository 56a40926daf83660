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
//  * no command changes, adds or removes a byte in the directory, or
//    outside it.
//
// Hostile shapes: a file whose bytes are "@fifo" is made a FIFO, and one
// whose bytes are "@link:NAME" a symbolic link to NAME in the directory, or,
// for "@link:../NAME", to a file outside it (`target`, a copy of the first
// segment of the archive, or a name that does not exist). Every command must
// end (no wait on a FIFO) and leave them as they were.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
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
std::string g_out;   // beside it: what links point to outside the log

void fail_if(bool bad, const std::string& what) {
  if (bad) alog::fuzz::violated(what);
}

std::vector<std::string> names();

void remove_dir() {
  if (g_dir.empty()) return;
  for (const auto& n : names()) ::unlink((g_dir + "/" + n).c_str());
  ::unlink((g_out + "/target").c_str());
  ::rmdir(g_out.c_str());
  ::rmdir(g_dir.c_str());
  ::rmdir(g_dir.substr(0, g_dir.size() - 4).c_str());
}

void init() {
  const char* base = std::getenv("TMPDIR");
  std::string root = (base && *base) ? base : (::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
  std::string tmpl = root + "/alog-fuzz-tools-XXXXXX";
  fail_if(!::mkdtemp(tmpl.data()), "mkdtemp failed in " + root);
  g_dir = tmpl + "/log";
  g_out = tmpl + "/outside";
  fail_if(::mkdir(g_dir.c_str(), 0755) != 0, "mkdir " + g_dir);
  fail_if(::mkdir(g_out.c_str(), 0755) != 0, "mkdir " + g_out);
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

// What a name is: a FIFO or a link as such (never opened), a file's bytes.
std::string shape(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return "<absent>";
  if (S_ISFIFO(st.st_mode)) return "<fifo>";
  if (S_ISLNK(st.st_mode)) {
    char buf[4096];
    ssize_t n = ::readlink(path.c_str(), buf, sizeof buf);
    return "<link to " + std::string(buf, n > 0 ? size_t(n) : 0) + ">";
  }
  return read_all(path);
}

std::map<std::string, std::string> snapshot() {
  std::map<std::string, std::string> m;
  for (const auto& n : names()) m[n] = shape(g_dir + "/" + n);
  m["../outside/target"] = shape(g_out + "/target");
  return m;
}

// Writes one file of the archive, or the hostile shape it asks for.
void make(const std::string& p, const std::string& bytes) {
  if (bytes == "@fifo") {
    fail_if(::mkfifo(p.c_str(), 0644) != 0, "mkfifo " + p);
    return;
  }
  // A target symlink(2) cannot hold (empty, a NUL in it, PATH_MAX or more)
  // leaves the bytes a plain file: the input's shape, not a harness failure.
  if (bytes.rfind("@link:", 0) == 0 && bytes.size() > 6 && bytes.find('\0') == std::string::npos &&
      bytes.size() - 6 < PATH_MAX - 11) {
    std::string to = bytes.substr(6);
    if (to.rfind("../", 0) == 0) to = "../outside/" + to.substr(3);
    fail_if(::symlink(to.c_str(), p.c_str()) != 0, "symlink " + p);
    return;
  }
  int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  fail_if(fd < 0, "create " + p);
  fail_if(::write(fd, bytes.data(), bytes.size()) != ssize_t(bytes.size()), "write " + p);
  ::close(fd);
}

// alog ARGS..., with what it prints captured (the holder's OutputCapture,
// not a redirected descriptor 2: a sanitizer's or libFuzzer's report of a
// crash inside a command must reach the real standard error); returns the
// exit status.
int run(std::vector<std::string> args) {
  args.insert(args.begin(), "alog");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string err;
  int exit;
  {
    alog::cli::OutputCapture capture;
    exit = alog::cli::alog_main(int(args.size()), argv.data());
    err = std::move(capture.err);
  }
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
  const auto files = alog::fuzz::split_archive(data + 1, size - 1);
  ::unlink((g_out + "/target").c_str());
  for (const auto& f : files)
    if (f.bytes.rfind("ALOG", 0) == 0) {  // outside, a copy of a segment
      make(g_out + "/target", f.bytes);
      break;
    }
  for (const auto& f : files) {
    std::string p = g_dir + "/" + f.name;
    struct stat st {};
    if (::lstat(p.c_str(), &st) == 0) fail_if(::unlink(p.c_str()) != 0, "unlink " + p);  // a name twice: the last
    make(p, f.bytes);
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
