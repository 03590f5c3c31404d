// The verdict parts of the text report: the verdict line that opens it, the reasons a run is
// invalid, the validity checks in words, and the SLO results.
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>

#include "analysis/text.hpp"
#include "report/run_report.hpp"
#include "report/sections.hpp"

namespace punctual::report {
namespace {

using analysis::check;
using analysis::duration_text;
using analysis::number_text;

std::string figure_text(double value, std::string_view unit) {
  if (unit == "ns") return duration_text(value);
  if (unit == "share") return fmt::format("{:.1f}%", value * 100);
  return number_text(value);
}

std::string slo_figure(double value, analysis::slo_unit unit) {
  switch (unit) {
    case analysis::slo_unit::nanoseconds:
      return duration_text(value);
    case analysis::slo_unit::percent:
      return fmt::format("{:.3g}%", value);
    case analysis::slo_unit::count:
      break;
  }
  return fmt::format("{:g}", value);
}

// "send_lag_p99.9" -> "p99.9"; "samples_beyond_buy.session_p99" -> "buy.session's p99".
std::string subject_of(std::string_view name, std::string_view prefix) {
  name.remove_prefix(prefix.size());
  const auto cut = name.rfind('_');
  if (cut == std::string_view::npos) return std::string(name);
  return std::string(name.substr(0, cut)) + "'s " + std::string(name.substr(cut + 1));
}

// How a check that passed reads. Names the program does not know (none today) fall back to
// their figures.
std::string passed_words(const check& c) {
  const std::string& n = c.name;
  const std::string fig = figure_text(c.figure, c.unit);
  const std::string limit = figure_text(c.threshold, c.unit);
  if (n == "dropped") return "no request was dropped";
  if (n == "schedule_kept") return "the schedule was kept in every whole second";
  if (n.starts_with("send_lag_"))
    return fmt::format("send lag at {} was {} (allowed {})", n.substr(9), fig, limit);
  if (n.starts_with("samples_beyond_"))
    return fmt::format("{} has {} samples beyond it ({} needed)", subject_of(n, "samples_beyond_"),
                       fig, limit);
  if (n == "connection_cap")
    return fmt::format("{} connection slots; the load needed {} (Little's law, 1.5x headroom)", fig,
                       limit);
  if (n == "user_cap") return fmt::format("max_users {}; the busiest second needed {}", fig, limit);
  if (n == "start_lag") return fmt::format("began {} after --start-at (allowed {})", fig, limit);
  if (n.starts_with("worker_cpu_"))
    return fmt::format("worker {} used {} of a core (warns past {})", n.substr(11), fig, limit);
  if (n == "poisson_send_gaps")
    return fmt::format("send gaps fit the Poisson schedule (distance {}, at most {})", fig, limit);
  if (n == "reopened_per_planned")
    return fmt::format("{} connections reopened per planned request (warns past {})", fig, limit);
  if (n == "worst_second_send_lag")
    return fmt::format("the generator was {} late at p99 in the worst second (allowed {})", fig,
                       limit);
  return fmt::format("{} {} {}", fig, c.relation, limit);
}

// What kind of trouble a failed check is, in a few words.
std::string title(const check& c) {
  const std::string& n = c.name;
  if (n == "dropped") return "dropped requests";
  if (n == "schedule_kept") return "schedule not kept";
  if (n.starts_with("send_lag_")) return "generator late";
  if (n.starts_with("samples_beyond_")) return "too few samples";
  if (n == "connection_cap") return "too few connections";
  if (n == "user_cap") return "max_users too low";
  if (n == "start_lag") return "late start";
  if (n.starts_with("worker_cpu_")) return "busy worker";
  if (n == "poisson_send_gaps") return "send gaps";
  if (n == "reopened_per_planned") return "connections reopened";
  if (n == "worst_second_send_lag") return "worst second";
  return n;
}

// A failed check's line; the checks of one kind that share a note (send lag at p99.9, p99.99
// and max) print it once.
void write_failed(std::ostream& out, const std::vector<const check*>& checks,
                  std::string_view marker) {
  std::vector<std::string> seen;
  for (const check* c : checks) {
    const std::string line = title(*c) + ": " + (c->note.empty() ? passed_words(*c) : c->note);
    if (std::find(seen.begin(), seen.end(), line) != seen.end()) continue;
    seen.push_back(line);
    if (marker == "-") {
      fmt::print(out, "  - {}\n", line);  // a reason under the verdict line
    } else {
      fmt::print(out, "  {:<5} {}\n", marker, line);
    }
  }
}

std::string slo_summary(const analysis::slo_result& r) {
  return fmt::format("{} {} ({}{})", r.text, r.pass ? "passed" : "FAILED",
                     r.bound == "upper" ? "upper bound " : "", slo_figure(r.figure, r.unit));
}

// "no SLO", "SLO p99<=50ms passed (1.9ms)", "SLOs p99<=50ms FAILED (63ms), errors<=1% passed
// (0%)"; past three, the count and the failures.
std::string slos_in_words(const verdicts& v) {
  if (!v.slo) return "no SLO";
  if (v.slo->refused) return "SLO not gated";
  const auto& results = v.slo->results;
  if (results.size() <= 3) {
    std::string out = results.size() == 1 ? "SLO " : "SLOs ";
    for (std::size_t i = 0; i < results.size(); ++i)
      out += (i ? ", " : "") + slo_summary(results[i]);
    return out;
  }
  std::string failed;
  std::size_t passed = 0;
  for (const auto& r : results) {
    if (r.pass) {
      ++passed;
    } else {
      failed += (failed.empty() ? "; " : ", ") + slo_summary(r);
    }
  }
  return fmt::format("{} of {} SLOs passed{}", passed, results.size(), failed);
}

}  // namespace

int exit_code(bool interrupted, const verdicts& v) noexcept {
  if (interrupted) return analysis::exit_interrupted;
  const bool slo_failed = v.slo && v.slo->any_failed();
  const bool service_failed = v.slo && v.slo->any_service_time_failure();
  return analysis::exit_code(!v.validity.valid(), slo_failed, service_failed);
}

void write_verdict_line(std::ostream& out, const verdicts& v, bool interrupted) {
  fmt::print(out, "{}{} · {} · exit {}\n", interrupted ? "INTERRUPTED · " : "",
             v.validity.valid() ? "VALID" : "INVALID: no verdict on response time",
             slos_in_words(v), exit_code(interrupted, v));
}

void write_invalid_reasons(std::ostream& out, const verdicts& v) {
  write_failed(out, v.validity.failures(), "-");
}

void write_validity(std::ostream& out, const verdicts& v, bool verbose) {
  const auto failures = v.validity.failures();
  const auto warnings = v.validity.warnings();
  const std::size_t passed = v.validity.checks.size() - failures.size() - warnings.size();
  fmt::print(out, "\nvalidity: {}; {} checks passed, {} failed, {} warned{}\n",
             v.validity.valid() ? "valid" : "INVALID", passed, failures.size(), warnings.size(),
             verbose ? "" : " (--verbose lists every check)");
  if (!verbose) {
    write_failed(out, failures, "FAIL");
    write_failed(out, warnings, "warn");
    return;
  }
  for (const auto& c : v.validity.checks) {
    if (c.pass) {
      fmt::print(out, "  {:<5} {}\n", "pass", passed_words(c));
    } else {
      write_failed(out, {&c}, c.level == analysis::check_level::gating ? "FAIL" : "warn");
    }
  }
}

void write_slos(std::ostream& out, const verdicts& v) {
  if (!v.slo) return;
  const auto& e = *v.slo;
  if (e.refused) {
    fmt::print(out, "\nslo: not gated: {}\n", e.refusal);
    return;
  }
  const auto& results = e.results;
  const bool one_view = std::all_of(results.begin(), results.end(),
                                    [&](const auto& r) { return r.view == results.front().view; });
  fmt::print(out, "\nslo{}:\n", one_view ? " (on " + results.front().view + ")" : "");
  for (const auto& r : results) {
    fmt::print(
        out, "  {:<5} {}: {}{}{}{}\n", r.pass ? "pass" : "FAIL", r.text,
        r.bound == "upper" ? "upper 95% bound " : "", slo_figure(r.figure, r.unit),
        one_view ? "" : " on " + r.view,
        r.service_time_fails ? "; service time alone fails it: the server was too slow" : "");
  }
}

}  // namespace punctual::report
