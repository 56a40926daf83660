// The test file system itself: POSIX semantics, locks, the durability model,
// every fault kind, and crash states (tearing, directory reverts, determinism).
#include <doctest/doctest.h>

#include <cerrno>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "support/mem_fs.h"

namespace {

using alog::Errc;
using alog::File;
using alog::OpenMode;
using alog::Status;
using alog::test::CrashMode;
using alog::test::CrashWeights;
using alog::test::FaultKind;
using alog::test::FaultRule;
using alog::test::MemFs;
using alog::test::Op;

constexpr const char* kDir = "/db";

std::string at(const char* name) { return std::string(kDir) + "/" + name; }

void make_root(MemFs& fs) { REQUIRE(fs.mkdir(kDir).is_ok()); }

std::unique_ptr<File> open_file(MemFs& fs, const std::string& path,
                                OpenMode mode = OpenMode::create_trunc) {
  auto r = fs.open(path, mode);
  REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  return std::move(r).value();
}

void put(File& f, uint64_t off, const std::string& bytes) {
  Status st = f.pwrite(bytes.data(), bytes.size(), off);
  REQUIRE_MESSAGE(st.is_ok(), st.to_string());
}

std::string get(File& f, uint64_t off, size_t n) {
  std::string buf(n, '\0');
  auto r = f.pread(buf.data(), n, off);
  REQUIRE(r.is_ok());
  buf.resize(*r);
  return buf;
}

void sync(File& f) {
  Status st = f.datasync();
  REQUIRE_MESSAGE(st.is_ok(), st.to_string());
}

// A durable file `name` holding `bytes` (name and data synced).
void durable_file(MemFs& fs, const char* name, const std::string& bytes) {
  REQUIRE(fs.set_contents(at(name), bytes).is_ok());
}

// Every file and directory after a crash, for comparing crash results.
std::vector<std::string> dump(MemFs& fs, const std::string& dir) {
  std::vector<std::string> out;
  auto names = fs.list(dir);
  REQUIRE(names.is_ok());
  for (const auto& n : *names) {
    std::string p = dir + "/" + n;
    auto st = fs.stat(p);
    REQUIRE(st.is_ok());
    if (st->is_dir) {
      out.push_back(p + "/");
      for (auto& s : dump(fs, p)) out.push_back(s);
    } else {
      out.push_back(p + "=" + fs.read_all(p).value());
    }
  }
  return out;
}

}  // namespace

// ---- POSIX semantics ---------------------------------------------------------

TEST_CASE("mem fs: a written file reads back what was written and a read past the end is short") {
  MemFs fs;
  make_root(fs);
  auto f = open_file(fs, at("a"));
  put(*f, 0, "hello world");
  CHECK(get(*f, 0, 5) == "hello");
  CHECK(get(*f, 6, 100) == "world");
  CHECK(get(*f, 11, 10).empty());
  CHECK(get(*f, 1000, 10).empty());
  CHECK(f->size().value() == 11);
  CHECK(f->path() == at("a"));
}

TEST_CASE("mem fs: pwritev writes every buffer in order at the offset") {
  MemFs fs;
  make_root(fs);
  auto f = open_file(fs, at("a"));
  put(*f, 0, "0123456789");
  std::string a = "ab", b, c = "cde";
  struct iovec v[3] = {{a.data(), a.size()}, {b.data(), 0}, {c.data(), c.size()}};
  REQUIRE(f->pwritev(v, 3, 2).is_ok());
  CHECK(fs.read_all(at("a")).value() == "01abcde789");
}

TEST_CASE("mem fs: a write past the end zero-fills the gap") {
  MemFs fs;
  make_root(fs);
  auto f = open_file(fs, at("a"));
  put(*f, 4, "x");
  CHECK(fs.read_all(at("a")).value() == std::string("\0\0\0\0x", 5));
}

TEST_CASE("mem fs: truncate shrinks a file and an extending truncate zero-fills") {
  MemFs fs;
  make_root(fs);
  auto f = open_file(fs, at("a"));
  put(*f, 0, "abcdef");
  REQUIRE(f->truncate(2).is_ok());
  CHECK(fs.read_all(at("a")).value() == "ab");
  REQUIRE(f->truncate(5).is_ok());
  CHECK(fs.read_all(at("a")).value() == std::string("ab\0\0\0", 5));
  CHECK(f->size().value() == 5);
}

TEST_CASE("mem fs: open modes follow posix: read_write needs the file, create_excl refuses one, create_trunc empties it") {
  MemFs fs;
  make_root(fs);
  auto missing = fs.open(at("a"), OpenMode::read_write);
  CHECK(missing.status().sys_errno() == ENOENT);
  CHECK(missing.status().code() == Errc::not_found);
  CHECK(fs.open(at("a"), OpenMode::read).status().sys_errno() == ENOENT);

  auto f = open_file(fs, at("a"), OpenMode::create_excl);
  put(*f, 0, "data");
  CHECK(fs.open(at("a"), OpenMode::create_excl).status().sys_errno() == EEXIST);
  auto rw = open_file(fs, at("a"), OpenMode::read_write);
  CHECK(get(*rw, 0, 10) == "data");
  auto t = open_file(fs, at("a"), OpenMode::create_trunc);
  CHECK(t->size().value() == 0);
  CHECK(get(*f, 0, 10).empty());  // the same inode through the first handle
}

TEST_CASE("mem fs: a file opened read-only refuses writes and truncates with EBADF") {
  MemFs fs;
  make_root(fs);
  durable_file(fs, "a", "abc");
  auto f = open_file(fs, at("a"), OpenMode::read);
  CHECK(f->pwrite("x", 1, 0).sys_errno() == EBADF);
  CHECK(f->truncate(0).sys_errno() == EBADF);
  CHECK(f->datasync().is_ok());
  CHECK(get(*f, 0, 3) == "abc");
}

