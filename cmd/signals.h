// Signals for the alog toolkit: SIGINT, SIGTERM and SIGHUP are counted and
// wake a self-pipe, so a command that waits (for input, for a log to change)
// waits in poll(2) on its descriptors and the pipe together, with no race
// between checking for a signal and starting to wait.
#pragma once

#include <string>

namespace alog::cli {

// SIGPIPE default; SIGINT, SIGTERM and SIGHUP counted (no SA_RESTART, so
// blocking reads return EINTR) and written to the self-pipe.
void install_signal_handlers();
bool interrupted();
// How many of those signals arrived so far.
int signals_received();
// "SIGTERM" and so on: the first signal that arrived ("" when none).
std::string first_signal_name();
// Throws the "interrupted" Failure (exit 130) when a signal arrived.
void check_interrupted();
// Lets a signal stop the library's long reads (alog/interrupt.h) as well:
// for the commands that only read, and recover (the library never stops
// its writes).
void stop_reads_on_signals();

// What wait_fd() saw.
enum class Wake { ready, timeout, signal };
// Waits until fd is readable (fd < 0: nothing but the timeout), a signal
// arrives, or timeout_ms passes (negative: no timeout). A signal that came
// before the call counts: it returns signal at once.
Wake wait_fd(int fd, int timeout_ms);
// A descriptor whose readability also ends wait_fd(), as a timeout would
// (-1: none): the control service's wake-up (control_service.h). Whoever
// set it drains it.
void set_extra_wake_fd(int fd);
// Sleeps up to ms milliseconds; returns early on a signal.
void nap_ms(int ms);

}  // namespace alog::cli
