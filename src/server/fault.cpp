#include "server/fault.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "server/fault_picker.hpp"
#include "server/kind_names.hpp"

namespace punctual::server {

namespace {

constexpr std::array<std::string_view, fault_kind_count> fault_names = {
    "none",    "reset",  "garbage",     "close-delimited", "huge-headers", "trickle", "continue",
    "chunked", "http10", "close-after", "never",           "503",          "429"};

[[noreturn]] void bad_fault(std::string_view text, const std::string& why) {
  throw std::invalid_argument("--fault: " + why + ", got '" + std::string(text) + "'");
}

// FRACTION of "KIND:FRACTION": in [0, 1]. strtod on a copy: from_chars for double is not in
// every standard library we build with.
double parse_fraction(std::string_view whole, std::string_view text) {
  const std::string fraction(text);
  char* end = nullptr;
  const double value = fraction.empty() ? -1 : std::strtod(fraction.c_str(), &end);
  if (fraction.empty() || end != fraction.c_str() + fraction.size() || !std::isfinite(value) ||
      value < 0 || value > 1) {
    bad_fault(whole, "expected a FRACTION between 0 and 1");
  }
  return value;
}

void check_sum(double sum, const char* what) {
  // A little slack so 0.1 + 0.2 + 0.7 is not refused for rounding.
  if (sum > 1 + 1e-9) {
    throw std::invalid_argument(std::string("--fault: ") + what + " add up to " +
                                std::to_string(sum) + ", more than 1");
  }
}

}  // namespace

std::string_view fault_name(fault_kind kind) {
  return fault_names[static_cast<std::size_t>(kind)];
}

std::optional<fault_kind> fault_from_name(std::string_view name) {
  return kind_from_name<fault_kind>(fault_names, name);
}

fault_spec parse_fault(std::string_view text) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) bad_fault(text, "expected KIND:FRACTION such as reset:0.1");
  std::string_view kind_text = text.substr(0, colon);
  const std::string_view fraction_text = text.substr(colon + 1);
  fault_spec spec;
  const auto equals = kind_text.find('=');
  if (equals != std::string_view::npos) {
    if (kind_text.substr(0, equals) != "reset") bad_fault(text, "only reset takes =N");
    const std::string_view n = kind_text.substr(equals + 1);
    const auto r = std::from_chars(n.data(), n.data() + n.size(), spec.reset_after_bytes);
    if (n.empty() || r.ec != std::errc{} || r.ptr != n.data() + n.size()) {
      bad_fault(text, "expected reset=N with N a byte count");
    }
    kind_text = kind_text.substr(0, equals);
  }
  const auto kind = fault_from_name(kind_text);
  if (!kind)
    bad_fault(text, "unknown fault kind (expected one of " + known_kinds(fault_names) +
                        ", or of a connection: banner, reset-at-accept)");
  spec.kind = *kind;
  spec.fraction = parse_fraction(text, fraction_text);
  return spec;
}

void validate_faults(const std::vector<fault_spec>& faults) {
  double sum = 0;
  std::array<bool, fault_kind_count> seen{};
  for (const fault_spec& f : faults) {
    if (f.kind == fault_kind::none) throw std::invalid_argument("--fault: no kind given");
    if (!(f.fraction >= 0 && f.fraction <= 1)) {
      throw std::invalid_argument("--fault " + std::string(fault_name(f.kind)) +
                                  ": the fraction must be between 0 and 1");
    }
    auto& was = seen[static_cast<std::size_t>(f.kind)];
    if (was) {
      throw std::invalid_argument("--fault " + std::string(fault_name(f.kind)) + " given twice");
    }
    was = true;
    sum += f.fraction;
  }
  check_sum(sum, "the fractions");
}

fault_picker::fault_picker(const std::vector<fault_spec>& faults, std::uint64_t seed,
                           std::uint64_t stream)
    // A different stream constant from the service-time sampler: faults must not be
    // correlated with long service times.
    : rng_(seed ^ (0xd1b54a32d192ed03ULL * (stream + 1))) {
  double below = 0;
  for (const fault_spec& f : faults) {
    if (f.fraction <= 0 || count_ == thresholds_.size()) continue;
    below += f.fraction;
    thresholds_[count_++] = {below, {f.kind, f.reset_after_bytes}};
  }
}

std::optional<connection_fault_spec> parse_connection_fault(std::string_view text) {
  const auto colon = text.find(':');
  const std::string_view kind = text.substr(0, colon);
  connection_fault_spec spec;
  if (kind == "banner") {
    spec.kind = connection_fault::banner;
  } else if (kind == "reset-at-accept") {
    spec.kind = connection_fault::reset_at_accept;
  } else {
    return std::nullopt;
  }
  if (colon == std::string_view::npos) bad_fault(text, "expected KIND:FRACTION such as banner:1");
  spec.fraction = parse_fraction(text, text.substr(colon + 1));
  return spec;
}

void validate_connection_faults(const std::vector<connection_fault_spec>& faults) {
  double sum = 0;
  bool seen[3] = {};
  for (const auto& f : faults) {
    auto& was = seen[static_cast<std::size_t>(f.kind)];
    if (was) throw std::invalid_argument("--fault: a connection fault given twice");
    was = true;
    sum += f.fraction;
  }
  check_sum(sum, "the connection faults' fractions");
}

connection_fault_picker::connection_fault_picker(const std::vector<connection_fault_spec>& faults,
                                                 std::uint64_t seed, std::uint64_t stream)
    // A stream constant of its own: a connection's fault must not follow its requests'.
    : rng_(seed ^ (0x9e3779b97f4a7c15ULL * (stream + 7))) {
  for (const auto& f : faults) {
    (f.kind == connection_fault::banner ? banner_below_ : reset_below_) = f.fraction;
  }
  reset_below_ += banner_below_;
}

connection_fault connection_fault_picker::next() {
  if (reset_below_ <= 0) return connection_fault::none;
  const double u = rng_.next_unit();
  if (u < banner_below_) return connection_fault::banner;
  if (u < reset_below_) return connection_fault::reset_at_accept;
  return connection_fault::none;
}

fault_choice fault_picker::next() {
  if (count_ == 0) return {};
  const double u = rng_.next_unit();
  for (std::size_t i = 0; i < count_; ++i) {
    if (u < thresholds_[i].below) return thresholds_[i].choice;
  }
  return {};
}

}  // namespace punctual::server
