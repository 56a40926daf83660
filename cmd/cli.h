// Shared pieces of the alog toolkit: exit statuses, the error type commands
// throw, stdout/stderr output (text and JSON), payload encoders, argument
// parsers, terminal helpers and the DIR/alog.json options file (signals are
// in signals.h). Commands
// build typed results and render them through these helpers; main.cc alone
// catches errors and turns them into exit statuses (man/alog.1).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "alog/log.h"
#include "alog/status.h"
#include "alog/verify.h"
#include "signals.h"

namespace CLI {
class App;
}

namespace alog::cli {

using Json = nlohmann::ordered_json;

// fsck-style exit status bits, the same for every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitRepaired = 1;
inline constexpr int kExitDamaged = 4;
inline constexpr int kExitError = 8;
inline constexpr int kExitUsage = 16;
inline constexpr int kExitInterrupted = 130;

// "ok", "repaired", "damaged" or "error" for an exit status.
const char* status_word(int exit_status);

// Options every command takes, before or after its name.
struct Global {
  bool quiet = false;
  std::string format = "text";  // "text" or "json"
  bool json_flag = false;       // --json
  bool json() const { return json_flag || format == "json"; }
};

// The error that stops a command: printed by main as one line on stderr
// (and, with --json, as the error object on stdout).
struct Failure : std::runtime_error {
  std::string code;  // errc_name() of the library code, or bad_input, bad_config, interrupted
  std::string path;  // file or directory concerned ("" when none)
  std::optional<uint64_t> offset;
  int exit_status = kExitError;
  Json detail;  // null, or an object whose members the JSON error object also carries
  Failure(std::string code_, std::string path_, std::optional<uint64_t> offset_, std::string msg,
          int exit = kExitError);
};

// A Failure from a library Status; `path` is used when the status names none.
// The message loses any "PATH[:OFFSET]: " prefix it repeats.
Failure failure(const Status& st, const std::string& path = {});
[[noreturn]] void fail(const Status& st, const std::string& path = {});
[[noreturn]] void fail(std::string code, std::string path, std::optional<uint64_t> offset,
                       std::string message);
// The "interrupted" Failure (exit 130): "interrupted by SIGTERM", with the
// signal's name as "signal" in the JSON error object.
Failure interrupted_failure();
// A usage error found after parsing (conflicting options): exit 16.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// "PATH[:OFFSET]: message", the body of an error or warning line.
std::string located(const std::string& path, std::optional<uint64_t> offset,
                    const std::string& message);
// Prints "alog: PATH[:OFFSET]: warning: message" on stderr unless quiet.
void warn(const Global& g, const std::string& path, std::optional<uint64_t> offset,
          const std::string& message);

// Writes text to stderr (flushed), or to the capture.
void err_write(std::string_view text);
// "alog: BODY\n" on stderr (or the capture), BODY's control characters
// escaped (escape_text): every line alog prints there that is not help.
void err_line(std::string_view body);
// The line of a corruption problem p found in the file at `path`:
// "alog: PATH:OFFSET: corruption: KIND: MESSAGE".
void err_corruption(const std::string& path, const Problem& p);

// While one lives, what the out_* functions, warn() and report_failure()
// would write goes into out and err instead (the holder of a log running a
// request for a client, control_service.h). Single-threaded: the thread
// that made it is the only one printing meanwhile.
class OutputCapture {
 public:
  OutputCapture();
  ~OutputCapture();
  OutputCapture(const OutputCapture&) = delete;
  OutputCapture& operator=(const OutputCapture&) = delete;
  std::string out, err;

