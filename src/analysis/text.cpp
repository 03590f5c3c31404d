#include "analysis/text.hpp"

#include <cmath>
#include <cstdio>

namespace punctual::analysis {

std::string percentile_label(double percentile) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", percentile);
  return buf;
}

std::string duration_text(double ns) {
  struct unit {
    double scale;
    const char* name;
  };
  static constexpr unit units[] = {{60e9, "m"}, {1e9, "s"}, {1e6, "ms"}, {1e3, "us"}};
  char buf[48];
  for (const auto& u : units) {
    if (std::fabs(ns) >= u.scale) {
      std::snprintf(buf, sizeof buf, "%.3g%s", ns / u.scale, u.name);
      return buf;
    }
  }
  std::snprintf(buf, sizeof buf, "%.0fns", ns);
  return buf;
}

std::string number_text(double value) {
  char buf[48];
  if (std::fabs(value) >= 1e15 || value == std::floor(value)) {
    std::snprintf(buf, sizeof buf, "%.0f", value);
  } else {
    std::snprintf(buf, sizeof buf, "%.4g", value);
  }
  return buf;
}

}  // namespace punctual::analysis
