// `zepp`: plan and simulate expert-parallel MoE layers. Exit status 2 on bad input or arguments.
#include <cstdio>
#include <filesystem>
#include <cstdlib>
#include <string>
#include <exception>
#include <vector>

#include <CLI/CLI.hpp>
#include <mpi.h>

#include "cli/commands.hpp"
#include "cli/float_flags.hpp"
#include "cli/progress.hpp"
#include "core/error.hpp"
#include "core/provenance.hpp"
#include "core/version.hpp"

namespace {

// Every option that takes a value refuses an empty one: CLI11 turns '' into 0 or the default,
// which would run something the user did not ask for. Walks every subcommand, so options added
// anywhere are covered.
void refuse_empty_values(CLI::App& app) {
  for (CLI::Option* opt : app.get_options())
    if (opt->get_type_size_max() > 0)
      opt->check([](const std::string& v) { return v.empty() ? std::string("expected a value, got an empty string") : std::string(); },
                 "", "nonempty");  // no description: --help would show ":NONEMPTY" after every flag
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) refuse_empty_values(*sub);
}

// The option `name` ("--nodes", "-o") of `at` or of a command above it, else nullptr.
CLI::Option* option_named(CLI::App* at, const std::string& name) {
  for (; at != nullptr; at = at->get_parent())
    if (CLI::Option* opt = at->get_option_no_throw(name)) return opt;
  return nullptr;
}

CLI::App* subcommand_named(CLI::App* at, const std::string& name) {
  for (CLI::App* sub : at->get_subcommands([](CLI::App*) { return true; }))
    if (sub->get_name() == name) return sub;
  return nullptr;
}

// Comma-separated list flags (CLI11 ->delimiter(','), every one of them, wherever added): CLI11
// drops empty entries, so `--nodes 4,`, `--sizes 1,,4` or `--strategies a2av,zepp,` ran as if the
// entry were not there. The values as typed are read here, before CLI11 splits them, walking the
// arguments as CLI11 does: a subcommand's name enters it, `--flag VALUE` and `--flag=VALUE` give
// VALUE to the flag of the current command (or one above it). Throws ArgumentError
// "--FLAG: entry K of 'VALUE' is empty" (as strategy_list, src/cli/options.cpp, says it).
void refuse_empty_list_entries(CLI::App& app, int argc, char** argv) {
  CLI::App* at = &app;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") return;  // what follows is not an option
    if (arg.size() < 2 || arg[0] != '-') {
      if (CLI::App* sub = subcommand_named(at, arg)) at = sub;
      continue;
    }
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    const CLI::Option* opt = option_named(at, name);
    if (opt == nullptr || opt->get_type_size_max() == 0) continue;  // unknown (CLI11 says so) or a switch
    std::vector<std::string> values;
    if (eq != std::string::npos) {
      values.push_back(arg.substr(eq + 1));
    } else if (opt->get_delimiter() == '\0') {
      ++i;  // its one value, which may be a subcommand's name
      continue;
    } else {  // a list takes the words that follow up to the next option
      while (i + 1 < argc && (argv[i + 1][0] != '-' || argv[i + 1][1] == '\0') && !subcommand_named(at, argv[i + 1]))
        values.push_back(argv[++i]);
    }
    const char d = opt->get_delimiter();
    if (d == '\0') continue;
    for (const std::string& value : values) {
      size_t entry = 1, start = 0;
      for (size_t end = value.find(d); ; end = value.find(d, start), ++entry) {
        const std::string item = value.substr(start, end == std::string::npos ? std::string::npos : end - start);
        if (item.find_first_not_of(" \t") == std::string::npos && !value.empty())
          throw zepp::ArgumentError(name + ": entry " + std::to_string(entry) + " of '" + value + "' is empty");
        if (end == std::string::npos) break;
        start = end + 1;
      }
    }
  }
}

// The rank the launcher gives this process before MPI_Init, or nullptr when not under mpirun.
const char* launcher_rank() {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (const char* r = std::getenv(var)) return r;
  return nullptr;
}

