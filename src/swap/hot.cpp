#include "swap/hot.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>

#include "core/error.hpp"
#include "core/roofline.hpp"
#include "swap/nic_floor.hpp"

namespace zepp {
namespace {

// The planner's state for one invocation (plan_hot's steps, hot.hpp).
class HotPlanner {
 public:
  HotPlanner(const RoutingBatch& batch, const Placement& placement, const Routing& routing, const Topology& topo,
             const ModelShape& model, const HotOptions& opt)
      : topo_(topo), model_(model), opt_(opt), old_(placement.slots_per_gpu),
        spg_(placement.slots_per_gpu + opt.helper_slots), K_(batch.top_k) {
    const int G = topo.num_gpus(), S = opt.helper_slots;
    h_.resident = opt.resident.empty() ? std::vector<int32_t>(size_t(G) * S, -1) : opt.resident;
    h_.placement = Placement{G, placement.num_experts, spg_, std::vector<int32_t>(size_t(G) * spg_)};
    for (int g = 0; g < G; ++g) {
      for (int i = 0; i < old_; ++i) h_.placement.phy2log[g * spg_ + i] = placement.phy2log[g * old_ + i];
      for (int k = 0; k < S; ++k) {
        const int32_t r = h_.resident[size_t(g) * S + k];
        h_.placement.phy2log[g * spg_ + old_ + k] = r >= 0 ? r : placement.phy2log[g * old_];
      }
    }
    src_of_token_.resize(size_t(batch.num_tokens()));
    for (int g = 0; g < G; ++g)
      for (int64_t t = batch.token_offset[g]; t < batch.token_offset[g + 1]; ++t) src_of_token_[t] = g;
    h_.routing.slot_of_pair.resize(routing.slot_of_pair.size());
    pairs_of_slot_.resize(h_.placement.num_slots());
    load_.assign(h_.placement.num_slots(), 0);
    remote_.assign(h_.placement.num_slots(), 0);
    for (size_t p = 0; p < routing.slot_of_pair.size(); ++p) {
      const int32_t s = routing.slot_of_pair[p] / old_ * spg_ + routing.slot_of_pair[p] % old_;
      h_.routing.slot_of_pair[p] = s;
      pairs_of_slot_[s].push_back(int64_t(p));
      ++load_[s];
      remote_[s] += topo.node_of(src_of_token_[p / K_]) != topo.node_of(s / spg_);
    }
    used_.assign(h_.placement.num_slots(), 0);
    exported_.assign(h_.placement.num_slots(), 0);
    busy_.assign(G, 0.0);
    c_.assign(G, 0.0);
    r_.assign(G, 0.0);
    window_.assign(G, 0.0);
    for (int g = 0; g < G; ++g) {
      for (int i = 0; i < old_; ++i) c_[g] += time_of(load_[g * spg_ + i]), r_[g] += time_of(remote_[g * spg_ + i]);
      const int64_t tokens = batch.token_offset[g + 1] - batch.token_offset[g];
      window_[g] = shared_expert_time(tokens, model, topo) + c_[g];
    }
    tau_ = 6.0 * model.hidden * model.ffn / topo.compute.peak_flops;
  }

  HotPlan run() {
    h_.cells = h_.placement.num_slots() + double(topo_.num_gpus()) * opt_.helper_slots;  // loads, times, residents
    for (int n = 0; n < topo_.nodes; ++n) plan_node(n);
    tally_counts();
    return std::move(h_);
  }

 private:
  double time_of(int64_t pairs) const { return expert_compute_time(pairs, model_, topo_); }
  // GPU g's GEMM time left once dispatch ends (gemms_after_dispatch) with compute c and remote-row
  // compute r.
  double after_dispatch(double c, double r) const { return gemms_after_dispatch(c, r, opt_.dispatch_seconds); }