TEST_CASE("mem fs: path errors carry the posix errno: ENOENT, EEXIST, EISDIR, ENOTDIR, ENOTEMPTY") {
  MemFs fs;
  make_root(fs);
  REQUIRE(fs.mkdir(at("sub")).is_ok());
  durable_file(fs, "f", "x");
  durable_file(fs, "sub/g", "y");

  CHECK(fs.open(at("nodir/x"), OpenMode::create_trunc).status().sys_errno() == ENOENT);
  CHECK(fs.open(at("f/x"), OpenMode::create_trunc).status().sys_errno() == ENOTDIR);
  CHECK(fs.open(at("sub"), OpenMode::read).status().sys_errno() == EISDIR);
  CHECK(fs.open("/elsewhere/x", OpenMode::create_trunc).status().sys_errno() == ENOENT);
  CHECK(fs.mkdir(at("f")).sys_errno() == EEXIST);
  CHECK(fs.mkdir(at("a/b")).sys_errno() == ENOENT);
  CHECK(fs.unlink(at("sub")).sys_errno() == EISDIR);
  CHECK(fs.unlink(at("nope")).sys_errno() == ENOENT);
  CHECK(fs.rename(at("nope"), at("x")).sys_errno() == ENOENT);
  CHECK(fs.rename(at("f"), at("sub")).sys_errno() == EISDIR);
  CHECK(fs.rename(at("sub"), at("f")).sys_errno() == ENOTDIR);
  REQUIRE(fs.mkdir(at("other")).is_ok());
  CHECK(fs.rename(at("other"), at("sub")).sys_errno() == ENOTEMPTY);
  CHECK(fs.rename(at("sub"), at("sub/inner")).sys_errno() == EINVAL);
  CHECK(fs.list(at("f")).status().sys_errno() == ENOTDIR);
  CHECK(fs.list(at("nope")).status().sys_errno() == ENOENT);
  CHECK(fs.sync_dir(at("nope")).sys_errno() == ENOENT);
  CHECK(fs.sync_dir(at("f")).sys_errno() == ENOTDIR);
}

TEST_CASE("mem fs: rename over an existing file replaces it and the replaced file stays readable through an open handle") {
  MemFs fs;
  make_root(fs);
  durable_file(fs, "old", "old bytes");
  durable_file(fs, "new", "new bytes");
  auto held = open_file(fs, at("old"), OpenMode::read);
  REQUIRE(fs.rename(at("new"), at("old")).is_ok());
  CHECK(fs.read_all(at("old")).value() == "new bytes");
  CHECK_FALSE(fs.exists(at("new")));
  CHECK(get(*held, 0, 100) == "old bytes");
  CHECK(fs.list(kDir).value() == std::vector<std::string>{"old"});
  CHECK(fs.rename(at("old"), at("old")).is_ok());
  CHECK(fs.read_all(at("old")).value() == "new bytes");
}

TEST_CASE("mem fs: an open file keeps working after it is renamed or unlinked") {
  MemFs fs;
  make_root(fs);
  auto f = open_file(fs, at("a"));
  put(*f, 0, "one");
  REQUIRE(fs.rename(at("a"), at("b")).is_ok());
  put(*f, 3, "two");
  CHECK(fs.read_all(at("b")).value() == "onetwo");
  REQUIRE(fs.unlink(at("b")).is_ok());
  CHECK_FALSE(fs.exists(at("b")));
  put(*f, 6, "three");
  sync(*f);
  CHECK(get(*f, 0, 100) == "onetwothree");
  CHECK(fs.read_all(at("b")).status().sys_errno() == ENOENT);
}

TEST_CASE("mem fs: list names a directory's entries and stat describes files and directories") {
  MemFs fs;
  make_root(fs);
  REQUIRE(fs.mkdir(at("sub")).is_ok());
  REQUIRE(fs.mkdir(at("sub")).is_ok());  // an existing directory is fine
  durable_file(fs, "b", "12345");
  durable_file(fs, "a", "");
  CHECK(fs.list(kDir).value() == std::vector<std::string>{"a", "b", "sub"});
  CHECK(fs.list(at("sub")).value().empty());
  auto s = fs.stat(at("b")).value();
  CHECK(s.exists);
  CHECK(s.is_regular);
  CHECK_FALSE(s.is_dir);
  CHECK(s.size == 5);
  auto d = fs.stat(at("sub")).value();
  CHECK(d.exists);
  CHECK(d.is_dir);
  CHECK_FALSE(fs.stat(at("none")).value().exists);
  CHECK_FALSE(fs.stat(at("b/under_a_file")).value().exists);
  CHECK(fs.stat(kDir).value().is_dir);
  CHECK(fs.list("/db//").is_ok());  // repeated and trailing slashes are ignored
}

TEST_CASE("mem fs: a second lock of the same path is refused until the first is dropped") {
  MemFs fs;
  make_root(fs);
  auto first = fs.lock(at("LOCK"));
  REQUIRE(first.is_ok());
  CHECK(fs.exists(at("LOCK")));
  auto second = fs.lock(at("LOCK"));
  CHECK(second.status().code() == Errc::locked);
  CHECK(fs.lock(at("OTHER")).is_ok());
  first.value().reset();
  CHECK(fs.lock(at("LOCK")).is_ok());
}

