#include "core/types.hpp"

#include "core/error.hpp"

namespace zepp {

const char* to_string(LinkSharing s) {
  return s == LinkSharing::Serial ? "serial" : s == LinkSharing::Pair ? "pair" : "fair";
}

LinkSharing parse_link_sharing(const std::string& name, const std::string& what) {
  if (name == "fair") return LinkSharing::Fair;
  if (name == "serial") return LinkSharing::Serial;
  if (name == "pair") return LinkSharing::Pair;
  throw ArgumentError(what + ": expected fair, serial or pair, got '" + name + "'");
}

std::vector<int64_t> RoutingBatch::demand() const {
  std::vector<int64_t> d(size_t(num_gpus) * num_experts, 0);
  for (int i = 0; i < num_gpus; ++i)
    for (int64_t p = token_offset[i] * top_k; p < token_offset[i + 1] * top_k; ++p)
      ++d[size_t(i) * num_experts + expert_ids[p]];
  return d;
}

std::vector<int32_t> Placement::logcnt() const {
  std::vector<int32_t> cnt(num_experts, 0);
  for (int32_t e : phy2log) ++cnt[e];
  return cnt;
}

std::vector<std::vector<int32_t>> Placement::replicas() const {
  std::vector<std::vector<int32_t>> r(num_experts);
  for (int p = 0; p < num_slots(); ++p) r[phy2log[p]].push_back(p);
  return r;
}

void Placement::validate(const std::string& what) const {
  // Messages are built only on failure: validate runs on every planning call.
  require(num_gpus > 0 && slots_per_gpu > 0 && num_experts > 0, what,
          "num_gpus, slots_per_gpu and num_experts must be positive");
  if (phy2log.size() != size_t(num_slots()))
    throw ArgumentError(what + ": phy2log has " + std::to_string(phy2log.size()) +
                        " entries, expected num_gpus * slots_per_gpu = " + std::to_string(num_slots()));
  std::vector<int32_t> cnt(num_experts, 0);
  for (size_t p = 0; p < phy2log.size(); ++p) {
    if (phy2log[p] < 0 || phy2log[p] >= num_experts)
      throw ArgumentError(what + ": slot " + std::to_string(p) + " holds expert " + std::to_string(phy2log[p]) +
                          ", expected [0, " + std::to_string(num_experts) + ")");
    ++cnt[phy2log[p]];
  }
  for (int e = 0; e < num_experts; ++e)
    if (cnt[e] == 0) throw ArgumentError(what + ": expert " + std::to_string(e) + " has no replica");
}

}  // namespace zepp