 private:
  OutputCapture* prev_;
};

// ---- standard output ----
// Raw bytes to stdout (buffered). A failed write throws the Failure
// "stdout: write error: ..." (exit 8); SIGPIPE keeps its default action.
void out_write(std::string_view bytes);
// text + "\n", control characters escaped as ls(1) quotes names ("\n",
// "\033"), so no name or message can forge a line or reach the terminal.
void out_line(std::string_view text);
// Control characters of `s` as escapes (\n, \t, \NNN octal); colors made by
// paint() stay colors.
std::string escape_text(std::string_view s);
// One JSON value on one line (compact; invalid UTF-8 in strings becomes U+FFFD).
void out_json(const Json& j);
// Flushes stdout; a write error throws as above.
void out_flush();
// Flushes stdout, then writes bytes with write(2) itself, in one call when
// the kernel takes them all (bulk output, out_buffer.h); errors as above.
void out_write_direct(std::string_view bytes);
// What out_json prints: the compact JSON text and "\n".
std::string json_line(const Json& j);
// When fd is a pipe, makes it hold `bytes` (F_SETPIPE_SZ) so that the
// processes at its two ends wake each other once per that many bytes, not
// every 64 KiB. Best effort: fs.pipe-max-size caps it, and a user over its
// pipe budget is refused.
void grow_pipe(int fd, size_t bytes);

// ---- terminal ----
bool stderr_is_tty();
bool stdout_is_tty();
// Color in text written to a terminal, never with NO_COLOR or TERM=dumb.
bool use_color_stdout();
// "\x1b[1;31m" + s + "\x1b[0m" when color is on, s otherwise.
std::string paint(bool on, std::string_view code, std::string_view s);

// One progress line on stderr, rewritten in place; only on a terminal, not
// with -q, and (when delayed) once the command has run for a second.
class Progress {
 public:
  Progress(const Global& g, std::string label, bool delayed);
  ~Progress();
  void update(uint64_t done, uint64_t total);  // total 0: unknown
  void clear();

