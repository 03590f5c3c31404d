// The command-line value parsers (units and the retry policy) on arbitrary text. The first byte
// picks the parser. Each try_ variant must agree with its throwing twin, and every accepted value
// must be in range.
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cli/command.hpp"
#include "cli/retry_options.hpp"
#include "cli/shard_options.hpp"
#include "cli/units.hpp"
#include "engine/retry.hpp"
#include "fuzz_check.hpp"

namespace {
using punctual::fuzz::check;

void fuzz_duration(std::string_view text) {
  const auto value = punctual::cli::try_parse_duration(text);
  try {
    const auto thrown = punctual::cli::parse_duration("--duration", text);
    check(value && *value == thrown);
  } catch (const punctual::cli::usage_error& e) {
    check(!value);
    check(std::string_view{e.what()}.substr(0, 12) == "--duration: ");
  }
  if (!value) return;
  check(value->count() >= 0);
  check(*value <= std::chrono::hours{24 * 100});
  // Whole nanoseconds print and parse back exactly.
  check(punctual::cli::try_parse_duration(std::to_string(value->count()) + "ns") == value);
}

void fuzz_rate(std::string_view text) {
  const auto value = punctual::cli::try_parse_rate(text);
  try {
    const double thrown = punctual::cli::parse_rate("--rate", text);
    check(value && *value == thrown);
  } catch (const punctual::cli::usage_error&) {
    check(!value);
  }
  if (value) check(std::isfinite(*value) && *value > 0 && *value <= 1e9);
}

void fuzz_status(std::string_view text) {
  const auto ranges = punctual::cli::try_parse_status_ranges(text);
  try {
    const auto thrown = punctual::cli::parse_status_ranges("--expect-status", text);
    check(ranges && ranges->size() == thrown.size());
  } catch (const punctual::cli::usage_error&) {
    check(!ranges);
  }
  if (!ranges) return;
  check(!ranges->empty());
  for (const auto& r : *ranges) check(r.low >= 100 && r.low <= r.high && r.high <= 599);
}

void fuzz_retry_on(std::string_view text) {
  const auto mask = punctual::cli::try_parse_retry_on(text);
  if (!mask) return;
  check(*mask != 0 && *mask < (1U << punctual::record::retry_cause_count));
}

void fuzz_backoff(std::string_view text) {
  const auto range = punctual::cli::try_parse_backoff(text);
  if (!range) return;
  check(range->base.count() > 0 && range->cap >= range->base);
  // Every accepted range gives delays inside [0, cap] for any retry number.
  punctual::engine::retry_policy p;
  p.backoff_base = range->base;
  p.backoff_cap = range->cap;
  for (std::uint32_t retry : {1U, 2U, 40U, 100U}) {
    const auto d = punctual::engine::backoff_delay(p, text.size(), retry);
    check(d.count() >= 0 && d <= range->cap);
  }
}

// An accepted shard is a slice that exists; env/N agrees with I/N for the same index.
void fuzz_shard(std::string_view text) {
  const auto shard = punctual::cli::try_parse_shard(text, "3");
  if (!shard) return;
  check(shard->count >= 1 && shard->index < shard->count);
  const std::string count(text.substr(text.find('/') + 1));
  if (text.starts_with("env/")) check(shard->index == 3);
  const auto again =
      punctual::cli::try_parse_shard(std::to_string(shard->index) + "/" + count, nullptr);
  check(again && again->index == shard->index && again->count == shard->count);
}

// An accepted start time is after 1970 and prints back (as Unix seconds) to the same instant.
void fuzz_start_at(std::string_view text) {
  const auto at = punctual::cli::try_parse_start_at(text);
  if (!at) return;
  check(at->count() >=
        -14 * 3600 * std::int64_t{1'000'000'000});  // 1970-01-01T00:00-14:00 at the least
  if (at->count() < 0) return;
  char buf[48];
  std::snprintf(buf, sizeof buf, "%lld.%09lld", static_cast<long long>(at->count() / 1'000'000'000),
                static_cast<long long>(at->count() % 1'000'000'000));
  check(punctual::cli::try_parse_start_at(buf) == at);
}

void fuzz_percent(std::string_view text) {
  const auto share = punctual::cli::try_parse_percent(text);
  if (share) check(*share > 0 && *share <= 1);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view text{reinterpret_cast<const char*>(data + 1), size - 1};
  switch (data[0] % 8) {
    case 0:
      fuzz_duration(text);
      break;
    case 1:
      fuzz_rate(text);
      break;
    case 2:
      fuzz_status(text);
      break;
    case 3:
      fuzz_retry_on(text);
      break;
    case 4:
      fuzz_backoff(text);
      break;
    case 6:
      fuzz_shard(text);
      break;
    case 7:
      fuzz_start_at(text);
      break;
    default:
      fuzz_percent(text);
      break;
  }
  return 0;
}
