// Pieces of the `_zepp` extension, one file per area. The public, documented API is the Python
// package python/zepp, which validates arguments and converts them before calling these.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "core/types.hpp"

namespace zepp::py {

namespace pb = pybind11;

// A C-contiguous array of T (numpy converts and copies as needed).
template <class T>
using Array = pb::array_t<T, pb::array::c_style | pb::array::forcecast>;

// A numpy array of the given shape owning `data`.
template <class T>
Array<T> to_numpy(std::vector<T>&& data, std::vector<pb::ssize_t> shape) {
  auto* owner = new std::vector<T>(std::move(data));
  pb::capsule free_when_done(owner, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return Array<T>(shape, owner->data(), free_when_done);
}

// `text` as a Python str, bytes that are not UTF-8 written as \xNN escapes: file names and file
// contents reach messages and names as they are, and pybind11's strict decoding raised
// UnicodeDecodeError (or left an empty message) on one invalid byte.
inline pb::str lenient_str(const std::string& text) {
  PyObject* s = PyUnicode_DecodeUTF8(text.data(), pb::ssize_t(text.size()), "backslashreplace");
  if (!s) throw pb::error_already_set();
  return pb::reinterpret_steal<pb::str>(s);
}

// A cluster of `nodes` x `gpus_per_node` GPUs, other fields from the h100 preset (placement.cpp).
Topology cluster(int nodes, int gpus_per_node);

void bind_placement(pb::module_& m);
void bind_routing(pb::module_& m);
void bind_formats(pb::module_& m);
void bind_simulate(pb::module_& m);
void bind_trace(pb::module_& m);
void bind_limits(pb::module_& m);

}  // namespace zepp::py
