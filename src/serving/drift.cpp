#include "serving/drift.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

#include "core/error.hpp"

namespace zepp {
namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// Datasets of the requests: first path folder, or `groups` consecutive groups. `asked`: the
// groups are what the user chose to drift over (modes only and rotating), so more groups than
// requests is refused; otherwise (mode none serves them as one stream) at most one per request.
std::vector<int> request_datasets(const Trace& t, int groups, bool asked, std::vector<std::string>& names) {
  std::vector<int> ds(t.requests.size());
  std::map<std::string, int> index;
  for (size_t r = 0; r < t.requests.size(); ++r) {
    const auto slash = t.requests[r].find('/');
    const std::string name = slash == std::string::npos ? "" : t.requests[r].substr(0, slash);
    auto [it, fresh] = index.emplace(name, int(names.size()));
    if (fresh) names.push_back(name);
    ds[r] = it->second;
  }
  if (names.size() >= 2) return ds;
  names.clear();
  const size_t n = t.requests.size();
  require(!asked || size_t(groups) <= std::max<size_t>(n, 1), "groups",
          "--drift-groups asks for " + std::to_string(groups) + " groups of requests, but the trace has " +
              std::to_string(n) + " requests and no dataset folders; give at most " + std::to_string(std::max<size_t>(n, 1)));
  groups = int(std::min<size_t>(size_t(groups), std::max<size_t>(n, 1)));  // no group without requests
  for (int g = 0; g < groups; ++g) names.push_back("group" + std::to_string(g + 1));
  for (size_t r = 0; r < n; ++r) ds[r] = int(r * size_t(groups) / n);
  return ds;
}

// Mean of the rows, each normalised to sum 1, scaled to `scale` in total.
std::vector<double> even_mix(const std::vector<const std::vector<double>*>& rows, double scale) {
  std::vector<double> mix(rows.front()->size(), 0.0);
  for (const auto* row : rows) {
    const double sum = std::accumulate(row->begin(), row->end(), 0.0);
    for (size_t e = 0; e < mix.size(); ++e) mix[e] += sum > 0 ? (*row)[e] / sum * scale / double(rows.size()) : 0.0;
  }
  return mix;
}

}  // namespace

DriftMode parse_drift_mode(const std::string& s) {
  if (s == "none") return DriftMode::None;
  if (s == "only") return DriftMode::Only;
  if (s == "rotating") return DriftMode::Rotating;
  throw ArgumentError("mode: expected none, only or rotating, got '" + s + "'");
}

