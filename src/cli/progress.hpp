// Progress on a terminal: one stderr line rewritten in place ("\rMoE layers: 3/26 (zepp)"). An
// error or warning printed while that line is open must start on a line of its own, so main's
// error handlers call end_progress_line() before printing.
#pragma once
#include <string>

namespace zepp::cli {

// Rewrites the progress line with `text`; `last`: the work is done, the line is ended.
void progress_line(const std::string& text, bool last);

// Ends the progress line if one is open (a newline), so that what follows starts a line.
void end_progress_line();

}  // namespace zepp::cli
