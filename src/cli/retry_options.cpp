#include "cli/retry_options.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "analysis/text.hpp"
#include "cli/command.hpp"
#include "cli/units.hpp"
#include "record/outcome.hpp"

namespace punctual::cli {
namespace {

using std::chrono::nanoseconds;

constexpr std::string_view default_retry_on = "5xx,429,reset,connect";
constexpr std::string_view default_backoff = "exp:50ms..2s";
// More retries than this is a storm, not a policy: 3 retries at each of 5 layers is 243x.
constexpr std::uint32_t max_retries = 100;

}  // namespace

std::optional<std::uint32_t> try_parse_retry_on(std::string_view text) noexcept {
  std::uint32_t mask = 0;
  for (;;) {
    const auto comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    std::size_t found = record::retry_cause_count;
    for (std::size_t i = 0; i < record::retry_cause_count; ++i) {
      if (record::retry_cause_names[i] == item) found = i;
    }
    if (found == record::retry_cause_count || ((mask >> found) & 1U)) return std::nullopt;
    mask |= 1U << found;
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
    if (text.empty()) return std::nullopt;  // a trailing comma
  }
  return mask;
}

std::optional<backoff_range> try_parse_backoff(std::string_view text) noexcept {
  constexpr std::string_view prefix = "exp:";
  if (text.substr(0, prefix.size()) != prefix) return std::nullopt;
  text.remove_prefix(prefix.size());
  const auto dots = text.find("..");
  if (dots == std::string_view::npos) return std::nullopt;
  const auto base = try_parse_duration(text.substr(0, dots));
  const auto cap = try_parse_duration(text.substr(dots + 2));
  if (!base || !cap || base->count() <= 0 || *cap < *base) return std::nullopt;
  return backoff_range{*base, *cap};
}

std::optional<double> try_parse_percent(std::string_view text) noexcept {
  if (text.size() < 2 || text.back() != '%' || text.size() > 32) return std::nullopt;
  char copy[33] = {};
  text.copy(copy, text.size() - 1);
  char* end = nullptr;
  const double v = std::strtod(copy, &end);
  if (end != copy + text.size() - 1 || copy[0] == ' ' || !std::isfinite(v) || v <= 0 || v > 100) {
    return std::nullopt;
  }
  return v / 100;
}

run::retry_policy build_retry_policy(const retry_texts& t, nanoseconds timeout, std::uint64_t seed,
                                     bool open_model) {
  const bool tuned =
      !t.on.empty() || !t.backoff.empty() || !t.budget.empty() || !t.attempt_timeout.empty();
  if (t.retries == 0 && tuned) {
    throw usage_error(
        "--retry-on, --retry-backoff, --retry-budget and --attempt-timeout need --retries N");
  }
  run::retry_policy p;
  p.seed = seed;
  if (t.retries == 0) return p;
  if (!open_model)
    throw usage_error(
        "--retries: the closed model has no schedule to retry within (use --model open)");
  if (t.retries > max_retries) {
    throw usage_error("--retries " + std::to_string(t.retries) + ": at most " +
                      std::to_string(max_retries));
  }
  p.retries = t.retries;
  const std::string_view on = t.on.empty() ? default_retry_on : std::string_view(t.on);
  const auto mask = try_parse_retry_on(on);
  if (!mask) {
    throw usage_error(
        "--retry-on: '" + std::string(on) +
        "' is not a list of 5xx, 429, timeout, reset, connect (comma-separated, no repeats)");
  }
  p.on = *mask;
  const std::string_view backoff =
      t.backoff.empty() ? default_backoff : std::string_view(t.backoff);
  const auto range = try_parse_backoff(backoff);
  if (!range) {
    throw usage_error("--retry-backoff: '" + std::string(backoff) +
                      "' is not exp:BASE..CAP with 0 < BASE <= CAP (e.g. exp:50ms..2s)");
  }
  p.backoff_base = range->base;
  p.backoff_cap = range->cap;
  if (!t.budget.empty()) {
    const auto share = try_parse_percent(t.budget);
    if (!share)
      throw usage_error("--retry-budget: '" + t.budget +
                        "' is not a percentage in (0%, 100%] (e.g. 10%)");
    p.budget = *share;
  }
  if (!t.attempt_timeout.empty()) {
    p.attempt_timeout = parse_duration("--attempt-timeout", t.attempt_timeout);
    if (p.attempt_timeout.count() <= 0 || p.attempt_timeout >= timeout) {
      throw usage_error("--attempt-timeout " + t.attempt_timeout +
                        ": must be more than 0 and less than --timeout");
    }
  }
  if (p.retries_on(record::retry_cause::timeout) && p.attempt_timeout.count() == 0) {
    throw usage_error(
        "--retry-on timeout: give --attempt-timeout shorter than --timeout, which covers the whole "
        "chain");
  }
  return p;
}

}  // namespace punctual::cli
