// Cursor files (cursor.h): one JSON object on one line,
// {"seq":N,"crc":"0x%08x"}.
#include "cursor.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cli.h"

namespace alog::cli {

std::optional<Cursor> read_cursor(const std::string& file) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    fail("io", file, std::nullopt, std::string("open: ") + std::strerror(errno));
  }
  char buf[256];
  ssize_t n = ::read(fd, buf, sizeof buf);
  int e = errno;
  ::close(fd);
  if (n < 0) fail("io", file, std::nullopt, std::string("read: ") + std::strerror(e));
  auto bad = [&] { fail("bad_input", file, std::nullopt, "not a cursor file ({\"seq\":N,\"crc\":\"0x...\"})"); };
  if (size_t(n) == sizeof buf) bad();
  Json j = Json::parse(buf, buf + n, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("seq") || !j["seq"].is_number_unsigned() || !j.contains("crc") ||
      !j["crc"].is_string())
    bad();
  std::string crc = j["crc"].get<std::string>();
  if (crc.size() != 10 || crc.rfind("0x", 0) != 0) bad();
  Cursor c;
  c.seq = j["seq"].get<uint64_t>();
  for (size_t i = 2; i < crc.size(); i++) {
    char ch = crc[i];
    int v = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
    if (v < 0) bad();
    c.crc = c.crc << 4 | uint32_t(v);
  }
  return c;
}

void write_cursor(const std::string& file, const Cursor& c) {
  Json j;
  j["seq"] = c.seq;
  j["crc"] = hex32(c.crc);
  std::string text = j.dump() + "\n";
  std::string tmp = file + ".tmp";
  auto io = [&](const char* what) {
    int e = errno;
    (void)::unlink(tmp.c_str());
    fail("io", file, std::nullopt, std::string(what) + ": " + std::strerror(e));
  };
  (void)::unlink(tmp.c_str());  // a leftover of a crash; O_EXCL then refuses a planted one
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) io("create");
  bool ok = ::write(fd, text.data(), text.size()) == ssize_t(text.size()) && ::fsync(fd) == 0;
  if (!ok) {
    ::close(fd);
    io("write");
  }
  ::close(fd);
  if (::rename(tmp.c_str(), file.c_str()) != 0) io("rename");
  int dfd = ::open(dir_name(file).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace alog::cli
