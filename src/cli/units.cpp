#include "cli/units.hpp"

#include <charconv>
#include <cmath>
#include <string>

#include "cli/command.hpp"
#include "http/text.hpp"

namespace punctual::cli {

namespace {

using namespace std::chrono_literals;

// Longer than any sensible run, short enough that every product below stays exact in a double.
constexpr double max_duration_ns = 100.0 * 24 * 3600 * 1e9;
constexpr double max_rate = 1e9;

enum class problem { malformed, negative, too_large };

struct number_part {
  double value = 0;
  std::string_view suffix;
};

// A plain decimal number ("30", "1.5", ".5") followed by a suffix. Exponents, "inf" and "nan"
// are refused on purpose: the first byte must be a digit or '.', and the format is fixed.
std::optional<number_part> split_number(std::string_view text, problem& why) noexcept {
  why = problem::malformed;
  if (text.empty()) return std::nullopt;
  if (text.front() == '-') {
    why = problem::negative;
    return std::nullopt;
  }
  if (!(text.front() == '.' || (text.front() >= '0' && text.front() <= '9'))) return std::nullopt;
  number_part out;
  const auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), out.value, std::chars_format::fixed);
  if (ec == std::errc::result_out_of_range) {
    why = problem::too_large;
    return std::nullopt;
  }
  if (ec != std::errc{} || !std::isfinite(out.value)) return std::nullopt;
  out.suffix = text.substr(static_cast<std::size_t>(end - text.data()));
  return out;
}

std::optional<double> duration_unit_ns(std::string_view suffix) noexcept {
  if (suffix.empty() || suffix == "s") return 1e9;
  if (suffix == "ns") return 1.0;
  if (suffix == "us" || suffix == "\xc2\xb5s") return 1e3;
  if (suffix == "ms") return 1e6;
  if (suffix == "m") return 60e9;
  if (suffix == "h") return 3600e9;
  return std::nullopt;
}

std::optional<std::chrono::nanoseconds> duration_or(std::string_view text, problem& why) noexcept {
  const auto number = split_number(text, why);
  if (!number) return std::nullopt;
  const auto unit = duration_unit_ns(number->suffix);
  if (!unit) {
    why = problem::malformed;
    return std::nullopt;
  }
  const double ns = std::round(number->value * *unit);
  if (ns > max_duration_ns) {
    why = problem::too_large;
    return std::nullopt;
  }
  return std::chrono::nanoseconds{static_cast<std::int64_t>(ns)};
}

std::optional<double> rate_or(std::string_view text, problem& why) noexcept {
  const auto number = split_number(text, why);
  if (!number) return std::nullopt;
  std::string_view suffix = number->suffix;
  if (suffix.size() >= 2 && suffix.substr(suffix.size() - 2) == "/s") suffix.remove_suffix(2);
  double scale = 1;
  if (suffix == "k" || suffix == "K")
    scale = 1e3;
  else if (suffix == "M")
    scale = 1e6;
  else if (!suffix.empty())
    return std::nullopt;
  const double rate = number->value * scale;
  if (!(rate > 0)) return std::nullopt;
  if (rate > max_rate) {
    why = problem::too_large;
    return std::nullopt;
  }
  return rate;
}

std::optional<int> status_code(std::string_view text) noexcept {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  int code = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), code);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  if (code < 100 || code > 599) return std::nullopt;
  return code;
}

}  // namespace

std::optional<std::chrono::nanoseconds> try_parse_duration(std::string_view text) noexcept {
  problem why{};
  return duration_or(text, why);
}

std::chrono::nanoseconds parse_duration(std::string_view option, std::string_view text) {
  problem why{};
  if (const auto value = duration_or(text, why)) return *value;
  const std::string head = std::string{option} + ": " + http::quoted(text);
  const std::string expected = "(expected a number with a unit: ns, us, ms, s, m, h, e.g. 30s)";
  if (why == problem::negative) throw usage_error(head + " is negative " + expected);
  if (why == problem::too_large)
    throw usage_error(head + " is too long (at most 100 days, e.g. 2400h)");
  throw usage_error(head + " is not a duration " + expected);
}

std::chrono::nanoseconds parse_duration_with_unit(std::string_view option, std::string_view text) {
  const bool bare =
      !text.empty() && text.find_first_not_of("0123456789.") == std::string_view::npos;
  if (bare) {
    throw usage_error(std::string{option} + ": " + http::quoted(text) +
                      " has no unit: give one, e.g. 500ms");
  }
  return parse_duration(option, text);
}

std::optional<double> try_parse_rate(std::string_view text) noexcept {
  problem why{};
  return rate_or(text, why);
}

double parse_rate(std::string_view option, std::string_view text) {
  problem why{};
  if (const auto value = rate_or(text, why)) return *value;
  const std::string head = std::string{option} + ": " + http::quoted(text);
  if (why == problem::too_large)
    throw usage_error(head + " is too high (at most 1000M requests per second)");
  throw usage_error(head +
                    " is not a rate (expected requests per second > 0, e.g. 2000, 2k, 1.5k, 1M)");
}

std::optional<std::vector<status_range>> try_parse_status_ranges(std::string_view text) {
  std::vector<status_range> ranges;
  if (text.empty()) return std::nullopt;
  while (true) {
    const auto comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    const auto dash = item.find('-');
    const auto low = status_code(item.substr(0, dash));
    const auto high = dash == std::string_view::npos ? low : status_code(item.substr(dash + 1));
    if (!low || !high || *low > *high) return std::nullopt;
    ranges.push_back({*low, *high});
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return ranges;
}

std::vector<status_range> parse_status_ranges(std::string_view option, std::string_view text) {
  if (auto ranges = try_parse_status_ranges(text)) return std::move(*ranges);
  throw usage_error(std::string{option} + ": " + http::quoted(text) +
                    " is not a list of status codes (expected codes or ranges within 100..599, "
                    "e.g. 200-399 or 200,204,300-399)");
}

}  // namespace punctual::cli