DriftWorkload::DriftWorkload(const Trace& trace, const ModelShape& model, const Topology& topo,
                             const DriftOptions& opt)
    : trace_(trace), opt_(opt), G_(topo.num_gpus()), E_(model.num_experts), K_(model.top_k) {
  check_trace_matches_model(trace, model);
  require(opt.size_mb > 0 && std::isfinite(opt.size_mb), "size_mb", "must be > 0");
  require(opt.history_fraction > 0 && opt.history_fraction < 1, "history_fraction", "must be in (0, 1)");
  require(opt.period >= 1, "period", "must be >= 1");
  require(opt.groups >= 1, "groups", "must be >= 1");
  require(G_ > 0, "topo", "has no GPU");
  tokens_per_gpu_ = int64_t(opt.size_mb * 1048576.0 / (double(model.hidden) * 2));
  require(tokens_per_gpu_ >= 1, "size_mb", "gives less than one token per GPU");

  std::vector<std::vector<double>> history;  // [dataset][E]
  if (trace.has_tokens()) {
    layer_ = opt.layer < 0 ? trace.layer_ids().front() : opt.layer;
    require(trace.layers.count(layer_) == 1, "layer", "layer " + std::to_string(layer_) + " is not in the trace");
    std::vector<int> ds = request_datasets(trace, opt.groups, opt.mode != DriftMode::None, names_);
    const LayerTrace& L = trace.layers.at(layer_);
    std::vector<int64_t> tokens_in(names_.size(), 0);
    for (int64_t t = 0; t < L.num_tokens(); ++t) ++tokens_in[ds[L.request[t]]];
    // Mode none serves all datasets as one stream: when a dataset is too small to split into
    // history and evaluation, split the whole trace as one dataset instead.
    if (opt.mode == DriftMode::None &&
        std::any_of(tokens_in.begin(), tokens_in.end(), [](int64_t n) { return n < 2; })) {
      std::fill(ds.begin(), ds.end(), 0);
      names_ = {"all"};
      tokens_in = {L.num_tokens()};
    }
    const size_t D = names_.size();
    std::vector<int> rank(ds.size()), size(D, 0);  // request's rank within its dataset
    for (size_t r = 0; r < ds.size(); ++r) rank[r] = size[ds[r]]++;
    history.assign(D, std::vector<double>(E_, 0.0));
    eval_tokens_.assign(D, {});
    std::vector<std::vector<int64_t>> history_tokens(D);
    for (int64_t t = 0; t < L.num_tokens(); ++t) {
      const int r = L.request[t], d = ds[r];
      if (rank[r] < int(std::floor(size[d] * opt.history_fraction))) history_tokens[d].push_back(t);
      else eval_tokens_[d].push_back(t);
    }
    for (size_t d = 0; d < D; ++d) {
      require(tokens_in[d] >= 2, "trace",
              "dataset " + names_[d] + " has " + std::to_string(tokens_in[d]) + " tokens in layer " +
                  std::to_string(layer_) + "; history and evaluation need at least 2");
      if (history_tokens[d].empty() || eval_tokens_[d].empty()) {
        // Too few requests to split (e.g. one): split the dataset's tokens in source order.
        std::vector<int64_t> all = history_tokens[d];
        all.insert(all.end(), eval_tokens_[d].begin(), eval_tokens_[d].end());
        std::sort(all.begin(), all.end());
        const int64_t n = int64_t(all.size());
        const int64_t cut = std::clamp<int64_t>(int64_t(std::floor(double(n) * opt.history_fraction)), 1, n - 1);
        history_tokens[d].assign(all.begin(), all.begin() + cut);
        eval_tokens_[d].assign(all.begin() + cut, all.end());
        split_by_tokens_.push_back(names_[d]);
      }
      for (int64_t t : history_tokens[d])
        for (int k = 0; k < K_; ++k) history[d][L.expert_ids[t * K_ + k]] += 1;
    }
  } else {
    layer_ = opt.layer < 0 ? trace.loads.front().per_layer.begin()->first : opt.layer;
    for (const LoadTable& t : trace.loads) {
      const auto it = t.per_layer.find(layer_);
      require(it != t.per_layer.end(), "layer", "layer " + std::to_string(layer_) + " is not in table " + t.name);
      names_.push_back(t.name);
      history.push_back(it->second);
      int positive = 0;
      for (double v : it->second) positive += v > 0;
      require(positive >= K_, "trace", "table " + t.name + " has fewer than top-k experts with load");
    }
  }

  int target = -1;
  if (opt.mode != DriftMode::None) {
    // Left out, it read "dataset: '' is not a dataset of the trace (...)".
    require(!opt.dataset.empty(), "dataset",
            "--drift only and rotating need one (--dataset), one of the trace's datasets: " + join(names_));
    const auto it = std::find(names_.begin(), names_.end(), opt.dataset);
    if (it == names_.end()) {  // a prefix such as "arc" picks tables in one layer, not here
      std::vector<std::string> under;
      for (const auto& n : names_)
        if (n.starts_with(opt.dataset + "/")) under.push_back(n);
      require(under.empty(), "dataset",
              "--drift serves one dataset, named whole; '" + opt.dataset + "' names " + std::to_string(under.size()) +
                  ": " + join(under));
      throw ArgumentError("dataset: '" + opt.dataset + "' is not a dataset of the trace (" + join(names_) + ")");
    }
    target = int(it - names_.begin());
  }
  std::vector<const std::vector<double>*> rows;
  for (size_t d = 0; d < history.size(); ++d)
    if (opt.mode != DriftMode::Rotating || int(d) != target) rows.push_back(&history[d]);
  double scale = 0;  // history in tokens: what the datasets' histories hold together
  for (const auto* row : rows) scale += std::accumulate(row->begin(), row->end(), 0.0);
  if (!trace.has_tokens()) scale = double(tokens_per_gpu_) * G_ * K_;
  if (opt.mode == DriftMode::None && trace.has_tokens()) {
    history_.assign(E_, 0.0);
    for (const auto* row : rows)
      for (int e = 0; e < E_; ++e) history_[e] += (*row)[e];
    // One stream: every dataset's evaluation tokens in source order.
    std::vector<int64_t> all;
    for (const auto& v : eval_tokens_) all.insert(all.end(), v.begin(), v.end());
    std::sort(all.begin(), all.end());
    eval_tokens_ = {all};
    names_ = {"all"};
  } else {
    history_ = even_mix(rows, scale);
  }
  if (opt.mode == DriftMode::None && !trace.has_tokens()) {
    tables_ = {history_};
    names_ = {"all"};
  } else if (!trace.has_tokens()) {
    tables_ = history;
  }
  if (opt.history) {  // placement from another trace; this one is served whole, as one stream
    require(opt.mode == DriftMode::None, "history", "combines with drift none only (the drift modes split each dataset of one trace)");
    check_trace_matches_model(*opt.history, model);
    history_.assign(E_, 0.0);
    if (opt.history->has_tokens()) {
      require(opt.history->layers.count(layer_) == 1, "history", "layer " + std::to_string(layer_) + " is not in " + opt.history->path);
      const LayerTrace& H = opt.history->layers.at(layer_);
      for (int32_t e : H.expert_ids) history_[size_t(e)] += 1;
    } else {
      for (const LoadTable& t : opt.history->loads)
        if (const auto it = t.per_layer.find(layer_); it != t.per_layer.end())
          for (int e = 0; e < E_; ++e) history_[e] += it->second[e];
    }
    require(std::accumulate(history_.begin(), history_.end(), 0.0) > 0, "history",
            opt.history->path + " has no selections in layer " + std::to_string(layer_));
    if (trace.has_tokens()) {
      std::vector<int64_t> all(size_t(trace.layers.at(layer_).num_tokens()));
      std::iota(all.begin(), all.end(), int64_t(0));
      eval_tokens_ = {all};
    }
    names_ = {"all"};
    split_by_tokens_.clear();
  }
  cursor_.assign(names_.size(), 0);
}

