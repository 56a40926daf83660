// MemFs: an in-memory, fault-injecting, crash-simulating file system behind the
// library's Fs/File seam (lib/alog/fs.h), for unit, I/O-error-loop and crash-state
// tests.
//
// What it models
// --------------
// * POSIX semantics for the calls of the seam: open modes, positional reads and
//   writes, truncate (extending zero-fills), rename over an existing name
//   (replaces it), unlink, mkdir, list, stat, and flock-style locks. Errors come
//   back through Status::io_error(what, path, errno) with the errno a Linux file
//   system would give (ENOENT, EEXIST, EISDIR, ENOTDIR, ENOTEMPTY, EBADF, EINVAL).
// * Files are inodes; directory entries point at them. An open File keeps working
//   after its name is renamed or unlinked, like an fd.
// * Paths are plain strings: repeated '/' collapse and a trailing '/' is dropped;
//   "." and ".." are NOT interpreted. "a/b/c" is entry "c" of directory "a/b".
//   Directories exist only once mkdir'ed. A mkdir whose path lies under no
//   existing directory creates a *root* (the test's base directory, durable at
//   once); below a root the parent must exist (else ENOENT).
// * The device model of /work/shared/FORMAT.md ("Device model"). Every file has
//   a *current* image (what reads see) and a *durable* image (what survives a
//   crash). Every write and truncate since the file's last successful datasync
//   is kept, in order, as a pending operation; every directory change (create,
//   rename, unlink, mkdir) is pending in its directory. A rename between two
//   directories is a removal pending in the source and an addition pending in
//   the target (each needs its own sync_dir); a rename inside one directory is
//   a single change, kept or reverted as a whole. A successful datasync() /
//   sync_dir() settles what is pending in that file / directory: every crash
//   keeps it. A *failed* one is final ("A failed fsync is final"): what was
//   pending becomes undetermined: it still reads back, a crash may keep or
//   drop it (a write: or any subset of its 512-byte sectors) like anything
//   unsynced, and no later sync settles it (only a new write or directory
//   change of the same bytes or name can). FaultKind::sync_lose is the
//   harshest case: the writes it covered are lost at any crash.
//   At a crash, every unsynced write (pending or undetermined), including
//   the ones the process that made them never synced (a killed process's page
//   cache), may be absent, present, or present in any subset of its sectors.
// * crash() replaces the state, in place, with a possible post-power-loss state
//   (see CrashMode); faults (fail(), power_off()) make calls fail like a sick disk.
//
// Thread safety: every method, and every call on Files and FileLocks it hands
// out, takes one internal mutex; Files and locks may outlive the MemFs (their
// calls then fail with EIO).
//
// Typical use:
//   alog::test::MemFs fs;
//   REQUIRE(fs.mkdir("/db"));
//   ... run the library against fs ...
//   auto snap = fs.snapshot();
//   for (uint64_t seed = 0; seed < 1000; ++seed) {
//     fs.restore(snap);
//     fs.crash(seed, alog::test::CrashMode::random);
//     ... reopen and check; print seed on failure ...
//   }
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "alog/fs.h"
#include "alog/status.h"

