// EPLB rule against the published README example and every reference case (shared/data/eplb).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "placement/placement.hpp"

using nlohmann::json;

namespace {

const std::string kEplbDir = std::string(ZEPP_SHARED_DIR) + "/data/eplb";

json load_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

struct Case {
  std::string name;
  std::vector<float> weight;
  int layers, experts, replicas, groups, nodes, gpus;
  std::vector<int64_t> expected_phy2log;  // [L * P]
};

Case read_case(const json& j, const std::string& name) {
  Case c{name, {}, int(j["weight"].size()), int(j["weight"][0].size()), j["num_replicas"], j["num_groups"],
         j["num_nodes"], j["num_gpus"], {}};
  for (const auto& row : j["weight"])
    for (const auto& v : row) c.weight.push_back(v.get<float>());  // float32, as the reference
  for (const auto& row : j["expected_phy2log"])
    for (const auto& v : row) c.expected_phy2log.push_back(v.get<int64_t>());
  return c;
}

// phy2log must equal the expected one; logcnt and log2phy must be the reference's derived maps:
// logcnt counts phy2log, and log2phy lists each expert's physical experts (in replica-rank
// order, -1 padded to X = the largest replica count) covering exactly the slots that hold it.
void expect_matches(const Case& c) {
  const zepp::EplbResult r =
      zepp::eplb_rebalance(c.weight, c.layers, c.experts, c.replicas, c.groups, c.nodes, c.gpus);
  ASSERT_EQ(r.phy2log, c.expected_phy2log) << c.name;
  const int X = int(*std::max_element(r.logcnt.begin(), r.logcnt.end()));
  ASSERT_EQ(r.max_replicas, X);
  ASSERT_EQ(r.logcnt.size(), size_t(c.layers) * c.experts);
  ASSERT_EQ(r.log2phy.size(), size_t(c.layers) * c.experts * X);
  for (int l = 0; l < c.layers; ++l) {
    std::vector<int64_t> cnt(c.experts, 0);
    for (int p = 0; p < c.replicas; ++p) ++cnt[c.expected_phy2log[size_t(l) * c.replicas + p]];
    for (int e = 0; e < c.experts; ++e) {
      ASSERT_EQ(r.logcnt[size_t(l) * c.experts + e], cnt[e]) << c.name << " layer " << l << " expert " << e;
      const int64_t* row = &r.log2phy[(size_t(l) * c.experts + e) * X];
      std::vector<bool> seen(c.replicas, false);
      for (int k = 0; k < X; ++k) {
        if (k >= cnt[e]) {
          EXPECT_EQ(row[k], -1) << c.name << " layer " << l << " expert " << e << " pad " << k;
          continue;
        }
        ASSERT_GE(row[k], 0);
        ASSERT_LT(row[k], c.replicas);
        EXPECT_EQ(c.expected_phy2log[size_t(l) * c.replicas + row[k]], e) << c.name << " layer " << l;
        EXPECT_FALSE(seen[row[k]]);
        seen[row[k]] = true;
      }
    }
  }
}

bool have_eplb_data() { return std::filesystem::exists(kEplbDir + "/reference-cases.json"); }

}  // namespace

TEST(Eplb, ReadmeExampleGivesPublishedPhy2log) {
  if (!have_eplb_data()) GTEST_SKIP() << "shared EPLB data absent: " << kEplbDir;
  expect_matches(read_case(load_json(kEplbDir + "/readme-example.json"), "readme-example"));
}

