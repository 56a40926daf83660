// The real Fs refuses links and special files at the last component: the
// seam every open of the library and the tools goes through.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "alog/fs.h"
#include "support/util.h"

using namespace alog;
using namespace alog::test;
namespace fs = std::filesystem;

TEST_CASE("posix fs refuses a symbolic link in every open mode and never touches its target") {
  TempDir t;
  write_file(t / "target", "precious");
  fs::create_symlink(t / "target", t / "link");
  for (OpenMode m : {OpenMode::read, OpenMode::read_write, OpenMode::create_excl}) {
    auto f = posix_fs().open(t / "link", m);
    REQUIRE_FALSE(f.is_ok());
    CHECK((f.status().code() == Errc::not_a_log || f.status().sys_errno() == EEXIST));
  }
  CHECK(posix_fs().open(t / "link", OpenMode::read).status().message().find("symbolic link") !=
        std::string::npos);
  // create_trunc replaces the link itself.
  auto f = posix_fs().open(t / "link", OpenMode::create_trunc);
  REQUIRE(f.is_ok());
  REQUIRE((*f)->pwrite("new", 3, 0).is_ok());
  CHECK(read_file(t / "target") == "precious");
  CHECK_FALSE(fs::is_symlink(t / "link"));
}

TEST_CASE("posix fs opens a FIFO in no mode and does not wait for a writer") {
  TempDir t;
  REQUIRE(::mkfifo((t / "fifo").c_str(), 0644) == 0);
  for (OpenMode m : {OpenMode::read, OpenMode::read_write}) {
    auto f = posix_fs().open(t / "fifo", m);
    REQUIRE_FALSE(f.is_ok());
    CHECK(f.status().code() == Errc::not_a_log);
    CHECK(f.status().message().find("FIFO") != std::string::npos);
  }
  CHECK_FALSE(posix_fs().lock(t / "fifo").is_ok());
}

TEST_CASE("posix fs writes no file that another name shares, and replaces one on create_trunc") {
  TempDir t;
  write_file(t / "outside", "precious");
  fs::create_hard_link(t / "outside", t / "inside");
  CHECK(posix_fs().open(t / "inside", OpenMode::read).is_ok());
  auto rw = posix_fs().open(t / "inside", OpenMode::read_write);
  REQUIRE_FALSE(rw.is_ok());
  CHECK(rw.status().message().find("2 hard links") != std::string::npos);
  CHECK_FALSE(posix_fs().lock(t / "inside").is_ok());
  auto f = posix_fs().open(t / "inside", OpenMode::create_trunc);
  REQUIRE(f.is_ok());
  CHECK(read_file(t / "outside") == "precious");
  CHECK(fs::hard_link_count(t / "outside") == 1);
}

TEST_CASE("posix fs mkdir refuses a link where the directory should be, and stat says it is one") {
  TempDir t;
  fs::create_directory(t / "real");
  fs::create_symlink(t / "real", t / "lf");
  CHECK(posix_fs().mkdir(t / "real").is_ok());
  CHECK(posix_fs().mkdir(t / "lf").code() == Errc::not_a_log);
  auto st = posix_fs().stat(t / "lf");
  REQUIRE(st.is_ok());
  CHECK(st->is_symlink);
  CHECK(st->is_dir);
  fs::create_symlink(t / "gone", t / "dangling");
  auto d = posix_fs().stat(t / "dangling");
  REQUIRE(d.is_ok());
  CHECK(d->is_symlink);
  CHECK_FALSE(d->exists);
}
