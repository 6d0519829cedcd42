// Pacing of a rank's inter-node (NIC) sends, so the NIC is the bottleneck as on a real cluster
// even though all ranks share one machine's memory bus.
#pragma once
#include <algorithm>

namespace zepp::mpi {

// A token bucket of depth one message that refills at `bytes_per_s`: a message of b bytes that
// becomes ready at time t leaves at max(t, previous departure) + b / rate, i.e. after the NIC has
// had time to serialise it behind the messages before it. rate <= 0 disables pacing (messages
// leave when ready). Times are seconds on any monotonic clock (MPI_Wtime here).
class NicPacer {
 public:
  explicit NicPacer(double bytes_per_s) : rate_(bytes_per_s) {}
  bool enabled() const { return rate_ > 0; }
  double rate() const { return rate_; }  // bytes/s
  // Departure time of a message of `bytes` ready at `now`; reserves the NIC until then.
  double reserve(double now, double bytes) {
    if (!enabled()) return now;
    last_ = std::max(now, last_) + bytes / rate_;
    return last_;
  }

 private:
  double rate_;
  double last_ = 0;
};

}  // namespace zepp::mpi
