// alog append DIR [FILE...]: records from files or standard input, split by
// newline, NUL, a 32-bit big-endian length prefix, or one per file; appended
// in batches, each written within --flush-interval of its first record and
// synced within --sync-interval; durable when it exits 0 (or 130 after a
// signal, having appended every complete record it read). Meanwhile it
// serves truncate-before, truncate-after and roll on DIR/control.sock
// (control_service.h), between two batches.
#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "alog/format.h"
#include "append_input.h"
#include "append_ndjson.h"
#include "append_retention.h"
#include "appender.h"
#include "cli.h"
#include "control_service.h"
#include "report.h"

namespace alog::cli {

namespace {

struct AppendOptions {
  std::string dir;
  std::vector<std::string> files;
  bool null = false, len32 = false, whole = false, ndjson = false;
  std::optional<std::string> payload;  // --ndjson: the encoding of lines without payload_encoding
  std::string batch = "500";
  std::string flush_interval = "200ms", sync_interval = "1s";
  bool sync_each = false, no_sync = false;
  std::optional<std::string> wait;
  CreateOptions create;
  RetentionArgs retention;
};

int open_input(const std::string& file) {
  if (file == "-") return 0;
  check_interrupted();  // a signal before the open: the open might wait for a FIFO's writer
  int fd;
  do {
    fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);  // a FIFO's open waits for its writer
  } while (fd < 0 && errno == EINTR && !interrupted());
  if (fd < 0) {
    int e = errno;
    if (e == EINTR) check_interrupted();  // a signal while it waited: a stop, not an error
    fail(e == ENOENT ? "not_found" : "io", file, std::nullopt,
         std::string("open: ") + std::strerror(e));
  }
  return fd;
}

// What prepare_dir made, so that a failed append can take it back.
struct Prepared {
  bool made_dir = false;  // DIR did not exist
  bool new_log = false;   // DIR held no segment
  bool had_options = false, had_lock = false;
};

// Makes DIR a place for a log: creates it when missing (its parent must
// exist and is synced).
Prepared prepare_dir(const std::string& dir) {
  Prepared p;
  auto st = posix_fs().stat(dir);
  if (!st) fail(st.status(), dir);
  if (!st->exists) {
    Status m = posix_fs().mkdir(dir);
    if (!m) fail(m, dir);
    m = posix_fs().sync_dir(dir_name(dir));
    if (!m) fail(m, dir);
    p.made_dir = p.new_log = true;
    return p;
  }
  if (!st->is_dir) fail("not_a_log", dir, std::nullopt, "not a directory");
  auto names = posix_fs().list(dir);
  if (!names) fail(names.status(), dir);
  p.new_log = std::none_of(names->begin(), names->end(), [](const std::string& n) {
    return format::parse_segment_name(n).has_value();
  });
  p.had_options = std::count(names->begin(), names->end(), std::string(format::kOptionsName)) > 0;
  p.had_lock = std::count(names->begin(), names->end(), std::string(format::kLockName)) > 0;
  if (!p.new_log) return p;
  // Not a log: refuse before alog.json or LOCK is written there.
  auto ends = [](const std::string& n, std::string_view suf) {
    return n.size() >= suf.size() && n.compare(n.size() - suf.size(), suf.size(), suf) == 0;
  };
  for (const auto& n : *names)
    if (n != format::kLockName && n != format::kOptionsName && n != format::kLostFoundName &&
        n != format::kControlSocketName &&
        !ends(n, format::kTmpSuffix) && !ends(n, format::kDelSuffix))
      fail("not_a_log", dir, std::nullopt,
           "directory has other files and no segments; refusing to create a log here");
  return p;
}

// After a failed append that appended nothing to a new log: removes what
// this run created (segments, alog.json, LOCK, the directory), best effort.
void undo_new_log(const std::string& dir, const Prepared& p) {
  auto names = posix_fs().list(dir);
  if (!names) return;
  for (const auto& n : *names) {
    bool ours = format::parse_segment_name(n).has_value() || n.ends_with(".tmp") ||
                (n == format::kOptionsName && !p.had_options) ||
                (n == format::kLockName && !p.had_lock);
    if (ours) (void)posix_fs().unlink(path_join(dir, n));
  }
  if (p.made_dir) (void)::rmdir(dir.c_str());
  (void)posix_fs().sync_dir(p.made_dir ? dir_name(dir) : dir);
}


void print(const AppendResult& r, const Global& g, int exit_status) {
  if (!g.json()) {
    if (r.last_seq) out_line(std::to_string(*r.last_seq));
    return;
  }
  Json j = summary_head(exit_status);
  j["path"] = r.path;
  j["created"] = r.created;
  j["first_seq"] = opt_json(r.first_seq);
  j["last_seq"] = opt_json(r.last_seq);
  j["records"] = r.records;
  j["batches"] = r.batches;
  j["payload_bytes"] = r.bytes;
  j["synced"] = r.synced;
  j["next_seq"] = r.next_seq;
  if (r.retention) j["retention_records_removed"] = r.retention_removed;
  if (r.recycled) j["recycled_records"] = *r.recycled;
  j["recovered"] = tail_cut_json(r.recovered);
  j["open_repairs"] = open_repairs_json(r.repairs);
  if (exit_status == kExitInterrupted) j["signal"] = first_signal_name();  // the last key
  out_json(j);
}

// A clean stop after a signal: every complete record already read is
// appended (a second signal ends it at once, between two batches); a
// partial last record is reported, not appended.
template <class Feed>
void drain(const Global& g, Feed feed, InputReader& in) {
  std::string_view rec;
  while (true) {
    // Before the next record is taken: a record taken is always fed.
    if (signals_received() > 1) check_interrupted();
    if (!in.next_buffered(&rec)) break;
    feed(rec);
  }
  if (in.partial_bytes())
    warn(g, in.name(), in.offset(),
         fmt::format("partial record of {} bytes (no terminator yet) not appended",
                     in.partial_bytes()));
}

// *reading: set once the input is read (from then on a failure says how far
// the append got itself, Appender::salvage).
int run_append(const AppendOptions& o, const Global& g, bool* reading) {
  uint64_t batch = *parse_u64(o.batch);
  if (batch < 1 || batch > format::kMaxBatchRecords)
    throw UsageError(fmt::format("--batch {} is outside 1..{}", batch, format::kMaxBatchRecords));
  const uint64_t flush_ms = *parse_duration_ms(o.flush_interval);
  const uint64_t sync_ms = *parse_duration_ms(o.sync_interval);
  Split split = o.null ? Split::nul : o.len32 ? Split::len32 : o.whole ? Split::whole : Split::newline;
  if (o.payload && !o.ndjson) throw UsageError("--payload needs --ndjson");
  const PayloadEncoding enc = o.payload ? parse_payload_encoding(*o.payload) : PayloadEncoding::base64;
  std::vector<std::string> files = o.files.empty() ? std::vector<std::string>{"-"} : o.files;
  if (std::count(files.begin(), files.end(), "-") > 1) throw UsageError("'-' may be given at most once");
  // Inputs are opened first, so a missing file changes nothing.
  std::vector<int> fds;
  for (const auto& f : files) fds.push_back(open_input(f));

  AppendResult r;
  r.path = o.dir;
  const StoredRetention given_ret = o.retention.parse();
  if (is_regular_file(o.dir)) fail("not_a_log", o.dir, std::nullopt, "not a directory");
  (void)load_options(o.dir, o.create);  // invalid option values are usage errors: check first
  const Prepared prep = prepare_dir(o.dir);
  // Held for the whole run: alog.json, the log and any undo are made in the
  // directory found (or made) now, whatever DIR names later.
  auto anchor = posix_fs().anchor(o.dir);
  if (!anchor) fail(anchor.status(), o.dir);
  r.created = prep.new_log;
  StoredRetention ret;
  std::unique_ptr<Log> log;
  try {
    if (!r.created) ret = load_retention(o.dir);
    ret.merge(given_ret);
    r.retention = ret.any();
    if (r.created) {
      save_options(o.dir, load_options(o.dir, o.create), ret.to_json());
    } else if (o.create.start_sequence) {
      warn(g, o.dir, std::nullopt, "--start-sequence is ignored: the log exists");
    }
    CreateOptions given = o.create;
    given.start_sequence.reset();
    if (r.created) given = {};  // alog.json now holds them
    log = open_write_or_fail(g, o.dir, given, o.sync_each, wait_ms(o.wait));
    r.recovered = log->tail_cut();
    r.repairs = log->open_repairs();
    // Given policies are kept for every later writer (under the lock now).
    if (!r.created && given_ret.any()) save_options(o.dir, load_options(o.dir, {}), ret.to_json());
    if (ret.any()) {
      (void)roll_if_old(*log, ret);
      r.retention_removed += apply_retention(*log, ret);
    }
  } catch (Failure&) {
    if (r.created) undo_new_log(o.dir, prep);
    throw;
  }

  Appender app(g, *log, r, size_t(batch), flush_ms, sync_ms, !o.sync_each && !o.no_sync, ret);
  *reading = true;
  // Maintenance commands that need the lock send their requests here; each
  // runs between two batches (the one being collected is written first).
  std::unique_ptr<ControlService> control = ControlService::start(g, o.dir, *anchor);
  if (control) set_extra_wake_fd(control->wake_fd());
  auto stop_control = [&] {
    set_extra_wake_fd(-1);
    control.reset();
  };
  auto tick = [&] {
    if (control) {
      if (control->pending()) {
        app.flush();
        control->serve([&](const std::string& op, const Json& args, const Global& rg) {
          return serve_request(*log, op, args, rg);
        });
      }
      set_extra_wake_fd(control->wake_fd());  // it changes when the service's thread starts
    }
    return app.tick();
  };
  std::optional<InputReader> in;
  bool stopped = false;
  const uint64_t max_payload = log->options().max_payload_size;
  // An NDJSON line holds its payload encoded: at most 6 bytes per byte
  // (utf8 with \u escapes), plus the object around it.
  const uint64_t max_line =
      o.ndjson ? std::min<uint64_t>(max_payload, UINT64_MAX / 8) * 6 + 4096 : max_payload;
  // False while the record the reader returned last is read and not yet
  // handed to the Appender: a failure then (a bad NDJSON line) resumes the
  // input at that record.
  bool fed = true;
  auto feed = [&](std::string_view rec) {
    if (!o.ndjson) return app.add(rec, *in);  // in's buffer holds it until tick()
    fed = false;
    auto pl = ndjson_payload(rec, enc, in->name(), in->record_number(), in->record_offset());
    if (pl && pl->size() > max_payload)
      fail("payload_too_large", in->name(), in->record_offset(),
           fmt::format("line {}: record of {} bytes is larger than max_payload_size {}",
                       in->record_number(), pl->size(), max_payload));
    fed = true;
    if (pl) app.add_owned(std::move(*pl), *in);
  };
  try {
    std::string_view rec;
    for (size_t i = 0; i < files.size() && !stopped; i++) {
      if (in) app.input_moves();  // the open batch goes on in the next file
      in.emplace(files[i] == "-" ? "stdin" : files[i], fds[i], split, max_line);
      while (true) {
        // tick() (flush and sync by time, maintenance requests) runs each
        // time the input has to be read, so at least once per read(2).
        InputReader::Got got = in->next(&rec, tick);
        if (got == InputReader::Got::record) {
          feed(rec);
        } else if (got == InputReader::Got::signal) {
          stopped = true;
          break;
        } else if (got == InputReader::Got::eof) {
          break;
        }
      }
      if (fds[i] != 0) ::close(fds[i]);
    }
    stop_control();
    if (stopped) drain(g, feed, *in);
    if (signals_received() > 1) check_interrupted();
    app.flush();
    Status st = o.no_sync ? log->close(/*sync=*/false) : log->sync();
    if (st && !o.no_sync) st = log->close();
    if (!st) fail(st, o.dir);
    r.synced = !o.no_sync;
  } catch (Failure& f) {
    stop_control();
    // A second signal ends it at once: no sync.
    app.salvage(!o.no_sync && f.code != "interrupted", f, in ? &*in : nullptr, fed);
    if (r.created && r.records == 0) {
      log.reset();
      undo_new_log(o.dir, prep);
    }
    throw;
  }
  r.next_seq = log->next_sequence();
  if (log->options().max_segments > 1) r.recycled = log->records_recycled();
  const int exit = stopped ? kExitInterrupted : kExitOk;
  print(r, g, exit);
  if (stopped && !g.quiet)
    err_line(fmt::format("{}: interrupted by {}: {} records appended{}", o.dir, first_signal_name(),
                         r.records, r.synced ? " and synced" : ""));
  return exit;
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
  auto* nd = sub->add_flag("--ndjson", o->ndjson,
                           "Each line is a record object as cat --json writes it");
  n0->excludes(l32)->excludes(wh)->excludes(nd);
  l32->excludes(wh)->excludes(nd);
  wh->excludes(nd);
  sub->add_option("--payload", o->payload,
                  "With --ndjson: the encoding of payloads without payload_encoding (default base64)")
      ->check(CLI::IsMember({"base64", "hex", "utf8"}));
  sub->add_option("--batch", o->batch, "Records per batch, 1..65535 (default 500)")
      ->type_name("N")
      ->check(CLI::Validator(check_u64(), "N"));
  sub->add_option("--flush-interval", o->flush_interval,
                  "Write a batch at the latest this long after its first record (default 200ms)")
      ->type_name("DURATION")
      ->check(CLI::Validator(check_duration_ms(), "DURATION"));
  auto* si = sub->add_option("--sync-interval", o->sync_interval,
                             "Sync at the latest this long after a write (default 1s)")
                 ->type_name("DURATION")
                 ->check(CLI::Validator(check_duration_ms(), "DURATION"));
  auto* se = sub->add_flag("--sync-each", o->sync_each, "Sync every batch before the next");
  auto* ns = sub->add_flag("--no-sync", o->no_sync, "No periodic and no final explicit sync");
  se->excludes(ns);
  si->excludes(ns)->excludes(se);
  add_wait_option(*sub, o->wait);
  o->create.add_to(*sub);
  o->retention.add_to(*sub);
  return {sub, false, [o, &g] {
            bool reading = false;
            try {
              return run_append(*o, g, &reading);
            } catch (Failure& f) {
              // Before the input is read (an input that cannot be opened, a
              // signal while a FIFO opens or the lock is waited for, the lock
              // held): nothing is appended, the input starts again at its start.
              if (!reading) {
                const std::string first = o->files.empty() || o->files[0] == "-" ? "stdin" : o->files[0];
                add_append_state(f, std::nullopt, false, Json{{"file", first}, {"record", 1}, {"offset", 0}});
              }
              throw;
            }
          }};
}

}  // namespace alog::cli
