// Tests that read ../shared (the real traces, EPLB's data): where it is absent they skip, saying
// why, on a developer's machine, and fail in CI (CI=true, which CI sets), where a missing folder
// is a broken setup, not a reason to pass (issue 23).
#pragma once
#include <cstdlib>
#include <cstring>

#include <gtest/gtest.h>

namespace zepp::test_common {

inline bool in_ci() {
  const char* ci = std::getenv("CI");
  return ci && std::strcmp(ci, "true") == 0;
}

}  // namespace zepp::test_common

// In a test body: `if (!exists(path)) ZEPP_SHARED_ABSENT() << path << " is absent";` -- a skip,
// or under CI=true a fatal failure, with that message.
#define ZEPP_SHARED_ABSENT()                                                                                  \
  return ::testing::internal::AssertHelper(                                                                   \
             ::zepp::test_common::in_ci() ? ::testing::TestPartResult::kFatalFailure                           \
                                          : ::testing::TestPartResult::kSkip,                                  \
             __FILE__, __LINE__, ::zepp::test_common::in_ci() ? "CI=true: the shared data folder is required" : "") = \
      ::testing::Message()
