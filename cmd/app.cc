// alog's entry point (cli.h alog_main): registers the subcommands, parses,
// runs the chosen one, and is the only place that catches errors and maps
// them to the documented exit statuses (man/alog.1 "EXIT STATUS").
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <new>

#include "cli.h"
#include "suggest.h"

namespace alog::cli {

namespace {

int usage_error(const std::string& command, const std::string& message) {
  if (command.empty())
    err_write(fmt::format("alog: {} (see alog --help)\n", escape_text(message)));
  else
    err_write(fmt::format("alog: {}: {} (see alog {} --help)\n", command, escape_text(message), command));
  return kExitUsage;
}

int report(const Failure& f, const Global& g, bool stream) {
  int exit = f.exit_status;
  // Output already written stays; the error line and object come after it.
  try {
    if (g.json() && f.path != "stdout") {
      Json e;
      e["code"] = f.code;
      e["path"] = f.path.empty() ? Json(nullptr) : Json(f.path);
      e["offset"] = opt_json(f.offset);
      e["message"] = f.what();
      if (f.detail.is_object())
        for (const auto& [k, v] : f.detail.items()) e[k] = v;
      Json j;
      if (stream) j["type"] = "error";
      j["schema_version"] = 1;
      j["status"] = status_word(exit);
      j["exit_status"] = exit;
      j["error"] = e;
      out_json(j);
    }
    out_flush();
  } catch (const Failure& w) {
    err_line(located(w.path, w.offset, w.what()));
    if (exit != kExitInterrupted) exit = kExitError;
  }
  err_line(located(f.path, f.offset, f.what()));
  return exit;
}

// Help without CLI11's parser notes: an option's value is its type name
// ("SEQ", "SIZE", "text|json", the choices of --payload), never
// "SEQ:SEQ" or "TEXT REQUIRED"; positionals show just their name.
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_opts(const CLI::Option* opt) const override {
    if (opt->get_positional() || opt->get_type_size() == 0) return "";
    std::string t = opt->get_type_name();
    if (auto colon = t.find(':'); colon != std::string::npos)
      t = t.compare(0, colon, "TEXT") == 0 ? t.substr(colon + 1) : t.substr(0, colon);
    std::string s = t.empty() ? "" : " " + t;
    if (opt->get_expected_max() == CLI::detail::expected_max_vector_size) s += " ...";
    return s;
  }
};

constexpr const char* kGlobalOptions =
    "Global options (before or after the command):\n"
    "  -q,--quiet                  No warnings and no progress on standard error\n"
    "  --json                      Output as JSON (same as --format=json)\n"
    "  --format text|json          Output format\n"
    "See alog(1) and alog-COMMAND(1); 'alog help COMMAND' prints this help.";

// Every command, by name. Building one's options is most of a start-up's
// work (~1 M instructions for all of them, callgrind), so a command line
// that names one builds that one alone; one that names none that exists
// (help, a typo, to suggest the nearest), asks for every command's help or
// for the completion script (which lists them all) builds them all.
struct Entry {
  const char* name;
  Command (*add)(CLI::App&, const Global&);
};
constexpr Entry kCommands[] = {
    {"append", add_append},
    {"cat", add_cat},
    {"seek", add_seek},
    {"verify", add_verify},
    {"recover", add_recover},
    {"truncate-before", add_truncate_before},
    {"truncate-after", add_truncate_after},
    {"roll", add_roll},
    {"dump-frames", add_dump_frames},
    {"stats", add_stats},
    {"completion", add_completion},
};

// The one command `args` names when only it need be built, or "" for all.
std::string only_command(std::vector<std::string>& args) {
  std::vector<char*> ptrs;
  for (auto& a : args) ptrs.push_back(a.data());
  const auto ci = command_index(static_cast<int>(ptrs.size()), ptrs.data());
  if (!ci || args[*ci] == "completion" || std::find(args.begin(), args.end(), "--help-all") != args.end())
    return "";
  for (const Entry& e : kCommands)
    if (args[*ci] == e.name) return e.name;
  return "";
}

std::string command_of(CLI::App& app) {
  auto subs = app.get_subcommands();
  return subs.empty() ? std::string() : subs.front()->get_name();
}

// alog completion takes no option but -h, --help (man/alog-completion.1),
// global ones neither: a usage error naming the first one given, else -1.
int refuse_global_options_of_completion(CLI::App& app) {
  if (command_of(app) != "completion") return -1;
  CLI::App* sub = app.get_subcommands().front();
  auto given = [](CLI::App* a, const char* name) {
    const CLI::Option* o = a->get_option_no_throw(name);
    return o && o->count() > 0;
  };
  // --help-all is the subcommand's own too (CLI11 copies it).
  for (const char* name : {"--quiet", "--json", "--format", "--help-all", "--version"})
    if (given(&app, name) || given(sub, name))
      return usage_error("completion",
                         std::string(name) + ": completion takes no option but -h, --help");
  return -1;
}

// CLI11's message in the tool's words where CLI11's own would puzzle:
// "--keep: At Most 1 required but received 2" is an option given twice.
std::string parse_error_message(const std::string& what) {
  const std::string twice = ": At Most 1 required but received ";
  if (const size_t at = what.find(twice); at != std::string::npos)
    return what.substr(0, at) + ": given " + what.substr(at + twice.size()) + " times; it takes one value";
  return what;
}

}  // namespace

