// HALO-Q (iser-moe.txt §4.1, Algorithm 1): hot experts of ranks above the water level are
// replicated onto aligned rank groups, quotas are repaired pairwise for locality, and routes
// are rewritten local first (replicate.hpp).
#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "core/error.hpp"
#include "swap/replicate_detail.hpp"

namespace zepp {
namespace {

using namespace replicate_detail;

struct Broadcast {
  int expert, owner, level, first, size;  // group = ranks [first, first + size)
  int helper = -1;                         // stage 3: helper slot index
  std::vector<int> hosts;                  // owner, then the members other than the owner
  std::vector<int64_t> quota;              // aligned with hosts
};

class HaloQ {
 public:
  HaloQ(const std::vector<int64_t>& d, int E, const Topology& topo, int S, int domain)
      : d_(d), E_(E), P_(topo.num_gpus()), H_(E / P_), S_(S), domain_(domain), load_(P_, 0), total_(E, 0) {
    for (size_t i = 0; i < d.size(); ++i) total_[i % E] += d[i];
    for (int e = 0; e < E; ++e) load_[owner(e)] += total_[e];
    T_ = (std::accumulate(load_.begin(), load_.end(), int64_t(0)) + P_ - 1) / P_;
  }

  ReplicationPlan run(const Topology& topo) {
    place();
    color();
    for (int pass = 0; pass < 2; ++pass) tournament();
    return rewrite(topo);
  }

 private:
  int owner(int e) const { return e / H_; }
  int64_t own(int rank, int e) const { return d_[size_t(rank) * E_ + e]; }

  // Stage 2 (Objective 1, balance).
  void place() {
    std::vector<int> exports(P_, 0), free_slots(P_, S_);
    std::vector<bool> frozen(P_, false), exported(E_, false);
    std::vector<std::vector<int>> candidates(P_);  // min(S, H) heaviest home experts, heaviest first
    for (int r = 0; r < P_; ++r) {
      for (int h = 0; h < H_; ++h) candidates[r].push_back(r * H_ + h);
      std::stable_sort(candidates[r].begin(), candidates[r].end(), [&](int a, int b) { return total_[a] > total_[b]; });
      candidates[r].resize(std::min(S_, H_));
    }
    auto next_expert = [&](int r) {
      for (int e : candidates[r])
        if (!exported[e] && total_[e] > 0) return e;
      return -1;
    };
    for (;;) {
      int o = -1;
      for (int r = 0; r < P_; ++r)
        if (load_[r] > T_ && !frozen[r] && exports[r] < S_ && next_expert(r) >= 0 && (o < 0 || load_[r] > load_[o]))
          o = r;
      if (o < 0) return;
      const int e = next_expert(o);
      const int64_t want = std::min(load_[o] - T_, total_[e]);
      Broadcast b = choose_group(o, want, free_slots);
      if (b.size == 0) {
        frozen[o] = true;
        continue;
      }
      b.expert = e;
      exported[e] = true;
      ++exports[o];
      for (int m = b.first; m < b.first + b.size; ++m) --free_slots[m];
      // Move up to `want` of e's routes from o to the members, coldest first, each up to T.
      std::vector<int> members;
      for (int m = b.first; m < b.first + b.size; ++m)
        if (m != o) members.push_back(m);
      std::stable_sort(members.begin(), members.end(), [&](int a, int c) { return load_[a] < load_[c]; });
      b.hosts = {o};
      b.quota = {total_[e]};
      int64_t left = want;
      for (int m : members) {
        const int64_t q = std::clamp(T_ - load_[m], int64_t(0), left);
        b.hosts.push_back(m);
        b.quota.push_back(q);
        b.quota[0] -= q;
        load_[m] += q;
        load_[o] -= q;
        left -= q;
      }
      broadcasts_.push_back(std::move(b));
    }
  }