TEST_CASE("mem fs: is_locked reports a held lock without creating the file") {
  MemFs fs;
  make_root(fs);
  CHECK_FALSE(fs.is_locked(at("LOCK")));
  CHECK_FALSE(fs.exists(at("LOCK")));
  {
    auto l = fs.lock(at("LOCK"));
    REQUIRE(l.is_ok());
    CHECK(fs.is_locked(at("LOCK")));
  }
  CHECK_FALSE(fs.is_locked(at("LOCK")));
}

// ---- Durability model -------------------------------------------------------

TEST_CASE("mem fs: a write is pending until datasync makes it durable") {
  MemFs fs;
  make_root(fs);
  durable_file(fs, "a", "");
  auto f = open_file(fs, at("a"), OpenMode::read_write);
  put(*f, 0, "abc");
  CHECK(fs.current_image(at("a")) == "abc");
  CHECK(fs.durable_image(at("a")) == "");
  CHECK(fs.pending_ops(at("a")) == 1);
  sync(*f);
  CHECK(fs.durable_image(at("a")) == "abc");
  CHECK(fs.pending_ops(at("a")) == 0);
}

TEST_CASE("mem fs: an unsynced write is lost by a drop-all crash") {
  MemFs fs;
  make_root(fs);
  durable_file(fs, "a", "base");
  auto f = open_file(fs, at("a"), OpenMode::read_write);
  put(*f, 4, "-tail");
  REQUIRE(f->truncate(2).is_ok());
  fs.crash(1, CrashMode::drop_all);
  CHECK(fs.read_all(at("a")).value() == "base");
}

TEST_CASE("mem fs: a keep-all crash keeps every unsynced write and directory change") {
  MemFs fs;
  make_root(fs);
  durable_file(fs, "a", "base");
  auto f = open_file(fs, at("a"), OpenMode::read_write);
  put(*f, 4, "-tail");
  auto g = open_file(fs, at("new"));
  put(*g, 0, "fresh");
  REQUIRE(fs.rename(at("new"), at("renamed")).is_ok());
  auto rep = fs.crash(1, CrashMode::keep_all);
  CHECK(rep.writes_kept == 2);
  CHECK(rep.dir_changes_reverted == 0);
  CHECK(fs.read_all(at("a")).value() == "base-tail");
  CHECK(fs.read_all(at("renamed")).value() == "fresh");
  CHECK_FALSE(fs.exists(at("new")));
}

TEST_CASE("mem fs: a synced write survives every crash mode") {
  MemFs fs;
  make_root(fs);
  auto f = open_file(fs, at("a"));
  put(*f, 0, std::string(3000, 's'));
  sync(*f);
  REQUIRE(fs.sync_dir(kDir).is_ok());
  auto snap = fs.snapshot();
  for (CrashMode m : {CrashMode::keep_all, CrashMode::drop_all, CrashMode::random}) {
    for (uint64_t seed = 0; seed < 20; ++seed) {
      fs.restore(snap);
      fs.crash(seed, m);
      CHECK(fs.read_all(at("a")).value() == std::string(3000, 's'));
    }
  }
}

TEST_CASE("mem fs: a created file whose directory is not synced disappears in a drop-all crash") {
  MemFs fs;
  make_root(fs);
  auto f = open_file(fs, at("a"));
  put(*f, 0, "data");
  sync(*f);
  CHECK(fs.durable_image(at("a")) == std::nullopt);  // the name is not durable yet
  auto snap = fs.snapshot();
  fs.crash(0, CrashMode::drop_all);
  CHECK_FALSE(fs.exists(at("a")));

  fs.restore(snap);
  REQUIRE(fs.sync_dir(kDir).is_ok());
  CHECK(fs.durable_image(at("a")) == "data");
  fs.crash(0, CrashMode::drop_all);
  CHECK(fs.read_all(at("a")).value() == "data");
}

TEST_CASE("mem fs: a rename is reverted by a drop-all crash unless the directory was synced") {
  MemFs fs;
  make_root(fs);
  durable_file(fs, "x.tmp", "payload");
  durable_file(fs, "x", "previous");
  REQUIRE(fs.rename(at("x.tmp"), at("x")).is_ok());
  CHECK(fs.durable_list(kDir) == std::vector<std::string>{"x", "x.tmp"});
  CHECK(fs.durable_image(at("x")) == "previous");
  auto snap = fs.snapshot();
  fs.crash(0, CrashMode::drop_all);
  CHECK(fs.read_all(at("x")).value() == "previous");
  CHECK(fs.read_all(at("x.tmp")).value() == "payload");

  fs.restore(snap);
  REQUIRE(fs.sync_dir(kDir).is_ok());
  fs.crash(0, CrashMode::drop_all);
  CHECK(fs.read_all(at("x")).value() == "payload");
  CHECK_FALSE(fs.exists(at("x.tmp")));
}

TEST_CASE("mem fs: an unlink is reverted by a drop-all crash unless the directory was synced") {
  MemFs fs;
  make_root(fs);
  durable_file(fs, "gone", "still here");
  REQUIRE(fs.unlink(at("gone")).is_ok());
  CHECK(fs.durably_exists(at("gone")));
  auto snap = fs.snapshot();
  fs.crash(0, CrashMode::drop_all);
  CHECK(fs.read_all(at("gone")).value() == "still here");

  fs.restore(snap);
  REQUIRE(fs.sync_dir(kDir).is_ok());
  fs.crash(0, CrashMode::drop_all);
  CHECK_FALSE(fs.exists(at("gone")));
}

