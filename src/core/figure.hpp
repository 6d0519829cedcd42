// A gnuplot figure at BASE: its data files (BASE.dat, and others named by a suffix), the script
// BASE.gp, and BASE.svg that gnuplot draws from them. Every figure writer (Figures 9-12) goes
// through here, so each file follows the output-file rules of core/output_file.hpp.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace zepp {

// check_output_file on every file a figure at `base` leaves: BASE<suffix> for each of
// `data_suffixes`, BASE.gp and BASE.svg. For callers that check their outputs before the work.
void check_figure_files(const std::string& base, const std::vector<std::string>& data_suffixes, const std::string& flag);

// Writes each (suffix, text) of `data` as BASE<suffix> and `script` as BASE.gp (atomically,
// write_file_atomically), then runs gnuplot on BASE.gp, which writes BASE.svg. All the files are
// checked before the first is written, so a refused path leaves nothing half-made. Throws
// ArgumentError naming `flag` for a path refused, unwritable or holding a single quote (gnuplot
// is given it quoted), std::runtime_error with gnuplot's output when gnuplot fails.
void write_figure(const std::string& base, const std::vector<std::pair<std::string, std::string>>& data,
                  const std::string& script, const std::string& flag);

}  // namespace zepp
