// The Prometheus text exposition format (version 0.0.4) of a snapshot: what the scrape
// endpoint serves. A pure function, so its output can be checked byte for byte.
#pragma once

#include <string>
#include <string_view>

#include "metrics/series.hpp"

namespace punctual::metrics {

inline constexpr std::string_view exposition_content_type =
    "text/plain; version=0.0.4; charset=utf-8";

// `# HELP` and `# TYPE` per family, then its samples, one a line; label values escaped (\\, \",
// \n), whole numbers written without a fraction, others in their shortest exact form.
std::string render(const snapshot& s);

}  // namespace punctual::metrics
