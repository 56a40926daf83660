// alog append DIR [FILE...]: records from files or standard input, split by
// newline, NUL, a 32-bit big-endian length prefix, or one per file; appended
// in batches and durable when it exits 0.
#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "alog/format.h"
#include "cli.h"
#include "report.h"

namespace alog::cli {

namespace {

enum class Split { newline, nul, len32, whole };

struct AppendOptions {
  std::string dir;
  std::vector<std::string> files;
  bool null = false, len32 = false, whole = false;
  std::string batch = "500";
  bool sync_each = false, no_sync = false;
  CreateOptions create;
};

struct AppendResult {
  std::string path;
  bool created = false;
  std::optional<uint64_t> first_seq, last_seq;
  uint64_t records = 0, batches = 0, bytes = 0, next_seq = 0;
  bool synced = false;
  std::optional<TailCut> recovered;  // what the open cut at the tail
};

// Splits one input (a file or stdin) into records, reading in chunks.
class InputReader {
 public:
  const std::string& name() const { return name_; }
  uint64_t record_offset() const { return record_offset_; }

  InputReader(std::string name, int fd, Split split, uint64_t max_payload)
      : name_(std::move(name)), fd_(fd), split_(split), max_payload_(max_payload) {}

  // The next record into *out; false at the end of the input.
  bool next(std::string* out) {
    record_offset_ = offset_;
    while (true) {
      if (split_ == Split::newline || split_ == Split::nul) {
        char delim = split_ == Split::newline ? '\n' : '\0';
        size_t at = buf_.find(delim, pos_);
        if (at != std::string::npos) {
          out->assign(buf_, pos_, at - pos_);
          consume(at + 1 - pos_);
          return true;
        }
        if (eof_) {
          if (pos_ == buf_.size()) return false;
          out->assign(buf_, pos_, std::string::npos);  // last record without a delimiter
          consume(buf_.size() - pos_);
          return true;
        }
      } else if (split_ == Split::len32) {
        if (avail() >= 4) {
          uint32_t len = format::get32(reinterpret_cast<const uint8_t*>(buf_.data() + pos_));
          if (len > max_payload_)
            bad(offset_, fmt::format("record length {} exceeds the maximum payload size {}", len,
                                     max_payload_));
          if (avail() >= 4 + uint64_t(len)) {
            out->assign(buf_, pos_ + 4, len);
            consume(4 + uint64_t(len));
            return true;
          }
          if (eof_)
            bad(offset_, fmt::format("record of {} bytes cut short: {} bytes left", len, avail() - 4));
        } else if (eof_) {
          if (avail() == 0) return false;
          bad(offset_, fmt::format("length prefix cut short: {} of 4 bytes", avail()));
        }
      } else {  // whole: the entire input is one record
        if (eof_) {
          if (done_) return false;
          done_ = true;
          out->assign(buf_, pos_, std::string::npos);
          consume(buf_.size() - pos_);
          return true;
        }
      }
      fill();
    }
  }

 private:
  uint64_t avail() const { return buf_.size() - pos_; }
  friend class Appender;
  void consume(uint64_t n) {
    pos_ += n;
    offset_ += n;
    if (pos_ > (1u << 20) && pos_ * 2 > buf_.size()) {
      buf_.erase(0, pos_);
      pos_ = 0;
    }
  }
  [[noreturn]] void bad(uint64_t off, const std::string& what) { fail("bad_input", name_, off, what); }
  void fill() {
    char chunk[1 << 16];
    while (true) {
      ssize_t n = ::read(fd_, chunk, sizeof chunk);
      if (n > 0) {
        buf_.append(chunk, size_t(n));
        if (split_ == Split::whole && buf_.size() - pos_ > max_payload_)
          bad(0, fmt::format("input exceeds the maximum payload size {}", max_payload_));
        return;
      }
      if (n == 0) {
        eof_ = true;
        return;
      }
      if (errno == EINTR) {
        check_interrupted();
        continue;
      }
      fail("io", name_, offset_ + avail(), std::string("read: ") + std::strerror(errno));
    }
  }

