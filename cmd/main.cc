// alog: the command-line toolkit (man/alog.1). The commands are cmd/app.cc
// and one file per subcommand.
#include "cli.h"

int main(int argc, char** argv) {
  alog::cli::install_signal_handlers();
  return alog::cli::alog_main(argc, argv);
}
