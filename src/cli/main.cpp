// `zepp`: plan and simulate expert-parallel MoE layers. Exit status 2 on bad input or arguments.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "core/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Zepp: expert placement, locality-preferred routing and overlapped communication for MoE serving"};
  app.require_subcommand(1);
  zepp::cli::add_simulate(app);
  zepp::cli::add_place(app);
  zepp::cli::add_experiment(app);
  zepp::cli::add_run(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const zepp::InputError& e) {
    std::fprintf(stderr, "zepp: error: %s\n", e.what());
    return 2;
  } catch (const zepp::ArgumentError& e) {
    std::fprintf(stderr, "zepp: invalid argument: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "zepp: error: out of memory (try a smaller --size-mb or fewer nodes)\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zepp: internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}
