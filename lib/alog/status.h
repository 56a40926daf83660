// Errors as values: Status (a code plus a message with context) and Result<T>.
// No exception crosses the library API.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace alog {

// The fixed set of error codes. The seed's error table plus corrupt, locked and io.
enum class Errc : uint8_t {
  ok = 0,
  invalid_argument,   // bad options or arguments
  payload_too_large,  // a record is larger than max_payload_size
  batch_too_large,    // more than 65535 records, or cannot fit in an empty segment
  segment_full,       // the only allowed segment (max_segments == 1) is full
  disk_full,          // the append would exceed max_disk_size
  log_failed,         // an earlier failure left the log unusable until reopened
  out_of_bounds,      // a sequence outside the retained records
  corrupt,            // damage in data the format says must be intact
  locked,             // another writer holds the LOCK flock
  io,                 // an operating-system call failed (see sys_errno)
  not_found,          // no such log, segment or record
  not_a_log,          // the path exists but is not an alog directory or segment
  segment_reaped,     // a scanner's segment was recycled or cut behind it
  stopped,            // the Writer was stopped, or an interrupt check stopped a read (interrupt.h)
  busy,               // a Writer owns the log; direct appends are refused
  read_only,          // the log was opened for reading
  lost,               // the record's sequence is taken by a lost frame (salvage could not read it)
};

// Stable snake_case name of a code ("payload_too_large").
const char* errc_name(Errc c);

// A cheap value: ok, or a code with a message that names file, offset and
// sequence where known. `also` holds a second code an error is joined with
// (batch_too_large joined with segment_full). An ok Status is one null
// pointer: the error's details live on the heap, so the ok path (every call
// of the library returns one) neither builds nor destroys strings.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Errc code, std::string message, int sys_errno = 0);
  Status(const Status& o) : rep_(o.rep_ ? copy(*o.rep_) : nullptr) {}
  Status(Status&& o) noexcept : rep_(std::exchange(o.rep_, nullptr)) {}
  Status& operator=(const Status& o) {
    if (this != &o) {
      Rep* r = o.rep_ ? copy(*o.rep_) : nullptr;
      drop();
      rep_ = r;
    }
    return *this;
  }
  Status& operator=(Status&& o) noexcept {
    if (this != &o) {
      drop();
      rep_ = std::exchange(o.rep_, nullptr);
    }
    return *this;
  }
  ~Status() { drop(); }

  static Status ok() { return {}; }
  static Status io_error(const std::string& what, const std::string& path, int err);

  bool is_ok() const { return !rep_ || rep_->code == Errc::ok; }
  explicit operator bool() const { return is_ok(); }
  Errc code() const { return rep_ ? rep_->code : Errc::ok; }
  // True when this is `c` or joined with `c`.
  bool is(Errc c) const { return code() == c || (c != Errc::ok && rep_ && rep_->also == c); }
  int sys_errno() const { return rep_ ? rep_->sys_errno : 0; }
  const std::string& message() const { return rep_ ? rep_->message : empty(); }

  // Where the problem is, when known: a path and a byte offset in it.
  const std::string& path() const { return rep_ ? rep_->path : empty(); }
  std::optional<uint64_t> offset() const { return rep_ ? rep_->offset : std::nullopt; }
  Status& at(std::string path, std::optional<uint64_t> offset = std::nullopt) {
    Rep& r = rep();
    r.path = std::move(path);
    r.offset = offset;
    return *this;
  }
  Status& joined(Errc c) {
    rep().also = c;
    return *this;
  }

  // "code: message".
  std::string to_string() const;

 private:
  struct Rep {
    Errc code = Errc::ok;
    Errc also = Errc::ok;
    int sys_errno = 0;
    std::string message;
    std::string path;
    std::optional<uint64_t> offset;
  };
  Rep& rep() {
    if (!rep_) rep_ = new Rep;
    return *rep_;
  }
  // Out of line: the ok path only tests the pointer.
  static Rep* copy(const Rep& r);
  static void destroy(Rep* r) noexcept;
  void drop() noexcept {
    if (rep_) destroy(std::exchange(rep_, nullptr));
  }
  static const std::string& empty();
  Rep* rep_ = nullptr;
};

// A value or an error Status.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status st) : v_(std::move(st)) {}   // NOLINT: implicit by design

  bool is_ok() const { return v_.index() == 0; }
  explicit operator bool() const { return is_ok(); }
  T& value() & { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const T& value() const& { return std::get<0>(v_); }
  T* operator->() { return &std::get<0>(v_); }
  const T* operator->() const { return &std::get<0>(v_); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  const Status& status() const {
    static const Status kOk;
    return is_ok() ? kOk : std::get<1>(v_);
  }
  Status take_status() && { return is_ok() ? Status() : std::get<1>(std::move(v_)); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace alog

// Propagate a non-ok Status from an expression returning Status.
#define ALOG_TRY(expr)                          \
  do {                                          \
    ::alog::Status alog_try_st_ = (expr);       \
    if (!alog_try_st_.is_ok()) return alog_try_st_; \
  } while (0)

#define ALOG_CONCAT_INNER(a, b) a##b
#define ALOG_CONCAT(a, b) ALOG_CONCAT_INNER(a, b)
// Assign the value of a Result expression to `lhs`, or return its Status.
#define ALOG_ASSIGN(lhs, expr) ALOG_ASSIGN_IMPL(ALOG_CONCAT(alog_res_, __LINE__), lhs, expr)
#define ALOG_ASSIGN_IMPL(tmp, lhs, expr)          \
  auto tmp = (expr);                              \
  if (!tmp.is_ok()) return std::move(tmp).take_status(); \
  lhs = std::move(tmp).value()
