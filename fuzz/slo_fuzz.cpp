// The --slo parser on arbitrary text. try_parse_slo and parse_slo must agree, errors must be a
// single printable line naming the expression, and every accepted expression must be in range
// and survive a round trip through its canonical form.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "analysis/slo.hpp"
#include "fuzz_check.hpp"

namespace {

using punctual::analysis::slo_expression;
using punctual::analysis::slo_metric;
using punctual::analysis::slo_unit;

using punctual::fuzz::check;

void check_error(const std::string& error) {
  check(error.rfind("--slo '", 0) == 0);
  check(error.find("expected") != std::string::npos);
  for (const char c : error)
    check(static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f);
}

void check_accepted(const slo_expression& e) {
  check(std::isfinite(e.threshold) && e.threshold >= 0);
  switch (e.metric) {
    case slo_metric::percentile:
      check(e.percentile > 0 && e.percentile <= 100);
      check(e.unit == slo_unit::nanoseconds);
      check(e.threshold <= 24.0 * 3600 * 1e9 && e.threshold == std::floor(e.threshold));
      break;
    case slo_metric::rate:
      check(e.unit == slo_unit::percent && e.threshold <= 100);
      break;
    case slo_metric::errors:
    case slo_metric::timeouts:
      check(e.unit == slo_unit::percent ? e.threshold <= 100
                                        : e.threshold == std::floor(e.threshold));
      break;
  }
  // Whole nanoseconds and counts print exactly, so the canonical form parses back the same.
  if (e.unit == slo_unit::percent) return;
  static constexpr const char* names[] = {"", "errors", "timeouts", "rate"};
  std::string canonical;
  if (e.metric == slo_metric::percentile) {
    char p[64];
    std::snprintf(p, sizeof p, "p%.17g", e.percentile);
    canonical = p;
    if (canonical.find_first_of("e") != std::string::npos)
      return;  // tiny percentiles print with exponents
  } else {
    canonical = names[static_cast<int>(e.metric)];
  }
  char t[64];
  std::snprintf(t, sizeof t, "%.0f%s", e.threshold, e.unit == slo_unit::nanoseconds ? "ns" : "");
  canonical += std::string(punctual::analysis::comparator_text(e.cmp)) + t;
  const auto again = punctual::analysis::try_parse_slo(canonical);
  check(again.has_value());
  check(again->metric == e.metric && again->cmp == e.cmp && again->unit == e.unit);
  check(again->percentile == e.percentile && again->threshold == e.threshold);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text{reinterpret_cast<const char*>(data), size};
  std::string error;
  const auto parsed = punctual::analysis::try_parse_slo(text, &error);
  try {
    const auto thrown = punctual::analysis::parse_slo(text);
    check(parsed.has_value());
    check(thrown.threshold == parsed->threshold && thrown.text == parsed->text);
  } catch (const punctual::analysis::slo_syntax_error& e) {
    check(!parsed.has_value());
    check(error == e.what());
  }
  if (parsed) {
    check(error.empty());
    check_accepted(*parsed);
  } else {
    check_error(error);
  }
  return 0;
}