TEST_CASE("mem fs: a rename between directories needs both directories synced") {
  MemFs fs;
  make_root(fs);
  REQUIRE(fs.mkdir(at("lost+found")).is_ok());
  REQUIRE(fs.sync_dir(kDir).is_ok());
  durable_file(fs, "seg", "bytes");
  REQUIRE(fs.rename(at("seg"), at("lost+found/seg")).is_ok());
  REQUIRE(fs.sync_dir(at("lost+found")).is_ok());
  auto snap = fs.snapshot();
  fs.crash(0, CrashMode::drop_all);  // the removal from /db was not synced
  CHECK(fs.read_all(at("seg")).value() == "bytes");
  CHECK(fs.read_all(at("lost+found/seg")).value() == "bytes");

  fs.restore(snap);
  REQUIRE(fs.sync_dir(kDir).is_ok());
  fs.crash(0, CrashMode::drop_all);
  CHECK_FALSE(fs.exists(at("seg")));
  CHECK(fs.read_all(at("lost+found/seg")).value() == "bytes");
}

TEST_CASE("mem fs: a directory created without syncing its parent is lost with its files in a drop-all crash") {
  MemFs fs;
  make_root(fs);
  REQUIRE(fs.mkdir(at("sub")).is_ok());
  auto f = open_file(fs, at("sub/f"));
  put(*f, 0, "x");
  sync(*f);
  REQUIRE(fs.sync_dir(at("sub")).is_ok());
  CHECK(fs.pending_dir_changes(kDir) == 1);
  fs.crash(0, CrashMode::drop_all);
  CHECK_FALSE(fs.exists(at("sub")));
  CHECK(fs.list(kDir).value().empty());
}

TEST_CASE("mem fs: an unsynced truncate may be lost by a crash") {
  MemFs fs;
  make_root(fs);
  durable_file(fs, "a", "0123456789");
  auto f = open_file(fs, at("a"), OpenMode::read_write);
  REQUIRE(f->truncate(4).is_ok());
  auto snap = fs.snapshot();
  std::set<std::string> seen;
  for (uint64_t seed = 0; seed < 64; ++seed) {
    fs.restore(snap);
    fs.crash(seed, CrashWeights::format_model());
    seen.insert(fs.read_all(at("a")).value());
  }
  CHECK(seen == std::set<std::string>{"0123", "0123456789"});
  fs.restore(snap);
  fs.crash(0, CrashMode::drop_all);
  CHECK(fs.read_all(at("a")).value() == "0123456789");
}

TEST_CASE("mem fs: a random crash reverts some directory changes and keeps others, each one independently") {
  MemFs fs;
  make_root(fs);
  for (const char* n : {"a", "b", "c", "d"}) open_file(fs, at(n));
  auto snap = fs.snapshot();
  std::set<std::vector<std::string>> outcomes;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    fs.restore(snap);
    fs.crash(seed, CrashMode::random);
    outcomes.insert(fs.list(kDir).value());
  }
  CHECK(outcomes.size() == 16);  // every subset of the four creates
}

TEST_CASE("mem fs: open files and locks are invalid after a crash") {
  MemFs fs;
  make_root(fs);
  auto f = open_file(fs, at("a"));
  put(*f, 0, "abc");
  auto l = fs.lock(at("LOCK"));
  REQUIRE(l.is_ok());
  fs.crash(0, CrashMode::keep_all);
  char c;
  CHECK(f->pread(&c, 1, 0).status().sys_errno() == EIO);
  CHECK(f->pwrite("x", 1, 0).sys_errno() == EIO);
  CHECK(f->truncate(0).sys_errno() == EIO);
  CHECK(f->datasync().sys_errno() == EIO);
  CHECK(f->size().status().sys_errno() == EIO);
  CHECK_FALSE(fs.is_locked(at("LOCK")));  // the crashed process held it
  auto again = fs.lock(at("LOCK"));
  CHECK(again.is_ok());
  l.value().reset();  // dropping a stale lock does not release the new one
  CHECK(fs.is_locked(at("LOCK")));
  auto g = open_file(fs, at("a"), OpenMode::read);
  CHECK(get(*g, 0, 10) == "abc");
}

TEST_CASE("mem fs: set_contents makes a file durable at once") {
  MemFs fs;
  make_root(fs);
  REQUIRE(fs.set_contents(at("a"), "bytes").is_ok());
  CHECK(fs.durable_image(at("a")) == "bytes");
  CHECK(fs.current_image(at("a")) == "bytes");
  fs.crash(7, CrashMode::drop_all);
  CHECK(fs.read_all(at("a")).value() == "bytes");
  CHECK(fs.set_contents(at("missing/a"), "x").sys_errno() == ENOENT);
}

// ---- Faults -----------------------------------------------------------------

TEST_CASE("mem fs: an eio fault fails the nth write and changes nothing") {
  MemFs fs;
  make_root(fs);
  auto f = open_file(fs, at("a"));
  fs.fail(Op::write, 2, FaultKind::eio);
  put(*f, 0, "one");
  Status st = f->pwrite("two", 3, 3);
  CHECK(st.code() == Errc::io);
  CHECK(st.sys_errno() == EIO);
  CHECK(st.path() == at("a"));
  CHECK(fs.read_all(at("a")).value() == "one");
  CHECK(fs.pending_ops(at("a")) == 1);
  put(*f, 3, "two");  // one-shot: the next write works
  CHECK(fs.read_all(at("a")).value() == "onetwo");
  CHECK(fs.faults_injected() == 1);
}

TEST_CASE("mem fs: an enospc fault fails with ENOSPC and changes nothing") {
  MemFs fs;
  make_root(fs);
  auto f = open_file(fs, at("a"));
  fs.fail(Op::write, 1, FaultKind::enospc);
  CHECK(f->pwrite("abc", 3, 0).sys_errno() == ENOSPC);
  CHECK(fs.read_all(at("a")).value().empty());
  fs.fail(Op::truncate, 1, FaultKind::enospc);
  CHECK(f->truncate(100).sys_errno() == ENOSPC);
  CHECK(f->size().value() == 0);
}

