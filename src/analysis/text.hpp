// Number formatting for people: the one duration formatter of the program (text report,
// validity notes, retry policy, demo), and the percentile and number texts beside it. Small and
// free of fmt, so every unit above analysis can use it.
#pragma once

#include <chrono>
#include <string>

namespace punctual::analysis {

// 99.9 -> "99.9", 50 -> "50": the way percentiles are written in --slo and in reports.
std::string percentile_label(double percentile);
// Nanoseconds with a readable unit, 3 significant digits below 10 minutes: "850ns", "1.25ms",
// "12.3s", "100s", "25m", "12h".
std::string duration_text(double ns);
inline std::string duration_text(std::chrono::nanoseconds d) {
  return duration_text(static_cast<double>(d.count()));
}
// Up to 3 significant digits after the point, no exponent: "0.5", "1234", "7.25".
std::string number_text(double value);

}  // namespace punctual::analysis
