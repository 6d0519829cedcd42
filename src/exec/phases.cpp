#include "exec/phases.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/error.hpp"

namespace zepp {
namespace {

bool starts(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

std::vector<PhaseTimes> phase_times(const LayerResult& r, int num_gpus) {
  require(num_gpus >= 0, "num_gpus", "must be >= 0");
  std::vector<PhaseTimes> out(static_cast<size_t>(num_gpus));
  std::vector<double> begin(out.size(), -1), end(out.size(), 0);
  auto at = [&](int g) -> size_t {
    require(g >= 0 && g < num_gpus, "num_gpus", "the timeline names GPU " + std::to_string(g));
    return size_t(g);
  };
  for (const TimelineEvent& e : r.timeline) {
    const size_t g = at(e.gpu);
    const int dst = e.peer;  // a transfer's receiver; -1 otherwise
    if (starts(e.name, "dispatch")) {
      out[g].dispatch_end_s = std::max(out[g].dispatch_end_s, e.end_s);
      if (dst >= 0) out[at(dst)].dispatch_end_s = std::max(out[at(dst)].dispatch_end_s, e.end_s);
    } else if (e.name == "expert GEMM") {
      out[g].compute_s += e.end_s - e.start_s;
    } else if (starts(e.name, "combine") || starts(e.name, "pre-reduce") || starts(e.name, "final reduce")) {
      begin[g] = begin[g] < 0 ? e.start_s : std::min(begin[g], e.start_s);
      end[g] = std::max(end[g], e.end_s);
      if (dst >= 0 && starts(e.name, "combine")) end[at(dst)] = std::max(end[at(dst)], e.end_s);
    }
  }
  for (size_t g = 0; g < out.size(); ++g)
    if (begin[g] >= 0) out[g].combine_s = end[g] - begin[g];
  return out;
}

}  // namespace zepp
