// The program's version and the git commit it was built from: `zepp --version`, the provenance
// line of every results file (core/provenance.hpp), Python's zepp.__version__.
// One source: <build>/generated/zepp_version.h, written at every build by cmake/version.cmake from
// CMakeLists.txt's project(VERSION) and `git rev-parse HEAD` (+dirty with uncommitted changes).
#pragma once
#include <string>

namespace zepp {

const char* version();     // project(VERSION), e.g. "0.1.0"
const char* git_commit();  // 40 hex digits, "+dirty" appended when built with uncommitted changes;
                           // "unknown" outside a git checkout
std::string version_line();  // "zepp 0.1.0 (commit <git_commit()>)"

}  // namespace zepp
