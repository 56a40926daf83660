// The refusals of a command that writes a log, made before it changes
// anything: a dry run makes them instead of the changes, the real run
// before its first change, so the two fail alike and a failing real run
// leaves the log as it was.
#pragma once

#include <string>

#include "alog/fs.h"
#include "alog/status.h"

namespace alog {

// What a writing command is about to do in DIR.
struct WritePlan {
  bool lock = true;         // takes DIR/LOCK (creating it when missing)
  bool write_open = false;  // opens the log for writing (Log::open): every segment for writing
  bool lost_found = false;  // saves removed bytes in DIR/lost+found/ (made when missing)
  bool names = false;       // creates, renames or removes names in DIR
};

// Every refusal the plan's steps would meet, found without changing a byte
// (Fs::probe_write): LOCK a link, a special file, a directory or a file with
// another hard link; lost+found a link or no directory; a segment a link,
// a special file or hard-linked; a file or directory on another file system
// than the log; no write permission where the plan writes or creates; a
// read-only file system. The error is the one the step itself would give.
// Whether a writer holds the lock is not asked.
Status check_write_plan(const std::string& dir, const WritePlan& plan, Fs* fs = nullptr);

}  // namespace alog
