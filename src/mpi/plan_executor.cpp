// execute_plan: a per-rank event loop over the CommPlan's tasks (see executor.hpp).
#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <map>
#include <memory>
#include <queue>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "core/error.hpp"
#include "exec/task_label.hpp"
#include "mpi/executor.hpp"
#include "mpi/ffn.hpp"
#include "mpi/hash.hpp"
#include "mpi/pacer.hpp"
#include "mpi/partials.hpp"
#include "mpi/seeded.hpp"

namespace zepp::mpi {
namespace {

bool global_barrier(const Task& t) { return t.kind == TaskKind::Barrier && t.gpu < 0; }
// The rank that starts task `t` once its dependencies are done (everyone for a global barrier).
bool waits(const Task& t, int r) { return global_barrier(t) || t.gpu == r; }
// Ranks that see `t` finish without being told: both ends of a transfer, else its GPU.
bool knows(const Task& t, int r) { return waits(t, r) || (t.kind == TaskKind::Transfer && t.dst_gpu == r); }
// Who tells the others: the receiver of a transfer (its rows have arrived), else the task's GPU.
int completer(const Task& t) { return t.kind == TaskKind::Transfer ? t.dst_gpu : t.gpu; }

struct Ready {  // a ready task on a resource queue: lowest (priority, index) first
  int64_t priority;
  int32_t task;
  bool operator>(const Ready& o) const { return priority != o.priority ? priority > o.priority : task > o.task; }
};
using ReadyQueue = std::priority_queue<Ready, std::vector<Ready>, std::greater<Ready>>;

class PlanRun {
 public:
  PlanRun(const CommPlan& plan, const RoutingBatch& batch, const ExecConfig& cfg, MPI_Comm comm)
      : p_(plan), b_(batch), cfg_(cfg), hidden_(plan.model.hidden), partials_(plan.model.hidden), pacer_(cfg.nic_bytes_per_s) {
    MPI_Comm_rank(comm, &me_);
    int size = 0;
    MPI_Comm_size(comm, &size);
    validate(size, comm);
    MPI_Comm_dup(comm, &data_);
    MPI_Comm_dup(comm, &signals_);
    wire_hash_.resize(plan.tasks.size(), 0);
    send_begin_.resize(plan.tasks.size(), -1);
  }
  ~PlanRun() {
    MPI_Comm_free(&data_);
    MPI_Comm_free(&signals_);
  }

  RankOutput run();

 private:
  enum class Req : uint8_t { RecvData, RecvSignal, SendData, SendSignal };
  struct Pending {
    Req kind;
    int32_t task;
    std::vector<float> buf;
  };

  void validate(int size, MPI_Comm comm) const;
  void prepare();
  void post(Req kind, int32_t task, std::vector<float> buf, int peer);
  void progress(bool block);
  void finish(int32_t task);
  void make_ready(int32_t task);
  void start_send(int32_t task);
  void flush_sends();
  void run_compute(int32_t task);
  PartialStore::Usable made_before(int32_t consumer);
  std::vector<float> pack(int32_t task);
  void unpack(int32_t task, const std::vector<float>& buf);
  double now() const { return MPI_Wtime() - t0_; }

  const CommPlan& p_;
  const RoutingBatch& b_;
  ExecConfig cfg_;
  int hidden_, me_ = 0;
  MPI_Comm data_ = MPI_COMM_NULL, signals_ = MPI_COMM_NULL;

  std::vector<int32_t> pending_deps_;                // per task this rank waits on
  std::vector<std::vector<int32_t>> dependents_;     // task -> tasks this rank waits on
  std::vector<std::vector<int32_t>> signal_to_;      // task this rank completes -> ranks to tell
  std::vector<uint8_t> done_;
  int64_t left_ = 0;                                 // tasks of this rank not done yet

  std::unordered_map<int64_t, std::vector<float>> tokens_;  // activations held
  PartialStore partials_;
  std::map<int, ExpertWeights> weights_by_expert_, weights_by_slot_;
  std::vector<float> y_;
  std::vector<uint8_t> reduced_;  // [own pairs]: already added into y
  // (token, final-reduce task, row) -> the row; y sums them in task order once all are in, so
  // the float order does not depend on which arrival came first.
  std::map<std::tuple<int64_t, int32_t, int64_t>, std::vector<float>> finals_;