TEST_CASE("mem fs: a short write writes half the bytes rounded down to 512 and then fails") {
  MemFs fs;
  make_root(fs);
  auto f = open_file(fs, at("a"));
  fs.fail(Op::write, 1, FaultKind::short_write);
  std::string data(3000, 'w');
  Status st = f->pwrite(data.data(), data.size(), 100);
  CHECK(st.sys_errno() == EIO);
  // half of 3000 is 1500, rounded down to 1024
  CHECK(fs.read_all(at("a")).value() == std::string(100, '\0') + std::string(1024, 'w'));

  fs.fail(Op::write, 1, FaultKind::short_write_enospc);
  CHECK(f->pwrite(data.data(), 2048, 0).sys_errno() == ENOSPC);
  CHECK(fs.read_all(at("a")).value().substr(0, 1024) == std::string(1024, 'w'));
}

TEST_CASE("mem fs: a short write of less than 1024 bytes writes nothing") {
  MemFs fs;
  make_root(fs);
  auto f = open_file(fs, at("a"));
  fs.fail(Op::write, 1, FaultKind::short_write);
  CHECK(f->pwrite("0123456789", 10, 0).sys_errno() == EIO);
  CHECK(f->size().value() == 0);
  CHECK(fs.pending_ops(at("a")) == 0);
}

TEST_CASE("mem fs: a short write can be given an explicit prefix length") {
  MemFs fs;
  make_root(fs);
  auto f = open_file(fs, at("a"));
  FaultRule r;
  r.op = Op::write;
  r.kind = FaultKind::short_write;
  r.short_bytes = 3;
  fs.add_fault(r);
  CHECK(f->pwrite("0123456789", 10, 0).sys_errno() == EIO);
  CHECK(fs.read_all(at("a")).value() == "012");
}

TEST_CASE("mem fs: a sticky fault fails every call from the nth on and a one-shot fault only the nth") {
  MemFs fs;
  make_root(fs);
  auto f = open_file(fs, at("a"));
  fs.fail(Op::write, 3, FaultKind::eio, /*sticky=*/true);
  std::vector<bool> ok;
  for (int i = 0; i < 6; ++i) ok.push_back(f->pwrite("x", 1, static_cast<uint64_t>(i)).is_ok());
  CHECK(ok == std::vector<bool>{true, true, false, false, false, false});
  fs.clear_faults();
  fs.fail(Op::write, 2, FaultKind::eio);
  ok.clear();
  for (int i = 0; i < 4; ++i) ok.push_back(f->pwrite("x", 1, static_cast<uint64_t>(i)).is_ok());
  CHECK(ok == std::vector<bool>{true, false, true, true});
}

TEST_CASE("mem fs: a fault rule counts calls from when it is set") {
  MemFs fs;
  make_root(fs);
  auto f = open_file(fs, at("a"));
  for (int i = 0; i < 5; ++i) sync(*f);
  fs.fail(Op::sync, 1, FaultKind::eio);
  CHECK(f->datasync().sys_errno() == EIO);
  CHECK(f->datasync().is_ok());
  CHECK(fs.calls(Op::sync) == 7);
}

TEST_CASE("mem fs: fail_all_from fails every later call of that kind until clear_faults") {
  MemFs fs;
  make_root(fs);
  durable_file(fs, "a", "");
  fs.fail_all_from(Op::open);
  for (int i = 0; i < 3; ++i) CHECK(fs.open(at("a"), OpenMode::read).status().sys_errno() == EIO);
  CHECK(fs.open(at("b"), OpenMode::create_excl).is_ok());  // create is a different kind
  fs.clear_faults();
  CHECK(fs.open(at("a"), OpenMode::read).is_ok());
}

TEST_CASE("mem fs: failed renames, unlinks, opens, creates, mkdirs and locks change nothing") {
  MemFs fs;
  make_root(fs);
  durable_file(fs, "a", "x");
  for (Op op : {Op::rename, Op::unlink, Op::create, Op::mkdir, Op::lock}) fs.fail(op, 1, FaultKind::eio);
  CHECK(fs.rename(at("a"), at("b")).sys_errno() == EIO);
  CHECK(fs.unlink(at("a")).sys_errno() == EIO);
  CHECK(fs.open(at("c"), OpenMode::create_trunc).status().sys_errno() == EIO);
  CHECK(fs.mkdir(at("d")).sys_errno() == EIO);
  CHECK(fs.lock(at("LOCK")).status().sys_errno() == EIO);
  CHECK(fs.list(kDir).value() == std::vector<std::string>{"a"});
  CHECK(fs.pending_dir_changes(kDir) == 0);
}

TEST_CASE("mem fs: a failed directory sync is final: a later sync does not make the changes it covered durable") {
  MemFs fs;
  make_root(fs);
  durable_file(fs, "a", "x");
  REQUIRE(fs.rename(at("a"), at("b")).is_ok());
  fs.fail(Op::sync_dir, 1, FaultKind::eio);
  CHECK(fs.sync_dir(kDir).sys_errno() == EIO);
  CHECK(fs.list(kDir).value() == std::vector<std::string>{"b"});  // still reads back
  CHECK(fs.durable_list(kDir) == std::vector<std::string>{"a"});
  REQUIRE(fs.sync_dir(kDir).is_ok());
  CHECK(fs.durable_list(kDir) == std::vector<std::string>{"a"});
  CHECK(fs.pending_dir_changes(kDir) == 1);
  // A crash may keep the rename or revert it, whatever the later sync did.
  auto snap = fs.snapshot();
  std::set<std::vector<std::string>> seen;
  for (uint64_t seed = 0; seed < 32; seed++) {
    fs.restore(snap);
    fs.crash(seed, CrashMode::random);
    seen.insert(fs.list(kDir).value());
  }
  CHECK(seen == std::set<std::vector<std::string>>{{"a"}, {"b"}});
}

