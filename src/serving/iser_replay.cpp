#include "serving/iser_replay.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/presets.hpp"
#include "placement/placement.hpp"
#include "serving/drift.hpp"
#include "swap/replicate.hpp"
#include "trace/trace.hpp"

namespace zepp {
namespace {

// The paper's Figure 7 and §6.1 figures, per EP; kNone where it gives none.
constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
struct PaperE1 {
  int ep;
  double r_none, r_s4, r_s3;    // Figure 7(a) labels: 61-layer means
  double remote_copies;         // §6.1: HALO-Q's remote copies per iteration and layer (S = 4)
  double busiest_median;        // §3.2: HALO-Q's busiest owner, median multicast payloads
  double owner_outside;         // §6.1 "Alignment and SAMI": chosen group excluded the owner
  double send_out, receive_in;  // Figure 7(b) labels: change of the max from no balancing (S = 4)
};
const PaperE1 kPaper[] = {
    {4, 1.20, 1.002, 1.008, kNone, kNone, kNone, -0.08, -0.19},
    {8, 1.44, 1.006, 1.021, 20.4, 2, 0.53, -0.06, -0.31},
    {16, 1.84, 1.010, 1.036, 41.4, 3, 0.76, -0.03, -0.45},
    {24, 2.24, 1.020, 1.063, 76.2, 3, 0.76, -0.02, -0.55},
};
const PaperE1* paper_for(int ep) {
  for (const PaperE1& p : kPaper)
    if (p.ep == ep) return &p;
  return nullptr;
}

double max_over_mean(const std::vector<double>& v) {
  double sum = 0, mx = 0;
  for (double x : v) sum += x, mx = std::max(mx, x);
  return sum > 0 ? mx * double(v.size()) / sum : 1.0;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The trace's prefill tokens only (step 0), every layer; unchanged when it has no decode steps.
Trace prefill_only(const Trace& t) {
  Trace out = t;
  for (auto& [id, L] : out.layers) {
    LayerTrace p;
    p.layer = L.layer;
    p.top_k = L.top_k;
    for (int64_t i = 0; i < L.num_tokens(); ++i) {
      if (L.step[i] != 0) continue;
      p.expert_ids.insert(p.expert_ids.end(), L.expert_ids.begin() + i * L.top_k, L.expert_ids.begin() + (i + 1) * L.top_k);
      if (!L.gate_weights.empty())
        p.gate_weights.insert(p.gate_weights.end(), L.gate_weights.begin() + i * L.top_k,
                              L.gate_weights.begin() + (i + 1) * L.top_k);
      p.request.push_back(L.request[i]);
      p.step.push_back(0);
    }
    L = std::move(p);
  }
  return out;
}

// Most routes any rank sends to other ranks (send) and receives from them (receive), given each
// (source rank, expert) count's serving rank.
struct Traffic {
  double send = 0, receive = 0;
};
Traffic max_traffic(const std::vector<RouteCount>& counts, int P, int slots_per_rank) {
  std::vector<double> out(P, 0), in(P, 0);
  for (const RouteCount& c : counts) {
    const int host = c.slot / slots_per_rank;
    if (host == c.src_gpu) continue;
    out[c.src_gpu] += double(c.tokens);
    in[host] += double(c.tokens);
  }
  return {*std::max_element(out.begin(), out.end()), *std::max_element(in.begin(), in.end())};
}

struct Accum {
  int n = 0;
  double r_none = 0, r_haloq = 0, r_haloq_max = 0, r_static = 0, copies = 0;
  double send_none = 0, send_haloq = 0, recv_none = 0, recv_haloq = 0;
  int64_t broadcasts = 0, outside = 0;
  std::vector<double> busiest_mc, busiest_p2p;
};

}  // namespace

std::vector<IserReplayCase> iser_replay_cases() {
  return {{"deepseek", "deepseek-v2-lite-puffin", "deepseek-v2-lite"},
          {"llama4", "llama4-maverick-mmlu", "llama4-maverick"},
          {"qwen3", "qwen3-30b-a3b-load", "qwen3-30b-a3b"}};
}

std::vector<IserReplayRow> run_iser_replay(const std::vector<IserReplayCase>& cases, const IserReplayOptions& opt) {
  // Bounds far past the paper's setting (EP 4-24, S = 3-4, 8 iterations; ISER-MoE accepts up
  // to EP32, §5) that keep a run to minutes: a million helper slots ran for 41 s, 2 x 10^9
  // iterations would run for days.
  for (int p : opt.ep)
    require(p >= 4 && p % 2 == 0 && p <= 1024, "ep",
            "EP degrees must be even and in [4, 1024] (got " + std::to_string(p) + ")");
  for (int s : opt.helper_slots)
    require(s >= 1 && s <= 64, "helper_slots", "must be in [1, 64] (got " + std::to_string(s) + ")");
  require(opt.tokens_per_rank >= 1, "tokens_per_rank", "must be >= 1");
  require(opt.iterations >= 1 && opt.iterations <= 1000, "iterations",
          "must be in [1, 1000] (got " + std::to_string(opt.iterations) + ")");
  // A batch of tokens_per_rank x P tokens is held per iteration: 2^22 (21x the paper's 8,192 x
  // 24) needs about 300 MB; 2 x 10^9 per rank ended in "out of memory (try a smaller --size-mb)".
  constexpr int64_t kMaxTokensPerIteration = int64_t(1) << 22;
  for (const IserReplayCase& c : cases)
    for (int p : opt.ep)
      if (model_preset(c.model).num_experts % p == 0)
        require(opt.tokens_per_rank <= kMaxTokensPerIteration / p, "tokens_per_rank",
                fmt::format("expected at most {} tokens per rank at EP {} ({} per iteration), got {}",
                            kMaxTokensPerIteration / p, p, kMaxTokensPerIteration, opt.tokens_per_rank));
  std::vector<IserReplayRow> rows;
  const auto t0 = std::chrono::steady_clock::now();
  for (const IserReplayCase& c : cases) {
    const ModelShape model = model_preset(c.model);
    const Trace trace = prefill_only(read_trace(opt.traces_dir + "/" + c.trace));
    check_trace_matches_model(trace, model);
    std::vector<int> layers;
    if (trace.has_tokens()) layers = trace.layer_ids();
    else
      for (const auto& [l, v] : trace.loads.front().per_layer) layers.push_back(l);
    for (int P : opt.ep) {
      if (model.num_experts % P != 0) {
        for (int S : opt.helper_slots) {
          IserReplayRow r{c.workload, P, S, ""};
          r.skipped = fmt::format("E = {} is not divisible by {} (ISER-MoE needs E % P == 0)", model.num_experts, P);
          rows.push_back(r);
        }
        continue;
      }
      Topology topo;  // one NVLink domain of P ranks; HALO-Q reads only the rank count
      topo.name = "nvlink-domain";
      topo.gpus_per_node = P;
      topo.nvlink_model = NvlinkModel::Switch;
      const int H = model.num_experts / P;
      std::map<int, Accum> acc;  // per S
      int64_t wrapped = 0;
      double trace_tokens = 0, r_whole = 0, top4 = 0;
      for (int layer : layers) {
        DriftOptions d;
        d.layer = layer;
        d.size_mb = double(opt.tokens_per_rank) * model.token_bytes() / 1048576.0;
        d.seed = opt.seed;
        d.history = &trace;  // every token is served; history = whole-trace loads (static plan)
        DriftWorkload w(trace, model, topo, d);
        require(w.tokens_per_gpu() == opt.tokens_per_rank, "tokens_per_rank", "could not be represented exactly");
        {  // the layer's whole-trace statistics
          const std::vector<double>& h = w.history_load();
          std::vector<double> home(P, 0), sorted = h;
          for (int e = 0; e < model.num_experts; ++e) home[e / H] += h[e];
          std::partial_sort(sorted.begin(), sorted.begin() + 4, sorted.end(), std::greater<>());
          const double sum = std::accumulate(h.begin(), h.end(), 0.0);
          r_whole += max_over_mean(home);
          top4 += (sorted[0] + sorted[1] + sorted[2] + sorted[3]) / sum;
          if (trace.has_tokens()) trace_tokens += double(trace.layers.at(layer).num_tokens());
        }
        std::map<int, Placement> statics;
        for (int S : opt.helper_slots) statics[S] = place_eplb(w.history_load(), topo, H + S, 1);
        for (int it = 0; it < opt.iterations; ++it) {
          const std::vector<int64_t> demand = w.batch(it).demand();
          std::vector<double> home(P, 0), total(model.num_experts, 0);
          for (size_t i = 0; i < demand.size(); ++i) {
            total[i % model.num_experts] += double(demand[i]);
            home[int(i % model.num_experts) / H] += double(demand[i]);
          }
          const double r_none = max_over_mean(home);
          std::vector<RouteCount> home_counts;
          for (int s = 0; s < P; ++s)
            for (int e = 0; e < model.num_experts; ++e)
              if (demand[size_t(s) * model.num_experts + e] > 0)
                home_counts.push_back({e, s, e, demand[size_t(s) * model.num_experts + e]});
          const Traffic none = max_traffic(home_counts, P, H);
          for (int S : opt.helper_slots) {
            Accum& a = acc[S];
            const ReplicationPlan plan = plan_haloq(demand, model.num_experts, topo, S);
            std::vector<double> load(P, 0);
            for (const RouteCount& rc : plan.counts) load[rc.slot / (H + S)] += double(rc.tokens);
            const double r = max_over_mean(load);
            const Traffic t = max_traffic(plan.counts, P, H + S);
            // Static EPLB plan, even split over replicas.
            const Placement& sp = statics.at(S);
            const std::vector<int32_t> cnt = sp.logcnt();
            std::vector<double> sload(P, 0);
            for (int slot = 0; slot < sp.num_slots(); ++slot)
              sload[sp.gpu_of_slot(slot)] += total[sp.phy2log[slot]] / cnt[sp.phy2log[slot]];
            std::vector<double> exports_mc(P, 0), exports_p2p(P, 0);
            for (const ReplicaBroadcast& b : plan.broadcasts) {
              exports_mc[b.owner] += 1;
              exports_p2p[b.owner] += b.size - (b.owner_in_group() ? 1 : 0);
              a.outside += !b.owner_in_group();
            }
            ++a.n;
            a.r_none += r_none, a.r_haloq += r, a.r_haloq_max = std::max(a.r_haloq_max, r);
            a.r_static += max_over_mean(sload);
            a.copies += double(plan.weight_moves.size());
            a.broadcasts += int64_t(plan.broadcasts.size());
            a.send_none += none.send, a.recv_none += none.receive, a.send_haloq += t.send, a.recv_haloq += t.receive;
            a.busiest_mc.push_back(*std::max_element(exports_mc.begin(), exports_mc.end()));
            a.busiest_p2p.push_back(*std::max_element(exports_p2p.begin(), exports_p2p.end()));
          }
        }
        wrapped += w.wrapped();
      }
      for (int S : opt.helper_slots) {
        const Accum& a = acc.at(S);
        IserReplayRow r{c.workload, P, S, ""};
        r.iterations = opt.iterations;
        r.layers = int(layers.size());
        r.wrapped = wrapped;
        r.trace_tokens = trace_tokens / double(layers.size());
        r.r_whole_trace = r_whole / double(layers.size());
        r.top4_share = top4 / double(layers.size());
        const double n = a.n;
        r.r_none = a.r_none / n, r.r_haloq = a.r_haloq / n, r.r_haloq_max = a.r_haloq_max, r.r_static = a.r_static / n;
        r.excess_removed = r.r_none > 1 ? 1 - (r.r_haloq - 1) / (r.r_none - 1) : 1.0;
        r.remote_copies = a.copies / n;
        r.busiest_multicast_median = median(a.busiest_mc);
        r.busiest_multicast_max = *std::max_element(a.busiest_mc.begin(), a.busiest_mc.end());
        r.busiest_p2p_median = median(a.busiest_p2p);
        r.busiest_p2p_max = *std::max_element(a.busiest_p2p.begin(), a.busiest_p2p.end());
        r.owner_outside = a.broadcasts > 0 ? double(a.outside) / double(a.broadcasts) : 0;
        r.send_out_none = a.send_none / n, r.send_out_haloq = a.send_haloq / n;
        r.receive_in_none = a.recv_none / n, r.receive_in_haloq = a.recv_haloq / n;
        rows.push_back(r);
        std::fprintf(stderr, "%s EP%d S=%d: R %.3f -> %.3f (static %.3f), %zu layers x %d iterations (%.0f s)\n",
                     c.workload.c_str(), P, S, r.r_none, r.r_haloq, r.r_static, layers.size(), opt.iterations,
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
    }
  }
  return rows;
}

std::string iser_replay_csv(const std::vector<IserReplayRow>& rows) {
  std::string s =
      "workload,ep,helper_slots,skipped,iterations,layers,wrapped,trace_tokens,r_whole_trace,top4_share,r_none,r_haloq,r_haloq_max,excess_removed,r_static,"
      "remote_copies,busiest_multicast_median,busiest_multicast_max,busiest_p2p_median,busiest_p2p_max,owner_outside,"
      "send_out_none,send_out_haloq,receive_in_none,receive_in_haloq\n";
  for (const auto& r : rows)
    s += fmt::format("{},{},{},\"{}\",{},{},{},{:.0f},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},{:.2f},{},{},{},{},{:.4f},{:.1f},{:.1f},{:.1f},{:.1f}\n",
                     r.workload, r.ep, r.helper_slots, r.skipped, r.iterations, r.layers, r.wrapped, r.trace_tokens,
                     r.r_whole_trace, r.top4_share, r.r_none, r.r_haloq,
                     r.r_haloq_max, r.excess_removed, r.r_static, r.remote_copies, r.busiest_multicast_median,
                     r.busiest_multicast_max, r.busiest_p2p_median, r.busiest_p2p_max, r.owner_outside, r.send_out_none,
                     r.send_out_haloq, r.receive_in_none, r.receive_in_haloq);
  return s;
}

std::string iser_replay_markdown(const std::vector<IserReplayRow>& rows, const IserReplayOptions& opt) {
  auto pct = [](double now, double before) { return before > 0 ? fmt::format("{:+.0f}%", 100 * (now / before - 1)) : "-"; };
  std::string s = fmt::format(
      "{} tokens per rank, {} iterations, every MoE layer, each (iteration, layer) planned independently; "
      "paper: iser-moe.txt §6.1 / Figure 7 (DeepSeek-V4-Pro, mixed trace).\n\n"
      "| workload | EP | S | mean R none (paper) | mean R HALO-Q (paper) | excess removed (paper) | worst layer R | "
      "static EPLB R | remote copies / layer (paper) | busiest owner payloads, multicast median/max (paper) | "
      "point to point median/max | owner outside group (paper) | max send-out / receive-in change (paper) |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
      opt.tokens_per_rank, opt.iterations);
  for (const auto& r : rows) {
    const PaperE1* p = paper_for(r.ep);
    auto paper = [&](double v, const char* f) { return p && !std::isnan(v) ? fmt::format(fmt::runtime(f), v) : std::string("-"); };
    if (!r.skipped.empty()) {
      s += fmt::format("| {} | {} | {} | not run: {} | | | | | | | | | |\n", r.workload, r.ep, r.helper_slots, r.skipped);
      continue;
    }
    const double paper_r = p ? (r.helper_slots == 4 ? p->r_s4 : r.helper_slots == 3 ? p->r_s3 : kNone) : kNone;
    const double paper_excess = p ? 1 - (paper_r - 1) / (p->r_none - 1) : kNone;
    const bool s4 = r.helper_slots == 4;
    s += fmt::format(
        "| {} | {} | {} | {:.3f} ({}) | {:.3f} ({}) | {:.1f}% ({}) | {:.3f} | {:.3f} | {:.1f} ({}) | {:g}/{:g} ({}) | "
        "{:g}/{:g} | {:.0f}% ({}) | {} / {} ({} / {}) |\n",
        r.workload, r.ep, r.helper_slots, r.r_none, paper(p ? p->r_none : kNone, "{:.2f}"), r.r_haloq,
        paper(paper_r, "{:.3f}"), 100 * r.excess_removed, paper(100 * paper_excess, "{:.1f}%"), r.r_haloq_max,
        r.r_static, r.remote_copies, paper(s4 && p ? p->remote_copies : kNone, "{:.1f}"), r.busiest_multicast_median,
        r.busiest_multicast_max, paper(s4 && p ? p->busiest_median : kNone, "{:g}/<=4"), r.busiest_p2p_median,
        r.busiest_p2p_max, 100 * r.owner_outside, paper(p ? 100 * p->owner_outside : kNone, "{:.0f}%"),
        pct(r.send_out_haloq, r.send_out_none), pct(r.receive_in_haloq, r.receive_in_none),
        paper(s4 && p ? 100 * p->send_out : kNone, "{:+.0f}%"), paper(s4 && p ? 100 * p->receive_in : kNone, "{:+.0f}%"));
  }
  s += "\nTrace statistics (means over layers; the paper's mixed trace: 18.2M prefill tokens, whole-trace R 1.41 at "
       "EP8, the four busiest of 384 experts 13.02% of a layer's assignments, 1.04% if uniform):\n\n"
       "| workload | EP | prefill tokens per layer | tokens per iteration | whole-trace R | per-iteration R | top-4 share "
       "(uniform) |\n|---|---|---|---|---|---|---|\n";
  for (const auto& r : rows) {
    if (!r.skipped.empty() || r.helper_slots != rows.front().helper_slots) continue;
    int E = 0;
    for (const auto& c : iser_replay_cases())
      if (c.workload == r.workload) E = model_preset(c.model).num_experts;
    s += fmt::format("| {} | {} | {} | {} | {:.3f} | {:.3f} | {:.1f}% ({:.1f}%) |\n", r.workload, r.ep,
                     r.trace_tokens > 0 ? fmt::format("{:.0f}", r.trace_tokens) : std::string("sampled (load only)"),
                     int64_t(r.ep) * opt.tokens_per_rank, r.r_whole_trace, r.r_none, 100 * r.top4_share,
                     E > 0 ? 400.0 / E : 0.0);
  }
  s += "\nPaper's static plan (§6.1): R = 1.06-1.07 at EP8 with the same four extra slots (EPLB rule, past or "
       "whole-trace loads, even split); excess removed 98.4-99.0% at S = 4, 94.9-95.9% at S = 3 (the paper's "
       "column here is computed from its rounded means).\n";
  return s;
}

}  // namespace zepp