  std::vector<MPI_Request> reqs_;
  std::vector<Pending> pend_;
  ReadyQueue compute_q_, send_q_;
  std::multimap<double, int32_t> nic_wait_;  // departure time -> NIC send held by the pacer
  NicPacer pacer_;
  std::vector<uint64_t> wire_hash_;
  std::vector<double> send_begin_;         // per task: when its send began (timeline)
  std::vector<TimelineEvent> timeline_;
  std::vector<int32_t> seen_;  // DFS stamps for made_before

  double t0_ = 0, dispatch_end_ = 0, combine_begin_ = -1, combine_end_ = 0;
  RankStats st_;
};

void PlanRun::validate(int size, MPI_Comm comm) const {
  require(size == p_.num_gpus, "comm", "has " + std::to_string(size) + " ranks, the plan " + std::to_string(p_.num_gpus) + " GPUs");
  require(p_.gpus_per_node > 0 && p_.num_gpus == p_.nodes * p_.gpus_per_node, "plan", "num_gpus != nodes * gpus_per_node");
  require(b_.num_gpus == p_.num_gpus && b_.top_k == p_.top_k, "batch", "GPU count or top-k differs from the plan's");
  require(p_.token_bytes == double(hidden_) * 4, "plan",
          "token_bytes must be hidden * 4 (build the plan with ModelShape::bytes_per_elem = 4: rows travel as fp32)");
  int me = 0;
  MPI_Comm_rank(comm, &me);
  require(!cfg_.input || cfg_.input->size() == size_t(b_.token_offset[me + 1] - b_.token_offset[me]) * hidden_, "input",
          "must hold this rank's tokens x hidden rows");
  int* tag_ub = nullptr;
  int flag = 0;
  MPI_Comm_get_attr(comm, MPI_TAG_UB, &tag_ub, &flag);
  require(flag && int64_t(p_.tasks.size()) <= int64_t(*tag_ub), "plan", "more tasks than MPI tags");
  const int32_t n = int32_t(p_.tasks.size());
  for (int32_t i = 0; i < n; ++i) {
    const Task& t = p_.tasks[i];
    const std::string where = "task " + std::to_string(i);
    require(global_barrier(t) || (t.gpu >= 0 && t.gpu < p_.num_gpus), "plan", where + ": gpu out of range");
    if (t.kind == TaskKind::Transfer)
      require(t.dst_gpu >= 0 && t.dst_gpu < p_.num_gpus && t.dst_gpu != t.gpu, "plan", where + ": bad dst_gpu");
    for (int32_t d : p_.deps(t)) require(d >= 0 && d < n && d != i, "plan", where + ": bad dependency");
    // In-switch multicast and the shared-expert window are modelled by the sim executor only.
    require(t.multicast_at.empty() && t.kind != TaskKind::SharedExpert, "plan",
            where + ": in-switch multicast and shared-expert tasks (iser-moe) run on the sim executor only");
  }
}

void PlanRun::prepare() {
  const int32_t n = int32_t(p_.tasks.size());
  pending_deps_.assign(n, 0);
  dependents_.assign(n, {});
  signal_to_.assign(n, {});
  done_.assign(n, 0);
  std::vector<uint8_t> need_signal(n, 0);
  for (int32_t i = 0; i < n; ++i) {
    const Task& t = p_.tasks[i];
    for (int32_t d : p_.deps(t)) {
      const Task& dep = p_.tasks[d];
      if (waits(t, me_)) {
        ++pending_deps_[i];
        dependents_[d].push_back(i);
        if (!knows(dep, me_)) need_signal[d] = 1;
      }
      if (completer(dep) == me_ && !global_barrier(dep))  // ranks waiting on t that cannot see dep finish
        for (int r = 0; r < p_.num_gpus; ++r)
          if (waits(t, r) && !knows(dep, r)) signal_to_[d].push_back(r);
    }
    if (knows(t, me_)) ++left_;
  }
  for (auto& v : signal_to_) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }
  // Inputs, outside the timed region: own activations, weights of the experts computed or sent here.
  const int64_t first = b_.token_offset[me_], last = b_.token_offset[me_ + 1];
  for (int64_t t = first; t < last; ++t) {
    auto& row = tokens_[t];
    row.resize(hidden_);
    if (cfg_.input) std::copy_n(cfg_.input->data() + (t - first) * hidden_, hidden_, row.data());
    else token_activation(cfg_.data_seed, t, hidden_, row.data());
  }
  y_.assign(size_t(last - first) * hidden_, 0.0f);
  reduced_.assign(size_t(last - first) * p_.top_k, 0);
  std::map<int, bool> weights_arrive;  // slot -> a weight transfer brings it here
  for (const Task& t : p_.tasks)
    if (t.kind == TaskKind::Transfer && t.phase == Phase::Weights && t.dst_gpu == me_) weights_arrive[t.slot] = true;
  for (const Task& t : p_.tasks) {
    const bool computes = t.kind == TaskKind::Compute && t.gpu == me_ && !weights_arrive.count(t.slot);
    const bool sends = t.kind == TaskKind::Transfer && t.phase == Phase::Weights && t.gpu == me_;
    if ((computes || sends) && !weights_by_expert_.count(t.expert))
      weights_by_expert_.emplace(t.expert, expert_weights(cfg_.data_seed, t.expert, hidden_, p_.model.ffn));
  }
  // Receives are posted before anything is sent.
  for (int32_t i = 0; i < n; ++i) {
    const Task& t = p_.tasks[i];
    if (t.kind == TaskKind::Transfer && t.dst_gpu == me_) {
      const size_t floats = t.phase == Phase::Weights ? size_t(3) * hidden_ * p_.model.ffn : size_t(t.tokens_at.size()) * size_t(hidden_);
      require(floats <= size_t(INT_MAX), "plan", "task " + std::to_string(i) + " exceeds one MPI message");
      post(Req::RecvData, i, std::vector<float>(floats), t.gpu);
    }
    if (need_signal[i]) post(Req::RecvSignal, i, {}, completer(t));
  }
}

void PlanRun::post(Req kind, int32_t task, std::vector<float> buf, int peer) {
  reqs_.push_back(MPI_REQUEST_NULL);
  pend_.push_back({kind, task, std::move(buf)});
  Pending& q = pend_.back();
  const int count = int(q.buf.size());
  MPI_Comm comm = kind == Req::RecvSignal || kind == Req::SendSignal ? signals_ : data_;
  if (kind == Req::RecvData || kind == Req::RecvSignal)
    MPI_Irecv(q.buf.data(), count, MPI_FLOAT, peer, task, comm, &reqs_.back());
  else
    MPI_Isend(q.buf.data(), count, MPI_FLOAT, peer, task, comm, &reqs_.back());
}

void PlanRun::progress(bool block) {
  if (reqs_.empty()) return;
  std::vector<int> idx(reqs_.size());
  int count = 0;
  if (block) MPI_Waitsome(int(reqs_.size()), reqs_.data(), &count, idx.data(), MPI_STATUSES_IGNORE);
  else MPI_Testsome(int(reqs_.size()), reqs_.data(), &count, idx.data(), MPI_STATUSES_IGNORE);
  if (count == MPI_UNDEFINED) count = 0;
  std::sort(idx.begin(), idx.begin() + count);  // deterministic handling order
  for (int c = 0; c < count; ++c) {
    // finish() may post signals and so grow pend_: read the entry by index, never by reference.
    const Req kind = pend_[idx[c]].kind;
    const int32_t task = pend_[idx[c]].task;
    const Task& t = p_.tasks[task];
    if (kind == Req::RecvData) unpack(task, pend_[idx[c]].buf);
    if (kind != Req::SendSignal) finish(task);
    if (kind == Req::SendData && cfg_.timeline)
      timeline_.push_back(task_event(t, t.link == Link::NIC ? "nic-out" : "nvlink-out", send_begin_[task], now()));
    if (kind == Req::RecvData || kind == Req::SendData) {
      if (t.phase == Phase::Dispatch) dispatch_end_ = now();
      if (t.phase == Phase::Combine) combine_end_ = now();
    }
    pend_[idx[c]].buf = {};
  }
  // Drop completed requests once they are the majority, keeping the arrays short.
  size_t live = 0;
  for (MPI_Request r : reqs_) live += r != MPI_REQUEST_NULL;
  if (live * 2 < reqs_.size()) {
    size_t w = 0;
    for (size_t i = 0; i < reqs_.size(); ++i)
      if (reqs_[i] != MPI_REQUEST_NULL) {
        if (w != i) {  // never self-move: a self-moved vector may free the buffer MPI is filling
          reqs_[w] = reqs_[i];
          pend_[w] = std::move(pend_[i]);
        }
        ++w;
      }
    reqs_.resize(w);
    pend_.resize(w);
  }
}

void PlanRun::finish(int32_t task) {
  if (done_[task]) throw std::logic_error("task " + std::to_string(task) + " finished twice");
  done_[task] = 1;
  if (knows(p_.tasks[task], me_)) --left_;
  for (int32_t b : dependents_[task])
    if (--pending_deps_[b] == 0) make_ready(b);
  for (int r : signal_to_[task]) post(Req::SendSignal, task, {}, r);
}

void PlanRun::make_ready(int32_t i) {
  const Task& t = p_.tasks[i];
  if (t.kind == TaskKind::Barrier) finish(i);
  else if (t.kind == TaskKind::Transfer) send_q_.push({t.priority, i});
  else compute_q_.push({t.priority, i});
}

std::vector<float> PlanRun::pack(int32_t i) {
  const Task& t = p_.tasks[i];
  if (t.phase == Phase::Weights) return weights_by_expert_.at(t.expert).packed();
  const PartialStore::Usable usable = t.phase == Phase::Combine ? made_before(i) : PartialStore::Usable{};
  const auto tokens = p_.tokens(t);
  std::vector<float> buf(tokens.size() * size_t(hidden_));
  for (size_t r = 0; r < tokens.size(); ++r) {
    float* out = buf.data() + r * hidden_;
    if (t.phase == Phase::Dispatch) {
      const auto it = tokens_.find(tokens[r]);
      if (it == tokens_.end())
        throw std::logic_error("gpu " + std::to_string(me_) + " must send token " + std::to_string(tokens[r]) + " it does not hold");
      std::copy(it->second.begin(), it->second.end(), out);
    } else {
      const auto row = p_.row_pairs_of(t, int64_t(r));
      const std::vector<int64_t> pairs(row.begin(), row.end());
      partials_.sum(tokens[r], pairs.data(), int64_t(pairs.size()), out, usable);
    }
  }
  return buf;
}

// Rows a consuming task may sum: those made by its (transitive) dependencies. Other rows of
// the same token may already be here by chance of timing; using them would change the float
// grouping from run to run.
PartialStore::Usable PlanRun::made_before(int32_t consumer) {
  if (seen_.empty()) seen_.assign(p_.tasks.size(), -1);
  auto ancestors = std::make_shared<std::vector<uint8_t>>(p_.tasks.size(), 0);
  const auto first = p_.deps(p_.tasks[consumer]);
  std::vector<int32_t> stack(first.begin(), first.end());
  while (!stack.empty()) {
    const int32_t d = stack.back();
    stack.pop_back();
    if (seen_[d] == consumer) continue;
    seen_[d] = consumer;
    (*ancestors)[d] = 1;
    const auto deps = p_.deps(p_.tasks[d]);
    stack.insert(stack.end(), deps.begin(), deps.end());
  }
  return [ancestors](int32_t producer) { return producer >= 0 && (*ancestors)[producer]; };
}

void PlanRun::unpack(int32_t i, const std::vector<float>& buf) {
  const Task& t = p_.tasks[i];
  if (t.phase == Phase::Weights) {
    weights_by_slot_.insert_or_assign(t.slot, ExpertWeights::unpack(t.expert, hidden_, p_.model.ffn, buf.data()));
    return;
  }
  const auto tokens = p_.tokens(t);
  for (size_t r = 0; r < tokens.size(); ++r) {
    const float* row = buf.data() + r * hidden_;
    if (t.phase == Phase::Dispatch) {
      tokens_[tokens[r]].assign(row, row + hidden_);
    } else {
      const auto pairs = p_.row_pairs_of(t, int64_t(r));
      partials_.put(tokens[r], std::vector<int64_t>(pairs.begin(), pairs.end()), row, i);
    }
  }
}

void PlanRun::start_send(int32_t i) {
  const Task& t = p_.tasks[i];
  if (t.phase == Phase::Combine && combine_begin_ < 0) combine_begin_ = now();
  if (send_begin_[i] < 0) send_begin_[i] = now();
  std::vector<float> buf = pack(i);
  const double bytes = double(buf.size()) * sizeof(float);
  const bool same_node = t.gpu / p_.gpus_per_node == t.dst_gpu / p_.gpus_per_node;
  const Link link = same_node ? Link::NVLink : Link::NIC;
  if (link != t.link || std::fabs(bytes - t.bytes) > 0.5)
    throw std::logic_error("task " + std::to_string(i) + ": the plan says " + std::to_string(t.bytes) + " bytes over " +
                           to_string(t.link) + ", the executor sends " + std::to_string(bytes) + " over " + to_string(link));
  (same_node ? st_.nvlink_bytes : st_.nic_bytes) += bytes;
  ++st_.messages;
  wire_hash_[i] = fnv1a(buf.data(), buf.size() * sizeof(float));
  post(Req::SendData, i, std::move(buf), t.dst_gpu);
}

// Ready sends leave in (priority, index) order; NIC sends wait for their pacer departure time.
void PlanRun::flush_sends() {
  while (!send_q_.empty()) {
    const int32_t i = send_q_.top().task;
    send_q_.pop();
    const Task& t = p_.tasks[i];
    const bool nic = t.gpu / p_.gpus_per_node != t.dst_gpu / p_.gpus_per_node;
    if (nic && pacer_.enabled()) {
      const double depart = pacer_.reserve(now(), t.bytes);
      send_begin_[i] = depart - t.bytes / cfg_.nic_bytes_per_s;  // the NIC serialises it from here
      nic_wait_.emplace(depart, i);
    } else {
      start_send(i);
    }
  }
  while (!nic_wait_.empty() && nic_wait_.begin()->first <= now()) {
    start_send(nic_wait_.begin()->second);
    nic_wait_.erase(nic_wait_.begin());
  }
}

void PlanRun::run_compute(int32_t i) {
  const Task& t = p_.tasks[i];
  const double start = now();
  const int k = p_.top_k;
  const int64_t first = b_.token_offset[me_];
  std::vector<float> row(hidden_);
  if (t.kind == TaskKind::Compute) {
    const auto ws = weights_by_slot_.find(t.slot);
    const ExpertWeights& w = ws != weights_by_slot_.end() ? ws->second : weights_by_expert_.at(t.expert);
    const auto pairs = p_.pairs(t);
    std::vector<float> x(pairs.size() * size_t(hidden_)), y(x.size());
    for (size_t r = 0; r < pairs.size(); ++r) {
      const int64_t pair = pairs[r];
      if (b_.expert_ids[pair] != t.expert)
        throw std::logic_error("task " + std::to_string(i) + ": pair " + std::to_string(pair) + " selected expert " +
                               std::to_string(b_.expert_ids[pair]) + ", not " + std::to_string(t.expert));
      const auto it = tokens_.find(pair / k);
      if (it == tokens_.end())
        throw std::logic_error("gpu " + std::to_string(me_) + " computes token " + std::to_string(pair / k) + " it does not hold");
      std::copy(it->second.begin(), it->second.end(), x.begin() + r * hidden_);
    }
    swiglu(w, x.data(), int64_t(pairs.size()), y.data());
    for (size_t r = 0; r < pairs.size(); ++r) {
      const float g = b_.gate_weights[pairs[r]];
      for (int h = 0; h < hidden_; ++h) row[h] = g * y[r * hidden_ + h];
      partials_.put(pairs[r] / k, {int64_t(pairs[r])}, row.data(), i);
    }
    st_.pairs_computed += int64_t(pairs.size());
    st_.compute_s += now() - start;
  } else {
    if (combine_begin_ < 0) combine_begin_ = start;
    const PartialStore::Usable usable = made_before(i);
    const auto tokens = p_.tokens(t);
    for (size_t r = 0; r < tokens.size(); ++r) {
      const auto row_pairs = p_.row_pairs_of(t, int64_t(r));
      const std::vector<int64_t> wide(row_pairs.begin(), row_pairs.end());
      const int64_t tok = tokens[r], *pairs = wide.data();
      const int64_t count = int64_t(wide.size());
      partials_.sum(tok, pairs, count, row.data(), usable);
      if (t.kind == TaskKind::PreReduce) {
        partials_.put(tok, {pairs, pairs + count}, row.data(), i);
        continue;
      }
      if (tok < first || tok >= b_.token_offset[me_ + 1])
        throw std::logic_error("task " + std::to_string(i) + ": final reduction of token " + std::to_string(tok) + " on gpu " +
                               std::to_string(me_) + ", not its source");
      for (int64_t c = 0; c < count; ++c) {
        if (pairs[c] / k != tok) throw std::logic_error("task " + std::to_string(i) + ": pair of another token");
        if (reduced_[pairs[c] - first * k]++) throw std::logic_error("pair " + std::to_string(pairs[c]) + " reduced twice");
      }
      finals_.emplace(std::tuple{tok, i, int64_t(r)}, row);
    }
    combine_end_ = now();
  }
  if (cfg_.timeline) timeline_.push_back(task_event(t, "compute", start, now()));
  finish(i);
}

RankOutput PlanRun::run() {
  prepare();
  MPI_Barrier(data_);
  t0_ = MPI_Wtime();
  for (int32_t i = 0; i < int32_t(p_.tasks.size()); ++i)
    if (waits(p_.tasks[i], me_) && pending_deps_[i] == 0) make_ready(i);
  for (;;) {
    flush_sends();
    progress(false);
    flush_sends();
    if (!compute_q_.empty()) {
      const int32_t i = compute_q_.top().task;
      compute_q_.pop();
      run_compute(i);
      continue;
    }
    bool live = false;
    for (MPI_Request r : reqs_) live = live || r != MPI_REQUEST_NULL;
    if (!live && nic_wait_.empty() && send_q_.empty()) break;
    if (!nic_wait_.empty()) {  // poll, napping, until the pacer lets the next NIC send go
      const double wait = std::min(nic_wait_.begin()->first - now(), 100e-6);
      if (wait > 0) std::this_thread::sleep_for(std::chrono::duration<double>(wait));
      continue;
    }
    if (live) progress(true);
  }
  if (left_ != 0)
    throw std::logic_error("gpu " + std::to_string(me_) + ": " + std::to_string(left_) +
                           " tasks never became ready (cyclic or unsatisfiable dependencies)");
  for (const auto& [key, row] : finals_) {
    float* y = y_.data() + (std::get<0>(key) - b_.token_offset[me_]) * hidden_;
    for (int h = 0; h < hidden_; ++h) y[h] += row[h];
  }
  if (!finals_.empty()) combine_end_ = now();
  st_.total_s = now();
  for (size_t i = 0; i < reduced_.size(); ++i)
    if (!reduced_[i])
      throw std::logic_error("pair " + std::to_string(b_.token_offset[me_] * p_.top_k + int64_t(i)) +
                             " never reached its source's output");
  st_.dispatch_s = dispatch_end_;
  st_.combine_s = combine_begin_ < 0 ? 0 : combine_end_ - combine_begin_;
  std::tie(st_.plan_nvlink_bytes, st_.plan_nic_bytes) = plan_sent_bytes(p_, me_);
  if (st_.plan_nvlink_bytes != st_.nvlink_bytes || st_.plan_nic_bytes != st_.nic_bytes)
    throw std::logic_error("gpu " + std::to_string(me_) + ": bytes sent differ from the plan's");
  st_.wire_hash = kFnvBasis;
  for (uint64_t h : wire_hash_) st_.wire_hash = fnv1a(&h, sizeof h, st_.wire_hash);
  return {std::move(y_), st_, std::move(timeline_)};
}

}  // namespace

std::pair<double, double> plan_sent_bytes(const CommPlan& plan, int gpu) {
  double nvlink = 0, nic = 0;
  for (const Task& t : plan.tasks)
    if (t.kind == TaskKind::Transfer && t.gpu == gpu) (t.link == Link::NIC ? nic : nvlink) += t.bytes;
  return {nvlink, nic};
}

RankOutput execute_plan(const CommPlan& plan, const RoutingBatch& batch, const ExecConfig& cfg, MPI_Comm comm) {
  PlanRun run(plan, batch, cfg, comm);
  return run.run();
}

}  // namespace zepp::mpi
