// check_write_plan (alog/write_plan.h): the pre-flight of recover and of the
// truncate commands, in the order their real runs meet the same checks.
#include "alog/write_plan.h"

#include <algorithm>

#include "alog/format.h"
#include "lost_found.h"

namespace alog {

using namespace detail;

Status check_write_plan(const std::string& dir, const WritePlan& plan, Fs* fsp) {
  Fs& fs = fsp ? *fsp : posix_fs();
  // Reached as the real run reaches it: through the directory opened now.
  ALOG_ASSIGN(std::shared_ptr<DirAnchor> anchor, fs.anchor(dir));
  if (plan.lock) ALOG_TRY(fs.probe_write(path_join(dir, std::string(format::kLockName)), WriteUse::lock));
  // A write open refuses a lost+found/ it could not save in, saving or not.
  if (plan.write_open || plan.lost_found) {
    ALOG_TRY(check_lost_found(fs, dir).status());
  }
  if (plan.write_open) {
    ALOG_ASSIGN(std::vector<std::string> names, fs.list(dir));
    std::sort(names.begin(), names.end());  // the order a write open opens them in
    for (const auto& n : names)
      if (format::parse_segment_name(n)) ALOG_TRY(fs.probe_write(path_join(dir, n), WriteUse::file));
  }
  if (plan.names) ALOG_TRY(fs.probe_write(dir, WriteUse::directory));
  // A missing lost+found/ is probed as mkdir would meet it.
  if (plan.lost_found)
    ALOG_TRY(fs.probe_write(path_join(dir, std::string(format::kLostFoundName)), WriteUse::directory));
  return {};
}

}  // namespace alog
