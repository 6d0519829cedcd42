// Cluster topology files: YAML or JSON describing one node type (format: docs/topology.md).
#pragma once
#include <string>

#include "core/types.hpp"

namespace zepp {

// Reads a topology file into a Topology with `nodes` nodes. Every field is required unless the
// file names a preset as `base`, whose values the file's fields then override. Throws
// InputError("FILE:LINE: FIELD: expected ..., got ...") on malformed files (unknown fields,
// values without units, figures outside the range of the flag that overrides them, e.g. nic.latency
// outside --nic-latency-us's [0, 1e6] us (core/flag_ranges.hpp), NICs per node other than GPUs per node).
Topology read_topology_file(const std::string& path, int nodes);

// `--topology` as users give it: a preset name (core/presets.hpp) or the path of a topology
// file. Throws ArgumentError("<arg>: 'VALUE' is neither a preset (...) nor a topology file")
// when it is neither ("<arg>: 'VALUE' is a directory; expected a preset (...) or ..." for a
// directory; `arg` names where the value came from, "--topology" on the command line),
// InputError for a bad file.
Topology cluster_topology(const std::string& preset_or_file, int nodes, const std::string& arg = "topology");

// One line for reports: "NVSwitch 450 GB/s per GPU port, NIC 50 GB/s per GPU, 989 TFLOP/s,
// HBM 3.35 TB/s" (per direction; NVLink per GPU pair on per-pair nodes).
std::string describe_links(const Topology& t);

// A value with its unit as topology files write it, in base units (bytes/s, seconds, FLOP/s, bytes):
// "450 GB/s", "400 Gb/s", "2 us", "989 TFLOP/s", "80 GB". Throws InputError("`where`expected ...").
double parse_bandwidth(const std::string& text, const std::string& where);
double parse_bytes(const std::string& text, const std::string& where);
double parse_duration(const std::string& text, const std::string& where);
double parse_flops(const std::string& text, const std::string& where);

}  // namespace zepp
