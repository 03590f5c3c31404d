#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scenario/csv.hpp"

namespace {

using punctual::scenario::csv_error;
using punctual::scenario::parse_csv;

TEST(scenario_csv, reads_columns_rows_and_quotes) {
  csv_error error;
  const auto t = parse_csv(
      "user,password,note\r\nann,s3cret,\"a, b\"\n\nbob,\"x\"\"y\",\nlast,row,here", error);
  ASSERT_TRUE(t) << error.line << ": " << error.what;
  EXPECT_EQ(t->columns, (std::vector<std::string>{"user", "password", "note"}));
  ASSERT_EQ(t->rows.size(), 3u);
  EXPECT_EQ(t->rows[0], (std::vector<std::string>{"ann", "s3cret", "a, b"}));
  EXPECT_EQ(t->rows[1], (std::vector<std::string>{"bob", "x\"y", ""}));
  EXPECT_EQ(t->rows[2], (std::vector<std::string>{"last", "row", "here"}));
}

TEST(scenario_csv, refusals_say_the_line) {
  const std::vector<std::pair<std::string, std::pair<int, std::string>>> cases = {
      {"", {1, "no header row"}},
      {"a,b\n", {2, "no rows"}},
      {"a,b", {1, "no rows"}},  // no line after the header: its own line (csv_fuzz found 2)
      {"a,b\n1\n", {2, "1 values for 2 columns"}},
      {"a,a\n1,2\n", {1, "appears twice"}},
      {"a,b c\n1,2\n", {1, "is not [A-Za-z0-9_-]+"}},
      {"a\n\"open", {2, "not closed"}},
      {"a\n\"x\ny\"\n", {2, "line break inside a value"}},
      {"a\nx\"y\n", {2, "a quote inside an unquoted value"}},
      {"a\n\"x\"y\n", {2, "text after a closing quote"}},
      {"a\nx\ty\n", {2, "control byte"}},
  };
  for (const auto& [text, want] : cases) {
    csv_error error;
    EXPECT_FALSE(parse_csv(text, error)) << text;
    EXPECT_EQ(error.line, want.first) << text;
    EXPECT_NE(error.what.find(want.second), std::string::npos) << text << " -> " << error.what;
  }
}

}  // namespace