  std::string name_;
  int fd_;
  Split split_;
  uint64_t max_payload_;
  std::string buf_;
  size_t pos_ = 0;
  uint64_t offset_ = 0;  // input offset of buf_[pos_]
  uint64_t record_offset_ = 0;  // input offset of the record next() returned last
  bool eof_ = false, done_ = false;
};

int open_input(const std::string& file) {
  if (file == "-") return 0;
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    fail(e == ENOENT ? "not_found" : "io", file, std::nullopt,
         std::string("open: ") + std::strerror(e));
  }
  return fd;
}

// Makes DIR a place for a log: creates it when missing (its parent must
// exist and is synced). True when it holds no segment yet (a new log).
bool prepare_dir(const std::string& dir) {
  auto st = posix_fs().stat(dir);
  if (!st) fail(st.status(), dir);
  if (!st->exists) {
    Status m = posix_fs().mkdir(dir);
    if (!m) fail(m, dir);
    m = posix_fs().sync_dir(dir_name(dir));
    if (!m) fail(m, dir);
    return true;
  }
  if (!st->is_dir) fail("not_a_log", dir, std::nullopt, "not a directory");
  auto names = posix_fs().list(dir);
  if (!names) fail(names.status(), dir);
  return std::none_of(names->begin(), names->end(), [](const std::string& n) {
    return format::parse_segment_name(n).has_value();
  });
}

class Appender {
 public:
  Appender(const Global& g, Log& log, AppendResult& r, size_t batch)
      : log_(log), r_(r), batch_(batch), progress_(g, "append", /*delayed=*/true) {}

  void add(std::string rec, const InputReader& in) {
    const Options& opt = log_.options();
    if (rec.size() > opt.max_payload_size)
      fail("payload_too_large", in.name(), in.record_offset(),
           fmt::format("record of {} bytes is larger than max_payload_size {}", rec.size(),
                       opt.max_payload_size));
    // A batch ends before a record that would not let it fit an empty segment.
    uint64_t grown = pending_size_ + format::kFrameHeaderSize + rec.size();
    if (!pending_.empty() && format::kHeaderSize + grown + 2 * format::kFrameHeaderSize > opt.max_segment_size)
      flush();
    pending_size_ += format::kFrameHeaderSize + rec.size();
    pending_bytes_ += rec.size();
    pending_.push_back(std::move(rec));
    if (pending_.size() >= batch_) flush();
  }

  void flush() {
    if (pending_.empty()) return;
    std::vector<std::string_view> views(pending_.begin(), pending_.end());
    auto res = log_.append(views);
    if (!res) fail(res.status(), log_.dir());
    uint64_t last = *res;
    if (!r_.first_seq) r_.first_seq = last + 1 - pending_.size();
    r_.last_seq = last;
    r_.records += pending_.size();
    r_.batches++;
    r_.bytes += pending_bytes_;
    pending_.clear();
    pending_bytes_ = pending_size_ = 0;
    progress_.update(r_.records, 0);
  }

  // Before an error ends the command: make what was appended durable, and
  // say in the error line how far it got.
  void salvage(bool sync, Failure& f) {
    progress_.clear();
    if (sync && r_.records) (void)log_.sync();
    std::string tail = r_.last_seq ? fmt::format(" (appended up to sequence {})", *r_.last_seq)
                                   : std::string(" (nothing appended)");
    f = Failure(f.code, f.path, f.offset, f.what() + tail, f.exit_status);
  }

