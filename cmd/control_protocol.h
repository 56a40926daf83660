// The control protocol between `alog append`, which holds a log's lock, and
// the commands that would need that lock (truncate-before, truncate-after,
// roll): a Unix stream socket DIR/control.sock that the holder listens on,
// one request line and one reply line, each a JSON object (man/alog-append.1
// "CONTROL SOCKET").
//
//   request  {"v":1,"op":"truncate-before","args":{...},"json":false,"quiet":false}
//   reply    {"v":1,"exit":0,"stdout":BASE64,"stderr":BASE64}
//   or       {"v":1,"exit":16,"error":"...","stdout":"","stderr":BASE64,"versions":[1]}
//   or       {"v":1,"retry":true,"error":"..."}  (not carried out: the holder is
//            stopping; the client goes on as if no holder had answered)
//
// stdout and stderr are what the command prints when it runs alone, base64
// so that any bytes travel; exit is its exit status.
#pragma once

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace alog::cli::control {

// The protocol versions a holder serves; a request names one in "v".
inline constexpr int kVersion = 1;
// Longest request line the holder reads (with its newline).
inline constexpr size_t kMaxRequestBytes = 64 * 1024;
// How deeply a request's arrays and objects may nest.
inline constexpr int kMaxRequestNesting = 8;
// Longest reply line a client reads.
inline constexpr size_t kMaxReplyBytes = 64 * 1024 * 1024;
// How long the holder waits for a whole request, and for a client to take
// its reply: a slow client never stalls ingest, only its own request.
inline constexpr int kIoTimeoutMs = 5000;
// How long a client waits for the reply once its request is sent (the
// holder runs it between two batches).
inline constexpr int kReplyTimeoutMs = 60000;

// The operations served.
inline constexpr const char* kOpTruncateBefore = "truncate-before";
inline constexpr const char* kOpTruncateAfter = "truncate-after";
inline constexpr const char* kOpRoll = "roll";

// The address of the socket at `path` (DIR/control.sock) for bind() and
// connect(). A path longer than an address holds is reached through
// /proc/self/fd/N/control.sock, N being DIR opened into *dir_fd (>= 0 then:
// the caller closes it after the call). False when neither works.
inline bool socket_address(const std::string& dir, const std::string& path,
                           struct sockaddr_un* addr, int* dir_fd) {
  std::memset(addr, 0, sizeof *addr);
  addr->sun_family = AF_UNIX;
  *dir_fd = -1;
  std::string p = path;
  if (p.size() >= sizeof addr->sun_path) {
    *dir_fd = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (*dir_fd < 0) return false;
    p = "/proc/self/fd/" + std::to_string(*dir_fd) + "/" + path.substr(path.rfind('/') + 1);
    if (p.size() >= sizeof addr->sun_path) {
      ::close(*dir_fd);
      *dir_fd = -1;
      return false;
    }
  }
  std::memcpy(addr->sun_path, p.c_str(), p.size() + 1);
  return true;
}

}  // namespace alog::cli::control
