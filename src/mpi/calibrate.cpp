// zepp calibrate: the measurements of mpi/calibrate.hpp.
#include "mpi/calibrate.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "core/error.hpp"
#include "mpi/ffn.hpp"
#include "mpi/pacer.hpp"
#include "mpi/partials.hpp"
#include "mpi/seeded.hpp"

namespace zepp::mpi {
namespace {

// A timed batch lasts at least this long, so that on an oversubscribed machine it spans several
// scheduler time slices and its mean is the rate a rank really gets (Linux CFS slices are a few
// milliseconds), not the speed of an uninterrupted call.
constexpr double kMinBatchSeconds = 0.02;
// Messages of the largest size streamed back to back to measure a link's bandwidth.
constexpr int kStreamMessages = 8;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

std::vector<double> load_average() {
  std::ifstream in("/proc/loadavg");
  double a = 0, b = 0, c = 0;
  if (!(in >> a >> b >> c)) return {};
  return {a, b, c};
}

// Each rank's value, on every rank in rank order.
std::vector<double> all_ranks(double mine, MPI_Comm comm) {
  int n = 0;
  MPI_Comm_size(comm, &n);
  std::vector<double> all(n);
  MPI_Allgather(&mine, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, comm);
  return all;
}

// Mean seconds per call of `fn` over batches of at least kMinBatchSeconds, the median of
// `repeat` batches. Every rank runs it at the same time (a barrier first) and with the same
// number of calls per batch (from the slowest rank's first call).
template <class Fn>
double timed(Fn&& fn, int repeat, MPI_Comm comm) {
  MPI_Barrier(comm);
  double t = MPI_Wtime();
  fn();
  double first = MPI_Wtime() - t, slowest = 0;
  MPI_Allreduce(&first, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
  const int calls = int(std::clamp(std::ceil(kMinBatchSeconds / std::max(slowest, 1e-9)), 1.0, 100000.0));
  std::vector<double> batches;
  for (int r = 0; r < repeat; ++r) {
    MPI_Barrier(comm);
    t = MPI_Wtime();
    for (int c = 0; c < calls; ++c) fn();
    batches.push_back((MPI_Wtime() - t) / calls);
  }
  return median(batches);
}

// The expert FFN as the plan executor runs a Compute task: SwiGLU, then each output row
// gate-weighted and stored as a partial row (mpi/plan_executor.cpp run_compute).
void measure_gemm(const CalibrateOptions& opt, int me, MPI_Comm comm, Calibration& c) {
  const ExpertWeights w = expert_weights(opt.data_seed, me, opt.hidden, opt.ffn);
  int n = 0;
  MPI_Comm_size(comm, &n);
  c.gemm_by_rank.assign(n, {});
  c.gemm.hidden = opt.hidden, c.gemm.ffn = opt.ffn;
  for (int64_t rows : opt.tokens) {
    std::vector<float> x(size_t(rows) * opt.hidden), y(x.size()), row(opt.hidden);
    for (int64_t r = 0; r < rows; ++r) token_activation(opt.data_seed, r, opt.hidden, x.data() + r * opt.hidden);
    const double s = timed(
        [&] {
          PartialStore store(opt.hidden);
          swiglu(w, x.data(), rows, y.data());
          for (int64_t r = 0; r < rows; ++r) {
            for (int h = 0; h < opt.hidden; ++h) row[h] = 0.5f * y[size_t(r) * opt.hidden + h];
            store.put(r, {r}, row.data());
          }
        },
        opt.repeat, comm);
    const std::vector<double> by_rank = all_ranks(s, comm);
    for (int r = 0; r < n; ++r) c.gemm_by_rank[r].push_back(by_rank[r]);
    c.gemm.tokens.push_back(rows);
    c.gemm.seconds.push_back(median(by_rank));
  }
  // Noise can make a larger GEMM look faster than a smaller one; time never falls with work.
  for (size_t i = 1; i < c.gemm.seconds.size(); ++i) c.gemm.seconds[i] = std::max(c.gemm.seconds[i], c.gemm.seconds[i - 1]);
  c.gemm_peak_flops = 6.0 * double(c.gemm.tokens.back()) * opt.hidden * opt.ffn / c.gemm.seconds.back();
}

// Pre-reduction as the plan executor runs it: per token, the sum of its four single-pair rows
// put back as one partial row (PartialStore::sum + put). Bandwidth = rows read / time.
void measure_reduce(const CalibrateOptions& opt, MPI_Comm comm, Calibration& c) {
  constexpr int kTokens = 256, kPairs = 4;
  PartialStore store(opt.hidden);
  std::vector<float> row(opt.hidden);
  for (int64_t t = 0; t < kTokens; ++t)
    for (int64_t p = 0; p < kPairs; ++p) {
      token_activation(opt.data_seed, t * kPairs + p, opt.hidden, row.data());
      store.put(t, {t * kPairs + p}, row.data(), 0);
    }
  const auto only_singles = [](int32_t producer) { return producer == 0; };
  const double s = timed(
      [&] {
        for (int64_t t = 0; t < kTokens; ++t) {
          const int64_t pairs[kPairs] = {t * kPairs, t * kPairs + 1, t * kPairs + 2, t * kPairs + 3};
          store.sum(t, pairs, kPairs, row.data(), only_singles);
          store.put(t, {pairs, pairs + kPairs}, row.data(), 1);
        }
      },
      opt.repeat, comm);
  const double bytes = double(kTokens) * kPairs * opt.hidden * sizeof(float);
  c.reduce_bytes_per_s = bytes / median(all_ranks(s, comm));
}

// Busy-free wait until MPI_Wtime() reaches `t`, in naps as the executors pace (100 us at most).
void sleep_until(double t) {
  while (MPI_Wtime() < t) std::this_thread::sleep_for(std::chrono::duration<double>(std::min(t - MPI_Wtime(), 100e-6)));
}

// Ping-pong between `partner` and this rank (initiator when `lead`), every pair at once; returns
// per size the median one-way time (half a round trip) over the repetitions. Paced: every send
// leaves through this rank's pacer, as the executors' NIC sends do.
std::vector<double> ping_pong(int partner, bool lead, const CalibrateOptions& opt, double pace, MPI_Comm comm) {
  std::vector<double> out;
  for (double b : opt.message_bytes) {
    std::vector<char> buf(size_t(b), 1);
    NicPacer pacer(pace);
    const int reps = b <= 65536 ? 4 * opt.repeat : opt.repeat;
    std::vector<double> times;
    MPI_Barrier(comm);
    for (int r = 0; r <= reps && partner >= 0; ++r) {  // r = 0 warms the path up, not timed
      const double t0 = MPI_Wtime();
      for (int leg = 0; leg < 2; ++leg) {
        if ((leg == 0) == lead) {
          if (pacer.enabled()) sleep_until(pacer.reserve(MPI_Wtime(), b));
          MPI_Send(buf.data(), int(buf.size()), MPI_BYTE, partner, 0, comm);
        } else {
          MPI_Recv(buf.data(), int(buf.size()), MPI_BYTE, partner, 0, comm, MPI_STATUS_IGNORE);
        }
      }
      if (r > 0) times.push_back((MPI_Wtime() - t0) / 2);
    }
    out.push_back(median(times));
  }
  return out;
}

// A stream of `count` messages of `bytes` from the leader to its partner, then a one-byte
// acknowledgement back; the leader returns the seconds from the first send to the ack. Paced:
// every departure is reserved at the start, back to back, as the plan executor reserves the NIC
// for sends that are ready together (mpi/plan_executor.cpp flush_sends).
double stream(int partner, bool lead, double bytes, int count, double pace, MPI_Comm comm) {
  std::vector<char> buf(size_t(bytes), 1);
  char ack = 0;
  MPI_Barrier(comm);
  if (partner < 0) return 0;
  if (!lead) {
    for (int i = 0; i < count; ++i) MPI_Recv(buf.data(), int(buf.size()), MPI_BYTE, partner, 1, comm, MPI_STATUS_IGNORE);
    MPI_Send(&ack, 1, MPI_BYTE, partner, 2, comm);
    return 0;
  }
  NicPacer pacer(pace);
  const double t0 = MPI_Wtime();
  std::vector<double> depart(count, t0);
  for (double& d : depart) d = pacer.reserve(t0, bytes);
  std::vector<MPI_Request> reqs(count);
  for (int i = 0; i < count; ++i) {
    if (pacer.enabled()) sleep_until(depart[i]);
    MPI_Isend(buf.data(), int(buf.size()), MPI_BYTE, partner, 1, comm, &reqs[i]);
  }
  MPI_Waitall(count, reqs.data(), MPI_STATUSES_IGNORE);
  MPI_Recv(&ack, 1, MPI_BYTE, partner, 2, comm, MPI_STATUS_IGNORE);
  return MPI_Wtime() - t0;
}

// One link kind: `partner_of[r]` is rank r's partner (-1: idle), the lower rank leads.
LinkFit measure_link(const std::vector<int>& partner_of, const CalibrateOptions& opt, double pace, int me, MPI_Comm comm) {
  LinkFit f;
  for (int p : partner_of) f.pairs += p >= 0;
  f.pairs /= 2;
  if (f.pairs == 0) return f;
  f.measured = true;
  const int partner = partner_of[me];
  const bool lead = partner >= 0 && me < partner;
  const std::vector<double> mine = ping_pong(partner, lead, opt, pace, comm);
  // Median over the pairs' leaders (both ends of a pair measured the same round trips).
  auto over_leaders = [&](double v) {
    std::vector<double> led;
    for (double x : all_ranks(lead ? v : -1, comm))
      if (x >= 0) led.push_back(x);
    return median(led);
  };
  for (size_t s = 0; s < opt.message_bytes.size(); ++s) {
    f.bytes.push_back(opt.message_bytes[s]);
    f.seconds.push_back(over_leaders(mine[s]));
  }
  f.latency_s = f.seconds.front();
  const double b = opt.message_bytes.back();
  std::vector<double> streams;
  for (int r = 0; r < opt.repeat; ++r) streams.push_back(over_leaders(stream(partner, lead, b, kStreamMessages, pace, comm)));
  // The stream pays one latency; on a busy machine a latency sample can exceed half the stream,
  // and then subtracting it would say more about the scheduler than about the link.
  double t = median(streams);
  if (t > 2 * f.latency_s) t -= f.latency_s;
  else f.note += (f.note.empty() ? "" : "; ") + std::string("latency not subtracted from the stream (it exceeded half of it)");
  f.bytes_per_s = kStreamMessages * b / t;
  return f;
}

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

nlohmann::json link_json(const LinkFit& f) {
  nlohmann::json samples = nlohmann::json::array();
  for (size_t i = 0; i < f.bytes.size(); ++i) samples.push_back({f.bytes[i], f.seconds[i]});
  return {{"measured", f.measured}, {"pairs", f.pairs}, {"bandwidth_bytes_per_s", f.bytes_per_s},
          {"latency_s", f.latency_s}, {"one_way_samples", samples}, {"note", f.note}};
}

}  // namespace

Calibration calibrate(const CalibrateOptions& opt, MPI_Comm comm) {
  int me = 0, n = 0;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  require(opt.gpus_per_node >= 1 && n % opt.gpus_per_node == 0, "gpus_per_node",
          std::to_string(opt.gpus_per_node) + " does not divide the " + std::to_string(n) + " ranks");
  require(opt.hidden > 0, "hidden", "must be positive");
  require(opt.ffn > 0, "ffn", "must be positive");
  require(opt.tokens.size() >= kMinCalibratePoints, "tokens", "needs at least two token counts");
  for (size_t i = 0; i < opt.tokens.size(); ++i)
    require(opt.tokens[i] >= 1 && opt.tokens[i] <= kMaxCalibrateTokens && (i == 0 || opt.tokens[i] > opt.tokens[i - 1]), "tokens",
            "must be ascending, distinct, in [1, 65536]");
  require(opt.repeat >= 1 && opt.repeat <= 1000, "repeat", "must be in [1, 1000]");
  require(opt.message_bytes.size() >= kMinCalibratePoints, "message_bytes", "needs at least two sizes");
  for (size_t i = 0; i < opt.message_bytes.size(); ++i)
    require(opt.message_bytes[i] >= 1 && opt.message_bytes[i] <= kMaxCalibrateMessageBytes &&
                (i == 0 || opt.message_bytes[i] > opt.message_bytes[i - 1]),
            "message_bytes", "must be ascending, distinct, in [1, 268435456] bytes");
  require(opt.nic_bytes_per_s >= 0 && std::isfinite(opt.nic_bytes_per_s), "nic_bytes_per_s", "must be >= 0");

  Calibration c;
  c.ranks = n, c.gpus_per_node = opt.gpus_per_node, c.nic_pacing_bytes_per_s = opt.nic_bytes_per_s;
  if (me == 0) c.load_before = load_average();
  const double start = MPI_Wtime();
  measure_gemm(opt, me, comm, c);
  measure_reduce(opt, comm, c);

  const int gpn = opt.gpus_per_node, nodes = n / gpn;
  std::vector<int> same(n, -1), other(n, -1);
  for (int r = 0; r < n; ++r) {
    const int local = r % gpn, node = r / gpn;
    if ((local ^ 1) < gpn) same[r] = node * gpn + (local ^ 1);             // neighbours in a node
    if ((node ^ 1) < nodes) other[r] = (node ^ 1) * gpn + local;           // same slot, paired nodes
  }
  c.nvlink = measure_link(same, opt, 0, me, comm);
  c.nic = measure_link(other, opt, 0, me, comm);
  const std::string shared = " (all ranks share one machine's memory, so both kinds are the same transport)";
  if (!c.nvlink.measured) {
    c.nvlink = c.nic;
    c.nvlink.measured = false;
    c.nvlink.note = "no two ranks share a node: copied from the unpaced inter-node fit" + shared;
  }
  if (!c.nic.measured) {
    c.nic = c.nvlink;
    c.nic.measured = false;
    c.nic.note = "no ranks on different nodes: copied from the intra-node fit" + shared;
  }
  if (opt.nic_bytes_per_s > 0) {
    const bool across = c.nic.measured;
    c.nic_paced = measure_link(across ? other : same, opt, opt.nic_bytes_per_s, me, comm);
    if (!across) c.nic_paced.note += "measured between ranks of one node through the NIC pacer (no ranks on different nodes)";
  }
  c.wall_s = MPI_Wtime() - start;
  if (me == 0) c.load_after = load_average();
  // Rank 0's load figures to everyone (the others never read them; kept for a uniform result).
  int len = int(c.load_before.size() + c.load_after.size());
  MPI_Bcast(&len, 1, MPI_INT, 0, comm);
  std::vector<double> loads = c.load_before;
  loads.insert(loads.end(), c.load_after.begin(), c.load_after.end());
  loads.resize(size_t(len));
  MPI_Bcast(loads.data(), len, MPI_DOUBLE, 0, comm);
  c.load_before.assign(loads.begin(), loads.begin() + std::min(len, 3));
  c.load_after.assign(loads.begin() + std::min(len, 3), loads.end());
  c.gemm.validate("calibrate");
  return c;
}

nlohmann::json calibrated_topology(const Calibration& c, const std::string& name) {
  const LinkFit& nic = c.nic_pacing_bytes_per_s > 0 ? c.nic_paced : c.nic;
  nlohmann::json points = nlohmann::json::array();
  for (size_t i = 0; i < c.gemm.tokens.size(); ++i) points.push_back({c.gemm.tokens[i], fmt("%.6g us", c.gemm.seconds[i] * 1e6)});
  nlohmann::json record = {
      {"ranks", c.ranks},
      {"nic_pacing", c.nic_pacing_bytes_per_s > 0 ? fmt("%.6g GB/s", c.nic_pacing_bytes_per_s / 1e9) : "off"},
      {"nvlink", link_json(c.nvlink)},
      {"nic_unpaced", link_json(c.nic)},
      {"gemm_seconds_by_rank", c.gemm_by_rank},
      {"reduce_bytes_per_s", c.reduce_bytes_per_s},
      {"load_average_before", c.load_before},
      {"load_average_after", c.load_after},
      {"wall_s", c.wall_s},
      {"method", "every rank measures at once (pairs of ranks for links), as in a run; GEMM: SwiGLU plus gate "
                 "weighting and partial-row store, mean over batches of >= 20 ms, median of repeats and of ranks; "
                 "links: latency = half the round trip of the smallest message, bandwidth = a stream of 8 of the "
                 "largest messages, 8 bytes / (time - latency); medians of repeats and of pairs"}};
  if (c.nic_pacing_bytes_per_s > 0) record["nic_paced"] = link_json(c.nic_paced);
  return {{"name", name},
          {"gpus_per_node", c.gpus_per_node},
          // Three significant digits: more than the measurements hold, and link bandwidths whose
          // ratio the exact routing solver can take (it needs small integer terms).
          {"nvlink", {{"model", "per-pair"}, {"bandwidth", fmt("%.3g GB/s", c.nvlink.bytes_per_s / 1e9)},
                      {"latency", fmt("%.3g us", c.nvlink.latency_s * 1e6)}}},
          {"nic", {{"per_node", c.gpus_per_node}, {"bandwidth", fmt("%.3g GB/s", nic.bytes_per_s / 1e9)},
                   {"latency", fmt("%.3g us", nic.latency_s * 1e6)}}},
          {"compute", {{"model", "measured"},
                       {"peak", fmt("%.6g GFLOP/s", c.gemm_peak_flops / 1e9)},
                       {"hbm", fmt("%.6g GB/s", c.reduce_bytes_per_s / 1e9)},
                       {"kernel_launch", "0 us"},
                       {"gemm", nlohmann::json::array({{{"hidden", c.gemm.hidden}, {"ffn", c.gemm.ffn}, {"points", points}}})}}},
          {"calibration", record}};
}

}  // namespace zepp::mpi
