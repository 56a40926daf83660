// Typos on the command line: the closest valid command or option, and the
// check of argv against the commands and options alog knows, made before
// CLI11 parses (whose messages name the wrong argument for a mistyped option).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace alog::cli {

// The candidate nearest to `word` by edit distance, when near enough to be
// a typo of it (at most 2 edits, and fewer than half of word's letters).
std::optional<std::string> closest(const std::string& word, const std::vector<std::string>& candidates);

// The usage error for the first unknown command or option in argv ("" when
// there is none): "unknown command 'cta' (did you mean 'cat'?)". `app` is
// the top-level app with the command argv names registered (every command
// when it names none that exists). *command is set to the
// command an unknown option was given to ("" for an unknown command).
std::string unknown_argument(CLI::App& app, int argc, char** argv, std::string* command);

// argv with "help [COMMAND]" rewritten as "[COMMAND] --help"; as given
// otherwise. *error is set to the usage error when more than one argument
// follows "help".
std::vector<std::string> rewrite_help(int argc, char** argv, std::string* error);

// The index in argv of the command's name (the first argument that is not
// a global option or its value), or none.
std::optional<int> command_index(int argc, char** argv);

}  // namespace alog::cli
