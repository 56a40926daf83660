// MemFs: the in-memory, fault-injecting, crash-simulating Fs (see mem_fs.h).
//
// State: a Tree of Nodes (mem_fs_state.h). A Node is an inode: a file (current
// image, durable image, unsettled writes/truncates) or a directory (current
// entries, durable entries, unsettled changes). Roots are directories named by
// their full path. The device model (syncs, failed syncs, crashes) is in
// mem_fs_crash.cc.
// Everything sits behind Core::mu; Files and locks hold the Core, so they may
// outlive the MemFs.
#include "support/mem_fs.h"

#include "support/mem_fs_state.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace alog::test {

namespace memfs_detail {

struct ActiveRule {
  FaultRule rule;
  uint64_t seen = 0;
};

// A fault picked for a call. `dead`: the power was already off.
struct Fired {
  FaultKind kind = FaultKind::eio;
  std::optional<uint64_t> short_bytes;
  bool dead = false;
};

struct Core {
  mutable std::mutex mu;
  std::unique_ptr<Tree> tree = std::make_unique<Tree>();
  uint64_t gen = 1;  // bumped by crash/restore/destruction: older handles are stale
  std::vector<ActiveRule> rules;
  std::array<uint64_t, kOpCount> counts{};
  uint64_t injected = 0;
  bool off = false;  // power is off
  std::set<const Node*> locks;