// Under mpirun every rank parses the same arguments and would print the same error: only rank 0
// (as the launcher tells it, before MPI_Init) reports; every rank still exits with status 2.
bool quiet_rank() {
  const char* r = launcher_rank();
  return r && std::string(r) != "0";
}

// Exit status `status` != 0 under mpirun: a rank that leaves first makes mpirun kill the others,
// rank 0 included, sometimes before rank 0 has written its message (MpiRun.
// BadArgumentOnFourRanksIsOneMessage failed 1 run in 5 so). Every rank meets rank 0, after it has
// printed, in a barrier, then all leave with `status`.
int leave_together(int status) {
  if (status == 0 || !launcher_rank()) return status;
  std::fflush(stderr);
  int initialised = 0, finalised = 0;
  MPI_Finalized(&finalised);
  if (finalised) return status;
  MPI_Initialized(&initialised);
  if (!initialised) MPI_Init(nullptr, nullptr);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}

// "unknown subcommand 'WORD' of zepp experiment; expected one of fig9, fig10, ..." when the
// command line gives a word where a subcommand was expected (CLI11 said only "A subcommand is
// required"), else "".
std::string unknown_subcommand(CLI::App& app) {
  CLI::App* at = &app;
  std::string path = "zepp";
  while (!at->get_subcommands().empty()) {  // the parsed ones, deepest last
    at = at->get_subcommands().front();
    path += " " + at->get_name();
  }
  if (at->get_require_subcommand_min() == 0 || !at->get_subcommands().empty()) return "";
  for (const std::string& word : at->remaining()) {
    if (word.empty() || word[0] == '-') continue;
    std::string names;
    for (const CLI::App* sub : at->get_subcommands([](CLI::App*) { return true; }))
      names += (names.empty() ? "" : ", ") + sub->get_name();
    return "unknown subcommand '" + word + "' of " + path + "; expected one of " + names;
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Zepp: expert placement, locality-preferred routing and overlapped communication for MoE serving"};
  app.require_subcommand(1);
  app.set_version_flag("--version", zepp::version_line(), "Print the version and the git commit this program was built from");
  zepp::set_command_line(argc, argv);  // the provenance line of results files (core/provenance.hpp)
  zepp::cli::add_simulate(app);
  zepp::cli::add_place(app);
  zepp::cli::add_experiment(app);
  zepp::cli::add_run(app);
  zepp::cli::add_presets(app);
  zepp::cli::add_calibrate(app);
  refuse_empty_values(app);
  zepp::cli::check_float_flags(app);
  zepp::cli::check_integer_flags(app);
  const bool quiet = quiet_rank();
  try {
    try {
      refuse_empty_list_entries(app, argc, argv);
      app.parse(argc, argv);
    } catch (...) {
      zepp::cli::end_progress_line();  // the message below starts a line of its own
      throw;
    }
  } catch (const CLI::ParseError& e) {
    if (quiet) return leave_together(e.get_exit_code() == 0 ? 0 : 2);
    if (const std::string unknown = unknown_subcommand(app); !unknown.empty()) {
      std::fprintf(stderr, "zepp: invalid argument: %s\nRun with --help for more information.\n", unknown.c_str());
      return leave_together(2);
    }
    return leave_together(app.exit(e) == 0 ? 0 : 2);
  } catch (const zepp::InputError& e) {
    if (!quiet) std::fprintf(stderr, "zepp: error: %s\n", e.what());
    return leave_together(2);
  } catch (const zepp::ArgumentError& e) {
    if (!quiet) std::fprintf(stderr, "zepp: invalid argument: %s\n", e.what());
    return leave_together(2);
  } catch (const std::filesystem::filesystem_error& e) {  // a path the system refuses (read-only, /proc)
    if (!quiet) std::fprintf(stderr, "zepp: error: %s\n", e.what());
    return leave_together(2);
  } catch (const std::bad_alloc&) {
    if (!quiet) std::fprintf(stderr, "zepp: error: out of memory (try a smaller --size-mb or fewer nodes)\n");
    return leave_together(2);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zepp: internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}
