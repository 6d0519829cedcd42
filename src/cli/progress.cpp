#include "cli/progress.hpp"

#include <cstdio>

namespace zepp::cli {

namespace {
bool line_open = false;  // a progress line without its newline is on stderr
}

void progress_line(const std::string& text, bool last) {
  std::fprintf(stderr, "\r%s   %s", text.c_str(), last ? "\n" : "");
  std::fflush(stderr);
  line_open = !last;
}

void end_progress_line() {
  if (!line_open) return;
  std::fputc('\n', stderr);
  std::fflush(stderr);
  line_open = false;
}

}  // namespace zepp::cli
