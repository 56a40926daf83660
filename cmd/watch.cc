// DirWatch (watch.h): one inotify descriptor watching one directory.
#include "watch.h"

#include <sys/inotify.h>
#include <unistd.h>

#include "signals.h"

namespace alog::cli {

namespace {
// Without inotify events (a remote file system), a look this often anyway.
constexpr int kInotifyLongestWaitMs = 1000;
}

DirWatch::DirWatch(int fallback_ms) : fallback_ms_(fallback_ms) {}

DirWatch::~DirWatch() {
  if (fd_ >= 0) ::close(fd_);
}

bool DirWatch::watch(const std::string& dir) {
  if (fd_ < 0 && !no_inotify_) {
    fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    no_inotify_ = fd_ < 0;
  }
  if (fd_ < 0) return false;
  // Appends and cuts (modify), rolls and recycling (create, move, delete),
  // truncations' header rewrites (close after write). The same directory
  // gets the same watch back; the old one is removed only when another
  // replaces it (each removal queues an event, which would wake the next
  // wait at once: a loop that re-watched every time never slept).
  const int wd = ::inotify_add_watch(fd_, dir.c_str(),
                                     IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | IN_MOVED_FROM |
                                         IN_MOVED_TO | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF);
  if (wd < 0) return false;
  if (wd_ >= 0 && wd_ != wd) (void)::inotify_rm_watch(fd_, wd_);
  wd_ = wd;
  return true;
}

bool DirWatch::wait() {
  if (wd_ < 0) {
    nap_ms(fallback_ms_);
    return !interrupted();
  }
  Wake w = wait_fd(fd_, kInotifyLongestWaitMs);
  // Drop the events read so far: the caller looks at the directory next,
  // and changes after this point raise new ones.
  char buf[4096];
  while (::read(fd_, buf, sizeof buf) > 0) {
  }
  return w != Wake::signal;
}

}  // namespace alog::cli
