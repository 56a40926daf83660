// The registry of anchored log directories and the resolution of paths under
// them (posix_dir.h).
#include "posix_dir.h"

#include <unistd.h>

#include <cerrno>
#include <map>
#include <mutex>
#include <vector>

namespace alog::detail {

struct Anchor {
  Anchor(int f, Place p, std::string k) : fd(f), place(p), key(std::move(k)) {}
  ~Anchor();
  int fd;
  Place place;
  std::string key;
};

Place place_of(const struct stat& st, int dirfd, const char* name, int flags) {
  Place p;
  p.dev = st.st_dev;
  struct statx sx;
  if (::statx(dirfd, name, flags, STATX_MNT_ID, &sx) == 0 && (sx.stx_mask & STATX_MNT_ID)) {
    p.mnt = sx.stx_mnt_id;
    p.has_mnt = true;
  }
  return p;
}

namespace {

// Anchors by normalized directory path; weak, so the last holder's drop
// closes the directory. Never destroy an Anchor with `mu` held.
struct Registry {
  std::mutex mu;
  std::map<std::string, std::weak_ptr<const Anchor>> by_key;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: anchors may outlive static destruction
  return *r;
}

class Held final : public DirAnchor {
 public:
  explicit Held(std::shared_ptr<const Anchor> a) : a_(std::move(a)) {}
  int fd() const override { return a_->fd; }

 private:
  std::shared_ptr<const Anchor> a_;
};

std::vector<std::string> components(const std::string& p) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string::npos) j = p.size();
    std::string c = p.substr(i, j - i);
    if (!c.empty() && c != ".") out.push_back(std::move(c));
    i = j + 1;
  }
  return out;
}

// "a//b/./c/" -> "a/b/c"; "" and "./" -> "."; "/" stays.
std::string normalize(const std::string& p) {
  const bool abs = !p.empty() && p[0] == '/';
  std::string out = abs ? "/" : "";
  for (const auto& c : components(p)) {
    if (!out.empty() && out.back() != '/') out += '/';
    out += c;
  }
  return out.empty() ? "." : out;
}

// The components of `path` below directory `key` (both normalized), or
// false when `path` is not under `key` (or climbs out of it with "..").
bool below(const std::string& key, const std::string& path, std::vector<std::string>* rest) {
  std::string tail;
  if (path == key) {
    tail = "";
  } else if (key == ".") {
    if (path[0] == '/') return false;
    tail = path;
  } else if (key == "/") {
    if (path[0] != '/') return false;
    tail = path.substr(1);
  } else if (path.size() > key.size() && path.compare(0, key.size(), key) == 0 && path[key.size()] == '/') {
    tail = path.substr(key.size() + 1);
  } else {
    return false;
  }
  *rest = components(tail);
  for (const auto& c : *rest)
    if (c == "..") return false;
  return true;
}

Status other_fs(const std::string& path) {
  return Status(Errc::not_a_log,
                "is on another file system or mount than the log; alog writes only in the log's own "
                "directory")
      .at(path);
}

}  // namespace

Anchor::~Anchor() {
  ::close(fd);
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  auto it = r.by_key.find(key);
  if (it != r.by_key.end() && it->second.expired()) r.by_key.erase(it);
}

At::At(At&& o) noexcept
    : anchor_(std::move(o.anchor_)), fd_(o.fd_), owns_fd_(o.owns_fd_), dir_place_(o.dir_place_),
      name_(std::move(o.name_)) {
  o.owns_fd_ = false;
}

At::~At() {
  if (owns_fd_) ::close(fd_);
}

Status At::check_dir(const std::string& path) const {
  if (anchored() && !same_place(dir_place_, anchor_->place)) return other_fs(path);
  return {};
}

Status At::check(const std::string& path, const Place& place) const {
  if (anchored() && !same_place(place, anchor_->place)) return other_fs(path);
  return {};
}