  void plan_node(int n) {
    const int first = n * topo_.gpus_per_node, last = first + topo_.gpus_per_node;
    double target = 0, top = 0;
    for (int g = first; g < last; ++g) target += c_[g], top = std::max(top, c_[g]);
    target /= topo_.gpus_per_node;
    // Step 3(a) at its cheapest (one copy, nothing resident in the node): no GPU can export.
    bool resident = false;
    for (size_t i = size_t(first) * opt_.helper_slots; i < size_t(last) * opt_.helper_slots; ++i) resident |= h_.resident[i] >= 0;
    if (!resident && top - target <= hot_copy_seconds(1, opt_.multicast, model_, topo_)) return;
    for (;;) {
      h_.cells += topo_.gpus_per_node * (1.0 + spg_) + old_;  // the argmax, the slot, the members
      int o = first;
      for (int g = first; g < last; ++g)
        if (c_[g] > c_[o]) o = g;
      if (c_[o] <= target) return;
      int32_t from = -1;
      for (int i = 0; i < old_; ++i) {
        const int32_t s = o * spg_ + i;
        if (!exported_[s] && load_[s] > 0 && (from < 0 || load_[s] > load_[from])) from = s;
      }
      // The busiest GPU stays as it is: the node's compute ends with it, others' exports gain nothing.
      if (from < 0 || !try_export(o, from, target)) return;
    }
  }

  // The free helper slot of m holding e as a resident, else -1; holds(m, e): m serves e already.
  int32_t resident_slot(int m, int32_t e) const {
    for (int k = 0; k < opt_.helper_slots; ++k) {
      const int32_t s = m * spg_ + old_ + k;
      if (!used_[s] && h_.resident[size_t(m) * opt_.helper_slots + k] == e) return s;
    }
    return -1;
  }
  bool holds(int m, int32_t e) const {
    for (int i = 0; i < spg_; ++i) {
      const int32_t s = m * spg_ + i;
      if ((i < old_ || used_[s]) && h_.placement.phy2log[s] == e) return true;
    }
    return false;
  }
  // The lowest free helper slot of m without a resident expert, else the lowest free one; -1.
  int32_t free_slot(int m) const {
    int32_t any = -1;
    for (int k = 0; k < opt_.helper_slots; ++k) {
      const int32_t s = m * spg_ + old_ + k;
      if (used_[s]) continue;
      if (h_.resident[size_t(m) * opt_.helper_slots + k] < 0) return s;
      if (any < 0) any = s;
    }
    return any;
  }

  bool try_export(int o, int32_t from, double target) {
    const int32_t e = h_.placement.phy2log[from];
    const double excess = c_[o] - target;
    int64_t need = std::min<int64_t>(load_[from], int64_t(std::ceil(excess / tau_)));
    struct Cand {
      int gpu;
      int32_t slot;
      bool resident;
      int64_t room;
    };
    std::vector<Cand> cands;
    const double w = model_.expert_weight_bytes() / topo_.compute.hbm_bw + topo_.compute.kernel_launch;
    const int first = topo_.node_of(o) * topo_.gpus_per_node;
    for (int m = first; m < first + topo_.gpus_per_node; ++m) {
      const double room_s = target - c_[m];
      if (m == o || room_s < w || holds(m, e)) continue;
      const int32_t rs = resident_slot(m, e);
      const int32_t slot = rs >= 0 ? rs : free_slot(m);
      const int64_t room = int64_t(std::floor((room_s - topo_.compute.kernel_launch) / tau_));
      if (slot >= 0 && room > 0) cands.push_back({m, slot, rs >= 0, room});
    }
    std::sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) {
      return std::make_tuple(!a.resident, -a.room, a.gpu) < std::make_tuple(!b.resident, -b.room, b.gpu);
    });
    HotReplica r{e, o, from, {}, {}, {}, {}};
    std::vector<int> copying;
    for (const Cand& c : cands) {
      if (need <= 0) break;
      const int64_t x = std::min(need, c.room);
      r.members.push_back(c.gpu), r.slots.push_back(c.slot), r.tokens.push_back(x), r.copied.push_back(!c.resident);
      if (!c.resident) copying.push_back(c.gpu);
      need -= x;
    }
    if (r.members.empty()) return false;
    if (!copying.empty() && !copy_pays(o, copying, saving(r, target))) {
      ++h_.refused;
      return false;
    }
    apply(r);
    return true;
  }

