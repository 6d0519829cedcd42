// A progress line for long simulations (the `sim` executor's child process): how many of the
// plan's tasks are done and how far simulated time has come. A 128-node layer runs for minutes
// with nothing else on the terminal; a line that moves says it is working and how fast.
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>

namespace zepp::sim_detail {

class SimProgress {
 public:
  using Clock = std::function<double()>;  // wall seconds from any fixed origin

  // Writes to `out` (nullptr: never) once `after_s` wall seconds have passed since construction,
  // then at most once every `every_s`. total: the plan's task count (> 0).
  SimProgress(std::FILE* out, int64_t total, Clock clock, double after_s = 2.0, double every_s = 1.0);
  // On a terminal only (stderr when it is a tty), so logs and pipes get no carriage returns.
  static SimProgress for_stderr(int64_t total);

  // One more task is done at simulated time sim_s (seconds). Cheap: the clock is read every
  // 1,024 tasks.
  void task_done(double sim_s) {
    if (out_ && (++done_ & 1023) == 0) maybe_show(sim_s);
  }
  // Ends the line if one was written (a newline), so that what follows starts a line.
  void finish();

 private:
  void maybe_show(double sim_s);

  std::FILE* out_;
  int64_t total_, done_ = 0;
  Clock clock_;
  double start_s_, next_s_, every_s_;
  bool shown_ = false;
};

}  // namespace zepp::sim_detail
