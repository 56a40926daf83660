// The log directory as the commands see it: opening for reading or writing
// with errors as Failures, the creation options kept in DIR/alog.json, and
// small path helpers.
#include <CLI/CLI.hpp>
#include <dirent.h>
#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "alog/format.h"
#include "cli.h"
#include "report.h"

namespace alog::cli {

std::string base_name(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  auto s = p.find_last_of('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

std::string dir_name(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  auto s = p.find_last_of('/');
  if (s == std::string::npos) return ".";
  return s == 0 ? "/" : p.substr(0, s);
}

bool is_regular_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool writer_active(const std::string& dir) {
  return posix_fs().is_locked(path_join(dir, std::string(format::kLockName)));
}

std::unique_ptr<Log> open_read_or_fail(const std::string& dir, bool background_tail) {
  Options opt;
  opt.walk_tail_in_background = background_tail;
  auto r = Log::open_read(dir, opt);
  if (!r) fail(r.status(), dir);
  return std::move(r).value();
}

void CreateOptions::add_to(CLI::App& sub) {
  auto size = [&](const char* name, std::optional<uint64_t>* dst, const char* help) {
    sub.add_option_function<std::string>(
           name, [dst](const std::string& s) { *dst = parse_size(s); }, help)
        ->type_name("SIZE")
        ->check(CLI::Validator(check_size(), "SIZE"));
  };
  auto num = [&](const char* name, std::optional<uint64_t>* dst, const char* help) {
    sub.add_option_function<std::string>(
           name, [dst](const std::string& s) { *dst = parse_u64(s); }, help)
        ->type_name("N")
        ->check(CLI::Validator(check_u64(), "N"));
  };
  size("--segment-size", &segment_size, "Maximum segment size (default 128MiB)");
  size("--max-disk-size", &max_disk_size, "Budget for all segment files; 0: none (default 10GiB)");
  num("--max-segments", &max_segments, "0: no limit; 1: one segment; >1: recycle the oldest");
  num("--checkpoint-stride", &checkpoint_stride, "Records between checkpoints, 1..65535 (default 64)");
  num("--start-sequence", &start_sequence, "Sequence of the first record of a new log (default 0)");
  size("--max-payload-size", &max_payload_size, "Largest record accepted (default 16MiB)");
}

namespace {

constexpr off_t kMaxOptionsFile = 1 << 20;

std::string options_path(const std::string& dir) {
  return path_join(dir, std::string(format::kOptionsName));
}

bool has_segments(const std::string& dir) {
  auto names = posix_fs().list(dir);
  if (!names) return false;
  return std::any_of(names->begin(), names->end(),
                     [](const std::string& n) { return format::parse_segment_name(n).has_value(); });
}

// Reads DIR/alog.json into *text: false when there is none. Only a small
// regular file is read: a link, a FIFO or a device there fails at once
// (bad_config), never blocks or reads without end.
bool read_options_file(const std::string& path, std::string* text) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    if (e == ENOENT) return false;
    if (e == ELOOP) fail("bad_config", path, std::nullopt, "is a symbolic link; alog does not follow links in a log");
    fail("io", path, std::nullopt, std::string("open: ") + std::strerror(e));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    fail("io", path, std::nullopt, std::string("stat: ") + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode) || st.st_size > kMaxOptionsFile) {
    ::close(fd);
    if (!S_ISREG(st.st_mode)) fail("bad_config", path, std::nullopt, "not a regular file");
    fail("bad_config", path, std::nullopt,
         fmt::format("{} bytes, larger than the {} bytes an options file may have", st.st_size,
                     kMaxOptionsFile));
  }
  text->resize(size_t(st.st_size));
  size_t got = 0;
  while (got < text->size()) {
    ssize_t r = ::pread(fd, text->data() + got, text->size() - got, off_t(got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += size_t(r);
  }
  int e = errno;
  ::close(fd);
  if (got < text->size() && e != 0) fail("io", path, std::nullopt, std::string("read: ") + std::strerror(e));
  text->resize(got);
  return true;
}

}  // namespace

Json options_json(const Options& o) {
  Json j;
  j["schema_version"] = 1;
  j["start_sequence"] = o.start_sequence;
  j["max_segment_size"] = o.max_segment_size;
  j["max_disk_size"] = o.max_disk_size;
  j["max_segments"] = o.max_segments;
  j["max_payload_size"] = o.max_payload_size;
  j["checkpoint_stride"] = o.checkpoint_stride;
  return j;
}

std::string check_options(const Options& o) {
  if (o.checkpoint_stride < 1 || o.checkpoint_stride > 65535)
    return fmt::format("checkpoint stride must be 1..65535, not {}", o.checkpoint_stride);
  uint64_t min_size = format::kHeaderSize + 2 * format::kFrameHeaderSize +
                      (o.checkpoint_stride == 1 ? format::kFrameHeaderSize : 0);
  if (o.max_segment_size < min_size)
    return fmt::format("segment size {} is too small for one empty record (at least {} bytes)",
                       o.max_segment_size, min_size);
  if (o.max_payload_size > UINT32_MAX)
    return fmt::format("max payload size {} is above 4294967295", o.max_payload_size);
  if (o.max_disk_size != 0 && o.max_disk_size < format::kEmptySegmentSize)
    return fmt::format("max disk size {} is smaller than one empty segment (208 bytes)",
                       o.max_disk_size);
  return {};
}

Options load_options(const std::string& dir, const CreateOptions& given, bool* found) {
  Options o;
  std::string path = options_path(dir);
  if (found) *found = false;
  std::string text;
  if (read_options_file(path, &text)) {
    if (found) *found = true;
    Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) fail("bad_config", path, std::nullopt, "not a JSON object");
    auto get = [&](const char* key, auto* dst) {
      if (!j.contains(key)) return;
      const Json& v = j[key];
      using T = std::remove_pointer_t<decltype(dst)>;
      if (!v.is_number_unsigned() || v.get<uint64_t>() > std::numeric_limits<T>::max())
        fail("bad_config", path, std::nullopt, fmt::format("\"{}\" must be an unsigned integer", key));
      *dst = T(v.get<uint64_t>());
    };
    get("max_segment_size", &o.max_segment_size);
    get("max_disk_size", &o.max_disk_size);
    get("max_segments", &o.max_segments);
    get("max_payload_size", &o.max_payload_size);
    get("checkpoint_stride", &o.checkpoint_stride);
    get("start_sequence", &o.start_sequence);
    if (std::string why = check_options(o); !why.empty()) fail("bad_config", path, std::nullopt, why);
  }
  auto over32 = [&](std::optional<uint64_t> v, uint32_t* dst, const char* name) {
    if (!v) return;
    if (*v > UINT32_MAX) throw UsageError(fmt::format("{} {} is too large", name, *v));
    *dst = uint32_t(*v);
  };
  if (given.segment_size) o.max_segment_size = *given.segment_size;
  if (given.max_disk_size) o.max_disk_size = *given.max_disk_size;
  if (given.max_payload_size) o.max_payload_size = *given.max_payload_size;
  if (given.start_sequence) o.start_sequence = *given.start_sequence;
  over32(given.max_segments, &o.max_segments, "--max-segments");
  over32(given.checkpoint_stride, &o.checkpoint_stride, "--checkpoint-stride");
  if (std::string why = check_options(o); !why.empty()) throw UsageError(why);
  return o;
}

RecoverOptions salvage_log_options(const std::string& dir) {
  const Options lo = load_options(dir, CreateOptions{});
  RecoverOptions ro;
  ro.checkpoint_stride = lo.checkpoint_stride;
  ro.max_segment_size = lo.max_segment_size;
  return ro;
}

void save_options(const std::string& dir, const Options& o, const Json& retention) {
  std::string path = options_path(dir), tmp = path + ".tmp";
  Json j = options_json(o);
  if (retention.is_object() && !retention.empty()) j["retention"] = retention;
  std::string body = j.dump() + "\n";
  auto f = posix_fs().open(tmp, OpenMode::create_trunc);
  if (!f) fail(f.status(), tmp);
  Status st = (*f)->pwrite(body.data(), body.size(), 0);
  if (st) st = (*f)->datasync();
  f->reset();
  if (st) st = posix_fs().rename(tmp, path);
  if (st) st = posix_fs().sync_dir(dir);
  if (!st) {
    (void)posix_fs().unlink(tmp);
    fail(st, path);
  }
}

std::unique_ptr<Log> open_write_or_fail(const Global& g, const std::string& dir,
                                        const CreateOptions& given, bool sync_on_append,
                                        std::optional<uint64_t> wait_ms) {
  Options o = load_options(dir, given);
  o.sync_on_append = sync_on_append;
  const uint64_t start = now_ms();
  int nap = 5;
  auto r = Log::open(dir, o);
  while (!r && r.status().code() == Errc::locked && lock_wait_retry(wait_ms, start, nap))
    r = Log::open(dir, o);
  if (!r) {
    if (r.status().code() == Errc::locked) fail_locked(dir, wait_ms);
    fail(r.status(), dir);
  }
  warn_open_changes(g, dir, (*r)->tail_cut(), (*r)->open_repairs(), /*done=*/true);
  return std::move(r).value();
}

// Mutating commands other than append never create a log.
void require_log_dir(const std::string& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    int e = errno;
    fail(e == ENOENT ? "not_found" : "io", dir, std::nullopt,
         e == ENOENT ? "no such log directory" : std::string("stat: ") + std::strerror(e));
  }
  if (!S_ISDIR(st.st_mode)) fail("not_a_log", dir, std::nullopt, "not a directory");
  auto names = posix_fs().list(dir);
  if (!names) fail(names.status(), dir);
  if (!has_segments(dir)) fail("not_a_log", dir, std::nullopt, "no segment files (not an alog log)");
}

void require_unlocked(const std::string& dir, std::optional<uint64_t> wait_ms) {
  const uint64_t start = now_ms();
  int nap = 5;
  while (writer_active(dir))
    if (!lock_wait_retry(wait_ms, start, nap)) fail_locked(dir, wait_ms);
}

}  // namespace alog::cli
