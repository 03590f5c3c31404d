#include "punctual/histogram/log_merge.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "punctual/histogram/interval_log.hpp"
#include "test_files.hpp"

namespace {

using namespace punctual::hdr;

log_interval make_interval(std::string tag, double start, double length, histogram h) {
  return log_interval{std::move(tag), start, length, 0.0, 0, std::move(h)};
}

interval_log make_log(double start_time, std::vector<log_interval> intervals) {
  interval_log log;
  log.start_time_unix_seconds = log.base_time_unix_seconds = start_time;
  log.intervals = std::move(intervals);
  return log;
}

void expect_same_counts(const histogram& a, const histogram& b) {
  ASSERT_EQ(a.params(), b.params());
  EXPECT_EQ(a.total_count(), b.total_count());
  for (std::int32_t i = 0; i < a.counts_length(); ++i) {
    ASSERT_EQ(a.count_at_index(i), b.count_at_index(i)) << "slot " << i;
  }
}

// Two shards each record part of the values of each second; one recorder records all of them.
TEST(log_merge, merge_of_two_logs_equals_recording_everything_into_one) {
  const histogram_params p{1, 3'600'000'000'000, 3};
  std::vector<log_interval> a, b;
  std::vector<histogram> whole(3, histogram(p));
  for (int second = 0; second < 3; ++second) {
    histogram ha(p), hb(p), ta(p), tb(p);
    for (int i = 0; i < 500; ++i) {
      const std::int64_t v = 1000 + (i * 7919LL + second * 104729LL) % 5'000'000;
      (i % 3 == 0 ? ha : hb).record(v);
      whole[second].record(v);
      (i % 2 == 0 ? ta : tb).record(v / 2);
    }
    a.push_back(make_interval("", 100.0 + second, 1.0, ha));
    a.push_back(make_interval("service_time", 100.0 + second, 1.0, ta));
    b.push_back(make_interval("", 100.0004 + second, 1.0, hb));
    b.push_back(make_interval("service_time", 100.0004 + second, 1.0, tb));
  }
  const std::vector<interval_log> logs{make_log(100.0, a), make_log(99.5, b)};
  const auto merged = merge_logs(logs);
  ASSERT_TRUE(merged) << merged.error;
  EXPECT_DOUBLE_EQ(merged.log->start_time_unix_seconds, 99.5);
  EXPECT_DOUBLE_EQ(merged.log->base_time_unix_seconds, 99.5);
  ASSERT_EQ(merged.log->intervals.size(), 6u);
  for (int second = 0; second < 3; ++second) {
    const log_interval& rt = merged.log->intervals[2 * second];
    const log_interval& st = merged.log->intervals[2 * second + 1];
    EXPECT_EQ(rt.tag, "");
    EXPECT_EQ(st.tag, "service_time");
    EXPECT_NEAR(rt.start_unix_seconds, 100.0 + second, 1e-9);
    EXPECT_DOUBLE_EQ(rt.length_seconds, 1.0);
    expect_same_counts(rt.value, whole[second]);
    EXPECT_EQ(st.value.total_count(), 500);
  }
  // Merging survives writing and reading back.
  std::ostringstream out;
  interval_log_writer writer(out, merged.log->start_time_unix_seconds);
  writer.write_header();
  for (const auto& iv : merged.log->intervals) {
    writer.write_interval(iv.tag, iv.start_unix_seconds - writer.log_start_unix_seconds(),
                          iv.length_seconds, iv.value);
  }
  const auto reread = read_interval_log(out.str());
  ASSERT_TRUE(reread) << reread.error;
  const auto sum = sum_intervals(reread.log->intervals, "");
  ASSERT_TRUE(sum);
  EXPECT_EQ(sum->total_count(), 1500);
}

TEST(log_merge, different_parameters_merge_into_the_wider_layout) {
  histogram narrow({1000, 1'000'000'000, 2});
  histogram wide({1, 3'600'000'000'000, 3});
  narrow.record(5'000'000);
  wide.record(1'700'000'000'000);
  wide.record(3);
  const std::vector<interval_log> logs{make_log(0, {make_interval("", 10, 1, narrow)}),
                                       make_log(0, {make_interval("", 10, 1, wide)})};
  const auto merged = merge_logs(logs);
  ASSERT_TRUE(merged) << merged.error;
  ASSERT_EQ(merged.log->intervals.size(), 1u);
  const histogram& h = merged.log->intervals[0].value;
  EXPECT_EQ(h.params(), (histogram_params{1, 3'600'000'000'000, 3}));
  EXPECT_EQ(h.total_count(), 3);
  EXPECT_EQ(h.over_range_count(), 0);
  EXPECT_EQ(h.min(), 3);
  EXPECT_EQ(h.max(), wide.max());
  EXPECT_EQ(h.value_at_percentile(50),
            h.highest_equivalent_value(narrow.lowest_equivalent_value(5'000'000)));
  EXPECT_EQ(widest_params({1000, 1'000'000'000, 2}, {1, 500'000, 4}),
            (histogram_params{1, 1'000'000'000, 4}));
}

TEST(log_merge, misaligned_starts_are_rejected) {
  histogram h({1, 3'600'000'000, 3});
  h.record(5);
  const std::vector<interval_log> logs{
      make_log(0, {make_interval("", 10.0, 1, h), make_interval("", 11.0, 1, h)}),
      make_log(0, {make_interval("", 10.5, 1, h)})};
  merge_options options;
  options.names = {"a.hlog", "b.hlog"};
  const auto merged = merge_logs(logs, options);
  EXPECT_FALSE(merged);
  EXPECT_NE(merged.error.find("b.hlog"), std::string::npos) << merged.error;
  EXPECT_NE(merged.error.find("grid"), std::string::npos) << merged.error;
}

TEST(log_merge, different_interval_lengths_are_rejected) {
  histogram h({1, 3'600'000'000, 3});
  const std::vector<interval_log> logs{
      make_log(0, {make_interval("", 10, 1, h), make_interval("", 11, 1, h)}),
      make_log(0, {make_interval("", 10, 2, h), make_interval("", 12, 2, h)})};
  const auto merged = merge_logs(logs);
  EXPECT_FALSE(merged);
  EXPECT_NE(merged.error.find("lengths differ"), std::string::npos) << merged.error;
}

TEST(log_merge, a_short_last_interval_is_accepted) {
  histogram h({1, 3'600'000'000, 3});
  h.record(7);
  const std::vector<interval_log> logs{
      make_log(0, {make_interval("", 10, 1, h), make_interval("", 11, 0.4, h)}),
      make_log(0, {make_interval("", 10, 1, h), make_interval("", 11, 1, h)})};
  const auto merged = merge_logs(logs);
  ASSERT_TRUE(merged) << merged.error;
  ASSERT_EQ(merged.log->intervals.size(), 2u);
  EXPECT_DOUBLE_EQ(merged.log->intervals[1].length_seconds, 1.0);
  EXPECT_EQ(merged.log->intervals[1].value.total_count(), 2);
}

TEST(log_merge, overlapping_intervals_in_one_log_are_rejected) {
  histogram h({1, 3'600'000'000, 3});
  const std::vector<interval_log> logs{
      make_log(0, {make_interval("", 10, 1, h), make_interval("", 10.0002, 1, h),
                   make_interval("", 11, 1, h)})};
  const auto merged = merge_logs(logs);
  EXPECT_FALSE(merged);
  EXPECT_NE(merged.error.find("overlap"), std::string::npos) << merged.error;
}

TEST(log_merge, golden_log_merged_with_itself_doubles_every_count) {
  const auto read = read_interval_log_file(punctual::test::golden_dir + "three-intervals.hlog");
  ASSERT_TRUE(read) << read.error;
  const std::vector<interval_log> logs{*read.log, *read.log};
  const auto merged = merge_logs(logs);
  ASSERT_TRUE(merged) << merged.error;
  ASSERT_EQ(merged.log->intervals.size(), 3u);
  const auto total = sum_intervals(merged.log->intervals, "");
  ASSERT_TRUE(total);
  EXPECT_EQ(total->total_count(), 2 * 1126);
  EXPECT_EQ(total->max(), 2500607);
  EXPECT_DOUBLE_EQ(merged.log->intervals[2].start_unix_seconds, 1700000002.0);
  EXPECT_FALSE(sum_intervals(merged.log->intervals, "nope"));
}

TEST(log_merge, no_logs_is_an_error) {
  EXPECT_FALSE(merge_logs({}));
}

// merge_log_files reads each file twice, an interval at a time, and must give what merge_logs
// gives from the same logs in memory: the same intervals, counts and errors.
std::string written(const interval_log& log, const std::string& name) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("punctual-file-merge-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream out(path);
  interval_log_writer writer(out, log.start_time_unix_seconds);
  writer.write_header();
  for (const auto& iv : log.intervals) {
    writer.write_interval(iv.tag, iv.start_unix_seconds - log.start_time_unix_seconds,
                          iv.length_seconds, iv.value);
  }
  return path.string();
}

TEST(log_merge, merging_files_streamed_gives_the_in_memory_merge) {
  const histogram_params narrow{1000, 1'000'000'000, 2};
  const histogram_params wide{1, 3'600'000'000'000, 3};
  std::vector<log_interval> a, b;
  for (int second = 0; second < 4; ++second) {
    histogram ha(wide), hb(narrow), ta(wide);
    for (int i = 0; i < 300; ++i) {
      ha.record(700 + (i * 7919LL + second * 104729LL) % 40'000'000);
      hb.record(2000 + (i * 15485863LL) % 900'000'000);
      ta.record(50 + i);
    }
    a.push_back(make_interval("", 200.0 + second, 1.0, ha));
    a.push_back(make_interval("service_time", 200.0 + second, 1.0, ta));
    b.push_back(make_interval("", 201.0 + second, second == 3 ? 0.5 : 1.0, hb));
  }
  const std::vector<interval_log> logs{make_log(200.0, a), make_log(201.0, b)};
  // Through files both ways, so both merges see what a file holds.
  const std::vector<std::string> paths{written(logs[0], "a.hlog"), written(logs[1], "b.hlog")};
  std::vector<interval_log> reread;
  for (const auto& path : paths) reread.push_back(*read_interval_log_file(path).log);
  const auto expected = merge_logs(reread);
  ASSERT_TRUE(expected) << expected.error;
  std::vector<log_interval> streamed;
  double start = -1;
  const auto result = merge_log_files(
      paths, {}, [&](const file_merge_result& h) { start = h.start_time_unix_seconds; },
      [&](log_interval&& iv) { streamed.push_back(std::move(iv)); });
  ASSERT_TRUE(result) << result.error;
  EXPECT_DOUBLE_EQ(start, expected.log->start_time_unix_seconds);
  EXPECT_EQ(result.inferred_unit_ratio, 1e6);
  ASSERT_EQ(streamed.size(), expected.log->intervals.size());
  ASSERT_EQ(result.intervals, streamed.size());
  for (std::size_t i = 0; i < streamed.size(); ++i) {
    EXPECT_EQ(streamed[i].tag, expected.log->intervals[i].tag);
    EXPECT_DOUBLE_EQ(streamed[i].start_unix_seconds, expected.log->intervals[i].start_unix_seconds);
    EXPECT_DOUBLE_EQ(streamed[i].length_seconds, expected.log->intervals[i].length_seconds);
    expect_same_counts(streamed[i].value, expected.log->intervals[i].value);
  }
  // A misaligned log is refused with the same words.
  const std::vector<interval_log> off{make_log(0, {make_interval("", 10.0, 1, histogram(wide))}),
                                      make_log(0, {make_interval("", 10.4, 1, histogram(wide))})};
  const std::vector<std::string> off_paths{written(off[0], "c.hlog"), written(off[1], "d.hlog")};
  std::vector<interval_log> off_reread;
  for (const auto& path : off_paths) off_reread.push_back(*read_interval_log_file(path).log);
  const auto refused = merge_log_files(
      off_paths, {}, [](const file_merge_result&) {}, [](log_interval&&) {});
  EXPECT_FALSE(refused);
  EXPECT_EQ(refused.error, merge_logs(off_reread).error);
  for (const auto& path : paths) std::filesystem::remove(path);
  for (const auto& path : off_paths) std::filesystem::remove(path);
}

// The `punctual merge` / `punctual report` commands, when the binary has been built.
class merge_cli : public testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(PUNCTUAL_BINARY)) GTEST_SKIP() << "no " << PUNCTUAL_BINARY;
    dir_ = std::filesystem::temp_directory_path() /
           ("punctual-merge-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  int run(const std::string& args) {
    const std::string command = std::string("'") + PUNCTUAL_BINARY + "' " + args + " >'" +
                                (dir_ / "stdout").string() + "' 2>'" + (dir_ / "stderr").string() +
                                "'";
    const int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::size_t files_in_dir() const {
    std::size_t n = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
      const auto name = entry.path().filename().string();
      if (name != "stdout" && name != "stderr") ++n;
    }
    return n;
  }
  std::filesystem::path dir_;
};

TEST_F(merge_cli, merges_and_reports) {
  const std::string out = (dir_ / "merged.hlog").string();
  ASSERT_EQ(run("merge '" + punctual::test::golden_dir + "three-intervals.hlog' '" +
                punctual::test::golden_dir + "three-intervals.canonical.hlog' -o '" + out + "'"),
            0);
  EXPECT_EQ(files_in_dir(), 1u);  // no temporary file left behind
  const auto read = read_interval_log_file(out);
  ASSERT_TRUE(read) << read.error;
  const auto sum = sum_intervals(read.log->intervals, "");
  ASSERT_TRUE(sum);
  EXPECT_EQ(sum->total_count(), 2252);
  // The max column keeps the inputs' ratio (1000).
  EXPECT_DOUBLE_EQ(read.log->intervals[2].max_column, 2500.607);

  const std::string json = (dir_ / "report.json").string();
  const std::string hgrm = (dir_ / "report.hgrm").string();
  ASSERT_EQ(
      run("report '" + out + "' --unit-ratio 1000 --json '" + json + "' --hgrm '" + hgrm + "'"), 0);
  std::ifstream in(json);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("\"count\": 2252"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("\"99.9\": 250111"), std::string::npos) << text.str();
  EXPECT_TRUE(std::filesystem::exists(hgrm));
}

TEST_F(merge_cli, misaligned_inputs_fail_without_output) {
  const std::string shifted = (dir_ / "shifted.hlog").string();
  {
    std::ofstream out(shifted);
    interval_log_writer writer(out, 1700000000.0, 1000.0);
    writer.write_header();
    writer.write_interval("", 0.4, 1.0, histogram({1, 3'600'000'000, 3}));
  }
  EXPECT_EQ(run("merge '" + punctual::test::golden_dir + "three-intervals.hlog' '" + shifted +
                "' -o '" + (dir_ / "out.hlog").string() + "'"),
            2);
  EXPECT_EQ(files_in_dir(), 1u);  // only the input
}

TEST_F(merge_cli, report_errors_exit_2) {
  EXPECT_EQ(run("report '" + (dir_ / "missing.hlog").string() + "'"), 2);
  EXPECT_EQ(run("report '" + punctual::test::golden_dir + "single.b64'"), 2);
  EXPECT_EQ(run("report '" + punctual::test::golden_dir + "three-intervals.hlog' --tag nope"), 2);
  EXPECT_EQ(run("report"), 2);
}

}  // namespace
