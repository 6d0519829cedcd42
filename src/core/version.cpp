#include "core/version.hpp"

#include "zepp_version.h"  // generated (cmake/version.cmake)

namespace zepp {

const char* version() { return ZEPP_VERSION; }
const char* git_commit() { return ZEPP_GIT_COMMIT; }
std::string version_line() { return std::string("zepp ") + version() + " (commit " + git_commit() + ")"; }

}  // namespace zepp
