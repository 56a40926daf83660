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

#include <cstddef>
#include <cstdint>

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

}  // namespace alog::cli::control
