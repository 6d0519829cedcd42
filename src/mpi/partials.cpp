#include "mpi/partials.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace zepp::mpi {

void PartialStore::put(int64_t token, std::vector<int64_t> pairs, const float* row, int32_t producer) {
  std::sort(pairs.begin(), pairs.end());
  rows_[token][std::move(pairs)] = Row{std::vector<float>(row, row + hidden_), producer};
}

void PartialStore::sum(int64_t token, const int64_t* pairs, int64_t count, float* out, const Usable& usable) const {
  std::vector<int64_t> want(pairs, pairs + count);
  std::sort(want.begin(), want.end());
  std::fill(out, out + hidden_, 0.0f);
  auto missing = [&] {
    std::string s;
    for (int64_t p : want) s += " " + std::to_string(p);
    return std::logic_error("token " + std::to_string(token) + ": no held rows cover pairs" + s);
  };
  const auto it = rows_.find(token);
  if (it == rows_.end()) {
    if (want.empty()) return;
    throw missing();
  }
  std::vector<const std::pair<const std::vector<int64_t>, Row>*> cand;
  for (const auto& kv : it->second)
    if (std::includes(want.begin(), want.end(), kv.first.begin(), kv.first.end()) && (!usable || usable(kv.second.producer)))
      cand.push_back(&kv);
  std::stable_sort(cand.begin(), cand.end(), [](auto* a, auto* b) { return a->first.size() > b->first.size(); });
  std::vector<int64_t> covered;
  for (auto* c : cand) {
    bool disjoint = true;
    for (int64_t p : c->first) disjoint = disjoint && !std::binary_search(covered.begin(), covered.end(), p);
    if (!disjoint) continue;
    for (int h = 0; h < hidden_; ++h) out[h] += c->second.values[h];
    covered.insert(covered.end(), c->first.begin(), c->first.end());
    std::sort(covered.begin(), covered.end());
  }
  if (covered != want) {
    std::vector<int64_t> rest;
    std::set_difference(want.begin(), want.end(), covered.begin(), covered.end(), std::back_inserter(rest));
    want = rest;
    throw missing();
  }
}

}  // namespace zepp::mpi
