// LayerResult <-> bytes, for the pipe between the simulating child process and its parent.
// Both ends are the same binary, so fields are written in native byte order.
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "exec/sim_detail.hpp"

namespace zepp::sim_detail {

namespace {

struct Writer {
  std::string out;
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void put(const std::string& s) {
    put(uint64_t(s.size()));
    out += s;
  }
};

struct Reader {
  const std::string& in;
  size_t pos = 0;
  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    need(sizeof(T));
    T v;
    std::memcpy(&v, in.data() + pos, sizeof v);
    pos += sizeof v;
    return v;
  }
  std::string str() {
    const auto n = get<uint64_t>();
    need(n);
    std::string s = in.substr(pos, n);
    pos += n;
    return s;
  }
  void need(size_t n) const {
    if (in.size() - pos < n) throw std::runtime_error("sim: truncated result from the child process");
  }
};

}  // namespace

std::string encode(const LayerResult& r) {
  Writer w;
  w.put(r.latency_s);
  w.put(r.inter_node_bytes);
  w.put(r.nvlink_bytes);
  w.put(r.max_nic_bytes);
  w.put(r.comm_hidden_fraction);
  w.put(r.metadata_s);
  w.put(r.planning_s);
  w.put(uint64_t(r.gpus.size()));
  for (const GpuStats& g : r.gpus) w.put(g);
  w.put(uint64_t(r.timeline.size()));
  for (const TimelineEvent& e : r.timeline) {
    w.put(e.gpu);
    w.put(e.track);
    w.put(e.name);
    w.put(e.start_s);
    w.put(e.end_s);
    w.put(e.rows);
    w.put(e.bytes);
    w.put(e.expert);
    w.put(e.peer);
    w.put(e.node);
    w.put(e.round);
  }
  return std::move(w.out);
}

LayerResult decode(const std::string& bytes) {
  Reader rd{bytes};
  LayerResult r;
  r.latency_s = rd.get<double>();
  r.inter_node_bytes = rd.get<double>();
  r.nvlink_bytes = rd.get<double>();
  r.max_nic_bytes = rd.get<double>();
  r.comm_hidden_fraction = rd.get<double>();
  r.metadata_s = rd.get<double>();
  r.planning_s = rd.get<double>();
  r.gpus.resize(rd.get<uint64_t>());
  for (GpuStats& g : r.gpus) g = rd.get<GpuStats>();
  r.timeline.resize(rd.get<uint64_t>());
  for (TimelineEvent& e : r.timeline) {
    e.gpu = rd.get<int>();
    e.track = rd.str();
    e.name = rd.str();
    e.start_s = rd.get<double>();
    e.end_s = rd.get<double>();
    e.rows = rd.get<int64_t>();
    e.bytes = rd.get<double>();
    e.expert = rd.get<int>();
    e.peer = rd.get<int>();
    e.node = rd.get<int>();
    e.round = rd.get<int>();
  }
  if (rd.pos != bytes.size()) throw std::runtime_error("sim: trailing bytes in the child process's result");
  return r;
}

}  // namespace zepp::sim_detail