namespace alog::test {

namespace memfs_detail {
struct Core;
struct Tree;
}  // namespace memfs_detail

// The kinds of call that are counted and can be made to fail.
enum class Op : uint8_t {
  write,     // File::pwritev / pwrite
  sync,      // File::datasync
  truncate,  // File::truncate
  rename,    // Fs::rename
  unlink,    // Fs::unlink
  sync_dir,  // Fs::sync_dir
  open,      // Fs::open with OpenMode::read or read_write
  create,    // Fs::open with OpenMode::create_excl or create_trunc
  read,      // File::pread
  mkdir,     // Fs::mkdir
  list,      // Fs::list
  stat,      // Fs::stat
  lock,      // Fs::lock
};
inline constexpr size_t kOpCount = 13;
// "write", "sync", ... (the enumerator's name).
const char* op_name(Op op);

// What an injected fault does. Unless stated, the failed call changes nothing,
// except that a failed datasync or sync_dir is final (see the device model).
enum class FaultKind : uint8_t {
  eio,                 // fail with EIO
  enospc,              // fail with ENOSPC
  // Writes only (elsewhere like eio / enospc): write a prefix of the bytes, then
  // fail with EIO (short_write) or ENOSPC (short_write_enospc). The prefix is
  // FaultRule::short_bytes if set (clamped to the write's length), otherwise half
  // the write rounded down to a multiple of 512 bytes (so 0 for writes < 1024).
  // The prefix is a pending write like any other.
  short_write,
  short_write_enospc,
  // datasync only (elsewhere like eio): a Linux-style failed fsync whose pages
  // were marked clean unwritten. Returns EIO and drops the file's unsettled
  // operations from what can become durable: they still read back from the
  // current image until a crash, and the next datasync succeeds without making
  // them durable. (Any other failed datasync or sync_dir leaves what it covered
  // undetermined: see "The device model" above.)
  sync_lose,
  // Power failure at this call: the call fails with EIO, and so does every later
  // call of any kind until crash() or restore(). A write or truncate that hits
  // power_off is applied as a pending operation first (the crash may keep, tear
  // or drop it); any other call changes nothing.
  power_off,
};
const char* fault_name(FaultKind kind);

// One fault rule. Each rule counts the calls of its `op` (on matching paths)
// made since the rule was added; the nth of them (1 = the next one) fails, and
// with `sticky` every later one too. A one-shot rule is spent once its nth call
// has come. When several rules pick the same call, the earliest-added applies.
struct FaultRule {
  Op op = Op::write;
  uint64_t nth = 1;
  FaultKind kind = FaultKind::eio;
  bool sticky = false;
  // Only calls whose path contains this substring count (empty: all calls). For
  // rename, the source path is matched.
  std::string path_contains;
  // Length of the prefix a short write writes; see FaultKind::short_write.
  std::optional<uint64_t> short_bytes;
};

// How crash() treats what is not durable.
enum class CrashMode : uint8_t {
  keep_all,  // every unsynced write, truncate and directory change survives
             // (undetermined ones included); a process kill is not a crash:
             // to model one, drop the Log and keep using the MemFs (the page
             // cache outlives the process, nothing becomes durable)
  drop_all,  // only durable data and the durable namespace survive (every
             // pending and undetermined change is dropped)
  random,    // each pending item decided independently by a seeded
             // std::mt19937_64, with CrashWeights{} (below)
};

// Odds for CrashMode::random. Each unsynced write is, with weight:
struct CrashWeights {
  uint32_t drop = 1;    // absent
  uint32_t keep = 1;    // present
  uint32_t torn = 1;    // present in part: each 512-byte sector it touches
                        // (sectors aligned to file offsets) kept or not, 50/50
  uint32_t zero = 1;    // its whole range reads as zero bytes
  uint32_t garble = 1;  // its whole range reads as random bytes
  uint32_t truncate_lost_pct = 50;  // chance (%) an unsynced truncate is absent
  uint32_t dir_revert_pct = 50;     // chance (%) an unsynced directory change is reverted

  // Only what FORMAT.md's device model allows: absent, present, or any subset
  // of its sectors (no zeroed or garbled writes).
  static CrashWeights format_model() { return CrashWeights{1, 1, 1, 0, 0, 50, 50}; }
};

// What one crash did (for assertions on coverage and for debugging).
struct CrashReport {
  uint64_t writes_kept = 0, writes_dropped = 0, writes_torn = 0, writes_zeroed = 0,
           writes_garbled = 0;
  uint64_t truncates_kept = 0, truncates_lost = 0;
  uint64_t dir_changes_kept = 0, dir_changes_reverted = 0;
};

class MemFs final : public alog::Fs {
 public:
  static constexpr uint64_t kSector = 512;
  // Files are dense strings; a write or truncate beyond this fails with EFBIG.
  static constexpr uint64_t kMaxFileSize = uint64_t{1} << 32;

  // A frozen copy of the whole namespace and every file (current, durable and
  // pending state). Cheap to keep; restore() can use it any number of times.
  // Faults, counters and locks are not part of it.
  class Snapshot {
   public:
    Snapshot() = default;
    bool empty() const { return tree_ == nullptr; }

   private:
    friend class MemFs;
    std::shared_ptr<const memfs_detail::Tree> tree_;
  };

  MemFs();
  // A file system whose disk state is the snapshot's (no faults, zero counters).
  explicit MemFs(const Snapshot& snap);
  ~MemFs() override;
  MemFs(const MemFs&) = delete;
  MemFs& operator=(const MemFs&) = delete;

