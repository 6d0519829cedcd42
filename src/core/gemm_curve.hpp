// An expert FFN's time measured on a machine (`zepp calibrate`), as the simulator's compute
// model in place of the GPU roofline (core/roofline.hpp).
#pragma once
#include <cstdint>
#include <vector>

namespace zepp {

// Seconds of one expert's SwiGLU FFN (gate, up, down GEMMs, activation, gate weighting) over
// `tokens` rows, measured for one (hidden, ffn) shape at a few token counts. Between points the
// time is linear in tokens; past the last point it continues along the last segment's slope
// (GEMM time grows linearly once the weights are reused across enough rows); below the first it
// follows the first segment's line, never below zero.
struct GemmCurve {
  int hidden = 0, ffn = 0;
  std::vector<int64_t> tokens;   // ascending, distinct, >= 1; at least two points
  std::vector<double> seconds;   // [tokens.size()], finite, > 0

  // Throws ArgumentError("`what`: ...") naming the broken rule.
  void validate(const char* what) const;
  // Time for `tokens` rows; 0 for tokens <= 0.
  double time(int64_t rows) const;
};

// The curve of `curves` measured for (hidden, ffn); nullptr when there is none.
const GemmCurve* find_curve(const std::vector<GemmCurve>& curves, int hidden, int ffn);
// find_curve(...)->time(rows); ArgumentError("topology: its compute model was measured for hidden
// H, ffn F ..., not hidden h, ffn f") when no curve has the shape.
double measured_time(const std::vector<GemmCurve>& curves, int64_t rows, int hidden, int ffn);

}  // namespace zepp
