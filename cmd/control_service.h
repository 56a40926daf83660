// The holder's side of the control socket (control_protocol.h): while
// `alog append` holds a log it listens on DIR/control.sock, and a small
// thread, started when the first client connects, refuses peers of another
// uid (root excepted) and reads and checks one request per connection
// within a bound. The append loop runs the request between two batches
// (serve()), with its own open log and the commands' own code; the thread
// writes the reply. A slow or hostile client holds up only its own
// request, never ingest. (An append that no client reaches starts no
// thread: on a machine whose idle CPU wakes at its next tick, starting
// and joining one cost each `alog append` 1.5-4 ms.)
#pragma once

#include <fcntl.h>
#include <sys/stat.h>

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "cli.h"

namespace alog::cli {

// Whether a peer running as uid `peer` may send requests to a holder
// running as `holder`: the same uid, or root.
bool peer_allowed(uid_t peer, uid_t holder);

// Runs a request (op, its args) on the holder's open log; prints through
// out_* and warn() as the command does alone and returns its exit status.
using ControlHandler = std::function<int(const std::string& op, const Json& args, const Global& g)>;

class ControlService {
 public:
  // Listens on DIR/control.sock; the caller holds DIR/LOCK. A socket left
  // there (by an append that was killed) is replaced; anything else at the
  // name (a file, a directory, a symbolic link) is never removed or
  // followed: the service stays off, with a warning, and so does it when
  // the socket cannot be made. nullptr then.
  // With an anchor that holds DIR (Fs::anchor), the socket is made,
  // checked and removed in the directory it holds, whatever DIR names
  // meanwhile.
  static std::unique_ptr<ControlService> start(const Global& g, const std::string& dir,
                                               std::shared_ptr<DirAnchor> anchor = nullptr);
  // Stops the thread (a client still waiting, or still queued to connect, is
  // told to retry: the request did not run) and removes the socket, if it
  // is still ours.
  ~ControlService();
  ControlService(const ControlService&) = delete;
  ControlService& operator=(const ControlService&) = delete;

  // Readable when pending() should be asked (for set_extra_wake_fd(); it
  // changes when the thread starts): a client connecting, then a request
  // waiting. -1 once the service is off.
  int wake_fd() const;
  // Whether a request waits for serve(). Starts the thread when a client
  // connects (and, if no thread can be had, warns and turns the service off).
  bool pending();
  // Runs the waiting request, if any, through h and hands its reply over.
  void serve(const ControlHandler& h);

 private:
  ControlService() = default;
  // The thread, with every signal blocked in it (they stay with the append
  // loop); false when none could be had (errno set).
  bool start_thread();
  // Tells the thread (and handle()) that the holder stops.
  void signal_stop();
  // After signal_stop(), without a thread: each connection queued so far
  // answered as the thread answers it when the holder stops.
  void answer_queued();
  void loop();
  void handle(int conn);
  // The request line, or "" with *why set (timeout, too long, closed), and
  // *stopping too when the holder began to stop before the line was whole.
  std::string read_request(int conn, std::string* why, bool* stopping);
  bool stopping();

  std::string path_;
  std::shared_ptr<DirAnchor> anchor_;
  // Where the socket is reached: the anchor's directory and its name, or
  // AT_FDCWD and path_.
  int dir_fd_ = AT_FDCWD;
  std::string name_;
  int stat_socket(struct stat* st) const;
  // Removes DIR/control.sock if it still is the socket this holder made.
  void remove_socket();
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  int listen_ = -1;
  Global g_;               // for the warning when no thread can be had
  int wake_[2] = {-1, -1};  // the thread -> the append loop
  int stop_[2] = {-1, -1};  // the destructor -> the thread
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<Json> request_;  // checked, waiting for serve()
  std::optional<std::string> reply_;
  bool stop_flag_ = false;
  bool off_ = false;  // no thread could be had: nothing listens any more
  std::atomic<bool> waiting_{false};  // request_ is set and has no reply yet
};

// Helpers for the served commands: a request argument that is a string (or
// absent or null: nullopt), checked as its command-line option is; a
// UsageError when it is not one or fails the check.
std::optional<std::string> request_arg(const Json& args, const char* key,
                                       const std::function<std::string(std::string&)>& check = {});
bool request_flag(const Json& args, const char* key);

// The served commands (truncate_before.cc, truncate_after.cc, roll.cc): the
// command run on the holder's open log with the client's arguments.
int serve_truncate_before(Log& log, const Json& args, const Global& g);
int serve_truncate_after(Log& log, const Json& args, const Global& g);
int serve_roll(Log& log, const Json& args, const Global& g);
// Dispatches a request to one of those (the op is known to be one).
int serve_request(Log& log, const std::string& op, const Json& args, const Global& g);

}  // namespace alog::cli