  // ---- alog::Fs ----------------------------------------------------------
  // Opening a directory fails with EISDIR in every mode. read_write and read
  // need the file (ENOENT); create_excl fails with EEXIST if the name exists;
  // create_trunc on an existing file records a pending truncate to 0. Creating
  // a name is a pending change of its directory. A File opened with
  // OpenMode::read refuses pwritev/truncate with EBADF (datasync is allowed).
  Result<std::unique_ptr<File>> open(const std::string& path, OpenMode mode) override;
  // POSIX rename: replaces an existing `to` (a file by a file; a directory by a
  // directory only if empty, else ENOTEMPTY); file over directory is EISDIR,
  // directory over file ENOTDIR, a directory into its own subtree EINVAL;
  // renaming a name onto itself (same inode) does nothing.
  Status rename(const std::string& from, const std::string& to) override;
  // Removes a file's name (EISDIR for a directory, ENOENT if missing). Open
  // Files of it keep working.
  Status unlink(const std::string& path) override;
  // Creates a directory (a pending change of its parent); an existing directory
  // is fine, an existing file is EEXIST. A path under no existing directory
  // becomes a root, durable at once (roots cannot nest: EINVAL).
  Status mkdir(const std::string& path) override;
  // Current names in a directory, sorted.
  Result<std::vector<std::string>> list(const std::string& dir) override;
  // Settles the directory's pending changes (not the undetermined ones a
  // failed sync_dir left: those stay undecided until a crash). A fault makes
  // its pending changes undetermined.
  Status sync_dir(const std::string& dir) override;
  // flock(LOCK_EX|LOCK_NB) on the inode at `path`, creating the file if missing
  // (a pending directory change). Errc::locked (errno EWOULDBLOCK) while another
  // FileLock on it lives. crash() and restore() release every lock.
  Result<std::unique_ptr<FileLock>> lock(const std::string& path) override;
  bool is_locked(const std::string& path) override;
  // exists=false (and ok) for a missing path or one under a non-directory.
  Result<FileStat> stat(const std::string& path) override;
  // What available() reports (default UINT64_MAX: no limit). Writes are not
  // limited by it: a full disk is modelled by ENOSPC faults (FaultKind).
  Result<uint64_t> available(const std::string& dir) override;
  void set_available(uint64_t bytes);

  // ---- Faults -------------------------------------------------------------
  // Adds a rule: the nth call of `op` from now on fails with `kind` (and every
  // later one if sticky).
  void fail(Op op, uint64_t nth, FaultKind kind, bool sticky = false);
  void add_fault(FaultRule rule);
  // Every call of `op` from now on fails with `kind`.
  void fail_all_from(Op op, FaultKind kind = FaultKind::eio);
  // Removes every rule (does not undo power_off; crash() or restore() does).
  void clear_faults();
  // How many faults have fired since construction; an I/O-error loop can stop
  // when a rule it set never fired.
  uint64_t faults_injected() const;
  // Calls of `op` since construction or reset_calls(), failed ones included
  // (calls on Files invalidated by a crash are not counted).
  uint64_t calls(Op op) const;
  void reset_calls();
  // Power failure now: every later call fails with EIO until crash()/restore().
  void power_off();
  bool powered_off() const;

  // ---- Crashes and snapshots ---------------------------------------------
  // Replaces the state in place by a post-crash state: durable data and durable
  // directory entries are kept, and so are settled changes; pending and
  // undetermined writes, truncates and directory changes are kept or not per
  // `mode` (random: CrashWeights{}), all applied in the order they were made. The same state and seed give the same result. Afterwards
  // current == durable everywhere, nothing is pending, every File and FileLock
  // handed out before is invalid (calls fail with EIO; destroying them is fine),
  // every lock is released and power is back on. Fault rules and counters stay.
  CrashReport crash(uint64_t seed, CrashMode mode = CrashMode::random);
  CrashReport crash(uint64_t seed, const CrashWeights& weights);
  Snapshot snapshot() const;
  // Puts back the snapshot's disk state; like crash() it invalidates Files and
  // locks and restores power. Fault rules and counters stay.
  void restore(const Snapshot& snap);

  // ---- Inspection and setup (no counting, no faults) -----------------------
  // Bytes a read sees at `path` in the current namespace; nullopt if no file.
  std::optional<std::string> current_image(const std::string& path) const;
  // Bytes a drop_all crash would leave at `path`: `path` resolved through the
  // durable namespace, then that file's durable image (settled operations only);
  // nullopt if no such file.
  std::optional<std::string> durable_image(const std::string& path) const;
  // Like current_image, but an error Status (ENOENT, EISDIR, ...) if no file.
  Result<std::string> read_all(const std::string& path) const;
  // Creates or overwrites the file at `path` (parent must exist) with `bytes`,
  // durable at once: name, data and size; its pending operations are dropped.
  Status set_contents(const std::string& path, std::string_view bytes);
  // Makes bytes [from, to) of the file at `path` unreadable, as bad sectors:
  // every read over one of them fails with EIO. They belong to the file, not
  // its name: a file renamed over it reads well.
  Status set_unreadable(const std::string& path, uint64_t from, uint64_t to);
  // Whether `path` names a file or directory now / in the durable namespace.
  bool exists(const std::string& path) const;
  bool durably_exists(const std::string& path) const;
  // Sorted names of a directory in the durable namespace (empty if none).
  std::vector<std::string> durable_list(const std::string& dir) const;
  // Writes+truncates of the file at `path` that a crash may drop: pending and
  // undetermined ones (0 if none or no file).
  size_t pending_ops(const std::string& path) const;
  // Changes of directory `dir` that a crash may revert: pending and
  // undetermined ones (0 if none or no directory).
  size_t pending_dir_changes(const std::string& dir) const;

 private:
  std::shared_ptr<memfs_detail::Core> core_;
  std::atomic<uint64_t> available_{UINT64_MAX};
};

}  // namespace alog::test
