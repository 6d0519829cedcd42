// Runs the built `zepp` program (alone, or under mpirun) and captures its exit status and output.
#pragma once
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <string>

namespace zepp::testing {

struct ProgramResult {
  int status = -1;      // exit status
  std::string out;      // stdout
  std::string err;      // stderr
  double seconds = 0;   // wall time of the whole command
  // Work done, which load on the machine does not inflate as it does wall time: CPU seconds
  // (user + system) of the command and its children, and the largest resident set of any child
  // this test process has waited for so far (getrusage(RUSAGE_CHILDREN) keeps only the maximum).
  double cpu_seconds = 0;
  double peak_rss_mb = 0;
};

// What a refused run may take: bad input is refused before any work. CPU seconds (a loaded
// machine does not inflate them as it does wall time) and resident MB; AddressSanitizer runs
// about 10x slower and adds shadow memory.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif
inline constexpr double kQuick = kSanitized ? 10.0 : 1.0;
inline constexpr double kMaxRssMb = kSanitized ? 1000 : 200;

inline double children_cpu_seconds(rusage& u) {
  getrusage(RUSAGE_CHILDREN, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// `prefix` runs before the program (a launcher such as mpirun, environment settings).
inline ProgramResult run_command(const std::string& prefix, const std::string& args) {
  // A file of its own per call: ctest runs tests of this program in parallel processes.
  std::string err_file = ::testing::TempDir() + "zepp_stderr_XXXXXX";
  const int fd = mkstemp(err_file.data());
  if (fd >= 0) close(fd);
  const std::string cmd = prefix + std::string(ZEPP_BINARY) + " " + args + " 2>" + err_file;
  ProgramResult r;
  rusage usage{};
  const double cpu0 = children_cpu_seconds(usage);
  const auto t0 = std::chrono::steady_clock::now();
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  for (size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.cpu_seconds = children_cpu_seconds(usage) - cpu0;
  r.peak_rss_mb = double(usage.ru_maxrss) / 1024;  // KiB on Linux
  if (FILE* e = fopen(err_file.c_str(), "r")) {
    for (size_t n; (n = fread(buf.data(), 1, buf.size(), e)) > 0;) r.err.append(buf.data(), n);
    fclose(e);
  }
  std::remove(err_file.c_str());
  return r;
}

inline ProgramResult run_zepp(const std::string& args) { return run_command("", args); }

// mpirun -np N zepp ARGS (ARGS starts with the subcommand), one OpenBLAS thread per rank, killed
// after `limit_s` so a hang fails the test instead of CI.
inline ProgramResult mpirun_zepp(int np, const std::string& args, int limit_s = 120) {
  return run_command("OPENBLAS_NUM_THREADS=1 timeout -k 5 " + std::to_string(limit_s) +
                         " mpirun --allow-run-as-root --oversubscribe -np " + std::to_string(np) + " ",
                     args);
}

inline std::string shared_dir() { return ZEPP_SHARED_DIR; }

// Occurrences of `needle` in `text` (a message said once, not once per rank).
inline size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace zepp::testing
