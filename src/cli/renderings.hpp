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
// A run report's gates (SLOs, gating validity checks) as JUnit XML, suite `suite`; nothing when
// the path is empty.
void write_junit(const nlohmann::ordered_json& report, const std::string& suite,
                 const std::string& junit_path);

}  // namespace punctual::cli
