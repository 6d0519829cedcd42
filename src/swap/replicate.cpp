#include <algorithm>
#include <stdexcept>
#include <tuple>
#include <string>

#include "core/error.hpp"
#include "swap/replicate_detail.hpp"

namespace zepp {
namespace replicate_detail {

int check_args(const std::vector<int64_t>& demand, int num_experts, const Topology& topo, int extra) {
  const int G = topo.num_gpus();
  require(G > 0 && num_experts > 0 && num_experts % G == 0, "topo",
          "the " + std::to_string(G) + " GPUs must divide the " + std::to_string(num_experts) +
              " experts (contiguous homes)");
  require(demand.size() == size_t(G) * num_experts, "demand",
          "has " + std::to_string(demand.size()) + " entries, expected GPUs * experts = " +
              std::to_string(size_t(G) * num_experts));
  for (size_t i = 0; i < demand.size(); ++i)
    require(demand[i] >= 0, "demand", "entry " + std::to_string(i) + " is negative");
  require(extra >= 0, "extra", "must be >= 0 (got " + std::to_string(extra) + ")");
  return num_experts / G;
}

Placement home_layout(int num_experts, const Topology& topo, int extra) {
  const int G = topo.num_gpus(), H = num_experts / G;
  Placement p;
  p.num_gpus = G;
  p.num_experts = num_experts;
  p.slots_per_gpu = H + extra;
  p.phy2log.assign(size_t(G) * p.slots_per_gpu, -1);
  for (int g = 0; g < G; ++g)
    for (int h = 0; h < H; ++h) p.phy2log[size_t(g) * p.slots_per_gpu + h] = g * H + h;
  return p;
}

void fill_aliases(Placement& p) {
  for (int s = 0; s < p.num_slots(); ++s)
    if (p.phy2log[s] < 0) p.phy2log[s] = p.phy2log[size_t(p.gpu_of_slot(s)) * p.slots_per_gpu];
}

void prefix_fill(int32_t expert, const std::vector<int64_t>& supply, const std::vector<int32_t>& slots,
                 std::vector<int64_t> quota, std::vector<RouteCount>& out) {
  size_t j = 0;
  for (size_t i = 0; i < supply.size(); ++i) {
    for (int64_t left = supply[i]; left > 0;) {
      while (j < slots.size() && quota[j] == 0) ++j;
      if (j == slots.size()) throw std::logic_error("prefix_fill: quotas below supply");
      const int64_t n = std::min(left, quota[j]);
      out.push_back({expert, int32_t(i), slots[j], n});
      left -= n;
      quota[j] -= n;
    }
  }
}

void normalize_counts(std::vector<RouteCount>& counts) {
  std::sort(counts.begin(), counts.end(), [](const RouteCount& a, const RouteCount& b) {
    return std::tie(a.expert, a.src_gpu, a.slot) < std::tie(b.expert, b.src_gpu, b.slot);
  });
  std::vector<RouteCount> out;
  for (const RouteCount& c : counts) {
    if (c.tokens == 0) continue;
    if (!out.empty() && out.back().expert == c.expert && out.back().src_gpu == c.src_gpu && out.back().slot == c.slot)
      out.back().tokens += c.tokens;
    else
      out.push_back(c);
  }
  counts = std::move(out);
}

}  // namespace replicate_detail

std::vector<int64_t> home_loads(const std::vector<int64_t>& demand, int num_experts, const Topology& topo) {
  const int H = replicate_detail::check_args(demand, num_experts, topo, 0);
  std::vector<int64_t> load(topo.num_gpus(), 0);
  for (size_t i = 0; i < demand.size(); ++i) load[int(i % num_experts) / H] += demand[i];
  return load;
}

}  // namespace zepp
