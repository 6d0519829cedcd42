#include "core/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"

namespace zepp {
namespace fs = std::filesystem;

std::string not_regular_kind(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "";  // absent (or a dangling link: created as a file)
  if (S_ISREG(st.st_mode)) return "";
  if (S_ISDIR(st.st_mode)) return "a directory";
  if (S_ISCHR(st.st_mode)) return "a character device";
  if (S_ISBLK(st.st_mode)) return "a block device";
  if (S_ISFIFO(st.st_mode)) return "a FIFO";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  return "not a regular file";
}

std::string absent_kind(const std::string& path, const std::string& otherwise) {
  std::error_code ec;
  if (!fs::is_symlink(path, ec)) return otherwise;
  return "a broken symbolic link (to " + fs::read_symlink(path, ec).string() + ")";
}

void check_file_name(const std::string& path, const std::string& flag) {
  require(!path.empty(), flag, "expected a file name");
  const std::string last = fs::path(path).filename().string();
  require(path.back() != '/' && last != "." && last != "..", flag,
          path + " names a folder (it ends in '" + (path.back() == '/' ? std::string("/") : last) +
              "'); expected a file name, such as " + (path.back() == '/' ? path : path + "/") + "out");
}

namespace {

// The nearest existing ancestor of `path` (its parent when that exists; "." for a bare name).
fs::path nearest_existing_folder(const fs::path& path) {
  std::error_code ec;
  fs::path up = path.parent_path();
  while (!up.empty() && !fs::exists(up, ec)) up = up.parent_path();
  return up.empty() ? fs::path(".") : up;
}

// Refuses, naming `flag`, a folder in which no file can be created, which the writers need for
// `target` (PATH.tmp, or the folders on the way to it): found by creating a probe file and
// removing it, since permission bits do not tell (root may write anywhere the bits allow, yet
// not in /proc or on a read-only mount), and otherwise the refusal comes after all the work.
void probe_writable(const fs::path& folder, const std::string& target, const std::string& flag) {
  std::string probe = (folder / ".zepp-write-probe-XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0)
    throw ArgumentError(flag + ": cannot write " + target + ": cannot create files in " + folder.string() + ": " +
                        std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace

void check_output_file(const std::string& path, const std::string& flag) {
  check_file_name(path, flag);
  const std::string kind = not_regular_kind(path);
  require(kind.empty(), flag, path + " is " + kind + "; expected a regular file to write (or a new file name)");
  const fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) return;
  const std::string dir_kind = not_regular_kind(dir.string());
  std::error_code ec;
  require(!fs::exists(dir, ec) || dir_kind == "a directory", flag,
          dir.string() + " is " + (dir_kind.empty() ? std::string("a regular file") : dir_kind) + ", not a folder to write " +
              path + " in");
  const fs::path up = nearest_existing_folder(path);
  require(not_regular_kind(up.string()) == "a directory", flag,
          up.string() + " is not a folder to create " + path + " in");
  probe_writable(up, path, flag);
}

void check_output_dir(const std::string& path, const std::string& flag) {
  require(!path.empty(), flag, "expected a folder name");
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    // The writers create it later; its nearest existing ancestor must be a folder, or they fail
    // after the work (a path under a regular file).
    fs::path up = fs::path(path).parent_path();
    while (!up.empty() && !fs::exists(up, ec)) up = up.parent_path();
    const std::string kind = up.empty() ? "a directory" : not_regular_kind(up.string());
    require(kind == "a directory", flag,
            up.string() + " is " + (kind.empty() ? std::string("a regular file") : kind) + ", not a folder to create " +
                path + " in");
    probe_writable(up, path, flag);
    return;
  }
  const std::string kind = not_regular_kind(path);
  require(kind == "a directory", flag, path + " is " + (kind.empty() ? std::string("a regular file") : kind) + "; expected a folder");
  probe_writable(path, path, flag);
}

void write_file_atomically(const std::string& given, const std::string& text, const std::string& flag) {
  check_output_file(given, flag);
  std::error_code ec;
  // A symbolic link to a file is written through: the rename below replaced the link itself by a
  // regular file, and its target kept the old contents.
  std::string path = given;
  if (fs::is_symlink(given, ec) && fs::exists(given, ec)) {
    const fs::path target = fs::canonical(given, ec);
    require(!ec, flag, "cannot resolve the link " + given + ": " + ec.message());
    path = target.string();
  }
  const fs::path dir = fs::path(path).parent_path();
  if (!dir.empty()) fs::create_directories(dir, ec);
  require(!ec, flag, "cannot create folder " + dir.string() + ": " + ec.message());
  // A fixed name: a process killed mid-write leaves one PATH.tmp, which the next write replaces.
  const std::string tmp = path + ".tmp";
  check_output_file(tmp, flag);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) throw ArgumentError(flag + ": cannot write " + tmp + ": " + std::strerror(errno));
  auto fail = [&](const std::string& why) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw ArgumentError(flag + ": cannot write " + path + ": " + why);
  };
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(std::strerror(errno));
    done += size_t(n);
  }
  if (::fsync(fd) != 0) fail(std::strerror(errno));
  if (::close(fd) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw ArgumentError(flag + ": cannot write " + path + ": " + why);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw ArgumentError(flag + ": cannot replace " + path + ": " + why);
  }
}

}  // namespace zepp