// Hand-derived from eplb.py on the README example, layer 0. Groups (3 experts each) weigh 262,
// 330, 116, 325: node 0 gets groups 1, 2; node 1 gets groups 3, 0. Node 0 replicates experts 5
// then 4; node 1 experts 10 then 1. Packing the node's physical experts by load per replica puts
// expert 5's original (rank 0) at slot 0 and its copy (rank 1) at 2; expert 4's original at 7,
// its copy at 5; expert 1's original at 15, its copy at 13; expert 10's at 8 and 10.
TEST(Eplb, ReadmeExampleLog2phyAndLogcnt) {
  const std::vector<float> w = {90, 132, 40, 61, 104, 165, 39, 4, 73, 56, 183, 86,
                                20, 107, 104, 64, 19, 197, 187, 157, 172, 86, 16, 27};
  const zepp::EplbResult r = zepp::eplb_rebalance(w, 2, 12, 16, 4, 2, 8);
  const std::vector<int64_t> cnt0 = {1, 2, 1, 1, 2, 2, 1, 1, 1, 1, 2, 1};
  EXPECT_EQ(std::vector<int64_t>(r.logcnt.begin(), r.logcnt.begin() + 12), cnt0);
  const int X = 2;  // the largest replica count over both layers
  auto row = [&](int e) { return std::vector<int64_t>(r.log2phy.begin() + e * X, r.log2phy.begin() + (e + 1) * X); };
  EXPECT_EQ(row(5), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(row(4), (std::vector<int64_t>{7, 5}));
  EXPECT_EQ(row(1), (std::vector<int64_t>{15, 13}));
  EXPECT_EQ(row(10), (std::vector<int64_t>{8, 10}));
  EXPECT_EQ(row(3), (std::vector<int64_t>{6, -1}));
}

class EplbReference : public ::testing::TestWithParam<int> {};

TEST_P(EplbReference, MatchesExpectedMaps) {
  if (!have_eplb_data()) GTEST_SKIP() << "shared EPLB data absent: " << kEplbDir;
  static const json cases = load_json(kEplbDir + "/reference-cases.json")["cases"];
  ASSERT_LT(size_t(GetParam()), cases.size());
  const json& j = cases[GetParam()];
  expect_matches(read_case(j, j["description"].get<std::string>()));
}

// reference-cases.json holds 11 cases; the count is checked so none is silently skipped.
INSTANTIATE_TEST_SUITE_P(AllCases, EplbReference, ::testing::Range(0, 11));

TEST(Eplb, ReferenceFileHasElevenCases) {
  if (!have_eplb_data()) GTEST_SKIP() << "shared EPLB data absent: " << kEplbDir;
  EXPECT_EQ(load_json(kEplbDir + "/reference-cases.json")["cases"].size(), 11u);
}

// Global policy by hand: loads 8 4 2 1, 6 replicas on 2 GPUs. Extra replicas: expert 0 (8 > 4),
// then expert 0 again (8/2 ties expert 1's 4; lowest index wins). Physical loads 8/3, 4, 2, 1,
// 8/3, 8/3 packed in stable descending order p1 p0 p4 p5 p2 p3 onto the lighter GPU with room:
// GPU 0 = p1 p5 p3, GPU 1 = p0 p4 p2.
TEST(Eplb, GlobalHandComputed) {
  const zepp::EplbResult r = zepp::eplb_rebalance({8, 4, 2, 1}, 1, 4, 6, 1, 1, 2);
  EXPECT_EQ(r.phy2log, (std::vector<int64_t>{1, 0, 3, 0, 0, 2}));
  EXPECT_EQ(r.logcnt, (std::vector<int64_t>{3, 1, 1, 1}));
  // Expert 0: rank 0 (p0) at slot 3, rank 1 (p4) at 4, rank 2 (p5) at 1.
  EXPECT_EQ(std::vector<int64_t>(r.log2phy.begin(), r.log2phy.begin() + 3), (std::vector<int64_t>{3, 4, 1}));
  EXPECT_EQ(std::vector<int64_t>(r.log2phy.begin() + 3, r.log2phy.begin() + 6), (std::vector<int64_t>{0, -1, -1}));
}

TEST(Eplb, RejectsBadArguments) {
  const std::vector<float> w(8, 1.0f);
  auto message = [&](auto call) {
    try {
      call();
    } catch (const zepp::ArgumentError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([&] { zepp::eplb_rebalance(w, 1, 8, 6, 1, 1, 2); }).rfind("num_replicas:", 0), 0u);
  EXPECT_EQ(message([&] { zepp::eplb_rebalance(w, 1, 8, 9, 1, 1, 2); }).rfind("num_replicas:", 0), 0u);
  EXPECT_EQ(message([&] { zepp::eplb_rebalance(w, 1, 8, 12, 4, 4, 6); }).rfind("num_gpus:", 0), 0u);
  EXPECT_EQ(message([&] { zepp::eplb_rebalance(w, 1, 8, 12, 3, 3, 6); }).rfind("num_groups:", 0), 0u);
  EXPECT_EQ(message([&] { zepp::eplb_rebalance(w, 2, 8, 8, 1, 1, 2); }).rfind("weight:", 0), 0u);
  std::vector<float> bad = w;
  bad[3] = -1.0f;
  EXPECT_NE(message([&] { zepp::eplb_rebalance(bad, 1, 8, 8, 1, 1, 2); }).find("expert 3"), std::string::npos);
  bad[3] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(message([&] { zepp::eplb_rebalance(bad, 1, 8, 8, 1, 1, 2); }).rfind("weight:", 0), 0u);
}

// The global policy (num_groups % num_nodes != 0) accepts any num_gpus, as eplb.py does: 6 GPUs on
// 4 nodes is the global rule on 6 GPUs (num_nodes plays no part). Loads 8 4 2 1 2 4, 12 replicas:
// the 6 extras go by load per replica to e0 (8), e0 (8/2 = 4 ties e1, e5: lowest index), e1 (4),
// e5 (4), e0 (8/3), e0 (8/4 = 2 ties e1, e2, e4, e5: lowest index).
TEST(Eplb, GlobalPolicyAnyGpuCount) {
  const std::vector<float> w = {8, 4, 2, 1, 2, 4};
  const zepp::EplbResult r = zepp::eplb_rebalance(w, 1, 6, 12, 1, 4, 6);
  EXPECT_EQ(r.phy2log, zepp::eplb_rebalance(w, 1, 6, 12, 1, 1, 6).phy2log);
  EXPECT_EQ(r.logcnt, (std::vector<int64_t>{5, 2, 1, 1, 1, 2}));
  EXPECT_EQ(r.max_replicas, 5);
}

// Global fallback accepts groups that do not divide E (the reference does: qwen case, 3 groups).
TEST(Eplb, GlobalFallbackIgnoresGroups) {
  const std::vector<float> w = {5, 1, 3, 2};
  EXPECT_EQ(zepp::eplb_rebalance(w, 1, 4, 6, 3, 2, 2).phy2log, zepp::eplb_rebalance(w, 1, 4, 6, 1, 1, 2).phy2log);
}
