#include "lock_probe.h"

#include <system_error>
#include <utility>

namespace alog::detail {

LockProbe::LockProbe(Fs& fs, std::string lock_path, uint64_t work_bytes) {
  auto ask = [&fs, path = std::move(lock_path)] { return fs.is_locked(path); };
  if (fs.is_locked_slow() && work_bytes >= kBesideBytes) {
    try {
      answer_ = std::async(std::launch::async, ask).share();
      return;
    } catch (const std::system_error&) {  // no thread to be had: ask on the first held()
    }
  }
  answer_ = std::async(std::launch::deferred, ask).share();
}

}  // namespace alog::detail
