// MemFs's device model (see mem_fs.h, "The device model"): the fate of every
// change that is not in a durable base yet, what a successful or failed sync
// does to it, and the post-crash state a seeded crash picks.
#include <algorithm>
#include <cstring>

#include "support/mem_fs_state.h"

namespace alog::test::memfs_detail {

Tree::~Tree() {
  for (auto& w : dirs) {
    if (auto d = w.lock()) {
      d->entries.clear();
      d->durable_entries.clear();
      d->dir_pending.clear();
    }
  }
}

void Tree::track(const NodePtr& d) {
  dirs.push_back(d);
  if (dirs.size() >= prune_at) {
    dirs.erase(std::remove_if(dirs.begin(), dirs.end(),
                              [](const std::weak_ptr<Node>& w) { return w.expired(); }),
               dirs.end());
    prune_at = std::max<size_t>(64, dirs.size() * 2);
  }
}

NodePtr Tree::new_dir() {
  auto d = std::make_shared<Node>();
  d->is_dir = true;
  track(d);
  return d;
}

void write_at(std::string& img, uint64_t off, const char* p, size_t n) {
  if (n == 0) return;
  if (off + n > img.size()) img.resize(off + n, '\0');
  std::memcpy(img.data() + off, p, n);
}

void apply_op(std::string& img, const PendingOp& op) {
  if (op.truncate) {
    img.resize(op.off, '\0');
  } else {
    write_at(img, op.off, op.bytes.data(), op.bytes.size());
  }
}

void apply_record(std::map<std::string, NodePtr>& m, const DirRecord& rec) {
  for (const auto& c : rec) {
    if (c.after) {
      m[c.name] = c.after;
    } else {
      m.erase(c.name);
    }
  }
}

namespace {

// Marks every pending item settled and folds the settled prefix into the base.
template <typename Item, typename Apply>
void settle(std::vector<Item>& items, Apply apply) {
  for (auto& it : items) {
    if (it.fate == Fate::pending) it.fate = Fate::settled;
  }
  auto first_open = std::find_if(items.begin(), items.end(),
                                 [](const Item& it) { return it.fate != Fate::settled; });
  for (auto i = items.begin(); i != first_open; ++i) apply(*i);
  items.erase(items.begin(), first_open);
}

template <typename Item>
size_t unsettled(const std::vector<Item>& items) {
  return static_cast<size_t>(std::count_if(items.begin(), items.end(),
                                           [](const Item& it) { return it.fate != Fate::settled; }));
}

}  // namespace

void settle_file(Node& n) {
  settle(n.pending, [&](const PendingOp& op) { apply_op(n.durable, op); });
}

void settle_dir(Node& n) {
  settle(n.dir_pending, [&](const DirOp& op) { apply_record(n.durable_entries, op.rec); });
}

void fail_file_sync(Node& n, bool lost) {
  if (lost) {
    n.pending.erase(std::remove_if(n.pending.begin(), n.pending.end(),
                                   [](const PendingOp& op) { return op.fate != Fate::settled; }),
                    n.pending.end());
    settle_file(n);  // only settled ops are left: fold them into the base
    return;
  }
  for (auto& op : n.pending) {
    if (op.fate == Fate::pending) op.fate = Fate::undetermined;
  }
}

void fail_dir_sync(Node& n) {
  for (auto& op : n.dir_pending) {
    if (op.fate == Fate::pending) op.fate = Fate::undetermined;
  }
}

std::string durable_view(const Node& file) {
  std::string img = file.durable;
  for (const auto& op : file.pending) {
    if (op.fate == Fate::settled) apply_op(img, op);
  }
  return img;
}

std::map<std::string, NodePtr> durable_entries_view(const Node& dir) {
  auto m = dir.durable_entries;
  for (const auto& op : dir.dir_pending) {
    if (op.fate == Fate::settled) apply_record(m, op.rec);
  }
  return m;
}

size_t unsettled_ops(const Node& file) { return unsettled(file.pending); }
size_t unsettled_records(const Node& dir) { return unsettled(dir.dir_pending); }

// ---- Crasher ----------------------------------------------------------------

bool Crasher::survives(uint32_t lost_pct) {
  if (mode == CrashMode::keep_all) return true;
  if (mode == CrashMode::drop_all) return false;
  return !chance_pct(lost_pct);
}

Crasher::Outcome Crasher::pick() {
  if (mode == CrashMode::keep_all) return keep;
  if (mode == CrashMode::drop_all) return drop;
  const uint64_t ws[5] = {w.keep, w.drop, w.torn, w.zero, w.garble};
  uint64_t total = ws[0] + ws[1] + ws[2] + ws[3] + ws[4];
  if (total == 0) return keep;
  uint64_t r = rng() % total;
  for (int i = 0; i < 5; ++i) {
    if (r < ws[i]) return static_cast<Outcome>(i);
    r -= ws[i];
  }
  return keep;
}

// An unsynced (pending or undetermined) write, as the weights pick.
void Crasher::write(std::string& img, const PendingOp& op) {
  const uint64_t len = op.bytes.size();
  switch (pick()) {
    case keep:
      apply_op(img, op);
      ++rep.writes_kept;
      break;
    case drop:
      ++rep.writes_dropped;
      break;
    case torn: {
      const uint64_t end = op.off + len;
      for (uint64_t s = op.off / MemFs::kSector; s * MemFs::kSector < end; ++s) {
        if ((rng() & 1) == 0) continue;
        uint64_t a = std::max(op.off, s * MemFs::kSector);
        uint64_t b = std::min(end, (s + 1) * MemFs::kSector);
        write_at(img, a, op.bytes.data() + (a - op.off), b - a);
      }
      ++rep.writes_torn;
      break;
    }
    case zero: {
      std::string z(len, '\0');
      write_at(img, op.off, z.data(), len);
      ++rep.writes_zeroed;
      break;
    }
    case garble: {
      std::string g(len, '\0');
      for (uint64_t i = 0; i < len; i += 8) {
        uint64_t r = rng();
        for (uint64_t j = i; j < std::min(len, i + 8); ++j) {
          g[j] = static_cast<char>(r & 0xff);
          r >>= 8;
        }
      }
      write_at(img, op.off, g.data(), len);
      ++rep.writes_garbled;
      break;
    }
  }
}

void Crasher::file(Node& n) {
  std::string img = n.durable;
  for (const PendingOp& op : n.pending) {
    if (op.fate == Fate::settled) {
      apply_op(img, op);  // synced: not counted in the report
    } else if (!op.truncate) {
      write(img, op);
    } else if (survives(w.truncate_lost_pct)) {
      apply_op(img, op);
      ++rep.truncates_kept;
    } else {
      ++rep.truncates_lost;
    }
  }
  n.data = img;
  n.durable = std::move(img);
  n.pending.clear();
}

void Crasher::visit(const NodePtr& n) {
  if (!seen.insert(n.get()).second) return;
  if (!n->is_dir) {
    file(*n);
    return;
  }
  auto m = n->durable_entries;
  for (const auto& op : n->dir_pending) {
    if (op.fate == Fate::settled) {
      apply_record(m, op.rec);  // synced: not counted in the report
    } else if (survives(w.dir_revert_pct)) {
      apply_record(m, op.rec);
      ++rep.dir_changes_kept;
    } else {
      ++rep.dir_changes_reverted;
    }
  }
  n->dir_pending.clear();
  n->entries = m;
  n->durable_entries = std::move(m);
  // Children by name: deterministic order of random draws.
  std::vector<NodePtr> kids;
  kids.reserve(n->entries.size());
  for (const auto& kv : n->entries) kids.push_back(kv.second);
  for (const auto& k : kids) visit(k);
}

}  // namespace alog::test::memfs_detail
