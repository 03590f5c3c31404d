#include "cli/demo_verdict.hpp"

#include <fmt/format.h>

#include <cstdlib>

namespace punctual::cli {
namespace {

constexpr std::int64_t one_ms = 1'000'000;

enum class place { below, within, above };

// Doubles, as truth_lib.py computes the band, so both accept exactly the same values.
double low_bound_ns(std::int64_t truth_ns) {
  return 0.99 * static_cast<double>(truth_ns) - one_ms;
}
double high_bound_ns(std::int64_t truth_ns) {
  return 1.05 * static_cast<double>(truth_ns) + 5 * one_ms;
}

place place_of(std::int64_t truth_ns, std::int64_t measured_ns) {
  if (within_truth_tolerance(truth_ns, measured_ns)) return place::within;
  if (truth_ns < one_ms) return place::above;  // a sub-ms truth can only be missed upwards
  return static_cast<double>(measured_ns) < low_bound_ns(truth_ns) ? place::below : place::above;
}

// "+1.3%" against a truth of 1 ms or more; a signed difference in ms against a sub-ms truth,
// where a percentage of (nearly) zero says nothing.
std::string deviation(std::int64_t truth_ns, std::int64_t measured_ns) {
  if (truth_ns >= one_ms) {
    const double relative =
        static_cast<double>(measured_ns - truth_ns) / static_cast<double>(truth_ns);
    return fmt::format("{:+.1f}%", 100 * relative);
  }
  return fmt::format("{}{} ms", measured_ns < truth_ns ? "-" : "+",
                     ms(std::llabs(measured_ns - truth_ns)));
}

std::string compare(const char* percentile, std::int64_t truth_ns, std::int64_t measured_ns) {
  return fmt::format("{} {} ms vs truth {} ms ({})", percentile, ms(measured_ns), ms(truth_ns),
                     deviation(truth_ns, measured_ns));
}

std::string column_line(const demo_column& c, const demo_column& truth) {
  return fmt::format("{}: {}, {}", c.name, compare("p90", truth.p90_ns, c.p90_ns),
                     compare("p99", truth.p99_ns, c.p99_ns));
}

// "499.24 ms below the truth": the distance, with its direction.
std::string distance(std::int64_t truth_ns, std::int64_t measured_ns) {
  return fmt::format("{} ms {}", ms(std::llabs(measured_ns - truth_ns)),
                     measured_ns < truth_ns ? "below" : "above");
}

// Which of p90 and p99 fall outside the band: "p90", "p99" or "p90 and p99"; empty if none.
std::string missed(const demo_column& c, const demo_column& truth) {
  const bool p90 = !within_truth_tolerance(truth.p90_ns, c.p90_ns);
  const bool p99 = !within_truth_tolerance(truth.p99_ns, c.p99_ns);
  return p90 && p99 ? "p90 and p99" : p90 ? "p90" : p99 ? "p99" : "";
}

std::string closed_conclusion(const demo_column& closed, const demo_column& truth) {
  std::string line =
      fmt::format("The closed run is {} the truth at p90 and {} at p99",
                  distance(truth.p90_ns, closed.p90_ns), distance(truth.p99_ns, closed.p99_ns));
  if (place_of(truth.p90_ns, closed.p90_ns) == place::below &&
      place_of(truth.p99_ns, closed.p99_ns) == place::below) {
    return line +
           ": it stopped sending while the server stalled, so the requests that would "
           "have waited were never sent, let alone measured (coordinated omission).";
  }
  return line +
         ": not below the tolerance at both, so this run does not show coordinated "
         "omission.";
}

std::string reconstructed_conclusion(const demo_column& reconstructed, const demo_column& truth) {
  const std::string outside = missed(reconstructed, truth);
  if (outside.empty()) {
    return "Reconstruction back-fills samples that were never observed; it lands within the "
           "tolerance here only because its expected interval was told the real pace, which a "
           "user rarely knows.";
  }
  return "Reconstruction back-fills samples that were never observed; even told the real pace "
         "as its expected interval, it misses the truth at " +
         outside + ".";
}

// The one line naming the first percentile the open run missed, and by how much.
std::string open_failure(const demo_column& open, const demo_column& truth) {
  const bool p90_ok = within_truth_tolerance(truth.p90_ns, open.p90_ns);
  const char* percentile = p90_ok ? "p99" : "p90";
  const std::int64_t t = p90_ok ? truth.p99_ns : truth.p90_ns;
  const std::int64_t m = p90_ok ? open.p99_ns : open.p90_ns;
  if (t < one_ms) {
    return fmt::format(
        "the open run missed the truth at {}: {} ms where the truth ({} ms) is "
        "sub-millisecond",
        percentile, ms(m), ms(t));
  }
  return fmt::format(
      "the open run missed the truth at {}: {} ms is outside [{}, {}] ms around "
      "the truth {} ms",
      percentile, ms(m), ms(static_cast<std::int64_t>(low_bound_ns(t))),
      ms(static_cast<std::int64_t>(high_bound_ns(t))), ms(t));
}

}  // namespace

std::string ms(std::int64_t ns) {
  return fmt::format("{:.2f}", static_cast<double>(ns) / 1e6);
}

bool within_truth_tolerance(std::int64_t truth_ns, std::int64_t measured_ns) noexcept {
  const auto measured = static_cast<double>(measured_ns);
  if (truth_ns >= one_ms)
    return low_bound_ns(truth_ns) <= measured && measured <= high_bound_ns(truth_ns);
  return measured_ns < one_ms;
}

demo_verdict judge_demo(const demo_columns& c) {
  demo_verdict v;
  for (const auto* column : {&c.closed, &c.reconstructed, &c.open}) {
    v.lines.push_back(column_line(*column, c.truth));
  }
  v.lines.push_back(closed_conclusion(c.closed, c.truth));
  v.lines.push_back(reconstructed_conclusion(c.reconstructed, c.truth));
  v.passed = missed(c.open, c.truth).empty();
  if (v.passed) {
    v.lines.push_back(
        "The open run kept the schedule and measured from each intended send time: it is within "
        "the truth tests' tolerance (0.99 x truth - 1 ms to 1.05 x truth + 5 ms) at p90 and p99.");
  } else {
    v.failure = open_failure(c.open, c.truth);
    v.lines.push_back("The open run missed the truth tests' tolerance at " +
                      missed(c.open, c.truth) + ".");
  }
  return v;
}

}  // namespace punctual::cli
