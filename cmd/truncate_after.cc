// alog truncate-after DIR SEQ: removes every record after SEQ (later
// segments whole, then a cut after SEQ's frame). --dry-run prints the same
// report without changing anything.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "alog/format.h"
#include "alog/scanner.h"
#include "cli.h"
#include "report.h"

namespace alog::cli {

namespace {

struct TruncateAfterOptions {
  std::string dir;
  std::string seq;
  bool dry_run = false;
  std::optional<std::string> wait;
};

// Bytes a cut right after seq's frame frees in its segment: the frame's end
// plus the new EOF (and a checkpoint when seq's frame has no BatchEnd).
uint64_t cut_bytes(const Log& log, const SegmentInfo& holder, uint64_t seq) {
  auto sc = log.scan(seq, seq);
  if (!sc) fail(sc.status(), log.dir());
  auto more = (*sc)->next();
  if (!more) fail(more.status(), log.dir());
  if (!*more) fail("out_of_bounds", log.dir(), std::nullopt, fmt::format("sequence {} not found", seq));
  uint64_t off = (*sc)->offset();
  uint64_t end = off + format::kFrameHeaderSize + (*sc)->payload().size();
  auto f = posix_fs().open(path_join(log.dir(), holder.file), OpenMode::read);
  if (!f) fail(f.status(), log.dir());
  uint8_t h[format::kFrameHeaderSize];
  auto got = (*f)->pread(h, sizeof h, off);
  if (!got) fail(got.status(), log.dir());
  bool batch_end = format::decode_frame_header(h).is_batch_end();
  uint64_t new_len = end + format::kFrameHeaderSize * (batch_end ? 1 : 2);
  return holder.file_length > new_len ? holder.file_length - new_len : 0;
}

int run_truncate_after(const TruncateAfterOptions& o, const Global& g) {
  uint64_t seq = *parse_u64(o.seq);
  std::unique_ptr<Log> log = open_for_truncate(g, o.dir, o.dry_run, wait_ms(o.wait));
  if (seq < log->first_sequence() || seq >= log->next_sequence())
    fail("out_of_bounds", o.dir, std::nullopt,
         log->empty() ? fmt::format("sequence {} is not in the log: it is empty (next {})", seq,
                                    log->next_sequence())
                      : fmt::format("sequence {} is not in the log [{}, {}]", seq,
                                    log->first_sequence(), log->next_sequence() - 1));
  auto segs = log->segments();
  TruncateResult r;
  r.path = o.dir;
  r.dry_run = o.dry_run;
  r.policy = "seq";
  r.seq = seq;
  uint64_t next = log->next_sequence();
  if (seq + 1 < next) {
    for (const auto& s : segs) {
      if (s.start_sequence > seq) {
        r.removed_files.push_back(s.file);
        r.bytes_freed += s.file_length;
      } else if (s.next_sequence > seq) {
        r.bytes_freed += cut_bytes(*log, s, seq);
      }
    }
    r.records_removed = next - 1 - seq;
  }
  r.removed_first = seq + 1;
  r.first_seq = log->first_sequence();
  r.last_seq = seq;
  r.next_seq = seq + 1;
  if (!o.dry_run && seq + 1 < next) {
    const uint64_t disk_before = log->disk_size();
    Status st = log->truncate_after(seq);
    if (!st) fail(st, o.dir);
    measure_cut(r, segs, disk_before, *log);
    st = log->close();
    if (!st) fail(st, o.dir);
  }
  print_truncate(r, g);
  return kExitOk;
}

}  // namespace

Command add_truncate_after(CLI::App& app, const Global& g) {
  auto o = std::make_shared<TruncateAfterOptions>();
  CLI::App* sub = app.add_subcommand("truncate-after", "Remove records above SEQ");
  sub->fallthrough();
  sub->add_option("DIR", o->dir, "Log directory")->required();
  sub->add_option("SEQ", o->seq, "Last sequence to keep")->required()->check(CLI::Validator(check_u64(), "SEQ"));
  sub->add_flag("-n,--dry-run", o->dry_run, "Print the plan; change nothing");
  add_wait_option(*sub, o->wait);
  return {sub, false, [o, &g] { return run_truncate_after(*o, g); }};
}

}  // namespace alog::cli