int alog_main(int argc, char** argv) {
  Global g;
  CLI::App app{"alog: segmented append-only log toolkit", "alog"};
  app.formatter(std::make_shared<HelpFormatter>());
  app.set_version_flag("--version", std::string("alog ") + ALOG_VERSION,
                       "Print the version and exit");
  app.set_help_all_flag("--help-all", "Print help for every command and exit");
  app.add_flag("-q,--quiet", g.quiet, "No warnings and no progress on standard error");
  app.add_option("--format", g.format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->type_name("text|json");
  app.add_flag("--json", g.json_flag, "Same as --format=json");
  app.require_subcommand(1);
  app.fallthrough();

  std::string help_error;
  std::vector<std::string> args = rewrite_help(argc, argv, &help_error);
  if (!help_error.empty()) return usage_error("", help_error);
  const std::string only = only_command(args);
  std::map<CLI::App*, Command> commands;
  for (const Entry& e : kCommands) {
    if (!only.empty() && only != e.name) continue;
    Command c = e.add(app, g);
    c.sub->footer(kGlobalOptions);
    commands[c.sub] = std::move(c);
  }
  app.footer("Run 'alog help COMMAND' for a command's options.");

  std::string command;
  bool stream = false;
  try {
    try {
      std::vector<char*> ptrs;
      for (auto& a : args) ptrs.push_back(a.data());
      const int n = static_cast<int>(ptrs.size());
      std::string named;
      if (std::string bad = unknown_argument(app, n, ptrs.data(), &named); !bad.empty())
        return usage_error(named, bad);
      app.parse(n, ptrs.data());
    } catch (const CLI::CallForHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
      if (int u = refuse_global_options_of_completion(app); u >= 0) return u;
      return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
      if (int u = refuse_global_options_of_completion(app); u >= 0) return u;
      return app.exit(e);
    } catch (const CLI::ParseError& e) {
      return usage_error(command_of(app), parse_error_message(e.what()));
    }
    if (int u = refuse_global_options_of_completion(app); u >= 0) return u;
    command = command_of(app);
    if (g.json_flag && app.count("--format") && g.format != "json")
      return usage_error(command, "--json conflicts with --format=" + g.format);
    Command& c = commands.at(app.get_subcommands().front());
    stream = c.stream;
    return run_command(command, g, stream, c.run);
  } catch (const UsageError& e) {
    return usage_error(command, e.what());
  } catch (const Failure& f) {
    return report(f, g, stream);
  } catch (const std::exception& e) {
    return report(Failure("io", "", std::nullopt, std::string("internal error: ") + e.what()), g,
                  stream);
  }
}

int run_command(const std::string& command, const Global& g, bool stream,
                const std::function<int()>& run) {
  try {
    int exit = run();
    out_flush();
    return exit;
  } catch (const UsageError& e) {
    return usage_error(command, e.what());
  } catch (const Failure& f) {
    return report(f, g, stream);
  } catch (const std::bad_alloc&) {
    return report(Failure("io", "", std::nullopt, "out of memory"), g, stream);
  } catch (const std::exception& e) {
    return report(Failure("io", "", std::nullopt, std::string("internal error: ") + e.what()), g,
                  stream);
  }
}

}  // namespace alog::cli
