// The log directory held open (Fs::anchor): a directory renamed away and
// replaced by a link, or lost+found/ swapped for one, while a command runs
// sends no file elsewhere; a file system mounted inside the log is never
// written. Real file system, in a temporary directory.
#include <doctest/doctest.h>

#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "alog/log.h"
#include "alog/retention.h"
#include "alog/verify.h"
#include "cli_util.h"
#include "support/forward_fs.h"

using namespace alog;
using namespace alog::test;
using namespace alog::test::cli;
namespace fs = std::filesystem;

namespace {

const char* const kOtherFs =
    "is on another file system or mount than the log; alog writes only in the log's own directory";

// A mount at `at` for the scope (unmounted, lazily, at its end): a 4 MiB
// tmpfs, or with `from` a bind mount of that file or directory. ok() is
// false where mounting is not permitted, why() says why.
class ScopedMount {
 public:
  explicit ScopedMount(const std::string& at, const std::string& from = "") : at_(at) {
    ok_ = ::geteuid() == 0 && (from.empty() ? ::mount("tmpfs", at.c_str(), "tmpfs", 0, "size=4m")
                                            : ::mount(from.c_str(), at.c_str(), nullptr, MS_BIND, nullptr)) == 0;
    if (!ok_) why_ = ::geteuid() != 0 ? "not root" : std::strerror(errno);
  }
  ~ScopedMount() {
    if (ok_) ::umount2(at_.c_str(), MNT_DETACH);
  }
  ScopedMount(const ScopedMount&) = delete;
  ScopedMount& operator=(const ScopedMount&) = delete;
  bool ok() const { return ok_; }
  const std::string& why() const { return why_; }

 private:
  std::string at_, why_;
  bool ok_ = false;
};

// The refusal of a write at `path` on another file system or mount.
void check_other_place(const Status& st, const std::string& path) {
  INFO(st.to_string());
  CHECK(st.code() == Errc::not_a_log);
  CHECK(st.message().find(kOtherFs) != std::string::npos);
  CHECK(st.path() == path);
}

std::string record(int i) { return std::string(100, char('a' + i % 26)) + std::to_string(i); }

}  // namespace

TEST_CASE("an anchored directory is reached through its descriptor after its path is replaced by a link") {
  TempDir t;
  const std::string d = t / "log", moved = t / "moved", other = t / "other";
  fs::create_directory(d);
  fs::create_directory(other);
  // The same directory however it is spelled.
  std::shared_ptr<DirAnchor> anchor = std::move(posix_fs().anchor(d + "/")).value();
  // The directory itself is renamed by its path, through its parent (as a
  // write open renews its entry).
  REQUIRE(posix_fs().rename(d, t / "away").is_ok());
  REQUIRE(posix_fs().rename(t / "away", d).is_ok());
  fs::rename(d, moved);
  fs::create_symlink(other, d);
  auto f = posix_fs().open(d + "/a", OpenMode::create_excl);
  REQUIRE_MESSAGE(f.is_ok(), f.status().to_string());
  CHECK(posix_fs().mkdir(d + "/sub").is_ok());
  CHECK(posix_fs().lock(d + "//./LOCK").is_ok());
  CHECK(posix_fs().rename(d + "/a", d + "/sub/b").is_ok());
  CHECK(posix_fs().sync_dir(d + "/sub").is_ok());
  CHECK(posix_fs().stat(d + "/sub/b")->is_regular);
  CHECK(posix_fs().list(d)->size() == 2);
  CHECK(posix_fs().available(d).is_ok());
  CHECK(list_dir(other).empty());
  CHECK(file_exists(moved + "/sub/b"));
  CHECK(posix_fs().unlink(d + "/sub/b").is_ok());
  CHECK_FALSE(file_exists(moved + "/sub/b"));
  // The last holder gone, the path is resolved as given again.
  anchor.reset();
  REQUIRE(posix_fs().open(d + "/c", OpenMode::create_excl).is_ok());
  CHECK(file_exists(other + "/c"));
}

