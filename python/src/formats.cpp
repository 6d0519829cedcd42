// Serving-engine files (src/formats) as numpy arrays.
#include "formats/formats.hpp"

#include "bindings.hpp"
#include "core/output_file.hpp"

namespace zepp::py {

void bind_formats(pb::module_& m) {
  m.def("read_sglang_stats", [](const std::string& path) {
    auto load = read_sglang_stats(path);
    std::vector<double> flat;
    for (const auto& row : load) flat.insert(flat.end(), row.begin(), row.end());
    return to_numpy(std::move(flat), {pb::ssize_t(load.size()), pb::ssize_t(load[0].size())});
  });
  m.def("write_sglang_stats", [](const std::string& path, Array<double> load) {
    auto v = load.unchecked<2>();
    std::vector<std::vector<double>> rows(v.shape(0), std::vector<double>(v.shape(1)));
    for (pb::ssize_t l = 0; l < v.shape(0); ++l)
      for (pb::ssize_t e = 0; e < v.shape(1); ++e) rows[l][e] = v(l, e);
    write_sglang_stats(path, rows);
  });
  // Returns (layer_ids [L], phy2log [L, P]) as int64.
  m.def("read_placement", [](const std::string& path, const std::string& format) {
    ExpertMap map = read_expert_map(path, format);
    std::vector<int64_t> ids(map.layer_ids.begin(), map.layer_ids.end()), phy(map.phy2log.begin(), map.phy2log.end());
    const pb::ssize_t L = map.num_layers();
    return pb::make_tuple(to_numpy(std::move(ids), {L}), to_numpy(std::move(phy), {L, pb::ssize_t(map.num_slots)}));
  });
  // The rules of every output (core/output_file.hpp) for files Python writes itself (zepp.loads -o):
  // a path that is not a regular file refused before any work, naming the flag; atomic writes.
  m.def("check_output_file", &check_output_file);
  m.def("write_file_atomically", &write_file_atomically);
  m.def("write_placement", [](const std::string& path, Array<int32_t> phy2log, Array<int32_t> layer_ids,
                              const std::string& format) {
    ExpertMap map;
    map.num_slots = int(phy2log.shape(1));
    map.layer_ids.assign(layer_ids.data(), layer_ids.data() + layer_ids.size());
    map.phy2log.assign(phy2log.data(), phy2log.data() + phy2log.size());
    write_expert_map(path, map, format);
  });
}

}  // namespace zepp::py
