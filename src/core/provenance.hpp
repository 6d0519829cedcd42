// What made a results file: the program's version, its git commit and the command line, written as
// the file's first line ("# made by zepp 0.1.0 (commit 1a2b...) with: zepp experiment fig9 --csv
// out.csv") and read back by `zepp experiment report` and --resume, which refuse to mix commits.
// A sweep adds a second line with the settings that change its results but are none of its
// columns ("# settings: --planning=model --link-sharing=fair --seed=1 ..."), which --resume and
// the report compare.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace zepp {

// Recorded once by main(); words are shell-quoted where needed, argv[0] written as "zepp".
void set_command_line(int argc, const char* const* argv);
const std::string& command_line();  // "" before set_command_line

// (flag, value) pairs in the writer's order: ("--planning", "model"), ("--seed", "1").
using Settings = std::vector<std::pair<std::string, std::string>>;

struct Provenance {
  std::string version, commit, command;
  // The settings line, nullopt when the file has none (written before zepp recorded settings, or
  // by a command that records none).
  std::optional<Settings> settings;
};

// "# made by <version_line()> with: <command_line()>\n", then with `settings` not empty
// "# settings: --flag=value ...\n" (values hold no space or line break: numbers and names).
std::string provenance_line(const Settings& settings = {});

// The provenance of a file's text when its first line is one (as provenance_line writes it), else
// nullopt (a file written before zepp recorded provenance); a settings line right after it is
// read into `settings`. With `blank_it`, those lines are replaced by spaces, so CSV readers skip
// them and keep their line numbers.
std::optional<Provenance> take_provenance(std::string& text, bool blank_it = true);

// The words of a command line as command_line() writes it (shell_word's single quotes undone):
// how the settings of a file written before the settings line are read from its command.
std::vector<std::string> command_words(const std::string& command);

// "commit X (zepp V)" or "unknown commit (no provenance line: written before zepp recorded it)".
std::string describe(const std::optional<Provenance>& p);

}  // namespace zepp
