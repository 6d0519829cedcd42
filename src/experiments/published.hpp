// The numbers the Zepp paper publishes for Figures 9 and 10, kept with their source, so the
// reproduction report is generated from data rather than typed.
#pragma once
#include <string>
#include <vector>

namespace zepp::experiments {

// One published speedup of Zepp in one configuration. versus: "a2av" or "comet+eplb".
struct PublishedPoint {
  std::string experiment;   // "fig9", "fig10"
  std::string workload;     // the paper's: "Qwen" (Qwen3-235B-A22B), "K2" (Kimi-K2-Thinking)
  std::string topology;     // "a100", "h100"
  int nodes = 0;
  double size_mb = 0;
  std::string versus;
  double speedup = 0;
  std::string source;       // paper section and sentence
};
const std::vector<PublishedPoint>& published_points();

// Published ranges and aggregates that no single configuration carries.
struct PublishedAggregate {
  std::string experiment, what, source;
  double low = 0, high = 0;  // equal for a single number
};
const std::vector<PublishedAggregate>& published_aggregates();

}  // namespace zepp::experiments
