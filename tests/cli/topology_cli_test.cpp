// `--topology` on the command line: presets of 8-GPU NVSwitch nodes, files, and bad files (exit 2).
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../common/temp_dir.hpp"
#include "core/presets.hpp"
#include "../common/run_zepp.hpp"

namespace zepp {
namespace {

using testing::run_zepp;

TEST(TopologyCli, PresetWithEightGpusPerNode) {
  const auto r = run_zepp("simulate --topology dgx-h100 --nodes 2 --size-mb 0.25 --strategies a2av,zepp");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("cluster: 2 x 8 GPUs (dgx-h100: NVSwitch 450 GB/s per GPU port, NIC 50 GB/s per GPU"),
            std::string::npos)
      << r.out;
}

TEST(TopologyCli, FileIsReadByEveryCommand) {
  testing::TempDir dir;
  const std::string file = dir.write("four.yaml", "base: dgx-a100\ngpus_per_node: 4\nnic:\n  per_node: 4\n");
  const auto sim = run_zepp("simulate --format json --executor estimate --size-mb 0.25 --nodes 2 --topology " + file);
  ASSERT_EQ(sim.status, 0) << sim.err;
  const auto j = nlohmann::json::parse(sim.out);
  EXPECT_EQ(j["cluster"]["topology"], "four");
  EXPECT_EQ(j["cluster"]["gpus_per_node"], 4);
  // place takes the GPUs per node from the file: 2 nodes x 4 GPUs, (64 / 8 + 2 extra) slots each.
  const std::string trace = testing::shared_dir() + "/data/traces/deepseek-v2-lite-puffin";
  if (std::filesystem::exists(trace)) {
    const auto place = run_zepp("place --trace " + trace + " --model deepseek-v2-lite --nodes 2 --topology " + file);
    ASSERT_EQ(place.status, 0) << place.err;
    const auto p = nlohmann::json::parse(place.out);
    EXPECT_EQ(p["phy2log"][0].size(), 8u * 10u);
  }
}

TEST(TopologyCli, BadFileNamesFieldAndExitsTwo) {
  testing::TempDir dir;
  const std::string file = dir.write("bad.yaml", "base: dgx-h100\nnvlink:\n  bandwidth: 900\n");
  const auto r = run_zepp("simulate --nodes 2 --topology " + file);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("bad.yaml:3: nvlink.bandwidth: expected a unit"), std::string::npos) << r.err;
  // A latency of 1e5 s aborted SimGrid with signal 6: now refused as --nic-latency-us would be.
  const auto slow = run_zepp("simulate --executor sim --size-mb 0.1 --experts 16 --hidden 64 --topology " +
                             dir.write("slow.yaml", "base: h100\nnic:\n  latency: 1e5 s\n"));
  EXPECT_EQ(slow.status, 2);
  EXPECT_NE(slow.err.find("slow.yaml:3: nic.latency: expected 0 or a number in [1e-06, 1e+06] us (the range of --nic-latency-us)"),
            std::string::npos) << slow.err;
  const auto missing = run_zepp("simulate --topology dgx-h900");
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("--topology: 'dgx-h900' is neither a preset"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("(docs/topology.md): no file at that path"), std::string::npos) << missing.err;
  // A link to a file that is gone: "no file at that path" did not say why ls shows one.
  const std::string link = dir.path() + "/link.yaml";
  std::filesystem::create_symlink(dir.path() + "/gone.yaml", link);
  const auto broken = run_zepp("simulate --topology " + link);
  EXPECT_EQ(broken.status, 2);
  EXPECT_NE(broken.err.find("(docs/topology.md): a broken symbolic link (to " + dir.path() + "/gone.yaml)\n"),
            std::string::npos) << broken.err;
}

}  // namespace
}  // namespace zepp