TEST_CASE("no symbolic link below an anchored directory is followed, in any component") {
  TempDir t;
  const std::string d = t / "log", elsewhere = t / "elsewhere";
  fs::create_directory(d);
  fs::create_directory(elsewhere);
  fs::create_symlink(elsewhere, d + "/lost+found");
  auto anchor = posix_fs().anchor(d);
  REQUIRE(anchor.is_ok());
  auto f = posix_fs().open(d + "/lost+found/x.bin", OpenMode::create_excl);
  REQUIRE_FALSE(f.is_ok());
  CHECK(f.status().code() == Errc::not_a_log);
  CHECK(f.status().message().find("is a symbolic link, not a directory") != std::string::npos);
  CHECK(f.status().path() == d + "/lost+found");
  CHECK_FALSE(posix_fs().mkdir(d + "/lost+found/sub").is_ok());
  CHECK(posix_fs().list(d + "/lost+found").status().code() == Errc::not_a_log);
  CHECK(posix_fs().sync_dir(d + "/lost+found").code() == Errc::not_a_log);
  CHECK(posix_fs().stat(d + "/lost+found/x.bin").status().code() == Errc::not_a_log);
  CHECK(posix_fs().available(d + "/lost+found").status().code() == Errc::not_a_log);
  CHECK(list_dir(elsewhere).empty());
  // A file where a directory should be is refused as well; a missing one is missing.
  write_file(d + "/file", "");
  auto under_file = posix_fs().open(d + "/file/x", OpenMode::create_excl);
  CHECK(under_file.status().message().find("is a regular file, not a directory") != std::string::npos);
  CHECK(under_file.status().path() == d + "/file");
  CHECK_FALSE(posix_fs().stat(d + "/missing/x")->exists);
  CHECK(posix_fs().open(d + "/missing/x", OpenMode::create_excl).status().sys_errno() == ENOENT);
}

TEST_CASE("anchoring a directory that is not there fails and holds nothing") {
  TempDir t;
  auto a = posix_fs().anchor(t / "missing");
  REQUIRE_FALSE(a.is_ok());
  CHECK(a.status().code() == Errc::not_found);
  CHECK(a.status().sys_errno() == ENOENT);
  fs::create_directory(t / "missing");  // made later: resolved by its path, as given
  REQUIRE(posix_fs().open(t / "missing/x", OpenMode::create_excl).is_ok());
  CHECK(file_exists(t / "missing/x"));
}

TEST_CASE("a log whose directory is replaced by a link while it is open changes only the directory it opened") {
  TempDir t;
  const std::string d = t / "log", moved = t / "moved", other = t / "other";
  // Another log the link points to: none of its bytes may change.
  copy_tree(vector_log("torn-tail"), other);
  write_file(other + "/notes.txt", "mine");
  Options o;
  o.max_segment_size = 4096;
  o.max_segments = 6;  // the oldest segments are recycled
  auto log = Log::open(d, o);
  REQUIRE_MESSAGE(log.is_ok(), log.status().to_string());
  for (int i = 0; i < 20; i++) REQUIRE((*log)->append_one(record(i)).is_ok());
  REQUIRE((*log)->sync().is_ok());
  fs::rename(d, moved);
  fs::create_symlink(other, d);
  const auto before = snapshot_tree(other);
  for (int i = 20; i < 400; i++) REQUIRE((*log)->append_one(record(i)).is_ok());  // rolls, recycles
  REQUIRE((*log)->roll().is_ok());
  RetentionPolicy keep;
  keep.keep_segments = 3;
  REQUIRE((*log)->truncate_before(retention_cut((*log)->segments(), keep)).is_ok());
  const uint64_t first = (*log)->first_sequence();
  REQUIRE((*log)->truncate_after(first + 10).is_ok());
  REQUIRE((*log)->append_one("last").is_ok());
  REQUIRE((*log)->close().is_ok());
  CHECK(snapshot_tree(other) == before);
  auto back = Log::open_read(moved);
  REQUIRE_MESSAGE(back.is_ok(), back.status().to_string());
  CHECK((*back)->first_sequence() == first);
  CHECK((*back)->next_sequence() == first + 12);
  CHECK((*back)->read(first + 11)->payload == "last");
}

TEST_CASE("lost+found replaced by a link just before recovery saves into it is refused and nothing lands in the target") {
  TempDir t;
  const std::string d = copy_vector(t, "torn-tail"), elsewhere = t / "elsewhere";
  fs::create_directory(elsewhere);
  OpenHookFs sfs(posix_fs());
  sfs.watch = "/lost+found/";
  sfs.hook = [&] {  // after recovery made lost+found/ and checked it
    fs::rename(d + "/lost+found", t / "lf-was");
    fs::create_symlink(elsewhere, d + "/lost+found");
  };
  RecoverOptions ro;
  ro.fs = &sfs;
  auto r = recover(d, ro);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().code() == Errc::not_a_log);
  CHECK(r.status().message().find("is a symbolic link, not a directory") != std::string::npos);
  CHECK(list_dir(elsewhere).empty());
}

TEST_CASE("a log directory replaced by a link during recovery still gets its bytes saved in its own lost+found") {
  TempDir t;
  const std::string d = copy_vector(t, "torn-tail"), decoy = t / "decoy", moved = t / "moved";
  copy_tree(d, decoy);
  fs::create_directory(decoy + "/lost+found");
  const auto before = snapshot_tree(decoy);
  OpenHookFs sfs(posix_fs());
  sfs.watch = "/lost+found/";
  sfs.hook = [&] {
    fs::rename(d, moved);
    fs::create_symlink(decoy, d);
  };
  RecoverOptions ro;
  ro.fs = &sfs;
  auto r = recover(d, ro);
  REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  CHECK(r->applied);
  CHECK(snapshot_tree(decoy) == before);
  CHECK(list_dir(moved + "/lost+found").size() == 2);  // NAME.bin and its manifest
  CHECK(run_alog("verify " + shq(moved)).exit_code == 0);
}