std::string DriftWorkload::description() const {
  const char* mode = opt_.mode == DriftMode::None ? "none" : opt_.mode == DriftMode::Only ? "only" : "rotating";
  return trace_.path + " layer " + std::to_string(layer_) + ", drift " + mode +
         (opt_.mode == DriftMode::None ? "" : " (" + opt_.dataset + ")") + ", datasets " + join(names_) + ", " +
         std::to_string(tokens_per_gpu_) + " tokens/GPU per iteration" +
         (split_by_tokens_.empty() ? "" : "; " + split_note()) +
         (opt_.history ? "; history = all of " + opt_.history->path + ", evaluation = all of the served trace" : "");
}

std::string DriftWorkload::split_note() const {
  return split_by_tokens_.empty() ? "" : "too few requests, history/evaluation split by tokens in " + join(split_by_tokens_);
}

int DriftWorkload::dataset_index(int iteration) const {
  require(iteration >= 0, "iteration", "must be >= 0");
  if (opt_.mode == DriftMode::Rotating) return (iteration / opt_.period) % int(names_.size());
  if (opt_.mode == DriftMode::Only)
    return int(std::find(names_.begin(), names_.end(), opt_.dataset) - names_.begin());
  return 0;
}

const std::string& DriftWorkload::dataset_of(int iteration) const { return names_[dataset_index(iteration)]; }

RoutingBatch DriftWorkload::batch(int iteration) {
  require(iteration == next_iteration_, "iteration",
          "batches are built in order: expected " + std::to_string(next_iteration_) + ", got " +
              std::to_string(iteration));
  ++next_iteration_;
  const int d = dataset_index(iteration);
  RoutingBatch b;
  b.num_gpus = G_;
  b.num_experts = E_;
  b.top_k = K_;
  const int64_t T = tokens_per_gpu_ * G_;
  for (int i = 0; i <= G_; ++i) b.token_offset.push_back(tokens_per_gpu_ * i);
  b.expert_ids.resize(size_t(T) * K_);
  b.gate_weights.resize(size_t(T) * K_);
  // Gate weights the source lacks: the r-th listed expert gets (k - r) / (k (k + 1) / 2).
  auto derived = [&](int r) { return float(K_ - r) / float(K_ * (K_ + 1) / 2); };
  if (trace_.has_tokens()) {
    const LayerTrace& L = trace_.layers.at(layer_);
    const auto& tokens = eval_tokens_[d];
    int64_t& c = cursor_[d];
    for (int64_t t = 0; t < T; ++t, ++c) {
      if (c == int64_t(tokens.size())) c = 0, ++wrapped_;
      const int64_t src = tokens[c];
      for (int k = 0; k < K_; ++k) {
        b.expert_ids[t * K_ + k] = L.expert_ids[src * K_ + k];
        b.gate_weights[t * K_ + k] = L.gate_weights.empty() ? derived(k) : L.gate_weights[src * K_ + k];
      }
    }
  } else {
    std::mt19937_64 rng(opt_.seed * 1000003ULL + uint64_t(iteration));
    std::discrete_distribution<int> pick(tables_[d].begin(), tables_[d].end());
    for (int64_t t = 0; t < T; ++t) {
      for (int k = 0; k < K_; ++k) {
        int e;
        do e = pick(rng);
        while (std::find(&b.expert_ids[t * K_], &b.expert_ids[t * K_] + k, e) != &b.expert_ids[t * K_] + k);
        b.expert_ids[t * K_ + k] = e;
        b.gate_weights[t * K_ + k] = derived(k);
      }
    }
  }
  return b;
}

}  // namespace zepp
