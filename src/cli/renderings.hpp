// The files rendered from a JSON run report (the HTML page and the timeline CSV), written
// atomically; shared by `run` (from the report it just wrote) and `report RUN.json`.
#pragma once

#include <string>

#include "report/json.hpp"

namespace punctual::cli {

// Either path may be empty (not asked for). Throws what the renderers throw on a document that
// is not a run report.
void write_renderings(const nlohmann::ordered_json& report, const std::string& html_path,
                      const std::string& timeline_path);

}  // namespace punctual::cli
