// Waiting for a directory to change, for cat -f and -F: inotify where the
// system has it, else naps of a fixed length (the polling fallback).
#pragma once

#include <string>

namespace alog::cli {

class DirWatch {
 public:
  // fallback_ms: how long a wait lasts without inotify (and, with it, at
  // most: a change inotify cannot see, e.g. on a network file system, is
  // then found by the next look).
  explicit DirWatch(int fallback_ms);
  ~DirWatch();
  DirWatch(const DirWatch&) = delete;
  DirWatch& operator=(const DirWatch&) = delete;

  // Watches dir (replacing any earlier watch); false when it cannot
  // (no inotify, no such directory): wait() then naps.
  bool watch(const std::string& dir);
  // Returns once dir changed since the last wait() (or since watch()), a
  // signal arrived, or the fallback time passed; false on a signal.
  bool wait();

 private:
  int fd_ = -1;
  int wd_ = -1;
  bool no_inotify_ = false;
  int fallback_ms_;
};

}  // namespace alog::cli