  // The aligned group for o's expert: finest level that absorbs `want`, most room; else most room.
  Broadcast choose_group(int o, int64_t want, const std::vector<int>& free_slots) const {
    Broadcast best{};
    int64_t best_room = 0;
    bool best_absorbs = false;
    // With NVLink domains the levels start at the domain: halving G itself gives groups that
    // straddle two domains when G / domain is not a power of two (3 x 8 GPUs: groups of 6).
    for (int level = 0, size = domain_ > 0 ? domain_ : P_;; ++level, size /= 2) {
      for (int first = 0; first < P_; first += size) {
        if (domain_ > 0 && first / domain_ != o / domain_) continue;  // one NVLink domain
        int64_t room = 0;
        bool slots = true;
        for (int m = first; m < first + size; ++m) {
          slots &= free_slots[m] > 0;
          if (m != o) room += std::max<int64_t>(0, T_ - load_[m]);
        }
        if (!slots || room == 0) continue;
        const bool absorbs = room >= want;
        // Absorbing groups beat others; among absorbing ones finer levels win (visited later),
        // then more room; among non-absorbing ones more room wins.
        const bool better = absorbs ? (!best_absorbs || level > best.level || room > best_room)
                                    : (!best_absorbs && room > best_room);
        if (better) best = Broadcast{0, o, level, first, size, -1, {}, {}}, best_room = room, best_absorbs = absorbs;
      }
      if (size % 2 != 0 || size / 2 < 4) break;  // finer levels: 2^l | P and groups of >= 4 ranks
    }
    return best;
  }

  // Stage 3: coarse to fine, the lowest helper index free on every member.
  void color() {
    std::vector<std::vector<bool>> used(P_, std::vector<bool>(S_, false));
    std::vector<size_t> order(broadcasts_.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return broadcasts_[a].level < broadcasts_[b].level; });
    for (size_t i : order) {
      Broadcast& b = broadcasts_[i];
      for (int h = 0; h < S_ && b.helper < 0; ++h) {
        bool free = true;
        for (int m = b.first; m < b.first + b.size; ++m) free &= !used[m][h];
        if (free) b.helper = h;
      }
      if (b.helper < 0) throw std::logic_error("HALO-Q: slot coloring found no common helper index");
      for (int m = b.first; m < b.first + b.size; ++m) used[m][b.helper] = true;
    }
  }

  // Stage 4 (Objective 2, locality): circle-method tournament, each pair in both orders.
  void tournament() {
    const int n = P_ + P_ % 2;  // a bye when P is odd
    std::vector<int> ring(n);
    std::iota(ring.begin(), ring.end(), 0);
    for (int round = 0; round + 1 < n; ++round) {
      for (int k = 0; k < n / 2; ++k) {
        const int a = ring[k], c = ring[n - 1 - k];
        if (a >= P_ || c >= P_) continue;
        trade(a, c);
        trade(c, a);
      }
      std::rotate(ring.begin() + 1, ring.end() - 1, ring.end());
    }
  }

  // a takes from c's spare quota what its own routes need and gives c as much of its own spare.
  void trade(int a, int c) {
    struct Both {
      Broadcast* b;
      size_t ia, ic;
    };
    std::vector<Both> both;
    for (Broadcast& b : broadcasts_) {
      const auto ia = std::find(b.hosts.begin(), b.hosts.end(), a), ic = std::find(b.hosts.begin(), b.hosts.end(), c);
      if (ia != b.hosts.end() && ic != b.hosts.end())
        both.push_back({&b, size_t(ia - b.hosts.begin()), size_t(ic - b.hosts.begin())});
    }
    auto need = [&](const Both& x, int r, size_t i) { return std::max<int64_t>(0, own(r, x.b->expert) - x.b->quota[i]); };
    auto spare = [&](const Both& x, int r, size_t i) { return std::max<int64_t>(0, x.b->quota[i] - own(r, x.b->expert)); };
    int64_t take = 0, give = 0;
    for (const Both& x : both) {
      take += std::min(need(x, a, x.ia), spare(x, c, x.ic));
      give += spare(x, a, x.ia);
    }
    int64_t amount = std::min(take, give);
    if (amount == 0) return;
    for (int64_t left = amount; const Both& x : both) {
      const int64_t t = std::min({need(x, a, x.ia), spare(x, c, x.ic), left});
      x.b->quota[x.ia] += t, x.b->quota[x.ic] -= t, left -= t;
    }
    // Give where c's own routes need quota first, then anywhere a has spare.
    for (int pass = 0; pass < 2 && amount > 0; ++pass) {
      for (const Both& x : both) {
        const int64_t cap = pass == 0 ? std::min(spare(x, a, x.ia), need(x, c, x.ic)) : spare(x, a, x.ia);
        const int64_t t = std::min(cap, amount);
        x.b->quota[x.ia] -= t, x.b->quota[x.ic] += t, amount -= t;
      }
    }
  }

