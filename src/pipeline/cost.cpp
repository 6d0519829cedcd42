#include "pipeline/cost.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/error.hpp"
#include "placement/placement.hpp"

namespace zepp {
namespace {

// Bytes per unit. kPerPair and kBase from peak RSS (GNU time) of `zepp simulate` with the
// default a2av,eplb,zepp on sim, Kimi-K2 shape, 2 x 4 GPUs, --hidden 64: 186 MB at 1.05 M pairs
// (--size-mb 2), 606 MB at 4.19 M pairs (--size-mb 8): 137 B per pair, less the batch's 8, over 3
// strategies; 38 MB for a run of 0.02 MiB per GPU. kPerGpuExpert from the code: the demand matrix
// (int64) and the routing quotas (assign_pairs' Quota, 16 B) per (GPU, expert). kPerTask: the
// growth from 0.02 MiB on 2 to 96 nodes (38 -> 48 MB, 25.7 k tasks per strategy), all put on
// tasks, an upper bound.
constexpr double kPerPair = 43;
constexpr double kPerGpuExpert = 24;
constexpr double kPerTask = 128;
constexpr double kBase = 40e6;
// Seconds per unit, CPU time (GNU time, user) on this 2-core machine under load 17, rounded up:
// 9.0 s for the 12.6 M pair-strategies of `simulate --hidden 64 --size-mb 4` (0.7 us each);
// Zepp's placement, whose refinement swaps compare slot pairs (quadratic in E): 3.3 s
// at E = 10,000 on 16 GPUs, 0.09 s at 3,000. kSecondsPerTask: SimGrid's per-activity cost, an
// upper bound. Routing in Python (zepp.route): 68 s for a layer of 10^8 slots (issue 23).
constexpr double kSecondsPerPair = 1.5e-6;
constexpr double kSecondsPerExpertSquared = 4e-8;
constexpr double kSecondsPerTask = 1e-4;
constexpr double kSecondsPerSlot = 7e-7;
// Both placements pack every slot onto the least loaded GPU (a scan of the G GPUs), so a layer
// costs slots x GPUs too: zepp.rebalance_experts on 8 experts in 3 G slots, G = 1024..4096, 6 Dec
// 2026: Zepp's 7.2-9.2 ns, EPLB's 0.7-1.0 ns per slot and GPU, rounded up. Without this term,
// `zepp place --nodes 4096 --gpus-per-node 8` was estimated at seconds and ran for many minutes.
constexpr double kSecondsPerSlotGpuZepp = 1.5e-8;
constexpr double kSecondsPerSlotGpuEplb = 2e-9;

std::string human(double x, const char* unit) {
  const char* prefix[] = {"", " k", " M", " G", " T", " P", " E"};
  int i = 0;
  while (std::abs(x) >= 1000 && i < 6) x /= 1000, ++i;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g%s%s", x, prefix[i], unit);
  return buf;
}

}  // namespace

std::string CostEstimate::text() const {
  const auto exact = [](double x) { return std::to_string(int64_t(std::min(x, 9e18))); };
  return "about " + human(bytes, "B") + " and " + human(seconds, " s") + " (" + exact(gpus) + " GPUs x " + exact(experts) +
         " experts, " + human(pairs, " pairs") + ", " + human(tasks, " tasks") + " per strategy)";
}

CostEstimate estimate_cost(const ModelShape& model, const Topology& topo, int64_t tokens_per_gpu, int strategies,
                           bool zepp_placement) {
  const double G = double(topo.nodes) * topo.gpus_per_node, E = model.num_experts;
  const double slots = std::ceil(E / G) + 2;  // per GPU, with the default R = 2 extra slots
  CostEstimate c;
  c.gpus = G, c.experts = E;
  c.pairs = double(tokens_per_gpu) * G * model.top_k;
  // A plan moves data between every pair of GPUs that exchange tokens (at most G^2, at most one
  // per pair in each of dispatch and combine, NIC relays at most double that) and runs a GEMM per
  // slot holding tokens.
  c.tasks = 4 * std::min(G * G, 2 * c.pairs) + G * slots;
  const double s = std::max(1, strategies);
  c.bytes = kBase + c.pairs * (8 + s * kPerPair) + s * (G * E * kPerGpuExpert + c.tasks * kPerTask);
  c.seconds = s * (c.pairs * kSecondsPerPair + c.tasks * kSecondsPerTask + G * E * kSecondsPerSlot) +
              (zepp_placement ? s * E * E * kSecondsPerExpertSquared : 0);
  return c;
}

// Widest log2phy row: every expert keeps one replica, so one expert holds at most slots - E + 1
// (the bound the maps reach on a skewed load: 4 experts in 4 M slots padded 4 x 4 M entries).
namespace {
double log2phy_width(double experts, double slots) { return std::max(1.0, slots - experts + 1); }
}  // namespace

CostEstimate estimate_placement_cost(double layers, double experts, double slots, double gpus, bool zepp) {
  CostEstimate c;
  c.gpus = gpus, c.experts = experts;
  // Per layer: the load, the maps (phy2log, log2phy [E x widest row], logcnt) and the packing.
  c.bytes = kBase + layers * (16 * slots + 8 * experts * log2phy_width(experts, slots) + kPerGpuExpert * gpus);
  c.seconds = layers * ((zepp ? experts * experts * kSecondsPerExpertSquared : 0) + (slots + gpus) * kSecondsPerSlot +
                        slots * gpus * (zepp ? kSecondsPerSlotGpuZepp : kSecondsPerSlotGpuEplb));
  return c;
}

// From peak RSS (GNU time) of `zepp place --policy eplb` on a load of 4 experts [100, 10, 10, 10]
// and 4 GPUs, 6 Dec 2026: 169 MB at 1 M replicas (5 M map entries printed), 605 MB at 4 M (20 M);
// less what estimate_placement_cost counts, 20.6 B per printed entry at 4 M, rounded up.
constexpr double kJsonBytesPerEntry = 24;

double placement_json_bytes(double layers, double experts, double slots) {
  return kJsonBytesPerEntry * layers * (slots + experts * log2phy_width(experts, slots) + experts);
}

CostEstimate estimate_routing_cost(double slots, double experts, double gpus, double pairs) {
  CostEstimate c;
  c.gpus = gpus, c.experts = experts;
  c.pairs = pairs;
  c.bytes = kBase + 16 * slots + gpus * experts * kPerGpuExpert + 16 * pairs;
  c.seconds = (slots + gpus * experts) * kSecondsPerSlot + pairs * kSecondsPerPair;
  return c;
}

double call_seconds_budget() {
  const char* text = std::getenv("ZEPP_MAX_SECONDS");
  if (!text) return kCallSecondsBudget;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  require(*text && *end == '\0' && std::isfinite(v) && v > 0, "ZEPP_MAX_SECONDS",
          "expected a positive number of seconds, got '" + std::string(text) + "'");
  return v;
}

namespace {
// A budget flag (--max-memory, --max-minutes) rather than a size (--load, a Python argument such as
// "weight"): only a budget can be raised.
bool is_flag(const std::string& name) { return name.rfind("--max-", 0) == 0; }
}  // namespace

void check_budget(const CostEstimate& estimate, double budget_bytes, const std::string& flag, double budget_seconds,
                  const std::string& time_flag, const std::string& smaller) {
  // !(a <= b): a NaN estimate (sizes past double range) is refused too.
  if (!(estimate.bytes <= budget_bytes))
    throw ArgumentError(flag + ": this run needs " + estimate.text() + ", more than the " + human(budget_bytes, "B") +
                        " available; " + smaller + (is_flag(flag) ? " (or raise " + flag + " if the estimate is too cautious)" : ""));
  if (!(estimate.seconds <= budget_seconds))
    throw ArgumentError(time_flag + ": this run needs " + estimate.text() + ", more than the " +
                        human(budget_seconds, " s") + " allowed; " + smaller +
                        (is_flag(time_flag) ? " (or raise " + time_flag + ")" : ""));
}

void check_strategy_fits(const std::string& name, const ModelShape& model, const Topology& topo,
                         const StrategyOptions& opt, const std::string& flags) {
  find_strategy(name);  // throws for an unknown name
  const std::vector<double> uniform(model.num_experts, 1.0);
  try {
    // Which placement each strategy starts from (strategies.cpp, baselines/, swap/): contiguous
    // homes, EPLB's rule, or Zepp's §4.1 placement. Strategies not listed place nothing up front.
    if (name == "a2av" || name == "fast" || name == "comet" || name == "moonep" || name == "halo-q" ||
        name == "iser-moe" || name == "zepp-overlap")
      place_contiguous(model.num_experts, topo);
    else if (name == "eplb" || name == "comet+eplb" || (name == "zepp" && !opt.zepp_placement_rule))
      place_eplb(uniform, topo, base_slots_per_gpu(model, topo) + opt.extra_slots,
                 eplb_groups_for(model, topo, opt.eplb_groups));
    else if (name == "zepp" || name == "zepp+swaps" || name == "epic" || name.rfind("zepp+hot", 0) == 0)
      place_zepp(uniform, topo, opt.extra_slots);
  } catch (const ArgumentError& e) {
    throw ArgumentError("strategies: " + name + " cannot place " + std::to_string(model.num_experts) + " experts on " +
                        std::to_string(topo.nodes) + " x " + std::to_string(topo.gpus_per_node) +
                        " GPUs (change " + flags + "): " + e.what());
  }
}

}  // namespace zepp
