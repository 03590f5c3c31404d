// The data files of a scenario's csv feeder: RFC 4180 text, a header row of column names, then
// rows of values. Values become {{column}} variables in requests, so bytes that would break a
// request line or header (control bytes, CR and LF even inside quotes) are refused.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace punctual::scenario {

struct csv_table {
  std::vector<std::string> columns;            // [A-Za-z0-9_-]+, unique
  std::vector<std::vector<std::string>> rows;  // each as long as `columns`, at least one
};

struct csv_error {
  int line = 0;  // 1-based line of the file
  std::string what;
};

// Parses `text`; on failure, says where and why. Fields are separated by ',', may be quoted with
// '"' (a quote inside doubled); lines end with LF or CRLF; a last line without one is a row; empty
// lines are skipped. Pure: no I/O, never throws but for memory.
std::optional<csv_table> parse_csv(std::string_view text, csv_error& error);

}  // namespace punctual::scenario
