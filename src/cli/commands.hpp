// Subcommands of the `zepp` program; each file in src/cli/ registers one.
#pragma once
#include <CLI/CLI.hpp>

namespace zepp::cli {

void add_simulate(CLI::App& app);  // simulate.cpp
void add_place(CLI::App& app);     // place.cpp
void add_experiment(CLI::App& app);  // experiment.cpp
void add_run(CLI::App& app);       // run.cpp (MPI; initialises MPI itself)
void add_presets(CLI::App& app);   // presets.cpp
void add_calibrate(CLI::App& app); // calibrate.cpp (MPI)
void add_validate(CLI::App* experiment);  // validate.cpp: `zepp experiment validate`

}  // namespace zepp::cli
