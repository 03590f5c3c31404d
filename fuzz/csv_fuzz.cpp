// A scenario's csv feeder file on arbitrary bytes. A refusal names a line within the text; an
// accepted table keeps its promises (a valid, unique name per column, as many values per row,
// no control byte in any value) and reads back the same when written out again with quotes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "scenario/csv.hpp"
#include "scenario/load_error.hpp"

namespace {

using punctual::fuzz::check;
namespace scenario = punctual::scenario;

std::string quoted(const std::string& v) {
  std::string out = "\"";
  for (const char c : v) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  scenario::csv_error error;
  const auto table = scenario::parse_csv(text, error);
  if (!table) {
    const auto lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
    check(error.line >= 1 && error.line <= lines);
    check(!error.what.empty() && error.what.find('\n') == std::string::npos);
    return 0;
  }
  check(!table->rows.empty());
  for (const auto& c : table->columns) check(scenario::valid_name(c));
  std::string again;
  for (std::size_t i = 0; i < table->columns.size(); ++i)
    again += (i ? "," : "") + table->columns[i];
  again += "\n";
  for (const auto& row : table->rows) {
    check(row.size() == table->columns.size());
    for (std::size_t i = 0; i < row.size(); ++i) {
      for (const char c : row[i]) check(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f);
      again += (i ? "," : "") + quoted(row[i]);
    }
    again += "\r\n";
  }
  scenario::csv_error second;
  const auto reread = scenario::parse_csv(again, second);
  check(reread && reread->columns == table->columns && reread->rows == table->rows);
  return 0;
}