namespace {

// The deepest live anchor holding `path`, with the components of the path
// below it in *rest; none when no anchor holds it. Never destroys an Anchor
// with the registry's lock held (what it returns is made under the lock).
std::shared_ptr<const Anchor> deepest_anchor(const std::string& path, std::vector<std::string>* rest) {
  Registry& r = registry();
  // The common case first: a plain name in a directory anchored under the
  // very spelling before it ("dir/name", as a log names its files). Keys
  // are normalized, so the path is too, and that directory is the deepest
  // anchor above it unless the path is anchored itself.
  if (const size_t slash = path.rfind('/'); slash != std::string::npos && slash > 0) {
    const std::string_view leaf = std::string_view(path).substr(slash + 1);
    if (!leaf.empty() && leaf != "." && leaf != "..") {
      std::lock_guard<std::mutex> g(r.mu);
      auto it = r.by_key.find(path.substr(0, slash));
      if (it != r.by_key.end() && !r.by_key.count(path)) {
        if (auto a = it->second.lock()) {
          rest->emplace_back(leaf);
          return a;
        }
      }
    }
  }
  const std::string p = normalize(path);
  std::lock_guard<std::mutex> g(r.mu);
  const std::string* key = nullptr;
  const std::weak_ptr<const Anchor>* held = nullptr;
  std::vector<std::string> cs;
  for (const auto& [k, w] : r.by_key)
    if ((!key || k.size() > key->size()) && !w.expired() && below(k, p, &cs)) {
      key = &k;
      held = &w;
      *rest = cs;
    }
  return held ? held->lock() : nullptr;
}

}  // namespace

Result<At> resolve(const std::string& path, bool entry) {
  std::vector<std::string> rest;
  const std::shared_ptr<const Anchor> best = deepest_anchor(path, &rest);
  At at;
  if (!best || (entry && rest.empty())) {
    at.name_ = path;
    return at;
  }
  at.anchor_ = best;
  at.fd_ = best->fd;
  at.dir_place_ = best->place;
  at.name_ = rest.empty() ? std::string(".") : std::move(rest.back());  // rest.back() is not walked below
  std::string walked = best->key;
  for (size_t i = 0; i + 1 < rest.size(); i++) {
    walked = path_join(walked, rest[i]);
    int fd;
    do {
      fd = ::openat(at.fd_, rest[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) {
      int err = errno;
      struct stat st;
      if ((err == ELOOP || err == ENOTDIR) && ::fstatat(at.fd_, rest[i].c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
        return not_regular(walked, st.st_mode, "a directory");
      return Status::io_error("open directory", walked, err);
    }
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      int err = errno;
      ::close(fd);
      return Status::io_error("stat", walked, err);
    }
    if (at.owns_fd_) ::close(at.fd_);
    at.fd_ = fd;
    at.owns_fd_ = true;
    at.dir_place_ = place_of(st, fd, "", AT_EMPTY_PATH);
  }
  return at;
}

Result<std::shared_ptr<DirAnchor>> anchor_dir(const std::string& dir) {
  const std::string key = normalize(dir);
  Registry& r = registry();
  std::shared_ptr<const Anchor> live;
  {
    std::lock_guard<std::mutex> g(r.mu);
    auto it = r.by_key.find(key);
    if (it != r.by_key.end()) live = it->second.lock();
  }
  if (live) return std::shared_ptr<DirAnchor>(std::make_shared<Held>(std::move(live)));
  // The user's own path to the directory is followed (that is their choice);
  // nothing below it ever is.
  int fd;
  do {
    fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return Status::io_error("open directory", dir, errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return Status::io_error("stat", dir, err);
  }
  auto mine = std::make_shared<const Anchor>(fd, place_of(st, fd, "", AT_EMPTY_PATH), key);
  {
    std::lock_guard<std::mutex> g(r.mu);
    auto& slot = r.by_key[key];
    live = slot.lock();  // another thread anchored it meanwhile: share that one
    if (!live) slot = mine;
  }
  if (!live) live = std::move(mine);
  // else `mine` is dropped here, unlocked; its entry check sees a live anchor
  return std::shared_ptr<DirAnchor>(std::make_shared<Held>(std::move(live)));
}

const char* kind_of(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISREG(mode)) return "a regular file";
  return "not a regular file";
}

Status not_regular(const std::string& path, mode_t mode, const char* want) {
  return Status(Errc::not_a_log, std::string("is ") + kind_of(mode) + ", not " + want +
                                     "; alog does not follow links or open special files in a log")
      .at(path);
}

Status shared_inode(const std::string& path, nlink_t links) {
  return Status(Errc::not_a_log, "has " + std::to_string(links) +
                                     " hard links; alog writes only files no other name shares")
      .at(path);
}

}  // namespace alog::detail