 private:
  bool enabled_;
  bool shown_ = false;
  std::string label_;
  uint64_t start_ms_;
  uint64_t last_ms_ = 0;
};
uint64_t now_ms();

// ---- encoders ----
std::string base64(std::string_view bytes);
std::string hex_bytes(std::string_view bytes);
// The same encodings written to out (room for base64_size(n), resp. 2n
// bytes); each returns the bytes written.
constexpr size_t base64_size(size_t n) { return (n + 2) / 3 * 4; }
size_t base64_into(char* out, std::string_view bytes);
// The first bytes of in, a multiple of 12 that leaves 4 more to read, as
// base64 into out (16 digits per 12 bytes) where the CPU has AVX; returns
// how many bytes it encoded (0 without AVX). base64_into starts with it.
size_t base64_blocks(char* out, const uint8_t* in, size_t n);
size_t hex_into(char* out, std::string_view bytes);
bool valid_utf8(std::string_view s);
std::string hex32(uint32_t v);  // "0x%08x"
std::string hex16(uint16_t v);  // "0x%04x"
// Unix ms as "YYYY-MM-DDTHH:MM:SS.mmmZ".
std::string iso_time_ms(uint64_t ms);
// "1.5 MiB"-style, for people.
std::string human_bytes(uint64_t n);

// --payload=base64|hex|utf8|none.
enum class PayloadEncoding { base64, hex, utf8, none };
PayloadEncoding parse_payload_encoding(const std::string& s);
// Sets "payload_encoding" and "payload" (in that order) in j; utf8 falls back to base64.
void put_payload(Json& j, std::string_view payload, PayloadEncoding enc);
// Payload in text mode: utf8 prints raw bytes, the others their encoding.
std::string text_payload(std::string_view payload, PayloadEncoding enc);

Json opt_json(std::optional<uint64_t> v);  // null or the number

// ---- argument values (man/alog.1 "Arguments") ----
// Each returns nullopt (or an error text) for values that are usage errors.
std::optional<uint64_t> parse_u64(std::string_view s);
std::optional<uint64_t> parse_size(std::string_view s);
std::optional<uint64_t> parse_duration_s(std::string_view s);
// A DURATION in milliseconds: "200ms", or any parse_duration_s value.
std::optional<uint64_t> parse_duration_ms(std::string_view s);
// CLI11 validators for SEQ/N, SIZE and DURATION option values.
std::function<std::string(std::string&)> check_u64();
std::function<std::string(std::string&)> check_size();
std::function<std::string(std::string&)> check_duration();
std::function<std::string(std::string&)> check_duration_ms();
// A -j/--jobs value (checked by check_u64): N threads, 0 one per core, at most 256.
unsigned jobs_of(const std::string& s);

// ---- the log directory ----
// True when path names a regular file (a single segment) rather than a directory.
bool is_regular_file(const std::string& path);
// Whether a live writer holds DIR/LOCK (never creates it).
bool writer_active(const std::string& dir);
// Opens for reading; a Failure on error (not_found, not_a_log, io). With
// background_tail, a long unsynced tail is walked while the caller scans
// (Options::walk_tail_in_background).
std::unique_ptr<Log> open_read_or_fail(const std::string& dir, bool background_tail = false);

// Creation options, as given on the command line (unset: from alog.json or defaults).
struct CreateOptions {
  std::optional<uint64_t> segment_size, max_disk_size, max_segments, checkpoint_stride,
      start_sequence, max_payload_size;
  // Adds --segment-size ... --max-payload-size to a subcommand.
  void add_to(CLI::App& sub);
};
// Options from DIR/alog.json (bad_config Failure when unreadable), overridden
// by `given`. `found` says whether the file existed.
Options load_options(const std::string& dir, const CreateOptions& given, bool* found = nullptr);
// recover()'s options that come from DIR/alog.json (where a salvage puts
// checkpoints, how many lost frames a segment can hold).
RecoverOptions salvage_log_options(const std::string& dir);
// Why options are invalid ("" when they are valid), as the library checks them.
std::string check_options(const Options& o);
// Writes DIR/alog.json atomically (tmp, sync, rename, sync dir); a
// non-empty `retention` object is kept under "retention".
void save_options(const std::string& dir, const Options& o, const Json& retention = nullptr);
Json options_json(const Options& o);

// ---- the lock ----
// The pid the holder wrote into DIR/LOCK, if any (informative only).
std::optional<uint64_t> lock_holder_pid(const std::string& dir);
// The `locked` Failure naming the holder's pid (JSON detail holder_pid);
// waited_ms: --wait was given and ran out.
[[noreturn]] void fail_locked(const std::string& dir, std::optional<uint64_t> waited_ms);
// --wait DURATION on a mutating command, and its value in milliseconds.
void add_wait_option(CLI::App& sub, std::optional<std::string>& wait);
std::optional<uint64_t> wait_ms(const std::optional<std::string>& wait);
// After a `locked` refusal: true when the caller should try again (wait
// given and not used up by now_ms() - start_ms); it has napped meanwhile.
bool lock_wait_retry(std::optional<uint64_t> wait, uint64_t start_ms, int& nap);

// Mutating commands other than append never create a log: a Failure
// (not_found, not_a_log) unless dir is a directory holding segment files.
void require_log_dir(const std::string& dir);
// A dry run fails with `locked` exactly when the real run would (after
// waiting up to wait_ms for the holder to let go).
void require_unlocked(const std::string& dir, std::optional<uint64_t> wait_ms = std::nullopt);

// Opens for writing with the options of alog.json (plus overrides); Failure on error.
// A torn tail the open cut is reported as a warning.
// wait_ms: how long to wait for a lock another process holds (none: fail at once).
std::unique_ptr<Log> open_write_or_fail(const Global& g, const std::string& dir,
                                        const CreateOptions& given, bool sync_on_append = false,
                                        std::optional<uint64_t> wait_ms = std::nullopt);

// The file name part of a path ("a/b/000.seg" -> "000.seg").
std::string base_name(const std::string& path);
std::string dir_name(const std::string& path);

// ---- commands ----
// Each add_* creates its subcommand under app, with an options struct owned
// by the returned runner, which does the work and returns the exit status.
struct Command {
  CLI::App* sub = nullptr;
  bool stream = false;  // NDJSON stream: errors print as {"type":"error",...}
  std::function<int()> run;
};
Command add_append(CLI::App& app, const Global& g);
Command add_cat(CLI::App& app, const Global& g);
Command add_seek(CLI::App& app, const Global& g);
Command add_verify(CLI::App& app, const Global& g);
Command add_recover(CLI::App& app, const Global& g);
Command add_truncate_before(CLI::App& app, const Global& g);
Command add_truncate_after(CLI::App& app, const Global& g);
Command add_dump_frames(CLI::App& app, const Global& g);
Command add_stats(CLI::App& app, const Global& g);
Command add_roll(CLI::App& app, const Global& g);
Command add_completion(CLI::App& app, const Global& g);

// The summary object's first keys: schema_version, status, exit_status.
Json summary_head(int exit_status);

// Runs a command's runner as alog_main does once it has parsed: returns
// its exit status, or prints the error it throws (a usage error, or the
// Failure's line on stderr and, with --json, its object on stdout) and
// returns that error's status. command: its name, for usage errors.
int run_command(const std::string& command, const Global& g, bool stream,
                const std::function<int()>& run);

// The whole command line: parses argv, runs the command, prints any error,
// and returns the exit status. main() adds only the signal handlers; the
// fuzz target fuzz_tools calls it in-process.
int alog_main(int argc, char** argv);

}  // namespace alog::cli
