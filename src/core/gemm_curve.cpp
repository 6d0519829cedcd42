#include "core/gemm_curve.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace zepp {

void GemmCurve::validate(const char* what) const {
  require(hidden > 0 && ffn > 0, what, "hidden and ffn must be positive");
  require(tokens.size() >= 2 && seconds.size() == tokens.size(), what, "needs at least two (tokens, seconds) points");
  for (size_t i = 0; i < tokens.size(); ++i) {
    require(tokens[i] >= 1 && (i == 0 || tokens[i] > tokens[i - 1]), what,
            "token counts must be ascending, distinct and >= 1 (point " + std::to_string(i) + ")");
    require(std::isfinite(seconds[i]) && seconds[i] > 0, what, "times must be positive (point " + std::to_string(i) + ")");
  }
}

double GemmCurve::time(int64_t rows) const {
  if (rows <= 0) return 0.0;
  // Segment [i, i + 1] holding `rows`, the first or last one outside the measured range.
  const auto up = std::upper_bound(tokens.begin(), tokens.end(), rows);
  size_t i = size_t(std::clamp<std::ptrdiff_t>(up - tokens.begin() - 1, 0, std::ptrdiff_t(tokens.size()) - 2));
  const double x0 = double(tokens[i]), x1 = double(tokens[i + 1]);
  const double t = seconds[i] + (seconds[i + 1] - seconds[i]) * (double(rows) - x0) / (x1 - x0);
  return std::max(t, 0.0);
}

const GemmCurve* find_curve(const std::vector<GemmCurve>& curves, int hidden, int ffn) {
  for (const GemmCurve& c : curves)
    if (c.hidden == hidden && c.ffn == ffn) return &c;
  return nullptr;
}

double measured_time(const std::vector<GemmCurve>& curves, int64_t rows, int hidden, int ffn) {
  if (const GemmCurve* c = find_curve(curves, hidden, ffn)) return c->time(rows);
  std::string shapes;
  for (const GemmCurve& c : curves)
    shapes += (shapes.empty() ? "" : "; ") + std::string("hidden ") + std::to_string(c.hidden) + ", ffn " + std::to_string(c.ffn);
  throw ArgumentError("topology: its compute model was measured for " + shapes + " (zepp calibrate --hidden " +
                      std::to_string(hidden) + " --ffn " + std::to_string(ffn) + " measures this model), not hidden " +
                      std::to_string(hidden) + ", ffn " + std::to_string(ffn));
}

}  // namespace zepp
