// What made a results file: the program's version, its git commit and the command line, written as
// the file's first line ("# made by zepp 0.1.0 (commit 1a2b...) with: zepp experiment fig9 --csv
// out.csv") and read back by `zepp experiment report` and --resume, which refuse to mix commits.
#pragma once
#include <optional>
#include <string>

namespace zepp {

// Recorded once by main(); words are shell-quoted where needed, argv[0] written as "zepp".
void set_command_line(int argc, const char* const* argv);
const std::string& command_line();  // "" before set_command_line

struct Provenance {
  std::string version, commit, command;
};

// "# made by <version_line()> with: <command_line()>\n".
std::string provenance_line();

// The provenance of a file's text when its first line is one (as provenance_line writes it), else
// nullopt (a file written before zepp recorded provenance). With `blank_it`, that line is replaced
// by spaces, so CSV readers skip it and keep their line numbers.
std::optional<Provenance> take_provenance(std::string& text, bool blank_it = true);

// "commit X (zepp V)" or "unknown commit (no provenance line: written before zepp recorded it)".
std::string describe(const std::optional<Provenance>& p);

}  // namespace zepp
