// The renderers of a saved JSON report (`punctual report RUN.json --html/--timeline`) on
// arbitrary JSON: any document either renders or is refused with a std::exception (which the
// command turns into one line and exit 2); nothing crashes, hangs or reads out of bounds. The
// seeds are real reports, so mutations keep most of their shape and reach deep into it.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>

#include "fuzz_check.hpp"
#include "report/html_report.hpp"
#include "report/json.hpp"
#include "report/timeline_csv.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto doc = nlohmann::ordered_json::parse(data, data + size, nullptr, false);
  if (doc.is_discarded()) return 0;
  try {
    std::ostringstream html;
    punctual::report::write_html(html, doc);
    // A rendered page is one document and never fetches anything.
    punctual::fuzz::check(html.str().find("<script src") == std::string::npos);
  } catch (const std::exception&) {
  }
  try {
    std::ostringstream csv;
    punctual::report::write_timeline_csv(csv, doc);
  } catch (const std::exception&) {
  }
  return 0;
}
