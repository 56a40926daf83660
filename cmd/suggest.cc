// Typos on the command line (see suggest.h).
#include "suggest.h"

#include <CLI/CLI.hpp>

#include <algorithm>

namespace alog::cli {

namespace {

// Edits (insert, delete, replace, swap two neighbours) from a to b.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); i++) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); j++) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); i++)
    for (size_t j = 1; j <= b.size(); j++) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::string with_hint(std::string msg, const std::string& word, const std::vector<std::string>& names,
                      const std::string& prefix) {
  if (auto c = closest(word, names)) msg += " (did you mean '" + prefix + *c + "'?)";
  return msg;
}

// The long and short names `app` and the command `sub` accept.
void option_names(const CLI::App& a, std::vector<std::string>& lnames, std::vector<std::string>& snames) {
  for (const CLI::Option* o : a.get_options()) {
    for (const auto& n : o->get_lnames()) lnames.push_back(n);
    for (const auto& n : o->get_snames()) snames.push_back(n);
  }
}

}  // namespace

std::optional<int> command_index(int argc, char** argv) {
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--") return std::nullopt;
    if (a == "--format") {
      i++;
      continue;
    }
    if (a.size() > 1 && a[0] == '-') continue;
    return i;
  }
  return std::nullopt;
}

std::optional<std::string> closest(const std::string& word, const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  size_t best_d = SIZE_MAX;
  for (const auto& c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  if (!best || best_d > 2 || best_d * 2 >= std::max<size_t>(word.size(), 2)) return std::nullopt;
  return best;
}

std::string unknown_argument(CLI::App& app, int argc, char** argv, std::string* command) {
  std::vector<std::string> commands;
  for (const CLI::App* s : app.get_subcommands({})) commands.push_back(s->get_name());
  auto ci = command_index(argc, argv);
  if (!ci) return "";
  const std::string name = argv[*ci];
  CLI::App* sub = nullptr;
  for (CLI::App* s : app.get_subcommands({}))
    if (s->get_name() == name) sub = s;
  if (!sub) return with_hint("unknown command '" + name + "'", name, commands, "");
  *command = name;
  std::vector<std::string> lnames, snames;
  option_names(app, lnames, snames);
  option_names(*sub, lnames, snames);
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--") break;
    if (i == *ci || a.size() < 2 || a[0] != '-') continue;
    if (a[1] == '-') {
      std::string n = a.substr(2, a.find('=') == std::string::npos ? std::string::npos : a.find('=') - 2);
      if (std::find(lnames.begin(), lnames.end(), n) == lnames.end())
        return with_hint("unknown option '--" + n + "'", n, lnames, "--");
    } else if (std::find(snames.begin(), snames.end(), a.substr(1, 1)) == snames.end()) {
      return "unknown option '" + a.substr(0, 2) + "'";
    }
  }
  return "";
}

std::vector<std::string> rewrite_help(int argc, char** argv, std::string* error) {
  std::vector<std::string> out(argv, argv + argc);
  auto ci = command_index(argc, argv);
  if (!ci || out[*ci] != "help") return out;
  // "help COMMAND": one name at most, none after it ("help cat 5" is no request
  // for cat's usage with an argument).
  int names = 0;
  for (int i = *ci + 1; i < argc; i++) {
    const std::string a = argv[i];
    if (a == "--format") i++;
    else if (a.size() < 2 || a[0] != '-') {
      if (++names == 2) *error = "help takes one command at most, not also '" + a + "'";
    }
  }
  out.erase(out.begin() + *ci);
  out.push_back("--help");
  return out;
}

}  // namespace alog::cli
