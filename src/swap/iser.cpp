#include "swap/iser.hpp"

namespace zepp {

std::vector<MulticastMove> iser_multicasts(const ReplicationPlan& plan, int home_slots) {
  const auto& bs = plan.broadcasts;
  const int slots = plan.placement.slots_per_gpu;
  auto meets = [](const ReplicaBroadcast& a, const ReplicaBroadcast& b) {
    return a.first < b.first + b.size && b.first < a.first + a.size;
  };
  std::vector<MulticastMove> out;
  for (size_t i = 0; i < bs.size(); ++i) {
    const ReplicaBroadcast& b = bs[i];
    bool direct = false;
    if (b.owner_in_group()) {
      bool pure = true, widest = true;
      for (size_t j = 0; j < bs.size(); ++j) {
        const ReplicaBroadcast& c = bs[j];
        if (meets(b, c) && (c.first != b.first || c.size != b.size || !c.owner_in_group())) pure = false;
        if (j != i && c.owner == b.owner && c.owner_in_group() && (c.size > b.size || (c.size == b.size && j < i)))
          widest = false;
      }
      direct = pure || widest;
    }
    MulticastMove m;
    m.expert = b.expert;
    m.owner = b.owner;
    m.sami = !direct;
    for (int r = b.first; r < b.first + b.size; ++r) {
      m.members.push_back(r);
      m.slots.push_back(r * slots + home_slots + b.helper);
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace zepp
