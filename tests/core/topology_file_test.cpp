// Topology files (docs/topology.md) and cluster presets: good files in YAML and JSON give the
// values written in them; malformed ones fail with the file, line and field.
#include <gtest/gtest.h>

#include <map>

#include "../common/temp_dir.hpp"
#include "core/error.hpp"
#include "core/presets.hpp"
#include "core/topology_file.hpp"

namespace zepp {
namespace {

#define EXPECT_HAS(text, part)                                \
  do {                                                        \
    const std::string text_ = (text);                         \
    EXPECT_NE(text_.find(part), std::string::npos) << text_;  \
  } while (0)

const char* const kFull = R"(# two rails of a DGX H100-like node
name: my-h100
gpus_per_node: 8
nvlink:
  model: switch
  bandwidth: 450 GB/s
  latency: 1.5 us
nic:
  per_node: 8
  bandwidth: 400 Gb/s
  latency: 3 us
compute:
  model: roofline
  peak: 989 TFLOP/s
  hbm: 3.35 TB/s
  kernel_launch: 5 us
)";

TEST(TopologyFile, YamlGivesEveryFieldInBaseUnits) {
  testing::TempDir dir;
  const Topology t = read_topology_file(dir.write("c.yaml", kFull), 3);
  EXPECT_EQ(t.name, "my-h100");
  EXPECT_EQ(t.nodes, 3);
  EXPECT_EQ(t.gpus_per_node, 8);
  EXPECT_EQ(t.nvlink_model, NvlinkModel::Switch);
  EXPECT_DOUBLE_EQ(t.nvlink_bw, 450e9);
  EXPECT_DOUBLE_EQ(t.nvlink_latency, 1.5e-6);
  EXPECT_DOUBLE_EQ(t.nic_bw, 50e9);  // 400 Gb/s = 50 GB/s
  EXPECT_DOUBLE_EQ(t.nic_latency, 3e-6);
  EXPECT_DOUBLE_EQ(t.compute.peak_flops, 989e12);
  EXPECT_DOUBLE_EQ(t.compute.hbm_bw, 3.35e12);
  EXPECT_DOUBLE_EQ(t.compute.kernel_launch, 5e-6);
}

TEST(TopologyFile, JsonWithTabsReadsTheSame) {
  testing::TempDir dir;
  const std::string json =
      "{\n\t\"gpus_per_node\": 4,\n\t\"nvlink\": {\"model\": \"per-pair\", \"bandwidth\": \"100 GB/s\", \"latency\": \"2us\"},\n"
      "\t\"nic\": {\"per_node\": 4, \"bandwidth\": \"25 GB/s\", \"latency\": \"3000 ns\"},\n"
      "\t\"compute\": {\"model\": \"roofline\", \"peak\": \"0.312 PFLOP/s\", \"hbm\": \"1555 GB/s\", \"kernel_launch\": \"0.005 ms\"}\n}\n";
  const Topology t = read_topology_file(dir.write("paper-a100.json", json), 2);
  const Topology a100 = topology_preset("a100", 2);
  EXPECT_EQ(t.name, "paper-a100");  // the file name without extension
  EXPECT_EQ(t.nvlink_model, NvlinkModel::PerPair);
  EXPECT_DOUBLE_EQ(t.nvlink_bw, a100.nvlink_bw);
  EXPECT_DOUBLE_EQ(t.nvlink_latency, a100.nvlink_latency);
  EXPECT_DOUBLE_EQ(t.nic_bw, a100.nic_bw);
  EXPECT_DOUBLE_EQ(t.nic_latency, a100.nic_latency);
  EXPECT_DOUBLE_EQ(t.compute.peak_flops, a100.compute.peak_flops);
  EXPECT_DOUBLE_EQ(t.compute.hbm_bw, a100.compute.hbm_bw);
  EXPECT_DOUBLE_EQ(t.compute.kernel_launch, a100.compute.kernel_launch);
}

TEST(TopologyFile, BasePresetWithOverrides) {
  testing::TempDir dir;
  const Topology t = read_topology_file(dir.write("slow-nic.yaml", "base: dgx-h100\nnic:\n  bandwidth: 200 Gb/s\n"), 2);
  const Topology h = topology_preset("dgx-h100", 2);
  EXPECT_EQ(t.gpus_per_node, 8);
  EXPECT_EQ(t.nvlink_model, NvlinkModel::Switch);
  EXPECT_DOUBLE_EQ(t.nvlink_bw, h.nvlink_bw);
  EXPECT_DOUBLE_EQ(t.nic_bw, 25e9);
  EXPECT_DOUBLE_EQ(t.nic_latency, h.nic_latency);
  EXPECT_DOUBLE_EQ(t.compute.peak_flops, h.compute.peak_flops);
}

// The error message for `content`, which must be rejected with InputError.
std::string error_of(const std::string& content) {
  testing::TempDir dir;
  const std::string path = dir.write("bad.yaml", content);
  try {
    read_topology_file(path, 2);
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(path, 0), 0u) << msg;  // starts with the file
    return msg;
  }
  ADD_FAILURE() << "accepted:\n" << content;
  return "";
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

TEST(TopologyFile, MalformedFilesNameLineAndField) {
  // A bare number: the unit is not guessed (GB/s and Gb/s differ eightfold).
  EXPECT_HAS(error_of(replaced(kFull, "450 GB/s", "450")), "bad.yaml:6: nvlink.bandwidth: expected a unit");
  EXPECT_HAS(error_of(replaced(kFull, "400 Gb/s", "400 Gbps")), ":10: nic.bandwidth: unknown unit 'Gbps'");
  EXPECT_HAS(error_of(replaced(kFull, "3 us", "-3 us")), ":11: nic.latency: expected a non-negative");
  EXPECT_HAS(error_of(replaced(kFull, "450 GB/s", "0 GB/s")), "nvlink.bandwidth: expected a positive");
  EXPECT_HAS(error_of(replaced(kFull, "989 TFLOP/s", "fast")), ":14: compute.peak: expected a number");
  EXPECT_HAS(error_of(replaced(kFull, "model: switch", "model: crossbar")), ":5: nvlink.model: expected switch or per-pair");
  EXPECT_HAS(error_of(replaced(kFull, "model: roofline", "model: magic")), "compute.model: expected roofline");
  EXPECT_HAS(error_of(replaced(kFull, "  per_node: 8", "  per_node: 4")), ":9: nic.per_node: expected gpus_per_node = 8");
  EXPECT_HAS(error_of(replaced(kFull, "gpus_per_node: 8", "gpus_per_node: 0")), ":3: gpus_per_node: expected a whole number");
  EXPECT_HAS(error_of(replaced(kFull, "gpus_per_node: 8", "gpus_per_node: 2.5")), "gpus_per_node: expected a whole number");
  EXPECT_HAS(error_of(replaced(kFull, "  latency: 1.5 us\n", "")), "nvlink.latency: missing");
  EXPECT_HAS(error_of(replaced(kFull, "  hbm:", "  hbw:")), "compute.hbw: unknown field, expected one of model, peak, hbm");
  EXPECT_HAS(error_of(replaced(kFull, "name: my-h100", "nodes: 4")), "nodes: unknown field");
  EXPECT_HAS(error_of("base: dgx-h100\nnic: 8\n"), ":2: nic: expected a mapping");
  EXPECT_HAS(error_of("base: dgx-z900\n"), "base: topology: unknown preset 'dgx-z900'");
  EXPECT_HAS(error_of("gpus_per_node: 4\n"), "nvlink: missing");
  EXPECT_HAS(error_of(""), "bad.yaml:1: expected a mapping of base, name, gpus_per_node, nvlink, nic, compute, calibration at the "
                          "top level, got an empty file");
  EXPECT_HAS(error_of("# no topology\n"), "bad.yaml:1: expected a mapping of base, name, gpus_per_node");
  EXPECT_HAS(error_of("\n- a100\n"), "bad.yaml:2: expected a mapping of base, name, gpus_per_node, nvlink, nic, compute, "
                                     "calibration at the top level, got a list");
  EXPECT_HAS(error_of("a100\n"), "bad.yaml:1: expected a mapping of base, name, gpus_per_node, nvlink, nic, compute, "
                                  "calibration at the top level, got 'a100'");
  EXPECT_HAS(error_of("[1, 2"), "expected YAML or JSON");
  // "expected a number with a unit" for a number with a unit beyond a double.
  EXPECT_HAS(error_of(replaced(kFull, "400 Gb/s", "1e999 Gb/s")),
             "bad.yaml:10: nic.bandwidth: expected a number a double holds (at most about 1.8e308), got '1e999 Gb/s'");
  // Only the first of several documents was read, silently (found by a fresh-user review).
  EXPECT_HAS(error_of("base: dgx-h100\n---\nbase: a100\n"), "bad.yaml:3: expected one YAML document, got 2 (the second starts here)");
  EXPECT_HAS(error_of("{\"gpus_per_node\": 8, \"nvlink\": {\"bandwidth\": \"1 TB/s\"}}"), "nic: missing");
  EXPECT_HAS(error_of(replaced(kFull, "  model: switch\n", "")), "nvlink.model: missing");
}

// A 1e5 s latency aborted SimGrid (signal 6); 1e-30 GB/s and 1e-20 TFLOP/s were taken. Each field
// has the range of the flag that overrides it (core/flag_ranges.hpp), named in the message.
TEST(TopologyFile, FiguresOutsideTheirFlagsRangeNameFileFieldAndFlag) {
  EXPECT_HAS(error_of(replaced(kFull, "3 us", "1e5 s")),
             "bad.yaml:11: nic.latency: expected 0 or a number in [1e-06, 1e+06] us (the range of --nic-latency-us), got 1e+11 us");
  EXPECT_HAS(error_of(replaced(kFull, "1.5 us", "2 s")), ":7: nvlink.latency: expected 0 or a number in [1e-06, 1e+06] us (the range of --nvlink-latency-us), got 2e+06 us");
  EXPECT_HAS(error_of(replaced(kFull, "400 Gb/s", "1e-30 GB/s")),
             ":10: nic.bandwidth: expected a number in [1e-06, 1e+06] GB/s (the range of --nic-gbps), got 1e-30 GB/s");
  EXPECT_HAS(error_of(replaced(kFull, "450 GB/s", "2e6 TB/s")), ":6: nvlink.bandwidth: expected a number in [1e-06, 1e+06] GB/s (the range of --nvlink-gbps), got 2e+09 GB/s");
  EXPECT_HAS(error_of(replaced(kFull, "989 TFLOP/s", "1e-20 TFLOP/s")),
             ":14: compute.peak: expected a number in [1e-06, 1e+06] TFLOP/s (the range of --peak-tflops), got 1e-20 TFLOP/s");
  EXPECT_HAS(error_of(replaced(kFull, "3.35 TB/s", "1 KB/s")), ":15: compute.hbm: expected a number in [1e-06, 1e+06] TB/s (the range of --hbm-tbps), got 1e-09 TB/s");
  EXPECT_HAS(error_of(replaced(kFull, "kernel_launch: 5 us", "kernel_launch: 1001 s")), ":16: compute.kernel_launch: expected a number in [0, 1e+06] us (the range of --kernel-launch-us), got 1.001e+09 us");
  // The ends of the ranges are taken: 0 latency and launch (zepp calibrate writes "0 us"), 1 s latency.
  testing::TempDir dir;
  const Topology t = read_topology_file(
      dir.write("ends.yaml", replaced(replaced(replaced(kFull, "3 us", "1 s"), "kernel_launch: 5 us", "kernel_launch: 0 us"), "1.5 us", "0 ns")), 1);
  EXPECT_DOUBLE_EQ(t.nic_latency, 1.0);
  EXPECT_DOUBLE_EQ(t.compute.kernel_launch, 0.0);
  EXPECT_DOUBLE_EQ(t.nvlink_latency, 0.0);
  // Between 0 and the simulator's 1e-12 s precision: 1e-30 s made SimGrid crash (signal 11).
  EXPECT_HAS(error_of(replaced(kFull, "3 us", "1e-30 s")),
             "bad.yaml:11: nic.latency: expected 0 or a number in [1e-06, 1e+06] us (the range of --nic-latency-us), got "
             "1e-24 us");
  EXPECT_DOUBLE_EQ(read_topology_file(dir.write("precision.yaml", replaced(kFull, "3 us", "0.001 ns")), 1).nic_latency, 1e-12);
}

TEST(TopologyFile, PresetOrFileOrClearError) {
  EXPECT_EQ(cluster_topology("dgx-b200", 2).gpus_per_node, 8);
  EXPECT_EQ(cluster_topology("gb200-nvl72", 1).gpus_per_node, 72);
  try {
    cluster_topology("no-such-cluster.yaml", 2);
    FAIL() << "accepted a missing file";
  } catch (const ArgumentError& e) {
    EXPECT_HAS(std::string(e.what()), "neither a preset (a100, h100, dgx-a100");
  }
}

TEST(TopologyPresets, EveryPresetHasASourceAndOneNicPerGpu) {
  for (const TopologyPreset& p : topology_presets()) {
    SCOPED_TRACE(p.topo.name);
    EXPECT_FALSE(p.source.empty());
    const Topology t = topology_preset(p.topo.name, 2);
    EXPECT_GT(t.nvlink_bw, t.nic_bw);
    // The datasheets each source names (BF16 dense peak, HBM bandwidth per GPU): A100 312 TFLOP/s
    // (1.555 TB/s for the 40 GB HBM2 of a100, 2.039 TB/s for DGX A100's 80 GB), H100/H200 SXM
    // 989 TFLOP/s (3.35 / 4.8 TB/s), B200 2.25 PFLOP/s and GB200 2.5 PFLOP/s (8 TB/s).
    const std::map<std::string, std::pair<double, double>> datasheet = {
        {"a100", {312e12, 1.555e12}},     {"h100", {989e12, 3.35e12}},  {"dgx-a100", {312e12, 2.039e12}},
        {"dgx-h100", {989e12, 3.35e12}},  {"dgx-h200", {989e12, 4.8e12}}, {"dgx-b200", {2.25e15, 8e12}},
        {"gb200-nvl72", {2.5e15, 8e12}}};
    ASSERT_TRUE(datasheet.count(p.topo.name)) << "a preset without its datasheet figures here";
    EXPECT_DOUBLE_EQ(t.compute.peak_flops, datasheet.at(p.topo.name).first);
    EXPECT_DOUBLE_EQ(t.compute.hbm_bw, datasheet.at(p.topo.name).second);
    EXPECT_EQ(t.nvlink_model, t.gpus_per_node == 4 ? NvlinkModel::PerPair : NvlinkModel::Switch);
  }
  // The issue's numbers: 450 GB/s per H100/H200 port, 900 on B200, 400 Gb/s NICs, NVL72.
  EXPECT_DOUBLE_EQ(topology_preset("dgx-h100", 1).nvlink_bw, 450e9);
  EXPECT_DOUBLE_EQ(topology_preset("dgx-h200", 1).nvlink_bw, 450e9);
  EXPECT_DOUBLE_EQ(topology_preset("dgx-b200", 1).nvlink_bw, 900e9);
  EXPECT_DOUBLE_EQ(topology_preset("dgx-h100", 1).nic_bw, 50e9);
}

TEST(Quantities, UnitsAndRejections) {
  EXPECT_DOUBLE_EQ(parse_bandwidth("1 GiB/s", ""), 1073741824.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth("800Gbit/s", ""), 100e9);
  EXPECT_DOUBLE_EQ(parse_duration("0 us", ""), 0.0);
  EXPECT_DOUBLE_EQ(parse_duration("250 ns", ""), 250e-9);
  EXPECT_DOUBLE_EQ(parse_flops("2.25 PFLOPS", ""), 2.25e15);
  EXPECT_THROW(parse_bandwidth("1e400 GB/s", "x: "), InputError);
  EXPECT_THROW(parse_bandwidth("nan GB/s", "x: "), InputError);
  EXPECT_THROW(parse_bandwidth("inf GB/s", "x: "), InputError);
  EXPECT_THROW(parse_duration("2 us extra", "x: "), InputError);
  EXPECT_THROW(parse_flops("", "x: "), InputError);
}

}  // namespace
}  // namespace zepp
