// Topology files with a compute model measured on the machine (`compute.model: measured`, what
// `zepp calibrate` writes, docs/topology.md "Calibrated files"): the curves are read and replace
// the roofline; malformed curves fail naming the file, line and field.
#include <gtest/gtest.h>

#include "../common/temp_dir.hpp"
#include "core/error.hpp"
#include "core/measured_compute.hpp"
#include "core/topology_file.hpp"
#include "exec/sim_measured.hpp"

namespace zepp {
namespace {

const char* const kMeasured = R"({"name": "calibrated-test", "gpus_per_node": 2,
 "nvlink": {"model": "per-pair", "bandwidth": "4 GB/s", "latency": "1 us"},
 "nic": {"per_node": 2, "bandwidth": "0.02 GB/s", "latency": "12 ms"},
 "compute": {"model": "measured", "peak": "1.5 GFLOP/s", "hbm": "0.15 GB/s", "kernel_launch": "0 us",
             "gemm": [{"hidden": 48, "ffn": 32, "points": [[1, "2 us"], [16, "116 us"], [128, "1040 us"]]}]},
 "calibration": {"ranks": 4, "nic_pacing": "0.02 GB/s"}}
)";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

std::string error_of(const std::string& text) {
  testing::TempDir dir;
  try {
    read_topology_file(dir.write("calib.json", text), 2);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(MeasuredCompute, CurvesAreReadAndTimeTheSimulatedGemms) {
  testing::TempDir dir;
  const std::string path = dir.write("calib.json", kMeasured);
  const Topology t = read_topology_file(path, 2);  // a topology file like any other
  EXPECT_DOUBLE_EQ(t.compute.hbm_bw, 0.15e9);
  EXPECT_DOUBLE_EQ(t.nic_bw, 0.02e9);
  const std::vector<GemmCurve> gemm = read_measured_compute(path);
  ASSERT_EQ(gemm.size(), 1u);
  EXPECT_EQ(gemm[0].tokens, (std::vector<int64_t>{1, 16, 128}));
  EXPECT_DOUBLE_EQ(gemm[0].seconds[1], 116e-6);

  // One expert GEMM of 72 rows on GPU 0: the curve between 16 and 128 tokens, not the roofline.
  CommPlan plan;
  plan.nodes = 2, plan.gpus_per_node = 2, plan.num_gpus = 4, plan.top_k = 1;
  plan.model.hidden = 48, plan.model.ffn = 32, plan.model.bytes_per_elem = 4;
  plan.token_bytes = 48 * 4;
  Task gemm_task;
  gemm_task.kind = TaskKind::Compute;
  gemm_task.gpu = 0;
  std::vector<int32_t> pairs;
  for (int32_t i = 0; i < 72; ++i) pairs.push_back(i);
  plan.set_rows(plan.add_task(gemm_task), {}, {}, pairs);
  const LayerResult r = simulate_plan_measured(plan, t, gemm);
  EXPECT_NEAR(r.latency_s, 116e-6 + (1040e-6 - 116e-6) * 56 / 112, 1e-9);

  plan.model.hidden = 64;  // a shape that was not measured
  try {
    simulate_plan_measured(plan, t, gemm);
    FAIL();
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("measured for hidden 48, ffn 32"), std::string::npos) << e.what();
  }
  const char* roofline = R"({"gpus_per_node": 2, "nvlink": {"model": "per-pair", "bandwidth": "4 GB/s", "latency": "1 us"},
    "nic": {"per_node": 2, "bandwidth": "1 GB/s", "latency": "1 us"},
    "compute": {"model": "roofline", "peak": "1 TFLOP/s", "hbm": "1 TB/s", "kernel_launch": "1 us"}})";
  EXPECT_TRUE(read_measured_compute(dir.write("roofline.json", roofline)).empty());
}

TEST(MeasuredCompute, MalformedCurvesNameTheField) {
  EXPECT_NE(error_of(replaced(kMeasured, R"("model": "measured")", R"("model": "roofline")")).find("compute.gemm: only with compute.model measured"),
            std::string::npos);
  EXPECT_NE(error_of(replaced(kMeasured, R"([1, "2 us"], )", R"([16, "2 us"], )")).find("compute.gemm[0]: points: token counts must be ascending"),
            std::string::npos);
  EXPECT_NE(error_of(replaced(kMeasured, R"("116 us")", R"("116")")).find("compute.gemm[0].points[1][1]: expected a unit"), std::string::npos);
  EXPECT_NE(error_of(replaced(kMeasured, R"([1, "2 us"])", R"([1])")).find("compute.gemm[0].points[0]: expected [tokens, time]"),
            std::string::npos);
  EXPECT_NE(error_of(replaced(kMeasured, R"("hidden": 48)", R"("hiden": 48)")).find("compute.gemm[0].hiden: unknown field"),
            std::string::npos);
  const std::string twice = replaced(kMeasured, R"("1040 us"]]}])", R"("1040 us"]]}, {"hidden": 48, "ffn": 32, "points": [[1, "1 us"], [2, "2 us"]]}])");
  EXPECT_NE(error_of(twice).find("a second curve for hidden 48, ffn 32"), std::string::npos) << error_of(twice);
  const std::string no_gemm = replaced(kMeasured, R"(,
             "gemm": [{"hidden": 48, "ffn": 32, "points": [[1, "2 us"], [16, "116 us"], [128, "1040 us"]]}])", "");
  EXPECT_NE(error_of(no_gemm).find("compute.gemm: missing"), std::string::npos) << error_of(no_gemm);
  EXPECT_NE(error_of(replaced(kMeasured, R"("calibration")", R"("calibrations")")).find("calibrations: unknown field"), std::string::npos);
}

}  // namespace
}  // namespace zepp