  // Stage 5: local first, then the surplus by prefix sums in rank order.
  ReplicationPlan rewrite(const Topology& topo) {
    ReplicationPlan out;
    out.placement = home_layout(E_, topo, S_);
    Placement& p = out.placement;
    const int slots = H_ + S_;
    std::vector<bool> replicated(E_, false);
    for (const Broadcast& b : broadcasts_) {
      replicated[b.expert] = true;
      std::vector<int32_t> slot(b.hosts.size());
      for (size_t k = 0; k < b.hosts.size(); ++k) {
        const int r = b.hosts[k];
        slot[k] = k == 0 ? r * slots + b.expert % H_ : r * slots + H_ + b.helper;
        if (k > 0) out.weight_moves.push_back({slot[k], int32_t(b.owner)});
      }
      for (int m = b.first; m < b.first + b.size; ++m) p.phy2log[size_t(m) * slots + H_ + b.helper] = b.expert;
      out.broadcasts.push_back({int32_t(b.expert), int32_t(b.owner), int32_t(b.first), int32_t(b.size), int32_t(b.helper)});
      std::vector<int64_t> supply(P_), quota = b.quota;
      for (int s = 0; s < P_; ++s) {
        supply[s] = own(s, b.expert);
        const auto it = std::find(b.hosts.begin(), b.hosts.end(), s);
        if (it == b.hosts.end()) continue;
        const size_t k = size_t(it - b.hosts.begin());
        const int64_t keep = std::min(supply[s], quota[k]);
        out.counts.push_back({int32_t(b.expert), int32_t(s), slot[k], keep});
        supply[s] -= keep;
        quota[k] -= keep;
      }
      prefix_fill(b.expert, supply, slot, quota, out.counts);
    }
    for (int e = 0; e < E_; ++e)
      for (int s = 0; !replicated[e] && s < P_; ++s)
        out.counts.push_back({int32_t(e), int32_t(s), int32_t(owner(e) * slots + e % H_), own(s, e)});
    fill_aliases(p);
    normalize_counts(out.counts);
    return out;
  }

  const std::vector<int64_t>& d_;
  int E_, P_, H_, S_, domain_;
  std::vector<int64_t> load_, total_;
  int64_t T_ = 0;
  std::vector<Broadcast> broadcasts_;
};

}  // namespace

ReplicationPlan plan_haloq(const std::vector<int64_t>& demand, int num_experts, const Topology& topo, int extra,
                           int domain_size) {
  check_args(demand, num_experts, topo, extra);
  require(domain_size >= 0 && (domain_size == 0 || topo.num_gpus() % domain_size == 0), "domain_size",
          "must divide the " + std::to_string(topo.num_gpus()) + " GPUs (got " + std::to_string(domain_size) + ")");
  return HaloQ(demand, num_experts, topo, extra, domain_size).run(topo);
}

ReplicationPlan plan_haloq(const std::vector<int64_t>& demand, int num_experts, const Topology& topo, int extra) {
  return plan_haloq(demand, num_experts, topo, extra, 0);
}

}  // namespace zepp