namespace zepp {
namespace {

TEST(PresetsCli, ListsEveryModelAndClusterWithItsSource) {
  const auto r = testing::run_zepp("presets");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const auto& m : model_presets()) {
    const auto line = r.out.find("\n" + m.shape.name + " ");
    ASSERT_NE(line, std::string::npos) << m.shape.name;
    EXPECT_NE(r.out.find(m.source, line), std::string::npos) << m.shape.name;
  }
  for (const auto& t : topology_presets()) {
    const auto line = r.out.find("\n" + t.topo.name + " ");
    ASSERT_NE(line, std::string::npos) << t.topo.name;
    EXPECT_NE(r.out.find(t.source, line), std::string::npos) << t.topo.name;
  }
  // The models are all there.
  for (const char* name : {"qwen1.5-moe-a2.7b", "qwen3-235b-a22b", "qwen3-30b-a3b", "gpt-oss-120b", "gpt-oss-20b",
                           "mixtral-8x22b", "dbrx", "olmoe-1b-7b", "glm-4.5", "llama4-scout", "deepseek-v3", "deepseek-r1"})
    EXPECT_NO_THROW(model_preset(name)) << name;
  EXPECT_EQ(model_preset("qwen1.5-moe-a2.7b").num_experts, 60);
  EXPECT_EQ(model_preset("qwen1.5-moe-a2.7b").top_k, 4);
  const auto j = testing::run_zepp("presets --format json");
  ASSERT_EQ(j.status, 0);
  EXPECT_EQ(nlohmann::json::parse(j.out)["clusters"].size(), topology_presets().size());
}

// A file given as --topology that is no mapping reads as one YAML scalar: a trace CSV there
// (found by a fresh-user check) printed its whole text, 32 KB for one DeepSeek prompt. The
// message quotes its first 40 bytes.
// A calibrated file's measured expert times are used by one layer on the simulator only:
// --layers, --iterations and --executor estimate printed the roofline's figures with it, the
// same as without it.
TEST(TopologyCli, MeasuredComputeOutsideOneSimulatedLayerIsRefused) {
  testing::TempDir dir;
  const std::string file = dir.write("calibrated.yaml",
                                     "base: a100\ncompute:\n  model: measured\n  gemm: [{hidden: 64, ffn: 64, points: "
                                     "[[1, 1 us], [100, 2 us]]}]\n");
  const std::string base = "simulate --topology " + file + " --model mixtral-8x7b --nodes 2 --gpus-per-node 2 --hidden 64 "
                           "--ffn 64 --strategies a2av --size-mb 0.1 ";
  const std::string trace = testing::shared_dir() + "/data/traces/mixtral-8x7b-gsm8k";
  std::vector<std::pair<std::string, std::string>> cases = {{"--executor estimate", "--executor estimate"}};
  if (std::filesystem::exists(trace))
    cases.insert(cases.end(), {{"--trace " + trace + " --layers 1-2", "--layers"},
                               {"--trace " + trace + " --iterations 2", "--iterations"}});
  for (const auto& [args, mode] : cases) {
    const auto r = run_zepp(base + args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(r.err, "zepp: invalid argument: --topology: " + file + " holds a compute model measured by zepp calibrate, "
                     "which only one layer on --executor sim uses; " + mode +
                     " would time the experts by the roofline instead, ignoring it\n") << args;
  }
  const auto sim = run_zepp(base + "--format json");
  ASSERT_EQ(sim.status, 0) << sim.err;
  EXPECT_NE(sim.err.find("compute: expert times measured by zepp calibrate"), std::string::npos) << sim.err;
  if (std::filesystem::exists(trace))  // decisions only: nothing is timed
    EXPECT_EQ(run_zepp(base + "--trace " + trace + " --iterations 2 --executor none").status, 0);
}

TEST(TopologyCli, AFileThatIsNoMappingIsQuotedBriefly) {
  std::string csv = "Layer ID,Token ID,Expert IDs\n";
  for (int t = 0; t < 2000; ++t) csv += "1," + std::to_string(t) + ",\"[1, 2, 3, 4, 5, 6]\"\n";
  const std::string path = testing::write_file("trace_as_topology.csv", csv);
  const auto r = run_zepp("simulate --nodes 2 --topology " + path);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "zepp: error: " + path + ":1: expected a mapping of base, name, gpus_per_node, nvlink, nic, compute, "
                   "calibration at the top level, got 'Layer ID,Token ID,Expert IDs 1,0,\"[1, 2,...'\n");
}

}  // namespace
}  // namespace zepp
