// Number formatting for the notes and messages this unit writes (analysis may not use fmt or
// src/cli, so these are small and local).
#pragma once

#include <string>

namespace punctual::analysis {

// 99.9 -> "99.9", 50 -> "50": the way percentiles are written in --slo and in reports.
std::string percentile_label(double percentile);
// Nanoseconds with a readable unit, 3 significant digits below 10 minutes: "850ns", "1.25ms",
// "12.3s", "100s", "25m", "12h".
std::string duration_text(double ns);
// Up to 3 significant digits after the point, no exponent: "0.5", "1234", "7.25".
std::string number_text(double value);

}  // namespace punctual::analysis
