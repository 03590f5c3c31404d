// The HTML report: one self-contained page (inline CSS and SVG, no script, nothing fetched)
// rendered from the JSON run report, so a run can be read, and its tail seen, without tools.
#pragma once

#include <ostream>
#include <vector>

#include "punctual/histogram/histogram.hpp"
#include "report/json.hpp"
#include "report/svg_chart.hpp"

namespace punctual::report {

// A JSON run report (docs/report.schema.json) as HTML. Optional parts that are absent (older
// reports have no series or histograms) are named as missing; throws std::runtime_error only
// when the document is not a run report at all.
void write_html(std::ostream& out, const nlohmann::ordered_json& report);

// The document `punctual demo` writes: the four views of the same stalling server side by side.
// Throws std::runtime_error when it has no columns.
void write_demo_html(std::ostream& out, const nlohmann::ordered_json& demo);

// The percentile spectrum of a histogram, as HdrHistogram plots it: one point per step of its
// percentile iteration (5 ticks per half distance), x the percentile level, y the value in ns.
std::vector<chart_point> spectrum_points(const hdr::histogram& h);

}  // namespace punctual::report
