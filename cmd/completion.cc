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
    for (const auto& l : o->get_lnames()) v.push_back({l, "", o->get_description(), o->get_expected_max() > 0});
    for (const auto& s : o->get_snames()) v.push_back({"", s, o->get_description(), o->get_expected_max() > 0});
  }
  return v;
}

std::string flag(const Opt& o) { return o.long_name.empty() ? "-" + o.short_name : "--" + o.long_name; }

std::string words(const std::vector<Opt>& opts) {
  std::string s;
  for (const auto& o : opts) s += (s.empty() ? "" : " ") + flag(o);
  return s;
}

std::string value_words(const std::vector<Opt>& opts) {
  std::string s;
  for (const auto& o : opts)
    if (o.takes_value) s += (s.empty() ? "" : " ") + flag(o);
  return s;
}

// The completed values of an option ("" for none).
std::string values_of(const Opt& o) {
  if (o.long_name == "payload") return "base64 hex utf8 none";
  if (o.long_name == "format") return "text json";
  return "";
}

// What each positional argument completes: "dir" (directories), "dirseg"
// (directories and *.seg files), "files", "shell", or "none"; the last
// repeats when it is "files".
std::vector<std::string> positionals_of(const CLI::App& app) {
  std::vector<std::string> v;
  for (const CLI::Option* o : app.get_options()) {
    if (!o->get_positional()) continue;
    const std::string& d = o->get_description();
    std::string n = o->get_name();
    if (n == "SHELL") v.push_back("shell");
    else if (n == "FILE") v.push_back("files");
    else if (d.rfind("Log directory or segment file", 0) == 0) v.push_back("dirseg");
    else if (d.rfind("Log directory", 0) == 0) v.push_back("dir");
    else v.push_back("none");
  }
  return v;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
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
  auto global = options_of(app);
  for (const CLI::App* sub : app.get_subcommands({})) {
    cmds += (cmds.empty() ? "" : " ") + sub->get_name();
    auto opts = options_of(*sub);
    cases += fmt::format("    {}) opts=\"{}\"; vopts=\"{}\"; kinds=\"{}\" ;;\n", sub->get_name(),
                         words(opts), value_words(opts), join(positionals_of(*sub)));
  }
  return fmt::format(
      "# bash completion for alog (alog completion bash)\n"
      "_alog_values() {{\n"
      "  case \"$1\" in\n"
      "    --payload) echo \"base64 hex utf8 none\" ;;\n"
      "    --format) echo \"text json\" ;;\n"
      "  esac\n"
      "}}\n"
      "_alog() {{\n"
      "  local cur prev cmd i n opts vopts kinds kind gvopts=\"{}\"\n"
      "  cur=\"${{COMP_WORDS[COMP_CWORD]}}\"\n"
      "  prev=\"\"\n"
      "  (( COMP_CWORD > 0 )) && prev=\"${{COMP_WORDS[COMP_CWORD-1]}}\"\n"
      "  if [[ \"$cur\" == --payload=* || \"$cur\" == --format=* ]]; then\n"
      "    COMPREPLY=($(compgen -P \"${{cur%%=*}}=\" -W \"$(_alog_values \"${{cur%%=*}}\")\" -- \"${{cur#*=}}\"))\n"
      "    return\n"
      "  fi\n"
      "  if [[ \"$prev\" == --payload || \"$prev\" == --format ]]; then\n"
      "    COMPREPLY=($(compgen -W \"$(_alog_values \"$prev\")\" -- \"$cur\"))\n"
      "    return\n"
      "  fi\n"
      "  cmd=\"\"\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    case \"${{COMP_WORDS[i]}}\" in\n"
      "      -*) [[ \" $gvopts \" == *\" ${{COMP_WORDS[i]}} \"* ]] && ((i++)) ;;\n"
      "      *) cmd=\"${{COMP_WORDS[i]}}\"; break ;;\n"
      "    esac\n"
      "  done\n"
      "  if [[ -z \"$cmd\" ]]; then\n"
      "    if [[ \"$cur\" == -* ]]; then COMPREPLY=($(compgen -W \"{}\" -- \"$cur\"))\n"
      "    else COMPREPLY=($(compgen -W \"{}\" -- \"$cur\")); fi\n"
      "    return\n"
      "  fi\n"
      "  opts=\"\"; vopts=\"\"; kinds=\"\"\n"
      "  case \"$cmd\" in\n{}  esac\n"
      "  if [[ \"$cur\" == -* ]]; then\n"
      "    COMPREPLY=($(compgen -W \"$opts {}\" -- \"$cur\"))\n"
      "    return\n"
      "  fi\n"
      "  # Which positional argument this is: words after the command that are\n"
      "  # neither options nor option values.\n"
      "  n=0\n"
      "  for ((i = i + 1; i < COMP_CWORD; i++)); do\n"
      "    case \"${{COMP_WORDS[i]}}\" in\n"
      "      *=*) ;;\n"
      "      -*) [[ \" $vopts $gvopts \" == *\" ${{COMP_WORDS[i]}} \"* ]] && ((i++)) ;;\n"
      "      *) ((n++)) ;;\n"
      "    esac\n"
      "  done\n"
      "  kinds=($kinds)\n"
      "  kind=\"${{kinds[n]}}\"\n"
      "  [[ -z \"$kind\" && \"${{kinds[${{#kinds[@]}}-1]}}\" == files ]] && kind=files\n"
      "  case \"$kind\" in\n"
      "    dir) COMPREPLY=($(compgen -d -- \"$cur\")) ;;\n"
      "    dirseg) COMPREPLY=($(compgen -d -- \"$cur\") $(compgen -f -X '!*.seg' -- \"$cur\")) ;;\n"
      "    files) COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n"
      "    shell) COMPREPLY=($(compgen -W \"bash zsh fish\" -- \"$cur\")) ;;\n"
      "    *) COMPREPLY=() ;;\n"
      "  esac\n"
      "}}\n"
      "complete -o filenames -F _alog alog\n",
      value_words(global), words(global), cmds, cases, words(global));
}

