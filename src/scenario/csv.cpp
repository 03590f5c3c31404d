#include "scenario/csv.hpp"

#include <algorithm>

#include "http/text.hpp"
#include "scenario/load_error.hpp"

namespace punctual::scenario {
namespace {

constexpr std::size_t max_columns = 64;
constexpr std::size_t max_rows = 100'000;

// Reads one line's fields from text[at...]; moves `at` past its line end. False with `error`
// set when the line is malformed.
bool read_fields(std::string_view text, std::size_t& at, std::vector<std::string>& fields,
                 std::string& error) {
  fields.clear();
  std::string field;
  bool quoted = false;      // inside quotes
  bool was_quoted = false;  // this field opened with a quote
  for (;;) {
    if (at == text.size()) {
      if (quoted) return error = "a quoted value is not closed", false;
      fields.push_back(std::move(field));
      return true;
    }
    const char c = text[at++];
    if (quoted) {
      if (c != '"') {
        if (http::is_control_byte(c))
          return error = "a control byte or line break inside a value", false;
        field += c;
      } else if (at < text.size() && text[at] == '"') {
        field += '"';
        ++at;
      } else {
        quoted = false;
      }
    } else if (c == ',') {
      fields.push_back(std::move(field));
      field.clear();
      was_quoted = false;
    } else if (c == '\n' || (c == '\r' && at < text.size() && text[at] == '\n')) {
      if (c == '\r') ++at;
      fields.push_back(std::move(field));
      return true;
    } else if (c == '"' && field.empty() && !was_quoted) {
      quoted = was_quoted = true;
    } else if (c == '"' || was_quoted) {
      return error = "a quote inside an unquoted value, or text after a closing quote", false;
    } else if (http::is_control_byte(c)) {
      return error = "a control byte in a value", false;
    } else {
      field += c;
    }
  }
}

bool blank_line(std::string_view text, std::size_t at) noexcept {
  return text[at] == '\n' || (text[at] == '\r' && at + 1 < text.size() && text[at + 1] == '\n');
}

void skip_line_end(std::string_view text, std::size_t& at) noexcept {
  at += text[at] == '\r' ? 2 : 1;
}

std::optional<std::string> check_columns(const std::vector<std::string>& columns) {
  if (columns.size() > max_columns) return "more than 64 columns";
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const auto& c = columns[i];
    if (!valid_name(c)) {
      return "column name '" + c + "' is not [A-Za-z0-9_-]+";
    }
    if (std::find(columns.begin(), columns.begin() + static_cast<std::ptrdiff_t>(i), c) !=
        columns.begin() + static_cast<std::ptrdiff_t>(i)) {
      return "column name '" + c + "' appears twice";
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<csv_table> parse_csv(std::string_view text, csv_error& error) {
  csv_table table;
  std::size_t at = 0;
  int line = 1;
  std::vector<std::string> fields;
  bool header = true;
  while (at < text.size()) {
    if (blank_line(text, at)) {
      skip_line_end(text, at);
      ++line;
      continue;
    }
    std::string why;
    if (!read_fields(text, at, fields, why)) {
      error = {line, why};
      return std::nullopt;
    }
    if (header) {
      if (auto bad = check_columns(fields)) {
        error = {line, *bad};
        return std::nullopt;
      }
      table.columns = fields;
      header = false;
    } else if (fields.size() != table.columns.size()) {
      error = {line, std::to_string(fields.size()) + " values for " +
                         std::to_string(table.columns.size()) + " columns"};
      return std::nullopt;
    } else if (table.rows.size() == max_rows) {
      error = {line, "more than 100000 rows"};
      return std::nullopt;
    } else {
      table.rows.push_back(fields);
    }
    ++line;
  }
  if (header) {
    error = {1, "no header row of column names"};
    return std::nullopt;
  }
  if (table.rows.empty()) {
    // The line after the header, or the header's own when the text ends on it.
    error = {text.ends_with('\n') ? line : line - 1, "no rows under the column names"};
    return std::nullopt;
  }
  return table;
}

}  // namespace punctual::scenario
