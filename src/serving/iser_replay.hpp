// ISER-MoE's trace replay in its own setting (iser-moe.txt §6.1 "E1", Figure 7), on our traces:
// one NVLink domain of P ranks (EP P), contiguous home experts, a fixed number of tokens per rank
// per iteration, every (iteration, MoE layer) planned independently by HALO-Q (swap/replicate.hpp)
// with S helper slots per rank. Counts routes (token-expert assignments), not time.
//
// Iterations. Token traces are served as one stream in source order, prefill tokens only (the
// paper replays prefill): iteration i of layer l takes the next P * tokens_per_rank tokens of the
// layer, rank r the r-th run of tokens_per_rank consecutive ones, wrapping to the start when the
// trace runs out (DriftWorkload, mode none, history = the whole trace). Load-only traces sample
// each token's top-k distinct experts from the mean of their tables' per-expert load.
//
// Per (workload, EP, S), over all iterations and MoE layers:
//  - r_none: mean R = max / mean routed load per rank with contiguous homes, no replicas;
//  - r_haloq: the same after HALO-Q; r_haloq_max the worst (iteration, layer);
//    excess_removed = 1 - (r_haloq - 1) / (r_none - 1) (the paper's "excess load removed");
//  - r_static: a static per-layer plan with the same S extra slots per rank, DeepSeek's EPLB rule
//    (placement/placement.hpp place_eplb) on the layer's whole-trace loads, routes split evenly
//    over an expert's replicas (the paper's optimistic even split, §6.1 "Static plan");
//  - remote copies per (iteration, layer): members of a broadcast's group other than its owner;
//  - the busiest owner's send-out per invocation: multicast payloads (broadcasts it exports, each
//    leaving its port once) and point-to-point payloads (one per receiving member), median and
//    max over (iteration, layer);
//  - owner_outside: share of broadcasts whose group excludes the owner (only SAMI serves them);
//  - the traces' statistics behind the differences: prefill tokens per layer (0 for load-only
//    traces, sampled without end), whole-trace R (contiguous homes, the layer's whole-trace
//    loads) and the four busiest experts' share of a layer's assignments, means over layers;
//  - max send-out / receive-in: the most routes any rank sends to / receives from other ranks,
//    mean over (iteration, layer), without balancing and with HALO-Q (Figure 7(b)).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace zepp {

struct IserReplayCase {
  std::string workload;  // label: "deepseek", "llama4", "qwen3"
  std::string trace;     // folder under the traces directory
  std::string model;     // model preset
};

// DeepSeek-V2-Lite (Puffin), Llama-4-Maverick (MMLU), Qwen3-30B-A3B (load tables). Mixtral's 8
// experts leave no aligned group of four ranks a hot expert could use at EP >= 4.
std::vector<IserReplayCase> iser_replay_cases();

struct IserReplayOptions {
  std::string traces_dir = "../shared/data/traces";
  std::vector<int> ep = {4, 8, 16, 24};   // the paper's EP4-24
  std::vector<int> helper_slots = {3, 4};  // S (the paper's S = 4 default and S = 3)
  int64_t tokens_per_rank = 8192;         // the paper's 8,192 tokens/rank
  int iterations = 8;
  uint64_t seed = 1;                       // load-only traces' sampling
};

struct IserReplayRow {
  std::string workload;
  int ep = 0, helper_slots = 0;
  std::string skipped;  // why this EP was not run (E % P != 0), empty when it was
  int iterations = 0, layers = 0;
  int64_t wrapped = 0;  // stream restarts over all layers (tokens reused)
  double trace_tokens = 0, r_whole_trace = 0, top4_share = 0;
  double r_none = 0, r_haloq = 0, r_haloq_max = 0, excess_removed = 0, r_static = 0;
  double remote_copies = 0;
  double busiest_multicast_median = 0, busiest_multicast_max = 0;
  double busiest_p2p_median = 0, busiest_p2p_max = 0;
  double owner_outside = 0;
  double send_out_none = 0, send_out_haloq = 0, receive_in_none = 0, receive_in_haloq = 0;
};

// Runs every case at every EP and S, printing progress to stderr. An EP that does not divide a
// model's experts gives a row with `skipped` set (ISER-MoE requires E % P == 0, §5 "Scope").
// Throws ArgumentError naming the option (ep odd or outside [4, 1024], helper_slots outside
// [1, 64], tokens_per_rank < 1 or above 2^22 tokens per iteration, iterations outside [1, 1000])
// and what reading the traces throws.
std::vector<IserReplayRow> run_iser_replay(const std::vector<IserReplayCase>& cases, const IserReplayOptions& opt);

std::string iser_replay_csv(const std::vector<IserReplayRow>& rows);
// Markdown: our rows, each beside the paper's figure for the same EP and S where it has one.
std::string iser_replay_markdown(const std::vector<IserReplayRow>& rows, const IserReplayOptions& opt);

}  // namespace zepp
