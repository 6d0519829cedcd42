// The `_zepp` extension module. Zepp's InputError (bad file contents) and ArgumentError (bad
// arguments) both reach Python as ValueError, with Zepp's message naming the file or argument.
#include "bindings.hpp"

#include "core/error.hpp"
#include "core/input_bounds.hpp"

namespace {

// ValueError(message), invalid UTF-8 escaped (lenient_str): PyErr_SetString's strict decoding
// turned a message quoting one such byte of a file name or content into ValueError('').
void set_value_error(const char* message) {
  try {
    PyErr_SetObject(PyExc_ValueError, zepp::py::lenient_str(message).ptr());
  } catch (pybind11::error_already_set& e) {
    e.restore();  // no memory for the message: that error stands
  }
}

}  // namespace

PYBIND11_MODULE(_zepp, m) {
  m.doc() = "Compiled core of the zepp package; use `import zepp`, which documents and validates every call.";
  m.attr("__version__") = ZEPP_VERSION;  // project(VERSION) of the top-level CMakeLists.txt
  m.attr("MAX_LOAD") = zepp::kMaxLoad;    // the bound every load reader checks (zepp._args.loads)
  m.attr("MAX_LAYER_ID") = zepp::kMaxLayerId;  // layer ids of placement files: [0, this)
  pybind11::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const zepp::InputError& e) {
      set_value_error(e.what());
    } catch (const zepp::ArgumentError& e) {
      set_value_error(e.what());
    }
  });
  zepp::py::bind_placement(m);
  zepp::py::bind_routing(m);
  zepp::py::bind_formats(m);
  zepp::py::bind_simulate(m);
  zepp::py::bind_trace(m);
  zepp::py::bind_limits(m);
}
