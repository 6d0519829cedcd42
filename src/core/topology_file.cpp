#include "core/topology_file.hpp"
#include "core/measured_compute.hpp"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "core/error.hpp"
#include "core/excerpt.hpp"
#include "core/flag_ranges.hpp"
#include "core/input_bounds.hpp"
#include "core/output_file.hpp"
#include "core/presets.hpp"

namespace zepp {
namespace {

using Units = std::vector<std::pair<const char*, double>>;

// Decimal prefixes as datasheets use them (1 GB/s = 1e9 bytes/s); bits are 1/8 byte.
const Units kBandwidth = {{"B/s", 1},          {"KB/s", 1e3},        {"MB/s", 1e6},        {"GB/s", 1e9},
                          {"TB/s", 1e12},      {"KiB/s", 1024.0},    {"MiB/s", 1048576.0}, {"GiB/s", 1073741824.0},
                          {"b/s", 0.125},      {"Kb/s", 125.0},      {"Mb/s", 125e3},      {"Gb/s", 125e6},
                          {"Tb/s", 125e9},     {"Kbit/s", 125.0},    {"Mbit/s", 125e3},    {"Gbit/s", 125e6},
                          {"Tbit/s", 125e9}};
const Units kBytes = {{"B", 1},      {"KB", 1e3},         {"MB", 1e6},            {"GB", 1e9},
                      {"TB", 1e12},   {"KiB", 1024.0},     {"MiB", 1048576.0},     {"GiB", 1073741824.0},
                      {"TiB", 1099511627776.0}};
const Units kDuration = {{"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"µs", 1e-6}, {"ns", 1e-9}};
const Units kFlops = {{"FLOP/s", 1},     {"GFLOP/s", 1e9},  {"TFLOP/s", 1e12}, {"PFLOP/s", 1e15},
                      {"FLOPS", 1},      {"GFLOPS", 1e9},   {"TFLOPS", 1e12},  {"PFLOPS", 1e15}};

std::string unit_list(const Units& units) {
  std::string s;
  for (const auto& [u, scale] : units) s += (s.empty() ? "" : ", ") + std::string(u);
  return s;
}

// "<number><spaces><unit>" -> number * scale, finite and >= 0 (> 0 when `positive`).
double parse_quantity(const std::string& text, const std::string& where, const Units& units, const char* example,
                      bool positive) {
  const char* b = text.data();
  const char* e = b + text.size();
  while (b < e && *b == ' ') ++b;
  double v = 0;
  auto [rest, ec] = std::from_chars(b, e, v);
  const std::string got = "got '" + excerpt(text) + "'";
  if (ec == std::errc::result_out_of_range)  // "1e999 Gb/s": a number, but beyond a double
    throw InputError(where + "expected a number a double holds (at most about 1.8e308), " + got);
  if (ec != std::errc() || rest == b)
    throw InputError(where + "expected a number with a unit, like '" + example + "', " + got);
  while (rest < e && *rest == ' ') ++rest;
  std::string unit(rest, e);
  while (!unit.empty() && unit.back() == ' ') unit.pop_back();
  if (unit.empty())
    throw InputError(where + "expected a unit after the number (one of " + unit_list(units) + "), like '" + example +
                     "', " + got);
  for (const auto& [u, scale] : units)
    if (unit == u) {
      const double value = v * scale;
      if (!std::isfinite(value) || value < 0 || (positive && value == 0))
        throw InputError(where + "expected a " + (positive ? "positive" : "non-negative") + " finite value, " + got);
      return value;
    }
  throw InputError(where + "unknown unit '" + unit + "', expected one of " + unit_list(units) + ", " + got);
}

// One topology file being read: error positions and field checks.
class FileReader {
 public:
  explicit FileReader(std::string path) : path_(std::move(path)) {}

  // "FILE:LINE: FIELD: " for errors about `node` (yaml-cpp counts lines from 0).
  std::string where(const YAML::Node& node, const std::string& field) const {
    const YAML::Mark m = node.Mark();
    if (m.is_null()) return path_ + ": " + field + ": ";
    return path_ + ":" + std::to_string(m.line + 1) + ": " + field + ": ";
  }

  // The mapping `node`, after checking that it has only `allowed` keys and, unless `optional`,
  // all of them.
  void check_keys(const YAML::Node& node, const std::string& field, const std::vector<std::string>& allowed,
                  bool optional) const {
    std::string list;
    for (const auto& k : allowed) list += (list.empty() ? "" : ", ") + k;
    if (!node.IsMap()) {
      const std::string got = node.IsSequence() ? "a list" : node.IsScalar() ? "'" + excerpt(node.Scalar()) + "'" : "nothing";
      if (!field.empty()) throw InputError(where(node, field) + "expected a mapping with " + list + ", got " + got);
      const YAML::Mark m = node.Mark();  // none for an empty file
      throw InputError(path_ + ":" + std::to_string(m.is_null() ? 1 : m.line + 1) + ": expected a mapping of " + list +
                       " at the top level, got " + (m.is_null() || node.IsNull() ? "an empty file" : got));
    }
    for (const auto& kv : node) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "";
      bool known = false;
      for (const auto& k : allowed) known |= key == k;
      if (!known)
        throw InputError(where(kv.first, prefixed(field, key)) + "unknown field, expected one of " + list);
    }
    if (optional) return;
    for (const auto& k : allowed)
      if (!node[k] && k != "base" && k != "name")
        throw InputError(where(node, prefixed(field, k)) + "missing (required unless the file names a preset as 'base')");
  }

  std::string scalar(const YAML::Node& node, const std::string& field) const {
    if (!node.IsScalar() || node.Scalar().empty())
      throw InputError(where(node, field) + "expected a value, got " + (node.IsScalar() ? "nothing" : "a list or mapping"));
    return node.Scalar();
  }

  int count(const YAML::Node& node, const std::string& field) const {
    const std::string s = scalar(node, field);
    int v = 0;
    auto [rest, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || rest != s.data() + s.size() || v < 1 || v > 1 << 16)
      throw InputError(where(node, field) + "expected a whole number in [1, 65536], got '" + excerpt(s) + "'");
    return v;
  }

  static std::string prefixed(const std::string& section, const std::string& key) {
    return section.empty() ? key : section + "." + key;
  }

 private:
  std::string path_;
};

// compute.gemm: [{hidden, ffn, points: [[tokens, "duration"], ...]}, ...] (zepp calibrate).
std::vector<GemmCurve> read_gemm_curves(const FileReader& r, const YAML::Node& list) {
  if (!list.IsSequence() || list.size() == 0)
    throw InputError(r.where(list, "compute.gemm") + "expected a list of measured curves {hidden, ffn, points}");
  std::vector<GemmCurve> curves;
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node& item = list[i];
    const std::string field = "compute.gemm[" + std::to_string(i) + "]";
    r.check_keys(item, field, {"hidden", "ffn", "points"}, false);
    GemmCurve c;
    c.hidden = r.count(item["hidden"], field + ".hidden");
    c.ffn = r.count(item["ffn"], field + ".ffn");
    const YAML::Node& points = item["points"];
    if (!points.IsSequence()) throw InputError(r.where(points, field + ".points") + "expected a list of [tokens, time] pairs");
    for (size_t p = 0; p < points.size(); ++p) {
      const std::string at = field + ".points[" + std::to_string(p) + "]";
      if (!points[p].IsSequence() || points[p].size() != 2)
        throw InputError(r.where(points[p], at) + "expected [tokens, time], like [16, \"120 us\"]");
      c.tokens.push_back(r.count(points[p][0], at + "[0]"));
      c.seconds.push_back(parse_duration(r.scalar(points[p][1], at + "[1]"), r.where(points[p][1], at + "[1]")));
    }
    try {
      c.validate("points");
    } catch (const ArgumentError& e) {
      throw InputError(r.where(item, field) + e.what());
    }
    for (const GemmCurve& other : curves)
      if (other.hidden == c.hidden && other.ffn == c.ffn)
        throw InputError(r.where(item, field) + "a second curve for hidden " + std::to_string(c.hidden) + ", ffn " + std::to_string(c.ffn));
    curves.push_back(std::move(c));
  }
  return curves;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the topology file");
  if (std::error_code ec; std::filesystem::file_size(path, ec) > (1u << 20) && !ec)
    throw InputError(path + ": expected a topology file (docs/topology.md) of at most 1 MiB");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw InputError(path + ": cannot read the topology file");
  return ss.str();
}

}  // namespace

double parse_bandwidth(const std::string& text, const std::string& where) {
  return parse_quantity(text, where, kBandwidth, "450 GB/s", true);
}
double parse_bytes(const std::string& text, const std::string& where) {
  return parse_quantity(text, where, kBytes, "80 GB", true);
}
double parse_duration(const std::string& text, const std::string& where) {
  return parse_quantity(text, where, kDuration, "2 us", false);
}
double parse_flops(const std::string& text, const std::string& where) {
  return parse_quantity(text, where, kFlops, "989 TFLOP/s", true);
}

namespace {

// A figure the file gives in base units, in the range of the command-line flag that sets the same
// figure (`scale`: base units per unit of the flag, 1e-6 s for --nic-latency-us): files and flags
// share one table (core/flag_ranges.hpp), so a 1e5 s latency that aborted SimGrid is refused here.
double in_flag_range_of(double value, const char* flag, double scale, const std::string& where) {
  const FlagRange* range = flag_range(flag);
  if (!in_flag_range(value / scale, range))
    throw InputError(where + expected_in(range) + " (the range of " + flag + "), got " + g_format(value / scale) +
                     range->unit);
  return value;
}

// The file's topology; with compute.model measured, its curves into *gemm (when not null).
Topology parse_topology_file(const std::string& path, int nodes, std::vector<GemmCurve>* gemm) {
  require(nodes >= 1, "nodes", "must be at least 1, got " + std::to_string(nodes));
  const std::string text = read_text(path);
  // yaml-cpp parses nested flow collections recursively: bound the depth before it parses.
  check_nesting(text, path, true);
  const YAML::Node parsed = load_one_yaml_document(text, path, "YAML or JSON");
  check_unique_keys(parsed, path);
  const YAML::Node& doc = parsed;  // const: lookups never add keys
  const FileReader r(path);
  auto figure = [&r](const YAML::Node& node, const std::string& field, double (*parse)(const std::string&, const std::string&),
                     const char* flag, double scale) {
    const std::string where = r.where(node, field);
    return in_flag_range_of(parse(r.scalar(node, field), where), flag, scale, where);
  };
  r.check_keys(doc, "", {"base", "name", "gpus_per_node", "nvlink", "nic", "compute", "calibration"}, true);
  const bool has_base = bool(doc["base"]);
  Topology t;
  if (has_base) {
    const std::string base = r.scalar(doc["base"], "base");
    try {
      t = topology_preset(base, nodes);
    } catch (const ArgumentError& e) {
      throw InputError(r.where(doc["base"], "base") + e.what());
    }
  }
  // `calibration`: the record `zepp calibrate` keeps of its measurements; not a cluster field.
  r.check_keys(doc, "", {"base", "name", "gpus_per_node", "nvlink", "nic", "compute", "calibration"}, true);
  for (const char* key : {"gpus_per_node", "nvlink", "nic", "compute"})
    if (!has_base && !doc[key])
      throw InputError(r.where(doc, key) + "missing (required unless the file names a preset as 'base')");
  t.nodes = nodes;
  t.name = doc["name"] ? r.scalar(doc["name"], "name") : std::filesystem::path(path).stem().string();
  if (doc["gpus_per_node"]) t.gpus_per_node = r.count(doc["gpus_per_node"], "gpus_per_node");

  if (const YAML::Node nv = doc["nvlink"]) {
    r.check_keys(nv, "nvlink", {"model", "bandwidth", "latency"}, has_base);
    if (nv["model"]) {
      const std::string m = r.scalar(nv["model"], "nvlink.model");
      if (m == "switch") t.nvlink_model = NvlinkModel::Switch;
      else if (m == "per-pair") t.nvlink_model = NvlinkModel::PerPair;
      else throw InputError(r.where(nv["model"], "nvlink.model") + "expected switch or per-pair, got '" + excerpt(m) + "'");
    }
    if (nv["bandwidth"]) t.nvlink_bw = figure(nv["bandwidth"], "nvlink.bandwidth", parse_bandwidth, "--nvlink-gbps", 1e9);
    if (nv["latency"]) t.nvlink_latency = figure(nv["latency"], "nvlink.latency", parse_duration, "--nvlink-latency-us", 1e-6);
  }
  if (const YAML::Node nic = doc["nic"]) {
    r.check_keys(nic, "nic", {"per_node", "bandwidth", "latency"}, has_base);
    if (nic["per_node"]) {
      const int per_node = r.count(nic["per_node"], "nic.per_node");
      if (per_node != t.gpus_per_node)
        throw InputError(r.where(nic["per_node"], "nic.per_node") + "expected gpus_per_node = " +
                         std::to_string(t.gpus_per_node) +
                         " (each GPU has its own NIC, paper §6.1; shared NICs are not modelled), got " +
                         std::to_string(per_node));
    }
    if (nic["bandwidth"]) t.nic_bw = figure(nic["bandwidth"], "nic.bandwidth", parse_bandwidth, "--nic-gbps", 1e9);
    if (nic["latency"]) t.nic_latency = figure(nic["latency"], "nic.latency", parse_duration, "--nic-latency-us", 1e-6);
  }
  if (const YAML::Node c = doc["compute"]) {
    r.check_keys(c, "compute", {"model", "peak", "hbm", "kernel_launch", "gemm", "memory"}, true);  // first: c may be a scalar
    const bool measured = c["model"] && c["model"].IsScalar() && c["model"].Scalar() == "measured";
    for (const char* key : {"model", "peak", "hbm", "kernel_launch"})
      if (!has_base && !c[key])
        throw InputError(r.where(c, std::string("compute.") + key) + "missing (required unless the file names a preset as 'base')");
    if (c["model"]) {
      const std::string m = r.scalar(c["model"], "compute.model");
      if (m != "roofline" && m != "measured")
        throw InputError(r.where(c["model"], "compute.model") + "expected roofline or measured, got '" + excerpt(m) + "'");
    }
    if (measured != bool(c["gemm"]))
      throw InputError(r.where(c, "compute.gemm") + (measured ? "missing (compute.model measured needs the measured curves)"
                                                              : "only with compute.model measured"));
    if (measured) {
      std::vector<GemmCurve> curves = read_gemm_curves(r, c["gemm"]);
      if (gemm) *gemm = std::move(curves);
    }
    if (c["peak"]) t.compute.peak_flops = figure(c["peak"], "compute.peak", parse_flops, "--peak-tflops", 1e12);
    if (c["hbm"]) t.compute.hbm_bw = figure(c["hbm"], "compute.hbm", parse_bandwidth, "--hbm-tbps", 1e12);
    if (c["kernel_launch"])
      t.compute.kernel_launch = figure(c["kernel_launch"], "compute.kernel_launch", parse_duration, "--kernel-launch-us", 1e-6);
    if (c["memory"]) {  // optional: bounds the decode KV cache (zepp simulate --phase decode)
      const std::string where = r.where(c["memory"], "compute.memory");
      t.compute.memory = parse_bytes(r.scalar(c["memory"], "compute.memory"), where);
      if (t.compute.memory > 1e15)
        throw InputError(where + "expected at most 1 PB of GPU memory, got " + g_format(t.compute.memory / 1e9) + " GB");
    }
  }
  // A base preset's NICs follow its GPUs; a file that changes gpus_per_node keeps one NIC per GPU.
  return t;
}

}  // namespace

std::string describe_links(const Topology& t) {
  return fmt::format("{} {:g} GB/s per {}, NIC {:g} GB/s per GPU, {:g} TFLOP/s, HBM {:g} TB/s",
                     t.nvlink_model == NvlinkModel::Switch ? "NVSwitch" : "NVLink", t.nvlink_bw / 1e9,
                     t.nvlink_model == NvlinkModel::Switch ? "GPU port" : "GPU pair", t.nic_bw / 1e9,
                     t.compute.peak_flops / 1e12, t.compute.hbm_bw / 1e12);
}

Topology read_topology_file(const std::string& path, int nodes) { return parse_topology_file(path, nodes, nullptr); }

std::vector<GemmCurve> read_measured_compute(const std::string& path) {
  std::vector<GemmCurve> gemm;
  parse_topology_file(path, 1, &gemm);
  return gemm;
}

Topology cluster_topology(const std::string& preset_or_file, int nodes, const std::string& arg) {
  for (const auto& name : topology_preset_names())
    if (name == preset_or_file) return topology_preset(name, nodes);
  std::string names;
  for (const auto& n : topology_preset_names()) names += (names.empty() ? "" : ", ") + n;
  std::error_code ec;
  if (std::filesystem::is_directory(preset_or_file, ec))
    throw ArgumentError(arg + ": '" + preset_or_file + "' is a directory; expected a preset (" + names +
                        ") or a YAML or JSON topology file (docs/topology.md)");
  if (!std::filesystem::is_regular_file(preset_or_file, ec))  // say what is there: a typo or the wrong path
    throw ArgumentError(arg + ": '" + preset_or_file + "' is neither a preset (" + names +
                        ") nor a topology file (docs/topology.md): " +
                        (std::filesystem::exists(preset_or_file, ec) ? not_regular_kind(preset_or_file) + ", not a regular file"
                                                                     : absent_kind(preset_or_file, "no file at that path")));
  return read_topology_file(preset_or_file, nodes);
}

}  // namespace zepp
