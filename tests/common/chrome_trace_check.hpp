// Checks of Chrome trace JSON shared by the timeline tests (sim, MPI, CLI).
#pragma once
#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace zepp::test {

// Pairs of complete ("X") slices on one (pid, tid) that partially overlap: one starts inside the
// other and ends after it, by more than a thousandth of a nanosecond (ts + dur in floating point
// may exceed the next ts by an ulp; Perfetto rounds both to whole nanoseconds). Perfetto and
// chrome://tracing need every pair to nest or be disjoint.
inline int partial_overlaps(const nlohmann::json& trace) {
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> by_thread;
  for (const auto& e : trace.at("traceEvents"))
    if (e["ph"] == "X")
      by_thread[{e["pid"].get<int>(), e["tid"].get<int>()}].push_back(
          {e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()});
  int bad = 0;
  for (auto& [thread, spans] : by_thread) {
    std::sort(spans.begin(), spans.end());
    for (size_t i = 0; i < spans.size(); ++i)
      for (size_t j = i + 1; j < spans.size() && spans[j].first < spans[i].second - 1e-6; ++j)
        bad += spans[j].second > spans[i].second + 1e-6;
  }
  return bad;
}

}  // namespace zepp::test
