// The validity and SLO parts of the text report.
#include <fmt/format.h>
#include <fmt/ostream.h>

#include "analysis/text.hpp"
#include "report/run_report.hpp"
#include "report/sections.hpp"

namespace punctual::report {
namespace {

std::string figure_text(double value, std::string_view unit) {
  if (unit == "ns") return analysis::duration_text(nanoseconds{static_cast<std::int64_t>(value)});
  if (unit == "share") return fmt::format("{:.1f}%", value * 100);
  return fmt::format("{:g}", value);
}

std::string slo_figure(double value, analysis::slo_unit unit) {
  switch (unit) {
    case analysis::slo_unit::nanoseconds:
      return analysis::duration_text(nanoseconds{static_cast<std::int64_t>(value)});
    case analysis::slo_unit::percent:
      return fmt::format("{:.3g}%", value);
    case analysis::slo_unit::count:
      break;
  }
  return fmt::format("{:g}", value);
}

}  // namespace

void write_invalid_reasons(std::ostream& out, const verdicts& v) {
  if (v.validity.valid()) return;
  fmt::print(out, "INVALID RUN: no verdict on response time can be given, because\n");
  for (const auto* c : v.validity.failures()) fmt::print(out, "  - {}: {}\n", c->name, c->note);
  fmt::print(out, "\n");
}

void write_validity(std::ostream& out, const verdicts& v) {
  fmt::print(out, "\nvalidity: {}\n", v.validity.valid() ? "valid" : "INVALID");
  for (const auto& c : v.validity.checks) {
    const char* verdict =
        c.pass ? "pass" : (c.level == analysis::check_level::gating ? "FAIL" : "warn");
    fmt::print(out, "  {:<4} {:<24} {} {} {}{}\n", verdict, c.name, figure_text(c.figure, c.unit),
               c.relation, figure_text(c.threshold, c.unit),
               c.note.empty() ? "" : "  (" + c.note + ")");
  }
}

void write_slos(std::ostream& out, const verdicts& v) {
  if (!v.slo) return;
  const auto& e = *v.slo;
  if (e.refused) {
    fmt::print(out, "\nslo: not gated: {}\n", e.refusal);
    return;
  }
  fmt::print(out, "\nslo (on {}):\n", e.basis);
  for (const auto& r : e.results) {
    fmt::print(
        out, "  {:<4} {:<20} {} ({}){}\n", r.pass ? "pass" : "FAIL", r.text,
        slo_figure(r.figure, r.unit), r.bound,
        r.service_time_fails ? "  service time alone fails it: the server was too slow" : "");
  }
}

}  // namespace punctual::report
