#include "model/pipeline.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace zepp::model {

PipelineTimes pipeline(const std::vector<StageTimes>& stages) {
  PipelineTimes p;
  double host_end = 0, device_end = 0;
  for (size_t l = 0; l < stages.size(); ++l) {
    const StageTimes& s = stages[l];
    require(std::isfinite(s.host_s) && std::isfinite(s.device_s) && s.host_s >= 0 && s.device_s >= 0, "stages",
            "layer " + std::to_string(l) + " has a negative or non-finite time");
    host_end += s.host_s;
    const double start = std::max(device_end, host_end);
    device_end = start + s.device_s;
    p.device_start_s.push_back(start);
    p.device_end_s.push_back(device_end);
  }
  p.step_s = device_end;
  return p;
}

}  // namespace zepp::model