  // Counts a call of `op` and returns the fault to inject into it, if any.
  std::optional<Fired> check(Op op, const std::string& path) {
    ++counts[static_cast<size_t>(op)];
    if (off) return Fired{FaultKind::eio, std::nullopt, true};
    std::optional<Fired> fired;
    for (size_t i = 0; i < rules.size();) {
      ActiveRule& ar = rules[i];
      if (ar.rule.op != op ||
          (!ar.rule.path_contains.empty() && path.find(ar.rule.path_contains) == std::string::npos)) {
        ++i;
        continue;
      }
      ++ar.seen;
      bool hit = ar.rule.sticky ? ar.seen >= ar.rule.nth : ar.seen == ar.rule.nth;
      if (hit && !fired) {
        fired = Fired{ar.rule.kind, ar.rule.short_bytes, false};
        ++injected;
      }
      if (!ar.rule.sticky && ar.seen >= ar.rule.nth) {
        rules.erase(rules.begin() + static_cast<std::ptrdiff_t>(i));
        continue;
      }
      ++i;
    }
    if (fired && fired->kind == FaultKind::power_off) off = true;
    return fired;
  }
};

namespace {

int fault_errno(const Fired& f) {
  if (f.dead) return EIO;
  return (f.kind == FaultKind::enospc || f.kind == FaultKind::short_write_enospc) ? ENOSPC : EIO;
}

Status fault_status(const Fired& f, const std::string& what, const std::string& path) {
  std::string w = what + (f.dead ? std::string(" (injected: power is off)")
                                 : std::string(" (injected ") + fault_name(f.kind) + ")");
  return Status::io_error(w, path, fault_errno(f));
}

bool is_short(FaultKind k) {
  return k == FaultKind::short_write || k == FaultKind::short_write_enospc;
}

std::string normalize(const std::string& p) {
  if (p.find("//") == std::string::npos && (p.size() <= 1 || p.back() != '/')) return p;
  std::string out;
  out.reserve(p.size());
  for (char c : p) {
    if (c == '/' && !out.empty() && out.back() == '/') continue;
    out.push_back(c);
  }
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

// Whether normalized path p is r or lies below r.
bool under(const std::string& p, const std::string& r) {
  if (p == r) return true;
  if (r == "/") return p.size() > 1 && p[0] == '/';
  return p.size() > r.size() && p.compare(0, r.size(), r) == 0 && p[r.size()] == '/';
}

// The root covering p (the longest), or null.
const std::pair<const std::string, NodePtr>* find_root(const Tree& t, const std::string& p) {
  const std::pair<const std::string, NodePtr>* best = nullptr;
  for (const auto& kv : t.roots) {
    if (under(p, kv.first) && (!best || kv.first.size() > best->first.size())) best = &kv;
  }
  return best;
}

// Where a path points: a root itself, or entry `name` of directory `dir`.
struct Where {
  int err = 0;
  NodePtr root;
  Node* dir = nullptr;
  std::string name;
  std::vector<Node*> chain;  // directories walked, root first, `dir` last
};

Where locate(const Tree& t, const std::string& raw, bool durable) {
  Where w;
  std::string p = normalize(raw);
  const auto* r = p.empty() ? nullptr : find_root(t, p);
  if (!r) {
    w.err = ENOENT;
    return w;
  }
  if (p == r->first) {
    w.root = r->second;
    return w;
  }
  std::string rest = r->first == "/" ? p.substr(1) : p.substr(r->first.size() + 1);
  std::vector<std::string> comps;
  size_t start = 0;
  while (true) {
    size_t slash = rest.find('/', start);
    comps.push_back(rest.substr(start, slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  Node* cur = r->second.get();
  w.chain.push_back(cur);
  for (size_t i = 0; i + 1 < comps.size(); ++i) {
    std::map<std::string, NodePtr> dm;
    if (durable) dm = durable_entries_view(*cur);
    const auto& m = durable ? dm : cur->entries;
    auto it = m.find(comps[i]);
    if (it == m.end()) {
      w.err = ENOENT;
      return w;
    }
    if (!it->second->is_dir) {
      w.err = ENOTDIR;
      return w;
    }
    cur = it->second.get();
    w.chain.push_back(cur);
  }
  w.dir = cur;
  w.name = comps.back();
  return w;
}

NodePtr lookup(const Where& w, bool durable) {
  if (w.err) return nullptr;
  if (w.root) return w.root;
  std::map<std::string, NodePtr> dm;
  if (durable) dm = durable_entries_view(*w.dir);
  const auto& m = durable ? dm : w.dir->entries;
  auto it = m.find(w.name);
  return it == m.end() ? nullptr : it->second;
}

NodePtr find(const Tree& t, const std::string& path, bool durable, int* err = nullptr) {
  Where w = locate(t, path, durable);
  NodePtr n = lookup(w, durable);
  if (err) *err = w.err ? w.err : (n ? 0 : ENOENT);
  return n;
}

// A directory change made now: current entries change, the record is pending.
void change(Node* dir, DirRecord rec) {
  apply_record(dir->entries, rec);
  dir->dir_pending.push_back(DirOp{std::move(rec), Fate::pending});
}

struct Cloner {
  Tree& out;
  std::unordered_map<const Node*, NodePtr> memo;

  NodePtr clone(const NodePtr& n) {
    if (!n) return nullptr;
    auto it = memo.find(n.get());
    if (it != memo.end()) return it->second;
    auto c = std::make_shared<Node>();
    memo.emplace(n.get(), c);
    c->is_dir = n->is_dir;
    c->data = n->data;
    c->durable = n->durable;
    c->pending = n->pending;
    if (n->is_dir) {
      out.track(c);
      for (const auto& [k, v] : n->entries) c->entries[k] = clone(v);
      for (const auto& [k, v] : n->durable_entries) c->durable_entries[k] = clone(v);
      for (const auto& op : n->dir_pending) {
        DirRecord r2;
        for (const auto& ch : op.rec) r2.push_back(DirChange{ch.name, clone(ch.after)});
        c->dir_pending.push_back(DirOp{std::move(r2), op.fate});
      }
    }
    return c;
  }
};

std::unique_ptr<Tree> clone_tree(const Tree& t) {
  auto out = std::make_unique<Tree>();
  Cloner cl{*out, {}};
  for (const auto& [k, v] : t.roots) out->roots[k] = cl.clone(v);
  return out;
}

class MemFile final : public File {
 public:
  MemFile(std::shared_ptr<Core> core, NodePtr node, std::string path, bool writable, uint64_t gen)
      : core_(std::move(core)),
        node_(std::move(node)),
        path_(std::move(path)),
        writable_(writable),
        gen_(gen) {}

  Result<size_t> pread(void* buf, size_t n, uint64_t off) override {
    std::lock_guard<std::mutex> g(core_->mu);
    if (stale()) return stale_status("read");
    if (auto f = core_->check(Op::read, path_)) return fault_status(*f, "read", path_).at(path_, off);
    const std::string& d = node_->data;
    const uint64_t end = off < d.size() ? off + std::min<uint64_t>(n, d.size() - off) : off;
    for (const auto& [from, to] : node_->unreadable)
      if (off < to && from < end)
        return Status::io_error("read (bad sector)", path_, EIO).at(path_, std::max(off, from));
    if (off >= d.size() || n == 0) return size_t{0};
    size_t k = static_cast<size_t>(std::min<uint64_t>(n, d.size() - off));
    std::memcpy(buf, d.data() + off, k);
    return k;
  }

  Status pwritev(const struct iovec* iov, int iovcnt, uint64_t off) override {
    std::lock_guard<std::mutex> g(core_->mu);
    if (stale()) return stale_status("write");
    auto f = core_->check(Op::write, path_);
    if (f && (f->dead || (!is_short(f->kind) && f->kind != FaultKind::power_off)))
      return fault_status(*f, "write", path_).at(path_, off);
    if (!writable_) return Status::io_error("write", path_, EBADF).at(path_, off);
    if (iovcnt < 0) return Status::io_error("write", path_, EINVAL).at(path_, off);
    std::string buf;
    for (int i = 0; i < iovcnt; ++i) buf.append(static_cast<const char*>(iov[i].iov_base), iov[i].iov_len);
    if (off > MemFs::kMaxFileSize || buf.size() > MemFs::kMaxFileSize - off)
      return Status::io_error("write", path_, EFBIG).at(path_, off);
    size_t k = buf.size();
    if (f && is_short(f->kind)) {
      k = f->short_bytes ? static_cast<size_t>(std::min<uint64_t>(*f->short_bytes, buf.size()))
                         : static_cast<size_t>((buf.size() / 2) / MemFs::kSector * MemFs::kSector);
    }
    if (k > 0) {
      buf.resize(k);
      write_at(node_->data, off, buf.data(), k);
      node_->pending.push_back(PendingOp{false, off, std::move(buf)});
    }
    if (f) return fault_status(*f, "write", path_).at(path_, off);
    return {};
  }

  Status truncate(uint64_t size) override {
    std::lock_guard<std::mutex> g(core_->mu);
    if (stale()) return stale_status("truncate");
    auto f = core_->check(Op::truncate, path_);
    if (f && (f->dead || f->kind != FaultKind::power_off)) return fault_status(*f, "truncate", path_);
    if (!writable_) return Status::io_error("truncate", path_, EBADF);
    if (size > MemFs::kMaxFileSize) return Status::io_error("truncate", path_, EFBIG);
    node_->data.resize(size, '\0');
    node_->pending.push_back(PendingOp{true, size, {}});
    if (f) return fault_status(*f, "truncate", path_);
    return {};
  }

  Status datasync() override {
    std::lock_guard<std::mutex> g(core_->mu);
    if (stale()) return stale_status("fdatasync");
    if (auto f = core_->check(Op::sync, path_)) {
      // A failed fsync is final (FORMAT.md): what it covered may or may not
      // reach the disk, whatever later syncs do. Power off: the crash decides.
      if (!f->dead && f->kind != FaultKind::power_off)
        fail_file_sync(*node_, f->kind == FaultKind::sync_lose);
      return fault_status(*f, "fdatasync", path_);
    }
    settle_file(*node_);
    return {};
  }

  Result<uint64_t> size() override {
    std::lock_guard<std::mutex> g(core_->mu);
    if (stale()) return stale_status("stat");
    return static_cast<uint64_t>(node_->data.size());
  }

  const std::string& path() const override { return path_; }

 private:
  bool stale() const { return gen_ != core_->gen; }
  Status stale_status(const char* what) const {
    return Status::io_error(std::string(what) + " (file invalidated by a crash or restore)", path_, EIO);
  }

  std::shared_ptr<Core> core_;
  NodePtr node_;
  std::string path_;
  bool writable_;
  uint64_t gen_;
};

class MemLock final : public FileLock {
 public:
  MemLock(std::shared_ptr<Core> core, NodePtr node, uint64_t gen)
      : core_(std::move(core)), node_(std::move(node)), gen_(gen) {}
  ~MemLock() override {
    std::lock_guard<std::mutex> g(core_->mu);
    if (gen_ == core_->gen) core_->locks.erase(node_.get());
  }

 private:
  std::shared_ptr<Core> core_;
  NodePtr node_;
  uint64_t gen_;
};

}  // namespace
}  // namespace memfs_detail

using memfs_detail::Core;
using memfs_detail::DirRecord;
using memfs_detail::Fired;
using memfs_detail::Node;
using memfs_detail::NodePtr;
using memfs_detail::Where;

const char* op_name(Op op) {
  switch (op) {
    case Op::write: return "write";
    case Op::sync: return "sync";
    case Op::truncate: return "truncate";
    case Op::rename: return "rename";
    case Op::unlink: return "unlink";
    case Op::sync_dir: return "sync_dir";
    case Op::open: return "open";
    case Op::create: return "create";
    case Op::read: return "read";
    case Op::mkdir: return "mkdir";
    case Op::list: return "list";
    case Op::stat: return "stat";
    case Op::lock: return "lock";
  }
  return "unknown";
}

const char* fault_name(FaultKind kind) {
  switch (kind) {
    case FaultKind::eio: return "eio";
    case FaultKind::enospc: return "enospc";
    case FaultKind::short_write: return "short_write";
    case FaultKind::short_write_enospc: return "short_write_enospc";
    case FaultKind::sync_lose: return "sync_lose";
    case FaultKind::power_off: return "power_off";
  }
  return "unknown";
}

MemFs::MemFs() : core_(std::make_shared<Core>()) {}

MemFs::MemFs(const Snapshot& snap) : core_(std::make_shared<Core>()) {
  if (snap.tree_) core_->tree = memfs_detail::clone_tree(*snap.tree_);
}

MemFs::~MemFs() {
  std::lock_guard<std::mutex> g(core_->mu);
  ++core_->gen;  // Files and locks still around become stale
  core_->locks.clear();
}

// ---- alog::Fs ---------------------------------------------------------------

Result<std::unique_ptr<File>> MemFs::open(const std::string& path, OpenMode mode) {
  std::lock_guard<std::mutex> g(core_->mu);
  const bool creating = mode == OpenMode::create_excl || mode == OpenMode::create_trunc;
  if (auto f = core_->check(creating ? Op::create : Op::open, path))
    return memfs_detail::fault_status(*f, "open", path);
  Where w = memfs_detail::locate(*core_->tree, path, false);
  if (w.err) return Status::io_error("open", path, w.err);
  if (w.root) return Status::io_error("open", path, EISDIR);
  NodePtr n = memfs_detail::lookup(w, false);
  if (n) {
    if (n->is_dir) return Status::io_error("open", path, EISDIR);
    if (mode == OpenMode::create_excl) return Status::io_error("open", path, EEXIST);
    if (mode == OpenMode::create_trunc) {
      n->data.clear();
      n->pending.push_back(memfs_detail::PendingOp{true, 0, {}});
    }
  } else {
    if (!creating) return Status::io_error("open", path, ENOENT);
    n = std::make_shared<Node>();
    memfs_detail::change(w.dir, DirRecord{{w.name, n}});
  }
  return std::unique_ptr<File>(
      new memfs_detail::MemFile(core_, n, path, mode != OpenMode::read, core_->gen));
}

Status MemFs::rename(const std::string& from, const std::string& to) {
  std::lock_guard<std::mutex> g(core_->mu);
  const std::string what = "rename to " + to;
  if (auto f = core_->check(Op::rename, from)) return memfs_detail::fault_status(*f, what, from);
  auto bad = [&](int e) { return Status::io_error(what, from, e); };
  const auto& t = *core_->tree;
  Where a = memfs_detail::locate(t, from, false);
  if (a.err) return bad(a.err);
  if (a.root) return bad(EBUSY);
  NodePtr src = memfs_detail::lookup(a, false);
  if (!src) return bad(ENOENT);
  Where b = memfs_detail::locate(t, to, false);
  if (b.err) return bad(b.err);
  if (b.root) return bad(EBUSY);
  NodePtr dst = memfs_detail::lookup(b, false);
  if (dst == src) return {};
  if (src->is_dir) {
    if (dst && !dst->is_dir) return bad(ENOTDIR);
    if (dst && !dst->entries.empty()) return bad(ENOTEMPTY);
    for (const Node* c : b.chain) {
      if (c == src.get()) return bad(EINVAL);
    }
  } else if (dst && dst->is_dir) {
    return bad(EISDIR);
  }
  if (a.dir == b.dir) {
    memfs_detail::change(a.dir, DirRecord{{a.name, nullptr}, {b.name, src}});
  } else {
    memfs_detail::change(a.dir, DirRecord{{a.name, nullptr}});
    memfs_detail::change(b.dir, DirRecord{{b.name, src}});
  }
  return {};
}

Status MemFs::unlink(const std::string& path) {
  std::lock_guard<std::mutex> g(core_->mu);
  if (auto f = core_->check(Op::unlink, path)) return memfs_detail::fault_status(*f, "unlink", path);
  Where w = memfs_detail::locate(*core_->tree, path, false);
  if (w.err) return Status::io_error("unlink", path, w.err);
  if (w.root) return Status::io_error("unlink", path, EISDIR);
  NodePtr n = memfs_detail::lookup(w, false);
  if (!n) return Status::io_error("unlink", path, ENOENT);
  if (n->is_dir) return Status::io_error("unlink", path, EISDIR);
  memfs_detail::change(w.dir, DirRecord{{w.name, nullptr}});
  return {};
}

Status MemFs::mkdir(const std::string& path) {
  std::lock_guard<std::mutex> g(core_->mu);
  if (auto f = core_->check(Op::mkdir, path)) return memfs_detail::fault_status(*f, "mkdir", path);
  auto& t = *core_->tree;
  const std::string p = memfs_detail::normalize(path);
  if (p.empty()) return Status::io_error("mkdir", path, ENOENT);
  if (!memfs_detail::find_root(t, p)) {
    for (const auto& kv : t.roots) {
      if (memfs_detail::under(kv.first, p))
        return Status::io_error("mkdir (a root cannot contain another root)", path, EINVAL);
    }
    t.roots[p] = t.new_dir();
    return {};
  }
  Where w = memfs_detail::locate(t, p, false);
  if (w.root) return {};
  if (w.err) return Status::io_error("mkdir", path, w.err);
  if (NodePtr n = memfs_detail::lookup(w, false)) {
    if (n->is_dir) return {};
    return Status::io_error("mkdir", path, EEXIST);
  }
  memfs_detail::change(w.dir, DirRecord{{w.name, t.new_dir()}});
  return {};
}

Result<std::vector<std::string>> MemFs::list(const std::string& dir) {
  std::lock_guard<std::mutex> g(core_->mu);
  if (auto f = core_->check(Op::list, dir)) return memfs_detail::fault_status(*f, "list directory", dir);
  int err = 0;
  NodePtr n = memfs_detail::find(*core_->tree, dir, false, &err);
  if (!n) return Status::io_error("list directory", dir, err);
  if (!n->is_dir) return Status::io_error("list directory", dir, ENOTDIR);
  std::vector<std::string> names;
  names.reserve(n->entries.size());
  for (const auto& kv : n->entries) names.push_back(kv.first);
  return names;
}

Status MemFs::sync_dir(const std::string& dir) {
  std::lock_guard<std::mutex> g(core_->mu);
  auto f = core_->check(Op::sync_dir, dir);
  if (f && (f->dead || f->kind == FaultKind::power_off)) return memfs_detail::fault_status(*f, "fsync directory", dir);
  int err = 0;
  NodePtr n = memfs_detail::find(*core_->tree, dir, false, &err);
  if (!n) return f ? memfs_detail::fault_status(*f, "fsync directory", dir) : Status::io_error("open directory", dir, err);
  if (!n->is_dir) return f ? memfs_detail::fault_status(*f, "fsync directory", dir) : Status::io_error("open directory", dir, ENOTDIR);
  if (f) {
    // A failed fsync is final (FORMAT.md): the changes it covered may or may
    // not be durable, and no later sync settles them.
    memfs_detail::fail_dir_sync(*n);
    return memfs_detail::fault_status(*f, "fsync directory", dir);
  }
  memfs_detail::settle_dir(*n);
  return {};
}

Result<std::unique_ptr<FileLock>> MemFs::lock(const std::string& path) {
  std::lock_guard<std::mutex> g(core_->mu);
  if (auto f = core_->check(Op::lock, path)) return memfs_detail::fault_status(*f, "open lock file", path);
  Where w = memfs_detail::locate(*core_->tree, path, false);
  if (w.err) return Status::io_error("open lock file", path, w.err);
  if (w.root) return Status::io_error("open lock file", path, EISDIR);
  NodePtr n = memfs_detail::lookup(w, false);
  if (!n) {
    n = std::make_shared<Node>();
    memfs_detail::change(w.dir, DirRecord{{w.name, n}});
  }
  if (n->is_dir) return Status::io_error("open lock file", path, EISDIR);
  if (core_->locks.count(n.get()))
    return Status(Errc::locked, "another writer holds the lock", EWOULDBLOCK).at(path);
  core_->locks.insert(n.get());
  return std::unique_ptr<FileLock>(new memfs_detail::MemLock(core_, n, core_->gen));
}

bool MemFs::is_locked(const std::string& path) {
  std::lock_guard<std::mutex> g(core_->mu);
  NodePtr n = memfs_detail::find(*core_->tree, path, false);
  return n && core_->locks.count(n.get()) > 0;
}

Result<uint64_t> MemFs::available(const std::string& dir) {
  (void)dir;
  return available_.load();
}

void MemFs::set_available(uint64_t bytes) { available_ = bytes; }

Result<FileStat> MemFs::stat(const std::string& path) {
  std::lock_guard<std::mutex> g(core_->mu);
  if (auto f = core_->check(Op::stat, path)) return memfs_detail::fault_status(*f, "stat", path);
  FileStat st;
  NodePtr n = memfs_detail::find(*core_->tree, path, false);
  if (!n) return st;
  st.exists = true;
  st.is_dir = n->is_dir;
  st.is_regular = !n->is_dir;
  st.size = n->is_dir ? 0 : n->data.size();
  return st;
}

// ---- Faults -----------------------------------------------------------------

void MemFs::fail(Op op, uint64_t nth, FaultKind kind, bool sticky) {
  FaultRule r;
  r.op = op;
  r.nth = nth;
  r.kind = kind;
  r.sticky = sticky;
  add_fault(std::move(r));
}

void MemFs::add_fault(FaultRule rule) {
  std::lock_guard<std::mutex> g(core_->mu);
  rule.nth = std::max<uint64_t>(rule.nth, 1);
  core_->rules.push_back(memfs_detail::ActiveRule{std::move(rule), 0});
}

void MemFs::fail_all_from(Op op, FaultKind kind) { fail(op, 1, kind, true); }

void MemFs::clear_faults() {
  std::lock_guard<std::mutex> g(core_->mu);
  core_->rules.clear();
}

uint64_t MemFs::faults_injected() const {
  std::lock_guard<std::mutex> g(core_->mu);
  return core_->injected;
}

uint64_t MemFs::calls(Op op) const {
  std::lock_guard<std::mutex> g(core_->mu);
  return core_->counts[static_cast<size_t>(op)];
}

void MemFs::reset_calls() {
  std::lock_guard<std::mutex> g(core_->mu);
  core_->counts.fill(0);
}

void MemFs::power_off() {
  std::lock_guard<std::mutex> g(core_->mu);
  core_->off = true;
}

bool MemFs::powered_off() const {
  std::lock_guard<std::mutex> g(core_->mu);
  return core_->off;
}

// ---- Crashes and snapshots --------------------------------------------------

namespace {
CrashReport crash_tree(Core& c, uint64_t seed, CrashMode mode, const CrashWeights& w) {
  memfs_detail::Crasher cr{std::mt19937_64(seed), mode, w, {}, {}};
  for (const auto& kv : c.tree->roots) cr.visit(kv.second);
  ++c.gen;
  c.locks.clear();
  c.off = false;
  return cr.rep;
}
}  // namespace

CrashReport MemFs::crash(uint64_t seed, CrashMode mode) {
  std::lock_guard<std::mutex> g(core_->mu);
  return crash_tree(*core_, seed, mode, CrashWeights{});
}

CrashReport MemFs::crash(uint64_t seed, const CrashWeights& weights) {
  std::lock_guard<std::mutex> g(core_->mu);
  return crash_tree(*core_, seed, CrashMode::random, weights);
}

MemFs::Snapshot MemFs::snapshot() const {
  std::lock_guard<std::mutex> g(core_->mu);
  Snapshot s;
  s.tree_ = std::shared_ptr<const memfs_detail::Tree>(memfs_detail::clone_tree(*core_->tree));
  return s;
}

void MemFs::restore(const Snapshot& snap) {
  std::unique_ptr<memfs_detail::Tree> old;
  {
    std::lock_guard<std::mutex> g(core_->mu);
    old = std::move(core_->tree);
    core_->tree = snap.tree_ ? memfs_detail::clone_tree(*snap.tree_) : std::make_unique<memfs_detail::Tree>();
    ++core_->gen;
    core_->locks.clear();
    core_->off = false;
  }
  // `old` is destroyed here, outside the lock.
}

// ---- Inspection and setup ---------------------------------------------------

std::optional<std::string> MemFs::current_image(const std::string& path) const {
  std::lock_guard<std::mutex> g(core_->mu);
  NodePtr n = memfs_detail::find(*core_->tree, path, false);
  if (!n || n->is_dir) return std::nullopt;
  return n->data;
}

std::optional<std::string> MemFs::durable_image(const std::string& path) const {
  std::lock_guard<std::mutex> g(core_->mu);
  NodePtr n = memfs_detail::find(*core_->tree, path, true);
  if (!n || n->is_dir) return std::nullopt;
  return memfs_detail::durable_view(*n);
}

Result<std::string> MemFs::read_all(const std::string& path) const {
  std::lock_guard<std::mutex> g(core_->mu);
  int err = 0;
  NodePtr n = memfs_detail::find(*core_->tree, path, false, &err);
  if (!n) return Status::io_error("read_all", path, err);
  if (n->is_dir) return Status::io_error("read_all", path, EISDIR);
  return n->data;
}

Status MemFs::set_unreadable(const std::string& path, uint64_t from, uint64_t to) {
  std::lock_guard<std::mutex> g(core_->mu);
  Where w = memfs_detail::locate(*core_->tree, path, false);
  if (w.err) return Status::io_error("set_unreadable", path, w.err);
  NodePtr n = w.root ? nullptr : memfs_detail::lookup(w, false);
  if (!n || n->is_dir) return Status::io_error("set_unreadable", path, n ? EISDIR : ENOENT);
  n->unreadable.push_back({from, to});
  return {};
}

Status MemFs::set_contents(const std::string& path, std::string_view bytes) {
  std::lock_guard<std::mutex> g(core_->mu);
  if (bytes.size() > kMaxFileSize) return Status::io_error("set_contents", path, EFBIG);
  Where w = memfs_detail::locate(*core_->tree, path, false);
  if (w.err) return Status::io_error("set_contents", path, w.err);
  if (w.root) return Status::io_error("set_contents", path, EISDIR);
  NodePtr n = memfs_detail::lookup(w, false);
  if (n && n->is_dir) return Status::io_error("set_contents", path, EISDIR);
  if (!n) {
    n = std::make_shared<Node>();
    w.dir->entries[w.name] = n;
  }
  // Durable at once, over any unsettled change of the name before it.
  w.dir->dir_pending.push_back(memfs_detail::DirOp{DirRecord{{w.name, n}}, memfs_detail::Fate::settled});
  n->data.assign(bytes.data(), bytes.size());
  n->durable = n->data;
  n->pending.clear();
  return {};
}

bool MemFs::exists(const std::string& path) const {
  std::lock_guard<std::mutex> g(core_->mu);
  return memfs_detail::find(*core_->tree, path, false) != nullptr;
}

bool MemFs::durably_exists(const std::string& path) const {
  std::lock_guard<std::mutex> g(core_->mu);
  return memfs_detail::find(*core_->tree, path, true) != nullptr;
}

std::vector<std::string> MemFs::durable_list(const std::string& dir) const {
  std::lock_guard<std::mutex> g(core_->mu);
  std::vector<std::string> names;
  NodePtr n = memfs_detail::find(*core_->tree, dir, true);
  if (!n || !n->is_dir) return names;
  for (const auto& kv : memfs_detail::durable_entries_view(*n)) names.push_back(kv.first);
  return names;
}

size_t MemFs::pending_ops(const std::string& path) const {
  std::lock_guard<std::mutex> g(core_->mu);
  NodePtr n = memfs_detail::find(*core_->tree, path, false);
  return n && !n->is_dir ? memfs_detail::unsettled_ops(*n) : 0;
}

size_t MemFs::pending_dir_changes(const std::string& dir) const {
  std::lock_guard<std::mutex> g(core_->mu);
  NodePtr n = memfs_detail::find(*core_->tree, dir, false);
  return n && n->is_dir ? memfs_detail::unsettled_records(*n) : 0;
}

}  // namespace alog::test
