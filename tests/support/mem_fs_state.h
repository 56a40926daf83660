// MemFs internals shared by mem_fs.cc (the Fs calls) and mem_fs_crash.cc (the
// device model: what a sync settles, what a failed sync leaves undetermined,
// and what a crash keeps). Not for tests: use mem_fs.h.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "support/mem_fs.h"

namespace alog::test::memfs_detail {

struct Node;
using NodePtr = std::shared_ptr<Node>;

// What a change that is not in the durable base yet may become at a crash.
enum class Fate : uint8_t {
  pending,       // not synced: a crash may keep, drop (or, for a write, tear) it
  undetermined,  // covered by a failed sync: as `pending`, and no later sync settles it
  settled,       // covered by a successful sync: a crash keeps it
};

// A write (bytes at off) or a truncate (to size off) not yet in the durable image.
struct PendingOp {
  bool truncate = false;
  uint64_t off = 0;
  std::string bytes;
  Fate fate = Fate::pending;
};

// One entry change of a directory: `name` now points at `after` (null: removed).
struct DirChange {
  std::string name;
  NodePtr after;
};
// The entry changes of one operation in one directory, kept or reverted together.
using DirRecord = std::vector<DirChange>;
struct DirOp {
  DirRecord rec;
  Fate fate = Fate::pending;
};

struct Node {
  bool is_dir = false;
  // Files. The durable image is the base that every crash starts from; the ops
  // are applied on it in order, each as its fate allows.
  std::string data;     // current image
  std::string durable;  // durable base image
  std::vector<PendingOp> pending;
  std::vector<std::pair<uint64_t, uint64_t>> unreadable;  // bad sectors: [from, to)
  // Directories, the same way.
  std::map<std::string, NodePtr> entries;
  std::map<std::string, NodePtr> durable_entries;
  std::vector<DirOp> dir_pending;
};

struct Tree {
  std::map<std::string, NodePtr> roots;
  // Every directory made in this tree, so the destructor can break reference
  // cycles that odd directory renames plus crashes could create.
  std::vector<std::weak_ptr<Node>> dirs;
  size_t prune_at = 64;

  Tree() = default;
  Tree(const Tree&) = delete;
  Tree& operator=(const Tree&) = delete;
  ~Tree();

  void track(const NodePtr& d);
  NodePtr new_dir();
};

void write_at(std::string& img, uint64_t off, const char* p, size_t n);
void apply_op(std::string& img, const PendingOp& op);
void apply_record(std::map<std::string, NodePtr>& m, const DirRecord& rec);

// A successful sync: every pending op (record) becomes settled; the settled
// ones before the first undetermined one are folded into the durable base.
void settle_file(Node& n);
void settle_dir(Node& n);
// A failed sync (FORMAT.md: "a failed fsync is final"): every pending op
// (record) becomes undetermined. With `lost`, the file's pending and
// undetermined ops are dropped from what a crash can keep instead (a
// Linux-style failed fsync whose pages were marked clean).
void fail_file_sync(Node& n, bool lost);
void fail_dir_sync(Node& n);
// What a drop_all crash would leave: the base with the settled ops applied.
std::string durable_view(const Node& file);
std::map<std::string, NodePtr> durable_entries_view(const Node& dir);
// Ops (records) a crash may still drop: pending and undetermined ones.
size_t unsettled_ops(const Node& file);
size_t unsettled_records(const Node& dir);

// Computes the post-crash state of a tree in place (visit each root).
struct Crasher {
  std::mt19937_64 rng;
  CrashMode mode;
  CrashWeights w;
  CrashReport rep;
  std::unordered_set<const Node*> seen;

  void visit(const NodePtr& n);

 private:
  enum Outcome { keep, drop, torn, zero, garble };
  bool chance_pct(uint32_t pct) { return rng() % 100 < pct; }
  bool survives(uint32_t lost_pct);
  Outcome pick();
  void write(std::string& img, const PendingOp& op);
  void file(Node& n);
};

}  // namespace alog::test::memfs_detail
