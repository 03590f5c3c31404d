#include "punctual/histogram/interval_log.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <locale>
#include <sstream>
#include <string>
#include <vector>

#include "punctual/histogram/codec.hpp"
#include "report/json.hpp"
#include "test_files.hpp"

namespace {

using namespace punctual::hdr;

using punctual::test::read_file;

std::string without_first_line(const std::string& text) {
  return text.substr(text.find('\n') + 1);
}

histogram_params golden_params() {
  return {1, 3'600'000'000, 3};
}

// The recording operations of the golden log (recorded-values.json), replayed.
std::vector<histogram> golden_histograms() {
  std::vector<histogram> out(3, histogram(golden_params()));
  for (int v = 1; v <= 1000; ++v) out[0].record(v);
  out[1].record_n(5000, 100);
  out[1].record_n(123456, 10);
  out[2].record_corrected(10000, 1000);
  out[2].record_corrected(250000, 50000);
  out[2].record(2500000);
  return out;
}

std::string write_log(const std::vector<histogram>& hs, std::string_view comment) {
  std::ostringstream out;
  interval_log_writer writer(out, 1700000000.0, 1000.0);
  writer.write_header(comment);
  for (std::size_t i = 0; i < hs.size(); ++i) {
    writer.write_interval("", static_cast<double>(i), 1.0, hs[i]);
  }
  return out.str();
}

TEST(interval_log_writer, rebuilt_histograms_give_the_canonical_golden_log) {
  const std::string expected =
      read_file(punctual::test::golden_dir + "three-intervals.canonical.hlog");
  ASSERT_FALSE(expected.empty());
  const std::string written = write_log(golden_histograms(), "[written by a test]");
  EXPECT_EQ(without_first_line(written), without_first_line(expected));
  EXPECT_EQ(written.substr(0, written.find('\n')), "#[written by a test]");
}

TEST(interval_log_writer, histograms_decoded_from_the_js_log_give_the_canonical_log) {
  const auto read = read_interval_log_file(punctual::test::golden_dir + "three-intervals.hlog");
  ASSERT_TRUE(read) << read.error;
  std::vector<histogram> hs;
  for (const auto& iv : read.log->intervals) hs.push_back(iv.value);
  ASSERT_EQ(hs.size(), 3u);
  EXPECT_EQ(
      without_first_line(write_log(hs, "x")),
      without_first_line(read_file(punctual::test::golden_dir + "three-intervals.canonical.hlog")));
}

struct comma_decimal : std::numpunct<char> {
  char do_decimal_point() const override { return ','; }
  char do_thousands_sep() const override { return '.'; }
  std::string do_grouping() const override { return "\3"; }
};

TEST(interval_log_writer, numbers_ignore_the_stream_and_global_locale) {
  const std::locale comma(std::locale::classic(), new comma_decimal);
  const std::locale previous = std::locale::global(comma);
  std::ostringstream out;
  out.imbue(comma);
  interval_log_writer writer(out, 1700000000.5, 1e6);
  writer.write_header();
  histogram h;
  h.record(1'234'567'890);
  writer.write_interval("service_time", 1234.25, 1.0, h);
  std::locale::global(previous);
  const std::string text = out.str();
  EXPECT_NE(text.find("#[StartTime: 1700000000.500 (seconds since epoch), "), std::string::npos);
  EXPECT_NE(text.find("\nTag=service_time,1234.250,1.000,"), std::string::npos) << text;
  const auto max_text = std::to_string(h.max() / 1000000) + ".";
  EXPECT_NE(text.find("," + max_text), std::string::npos) << text;
}

TEST(interval_log_writer, header_comments_are_split_to_fit_126_characters) {
  std::ostringstream out;
  interval_log_writer writer(out, 0.0);
  writer.write_header(std::string(300, 'c') + "\n[second]\n[" + std::string(200, 'b') + "]");
  std::istringstream lines(out.str());
  std::string line;
  int comment_lines = 0;
  while (std::getline(lines, line)) {
    EXPECT_LE(line.size(), 126u);
    if (line.rfind("#c", 0) == 0 || line == "#[second]") ++comment_lines;
    if (line.rfind("#[b", 0) == 0 && line.back() == ']') ++comment_lines;
  }
  EXPECT_EQ(comment_lines, 6);
  EXPECT_NE(
      out.str().find("#[StartTime: 0.000 (seconds since epoch), Thu Jan 01 00:00:00 UTC 1970]"),
      std::string::npos);
}

TEST(interval_log_writer, rejects_tags_that_would_break_the_line) {
  std::ostringstream out;
  interval_log_writer writer(out, 0.0);
  histogram h;
  EXPECT_THROW(writer.write_interval("a,b", 0, 1, h), std::invalid_argument);
  EXPECT_THROW(writer.write_interval("a b", 0, 1, h), std::invalid_argument);
  EXPECT_THROW(writer.write_interval("a\nb", 0, 1, h), std::invalid_argument);
}

TEST(interval_log_writer, java_date_text) {
  EXPECT_EQ(java_utc_date_text(1700000000.0), "Tue Nov 14 22:13:20 UTC 2023");
  EXPECT_EQ(java_utc_date_text(1700000000.999), "Tue Nov 14 22:13:20 UTC 2023");
  EXPECT_EQ(java_utc_date_text(951782400.0), "Tue Feb 29 00:00:00 UTC 2000");
  // Found by hlog_fuzz: a StartTime of 1.7e19 s once made the time_t conversion undefined.
  EXPECT_EQ(java_utc_date_text(1.7e19), "Thu Jan 01 00:00:00 UTC 1970");
  EXPECT_EQ(java_utc_date_text(-5.0), "Thu Jan 01 00:00:00 UTC 1970");
}

void expect_interval_figures(const histogram& h, const nlohmann::json& e) {
  EXPECT_EQ(h.total_count(), e["totalCount"].get<std::int64_t>());
  EXPECT_EQ(h.min(), e["min"].get<std::int64_t>());
  EXPECT_EQ(h.max(), e["max"].get<std::int64_t>());
  EXPECT_NEAR(h.mean(), e["mean"].get<double>(), 1e-9 * e["mean"].get<double>());
  EXPECT_NEAR(h.stddev(), e["stdDeviation"].get<double>(), 1e-9 * e["stdDeviation"].get<double>());
  for (const auto& [p, v] : e["percentiles"].items()) {
    EXPECT_EQ(h.value_at_percentile(std::stod(p)), v.get<std::int64_t>()) << "p" << p;
  }
}

class golden_logs : public testing::TestWithParam<const char*> {};

TEST_P(golden_logs, reader_gives_the_expected_figures) {
  const auto expected = nlohmann::json::parse(
      read_file(punctual::test::golden_dir + "three-intervals.expected.json"));
  const auto read = read_interval_log_file(punctual::test::golden_dir + GetParam());
  ASSERT_TRUE(read) << read.error;
  const interval_log& log = *read.log;
  EXPECT_EQ(log.format_version, "1.3");
  EXPECT_DOUBLE_EQ(log.start_time_unix_seconds, 1700000000.0);
  EXPECT_DOUBLE_EQ(log.base_time_unix_seconds, 1700000000.0);
  const auto& details = expected["intervalDetails"];
  ASSERT_EQ(log.intervals.size(), details.size());
  histogram merged(log.intervals[0].value.params());
  for (std::size_t i = 0; i < details.size(); ++i) {
    const log_interval& iv = log.intervals[i];
    EXPECT_EQ(iv.tag, "");
    EXPECT_EQ(iv.line, details[i]["line"].get<int>());
    EXPECT_DOUBLE_EQ(iv.start_unix_seconds, 1700000000.0 + details[i]["startSec"].get<double>());
    EXPECT_DOUBLE_EQ(iv.length_seconds, details[i]["lengthSec"].get<double>());
    expect_interval_figures(iv.value, details[i]);
    merged.add(iv.value);
  }
  expect_interval_figures(merged, expected);
}

INSTANTIATE_TEST_SUITE_P(both, golden_logs,
                         testing::Values("three-intervals.hlog", "three-intervals.canonical.hlog"));

TEST(interval_log, round_trip_with_tags) {
  std::ostringstream out;
  interval_log_writer writer(out, 1800000000.25, 1e6);
  writer.write_header("round trip");
  std::vector<histogram> written;
  for (int second = 0; second < 4; ++second) {
    histogram rt({1, 60'000'000'000, 3});
    histogram st({1000, 3'600'000'000'000, 2});
    for (int i = 0; i <= second * 50; ++i) {
      rt.record(1'000'000 + i * 7919);
      st.record(500'000 + i * 104729);
    }
    writer.write_interval("", second, 1.0, rt);
    writer.write_interval("service_time", second, 1.0, st);
    written.push_back(rt);
    written.push_back(st);
  }
  const auto read = read_interval_log(out.str());
  ASSERT_TRUE(read) << read.error;
  ASSERT_EQ(read.log->intervals.size(), written.size());
  for (std::size_t i = 0; i < written.size(); ++i) {
    const log_interval& iv = read.log->intervals[i];
    EXPECT_EQ(iv.tag, i % 2 == 0 ? "" : "service_time");
    EXPECT_NEAR(iv.start_unix_seconds, 1800000000.25 + static_cast<double>(i / 2), 1e-6);
    EXPECT_EQ(iv.value.params(), written[i].params());
    EXPECT_EQ(iv.value.total_count(), written[i].total_count());
    EXPECT_EQ(iv.value.max(), written[i].max());
    EXPECT_NEAR(iv.max_column, static_cast<double>(written[i].max()) / 1e6, 0.0005);
    for (std::int32_t s = 0; s < written[i].counts_length(); ++s) {
      ASSERT_EQ(iv.value.count_at_index(s), written[i].count_at_index(s)) << i << " slot " << s;
    }
  }
  // The same text through the stream reader.
  std::istringstream in(out.str());
  const auto streamed = read_interval_log(in);
  ASSERT_TRUE(streamed) << streamed.error;
  EXPECT_EQ(streamed.log->intervals.size(), written.size());
}

TEST(interval_log_reader, time_rules_without_header_lines) {
  const std::string b64 = encode_compressed_base64(golden_histograms()[1]);
  // Absolute timestamps, no StartTime/BaseTime: start = first interval, base = 0.
  auto read = read_interval_log("1700000005.000,1.000,0.124," + b64 + "\n");
  ASSERT_TRUE(read) << read.error;
  EXPECT_DOUBLE_EQ(read.log->start_time_unix_seconds, 1700000005.0);
  EXPECT_DOUBLE_EQ(read.log->base_time_unix_seconds, 0.0);
  EXPECT_DOUBLE_EQ(read.log->intervals[0].start_unix_seconds, 1700000005.0);
  // StartTime only and small timestamps: they are relative to StartTime.
  read = read_interval_log(
      "#[StartTime: 1700000000.000 (seconds since epoch), x]\n"
      "2.500 1.000 0.124 " +
      b64 + "\r\n");
  ASSERT_TRUE(read) << read.error;
  EXPECT_DOUBLE_EQ(read.log->base_time_unix_seconds, 1700000000.0);
  EXPECT_DOUBLE_EQ(read.log->intervals[0].start_unix_seconds, 1700000002.5);
  EXPECT_EQ(read.log->format_version, "");
}

struct bad_case {
  const char* name;
  std::string line;
};

TEST(interval_log_reader, malformed_lines_give_an_error_with_the_line_number) {
  const std::string b64 = encode_compressed_base64(golden_histograms()[0]);
  const std::string header =
      "#[Histogram log format version 1.3]\n"
      "#[StartTime: 1700000000.000 (seconds since epoch), x]\n"
      "0.000,1.000,1.000," +
      b64 + "\n";
  const std::vector<bad_case> cases = {
      {"bad base64", "1.000,1.000,1.000,HISTFAAA!!!="},
      {"base64 of garbage", "1.000,1.000,1.000,AAAAAAAAAAAA"},
      {"truncated histogram", "1.000,1.000,1.000," + b64.substr(0, 20)},
      {"missing histogram", "1.000,1.000,1.000"},
      {"missing fields", "1.000," + b64},
      {"empty field", "1.000,,1.000," + b64},
      {"too many fields", "1.000,1.000,1.000,1.000," + b64},
      {"non-numeric start", "abc,1.000,1.000," + b64},
      {"non-numeric length", "1.000,1.0x,1.000," + b64},
      {"non-numeric max", "1.000,1.000,max," + b64},
      {"infinite start", "inf,1.000,1.000," + b64},
      {"negative length", "1.000,-1.000,1.000," + b64},
      {"tag only", "Tag=a"},
      {"bad StartTime", "#[StartTime: soon (seconds since epoch)]"},
      {"bad BaseTime", "#[BaseTime: ]"},
  };
  for (const bad_case& c : cases) {
    const auto read = read_interval_log(header + c.line + "\n0.000,1.000,1.000," + b64 + "\n");
    EXPECT_FALSE(read) << c.name;
    EXPECT_EQ(read.error_line, 4) << c.name;
    EXPECT_EQ(read.error.rfind("line 4: ", 0), 0u) << c.name << ": " << read.error;
  }
}

TEST(interval_log_reader, limits_bound_memory) {
  const std::string line =
      "0.000,1.000,1.000," + encode_compressed_base64(golden_histograms()[0]) + "\n";
  log_read_limits limits;
  limits.max_intervals = 2;
  auto read = read_interval_log(line + line + line, limits);
  EXPECT_FALSE(read);
  EXPECT_EQ(read.error_line, 3);
  limits = {};
  limits.max_total_slots = 30000;  // one golden histogram has 23552 slots
  read = read_interval_log(line + line, limits);
  EXPECT_FALSE(read);
  EXPECT_EQ(read.error_line, 2);
  limits = {};
  limits.max_line_bytes = 50;  // the interval line is ~80 bytes
  std::istringstream in("#ok\n" + line);
  read = read_interval_log(in, limits);
  EXPECT_FALSE(read);
  EXPECT_EQ(read.error_line, 2);
  read = read_interval_log("#ok\n" + line, limits);
  EXPECT_FALSE(read);
  EXPECT_EQ(read.error_line, 2);
}

TEST(interval_log_reader, missing_file_is_an_error) {
  const auto read = read_interval_log_file(punctual::test::golden_dir + "does-not-exist.hlog");
  EXPECT_FALSE(read);
  EXPECT_NE(read.error.find("does-not-exist.hlog"), std::string::npos);
}

TEST(interval_log_reader, empty_input_has_no_intervals) {
  const auto read = read_interval_log("");
  ASSERT_TRUE(read);
  EXPECT_TRUE(read.log->intervals.empty());
}

}  // namespace
