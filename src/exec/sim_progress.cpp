#include "exec/sim_progress.hpp"

#include <unistd.h>

namespace zepp::sim_detail {

SimProgress::SimProgress(std::FILE* out, int64_t total, Clock clock, double after_s, double every_s)
    : out_(out), total_(total), clock_(std::move(clock)), every_s_(every_s) {
  start_s_ = out_ ? clock_() : 0.0;
  next_s_ = start_s_ + after_s;
}

SimProgress SimProgress::for_stderr(int64_t total) {
  auto wall = [] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); };
  return SimProgress(::isatty(STDERR_FILENO) ? stderr : nullptr, total, wall);
}

void SimProgress::maybe_show(double sim_s) {
  const double now = clock_();
  if (now < next_s_) return;
  next_s_ = now + every_s_;
  std::fprintf(out_, "\rsim: %lld of %lld tasks done (%.0f%%), %.1f us simulated, %.0f s   ", (long long)done_,
               (long long)total_, 100.0 * double(done_) / double(total_), sim_s * 1e6, now - start_s_);
  std::fflush(out_);
  shown_ = true;
}

void SimProgress::finish() {
  if (!shown_) return;
  std::fputc('\n', out_);
  std::fflush(out_);
  shown_ = false;
}

}  // namespace zepp::sim_detail
