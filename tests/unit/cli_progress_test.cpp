#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "cli/progress.hpp"

namespace punctual::cli {
namespace {

using std::chrono::seconds;

record::view_set interval(std::uint64_t sent, std::int64_t rt_ns, std::int64_t lag_ns) {
  record::view_set v;
  v.counts().sent = sent;
  v.counts().planned = sent;
  v.counts().errors = 1;
  v.counts().queue_depth_max = 7;
  for (std::uint64_t i = 0; i < sent; ++i) {
    v[record::view::response_time].record(rt_ns);
    v[record::view::send_lag].record(lag_ns);
  }
  return v;
}

std::string read_all(std::FILE* f) {
  std::rewind(f);
  std::string out;
  char buf[512];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, f)) out.append(buf, n);
  return out;
}

TEST(progress, the_mode_follows_the_terminal_and_the_flags) {
  EXPECT_EQ(choose_progress(false, false, true), progress_mode::terminal);
  EXPECT_EQ(choose_progress(false, false, false), progress_mode::off);
  EXPECT_EQ(choose_progress(false, true, false), progress_mode::plain);
  EXPECT_EQ(choose_progress(true, true, true), progress_mode::off);
}

TEST(progress, a_line_has_the_figures_and_marks_send_lag) {
  progress_line p(progress_mode::off, stderr, seconds(30), seconds(1));
  const auto calm = interval(500, 2'000'000, 10'000);
  p.on_interval(0, calm);
  const std::string line = p.text(0, calm);
  EXPECT_NE(line.find("1s/30s"), std::string::npos) << line;
  EXPECT_NE(line.find("sent 500/500"), std::string::npos) << line;
  EXPECT_NE(line.find("500/s"), std::string::npos) << line;
  EXPECT_NE(line.find("errors 1"), std::string::npos) << line;
  EXPECT_NE(line.find("queue 7"), std::string::npos) << line;
  EXPECT_EQ(line.find("send lag"), std::string::npos) << line;
  EXPECT_NE(p.text(1, interval(500, 2'000'000, 50'000'000)).find("! send lag"), std::string::npos);
}

TEST(progress, a_terminal_line_is_redrawn_and_erased_a_plain_one_is_not) {
  std::FILE* tty = std::tmpfile();
  {
    progress_line p(progress_mode::terminal, tty, seconds(3), seconds(1));
    p.on_interval(0, interval(10, 1000, 0));
    p.on_interval(1, interval(10, 1000, 0));
  }  // the destructor erases
  const std::string drawn = read_all(tty);
  EXPECT_EQ(drawn.rfind("\r\x1b[K"), drawn.size() - 4);
  EXPECT_NE(drawn.find("\r\x1b[K2s/3s"), std::string::npos);
  std::fclose(tty);
  std::FILE* file = std::tmpfile();
  {
    progress_line p(progress_mode::plain, file, seconds(30), seconds(1));
    for (int i = 0; i < 25; ++i) p.on_interval(i, interval(10, 1000, 0));
  }
  const std::string plain = read_all(file);
  EXPECT_EQ(plain.find('\x1b'), std::string::npos);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), '\n'), 3);  // at 1 s, 11 s and 21 s
  std::fclose(file);
}

}  // namespace
}  // namespace punctual::cli
