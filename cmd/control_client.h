// The client's side of the control socket (control_protocol.h): a command
// that needs the lock a live `alog append` holds sends its request to that
// holder instead, which runs it between two batches and sends back what the
// command would have printed.
#pragma once

#include <optional>
#include <string>

#include "cli.h"

namespace alog::cli {

// When a writer holds DIR/LOCK and listens on DIR/control.sock: sends
// {op, args} (with g's --json and --quiet), prints the reply's stdout and
// stderr as they are and returns its exit status. nullopt when no holder
// answers (no writer, no socket, connection refused, a holder that is
// stopping, a server of a foreign uid): the caller goes on as without one.
// A Failure when the holder refuses the request or the exchange breaks off:
// permission_denied when the socket may not be connected to (another user),
// holder_lost (exit 8) when the holder goes away before its whole reply.
std::optional<int> ask_holder(const Global& g, const std::string& dir, const char* op,
                              const Json& args);

}  // namespace alog::cli
