// Log directories held open for PosixFs (Fs::anchor): while a directory is
// anchored, every path under it is reached from its descriptor with the *at
// calls, never following a link below it, so renaming the directory or
// replacing it (or lost+found/) with a link cannot send a file elsewhere.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>

#include <memory>
#include <string>

#include "alog/fs.h"

namespace alog::detail {

struct Anchor;

// Where one path is reached: the directory `fd` and the `name` in it for the
// *at calls. Unanchored: AT_FDCWD and the path as given (resolved as ever).
// Where a file or directory lives: its file system and, where the kernel
// tells (statx's STATX_MNT_ID, Linux 5.8), its mount. A file or directory
// bound (mount --bind) from elsewhere on the same file system has the log's
// st_dev but another mount.
struct Place {
  dev_t dev = 0;
  uint64_t mnt = 0;
  bool has_mnt = false;
};
// Whether a and b are on one file system, and on one mount where both are known.
inline bool same_place(const Place& a, const Place& b) {
  return a.dev == b.dev && (!a.has_mnt || !b.has_mnt || a.mnt == b.mnt);
}
// The place of `name` in the directory dirfd (st its stat), statx's flags
// as given: "" and AT_EMPTY_PATH for dirfd itself.
Place place_of(const struct stat& st, int dirfd, const char* name, int flags);

class At {
 public:
  At() = default;
  At(At&& o) noexcept;
  At& operator=(At&&) = delete;
  At(const At&) = delete;
  ~At();

  int fd() const { return fd_; }
  const char* name() const { return name_.c_str(); }
  bool anchored() const { return anchor_ != nullptr; }
  // The flag that refuses a link at the name: a directory of a log (lost+found/)
  // is never reached through one; the user's own path to it is followed.
  int nofollow_dir() const { return anchored() && name_ != "." ? O_NOFOLLOW : 0; }
  // A file or directory written at this name must be on the anchor's file
  // system: `check_dir` before creating in the directory, `check` on what was opened.
  Status check_dir(const std::string& path) const;
  Status check(const std::string& path, const Place& place) const;

 private:
  friend Result<At> resolve(const std::string& path, bool entry);
  std::shared_ptr<const Anchor> anchor_;
  int fd_ = AT_FDCWD;
  bool owns_fd_ = false;  // fd_ is a directory opened below the anchor
  Place dir_place_;       // the file system and mount of fd_
  std::string name_;
};

// Resolves `path` from the deepest live anchor holding it (each directory
// below the anchor opened with O_NOFOLLOW), or as given when none does.
// `entry`: the name itself is to change (a rename): an anchored directory
// itself is then reached by its path as given, through its parent.
Result<At> resolve(const std::string& path, bool entry = false);

// Opens and registers `dir` until the last holder drops it (Fs::anchor).
Result<std::shared_ptr<DirAnchor>> anchor_dir(const std::string& dir);

// "a symbolic link", "a FIFO", ... for the file type in `mode`.
const char* kind_of(mode_t mode);
// A name in a log directory that alog refuses to open: it never follows a
// link there and never opens anything but a regular file.
Status not_regular(const std::string& path, mode_t mode, const char* want = "a regular file");

// A file to be written that another name shares (a hard link): writing it
// would change the other name's file too.
Status shared_inode(const std::string& path, nlink_t links);

// PosixFs::probe_write (posix_probe.cc).
Status probe_write(const std::string& path, WriteUse use);

}  // namespace alog::detail
