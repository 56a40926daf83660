// PosixFs::probe_write: the refusals PosixFs's open(read_write), lock and
// mkdir would make, in their order and with their errors, found with
// fstatat, faccessat and statvfs alone: nothing is created, opened for
// writing or locked, so a dry run may ask it.
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>

#include "posix_dir.h"

namespace alog::detail {
namespace {

// What the real call names its failing system call in its error.
const char* op_of(WriteUse use) {
  switch (use) {
    case WriteUse::file: return "open";
    case WriteUse::lock: return "open lock file";
    case WriteUse::directory: return "mkdir";
  }
  return "open";
}

// The directory `at` names a file in: its descriptor when anchored, else
// the path's parent ("." for a bare name).
std::string parent_of(const std::string& name) {
  auto slash = name.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : name.substr(0, slash);
}

// EROFS when the file system holding `at`'s directory is mounted read-only.
int read_only(const At& at) {
  struct statvfs v;
  int r = at.anchored() ? ::fstatvfs(at.fd(), &v) : ::statvfs(parent_of(at.name()).c_str(), &v);
  return r == 0 && (v.f_flag & ST_RDONLY) ? EROFS : 0;
}

// Whether the caller (by its effective ids, as open(2) decides) may do
// `mode` to the name `at` holds, or to its directory when `dir_itself`.
int denied(const At& at, int mode, bool dir_itself = false) {
  int r = dir_itself ? (at.anchored() ? ::faccessat(at.fd(), ".", mode, AT_EACCESS)
                                      : ::faccessat(AT_FDCWD, parent_of(at.name()).c_str(), mode, AT_EACCESS))
                     : ::faccessat(at.fd(), at.name(), mode, AT_EACCESS | AT_SYMLINK_NOFOLLOW);
  return r == 0 ? 0 : errno;
}

}  // namespace

Status probe_write(const std::string& path, WriteUse use) {
  const char* op = op_of(use);
  ALOG_ASSIGN(At at, resolve(path));
  ALOG_TRY(at.check_dir(path));
  struct stat st;
  if (::fstatat(at.fd(), at.name(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    int err = errno;
    // A file to write must exist; a lock file or a directory is created in
    // the directory holding it.
    if (err != ENOENT || use == WriteUse::file) return Status::io_error(op, path, err);
    if (int e = read_only(at)) return Status::io_error(op, path, e);
    if (int e = denied(at, W_OK | X_OK, /*dir_itself=*/true)) return Status::io_error(op, path, e);
    return {};
  }
  if (use == WriteUse::directory) {
    // mkdir refuses an existing link or file; files are then created in it.
    if (!S_ISDIR(st.st_mode)) return not_regular(path, st.st_mode, "a directory");
    ALOG_TRY(at.check(path, place_of(st, at.fd(), at.name(), AT_SYMLINK_NOFOLLOW)));
    // What fails is the creation of the first file in it.
    if (int e = read_only(at)) return Status::io_error("create files in the directory", path, e);
    if (int e = denied(at, W_OK | X_OK)) return Status::io_error("create files in the directory", path, e);
    return {};
  }
  // open(read_write) refuses a special file before opening it; lock opens
  // first, with O_NOFOLLOW, and refuses a link there as ELOOP.
  if (S_ISLNK(st.st_mode) || (use == WriteUse::file && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)))
    return not_regular(path, st.st_mode);
  // Then the open for reading and writing: a directory is EISDIR, then
  // permission (a read-only file system among it).
  if (S_ISDIR(st.st_mode)) return Status::io_error(op, path, EISDIR);
  if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
    if (int e = read_only(at)) return Status::io_error(op, path, e);
  if (int e = denied(at, R_OK | W_OK)) return Status::io_error(op, path, e);
  // Then what fstat of the open file shows.
  if (!S_ISREG(st.st_mode)) return not_regular(path, st.st_mode);
  if (st.st_nlink != 1) return shared_inode(path, st.st_nlink);
  return at.check(path, place_of(st, at.fd(), at.name(), AT_SYMLINK_NOFOLLOW));
}

}  // namespace alog::detail
