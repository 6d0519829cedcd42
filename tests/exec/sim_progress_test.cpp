// The sim executor's progress line (exec/sim_progress.hpp) on a clock the test sets: nothing
// before `after_s`, then at most one line per `every_s`, each checked every 1,024 tasks; a
// newline at the end only when a line was written; no output and no clock read without a file.
#include <gtest/gtest.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "exec/sim_progress.hpp"

namespace zepp::sim_detail {
namespace {

std::string contents(std::FILE* f) {
  std::rewind(f);
  std::string s;
  for (int c; (c = std::fgetc(f)) != EOF;) s += char(c);
  return s;
}

void tasks(SimProgress& p, int n, double sim_s) {
  for (int i = 0; i < n; ++i) p.task_done(sim_s);
}

TEST(SimProgress, FirstLineAfterTheDelayThenOnePerInterval) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  double now = 10.0;  // wall seconds; the line counts from construction
  SimProgress p(f, 4096, [&] { return now; }, 2.0, 1.0);
  now = 11.5;
  tasks(p, 1024, 1e-6);  // 1.5 s in: before the delay
  EXPECT_EQ(contents(f), "");
  now = 15.0;
  tasks(p, 1023, 2e-6);  // not yet a multiple of 1,024: the clock is not read
  EXPECT_EQ(contents(f), "");
  tasks(p, 1, 12e-6);  // task 2,048 at 5 s
  const std::string first = "\rsim: 2048 of 4096 tasks done (50%), 12.0 us simulated, 5 s   ";
  EXPECT_EQ(contents(f), first);
  now = 15.5;
  tasks(p, 1024, 13e-6);  // within the interval of the last line
  EXPECT_EQ(contents(f), first);
  now = 16.0;
  tasks(p, 1024, 20.5e-6);
  const std::string second = first + "\rsim: 4096 of 4096 tasks done (100%), 20.5 us simulated, 6 s   ";
  EXPECT_EQ(contents(f), second);
  p.finish();
  EXPECT_EQ(contents(f), second + "\n");
  p.finish();  // once
  EXPECT_EQ(contents(f), second + "\n");
  std::fclose(f);
}

TEST(SimProgress, ShortRunsWriteNothing) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  double now = 0.0;
  SimProgress p(f, 3000, [&] { return now; });
  now = 1.9;
  tasks(p, 3000, 1e-3);
  p.finish();
  EXPECT_EQ(contents(f), "");
  std::fclose(f);
}

TEST(SimProgress, WithoutAFileTheClockIsNeverRead) {
  SimProgress p(nullptr, 5000, [] () -> double { throw std::logic_error("clock read"); });
  EXPECT_NO_THROW(tasks(p, 5000, 1.0));
  EXPECT_NO_THROW(p.finish());
}

}  // namespace
}  // namespace zepp::sim_detail
