// Test helpers: temporary directories, whole-file I/O, tree copies, SHA-256,
// byte poking, and running the CLI.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace alog::test {

// A fresh directory under $TMPDIR, removed (recursively) on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& data);
bool file_exists(const std::string& path);
uint64_t file_size(const std::string& path);
// Sorted names in a directory (no "." or "..").
std::vector<std::string> list_dir(const std::string& dir);
// Copies a directory tree (files and subdirectories); destination is created.
void copy_tree(const std::string& from, const std::string& to);
void remove_tree(const std::string& path);
// Every regular file under a directory, by relative path, with its bytes.
std::map<std::string, std::string> snapshot_tree(const std::string& dir);

// Byte helpers for damage.
void flip_bit(const std::string& path, uint64_t offset, int bit);
void set_byte(const std::string& path, uint64_t offset, uint8_t value);
void truncate_file(const std::string& path, uint64_t size);

std::string sha256_hex(const std::string& data);
std::string hex(const std::string& data);
std::string unhex(const std::string& hex);

// Runs a command line through /bin/sh; captures stdout and stderr separately.
struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
RunResult run(const std::string& command, const std::string& stdin_data = {});
// Path of the built alog binary, shell-quoted.
std::string alog_cli();
// Single-quotes a string for /bin/sh.
std::string shq(const std::string& s);

}  // namespace alog::test
