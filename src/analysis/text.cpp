#include "analysis/text.hpp"

#include <cmath>
#include <cstdio>

namespace punctual::analysis {

std::string percentile_label(double percentile) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", percentile);
  return buf;
}

namespace {

// Rounded to 3 significant digits before the unit is chosen, so 999.7ms is "1s", not "1e+03ms".
double three_digits(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  const double scale = std::pow(10.0, 2 - std::floor(std::log10(std::fabs(v))));
  return std::round(v * scale) / scale;
}

}  // namespace

std::string duration_text(double ns) {
  char buf[48];
  ns = three_digits(ns);
  const double s = ns / 1e9;
  if (std::fabs(s) >= 36000) {
    std::snprintf(buf, sizeof buf, "%.0fh", s / 3600);
  } else if (std::fabs(s) >= 600) {
    std::snprintf(buf, sizeof buf, "%.0fm", s / 60);
  } else if (std::fabs(s) >= 1) {
    std::snprintf(buf, sizeof buf, "%.3gs", s);
  } else if (std::fabs(ns) >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.3gms", ns / 1e6);
  } else if (std::fabs(ns) >= 1e3) {
    std::snprintf(buf, sizeof buf, "%.3gus", ns / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.0fns", ns);
  }
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
