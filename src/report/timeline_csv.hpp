// --timeline FILE.csv: the JSON report's series.per_second as a spreadsheet, one row per
// interval of the .hlog (a second), RFC 4180.
#pragma once

#include <ostream>

#include "report/json.hpp"

namespace punctual::report {

// Writes the header row and one row per series entry; a report without a series gets the
// header only.
void write_timeline_csv(std::ostream& out, const nlohmann::ordered_json& report);

}  // namespace punctual::report
