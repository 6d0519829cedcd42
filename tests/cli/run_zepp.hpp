// Runs the built `zepp` program and captures its exit status and output (stdout + stderr).
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>

namespace zepp::testing {

struct ProgramResult {
  int status = -1;      // exit status
  std::string out;      // stdout
  std::string err;      // stderr
};

inline ProgramResult run_zepp(const std::string& args) {
  // A file of its own per call: ctest runs tests of this program in parallel processes.
  std::string err_file = ::testing::TempDir() + "zepp_stderr_XXXXXX";
  const int fd = mkstemp(err_file.data());
  if (fd >= 0) close(fd);
  const std::string cmd = std::string(ZEPP_BINARY) + " " + args + " 2>" + err_file;
  ProgramResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  for (size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  if (FILE* e = fopen(err_file.c_str(), "r")) {
    for (size_t n; (n = fread(buf.data(), 1, buf.size(), e)) > 0;) r.err.append(buf.data(), n);
    fclose(e);
  }
  std::remove(err_file.c_str());
  return r;
}

inline std::string shared_dir() { return ZEPP_SHARED_DIR; }

}  // namespace zepp::testing
