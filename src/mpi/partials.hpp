// Rows a rank holds during combine (src/plan/comm_plan.hpp "Data model"): gate-weighted expert
// outputs of single pairs it computed, partial sums it received or pre-reduced. A row is keyed
// by its token and the set of pairs it sums; a combine task asks for row (t, P) and gets it as
// the sum of held rows whose pair sets partition P.
#pragma once
#include <cstdint>
#include <map>
#include <vector>

namespace zepp::mpi {

class PartialStore {
 public:
  explicit PartialStore(int hidden) : hidden_(hidden) {}

  // Stores row (token, pairs); pairs need not be sorted. A row with the same key replaces the
  // old one (a plan may deliver the same partial sum twice only if it is the same sum).
  void put(int64_t token, std::vector<int64_t> pairs, const float* row);

  // Writes into out[0 .. hidden) the sum over pairs P of `token`, built from held rows: larger
  // rows first (pre-reduced sums before single outputs), then by their smallest pair, each
  // used only when all its pairs are in P and none is covered yet. The order is a function of
  // the held keys only, so the sum is bit-identical across runs. Throws std::logic_error
  // naming the token and the missing pairs when the held rows do not cover P exactly.
  void sum(int64_t token, const int64_t* pairs, int64_t count, float* out) const;

  int hidden() const { return hidden_; }

 private:
  int hidden_;
  // token -> (sorted pair set -> row)
  std::map<int64_t, std::map<std::vector<int64_t>, std::vector<float>>> rows_;
};

}  // namespace zepp::mpi
