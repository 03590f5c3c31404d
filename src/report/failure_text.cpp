// The failed requests in words: the loud lines that open a report whose server failed, and the
// errors line. Both list the same parts, so the two can never disagree.
#include <fmt/format.h>
#include <fmt/ostream.h>

#include "analysis/text.hpp"
#include "report/run_report.hpp"
#include "report/sections.hpp"
#include "run/workload_identity.hpp"

namespace punctual::report {
namespace {

using record::outcome;

std::uint64_t outcome_count(const record::counters& c, outcome o) {
  return c.outcomes[record::index(o)];
}

// The outcomes that count as failures here: the server's (an unexpected answer, a broken
// connection, no answer in time) and the generator's (dropped, unfinished). Skipped hybrid
// steps are not requests that failed.
std::uint64_t failed_count(const record::counters& c) {
  std::uint64_t n = 0;
  for (const auto o : {outcome::http_error, outcome::socket_error, outcome::timeout,
                       outcome::dropped, outcome::unfinished})
    n += outcome_count(c, o);
  return n;
}

}  // namespace

std::string grouped(std::uint64_t n) {
  std::string digits = std::to_string(n);
  for (auto i = static_cast<std::ptrdiff_t>(digits.size()) - 3; i > 0; i -= 3)
    digits.insert(static_cast<std::size_t>(i), ",");
  return digits;
}

std::vector<std::string> failure_parts(const run::config& c, const record::counters& counts) {
  std::vector<std::string> parts;
  for (std::size_t s = 0; s < counts.status.size(); ++s) {
    if (counts.status[s] == 0 || (s < c.expected_status.size() && c.expected_status[s])) continue;
    parts.push_back(fmt::format("{} answered {}", grouped(counts.status[s]), s));
  }
  if (!parts.empty()) parts.back() += " (expected " + run::status_text(c.expected_status) + ")";
  if (counts.body_missing) {
    parts.push_back(grouped(counts.body_missing) + " answered without the expected body text");
  }
  if (counts.capture_missing) {
    parts.push_back(grouped(counts.capture_missing) + " answered without a usable capture");
  }
  for (std::size_t i = 0; i < record::socket_reason_count; ++i) {
    if (counts.socket_errors[i] == 0) continue;
    parts.push_back(fmt::format("{} socket errors ({})", grouped(counts.socket_errors[i]),
                                record::socket_reason_names[i]));
  }
  if (const auto n = outcome_count(counts, outcome::timeout)) {
    parts.push_back(
        fmt::format("{} timed out after {}", grouped(n), analysis::duration_text(c.timeout)));
  }
  if (const auto n = outcome_count(counts, outcome::dropped))
    parts.push_back(grouped(n) + " dropped (the queue was full)");
  if (const auto n = outcome_count(counts, outcome::unfinished))
    parts.push_back(grouped(n) + " unfinished (interrupted)");
  return parts;
}

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

bool failures_lead(const record::counters& counts, const verdicts& v) {
  if (counts.planned == 0) return false;
  if (outcome_count(counts, outcome::ok) == 0) return true;
  const double share =
      static_cast<double>(failed_count(counts)) / static_cast<double>(counts.planned);
  return share > v.allowed_failure_share + 1e-12;
}

void write_failure_lead(std::ostream& out, const run::config& c, const record::counters& counts,
                        const verdicts& v) {
  if (!failures_lead(counts, v)) return;
  const std::uint64_t ok = outcome_count(counts, outcome::ok);
  const std::uint64_t failed = failed_count(counts);
  const std::string why = joined(failure_parts(c, counts));
  if (ok == 0) {
    fmt::print(out, "0 of {} ok: {}\n", grouped(counts.planned), why);
    return;
  }
  fmt::print(out,
             "FAILURES: {} of {} requests failed ({:.3g}%, more than the {:.3g}% expected): {}\n",
             grouped(failed), grouped(counts.planned),
             100.0 * static_cast<double>(failed) / static_cast<double>(counts.planned),
             100.0 * v.allowed_failure_share, why);
}

void write_errors_line(std::ostream& out, const run::config& c, const record::counters& counts) {
  const auto parts = failure_parts(c, counts);
  fmt::print(out, "errors: {}\n", parts.empty() ? std::string("none") : joined(parts));
}

}  // namespace punctual::report
