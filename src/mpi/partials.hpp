// Rows a rank holds during combine (src/plan/comm_plan.hpp "Data model"): gate-weighted expert
// outputs of single pairs it computed, partial sums it received or pre-reduced. A row is keyed
// by its token and the set of pairs it sums; a combine task asks for row (t, P) and gets it as
// the sum of held rows whose pair sets partition P.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

namespace zepp::mpi {

class PartialStore {
 public:
  explicit PartialStore(int hidden) : hidden_(hidden) {}

  // Which held rows a sum may use, by the index of the task that produced them.
  using Usable = std::function<bool(int32_t producer)>;

  // Stores row (token, pairs), produced by task `producer`; pairs need not be sorted. A row with
  // the same key replaces the old one (a plan may deliver the same partial sum twice only if it
  // is the same sum).
  void put(int64_t token, std::vector<int64_t> pairs, const float* row, int32_t producer = -1);

  // Writes into out[0 .. hidden) the sum over pairs P of `token`, built from held rows that
  // `usable` accepts: larger rows first (pre-reduced sums before single outputs), then by their
  // smallest pair, each used only when all its pairs are in P and none is covered yet. The
  // executor accepts only rows produced by the consuming task's dependencies, so the choice does
  // not depend on what else happened to arrive first, and sums are bit-identical across runs.
  // Throws std::logic_error naming the token and the missing pairs when the rows do not cover P.
  void sum(int64_t token, const int64_t* pairs, int64_t count, float* out, const Usable& usable = {}) const;

  int hidden() const { return hidden_; }

 private:
  int hidden_;
  // token -> (sorted pair set -> row)
  struct Row {
    std::vector<float> values;
    int32_t producer;
  };
  std::map<int64_t, std::map<std::vector<int64_t>, Row>> rows_;
};

}  // namespace zepp::mpi