 private:
  Log& log_;
  AppendResult& r_;
  size_t batch_;
  std::vector<std::string> pending_;
  uint64_t pending_bytes_ = 0, pending_size_ = 0;
  Progress progress_;
};

void print(const AppendResult& r, const Global& g) {
  if (!g.json()) {
    if (r.last_seq) out_line(std::to_string(*r.last_seq));
    return;
  }
  Json j = summary_head(kExitOk);
  j["path"] = r.path;
  j["created"] = r.created;
  j["first_seq"] = opt_json(r.first_seq);
  j["last_seq"] = opt_json(r.last_seq);
  j["records"] = r.records;
  j["batches"] = r.batches;
  j["payload_bytes"] = r.bytes;
  j["synced"] = r.synced;
  j["next_seq"] = r.next_seq;
  j["recovered"] = tail_cut_json(r.recovered);
  out_json(j);
}

int run_append(const AppendOptions& o, const Global& g) {
  uint64_t batch = *parse_u64(o.batch);
  if (batch < 1 || batch > format::kMaxBatchRecords)
    throw UsageError(fmt::format("--batch {} is outside 1..{}", batch, format::kMaxBatchRecords));
  Split split = o.null ? Split::nul : o.len32 ? Split::len32 : o.whole ? Split::whole : Split::newline;
  std::vector<std::string> files = o.files.empty() ? std::vector<std::string>{"-"} : o.files;
  if (std::count(files.begin(), files.end(), "-") > 1) throw UsageError("'-' may be given at most once");
  // Inputs are opened first, so a missing file changes nothing.
  std::vector<int> fds;
  for (const auto& f : files) fds.push_back(open_input(f));

  AppendResult r;
  r.path = o.dir;
  if (is_regular_file(o.dir)) fail("not_a_log", o.dir, std::nullopt, "not a directory");
  (void)load_options(o.dir, o.create);  // invalid option values are usage errors: check first
  r.created = prepare_dir(o.dir);
  if (r.created) {
    save_options(o.dir, load_options(o.dir, o.create));
  } else if (o.create.start_sequence) {
    warn(g, o.dir, std::nullopt, "--start-sequence is ignored: the log exists");
  }
  CreateOptions given = o.create;
  given.start_sequence.reset();
  if (r.created) given = {};  // alog.json now holds them
  auto log = open_write_or_fail(g, o.dir, given, o.sync_each);
  r.recovered = log->tail_cut();

  Appender app(g, *log, r, size_t(batch));
  try {
    std::string rec;
    for (size_t i = 0; i < files.size(); i++) {
      InputReader in(files[i] == "-" ? "stdin" : files[i], fds[i], split,
                     log->options().max_payload_size);
      while (in.next(&rec)) {
        app.add(std::move(rec), in);
        rec.clear();
        check_interrupted();
      }
      if (fds[i] != 0) ::close(fds[i]);
    }
    app.flush();
    check_interrupted();
    Status st = o.no_sync ? log->close(/*sync=*/false) : log->sync();
    if (st && !o.no_sync) st = log->close();
    if (!st) fail(st, o.dir);
    r.synced = !o.no_sync;
  } catch (Failure& f) {
    app.salvage(!o.no_sync, f);
    throw;
  }
  r.next_seq = log->next_sequence();
  print(r, g);
  return kExitOk;
}

}  // namespace

Command add_append(CLI::App& app, const Global& g) {
  auto o = std::make_shared<AppendOptions>();
  CLI::App* sub = app.add_subcommand("append", "Append records from files or standard input");
  sub->fallthrough();
  sub->add_option("DIR", o->dir, "Log directory (created if missing)")->required();
  sub->add_option("FILE", o->files, "Input files; - or none: standard input");
  auto* n0 = sub->add_flag("-0,--null", o->null, "Records end with a NUL byte");
  auto* l32 = sub->add_flag("--len32", o->len32, "Each record is a 32-bit big-endian length, then the bytes");
  auto* wh = sub->add_flag("--whole", o->whole, "Each input file is one record");
  n0->excludes(l32)->excludes(wh);
  l32->excludes(wh);
  sub->add_option("--batch", o->batch, "Records per batch, 1..65535 (default 500)")
      ->type_name("N")
      ->check(CLI::Validator(check_u64(), "N"));
  auto* se = sub->add_flag("--sync-each", o->sync_each, "Sync every batch before the next");
  auto* ns = sub->add_flag("--no-sync", o->no_sync, "Skip the final explicit sync");
  se->excludes(ns);
  o->create.add_to(*sub);
  return {sub, false, [o, &g] { return run_append(*o, g); }};
}

}  // namespace alog::cli
