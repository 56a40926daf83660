#include "lock_probe.h"

#include <system_error>
#include <utility>

namespace alog::detail {

LockProbe::LockProbe(Fs& fs, std::string lock_path) {
  auto ask = [&fs, path = std::move(lock_path)] { return fs.is_locked(path); };
  try {
    answer_ = std::async(std::launch::async, ask).share();
  } catch (const std::system_error&) {
    answer_ = std::async(std::launch::deferred, ask).share();
  }
}

}  // namespace alog::detail