TEST_CASE("mem fs: a change made after a failed directory sync is settled by the next sync, over the undetermined one") {
  MemFs fs;
  make_root(fs);
  durable_file(fs, "keep", "k");
  open_file(fs, at("new"));  // a create, then a failed sync
  fs.fail(Op::sync_dir, 1, FaultKind::eio);
  CHECK(fs.sync_dir(kDir).sys_errno() == EIO);
  // Renaming the name away and back is a new change of it.
  REQUIRE(fs.rename(at("new"), at("new.tmp")).is_ok());
  REQUIRE(fs.rename(at("new.tmp"), at("new")).is_ok());
  REQUIRE(fs.sync_dir(kDir).is_ok());
  CHECK(fs.durable_list(kDir) == std::vector<std::string>{"keep", "new"});
  auto snap = fs.snapshot();
  for (CrashMode m : {CrashMode::drop_all, CrashMode::keep_all, CrashMode::random}) {
    for (uint64_t seed = 0; seed < 8; seed++) {
      fs.restore(snap);
      fs.crash(seed, m);
      CHECK(fs.list(kDir).value() == std::vector<std::string>{"keep", "new"});
    }
  }
}

TEST_CASE("mem fs: a read fault fails the read with EIO") {
  MemFs fs;
  make_root(fs);
  durable_file(fs, "a", "abc");
  auto f = open_file(fs, at("a"), OpenMode::read);
  fs.fail(Op::read, 1, FaultKind::eio);
  char buf[3];
  CHECK(f->pread(buf, 3, 0).status().sys_errno() == EIO);
  CHECK(get(*f, 0, 3) == "abc");
}

TEST_CASE("mem fs: a path filter limits a fault to matching paths") {
  MemFs fs;
  make_root(fs);
  auto seg = open_file(fs, at("1.seg"));
  auto other = open_file(fs, at("alog.json"));
  FaultRule r;
  r.op = Op::write;
  r.sticky = true;
  r.path_contains = ".seg";
  fs.add_fault(r);
  CHECK(other->pwrite("{}", 2, 0).is_ok());
  CHECK(seg->pwrite("x", 1, 0).sys_errno() == EIO);
}

TEST_CASE("mem fs: a failed eio sync is final: the writes it covered stay undetermined after a later sync") {
  MemFs fs;
  make_root(fs);
  durable_file(fs, "a", "");
  auto f = open_file(fs, at("a"), OpenMode::read_write);
  put(*f, 0, "abc");
  fs.fail(Op::sync, 1, FaultKind::eio);
  CHECK(f->datasync().sys_errno() == EIO);
  CHECK(fs.durable_image(at("a")) == "");
  CHECK(fs.pending_ops(at("a")) == 1);
  sync(*f);
  CHECK(fs.durable_image(at("a")) == "");
  CHECK(fs.pending_ops(at("a")) == 1);
  CHECK(get(*f, 0, 3) == "abc");
  // A write after the failure is settled by the next sync; the earlier one
  // is still up to the crash.
  put(*f, 3, "d");
  sync(*f);
  CHECK(fs.durable_image(at("a")) == std::string(3, '\0') + "d");
  auto snap = fs.snapshot();
  std::set<std::string> seen;
  for (uint64_t seed = 0; seed < 32; seed++) {
    fs.restore(snap);
    fs.crash(seed, CrashWeights::format_model());
    seen.insert(fs.read_all(at("a")).value());
  }
  CHECK(seen == std::set<std::string>{std::string(3, '\0') + "d", "abcd"});
}

TEST_CASE("mem fs: writing the bytes of a failed sync again and syncing makes them durable") {
  MemFs fs;
  make_root(fs);
  durable_file(fs, "a", "");
  auto f = open_file(fs, at("a"), OpenMode::read_write);
  put(*f, 0, "abc");
  fs.fail(Op::sync, 1, FaultKind::enospc);
  CHECK(f->datasync().sys_errno() == ENOSPC);
  put(*f, 0, get(*f, 0, 3));
  sync(*f);
  CHECK(fs.durable_image(at("a")) == "abc");
  auto snap = fs.snapshot();
  for (uint64_t seed = 0; seed < 16; seed++) {
    fs.restore(snap);
    fs.crash(seed, CrashWeights::format_model());
    CHECK(fs.read_all(at("a")).value() == "abc");
  }
}

TEST_CASE("mem fs: a sync_lose failure drops the pending writes from the durable image") {
  MemFs fs;
  make_root(fs);
  durable_file(fs, "a", "base");
  auto f = open_file(fs, at("a"), OpenMode::read_write);
  put(*f, 4, "-lost");
  fs.fail(Op::sync, 1, FaultKind::sync_lose);
  Status st = f->datasync();
  CHECK(st.code() == Errc::io);
  CHECK(st.sys_errno() == EIO);
  CHECK(fs.pending_ops(at("a")) == 0);
  CHECK(fs.durable_image(at("a")) == "base");
  auto snap = fs.snapshot();
  for (CrashMode m : {CrashMode::keep_all, CrashMode::random}) {
    fs.restore(snap);
    fs.crash(3, m);
    CHECK(fs.read_all(at("a")).value() == "base");
  }
}