TEST_CASE("a save into a lost+found that is another file system is refused with a message naming it") {
  TempDir t;
  const std::string d = copy_vector(t, "torn-tail");
  fs::create_directory(d + "/lost+found");
  ScopedMount m(d + "/lost+found");
  if (!m.ok()) {
    MESSAGE("skipped: cannot mount a tmpfs here (" << m.why() << ")");
    return;
  }
  write_file(d + "/LOCK", "");
  const auto before = snapshot_tree(d);
  RunResult r = run_alog("recover " + shq(d));
  INFO(r.err);
  CHECK(r.exit_code == 8);
  check_one_line_error(r, d + "/lost+found");
  CHECK(r.err.find(kOtherFs) != std::string::npos);
  CHECK(snapshot_tree(d) == before);  // the tmpfs is empty, the log uncut
}

TEST_CASE("posix fs under an anchor writes no file and makes no directory on another file system, and still reads there") {
  TempDir t;
  const std::string d = t / "log";
  fs::create_directory(d);
  fs::create_directory(d + "/mnt");
  ScopedMount m(d + "/mnt");
  if (!m.ok()) {
    MESSAGE("skipped: cannot mount a tmpfs here (" << m.why() << ")");
    return;
  }
  write_file(d + "/mnt/seg", "theirs");
  fs::create_directory(d + "/mnt/dir");
  // A file bound over a name in the log itself.
  write_file(d + "/bound", "");
  ScopedMount bound(d + "/bound", d + "/mnt/seg");
  REQUIRE(bound.ok());
  auto anchor = posix_fs().anchor(d);
  REQUIRE(anchor.is_ok());
  check_other_place(posix_fs().open(d + "/mnt/new", OpenMode::create_excl).status(), d + "/mnt/new");
  check_other_place(posix_fs().open(d + "/mnt/seg", OpenMode::create_trunc).status(), d + "/mnt/seg");
  check_other_place(posix_fs().open(d + "/bound", OpenMode::read_write).status(), d + "/bound");
  check_other_place(posix_fs().mkdir(d + "/mnt"), d + "/mnt");
  check_other_place(posix_fs().mkdir(d + "/mnt/dir/sub"), d + "/mnt/dir/sub");
  check_other_place(posix_fs().lock(d + "/mnt/LOCK").status(), d + "/mnt/LOCK");
  CHECK(read_file(d + "/mnt/seg") == "theirs");
  CHECK_FALSE(file_exists(d + "/mnt/new"));
  CHECK(posix_fs().open(d + "/mnt/seg", OpenMode::read).is_ok());
  CHECK(posix_fs().open(d + "/bound", OpenMode::read).is_ok());
}

TEST_CASE("posix fs under an anchor refuses a file or directory bound from elsewhere on the log's own file system") {
  TempDir t;
  const std::string d = t / "log", out = t / "outside";
  fs::create_directory(d);
  fs::create_directory(out);
  fs::create_directory(out + "/lf");
  write_file(out + "/seg", "theirs");
  write_file(out + "/precious", "precious\n");
  write_file(d + "/00000000000000000000.seg", "");
  write_file(d + "/LOCK", "");
  fs::create_directory(d + "/lost+found");
  ScopedMount seg(d + "/00000000000000000000.seg", out + "/seg"), lock(d + "/LOCK", out + "/precious"),
      lf(d + "/lost+found", out + "/lf");
  if (!seg.ok() || !lock.ok() || !lf.ok()) {
    MESSAGE("skipped: cannot bind-mount here (" << seg.why() << lock.why() << lf.why() << ")");
    return;
  }
  auto anchor = posix_fs().anchor(d);
  REQUIRE(anchor.is_ok());
  check_other_place(posix_fs().open(d + "/00000000000000000000.seg", OpenMode::read_write).status(),
          d + "/00000000000000000000.seg");
  check_other_place(posix_fs().lock(d + "/LOCK").status(), d + "/LOCK");
  check_other_place(posix_fs().mkdir(d + "/lost+found"), d + "/lost+found");
  check_other_place(posix_fs().open(d + "/lost+found/saved.bin", OpenMode::create_excl).status(),
          d + "/lost+found/saved.bin");
  CHECK(read_file(out + "/seg") == "theirs");
  CHECK(read_file(out + "/precious") == "precious\n");
  CHECK(fs::is_empty(out + "/lf"));
  CHECK(posix_fs().open(d + "/00000000000000000000.seg", OpenMode::read).is_ok());  // reading is harmless
}
