// Signals (signals.h): a counter and a self-pipe written by the handler.
#include "signals.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "alog/interrupt.h"

#include "cli.h"

namespace alog::cli {

namespace {

volatile sig_atomic_t g_first = 0;
volatile sig_atomic_t g_count = 0;
int g_pipe[2] = {-1, -1};
int g_extra = -1;

extern "C" void on_signal(int sig) {
  int saved = errno;
  if (g_first == 0) g_first = sig;
  g_count = g_count + 1;
  if (g_pipe[1] >= 0) {
    char c = 1;
    (void)!::write(g_pipe[1], &c, 1);  // a full pipe already wakes the reader
  }
  errno = saved;
}

}  // namespace

void install_signal_handlers() {
  ::signal(SIGPIPE, SIG_DFL);
  if (g_pipe[0] < 0 && ::pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) g_pipe[0] = g_pipe[1] = -1;
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocked read returns EINTR
  for (int s : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(s, &sa, nullptr);
}

bool interrupted() { return g_count != 0; }
int signals_received() { return g_count; }

std::string first_signal_name() {
  switch (g_first) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case 0: return "";
    default: return "signal " + std::to_string(g_first);
  }
}

Failure interrupted_failure() {
  const std::string sig = first_signal_name();
  Failure f("interrupted", "", std::nullopt, sig.empty() ? "interrupted" : "interrupted by " + sig,
            kExitInterrupted);
  f.detail = Json::object();
  f.detail["signal"] = sig.empty() ? Json(nullptr) : Json(sig);
  return f;
}

void check_interrupted() {
  if (interrupted()) throw interrupted_failure();
}

void stop_reads_on_signals() { alog::set_interrupt_check(&interrupted); }

Wake wait_fd(int fd, int timeout_ms) {
  if (interrupted()) return Wake::signal;
  struct pollfd p[3] = {{fd, POLLIN, 0}, {g_pipe[0], POLLIN, 0}, {g_extra, POLLIN, 0}};
  int n = ::poll(p, 3, timeout_ms);
  if (interrupted()) return Wake::signal;
  if (n == 0) return Wake::timeout;
  if (n < 0) return errno == EINTR ? Wake::signal : Wake::ready;  // the read reports the error
  return p[0].revents ? Wake::ready : Wake::timeout;
}

void set_extra_wake_fd(int fd) { g_extra = fd; }

void nap_ms(int ms) { (void)wait_fd(-1, ms); }

}  // namespace alog::cli