  // Step 3(a)'s saving: the latest GEMM end after dispatch of the owner and the members, before
  // and after the replica takes its pairs (in apply's order: node-local sources other than the
  // owner, then other nodes', then the owner's), above the node's combine floor. The owner counts
  // as brought to the node's mean `target`, as the node's exports aim (step 1): without floor or
  // dispatch this is c[o] - c*, its excess.
  double saving(const HotReplica& r, double target) const {
    int64_t local = 0, remote = remote_[r.from_slot];
    for (int64_t p : pairs_of_slot_[r.from_slot]) local += src_of_token_[p / K_] != r.owner;
    local -= remote;
    double before = after_dispatch(c_[r.owner], r_[r.owner]), after = 0;
    int64_t moved_remote = 0;
    for (size_t i = 0; i < r.members.size(); ++i) {
      const int m = r.members[i];
      const int64_t x = r.tokens[i], from_local = std::min(x, local), from_remote = std::min(x - from_local, remote);
      local -= from_local, remote -= from_remote;
      moved_remote += from_remote;
      before = std::max(before, after_dispatch(c_[m], r_[m]));
      after = std::max(after, after_dispatch(c_[m] + time_of(x), r_[m] + time_of(from_remote)));
    }
    const int64_t left_remote = remote_[r.from_slot] - moved_remote;
    const double owner_remote = r_[r.owner] - time_of(remote_[r.from_slot]) + time_of(left_remote);
    after = std::max(after, after_dispatch(target, std::min(owner_remote, target)));
    const int node = topo_.node_of(r.owner);
    return saved_above_floor(before, after, opt_.combine_seconds.empty() ? 0.0 : opt_.combine_seconds[node]);
  }

  // Steps 3(a) and 3(b) of plan_hot; on success the copies are booked on their ports.
  bool copy_pays(int o, const std::vector<int>& copying, double saved) {
    const int k = int(copying.size());
    if (saved <= hot_copy_seconds(k, opt_.multicast, model_, topo_)) return false;
    const double B = model_.expert_weight_bytes(), bw = topo_.nvlink_bw;
    std::vector<double> busy = busy_;
    double floor_s = 0;  // the multicast output's bound per receiver
    if (opt_.multicast && k >= 2) {
      busy[o] += B / bw;
      for (int m : copying) busy[m] += (B + B / k) / bw;
      floor_s = B / topo_.multicast_port_output;
    } else {
      busy[o] += k * B / bw;
      for (int m : copying) busy[m] += B / bw;
    }
    double end = std::max(busy[o], floor_s);
    for (int m : copying) end = std::max(end, busy[m]);
    for (int m : copying)
      if (topo_.nvlink_latency + end > window_[m]) return false;
    busy_ = std::move(busy);
    return true;
  }

  void apply(const HotReplica& r) {
    const int S = opt_.helper_slots;
    const int from_node = topo_.node_of(r.owner);
    std::vector<int64_t>& pairs = pairs_of_slot_[r.from_slot];
    for (size_t i = 0; i < r.members.size(); ++i) {
      const int m = r.members[i];
      const int32_t slot = r.slots[i];
      auto rank = [&](int64_t p) {
        const int src = src_of_token_[p / K_];
        const int cls = src == m ? 0 : src == r.owner ? 3 : topo_.node_of(src) == from_node ? 1 : 2;
        return std::make_tuple(cls, src, p);
      };
      std::stable_sort(pairs.begin(), pairs.end(), [&](int64_t a, int64_t b) { return rank(a) < rank(b); });
      int64_t moved_remote = 0;
      for (int64_t j = 0; j < r.tokens[i]; ++j) {
        h_.routing.slot_of_pair[pairs[j]] = slot;
        moved_remote += topo_.node_of(src_of_token_[pairs[j] / K_]) != from_node;
      }
      pairs.erase(pairs.begin(), pairs.begin() + r.tokens[i]);
      used_[slot] = 1;
      h_.placement.phy2log[slot] = r.expert;
      h_.resident[size_t(m) * S + (slot % spg_ - old_)] = r.expert;
      load_[slot] = r.tokens[i];
      remote_[slot] = moved_remote;
      remote_[r.from_slot] -= moved_remote;
      c_[m] += time_of(r.tokens[i]);
      r_[m] += time_of(moved_remote);
    }
    const double before = time_of(load_[r.from_slot]);
    load_[r.from_slot] = int64_t(pairs.size());
    c_[r.owner] += time_of(load_[r.from_slot]) - before;
    r_[r.owner] = 0;
    for (int i = 0; i < old_; ++i) r_[r.owner] += time_of(remote_[r.owner * spg_ + i]);
    exported_[r.from_slot] = 1;
    std::vector<std::pair<int32_t, int32_t>> copies;  // (member, slot), ascending members
    for (size_t i = 0; i < r.members.size(); ++i)
      if (r.copied[i]) copies.emplace_back(r.members[i], r.slots[i]);
    std::sort(copies.begin(), copies.end());
    if (opt_.multicast && copies.size() >= 2) {
      MulticastMove mv{r.expert, r.owner, {}, {}, true};
      for (const auto& [m, slot] : copies) mv.members.push_back(m), mv.slots.push_back(slot);
      h_.multicasts.push_back(std::move(mv));
    } else {
      for (const auto& [m, slot] : copies) h_.weight_moves.push_back(WeightMove{slot, r.owner});
    }
    h_.replicas.push_back(r);
  }