TEST_CASE("mem fs: writes lost by sync_lose still read back until a crash") {
  MemFs fs;
  make_root(fs);
  durable_file(fs, "a", "base");
  auto f = open_file(fs, at("a"), OpenMode::read_write);
  put(*f, 4, "-lost");
  fs.fail(Op::sync, 1, FaultKind::sync_lose);
  CHECK_FALSE(f->datasync().is_ok());
  CHECK(get(*f, 0, 100) == "base-lost");
  CHECK(fs.read_all(at("a")).value() == "base-lost");
  fs.crash(0, CrashMode::keep_all);
  CHECK(fs.read_all(at("a")).value() == "base");
}

TEST_CASE("mem fs: the sync after a sync_lose succeeds without making the lost writes durable") {
  MemFs fs;
  make_root(fs);
  durable_file(fs, "a", "base");
  auto f = open_file(fs, at("a"), OpenMode::read_write);
  put(*f, 4, "-lost");
  fs.fail(Op::sync, 1, FaultKind::sync_lose);
  CHECK_FALSE(f->datasync().is_ok());
  sync(*f);
  CHECK(fs.durable_image(at("a")) == "base");
  put(*f, 9, "+kept");
  sync(*f);
  // The later write is durable; the gap it leaves over the lost bytes is a hole.
  CHECK(fs.durable_image(at("a")) == std::string("base") + std::string(5, '\0') + "+kept");
  fs.crash(0, CrashMode::drop_all);
  CHECK(fs.read_all(at("a")).value() == std::string("base") + std::string(5, '\0') + "+kept");
}

TEST_CASE("mem fs: calls counts datasyncs and other operations, failed ones included") {
  MemFs fs;
  make_root(fs);
  auto f = open_file(fs, at("a"));
  put(*f, 0, "a");
  put(*f, 1, "b");
  sync(*f);
  fs.fail(Op::sync, 1, FaultKind::eio);
  CHECK_FALSE(f->datasync().is_ok());
  REQUIRE(fs.sync_dir(kDir).is_ok());
  CHECK(fs.calls(Op::sync) == 2);
  CHECK(fs.calls(Op::write) == 2);
  CHECK(fs.calls(Op::create) == 1);
  CHECK(fs.calls(Op::open) == 0);
  CHECK(fs.calls(Op::sync_dir) == 1);
  CHECK(fs.calls(Op::mkdir) == 1);
  fs.reset_calls();
  CHECK(fs.calls(Op::sync) == 0);
}

TEST_CASE("mem fs: power_off fails every later call and the crash may keep part of the interrupted write") {
  MemFs fs;
  make_root(fs);
  durable_file(fs, "a", std::string(2048, 'a'));
  auto f = open_file(fs, at("a"), OpenMode::read_write);
  fs.fail(Op::write, 1, FaultKind::power_off);
  std::string b(2048, 'b');
  CHECK(f->pwrite(b.data(), b.size(), 0).sys_errno() == EIO);
  CHECK(fs.powered_off());
  CHECK(f->datasync().sys_errno() == EIO);
  CHECK(fs.open(at("a"), OpenMode::read).status().sys_errno() == EIO);
  CHECK(fs.sync_dir(kDir).sys_errno() == EIO);
  auto snap = fs.snapshot();
  fs.crash(0, CrashMode::keep_all);
  CHECK_FALSE(fs.powered_off());
  CHECK(fs.read_all(at("a")).value() == b);
  fs.restore(snap);
  fs.crash(0, CrashMode::drop_all);
  CHECK(fs.read_all(at("a")).value() == std::string(2048, 'a'));
}

// ---- Crash states -----------------------------------------------------------

TEST_CASE("mem fs: a torn write keeps only whole 512-byte sectors aligned to file offsets") {
  MemFs fs;
  make_root(fs);
  durable_file(fs, "a", std::string(8192, 'A'));
  auto f = open_file(fs, at("a"), OpenMode::read_write);
  const uint64_t off = 100, len = 4000;
  put(*f, off, std::string(len, 'B'));
  auto snap = fs.snapshot();
  CrashWeights torn_only{0, 0, 1, 0, 0, 50, 50};
  bool saw_mixed = false;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    fs.restore(snap);
    auto rep = fs.crash(seed, torn_only);
    REQUIRE(rep.writes_torn == 1);
    std::string img = fs.read_all(at("a")).value();
    REQUIRE(img.size() == 8192);
    size_t kept = 0;
    for (uint64_t s = off / 512; s * 512 < off + len; ++s) {
      uint64_t a = std::max(off, s * 512), b = std::min(off + len, (s + 1) * 512);
      std::string piece = img.substr(a, b - a);
      bool all_new = piece == std::string(b - a, 'B');
      bool all_old = piece == std::string(b - a, 'A');
      CHECK((all_new || all_old));
      kept += all_new;
    }
    CHECK(img.substr(0, off) == std::string(off, 'A'));
    CHECK(img.substr(off + len) == std::string(8192 - off - len, 'A'));
    if (kept > 0 && kept < 8) saw_mixed = true;
  }
  CHECK(saw_mixed);
}

TEST_CASE("mem fs: a torn extending write leaves holes of zeros where sectors were lost") {
  MemFs fs;
  make_root(fs);
  durable_file(fs, "a", "");
  auto f = open_file(fs, at("a"), OpenMode::read_write);
  put(*f, 0, std::string(2048, 'B'));
  auto snap = fs.snapshot();
  std::set<size_t> sizes;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    fs.restore(snap);
    fs.crash(seed, CrashWeights{0, 0, 1, 0, 0, 50, 50});
    std::string img = fs.read_all(at("a")).value();
    REQUIRE(img.size() % 512 == 0);
    sizes.insert(img.size());
    for (size_t s = 0; s < img.size(); s += 512) {
      std::string piece = img.substr(s, 512);
      CHECK((piece == std::string(512, 'B') || piece == std::string(512, '\0')));
    }
    if (!img.empty()) CHECK(img.substr(img.size() - 512) == std::string(512, 'B'));
  }
  CHECK(sizes == std::set<size_t>{0, 512, 1024, 1536, 2048});
}