// An _arguments spec for an option.
std::string zsh_spec(const Opt& o) {
  std::string v = values_of(o);
  std::string spec = "'" + flag(o) + (o.takes_value ? "=" : "") + "[" + sq(o.help) + "]";
  if (o.takes_value) spec += v.empty() ? ":value: " : ":value:(" + v + ")";
  return spec + "'";
}

std::string zsh_positional(size_t i, const std::string& kind) {
  std::string n = kind == "files" ? "*" : std::to_string(i + 1);
  if (kind == "dir") return "'" + n + ":directory:_files -/'";
  if (kind == "dirseg") return "'" + n + ":log directory or segment:_files -g \"*.seg\"'";
  if (kind == "files") return "'" + n + ":file:_files'";
  if (kind == "shell") return "'" + n + ":shell:(bash zsh fish)'";
  return "'" + n + ":value: '";
}

std::string zsh(const CLI::App& app) {
  std::string s = "#compdef alog\n# zsh completion for alog (alog completion zsh)\n_alog() {\n"
                  "  local curcontext=\"$curcontext\" state line\n  local -a commands\n  commands=(\n";
  for (const CLI::App* sub : app.get_subcommands({}))
    s += fmt::format("    '{}:{}'\n", sub->get_name(), sq(sub->get_description()));
  s += "  )\n  _arguments -C";
  for (const auto& o : options_of(app)) s += " \\\n    " + zsh_spec(o);
  s += " \\\n    '1:command:->command' \\\n    '*::argument:->argument'\n"
       "  case $state in\n"
       "    command) _describe 'command' commands ;;\n"
       "    argument)\n      case $words[1] in\n";
  for (const CLI::App* sub : app.get_subcommands({})) {
    s += fmt::format("        {})\n          _arguments", sub->get_name());
    for (const auto& o : options_of(*sub)) s += " \\\n            " + zsh_spec(o);
    auto kinds = positionals_of(*sub);
    for (size_t i = 0; i < kinds.size(); i++) s += " \\\n            " + zsh_positional(i, kinds[i]);
    s += " ;;\n";
  }
  s += "      esac ;;\n  esac\n}\ncompdef _alog alog\n";
  return s;
}

std::string fish_opt(const Opt& o) {
  std::string s = o.long_name.empty() ? "-s " + o.short_name : "-l " + o.long_name;
  std::string v = values_of(o);
  if (!v.empty()) s += " -x -a '" + v + "'";
  else if (o.takes_value) s += " -x";
  return s + " -d '" + sq(o.help) + "'";
}

std::string fish(const CLI::App& app) {
  std::string s = "# fish completion for alog (alog completion fish)\ncomplete -c alog -f\n";
  std::string names;
  for (const CLI::App* sub : app.get_subcommands({})) names += (names.empty() ? "" : " ") + sub->get_name();
  for (const CLI::App* sub : app.get_subcommands({}))
    s += fmt::format("complete -c alog -n 'not __fish_seen_subcommand_from {}' -a {} -d '{}'\n", names,
                     sub->get_name(), sq(sub->get_description()));
  for (const auto& o : options_of(app)) s += "complete -c alog " + fish_opt(o) + "\n";
  for (const CLI::App* sub : app.get_subcommands({})) {
    std::string cond = fmt::format("-n '__fish_seen_subcommand_from {}'", sub->get_name());
    for (const auto& o : options_of(*sub)) s += "complete -c alog " + cond + " " + fish_opt(o) + "\n";
    bool dir = false, dirseg = false, files = false, shell = false;
    for (const auto& k : positionals_of(*sub)) {
      dir = dir || k == "dir";
      dirseg = dirseg || k == "dirseg";
      files = files || k == "files";
      shell = shell || k == "shell";
    }
    if (files) s += "complete -c alog " + cond + " -F\n";
    else if (dirseg)
      s += "complete -c alog " + cond + " -a '(__fish_complete_directories) (__fish_complete_suffix .seg)'\n";
    else if (dir) s += "complete -c alog " + cond + " -a '(__fish_complete_directories)'\n";
    if (shell) s += "complete -c alog " + cond + " -a 'bash zsh fish'\n";
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