  void tally_counts() {
    std::map<std::tuple<int32_t, int32_t, int32_t>, int64_t> tally;
    for (size_t p = 0; p < h_.routing.slot_of_pair.size(); ++p) {
      const int32_t s = h_.routing.slot_of_pair[p];
      ++tally[{h_.placement.phy2log[s], src_of_token_[p / K_], s}];
    }
    for (const auto& [key, tokens] : tally)
      h_.routing.counts.push_back(RouteCount{std::get<0>(key), std::get<1>(key), std::get<2>(key), tokens});
  }

  const Topology& topo_;
  const ModelShape& model_;
  const HotOptions& opt_;
  const int old_, spg_, K_;
  HotPlan h_;
  std::vector<int32_t> src_of_token_;
  std::vector<std::vector<int64_t>> pairs_of_slot_;
  std::vector<int64_t> load_;     // [slots] pairs
  std::vector<int64_t> remote_;   // [slots] of them, pairs of other nodes' tokens
  std::vector<char> used_, exported_;
  std::vector<double> busy_;      // [G] seconds of copies booked on the GPU's NVLink port
  std::vector<double> c_, r_, window_;  // [G] compute, of it on remote rows, copy window
  double tau_ = 0;
};

}  // namespace

double hot_copy_seconds(int copies, bool multicast, const ModelShape& model, const Topology& topo) {
  if (copies <= 0) return 0.0;
  const double B = model.expert_weight_bytes(), bw = topo.nvlink_bw;
  if (multicast && copies >= 2)
    return topo.nvlink_latency + std::max((B + B / copies) / bw, B / topo.multicast_port_output);
  return topo.nvlink_latency + copies * B / bw;
}

HotPlan plan_hot(const RoutingBatch& batch, const Placement& placement, const Routing& routing,
                 const Topology& topo, const ModelShape& model, const HotOptions& opt) {
  const int G = topo.num_gpus();
  require(placement.num_gpus == G && placement.slots_per_gpu > 0 &&
              placement.phy2log.size() == size_t(G) * placement.slots_per_gpu,
          "placement", "expected " + std::to_string(G) + " GPUs of slots_per_gpu slots each");
  require(batch.num_gpus == G && batch.num_experts == placement.num_experts && batch.top_k == model.top_k, "batch",
          "expected the placement's GPUs and experts and the model's top_k");
  require(routing.slot_of_pair.size() == size_t(batch.num_tokens()) * batch.top_k, "routing",
          "expected slot_of_pair of " + std::to_string(batch.num_tokens() * batch.top_k) + " pairs");
  for (size_t p = 0; p < routing.slot_of_pair.size(); ++p) {
    const int32_t s = routing.slot_of_pair[p];
    require(s >= 0 && s < placement.num_slots() && placement.phy2log[s] == batch.expert_ids[p], "routing",
            "pair " + std::to_string(p) + " is routed to a slot not holding its expert");
  }
  require(!opt.multicast || (topo.nvlink_model == NvlinkModel::Switch && topo.multicast_port_output > 0), "topo",
          "multicast needs NVSwitch nodes with multicast_port_output > 0 (topology " + topo.name + ")");
  require(opt.helper_slots >= 0, "helper_slots", "expected >= 0, got " + std::to_string(opt.helper_slots));
  require(opt.resident.empty() || opt.resident.size() == size_t(G) * opt.helper_slots, "resident",
          "expected " + std::to_string(G * opt.helper_slots) + " entries (G x S) or none");
  require(std::isfinite(opt.dispatch_seconds) && opt.dispatch_seconds >= 0, "dispatch_seconds", "expected finite >= 0");
  require(opt.combine_seconds.empty() || opt.combine_seconds.size() == size_t(topo.nodes), "combine_seconds",
          "expected one entry per node (" + std::to_string(topo.nodes) + ") or none");
  for (const double v : opt.combine_seconds) require(std::isfinite(v) && v >= 0, "combine_seconds", "expected finite >= 0");
  return HotPlanner(batch, placement, routing, topo, model, opt).run();
}

}  // namespace zepp