TEST_CASE("mem fs: zeroed and garbled crash outcomes cover exactly the unsynced write's range") {
  MemFs fs;
  make_root(fs);
  durable_file(fs, "a", std::string(1000, 'A'));
  auto f = open_file(fs, at("a"), OpenMode::read_write);
  put(*f, 300, std::string(200, 'B'));
  auto snap = fs.snapshot();

  fs.crash(5, CrashWeights{0, 0, 0, 1, 0, 50, 50});
  std::string z = fs.read_all(at("a")).value();
  CHECK(z == std::string(300, 'A') + std::string(200, '\0') + std::string(500, 'A'));

  fs.restore(snap);
  auto rep = fs.crash(5, CrashWeights{0, 0, 0, 0, 1, 50, 50});
  CHECK(rep.writes_garbled == 1);
  std::string g = fs.read_all(at("a")).value();
  REQUIRE(g.size() == 1000);
  CHECK(g.substr(0, 300) == std::string(300, 'A'));
  CHECK(g.substr(500) == std::string(500, 'A'));
  CHECK(g.substr(300, 200) != std::string(200, 'B'));
  CHECK(g.substr(300, 200) != std::string(200, '\0'));
}

TEST_CASE("mem fs: the format model never zeroes or garbles a write") {
  MemFs fs;
  make_root(fs);
  auto f = open_file(fs, at("a"));
  REQUIRE(fs.sync_dir(kDir).is_ok());  // else a reverted create hides the writes
  for (int i = 0; i < 8; ++i) put(*f, static_cast<uint64_t>(i) * 512, std::string(512, 'x'));
  auto snap = fs.snapshot();
  for (uint64_t seed = 0; seed < 30; ++seed) {
    fs.restore(snap);
    auto rep = fs.crash(seed, CrashWeights::format_model());
    CHECK(rep.writes_zeroed == 0);
    CHECK(rep.writes_garbled == 0);
    CHECK(rep.writes_kept + rep.writes_dropped + rep.writes_torn == 8);
  }
}

TEST_CASE("mem fs: the same seed gives the same crash and different seeds give different crashes") {
  MemFs fs;
  make_root(fs);
  REQUIRE(fs.mkdir(at("sub")).is_ok());
  durable_file(fs, "base", std::string(4096, 'o'));
  auto f = open_file(fs, at("base"), OpenMode::read_write);
  for (int i = 0; i < 6; ++i) put(*f, static_cast<uint64_t>(i) * 700, std::string(900, static_cast<char>('a' + i)));
  REQUIRE(f->truncate(3500).is_ok());
  for (const char* n : {"x", "y", "sub/z"}) {
    auto g = open_file(fs, at(n));
    put(*g, 0, std::string(1500, 'n'));
  }
  REQUIRE(fs.rename(at("x"), at("x2")).is_ok());
  auto snap = fs.snapshot();
  auto state = [&](uint64_t seed) {
    fs.restore(snap);
    fs.crash(seed, CrashMode::random);
    return dump(fs, kDir);
  };
  auto first = state(42);
  CHECK(state(42) == first);
  std::set<std::vector<std::string>> distinct;
  for (uint64_t seed = 0; seed < 20; ++seed) distinct.insert(state(seed));
  CHECK(distinct.size() > 10);
  // A copy made from the snapshot crashes the same way.
  MemFs copy(snap);
  copy.crash(42, CrashMode::random);
  CHECK(dump(copy, kDir) == first);
}

TEST_CASE("mem fs: restore from a snapshot lets a test crash many times from one state") {
  MemFs fs;
  make_root(fs);
  auto f = open_file(fs, at("a"));
  put(*f, 0, "pending");
  auto snap = fs.snapshot();
  fs.crash(0, CrashMode::drop_all);
  CHECK(fs.read_all(at("a")).status().sys_errno() == ENOENT);
  CHECK(f->pwrite("x", 1, 0).sys_errno() == EIO);  // restore does not revive old handles
  fs.restore(snap);
  CHECK(f->pwrite("x", 1, 0).sys_errno() == EIO);
  CHECK(fs.read_all(at("a")).value() == "pending");
  CHECK(fs.pending_ops(at("a")) == 1);
  fs.crash(0, CrashMode::keep_all);
  CHECK(fs.read_all(at("a")).value() == "pending");
  fs.restore(snap);
  CHECK(fs.pending_dir_changes(kDir) == 1);  // a snapshot can be used again
}

TEST_CASE("mem fs: the file system can be used from several threads at once") {
  MemFs fs;
  make_root(fs);
  auto f = open_file(fs, at("a"));
  constexpr int kThreads = 4, kWrites = 200;
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t) {
    ts.emplace_back([&, t] {
      std::string rec(16, static_cast<char>('a' + t));
      for (int i = 0; i < kWrites; ++i) {
        uint64_t off = static_cast<uint64_t>(i * kThreads + t) * 16;
        (void)f->pwrite(rec.data(), rec.size(), off);
        (void)fs.stat(at("a"));
      }
      auto g = fs.open(at(("t" + std::to_string(t)).c_str()), OpenMode::create_excl);
      (void)g;
    });
  }
  for (auto& t : ts) t.join();
  std::string img = fs.read_all(at("a")).value();
  REQUIRE(img.size() == static_cast<size_t>(kThreads * kWrites * 16));
  for (size_t i = 0; i < img.size(); i += 16) CHECK(img[i] == static_cast<char>('a' + (i / 16) % kThreads));
  CHECK(fs.list(kDir).value().size() == kThreads + 1);
}
