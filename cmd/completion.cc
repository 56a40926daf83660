// alog completion bash|zsh|fish: a completion script made by walking the
// CLI11 tree (CLI11 has no generator), so it always matches the options.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "cli.h"

namespace alog::cli {

namespace {

struct CompletionOptions {
  std::string shell;
};

struct Opt {
  std::string long_name, short_name, help;
  bool takes_value;
};

std::vector<Opt> options_of(const CLI::App& app) {
  std::vector<Opt> v;
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_positional()) continue;
    for (const auto& l : o->get_lnames()) v.push_back({l, "", o->get_description(), o->get_type_size() != 0});
    for (const auto& s : o->get_snames()) v.push_back({"", s, o->get_description(), o->get_type_size() != 0});
  }
  return v;
}

std::string words(const std::vector<Opt>& opts) {
  std::string s;
  for (const auto& o : opts) {
    if (!s.empty()) s += ' ';
    s += o.long_name.empty() ? "-" + o.short_name : "--" + o.long_name;
  }
  return s;
}

// Single quotes for a help text inside a shell string.
std::string sq(const std::string& s) {
  std::string o;
  for (char c : s) o += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return o;
}

std::string bash(const CLI::App& app) {
  std::string cmds, cases;
  for (const CLI::App* sub : app.get_subcommands({})) {
    cmds += (cmds.empty() ? "" : " ") + sub->get_name();
    cases += fmt::format("    {}) opts=\"{}\" ;;\n", sub->get_name(), words(options_of(*sub)));
  }
  return fmt::format(
      "# bash completion for alog (alog completion bash)\n"
      "_alog() {{\n"
      "  local cur cmd i opts\n"
      "  cur=\"${{COMP_WORDS[COMP_CWORD]}}\"\n"
      "  cmd=\"\"\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    case \"${{COMP_WORDS[i]}}\" in -*) ;; *) cmd=\"${{COMP_WORDS[i]}}\"; break ;; esac\n"
      "  done\n"
      "  if [[ -z \"$cmd\" ]]; then\n"
      "    if [[ \"$cur\" == -* ]]; then COMPREPLY=($(compgen -W \"{}\" -- \"$cur\"))\n"
      "    else COMPREPLY=($(compgen -W \"{}\" -- \"$cur\")); fi\n"
      "    return\n"
      "  fi\n"
      "  case \"$cmd\" in\n{}    *) opts=\"\" ;;\n  esac\n"
      "  if [[ \"$cur\" == -* ]]; then COMPREPLY=($(compgen -W \"$opts {}\" -- \"$cur\"))\n"
      "  else COMPREPLY=($(compgen -f -- \"$cur\")); fi\n"
      "}}\n"
      "complete -o filenames -F _alog alog\n",
      words(options_of(app)), cmds, cases, words(options_of(app)));
}

std::string zsh(const CLI::App& app) {
  std::string s = "#compdef alog\n# zsh completion for alog (alog completion zsh)\n_alog() {\n"
                  "  local -a commands\n  commands=(\n";
  for (const CLI::App* sub : app.get_subcommands({}))
    s += fmt::format("    '{}:{}'\n", sub->get_name(), sq(sub->get_description()));
  s += "  )\n  if (( CURRENT == 2 )); then\n    _describe 'command' commands\n    return\n  fi\n"
       "  case \"$words[2]\" in\n";
  for (const CLI::App* sub : app.get_subcommands({})) {
    s += fmt::format("    {})\n      _arguments", sub->get_name());
    for (const auto& o : options_of(*sub)) {
      std::string name = o.long_name.empty() ? "-" + o.short_name : "--" + o.long_name;
      s += fmt::format(" \\\n        '{}{}[{}]{}'", name, o.takes_value ? "=" : "", sq(o.help),
                       o.takes_value ? ":value:" : "");
    }
    s += " \\\n        '*:file:_files' ;;\n";
  }
  s += "  esac\n}\ncompdef _alog alog\n";
  return s;
}

std::string fish(const CLI::App& app) {
  std::string s = "# fish completion for alog (alog completion fish)\ncomplete -c alog -f\n";
  std::string names;
  for (const CLI::App* sub : app.get_subcommands({})) names += (names.empty() ? "" : " ") + sub->get_name();
  for (const CLI::App* sub : app.get_subcommands({}))
    s += fmt::format("complete -c alog -n 'not __fish_seen_subcommand_from {}' -a {} -d '{}'\n", names,
                     sub->get_name(), sq(sub->get_description()));
  for (const auto& o : options_of(app))
    s += fmt::format("complete -c alog {}{} -d '{}'\n",
                     o.long_name.empty() ? "-s " + o.short_name : "-l " + o.long_name,
                     o.takes_value ? " -r" : "", sq(o.help));
  for (const CLI::App* sub : app.get_subcommands({})) {
    for (const auto& o : options_of(*sub))
      s += fmt::format("complete -c alog -n '__fish_seen_subcommand_from {}' {}{} -d '{}'\n",
                       sub->get_name(), o.long_name.empty() ? "-s " + o.short_name : "-l " + o.long_name,
                       o.takes_value ? " -r" : "", sq(o.help));
    s += fmt::format("complete -c alog -n '__fish_seen_subcommand_from {}' -F\n", sub->get_name());
  }
  return s;
}

}  // namespace

Command add_completion(CLI::App& app, const Global& g) {
  (void)g;
  auto o = std::make_shared<CompletionOptions>();
  CLI::App* sub = app.add_subcommand("completion", "Print a shell completion script");
  sub->add_option("SHELL", o->shell, "bash, zsh or fish")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish"}));
  CLI::App* root = &app;
  return {sub, false, [o, root] {
            out_write(o->shell == "bash" ? bash(*root) : o->shell == "zsh" ? zsh(*root) : fish(*root));
            return kExitOk;
          }};
}

}  // namespace alog::cli
