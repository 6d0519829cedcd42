// Temporary files for tests: a fresh folder removed when the test ends (TempDir), and files and
// folders private to the test process (ctest runs each test in a process of its own, in parallel).
#pragma once
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace zepp::testing {

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / ("zepp_trace_test_" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Writes `content` to `name` (sub-folders created) and returns the file's path.
  std::string write(const std::string& name, const std::string& content) const {
    std::filesystem::path p = path_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// ::testing::TempDir()/zepp-PID, created on first use.
inline std::filesystem::path process_dir() {
  const std::filesystem::path d = std::filesystem::path(::testing::TempDir()) / ("zepp-" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d;
}

// A fresh, empty folder `name` in process_dir().
inline std::filesystem::path scratch(const std::string& name) {
  const std::filesystem::path d = process_dir() / name;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

// Writes `text` to the file `name` in process_dir() and returns its path.
inline std::string write_file(const std::string& name, const std::string& text) {
  const std::filesystem::path p = process_dir() / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

// The whole content of the file at `path` ("" when it cannot be read).
inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace zepp::testing
