#include "schedule/stages.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace punctual::schedule {
namespace {

std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

struct unit_scale {
  std::string_view suffix;
  std::int64_t ns;
};
// Longest suffixes first so "ms" is not read as "m" followed by junk.
constexpr unit_scale duration_units[] = {
    {"ns", 1},         {"us", 1000},       {"ms", 1000000},
    {"s", 1000000000}, {"m", 60000000000}, {"h", 3600000000000},
};

}  // namespace

std::optional<std::chrono::nanoseconds> parse_stage_duration(std::string_view text) noexcept {
  text = trim(text);
  std::int64_t unit = 1000000000;
  for (const auto& u : duration_units) {
    if (text.size() > u.suffix.size() && text.ends_with(u.suffix)) {
      unit = u.ns;
      text.remove_suffix(u.suffix.size());
      break;
    }
  }
  // digits [. digits], exactly: mantissa / 10^fraction_digits * unit, rounded to nearest ns.
  unsigned __int128 mantissa = 0;
  unsigned __int128 divisor = 1;
  bool seen_digit = false;
  bool seen_point = false;
  for (const char c : text) {
    if (c == '.' && !seen_point) {
      seen_point = true;
      continue;
    }
    if (c < '0' || c > '9') return std::nullopt;
    if (mantissa > (unsigned __int128){1} << 80) return std::nullopt;  // far beyond 2^62 ns
    mantissa = mantissa * 10 + static_cast<unsigned>(c - '0');
    if (seen_point) {
      if (divisor > (unsigned __int128){1} << 80) return std::nullopt;
      divisor *= 10;
    }
    seen_digit = true;
  }
  if (!seen_digit) return std::nullopt;
  const unsigned __int128 ns =
      (mantissa * static_cast<unsigned __int128>(unit) + divisor / 2) / divisor;
  if (ns >= static_cast<unsigned __int128>(max_window_ns)) return std::nullopt;
  return std::chrono::nanoseconds{static_cast<std::int64_t>(ns)};
}

std::optional<double> parse_stage_rate(std::string_view text) noexcept {
  text = trim(text);
  const char* exponent = "";
  if (text.size() > 1 && (text.back() == 'k' || text.back() == 'K')) {
    exponent = "e3";
    text.remove_suffix(1);
  } else if (text.size() > 1 && text.back() == 'M') {
    exponent = "e6";
    text.remove_suffix(1);
  }
  // Only plain decimals: from_chars would also accept "inf", "nan" and exponents.
  if (text.empty() || text.size() > 40) return std::nullopt;
  for (const char c : text) {
    if ((c < '0' || c > '9') && c != '.') return std::nullopt;
  }
  // Appending the suffix as a decimal exponent keeps the conversion a single correct rounding.
  char buffer[48];
  std::memcpy(buffer, text.data(), text.size());
  const std::size_t exp_len = std::strlen(exponent);
  std::memcpy(buffer + text.size(), exponent, exp_len);
  const char* end = buffer + text.size() + exp_len;
  double value = 0;
  const auto [ptr, ec] = std::from_chars(buffer, end, value);
  if (ec != std::errc{} || ptr != end) return std::nullopt;
  if (!std::isfinite(value) || value < 0 || value > max_rate_per_s) return std::nullopt;
  return value;
}

std::optional<std::vector<stage>> parse_stages(std::string_view text, std::string& error) {
  std::vector<stage> stages;
  if (trim(text).empty()) {
    error = "stages: empty (expected e.g. 10s:100,30s:5000)";
    return std::nullopt;
  }
  std::size_t number = 0;
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string_view item = trim(text.substr(0, comma));
    ++number;
    const std::string where =
        "stage " + std::to_string(number) + " \"" + std::string(item) + "\": ";
    const std::size_t colon = item.find(':');
    if (colon == std::string_view::npos) {
      error = where + "expected DURATION:RATE, e.g. 10s:100";
      return std::nullopt;
    }
    const std::string_view length_text = trim(item.substr(0, colon));
    const std::string_view rate_text = trim(item.substr(colon + 1));
    const auto length = parse_stage_duration(length_text);
    if (!length) {
      error = where + "bad duration \"" + std::string(length_text) +
              "\" (expected e.g. 30s, 500ms, 2m)";
      return std::nullopt;
    }
    if (length->count() == 0) {
      error = where + "the duration must be > 0";
      return std::nullopt;
    }
    const auto rate = parse_stage_rate(rate_text);
    if (!rate) {
      error = where + "bad rate \"" + std::string(rate_text) +
              "\" (expected requests per second >= 0 and <= 1e9, e.g. 100, 2.5k, 1M)";
      return std::nullopt;
    }
    stages.push_back(stage{*length, *rate});
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  if (stages_length(stages).count() >= max_window_ns) {
    error = "stages: the total duration is too long";
    return std::nullopt;
  }
  return stages;
}

std::string format_duration(std::chrono::nanoseconds d) {
  const std::int64_t ns = d.count();
  if (ns != 0) {
    for (auto it = std::rbegin(duration_units); it != std::rend(duration_units); ++it) {
      if (ns % it->ns == 0) return std::to_string(ns / it->ns) + std::string(it->suffix);
    }
  }
  return std::to_string(ns) + "ns";
}

std::string format_rate(double rate_per_s) {
  // Fixed notation reads best for rates ("1000000", "0.000001"); it is still the shortest text
  // that reads back as the same double. Absurd magnitudes fall back to exponent form.
  char buffer[64];
  std::to_chars_result r =
      std::to_chars(buffer, buffer + sizeof buffer, rate_per_s, std::chars_format::fixed);
  if (r.ec != std::errc{}) {
    r = std::to_chars(buffer, buffer + sizeof buffer, rate_per_s);
    if (r.ec != std::errc{}) return "?";
  }
  return std::string(buffer, r.ptr);
}

std::string format_stages(const std::vector<stage>& stages) {
  std::string out;
  for (const auto& s : stages) {
    if (!out.empty()) out += ',';
    out += format_duration(s.length) + ":" + format_rate(s.rate_per_s);
  }
  return out;
}

std::chrono::nanoseconds stages_length(const std::vector<stage>& stages) noexcept {
  // Saturating, so an absurd list cannot wrap around and look short.
  std::int64_t total = 0;
  for (const auto& s : stages) {
    const std::int64_t len = s.length.count() < 0 ? 0 : s.length.count();
    total = (len >= max_window_ns || total >= max_window_ns - len) ? max_window_ns : total + len;
  }
  return std::chrono::nanoseconds{total};
}

}  // namespace punctual::schedule
